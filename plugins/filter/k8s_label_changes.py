# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.k8s_label_changes``: the labels a merge patch must still set or remove."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def k8s_label_changes(current, wanted):
    """The entries of ``wanted`` that differ from ``current`` (a Node's ``metadata.labels``)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
        label_changes, refused_labels_text, split_labels)
    for name, value in (('current', current), ('wanted', wanted)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError('k8s_label_changes: %s labels must be a dict, got %s'
                                     % (name, type(value).__name__))
    # Checked as kubectl label does: the API server would refuse the whole patch for one of them.
    good, refused = split_labels(wanted, default_source='the wanted labels')
    if refused:
        raise AnsibleFilterError('k8s_label_changes: Kubernetes refuses %d label(s), so no patch is made: %s'
                                 % (len(refused), refused_labels_text(refused)))
    return label_changes(current, good)


class FilterModule(object):
    """Node label helpers."""

    def filters(self):
        return {'k8s_label_changes': k8s_label_changes}
