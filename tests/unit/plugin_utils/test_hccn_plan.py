# -*- coding: utf-8 -*-
import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan

EIGHT = list(range(8))
A2 = {'base_address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1', 'detect_address': '10.0.0.1'}


def chips(name, phy=False):
    return [{'npu_id': npu, 'chip_id': 0, 'name': name, 'phy_id': npu if phy else None} for npu in range(8)]


@pytest.mark.parametrize('name,roce,rule', [('910B1', True, 'one_subnet'), ('910B3', True, 'one_subnet'),
                                            ('910B4', False, None), ('310P3', False, None),
                                            ('910A', True, 'smp')])
def test_roce_model(name, roce, rule):
    model = hccn_plan.roce_model(chips(name))
    assert (model['roce'], model['subnet_rule']) == (roce, rule)
    assert model['reason']


def test_a3_dies_are_configured_by_their_phy_ids():
    model = hccn_plan.roce_model(chips('Ascend910', phy=True))
    assert model['roce'] and model['per_die'] and model['ids'] == EIGHT and 'per die' in model['reason']


@pytest.mark.parametrize('name,roce,words', [
    ('910B3_24.1.rc2_info-with-processes.txt', True, 'one RoCE port each'),
    ('910B2_23.0.7_info.txt', True, 'one RoCE port each'),
    ('910B4_25.0.rc1.1_info.txt', False, 'inference'),
    ('310P3_25.5.2_info.txt', False, 'inference'),
    ('Ascend910-A3_24.1.rc3.7_info.txt', True, 'one RoCE port per die'),
    ('910B-legacy910_24.1.0_info.txt', True, 'SMP'),
])
def test_roce_model_of_real_npu_smi_tables(sample, name, roce, words):
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
    model = hccn_plan.roce_model(npu_smi.parse_info(sample('npu-smi/' + name))['chips'])
    assert model['roce'] is roce and words in model['reason']


def test_no_chips():
    assert not hccn_plan.roce_model([])['roce']


def test_huawei_smp_expansion():
    assert hccn_plan.expand_base_address('10.0.0.1', 8, 'smp') == [
        '10.0.0.1', '10.0.1.1', '10.0.2.1', '10.0.3.1', '10.0.0.2', '10.0.1.2', '10.0.2.2', '10.0.3.2']


def test_a2_expansion_is_consecutive():
    assert hccn_plan.expand_base_address('10.0.0.250', 8, 'one_subnet')[-1] == '10.0.1.1'


def fleet(**hosts):
    return hccn_plan.fleet_plan(dict(
        (host, {'settings': settings, 'npu_ids': EIGHT, 'subnet_rule': settings.pop('rule', 'one_subnet'),
                'in_play': settings.pop('in_play', True)}) for host, settings in hosts.items()))


def messages(result):
    return [problem['message'] for problem in result['problems']]


def test_two_a2_nodes_plan_cleanly():
    result = fleet(t1=dict(A2), t2=dict(A2, base_address='10.0.0.20'))
    assert messages(result) == []
    assert result['plans']['t1'][0] == {'npu': 0, 'address': '10.0.0.10', 'netmask': '255.255.255.0',
                                        'gateway': '10.0.0.1', 'netdetect': '10.0.0.1'}
    assert result['plans']['t2'][7]['address'] == '10.0.0.27'


def test_overlap_between_two_nodes_names_both_and_the_fix():
    result = fleet(t1=dict(A2), t2=dict(A2, base_address='10.0.0.15'))
    conflicts = [problem for problem in result['problems'] if problem['peer']]
    assert len(conflicts) == 3
    assert conflicts[0]['host'] == 't2' and conflicts[0]['npu'] == 0 and conflicts[0]['peer'] == 't1 NPU 5'
    assert 'fix: give every NPU of the fleet its own address' in conflicts[0]['message']


def test_conflict_with_a_host_outside_the_run_still_counts():
    result = fleet(t1=dict(A2), t2=dict(A2, in_play=False))
    assert len(result['problems']) == 8
    # t2 keeps its addresses while it is out of the run: t1, which would take them, is the one to stop.
    assert {(problem['host'], problem['peer_host']) for problem in result['problems']} == {('t1', None)}


def test_detect_address_defaults_to_gateway():
    settings = dict(A2)
    del settings['detect_address']
    assert fleet(t1=settings)['plans']['t1'][3]['netdetect'] == '10.0.0.1'


def test_missing_detect_address_is_a_problem():
    settings = dict(A2)
    del settings['detect_address'], settings['gateway']
    assert any('no detect address' in message for message in messages(fleet(t1=settings)))


@pytest.mark.parametrize('base,netmask', [('192.168.1.10', '255.255.255.0'), ('192.168.2.10', '255.255.255.0'),
                                          ('192.168.0.10', '255.255.0.0')])
def test_reserved_ranges(base, netmask):
    gateway = base.rsplit('.', 1)[0] + '.1'
    result = fleet(t1=dict(A2, base_address=base, netmask=netmask, gateway=gateway, detect_address=gateway))
    assert any('hccn_tool refuses' in message for message in messages(result))


def test_smp_reserved_only_on_smp():
    base = dict(A2, base_address='192.168.3.10', gateway='192.168.3.1', detect_address='192.168.3.1')
    assert messages(fleet(t1=dict(base))) == []
    smp = dict(base, netmask='255.255.255.0', rule='smp', gateway=None, detect_address=None)
    smp['gateway'] = ['192.168.%d.1' % (3 + index % 4) for index in range(8)]
    assert any('192.168.3.0/24' in message and 'refuses' in message for message in messages(fleet(t1=smp)))


def test_gateway_outside_subnet():
    result = fleet(t1=dict(A2, gateway='10.0.1.1'))
    assert any('hccn_gateway 10.0.1.1 is outside the NPU subnet 10.0.0.0/24' in message
               for message in messages(result))


def test_a2_subnet_rule():
    result = fleet(t1=dict(A2, base_address='10.0.0.250', gateway=None, detect_address='10.0.0.1'))
    assert any('this model puts every NPU of a node in one subnet' in message for message in messages(result))


def test_smp_plan_from_base_keeps_the_rule_and_needs_per_npu_gateways():
    gateways = ['10.0.%d.254' % (index % 4) for index in range(8)]
    result = fleet(s1=dict(base_address='10.0.0.1', netmask='255.255.255.0', gateway=gateways, rule='smp'))
    assert messages(result) == []
    single = fleet(s1=dict(base_address='10.0.0.1', netmask='255.255.255.0', gateway='10.0.0.254', rule='smp'))
    assert len([message for message in messages(single) if 'outside the NPU subnet' in message]) == 12


def test_smp_explicit_addresses_breaking_the_rule():
    addresses = ['10.0.%d.1' % index for index in range(8)]
    result = fleet(s1=dict(addresses=addresses, netmask='255.255.255.0', rule='smp', gateway=None,
                           detect_address=['10.0.%d.254' % index for index in range(8)]))
    assert any('NPU i and i+4 share a subnet' in message for message in messages(result))


def test_explicit_list_length_and_both_sources():
    result = fleet(t1=dict(A2, addresses=['10.0.0.10']))
    assert any('both hccn_addresses and hccn_base_address' in message for message in messages(result))
    settings = dict(A2, addresses=['10.0.0.10'])
    del settings['base_address']
    assert any('1 addresses for 8 NPUs' in message for message in messages(fleet(t1=settings)))


def test_network_address_is_refused():
    settings = dict(A2, addresses=['10.0.0.%d' % index for index in range(8)])
    del settings['base_address']
    assert any('network or broadcast' in message for message in messages(fleet(t1=settings)))


def node(npus, pings=(), lldp=None, ports=()):
    return {'npus': npus, 'pings': list(pings), 'lldp': lldp or {}, 'switch_ports': list(ports)}


def test_gate_problems_name_npu_symptom_cause_and_port():
    npus = [{'npu': 0, 'link': 'UP', 'net_health': 'Success'}, {'npu': 1, 'link': 'DOWN', 'net_health': 'Fault'},
            {'npu': 2, 'link': 'UP', 'net_health': 'Receive timeout', 'netdetect': '10.0.0.1'},
            {'npu': 3, 'link': 'UP', 'net_health': 'Success'}]
    pings = [{'npu': 3, 'target': '10.0.0.23', 'peer': 't2 NPU 3', 'received': 0, 'loss_pct': 100.0}]
    problems = hccn_plan.gate_problems('t1', {'t1': node(npus, pings, {3: '400GE1/1/20:2'})})
    assert [problem['npu'] for problem in problems] == [1, 2, 3]
    assert problems[0]['message'].startswith('t1 NPU 1: link DOWN')
    assert 'switch port 400GE1/1/20:2' in problems[2]['message'] and 'cable' in problems[2]['message']
    assert hccn_plan.gate_problems('t1', {'t1': node(npus[:1])}) == []
    assert hccn_plan.gate_problems('t1', {}) == []


PING_T2_3 = {'npu': 3, 'target': '10.0.0.23', 'peer': 't2 NPU 3', 'received': 0, 'loss_pct': 100.0}
HEALTHY_3 = {'npu': 3, 'link': 'UP', 'net_health': 'Success'}


@pytest.mark.parametrize('peer,blamed', [
    (node([{'npu': 3, 'link': 'DOWN', 'net_health': 'Fault'}]), False),
    (node([{'npu': 3, 'link': 'UP', 'net_health': 'Receive timeout'}]), False),
    (node([HEALTHY_3], lldp={3: '400GE1/1/6:1'}, ports=['400GE1/1/6:1']), True),
    (node([HEALTHY_3], lldp={3: '400GE1/1/6:1'}, ports=['400GE1/1/6:2']), False),
    (node([HEALTHY_3]), True),
    (None, True),
])
def test_a_lost_ping_is_left_to_the_peer_its_own_node_names(peer, blamed):
    nodes = {'t1': node([HEALTHY_3], [PING_T2_3])}
    if peer is not None:
        nodes['t2'] = peer
    assert bool(hccn_plan.gate_problems('t1', nodes)) is blamed


def test_cabling_plan_names_the_swapped_npu():
    npus = [{'npu': 0, 'link': 'UP', 'net_health': 'Success'}, {'npu': 1, 'link': 'UP', 'net_health': 'Success'}]
    pings = [{'npu': 0, 'target': '10.0.0.20', 'peer': 't2 NPU 0', 'received': 0, 'loss_pct': 100.0}]
    nodes = {'t1': node(npus, pings, {0: 'p2', 1: 'p1'}, ['p1', 'p2'])}
    problems = hccn_plan.gate_problems('t1', nodes)
    assert [problem['npu'] for problem in problems] == [0, 1]
    assert 'cabled to switch port p2, the cabling plan (hccn_switch_ports) says p1' in problems[0]['message']
    assert 'fix: move the cable of NPU 0 to switch port p1' in problems[0]['message']


def test_gate_nodes_from_hostvars():
    hostvars = {'t1': {'__hccn_settled': {'hccn': {'npus': [HEALTHY_3]}},
                       '__hccn_fabric': {'hccn': {'npus': [{'npu': 3, 'lldp_port': 'p3'}], 'pings': [PING_T2_3]}},
                       'hccn_switch_ports': ['p0']},
                'duo': {}}
    assert hccn_plan.gate_nodes(hostvars, ['t1', 'duo', 'gone']) == {
        't1': {'npus': [HEALTHY_3], 'pings': [PING_T2_3], 'hccs_pings': [], 'lldp': {3: 'p3'},
               'switch_ports': ['p0'], 'unit': 'NPU', 'dies_per_npu': 1, 'vnic_expected': {}}}


ints = st.integers(1, 200)


@given(st.integers(0, 2 ** 32 - 1 - 4000), st.sampled_from(['one_subnet', 'smp']), st.integers(1, 16))
def test_expansion_gives_distinct_addresses(start, rule, count):
    base = '.'.join(str((start >> shift) & 255) for shift in (24, 16, 8, 0))
    planned = hccn_plan.expand_base_address(base, count, rule)
    assert len(set(planned)) == count


@given(st.integers(1, 250), st.integers(1, 250))
def test_no_two_hosts_share_an_address_unreported(first, second):
    result = fleet(t1=dict(A2, base_address='10.9.%d.1' % first, gateway=None, detect_address=None, netmask='255.0.0.0'),
                   t2=dict(A2, base_address='10.9.%d.1' % second, gateway=None, detect_address=None, netmask='255.0.0.0'))
    shared = set(npu['address'] for npu in result['plans']['t1']) & set(npu['address'] for npu in result['plans']['t2'])
    reported = [problem for problem in result['problems'] if problem['peer']]
    assert len(reported) == len(shared)


def test_ping_targets_cover_every_node():
    plans = dict((host, [{'npu': npu, 'address': '10.0.%d.%d' % (index, npu)} for npu in range(2)])
                 for index, host in enumerate(['a', 'b', 'c']))
    targets = hccn_plan.ping_targets(plans, ['a', 'b', 'c'], 1)
    assert [entry['peer'] for entry in targets['a']] == ['b NPU 0', 'b NPU 1']
    assert [entry['peer'] for entry in targets['c']] == ['a NPU 0', 'a NPU 1']
    assert len(hccn_plan.ping_targets(plans, ['a', 'b', 'c'], 5)['a']) == 4
    assert hccn_plan.ping_targets(plans, ['a'], 2) == {'a': []}


def test_a_duplicate_stops_only_the_node_whose_change_would_make_it():
    hosts = {
        't1': {'settings': dict(A2), 'npu_ids': EIGHT, 'subnet_rule': 'one_subnet', 'in_play': True,
               'live': ['10.0.0.%d' % (10 + npu) for npu in EIGHT]},
        't2': {'settings': dict(A2, base_address='10.0.0.17'), 'npu_ids': EIGHT, 'subnet_rule': 'one_subnet',
               'in_play': True, 'live': []},
    }
    problems = hccn_plan.fleet_plan(hosts)['problems']
    duplicates = [problem for problem in problems if problem['peer']]
    assert [(problem['host'], problem['npu'], problem['peer'], problem['peer_host']) for problem in duplicates] == [
        ('t2', 0, 't1 NPU 7', None)]
    assert 'which holds it now' in duplicates[0]['message']
    # Neither holds it yet: both stop.
    hosts['t1']['live'] = []
    duplicate = [problem for problem in hccn_plan.fleet_plan(hosts)['problems'] if problem['peer']][0]
    assert (duplicate['host'], duplicate['peer_host']) == ('t2', 't1')
    # The earlier node in name order is the one that does not hold it: it is the one named.
    hosts['t1']['live'], hosts['t2']['live'] = [], ['10.0.0.17']
    duplicate = [problem for problem in hccn_plan.fleet_plan(hosts)['problems'] if problem['peer']][0]
    assert (duplicate['host'], duplicate['npu'], duplicate['peer'], duplicate['peer_host']) == ('t1', 7, 't2 NPU 0', None)
