# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.k8s_node_state``, ``k8s_node_outcome`` and ``k8s_node_labels_to_remove``; documentation in
the .yml files of the same names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def k8s_node_state(probe, options=None):
    """What the k8s_node role decides about a host's Node (plugin_utils/k8s_node_state.k8s_node_state)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_state import k8s_node_state as decide
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('k8s_node_state: options must be a dict, got %s' % type(options).__name__)
    try:
        return decide(probe, options or {})
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('k8s_node_state: %s' % exc)


def k8s_node_outcome(fleet_result, host, refusal=''):
    """The host's result of the play's one write of the Nodes (plugin_utils/k8s_node_state.k8s_node_outcome)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_state import k8s_node_outcome as judge
    return judge(fleet_result, host, refusal)


def k8s_node_labels_to_remove(labels, domain, extra_labels=None):
    """The labels of a Node the role set (plugin_utils/k8s_node_state.labels_to_remove)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_state import labels_to_remove
    try:
        return labels_to_remove(labels, domain, extra_labels)
    except TypeError as exc:
        raise AnsibleFilterError('k8s_node_labels_to_remove: %s' % exc)


class FilterModule(object):
    """What the k8s_node role does with a host's Node."""

    def filters(self):
        return {'k8s_node_state': k8s_node_state, 'k8s_node_outcome': k8s_node_outcome,
                'k8s_node_labels_to_remove': k8s_node_labels_to_remove}
