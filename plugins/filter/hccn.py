# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.hccn_state``, ``hccn_node_plan``, ``hccn_roce_model``, ``hccn_fleet_plan``,
``hccn_gate_problems`` and ``hccn_fabric_marker``; documentation in their .yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def _plan_module():
    # Imported on use, not at the top: ansible-core imports every filter file of the collection in each
    # worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan
    return hccn_plan


def hccn_state(probe, own_read=None, options=None):
    """What the hccn role decides about a node before the fleet plan (plugin_utils/hccn_state.hccn_state)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.hccn_state import hccn_state as decide
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('hccn_state: options must be a dict, got %s' % type(options).__name__)
    try:
        return decide(probe, own_read, options or {})
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError('hccn_state: %s' % error)


def hccn_node_plan(fleet, host, play_hosts):
    """The node's share of the fleet plan (plugin_utils/hccn_state.hccn_node_plan)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.hccn_state import hccn_node_plan as share
    if not isinstance(fleet, dict) or not isinstance(play_hosts, list):
        raise AnsibleFilterError('hccn_node_plan expects the fleet plan (hccn_fleet_plan), a host name and the list '
                                 'of hosts in the run')
    try:
        return share(fleet, host, play_hosts)
    except (TypeError, ValueError, AttributeError) as error:
        raise AnsibleFilterError('hccn_node_plan: %s' % error)


def hccn_roce_model(chips):
    """Whether the node's chips (npu_smi_info ``chips``) have RoCE ports, and the subnet rule of the model."""
    if not isinstance(chips, list):
        raise AnsibleFilterError('hccn_roce_model expects the list of chips npu_smi_info returns, got %s'
                                 % type(chips).__name__)
    return _plan_module().roce_model(chips)


def hccn_fleet_plan(host_vars, hosts, play_hosts, default_npu_ids=None, ping_peers=0):
    """Every node's planned NPU addresses, every problem of the fleet plan, and the fabric check's pings."""
    if not hasattr(host_vars, 'get'):
        raise AnsibleFilterError('hccn_fleet_plan expects hostvars, got %s' % type(host_vars).__name__)
    if not isinstance(hosts, list) or not isinstance(play_hosts, list):
        raise AnsibleFilterError('hccn_fleet_plan: hosts and play_hosts must be lists of host names')
    plan = _plan_module()
    try:
        fleet = plan.fleet_input(host_vars, hosts, play_hosts, list(default_npu_ids or range(8)))
        return plan.fleet_plan(fleet, int(ping_peers))
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError('hccn_fleet_plan: %s' % error)


def hccn_gate_problems(host_vars, host, play_hosts):
    """The gate's problems of ``host`` from the readings the hccn role registered on it and on the other
    nodes of the run (links, net health, LLDP, pings) and the cabling plans."""
    if not hasattr(host_vars, 'get') or not isinstance(play_hosts, list):
        raise AnsibleFilterError('hccn_gate_problems expects hostvars, a host name and the list of hosts in the run')
    plan = _plan_module()
    try:
        return plan.gate_problems(host, plan.gate_nodes(host_vars, play_hosts))
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError('hccn_gate_problems: %s' % error)


def hccn_fabric_marker(verdict, configured):
    """The text of the node's fabric marker: the gate's ``verdict`` (``passed`` and ``problems``, as the hccn
    role's ``hccn_fabric``) on what the ``npu.ascend.hccn`` module left (its result: ``npus``, ``conf_sha256``)."""
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker
    if not isinstance(verdict, dict) or 'passed' not in verdict:
        raise AnsibleFilterError('hccn_fabric_marker expects the gate verdict (a dict with passed and problems), got %r'
                                 % (verdict,))
    if not isinstance(configured, dict) or not isinstance(configured.get('npus'), list):
        raise AnsibleFilterError('hccn_fabric_marker expects the result of npu.ascend.hccn (with npus and conf_sha256)')
    passed = verdict['passed']
    if isinstance(passed, str):
        passed = passed.strip().lower() in ('true', 'yes', '1')
    try:
        marker = fabric_marker.build_marker(bool(passed), configured['npus'], configured.get('conf_sha256'),
                                            verdict.get('problems') or [])
    except (ValueError, TypeError, KeyError) as error:
        raise AnsibleFilterError('hccn_fabric_marker: %s' % error)
    return fabric_marker.marker_text(marker)


class FilterModule(object):
    """HCCN (NPU RoCE network) filters."""

    def filters(self):
        return {
            'hccn_state': hccn_state,
            'hccn_node_plan': hccn_node_plan,
            'hccn_roce_model': hccn_roce_model,
            'hccn_fleet_plan': hccn_fleet_plan,
            'hccn_gate_problems': hccn_gate_problems,
            'hccn_fabric_marker': hccn_fabric_marker,
        }
