# -*- coding: utf-8 -*-
"""The fabric of A3 nodes: 16 dies each, SuperPoD membership read on the node, the A3 address refusals, HCCS pings
inside a SuperPoD and RoCE between SuperPoDs and to A2 nodes, and the gate's verdict on them."""
import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan

DIES = list(range(16))
A3_CHIPS = [{'npu_id': npu, 'chip_id': die, 'phy_id': 2 * npu + die, 'name': 'Ascend910'}
            for npu in range(8) for die in range(2)]
A2_CHIPS = [{'npu_id': npu, 'chip_id': 0, 'phy_id': None, 'name': '910B3'} for npu in range(8)]
A3_MODEL = hccn_plan.roce_model(A3_CHIPS)
A2_MODEL = hccn_plan.roce_model(A2_CHIPS)


def settings_of(base, netmask='255.255.0.0', gateway=None):
    gateway = gateway or base.rsplit('.', 2)[0] + '.0.1'
    return {'base_address': base, 'netmask': netmask, 'gateway': gateway, 'detect_address': gateway}


def a3(base, pod=0, index=0, size=384, declared=None, in_play=True, netmask='255.255.0.0'):
    return {'settings': settings_of(base, netmask), 'npu_ids': DIES, 'subnet_rule': 'per_die', 'model': A3_MODEL,
            'in_play': in_play, 'super_pod': {'id': pod, 'server_index': index, 'size': size, 'sdid': index << 22}
            if index is not None else None, 'super_pod_declared': declared}


def a2(base):
    return {'settings': settings_of(base), 'npu_ids': list(range(8)), 'subnet_rule': 'one_subnet', 'model': A2_MODEL,
            'in_play': True}


def messages(result, host=None):
    return [problem['message'] for problem in result['problems'] if host is None or problem['host'] == host]


def test_a3_node_plans_16_consecutive_dies():
    result = hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=0)})
    assert [entry['address'] for entry in result['plans']['p1']] == ['10.1.0.%d' % (10 + die) for die in DIES]
    assert [entry['npu'] for entry in result['plans']['p1']] == DIES and result['problems'] == []


def test_an_address_in_192_0_0_0_8_is_refused_inside_a_super_pod():
    result = hccn_plan.fleet_plan({'p1': a3('192.10.0.10', index=3)})
    found = messages(result, 'p1')
    assert len(found) == 16 and found[0].startswith('p1 die 0: address 192.10.0.10/16 meets 192.0.0.0/8')
    assert 'SuperPoD member (server index 3)' in found[0] and 'A3 product get same network address' in found[0]
    assert found[0].endswith('fix: plan the NPU addresses outside 192.0.0.0/8')


def test_outside_a_super_pod_only_192_168_0_0_21_is_refused():
    assert hccn_plan.fleet_plan({'s1': a3('192.10.0.10', index=None)})['problems'] == []
    found = messages(hccn_plan.fleet_plan({'s1': a3('192.168.6.10', index=None, netmask='255.255.255.0')}))
    assert found and 'meets 192.168.0.0/21' in found[0] and 'SuperPoD' not in found[0]
    # Server index 48 and above is not a member, by hccn_tool's rule.
    assert hccn_plan.fleet_plan({'s1': a3('192.10.0.10', index=48, size=1000)})['problems'] == []


def test_a_duplicate_server_index_stops_both_members():
    result = hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=5), 'p2': a3('10.2.0.10', index=5),
                                   'q1': a3('10.3.0.10', pod=1, index=5)})
    assert messages(result, 'p1') == ['p1: server index 5 of SuperPoD 0 is also p2\'s; fix: give each server of the '
                                      'SuperPoD its own server index in the SuperPoD\'s configuration (npu-smi info -t '
                                      'spod-info -i 0 -c 0 shows it), or correct hccn_super_pod in the inventory']
    assert len(messages(result, 'p2')) == 1 and messages(result, 'q1') == []


def test_a_host_outside_the_run_counts_with_what_the_inventory_declares():
    result = hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=5),
                                   'gone': a3('10.2.0.10', index=None, in_play=False,
                                              declared={'id': 0, 'server_index': 5})})
    assert messages(result, 'p1') and 'outside this run' in messages(result, 'p1')[0]
    assert messages(result, 'gone') == []


def test_a_server_index_beyond_the_pods_size():
    found = messages(hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=2, size=16)}))
    assert found == ['p1: Server Index 2 is outside its SuperPoD 0 of 16 NPUs (2 servers of 8 NPUs: indexes 0-1); fix: '
                     'give each server of the SuperPoD its own server index in the SuperPoD\'s configuration (npu-smi '
                     'info -t spod-info -i 0 -c 0 shows it), or correct hccn_super_pod in the inventory']


@pytest.mark.parametrize('declared, index, words', [
    ({'id': 1}, 3, 'shows Super Pod ID 0, the inventory (hccn_super_pod) says 1'),
    ({'server_index': 4}, 3, 'shows Server Index 3, the inventory (hccn_super_pod) says 4'),
    ({'id': 0}, None, 'shows no SuperPoD membership'),
])
def test_the_inventory_is_checked_against_the_nodes_reading(declared, index, words):
    found = messages(hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=index, declared=declared)}))
    assert len(found) == 1 and words in found[0]


def test_hccs_inside_the_pod_roce_between_pods_and_to_a2():
    result = hccn_plan.fleet_plan({'p1': a3('10.1.0.10', index=0), 'p2': a3('10.2.0.10', index=1),
                                   'q1': a3('10.3.0.10', pod=1, index=0), 't1': a2('10.9.0.10')}, ping_peers=2)
    assert result['problems'] == []
    # HCCS: p1 and p2 ping each other's vNICs, die for die; q1 is alone in its pod.
    assert result['hccs_pings']['p1'][3] == {'npu': 3, 'address': '192.1.3.196', 'peer': 'p2 die 3', 'peer_host': 'p2'}
    assert [ping['peer_host'] for ping in result['hccs_pings']['p2']] == ['p1'] * 16
    assert result['hccs_pings']['q1'] == []
    # RoCE: never between p1 and p2; each die reaches the A2 node (modulo its 8 NPUs) and the other pod.
    roce = result['pings']
    assert set(ping['peer_host'] for ping in roce['p1']) == {'q1', 't1'}
    assert set(ping['peer_host'] for ping in roce['p2']) == {'q1', 't1'}
    to_a2 = [ping for ping in roce['p1'] if ping['peer_host'] == 't1']
    assert [ping['address'] for ping in to_a2][8:10] == ['10.9.0.10', '10.9.0.11'] and to_a2[9]['peer'] == 't1 NPU 1'
    assert set(ping['peer_host'] for ping in roce['t1']) <= {'p1', 'p2', 'q1'} and len(roce['t1']) == 16
    assert roce['t1'][0]['peer'].endswith(' die 0')
    assert result['super_pods']['p2']['server_index'] == 1 and 't1' not in result['super_pods']


def test_an_a2_fleet_pings_as_before():
    result = hccn_plan.fleet_plan({'t1': a2('10.9.0.10'), 't2': a2('10.9.0.30')}, ping_peers=2)
    assert result['hccs_pings'] == {} and [ping['peer'] for ping in result['pings']['t1']][:2] == ['t2 NPU 0', 't2 NPU 1']


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5)), min_size=1, max_size=8))
def test_every_duplicate_member_is_named_and_no_other(members):
    hosts = dict(('n%d' % index, a3('10.%d.0.10' % (index + 1), pod=pod, index=server))
                 for index, (pod, server) in enumerate(members))
    result = hccn_plan.fleet_plan(hosts, ping_peers=1)
    named = set(problem['host'] for problem in result['problems'])
    duplicated = set(host for host, (pod, server) in zip(sorted(hosts, key=lambda name: int(name[1:])), members)
                     if members.count((pod, server)) > 1)
    assert named == duplicated
    for host, pings in result['hccs_pings'].items():
        pod = hosts[host]['super_pod']['id']
        assert all(hosts[ping['peer_host']]['super_pod']['id'] == pod and ping['peer_host'] != host for ping in pings)
    for host, pings in result['pings'].items():
        pod = hosts[host]['super_pod']['id']
        assert all(hosts[ping['peer_host']]['super_pod']['id'] != pod for ping in pings)


# --- the gate ---------------------------------------------------------------------------------------------

def die_state(die, vnic_link='UP', vnic_address=None, server=0):
    return {'npu': die, 'link': 'UP', 'net_health': 'Success', 'netdetect': '10.1.0.1', 'vnic_link': vnic_link,
            'vnic_address': vnic_address or '192.%d.%d.%d' % (server, 2 + die % 2, 199 - die)}


def hostvars(states, server=0, hccs_pings=(), pings=()):
    return {'__hccn_settled': {'hccn': {'npus': states}},
            '__hccn_fabric': {'hccn': {'npus': [], 'pings': list(pings), 'hccs_pings': list(hccs_pings)}},
            '__hccn_model': A3_MODEL,
            '__hccn_live': {'hccn': {'super_pod': {'id': 0, 'server_index': server, 'size': 384, 'sdid': 0}}}}


def hccs(npu, target, peer, received=3, supported=True):
    return {'npu': npu, 'target': target, 'peer': peer, 'received': received if supported else 0,
            'loss_pct': 0.0 if received else 100.0, 'supported': supported, 'error': None}


def test_a_die_whose_hccs_link_is_down_names_node_die_cause_and_fix():
    nodes = hccn_plan.gate_nodes({'p1': hostvars([die_state(0), die_state(3, 'DOWN')],
                                                 hccs_pings=[hccs(3, '192.1.3.196', 'p2 die 3', 0)]),
                                  'p2': hostvars([die_state(3, server=1)], server=1,
                                                 hccs_pings=[hccs(3, '192.0.3.196', 'p1 die 3', 0)])}, ['p1', 'p2'])
    problems = hccn_plan.gate_problems('p1', nodes)
    assert [problem['message'] for problem in problems] == [
        'p1 die 3: HCCS link (vNIC) DOWN; likely cause: the die\'s HCCS link to the SuperPoD is down: its HCCS port, '
        'cable or the SuperPoD switch; fix: check the die\'s HCCS link (npu-smi info -t hccs -i 1 -c 1, the SuperPoD\'s '
        'switch), then run hccn_tool -i 3 -vnic -g']
    # Its peer's loss to it is left to p1's verdict.
    assert hccn_plan.gate_problems('p2', nodes) == []


def test_a_lost_hccs_ping_names_the_peer_and_an_unsupported_one_is_no_failure():
    pings = [hccs(0, '192.1.2.199', 'p2 die 0', 0), hccs(0, '192.2.2.199', 'p3 die 0', supported=False)]
    nodes = hccn_plan.gate_nodes({'p1': hostvars([die_state(0)], hccs_pings=pings),
                                  'p2': hostvars([die_state(0, server=1)], server=1)}, ['p1', 'p2'])
    problems = hccn_plan.gate_problems('p1', nodes)
    assert len(problems) == 1 and problems[0]['message'].startswith(
        'p1 die 0: HCCS ping to 192.1.2.199 (p2 die 0) lost 100.0%; likely cause: the die cannot reach its peer')
    assert 'npu-smi info -t spod-info' in problems[0]['fix']


def test_a_vnic_off_huaweis_rule_is_named():
    nodes = hccn_plan.gate_nodes({'p1': hostvars([die_state(1, vnic_address='192.7.3.198')], server=0)}, ['p1'])
    problems = hccn_plan.gate_problems('p1', nodes)
    assert len(problems) == 1 and 'vNIC address 192.7.3.198, Huawei\'s SuperPoD rule gives 192.0.3.198' in \
        problems[0]['message']
