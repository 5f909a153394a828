# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.k8s_taints``: a Node's taint list with one taint added or removed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def k8s_taints(current, taint, present=True):
    """``current`` (a Node's ``spec.taints``) with ``taint`` (``key[=value]:Effect``) set or removed."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import parse_taint, taints_with
    if current is not None and not isinstance(current, list):
        raise AnsibleFilterError('k8s_taints expects a list of taints, got %s' % type(current).__name__)
    try:
        wanted = parse_taint(taint) if isinstance(taint, str) else dict(taint)
        return taints_with(current, wanted, present=bool(present))
    except (ValueError, KeyError, TypeError) as exc:
        raise AnsibleFilterError('k8s_taints: %s' % exc)


class FilterModule(object):
    """Node taint helpers."""

    def filters(self):
        return {'k8s_taints': k8s_taints}
