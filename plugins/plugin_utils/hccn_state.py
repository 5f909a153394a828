# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the hccn role, per node: whether the node's NPUs take part in the RoCE address plan
(from its chips, the probe's or the role's own npu-smi read, and the role's options), and then the node's
share of the fleet plan (its problems, its addresses, the gate's reads and pings). The fleet plan itself is
``hccn_plan.fleet_plan``. The role's tasks read the fields and act; ``roles/hccn/vars/main.yml`` keeps only
names and constants. Pure functions, no Ansible imports; docs/hccn.md explains the rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan, planner
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

MODES = ('auto', 'true', 'false')
NO_NPU_SMI = 'npu-smi is not installed. Fix: install the NPU driver, which brings it (npu.ascend.hdk, site.yml)'
NO_READING = 'npu-smi could not be read'
# What every gate reads of each NPU; an A3 SuperPoD member's gate also reads its vNIC (the HCCS plane).
GATE_READS = ('link', 'net_health', 'netdetect')
SUPER_POD_GATE_READS = ('vnic',)


def _mode(enabled):
    """hccn_enabled as the role reads it (a YAML boolean or a string, any case)."""
    return str(enabled).lower()


def _chips(probe, own_read, probe_current):
    """``(chips, error)``: npu-smi's chips (None when they could not be read) and why not."""
    if probe_current:
        return _mapping(probe.get('npu_smi')).get('chips'), probe.get('npu_smi_error') or NO_NPU_SMI
    own_read = _mapping(own_read)
    chips = _mapping(own_read['npu_smi']).get('chips') if 'npu_smi' in own_read else None
    return chips, (own_read['msg'] if 'msg' in own_read else NO_READING)


def hccn_state(probe, own_read, options):
    """What the hccn role decides about a node before the fleet plan.

    ``probe``: ``ansible_facts.ascend`` (None before any probe); ``own_read``: the role's registered
    ``npu_smi_info`` (None before it ran: the role reads npu-smi only when the probe is not current);
    ``options``: ``host``, ``enabled`` (hccn_enabled), ``base_address``, ``addresses``, ``install_path`` and
    ``check_mode`` (a dry run, where a node whose driver is not installed yet has no npu-smi).

    Returns ``mode`` (auto, true or false as read), ``refusal`` (the message refusing any other value, '' when
    valid), ``probe_current`` (the probe read the install path and the chips), ``chips`` (None when npu-smi could
    not be read) with ``chip_error`` (why), ``model`` (``hccn_plan.roce_model``; without chips, none with the
    reason), ``npu_ids`` (what ``hccn_tool -i`` takes), ``take_part`` (the node's NPUs are configured), ``note``
    (why they are not, '' when they are) and ``super_pod_chip`` (the NPU and chip whose spod-info names the
    node's SuperPoD: the first chip; None without chips) and ``stop`` (the message the node stops with: the
    refusal, else the chips that cannot be read outside a dry run; '' to go on). TypeError names a wrong input."""
    if probe is not None and not isinstance(probe, Mapping):
        raise TypeError('the probe must be what npu.ascend.ascend_facts returned (a dict), got %s'
                        % type(probe).__name__)
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    mode = _mode(options.get('enabled', 'auto'))
    refusal = '' if mode in MODES else (
        '%s: hccn_enabled is %s; fix: set it to auto (training nodes with an address plan), true (every training '
        'node needs a plan) or false (leave the NPU network alone).' % (host, options.get('enabled')))
    has_plan = bool(options.get('base_address')) or bool(options.get('addresses'))
    probe = _mapping(probe)
    probe_current = planner.probe_is_current(probe, options.get('install_path'), True)
    chips, chip_error = _chips(probe, own_read, probe_current)
    if chips is not None and not isinstance(chips, list):
        raise TypeError("npu-smi's chips must be a list, got %s" % type(chips).__name__)
    if chips is None:
        model = {'roce': False, 'subnet_rule': None, 'chip_name': None, 'ids': [], 'vnic_address_rule': None,
                 'reason': 'npu-smi cannot be read in this dry run (%s)' % chip_error}
    else:
        model = hccn_plan.roce_model(chips)
    take_part = mode != 'false' and bool(model['roce']) and (has_plan or mode == 'true')
    if take_part:
        note = ''
    else:
        note = '%s: NPU RoCE network not configured: %s.' % (host, 'hccn_enabled is false' if mode == 'false' else (
            model['reason'] if not model['roce']
            else 'no address plan (set hccn_base_address or hccn_addresses to configure it)'))
    first = chips[0] if chips else None
    stop = refusal or ('%s: the hccn role cannot read the NPU chips: %s' % (host, chip_error)
                       if chips is None and not options.get('check_mode') else '')
    return {
        'mode': mode,
        'refusal': refusal,
        'probe_current': probe_current,
        'chips': chips,
        'chip_error': chip_error,
        'model': model,
        'npu_ids': list(model['ids']),
        'take_part': take_part,
        'note': note,
        'super_pod_chip': {'npu_id': first.get('npu_id'), 'chip_id': first.get('chip_id') or 0} if first else None,
        'stop': stop,
    }


def _to_peers_in_run(pings, play_hosts):
    """The pings whose peer is still in this run, without the plan's ``peer_host`` (hccn_info's own)."""
    return [dict((key, value) for key, value in ping.items() if key != 'peer_host')
            for ping in pings or [] if ping.get('peer_host') in play_hosts]


def hccn_node_plan(fleet, host, play_hosts):
    """The node's share of the fleet plan (``hccn_plan.fleet_plan``'s answer) for the hosts of this run.

    Returns ``problems`` (those of its own NPUs, then those of a peer whose address it holds), ``npus`` (its
    planned NPUs for the ``npu.ascend.hccn`` module, unset fields left out), ``gate_reads`` (what the gate
    reads of each NPU), ``pings`` and ``hccs_pings`` (the fabric check's, to peers still in this run)."""
    fleet = _mapping(fleet)
    play_hosts = list(play_hosts or [])
    problems = list(fleet.get('problems') or [])
    return {
        'problems': [problem for problem in problems if problem.get('host') == host]
        + [problem for problem in problems if problem.get('peer_host') == host],
        'npus': [dict((key, value) for key, value in npu.items() if value is not None)
                 for npu in _mapping(fleet.get('plans')).get(host) or []],
        'gate_reads': list(GATE_READS) + (list(SUPER_POD_GATE_READS)
                                          if host in _mapping(fleet.get('super_pods')) else []),
        'pings': _to_peers_in_run(_mapping(fleet.get('pings')).get(host), play_hosts),
        'hccs_pings': _to_peers_in_run(_mapping(fleet.get('hccs_pings')).get(host), play_hosts),
    }
