# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.health_gate_state``; documentation in health_gate_state.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def health_gate_state(probe, wanted, options=None, node_reads=None):
    """Everything the health gate decides about a node (plugin_utils/health_gate.gate_state)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.health_gate import gate_state
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('health_gate_state: options must be a dict, got %s' % type(options).__name__)
    if node_reads is not None and not isinstance(node_reads, list):
        raise AnsibleFilterError('health_gate_state: node_reads must be a list of k8s_info results, got %s'
                                 % type(node_reads).__name__)
    try:
        return gate_state(probe, wanted, options or {}, node_reads)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('health_gate_state: %s. Fix: run the npu.ascend.vnpu role again, which writes the '
                                 'vNPU labels, and read the node with npu.ascend.ascend_facts' % exc)


class FilterModule(object):
    """The health gate of a node."""

    def filters(self):
        return {'health_gate_state': health_gate_state}
