# -*- coding: utf-8 -*-
"""The hccn filters: registered names, and bad input failing as a filter error."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.hccn import (
    FilterModule, hccn_fabric_marker, hccn_fleet_plan, hccn_gate_problems, hccn_roce_model)
from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker


def test_registered_under_their_names():
    assert set(FilterModule().filters()) == {'hccn_state', 'hccn_node_plan', 'hccn_roce_model', 'hccn_fleet_plan',
                                             'hccn_gate_problems', 'hccn_fabric_marker'}


def test_bad_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError):
        hccn_roce_model('910B1')
    with pytest.raises(AnsibleFilterError):
        hccn_fleet_plan([], [], [])
    with pytest.raises(AnsibleFilterError):
        hccn_fleet_plan({}, 'all', [])
    with pytest.raises(AnsibleFilterError):
        hccn_gate_problems([], 'node', [])
    assert hccn_gate_problems({}, 'node', ['node']) == []


HOSTVARS = {
    't1': {'__hccn_take_part': True, '__hccn_npu_ids': [0, 1], '__hccn_model': {'subnet_rule': 'one_subnet'},
           'hccn_base_address': '10.0.0.10', 'hccn_netmask': '255.255.255.0', 'hccn_detect_address': '10.0.0.1'},
    't2': {'__hccn_take_part': True, '__hccn_npu_ids': [0, 1], '__hccn_model': {'subnet_rule': 'one_subnet'},
           'hccn_base_address': '10.0.0.20', 'hccn_netmask': '255.255.255.0', 'hccn_detect_address': '10.0.0.1'},
    # Out of this run (unreachable or --limit) but planned: its eight NPUs keep 10.0.0.30-37.
    't3': {'hccn_base_address': '10.0.0.30', 'hccn_netmask': '255.255.255.0', 'hccn_detect_address': '10.0.0.1'},
    'infer': {'__hccn_take_part': False},
    'controller': {},
}


def test_plan_through_the_filter():
    result = hccn_fleet_plan(HOSTVARS, sorted(HOSTVARS) + ['gone'], ['t1', 't2', 'infer'], None, 2)
    assert sorted(result['plans']) == ['t1', 't2', 't3']
    assert [npu['address'] for npu in result['plans']['t1']] == ['10.0.0.10', '10.0.0.11']
    assert len(result['plans']['t3']) == 8
    assert result['problems'] == []
    assert sorted(result['pings']) == ['t1', 't2']
    assert result['pings']['t1'] == [{'npu': 0, 'address': '10.0.0.20', 'peer': 't2 NPU 0', 'peer_host': 't2'},
                                     {'npu': 1, 'address': '10.0.0.21', 'peer': 't2 NPU 1', 'peer_host': 't2'}]
    assert hccn_roce_model([{'name': '910B2'}])['roce'] is True


def test_a_host_out_of_the_run_still_conflicts():
    hostvars = dict(HOSTVARS, t3=dict(HOSTVARS['t3'], hccn_base_address='10.0.0.11'))
    problems = hccn_fleet_plan(hostvars, sorted(hostvars), ['t1', 't2'])['problems']
    assert [(problem['host'], problem['npu'], problem['peer'], problem['peer_host']) for problem in problems] == [
        ('t1', 1, 't3 NPU 0', None)]


CONFIGURED = {'changed': False, 'conf_sha256': 'b' * 64,
              'npus': [{'npu': 0, 'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
                        'netdetect': '10.0.0.1'}]}


def test_fabric_marker_records_the_verdict_and_what_was_checked():
    text = hccn_fabric_marker({'passed': True, 'problems': [], 'pings': ['NPU 0 -> 10.0.0.20: 3 of 3 received']},
                              CONFIGURED)
    marker = fabric_marker.parse_marker(text)
    assert marker['verdict'] == 'passed' and marker['conf_sha256'] == 'b' * 64
    assert marker['npus'] == CONFIGURED['npus']
    # The set_fact of the role may hand the verdict over as a string.
    assert hccn_fabric_marker({'passed': 'True', 'problems': []}, CONFIGURED) == text
    failed = fabric_marker.parse_marker(hccn_fabric_marker({'passed': 'False', 'problems': ['t1 NPU 0: link DOWN']},
                                                           CONFIGURED))
    assert failed['verdict'] == 'failed' and failed['problems'] == ['t1 NPU 0: link DOWN']


@pytest.mark.parametrize('verdict, configured', [(None, CONFIGURED), ({'problems': []}, CONFIGURED),
                                                 ({'passed': True}, {'changed': False}),
                                                 ({'passed': True}, {'npus': [{'address': '10.0.0.1'}]})])
def test_fabric_marker_bad_input_is_a_filter_error(verdict, configured):
    with pytest.raises(AnsibleFilterError):
        hccn_fabric_marker(verdict, configured)
