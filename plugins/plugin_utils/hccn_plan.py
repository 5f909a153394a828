# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NPUs' RoCE address plan (HCCN) on the controller: which nodes have RoCE ports, each node's
addresses from the inventory, the fleet-wide check before anything changes, and the gate's
judgement after. Pure; docs/hccn.md explains the rules and their sources."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils import hccn_tool

# Chips whose NPUs carry their own RoCE port: one list, which the Node's fabric label reads too.
A2_TRAINING_CHIPS = hccn_tool.A2_TRAINING_CHIPS
A1_TRAINING_CHIPS = hccn_tool.A1_TRAINING_CHIPS
# hccn_tool refuses addresses whose subnet meets these (the host-NPU virtual NIC and its neighbours).
RESERVED_SUBNETS = ('192.168.1.0/24', '192.168.2.0/24')
RESERVED_SUBNETS_SMP = ('192.168.3.0/24', '192.168.4.0/24', '192.168.5.0/24')
# npu-smi chip name -> family, for the chips whose NPUs talk across nodes over HCCS vNICs (the
# hardware catalogue's ``vnic`` rows): the hccn role does not configure them.
VNIC_CHIP_FAMILIES = hardware_catalogue.vnic_chip_families()
# NPUs per board on the 910A SMP servers: NPU i and i+4 share a subnet, a board's four NPUs differ.
SMP_BOARD_NPUS = 4


def roce_model(chips):
    """What the node's chips (npu_smi_info's ``chips``) say about its RoCE ports:
    {'roce': bool, 'subnet_rule': 'one_subnet'|'smp'|None, 'chip_name', 'reason'}."""
    names = sorted(set(str(chip.get('name')) for chip in chips or [] if chip.get('name')))
    # The chip name decides (docs/hccn.md): every chip carries a phy id, whatever its fabric.
    vnic_families = sorted(set(VNIC_CHIP_FAMILIES[name] for name in names if name in VNIC_CHIP_FAMILIES))
    name = names[0] if len(names) == 1 else ', '.join(names) or None
    if not names:
        return {'roce': False, 'subnet_rule': None, 'chip_name': None,
                'reason': 'npu-smi shows no NPU chip, so the node has no NPU RoCE port to configure'}
    if vnic_families:
        return {'roce': False, 'subnet_rule': None, 'chip_name': name,
                'reason': 'an %s server (%s): its NPUs talk across nodes over HCCS (hccn_tool -vnic), which this role '
                          'does not configure' % ('/'.join(vnic_families), name)}
    if all(chip in A2_TRAINING_CHIPS for chip in names):
        return {'roce': True, 'subnet_rule': 'one_subnet', 'chip_name': name,
                'reason': '%s training NPUs, one RoCE port each' % name}
    if all(chip in A1_TRAINING_CHIPS for chip in names):
        return {'roce': True, 'subnet_rule': 'smp', 'chip_name': name,
                'reason': '%s training NPUs (Atlas 800-9000 class, SMP mode), one RoCE port each' % name}
    return {'roce': False, 'subnet_rule': None, 'chip_name': name,
            'reason': '%s NPUs have no RoCE ports of their own (inference models)' % name}


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


def _problem(host, npu, problem, fix, peer=None):
    return {'host': host, 'npu': npu, 'peer': peer, 'peer_host': peer.split(' NPU ')[0] if peer else None,
            'problem': problem, 'fix': fix, 'message': '%s NPU %s: %s; fix: %s' % (host, npu, problem, fix)}


def _npu_problems(host, entry, subnet_rule):
    problems = []
    npu, address, netmask = entry['npu'], entry.get('address'), entry.get('netmask')
    if hccn_tool.ipv4_problem(address):
        return [_problem(host, npu, 'planned address: %s' % hccn_tool.ipv4_problem(address),
                         'correct hccn_addresses or hccn_base_address')]
    reserved = RESERVED_SUBNETS + (RESERVED_SUBNETS_SMP if subnet_rule == 'smp' else ())
    for subnet in reserved:
        if _subnets_meet(address, netmask, subnet):
            problems.append(_problem(
                host, npu, 'address %s/%s meets %s, which hccn_tool refuses (reserved for the host-NPU virtual NIC)'
                % (address, hccn_tool.netmask_prefix(netmask), subnet),
                'plan the NPU addresses outside 192.168.1.0/24 and 192.168.2.0/24%s'
                % (' and 192.168.3.0/24-192.168.5.0/24' if subnet_rule == 'smp' else '')))
    network = hccn_tool.ip_to_int(address) & hccn_tool.ip_to_int(netmask)
    broadcast = network | (~hccn_tool.ip_to_int(netmask) & 0xFFFFFFFF)
    if hccn_tool.netmask_prefix(netmask) < 31 and hccn_tool.ip_to_int(address) in (network, broadcast):
        problems.append(_problem(host, npu, 'address %s is the network or broadcast address of %s'
                                 % (address, hccn_tool.subnet_of(address, netmask)),
                                 'pick a host address inside the subnet'))
    for key, variable in (('gateway', 'hccn_gateway'), ('netdetect', 'hccn_detect_address')):
        value = entry.get(key)
        if not value:
            if key == 'netdetect':
                problems.append(_problem(host, npu, 'no detect address: its net health cannot become Success',
                                         'set hccn_detect_address (or hccn_gateway) to an address in %s that answers'
                                         % hccn_tool.subnet_of(address, netmask)))
            continue
        if hccn_tool.ipv4_problem(value):
            problems.append(_problem(host, npu, '%s: %s' % (variable, hccn_tool.ipv4_problem(value)),
                                     'set %s to an IPv4 address' % variable))
        elif not hccn_tool.same_subnet(value, address, netmask):
            problems.append(_problem(host, npu, '%s %s is outside the NPU subnet %s'
                                     % (variable, value, hccn_tool.subnet_of(address, netmask)),
                                     'set %s to an address in %s (a list gives one per NPU)'
                                     % (variable, hccn_tool.subnet_of(address, netmask))))
        elif value == address:
            problems.append(_problem(host, npu, '%s %s is the NPU own address' % (variable, value),
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
                problems.extend(_npu_problems(host, entry, plan.get('subnet_rule')))
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
    return sorted(problems, key=lambda item: (item['host'], -1 if item['npu'] is None else item['npu']))


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


def _npu_at_fault(node, npu):
    """Whether the NPU's own node names it (link, net health, cabling): a ping lost to it is that node's fault."""
    for state in (node or {}).get('npus') or []:
        if state.get('npu') == npu:
            if state.get('link') != 'UP' or state.get('net_health') != hccn_tool.NET_HEALTH_OK:
                return True
    return _miscabled(node or {}, npu) is not None


def gate_problems(host, nodes):
    """The gate's verdict for one node after configuring.

    nodes: {host: {'npus': hccn_info's per-NPU list (npu, link, net_health, netdetect), 'pings': list of
    {npu, target, peer, received, loss_pct, error}, 'lldp': {npu: switch port}, 'switch_ports': the
    cabling plan, one switch port per NPU in NPU id order, or []}} for this node and the other nodes of
    the run. A ping lost to a peer NPU that its own node names (down, unhealthy, miscabled) is left to
    that node's verdict. Returns a list of dicts (host, npu, symptom, cause, fix, message).
    """
    node = nodes.get(host) or {}
    lldp = node.get('lldp') or {}
    problems = []

    def add(npu, symptom, cause, fix):
        port = lldp.get(npu)
        where = ' (switch port %s per LLDP)' % port if port else ''
        problems.append({'host': host, 'npu': npu, 'symptom': symptom, 'cause': cause + where, 'fix': fix,
                         'message': '%s NPU %s: %s; likely cause: %s%s; fix: %s' % (host, npu, symptom, cause, where, fix)})

    for entry in node.get('npus') or []:
        npu = entry['npu']
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
        peer_host, peer_npu = (ping.get('peer') or '').partition(' NPU ')[::2]
        if peer_npu.isdigit() and _npu_at_fault(nodes.get(peer_host), int(peer_npu)):
            continue
        if _miscabled(node, npu):
            continue
        if ping.get('error') or not ping.get('received'):
            add(npu, 'ping to %s (%s) lost %s' % (ping.get('target'), ping.get('peer'),
                                                  ping.get('error') or '%s%%' % ping.get('loss_pct')),
                'the NPU cannot reach its peer: a swapped or faulty cable, the switch port, or an address the peer '
                'does not hold', 'compare the LLDP switch port with the cabling plan (hccn_switch_ports) and the peer '
                'address with hccn_tool -i N -ip -g on %s' % (peer_host or ping.get('peer')))
    return problems


def gate_nodes(host_vars, play_hosts):
    """gate_problems' ``nodes`` from each host's registered readings (``__hccn_settled``: links and net
    health; ``__hccn_fabric``: LLDP and pings) and its ``hccn_switch_ports``; hosts without them are left out."""
    nodes = {}
    for host in play_hosts:
        values = host_vars.get(host) if hasattr(host_vars, 'get') else None
        settled = ((values or {}).get('__hccn_settled') or {}).get('hccn')
        if not settled:
            continue
        fabric = ((values.get('__hccn_fabric') or {}).get('hccn')) or {}
        nodes[host] = {
            'npus': settled.get('npus') or [],
            'pings': fabric.get('pings') or [],
            'lldp': dict((state['npu'], state.get('lldp_port')) for state in fabric.get('npus') or []),
            'switch_ports': list(values.get('hccn_switch_ports') or []),
        }
    return nodes


def _has_plan(values):
    return bool(values.get('hccn_base_address') or values.get('hccn_addresses'))


def fleet_input(host_vars, hosts, play_hosts, default_npu_ids):
    """The input of fleet_plan from each host's variables (``host_vars``: host -> mapping).

    A host of this run takes part when its role run decided so (``__hccn_take_part``, with its NPU ids,
    model and the addresses its NPUs hold now, ``__hccn_live``, as read); a host outside this run (failed, unreachable, left out by --limit) counts with the
    NPU ids assumed for it when it has an address plan, since its NPUs keep their addresses.
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
        hosts_input[host] = {
            'settings': {'base_address': values.get('hccn_base_address') or '',
                         'addresses': list(values.get('hccn_addresses') or []),
                         'netmask': values.get('hccn_netmask') or '',
                         'gateway': values.get('hccn_gateway') or '',
                         'detect_address': values.get('hccn_detect_address') or ''},
            'npu_ids': list(values.get('__hccn_npu_ids') or default_npu_ids) if in_play else list(default_npu_ids),
            'subnet_rule': model.get('subnet_rule') or 'one_subnet',
            'in_play': in_play,
            'live': [state.get('address') for state in
                     ((values.get('__hccn_live') or {}).get('hccn') or {}).get('npus') or [] if state.get('address')],
        }
    return hosts_input


def ping_targets(plans, in_play, peers):
    """Per host of ``in_play``, the pings of its fabric check: each NPU pings the NPU of the same
    position on the ``peers`` next hosts (in name order, wrapping), so every node is pinged too."""
    hosts = sorted(host for host in in_play if plans.get(host))
    targets = {}
    for index, host in enumerate(hosts):
        chosen = [hosts[(index + step) % len(hosts)] for step in range(1, min(peers, len(hosts) - 1) + 1)]
        targets[host] = []
        for position, entry in enumerate(plans[host]):
            for peer in chosen:
                if position < len(plans[peer]):
                    target = plans[peer][position]
                    targets[host].append({'npu': entry['npu'], 'address': target['address'],
                                          'peer': '%s NPU %s' % (peer, target['npu']), 'peer_host': peer})
    return targets


def fleet_plan(hosts, ping_peers=0):
    """The whole fleet's plan, its problems and the fabric check's pings in one call (the role's run_once step).

    hosts: {host: {'settings': {...}, 'npu_ids': [...], 'subnet_rule': ..., 'in_play': bool}} (fleet_input).
    Returns {'plans': {host: [npu entries]}, 'problems': [dicts as plan_problems returns],
    'pings': {host: [{npu, address, peer, peer_host}]}}.
    """
    plans = {}
    for host, data in hosts.items():
        planned = node_plan(host, data.get('settings') or {}, data.get('npu_ids') or [], data.get('subnet_rule'))
        plans[host] = dict(planned, subnet_rule=data.get('subnet_rule'), in_play=data.get('in_play', True),
                           live=data.get('live') or [])
    npus = dict((host, plan['npus']) for host, plan in plans.items())
    in_play = [host for host, plan in plans.items() if plan['in_play']]
    return {'plans': npus, 'problems': plan_problems(plans), 'pings': ping_targets(npus, in_play, ping_peers)}
