# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.k8s_label_keys``: the keys of the collection's labels and taint under one label domain."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def k8s_label_keys(domain):
    """``{domain, validated, driver, ..., unvalidated_taint}`` for ``domain`` (null or empty: the default)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys
    if domain is not None and not isinstance(domain, str):
        raise AnsibleFilterError('k8s_label_keys expects the label domain as a string (npu_ascend_label_domain), '
                                 'got %s' % type(domain).__name__)
    try:
        return label_keys(domain)
    except ValueError as exc:
        raise AnsibleFilterError('npu_ascend_label_domain: %s. Fix: set npu_ascend_label_domain to a DNS subdomain '
                                 'you own, or leave it unset for the default' % exc)


class FilterModule(object):
    """The one label domain of the collection's Kubernetes roles."""

    def filters(self):
        return {'k8s_label_keys': k8s_label_keys}
