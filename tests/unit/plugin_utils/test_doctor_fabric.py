# -*- coding: utf-8 -*-
"""The doctor's diagnoses of the NPUs' RoCE network (docs/doctor.md, docs/hccn.md): link down, net
health not Success, a wrong subnet, an address two nodes hold."""

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils import doctor

from test_doctor import cluster, node_evidence


def npus(base=10, **changes):
    states = [{'npu': npu, 'address': '10.0.0.%d' % (base + npu), 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
               'netdetect': '10.0.0.1', 'link': 'UP', 'net_health': 'Success'} for npu in range(8)]
    for npu, change in changes.items():
        states[int(npu[1:])].update(change)
    return states


def trained(name, **changes):
    return node_evidence(name, hccn={'ok': True, 'npus': npus(**changes.pop('npus', {}))},
                         hccn_subnet_rule='one_subnet', **changes)


def fabric_findings(nodes):
    return [item for item in doctor.diagnose(nodes, cluster()) if item['component'] == 'fabric']


def test_a_healthy_fabric_has_no_finding():
    assert fabric_findings([trained('npu-a2-01')]) == []
    # A node without RoCE evidence (inference) or never configured says nothing either.
    assert fabric_findings([node_evidence(hccn=None)]) == []
    unset = [dict(state, address=None, netmask=None) for state in npus()]
    assert fabric_findings([node_evidence(hccn={'ok': True, 'npus': unset})]) == []


@pytest.mark.parametrize('change,problem,fix', [
    ({'n3': {'link': 'DOWN', 'net_health': 'Fault'}}, 'NPU 3 link DOWN', 'check the NPU cable'),
    ({'n5': {'net_health': 'Receive timeout'}}, 'NPU 5 net health Receive timeout', 'make the detect address answer'),
    ({'n2': {'netdetect': '10.0.9.1'}}, 'NPU 2 netdetect 10.0.9.1 is outside its subnet 10.0.0.0/24', 'set the netdetect'),
    ({'n7': {'address': '10.0.1.17', 'gateway': '10.0.1.1', 'netdetect': '10.0.1.1'}}, 'the NPUs are in 2 subnets',
     'one subnet'),
    ({'n1': {'address': None}}, 'NPU 1 has no RoCE address', 'give it its address'),
])
def test_each_fabric_problem_is_found_with_its_fix(change, problem, fix):
    found = fabric_findings([trained('npu-a2-01', npus=change)])
    assert len(found) == 1, found
    assert found[0]['problem'].startswith(problem) and fix in found[0]['fix'] and found[0]['node'] == 'npu-a2-01'


def test_an_address_two_nodes_hold_is_found_on_both():
    first = trained('npu-a2-01')
    second = node_evidence('npu-a2-02', hccn={'ok': True, 'npus': npus(base=17)}, hccn_subnet_rule='one_subnet')
    found = fabric_findings([first, second])
    assert [(item['node'], item['problem']) for item in found] == [
        ('npu-a2-01', 'NPU 7 address 10.0.0.17 is also held by npu-a2-02 NPU 0'),
        ('npu-a2-02', 'NPU 0 address 10.0.0.17 is also held by npu-a2-01 NPU 7')]


def test_hccn_tool_failing_is_a_finding():
    found = fabric_findings([node_evidence(hccn={'ok': False, 'error': 'hccn_tool not found'})])
    assert found[0]['problem'] == "the NPUs' RoCE ports cannot be read" and found[0]['evidence'] == 'hccn_tool not found'


def test_an_unset_npu_is_not_said_to_print_0_0_0_0():
    # hccn_tool answers an NPU never configured with its "no ip was preset there!" error (docs/hccn.md); the
    # evidence must not claim an output the tool does not print.
    found = fabric_findings([trained('npu-a2-01', npus={'n1': {'address': None}})])
    assert '0.0.0.0' not in found[0]['evidence'] and 'no address' in found[0]['evidence']


def test_an_a3_die_whose_hccs_link_is_down_is_found_configured_or_not():
    dies = [{'npu': die, 'address': '10.0.0.%d' % (10 + die), 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
             'netdetect': '10.0.0.1', 'link': 'UP', 'net_health': 'Success', 'vnic_link': 'DOWN' if die == 3 else 'UP',
             'vnic_address': '192.0.%d.%d' % (2 + die % 2, 199 - die)} for die in range(16)]
    found = fabric_findings([node_evidence('a3-01', hccn={'ok': True, 'npus': dies}, hccn_subnet_rule='per_die')])
    assert [(item['problem'], item['evidence']) for item in found] == [
        ('die 3 HCCS link (vNIC) DOWN', 'hccn_tool -i 3 -vnic -g: vnic link status: DOWN')]
    assert 'SuperPoD switch' in found[0]['fix']
    # Dies never given a RoCE address still show their HCCS link.
    unset = [dict(state, address=None, netmask=None) for state in dies]
    assert [item['problem'] for item in fabric_findings([node_evidence('a3-01', hccn={'ok': True, 'npus': unset},
                                                                       hccn_subnet_rule='per_die')])] == [
        'die 3 HCCS link (vNIC) DOWN']
