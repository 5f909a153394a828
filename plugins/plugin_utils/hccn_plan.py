# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NPUs' RoCE address plan (HCCN) on the controller: which nodes have RoCE ports, each node's
addresses from the inventory, the fleet-wide check before anything changes, and the gate's
judgement after. Pure; docs/hccn.md explains the rules and their sources."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware import super_pod

# Chips whose NPUs carry their own RoCE port: one list, which the Node's fabric label reads too.
A2_TRAINING_CHIPS = hccn_tool.A2_TRAINING_CHIPS
A1_TRAINING_CHIPS = hccn_tool.A1_TRAINING_CHIPS
# NPUs per board on the 910A SMP servers: NPU i and i+4 share a subnet, a board's four NPUs differ.
SMP_BOARD_NPUS = 4
_DESCRIPTIONS = {
    'one_subnet': '%(name)s training NPUs, one RoCE port each',
    'smp': '%(name)s training NPUs (Atlas 800-9000 class, SMP mode), one RoCE port each',
    'per_die': '%(name)s dies (%(family)s), one RoCE port per die',
}


def roce_model(chips):
    """What the node's chips (npu_smi_info's ``chips``) say about its RoCE ports, from the hardware catalogue's
    row of the chips: {'roce': bool, 'subnet_rule', 'chip_name', 'reason', 'ids' (what ``hccn_tool -i`` takes:
    the NPU ids, or the dies' Phy-IDs where each die has its port), 'family', 'per_die', 'dies_per_npu',
    'refused_subnets', 'refused_subnets_super_pod', 'refusal', 'vnic_address_rule', 'hccs_ping',
    'super_pod_max_servers'}."""
    names = sorted(set(str(chip.get('name')) for chip in chips or [] if chip.get('name')))
    name = names[0] if len(names) == 1 else ', '.join(names) or None
    model = {'roce': False, 'subnet_rule': None, 'chip_name': name, 'ids': [], 'family': None, 'per_die': False,
             'dies_per_npu': 1, 'refused_subnets': [], 'refused_subnets_super_pod': [], 'refusal': None,
             'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None}
    if not names:
        return dict(model, reason='npu-smi shows no NPU chip, so the node has no NPU RoCE port to configure')
    row = hardware_catalogue.roce_row(names)
    if row is None:
        return dict(model, reason='%s NPUs have no RoCE ports of their own (inference models)' % name)
    key = 'phy_id' if row['roce_per_die'] else 'npu_id'
    ids = []
    for chip in chips:
        value = chip.get(key)
        if value is not None and value not in ids:
            ids.append(value)
    if row['roce_per_die'] and len(ids) != len(chips):
        return dict(model, reason='npu-smi shows %s chips without a Phy-ID for each, and each die has its own RoCE '
                                  'port (hccn_tool -i takes the Phy-ID); fix: check npu-smi info' % name)
    return dict(model, roce=True, subnet_rule=row['roce_subnet_rule'], ids=ids, family=row['family'],
                per_die=row['roce_per_die'], dies_per_npu=row['dies_per_npu'],
                refused_subnets=list(row['roce_refused_subnets']),
                refused_subnets_super_pod=list(row['roce_refused_subnets_super_pod']), refusal=row['roce_refusal'],
                vnic_address_rule=row['vnic_address_rule'] if row['vnic'] else None, hccs_ping=row['hccs_ping'],
                super_pod_max_servers=row['super_pod_max_servers'],
                reason=_DESCRIPTIONS.get(row['roce_subnet_rule'], '%(name)s NPUs with RoCE ports')
                % {'name': name, 'family': row['family']})


def expand_base_address(base, count, subnet_rule):
    """Huawei's expansion of one base address to ``count`` NPU addresses.

    ``smp`` (910A SMP boards, Huawei's deployer): NPU i gets the third octet + i % 4 and the last
    octet + i // 4 (10.0.0.1, 10.0.1.1, 10.0.2.1, 10.0.3.1, 10.0.0.2, ...), so NPU i and i+4 share a
    subnet. Otherwise consecutive addresses (base, base+1, ...), one subnet per node.
    """
    start = hccn_tool.ip_to_int(base)
    if subnet_rule == 'smp':
        return [hccn_tool.int_to_ip(start + (index % SMP_BOARD_NPUS) * 256 + index // SMP_BOARD_NPUS)
                for index in range(count)]
    return [hccn_tool.int_to_ip(start + index) for index in range(count)]


def _per_npu(value, index):
    if isinstance(value, (list, tuple)):
        return value[index] if index < len(value) else None
    return value or None


def node_plan(host, settings, npu_ids, subnet_rule):
    """The wanted state of each NPU of ``host`` from its hccn_* variables.

    settings: addresses (list), base_address, netmask, gateway (str or list), detect_address (str
    or list). Returns {'npus': [{npu, address, netmask, gateway, netdetect}], 'problems': [str]}.
    """
    problems = []
    npu_ids = list(npu_ids)
    addresses = settings.get('addresses') or []
    base = settings.get('base_address')
    if addresses and base:
        problems.append('%s: both hccn_addresses and hccn_base_address are set; fix: keep one of them' % host)
    if not addresses and not base:
        problems.append('%s: no NPU addresses planned; fix: set hccn_base_address (one address, expanded per NPU) '
                        'or hccn_addresses (one address per NPU, in NPU id order)' % host)
        return {'npus': [], 'problems': problems}
    if addresses and len(addresses) != len(npu_ids):
        problems.append('%s: hccn_addresses lists %d addresses for %d NPUs (%s); fix: list one address per NPU'
                        % (host, len(addresses), len(npu_ids), ', '.join(str(npu) for npu in npu_ids)))
    repeated = sorted(set(npu for npu in npu_ids if npu_ids.count(npu) > 1))
    if repeated:
        problems.append('%s: NPU %s is listed twice among the node NPU ids (%s); fix: check npu-smi info on the node '
                        '(or hccn_default_npu_ids), each NPU gets one address'
                        % (host, ', '.join(str(npu) for npu in repeated), ', '.join(str(npu) for npu in npu_ids)))
    netmask = settings.get('netmask')
    if not netmask or hccn_tool.netmask_prefix(netmask) is None:
        problems.append('%s: hccn_netmask %r is not a netmask such as 255.255.255.0%s; fix: set hccn_netmask'
                        % (host, netmask, _why(netmask)))
    if base and hccn_tool.ipv4_problem(base):
        problems.append('%s: hccn_base_address: %s; fix: set it to an IPv4 address' % (host, hccn_tool.ipv4_problem(base)))
    for index, address in enumerate(addresses):
        if hccn_tool.ipv4_problem(address):
            problems.append('%s: hccn_addresses[%d] (NPU %s): %s; fix: correct that entry'
                            % (host, index, npu_ids[index] if index < len(npu_ids) else '?',
                               hccn_tool.ipv4_problem(address)))
    for variable, key in (('hccn_gateway', 'gateway'), ('hccn_detect_address', 'detect_address')):
        value = settings.get(key)
        for index, item in enumerate(value if isinstance(value, (list, tuple)) else [value]):
            if item and hccn_tool.ipv4_problem(item):
                problems.append('%s: %s%s: %s; fix: correct it' % (
                    host, variable, '[%d]' % index if isinstance(value, (list, tuple)) else '',
                    hccn_tool.ipv4_problem(item)))
    if problems:
        # What a host outside this run holds still counts for duplicates, however its plan is written.
        claimed = [{'npu': npu, 'address': address} for npu, address in zip(npu_ids, addresses)
                   if isinstance(address, str)]
        return {'npus': [], 'problems': problems, 'claimed': claimed}
    planned = list(addresses) if addresses else expand_base_address(base, len(npu_ids), subnet_rule)
    npus = []
    for index, npu in enumerate(npu_ids):
        gateway = _per_npu(settings.get('gateway'), index)
        detect = _per_npu(settings.get('detect_address'), index) or gateway
        npus.append({'npu': npu, 'address': planned[index], 'netmask': netmask, 'gateway': gateway,
                     'netdetect': detect})
    return {'npus': npus, 'problems': []}


def _why(value):
    problem = hccn_tool.ipv4_problem(value) if value else ''
    return ' (%s)' % problem if problem else ''


def _number(address):
    """The address as a number, so that two spellings of one address are one (10.0.1.010 is 10.0.1.10 to
    most tools); the value itself when it is no address at all."""
    parts = address.split('.') if isinstance(address, str) else []
    if len(parts) == 4 and all(re.match(r'[0-9]+\Z', part) and int(part) <= 255 for part in parts):
        return sum(int(part) << shift for part, shift in zip(parts, (24, 16, 8, 0)))
    return address


def _subnets_meet(address, netmask, subnet):
    network, prefix = subnet.split('/')
    own_prefix = hccn_tool.netmask_prefix(netmask)
    shorter = min(own_prefix, int(prefix))
    mask = (0xFFFFFFFF << (32 - shorter)) & 0xFFFFFFFF if shorter else 0
    return hccn_tool.ip_to_int(address) & mask == hccn_tool.ip_to_int(network) & mask


_PEER = re.compile(r'^(.*) (?:NPU|die) ([0-9]+)\Z')


def _peer_parts(peer):
    """(host, NPU or die id) of a peer label ``<host> NPU <n>`` or ``<host> die <n>``; (label, None) otherwise."""
    match = _PEER.match(peer or '')
    return (match.group(1), int(match.group(2))) if match else (peer or None, None)


def _unit(plan):
    """What hccn_tool -i numbers on the node, for messages: the die where each die has its RoCE port, else the NPU."""
    return 'die' if (plan or {}).get('per_die') else 'NPU'


def _problem(host, npu, problem, fix, peer=None, unit='NPU'):
    where = '%s %s %s' % (host, unit, npu) if npu is not None else host
    return {'host': host, 'npu': npu, 'peer': peer, 'peer_host': _peer_parts(peer)[0] if peer else None,
            'problem': problem, 'fix': fix, 'message': '%s: %s; fix: %s' % (where, problem, fix)}


def _refused(plan):
    """(subnets hccn_tool refuses for this node's NPU addresses, the rule's name, whether the node is a SuperPoD
    member): the plan's own (fleet_plan, from the catalogue and the node's SuperPoD), else its subnet rule's row."""
    if plan.get('refused') is not None:
        return list(plan['refused']), plan.get('refusal'), bool(plan.get('super_pod_member'))
    for row in hardware_catalogue.CHIP_FAMILIES:
        if row['roce_subnet_rule'] and row['roce_subnet_rule'] == (plan.get('subnet_rule') or 'one_subnet'):
            return list(row['roce_refused_subnets']), row['roce_refusal'], False
    return [], None, False


def _npu_problems(host, entry, plan):
    problems = []
    unit = _unit(plan)
    npu, address, netmask = entry['npu'], entry.get('address'), entry.get('netmask')

    def problem_of(text, fix):
        return _problem(host, npu, text, fix, unit=unit)

    if hccn_tool.ipv4_problem(address):
        return [problem_of('planned address: %s' % hccn_tool.ipv4_problem(address),
                           'correct hccn_addresses or hccn_base_address')]
    refused, refusal, member = _refused(plan)
    for subnet in refused:
        if _subnets_meet(address, netmask, subnet):
            where = ' on a SuperPoD member (server index %s)' % plan['super_pod']['server_index'] if member else ''
            problems.append(problem_of('address %s/%s meets %s, which hccn_tool refuses%s (%s)'
                                       % (address, hccn_tool.netmask_prefix(netmask), subnet, where, refusal),
                                       'plan the NPU addresses outside %s' % ' and '.join(refused)))
    network = hccn_tool.ip_to_int(address) & hccn_tool.ip_to_int(netmask)
    broadcast = network | (~hccn_tool.ip_to_int(netmask) & 0xFFFFFFFF)
    if hccn_tool.netmask_prefix(netmask) < 31 and hccn_tool.ip_to_int(address) in (network, broadcast):
        problems.append(problem_of('address %s is the network or broadcast address of %s'
                                   % (address, hccn_tool.subnet_of(address, netmask)),
                                   'pick a host address inside the subnet'))
    for key, variable in (('gateway', 'hccn_gateway'), ('netdetect', 'hccn_detect_address')):
        value = entry.get(key)
        if not value:
            if key == 'netdetect':
                problems.append(problem_of('no detect address: its net health cannot become Success',
                                           'set hccn_detect_address (or hccn_gateway) to an address in %s that answers'
                                           % hccn_tool.subnet_of(address, netmask)))
            continue
        if hccn_tool.ipv4_problem(value):
            problems.append(problem_of('%s: %s' % (variable, hccn_tool.ipv4_problem(value)),
                                       'set %s to an IPv4 address' % variable))
        elif not hccn_tool.same_subnet(value, address, netmask):
            problems.append(problem_of('%s %s is outside the NPU subnet %s'
                                       % (variable, value, hccn_tool.subnet_of(address, netmask)),
                                       'set %s to an address in %s (a list gives one per NPU)'
                                       % (variable, hccn_tool.subnet_of(address, netmask))))
        elif value == address:
            problems.append(problem_of('%s %s is the NPU own address' % (variable, value),
                                       'set %s to another address of %s' % (variable, hccn_tool.subnet_of(address, netmask))))
    return problems


def _rule_problems(host, npus, subnet_rule):
    valid = [entry for entry in npus if not hccn_tool.ipv4_problem(entry.get('address'))]
    subnets = dict((entry['npu'], hccn_tool.subnet_of(entry['address'], entry['netmask'])) for entry in valid)
    problems = []
    if subnet_rule == 'one_subnet' and len(set(subnets.values())) > 1:
        first = valid[0]
        for entry in valid[1:]:
            if subnets[entry['npu']] != subnets[first['npu']]:
                problems.append(_problem(
                    host, entry['npu'], 'subnet %s differs from NPU %s (%s); this model puts every NPU of a node in '
                    'one subnet' % (subnets[entry['npu']], first['npu'], subnets[first['npu']]),
                    'plan the node NPU addresses in one subnet (a wider hccn_netmask, or consecutive addresses)',
                    peer='%s NPU %s' % (host, first['npu'])))
    if subnet_rule == 'smp':
        by_position = dict((index, entry) for index, entry in enumerate(valid))
        for index, entry in by_position.items():
            partner = by_position.get(index + SMP_BOARD_NPUS)
            if partner and subnets[partner['npu']] != subnets[entry['npu']]:
                problems.append(_problem(
                    host, partner['npu'], 'subnet %s differs from NPU %s (%s); on SMP boards NPU i and i+4 share a '
                    'subnet' % (subnets[partner['npu']], entry['npu'], subnets[entry['npu']]),
                    'use hccn_base_address (Huawei expansion) or fix hccn_addresses',
                    peer='%s NPU %s' % (host, entry['npu'])))
            for other_index in range(index - index % SMP_BOARD_NPUS, index):
                other = by_position.get(other_index)
                if other and subnets[other['npu']] == subnets[entry['npu']]:
                    problems.append(_problem(
                        host, entry['npu'], 'subnet %s is also NPU %s on the same board; on SMP boards the four '
                        'NPUs of a board need four different subnets' % (subnets[entry['npu']], other['npu']),
                        'use hccn_base_address (Huawei expansion) or fix hccn_addresses',
                        peer='%s NPU %s' % (host, other['npu'])))
    return problems


def _holds(plan, address):
    """Whether a host holds ``address`` now: read on its NPUs (``live``), or, out of this run, assumed."""
    if not plan.get('in_play', True):
        return True
    return _number(address) in [_number(held) for held in plan.get('live') or ()]


def _duplicate(plans, first, second):
    """The problem of two NPUs planned with one address, each ``(host, npu, address as its plan writes it)``.
    When one of the two holds it already and the other does not, only the other stops (its change would
    make the conflict); else both do."""
    fix = ('give every NPU of the fleet its own address (change hccn_addresses or hccn_base_address of one '
           'of them)')
    first_holds, second_holds = _holds(plans[first[0]], first[2]), _holds(plans[second[0]], second[2])
    if first_holds and not second_holds:
        first, second = second, first
    spelled = ' (written %s there)' % second[2] if second[2] != first[2] else ''
    problem = _problem(first[0], first[1], 'address %s is also planned for %s NPU %s%s%s'
                       % (first[2], second[0], second[1], spelled,
                          ', which holds it now' if second_holds != first_holds else ''),
                       fix, peer='%s NPU %s' % second[:2])
    if first_holds != second_holds:
        problem['peer_host'] = None
    return problem


def plan_problems(plans):
    """Every problem of the whole fleet plan, before anything changes.

    plans: {host: {'npus': [...], 'subnet_rule': ..., 'problems': [str], 'in_play': bool, 'live': [addresses
    its NPUs hold now]}}; hosts not in this run (``in_play`` false) count for duplicates, since their NPUs keep
    their addresses. A problem's ``peer_host`` is set when that peer must stop too.
    Returns a list of dicts (host, npu, peer, problem, fix, message), sorted by host and NPU.
    """
    problems = []
    owners = {}
    for host in sorted(plans):
        plan = plans[host]
        for message in plan.get('problems') or []:
            problems.append({'host': host, 'npu': None, 'peer': None, 'peer_host': None, 'problem': message,
                             'fix': None, 'message': message})
        entries = plan.get('npus') or ([] if plan.get('in_play', True) else plan.get('claimed') or [])
        for entry in entries:
            if plan.get('in_play', True):
                problems.extend(_npu_problems(host, entry, plan))
            address = entry.get('address')
            # Compared as numbers: 10.0.1.010 (a host outside this run may be written so) is 10.0.1.10.
            key = _number(address)
            if key in owners:
                peer_host, peer_npu, peer_address = owners[key]
                if plan.get('in_play', True) or plans[peer_host].get('in_play', True):
                    problems.append(_duplicate(plans, (host, entry['npu'], address),
                                               (peer_host, peer_npu, peer_address)))
            else:
                owners[key] = (host, entry['npu'], address)
        if plan.get('in_play', True):
            problems.extend(_rule_problems(host, plan.get('npus') or [], plan.get('subnet_rule')))
    problems.extend(super_pod_problems(plans))
    return sorted(problems, key=lambda item: (item['host'], -1 if item['npu'] is None else item['npu']))


_SERVER_INDEX_FIX = ('give each server of the SuperPoD its own server index in the SuperPoD\'s configuration (npu-smi '
                     'info -t spod-info -i 0 -c 0 shows it), or correct hccn_super_pod in the inventory')


def super_pod_member(plan):
    """The node's SuperPoD as its node read it (npu-smi spod-info), when the node is a member by hccn_tool's
    rule (server index below the family's ``super_pod_max_servers``); else None."""
    read = plan.get('super_pod')
    model = plan.get('model') or {}
    if not read or not super_pod.is_member(read.get('server_index'), model.get('super_pod_max_servers')):
        return None
    return read


def _super_pod_of(plan):
    """(id, server index) the fleet check counts for a node: what its node read in this run, else (a host outside
    the run) what the inventory declares (hccn_super_pod with both keys); None for neither."""
    if plan.get('in_play', True):
        read = super_pod_member(plan)
        return (read['id'], read['server_index']) if read else None
    declared = plan.get('super_pod_declared') or {}
    if declared.get('id') is not None and declared.get('server_index') is not None:
        return int(declared['id']), int(declared['server_index'])
    return None


def super_pod_problems(plans):
    """The SuperPoD membership of the fleet's A3 nodes, before anything changes: what npu-smi reads on a node
    agrees with the inventory's ``hccn_super_pod`` (when given), each server index is within its SuperPoD's size
    and held once per SuperPoD id (hosts outside the run count with what the inventory declares)."""
    problems = []
    holders = {}
    for host in sorted(plans):
        plan = plans[host]
        declared = plan.get('super_pod_declared')
        in_play = plan.get('in_play', True)
        model = plan.get('model') or {}
        if in_play and declared and model.get('roce'):
            read = super_pod_member(plan)
            if read is None:
                problems.append(_problem(
                    host, None, 'the inventory puts it in SuperPoD %s (hccn_super_pod) but npu-smi info -t spod-info '
                    'shows %s' % (declared.get('id'), 'no SuperPoD membership' if not plan.get('super_pod') else
                                  'server index %s, outside any SuperPoD' % plan['super_pod'].get('server_index')),
                    'check the node\'s SuperPoD configuration, or remove hccn_super_pod from its inventory'))
            else:
                for key, label in (('id', 'Super Pod ID'), ('server_index', 'Server Index')):
                    if declared.get(key) is not None and int(declared[key]) != read[key]:
                        problems.append(_problem(
                            host, None, 'npu-smi info -t spod-info shows %s %s, the inventory (hccn_super_pod) says %s'
                            % (label, read[key], declared[key]),
                            'correct hccn_super_pod.%s, or check that the node sits in the SuperPoD and slot the '
                            'inventory names' % key))
        read = super_pod_member(plan) if in_play else None
        if read is not None:
            npus_per_server = len(plan.get('npu_ids') or []) // max(1, int(model.get('dies_per_npu') or 1))
            servers = super_pod.servers_in(read.get('size'), npus_per_server)
            if servers is not None and read['server_index'] >= servers:
                problems.append(_problem(
                    host, None, 'Server Index %s is outside its SuperPoD %s of %s NPUs (%s servers of %s NPUs: indexes '
                    '0-%s)' % (read['server_index'], read['id'], read['size'], servers, npus_per_server, servers - 1),
                    _SERVER_INDEX_FIX))
        member = _super_pod_of(plan)
        if member is not None:
            holders.setdefault(member, []).append(host)
    for (pod, index), hosts in sorted(holders.items()):
        if len(hosts) < 2:
            continue
        for host in hosts:
            if not plans[host].get('in_play', True):
                continue
            others = [other for other in hosts if other != host]
            problems.append(_problem(
                host, None, 'server index %s of SuperPoD %s is also %s\'s%s' % (
                    index, pod, ', '.join(others),
                    '' if all(plans[other].get('in_play', True) for other in others)
                    else ' (as the inventory declares it for a host outside this run)'),
                _SERVER_INDEX_FIX))
    return problems


def _miscabled(node, npu):
    """The switch port LLDP shows for ``npu`` and the one the cabling plan names, when they differ."""
    ports = list(node.get('switch_ports') or [])
    ids = [entry['npu'] for entry in node.get('npus') or []]
    if npu not in ids or ids.index(npu) >= len(ports):
        return None
    planned, seen = ports[ids.index(npu)], (node.get('lldp') or {}).get(npu)
    if not planned or not seen or seen == planned:
        return None
    return seen, planned


def _npu_at_fault(node, npu, plane='roce'):
    """Whether the NPU's own node names it (link, net health, cabling; on the HCCS plane its vNIC link): a ping
    lost to it is that node's fault."""
    for state in (node or {}).get('npus') or []:
        if state.get('npu') == npu:
            if plane == 'hccs':
                return state.get('vnic_link') not in (None, 'UP')
            if state.get('link') != 'UP' or state.get('net_health') != hccn_tool.NET_HEALTH_OK:
                return True
    return plane != 'hccs' and _miscabled(node or {}, npu) is not None


def gate_problems(host, nodes):
    """The gate's verdict for one node after configuring.

    nodes: {host: {'npus': hccn_info's per-NPU list (npu, link, net_health, netdetect; on an A3 SuperPoD member
    vnic_link, vnic_address), 'pings': list of {npu, target, peer, received, loss_pct, error}, 'hccs_pings': the
    same of -hccs_ping (with ``supported``), 'lldp': {npu: switch port}, 'switch_ports': the cabling plan, one
    switch port per NPU in NPU id order, or [], 'unit': 'NPU' or 'die', 'vnic_expected': {die: the vNIC address
    Huawei's rule gives it}}} for this node and the other nodes of the run. A ping lost to a peer NPU that its own
    node names (down, unhealthy, miscabled) is left to that node's verdict. Returns a list of dicts (host, npu,
    symptom, cause, fix, message).
    """
    node = nodes.get(host) or {}
    lldp = node.get('lldp') or {}
    unit = node.get('unit') or 'NPU'
    problems = []

    def add(npu, symptom, cause, fix, port=True):
        where = ' (switch port %s per LLDP)' % lldp.get(npu) if port and lldp.get(npu) else ''
        problems.append({'host': host, 'npu': npu, 'symptom': symptom, 'cause': cause + where, 'fix': fix,
                         'message': '%s %s %s: %s; likely cause: %s%s; fix: %s' % (host, unit, npu, symptom, cause, where,
                                                                                   fix)})

    expected_vnic = node.get('vnic_expected') or {}
    dies = int(node.get('dies_per_npu') or 1)
    for entry in node.get('npus') or []:
        npu = entry['npu']
        if entry.get('vnic_link') not in (None, 'UP'):
            add(npu, 'HCCS link (vNIC) %s' % entry['vnic_link'], 'the die\'s HCCS link to the SuperPoD is down: its '
                'HCCS port, cable or the SuperPoD switch', 'check the die\'s HCCS link (npu-smi info -t hccs -i %s -c %s, '
                'the SuperPoD\'s switch), then run hccn_tool -i %s -vnic -g' % (npu // dies, npu % dies, npu), port=False)
        elif npu in expected_vnic and entry.get('vnic_address') != expected_vnic[npu]:
            add(npu, 'vNIC address %s, Huawei\'s SuperPoD rule gives %s' % (entry.get('vnic_address'), expected_vnic[npu]),
                'the vNIC does not follow the server index npu-smi reports (192.<server index>.<2 + die>.<199 - '
                'Phy-ID>)', 'check npu-smi info -t spod-info and hccn_tool -i %s -vnic -g; the SuperPoD\'s '
                'configuration must give the node one server index' % npu, port=False)
        if entry.get('link') != 'UP':
            add(npu, 'link %s' % (entry.get('link') or 'unknown'), 'the NPU port has no link: cable unplugged or faulty, '
                'or the switch port is down', 'check the cable and the switch port, then run hccn_tool -i %s -link -g' % npu)
            continue
        if entry.get('net_health') != hccn_tool.NET_HEALTH_OK:
            add(npu, 'net health %s' % (entry.get('net_health') or 'unknown'),
                'the detect address %s does not answer the NPU' % (entry.get('netdetect') or '(none)'),
                'make the detect address answer (the gateway or another host of the subnet), or set hccn_detect_address '
                'to one that does')
        miscabled = _miscabled(node, npu)
        if miscabled:
            add(npu, 'cabled to switch port %s, the cabling plan (hccn_switch_ports) says %s' % miscabled,
                'a swapped or misplaced cable', 'move the cable of NPU %s to switch port %s' % (npu, miscabled[1]))
    for ping in node.get('pings') or []:
        npu = ping['npu']
        peer_host, peer_npu = _peer_parts(ping.get('peer'))
        if peer_npu is not None and _npu_at_fault(nodes.get(peer_host), peer_npu):
            continue
        if _miscabled(node, npu):
            continue
        if ping.get('error') or not ping.get('received'):
            add(npu, 'ping to %s (%s) lost %s' % (ping.get('target'), ping.get('peer'),
                                                  ping.get('error') or '%s%%' % ping.get('loss_pct')),
                'the NPU cannot reach its peer: a swapped or faulty cable, the switch port, or an address the peer '
                'does not hold', 'compare the LLDP switch port with the cabling plan (hccn_switch_ports) and the peer '
                'address with hccn_tool -i N -ip -g on %s' % (peer_host or ping.get('peer')))
    for ping in node.get('hccs_pings') or []:
        npu = ping['npu']
        if ping.get('supported') is False:
            continue
        peer_host, peer_npu = _peer_parts(ping.get('peer'))
        if peer_npu is not None and _npu_at_fault(nodes.get(peer_host), peer_npu, 'hccs'):
            continue
        if _npu_at_fault(node, npu, 'hccs'):
            continue
        if ping.get('error') or not ping.get('received'):
            add(npu, 'HCCS ping to %s (%s) lost %s' % (ping.get('target'), ping.get('peer'),
                                                       ping.get('error') or '%s%%' % ping.get('loss_pct')),
                'the die cannot reach its peer over the SuperPoD\'s HCCS plane: the peer is not in this SuperPoD, its '
                'server index differs from the plan, or an HCCS link between them is down',
                'compare npu-smi info -t spod-info on both nodes (Super Pod ID, Server Index) and hccn_tool -i N '
                '-vnic -g on %s' % (peer_host or ping.get('peer')), port=False)
    return problems


def gate_nodes(host_vars, play_hosts):
    """gate_problems' ``nodes`` from each host's registered readings (``__hccn_settled``: links and net
    health, on an A3 the vNICs; ``__hccn_fabric``: LLDP and pings; ``__hccn_live``: its SuperPoD) and its
    ``hccn_switch_ports``; hosts without them are left out."""
    nodes = {}
    for host in play_hosts:
        values = host_vars.get(host) if hasattr(host_vars, 'get') else None
        settled = ((values or {}).get('__hccn_settled') or {}).get('hccn')
        if not settled:
            continue
        fabric = ((values.get('__hccn_fabric') or {}).get('hccn')) or {}
        model = values.get('__hccn_model') or {}
        plan = {'model': model, 'super_pod': ((values.get('__hccn_live') or {}).get('hccn') or {}).get('super_pod')}
        read = super_pod_member(plan)
        expected = {}
        if read is not None and model.get('vnic_address_rule'):
            for state in settled.get('npus') or []:
                if 'vnic_address' in state:
                    expected[state['npu']] = super_pod.vnic_address(model['vnic_address_rule'], read['server_index'],
                                                                    state['npu'], model.get('dies_per_npu') or 1)
        nodes[host] = {
            'npus': settled.get('npus') or [],
            'pings': fabric.get('pings') or [],
            'hccs_pings': fabric.get('hccs_pings') or [],
            'lldp': dict((state['npu'], state.get('lldp_port')) for state in fabric.get('npus') or []),
            'switch_ports': list(values.get('hccn_switch_ports') or []),
            'unit': _unit(model),
            'dies_per_npu': model.get('dies_per_npu') or 1,
            'vnic_expected': expected,
        }
    return nodes


def _has_plan(values):
    return bool(values.get('hccn_base_address') or values.get('hccn_addresses'))


def fleet_input(host_vars, hosts, play_hosts, default_npu_ids):
    """The input of fleet_plan from each host's variables (``host_vars``: host -> mapping).

    A host of this run takes part when its role run decided so (``__hccn_take_part``, with its NPU ids,
    model, the addresses its NPUs hold now and its SuperPoD, ``__hccn_live``, as read); a host outside this run
    (failed, unreachable, left out by --limit) counts with the NPU ids assumed for it (its own
    ``hccn_default_npu_ids`` when the inventory sets one, such as the 16 dies of an A3) when it has an address
    plan, since its NPUs keep their addresses.
    """
    hosts_input = {}
    for host in hosts:
        values = host_vars.get(host) if hasattr(host_vars, 'get') else None
        if values is None:
            continue
        in_play = host in play_hosts and bool(values.get('__hccn_take_part'))
        if not in_play and (host in play_hosts or not _has_plan(values)):
            continue
        model = values.get('__hccn_model') or {}
        live = (values.get('__hccn_live') or {}).get('hccn') or {}
        declared = values.get('hccn_super_pod') or None
        if declared is not None and not isinstance(declared, dict):
            raise ValueError('%s: hccn_super_pod is %r; fix: set it to a mapping such as {id: 0, server_index: 3}, '
                             'or leave it unset' % (host, declared))
        assumed = values.get('hccn_default_npu_ids') or default_npu_ids
        hosts_input[host] = {
            'settings': {'base_address': values.get('hccn_base_address') or '',
                         'addresses': list(values.get('hccn_addresses') or []),
                         'netmask': values.get('hccn_netmask') or '',
                         'gateway': values.get('hccn_gateway') or '',
                         'detect_address': values.get('hccn_detect_address') or ''},
            'npu_ids': list(values.get('__hccn_npu_ids') or assumed) if in_play else list(assumed),
            'subnet_rule': model.get('subnet_rule') or 'one_subnet',
            'model': dict(model) if in_play else {},
            'in_play': in_play,
            'live': [state.get('address') for state in live.get('npus') or [] if state.get('address')],
            'super_pod': live.get('super_pod') if in_play else None,
            'super_pod_declared': dict(declared) if declared else None,
        }
    return hosts_input


def _next_peers(host, candidates, peers):
    """The ``peers`` hosts after ``host`` among ``candidates`` in name order, wrapping."""
    ordered = sorted(set(candidates) | set([host]))
    index = ordered.index(host)
    return [ordered[(index + step) % len(ordered)] for step in range(1, min(peers, len(ordered) - 1) + 1)]


def ping_targets(plans, in_play, peers, pods=None, units=None):
    """Per host of ``in_play``, the RoCE pings of its fabric check: each NPU (die) pings the NPU of the same position
    (modulo the peer's count) on the ``peers`` next hosts in name order, wrapping, so every node is pinged too.
    Members of one SuperPoD (``pods``: host -> SuperPoD id) are left to the HCCS pings (hccs_ping_targets): RoCE
    runs between SuperPoDs and to nodes outside any. ``units``: host -> what its ids number (NPU, die)."""
    pods, units = pods or {}, units or {}
    hosts = sorted(host for host in in_play if plans.get(host))
    targets = {}
    for host in hosts:
        pod = pods.get(host)
        candidates = [other for other in hosts if pod is None or pods.get(other) != pod]
        chosen = _next_peers(host, candidates, peers)
        targets[host] = []
        for position, entry in enumerate(plans[host]):
            for peer in chosen:
                target = plans[peer][position % len(plans[peer])]
                targets[host].append({'npu': entry['npu'], 'address': target['address'],
                                      'peer': '%s %s %s' % (peer, units.get(peer, 'NPU'), target['npu']),
                                      'peer_host': peer})
    return targets


def hccs_ping_targets(plans, in_play, peers):
    """Per A3 SuperPoD member of ``in_play`` whose family has -hccs_ping, its HCCS pings: each die pings the same
    die's vNIC on the ``peers`` next members of its SuperPoD (in name order, wrapping); the vNIC address comes from
    Huawei's rule (the catalogue's vnic_address_rule) and the server index the peer's node read."""
    members = {}
    for host in in_play:
        plan = plans[host]
        read = super_pod_member(plan)
        if read is not None and (plan.get('model') or {}).get('hccs_ping') and plan.get('npus'):
            members[host] = read
    targets = {}
    for host in sorted(members):
        pod = members[host]['id']
        chosen = _next_peers(host, [other for other in members if members[other]['id'] == pod], peers)
        targets[host] = []
        for entry in plans[host]['npus']:
            for peer in chosen:
                model = plans[peer].get('model') or {}
                address = super_pod.vnic_address(model.get('vnic_address_rule'), members[peer]['server_index'],
                                                 entry['npu'], model.get('dies_per_npu') or 1)
                if address:
                    targets[host].append({'npu': entry['npu'], 'address': address,
                                          'peer': '%s die %s' % (peer, entry['npu']), 'peer_host': peer})
    return targets


def fleet_plan(hosts, ping_peers=0):
    """The whole fleet's plan, its problems and the fabric check's pings in one call (the role's run_once step).

    hosts: {host: {'settings': {...}, 'npu_ids': [...], 'subnet_rule': ..., 'in_play': bool, 'model': roce_model's
    result, 'super_pod': spod-info as read, 'super_pod_declared': hccn_super_pod}} (fleet_input).
    Returns {'plans': {host: [npu entries]}, 'problems': [dicts as plan_problems returns],
    'pings': {host: [{npu, address, peer, peer_host}]}, 'hccs_pings': the same on the HCCS plane,
    'super_pods': {host: the SuperPoD its node read, when a member}}.
    """
    plans = {}
    for host, data in hosts.items():
        planned = node_plan(host, data.get('settings') or {}, data.get('npu_ids') or [], data.get('subnet_rule'))
        model = data.get('model') or {}
        plans[host] = dict(planned, subnet_rule=data.get('subnet_rule'), in_play=data.get('in_play', True),
                           live=data.get('live') or [], model=model, per_die=bool(model.get('per_die')),
                           npu_ids=list(data.get('npu_ids') or []), super_pod=data.get('super_pod'),
                           super_pod_declared=data.get('super_pod_declared'))
        if model.get('roce'):
            member = super_pod_member(plans[host]) is not None
            plans[host].update(refused=list(model.get('refused_subnets_super_pod') if member
                                            else model.get('refused_subnets') or []),
                               refusal=model.get('refusal'), super_pod_member=member)
    npus = dict((host, plan['npus']) for host, plan in plans.items())
    in_play = [host for host, plan in plans.items() if plan['in_play']]
    members = dict((host, super_pod_member(plans[host])) for host in in_play)
    pods = dict((host, read['id']) for host, read in members.items() if read is not None)
    units = dict((host, _unit(plans[host])) for host in in_play)
    return {'plans': npus, 'problems': plan_problems(plans),
            'pings': ping_targets(npus, in_play, ping_peers, pods, units),
            'hccs_pings': hccs_ping_targets(plans, in_play, ping_peers),
            'super_pods': dict((host, read) for host, read in members.items() if read is not None)}
