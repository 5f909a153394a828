# -*- coding: utf-8 -*-
"""The fleet plan refuses values from the inventory that two tools would read as two things, naming the
value and the variable it came from, and compares addresses as numbers, not strings."""

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan

TWO = (0, 1)


def plan(hosts, npu_ids=TWO):
    return hccn_plan.fleet_plan(dict(
        (host, {'settings': dict({'netmask': '255.255.255.0', 'gateway': '10.0.1.1'}, **settings),
                'npu_ids': npu_ids, 'subnet_rule': 'one_subnet', 'in_play': settings.pop('in_play', True)})
        for host, settings in hosts.items()))


def messages(result, host=None):
    return [problem['message'] for problem in result['problems'] if host is None or problem['host'] == host]


@pytest.mark.parametrize('settings,variable,value', [
    ({'addresses': ['10.0.1.010', '10.0.1.11']}, 'hccn_addresses', '10.0.1.010'),
    ({'addresses': ['10.0.1.10\n', '10.0.1.11']}, 'hccn_addresses', '10.0.1.10\\n'),
    ({'base_address': '010.000.001.010'}, 'hccn_base_address', '010.000.001.010'),
    ({'base_address': '10.0.1.10\n'}, 'hccn_base_address', '10.0.1.10\\n'),
    ({'base_address': '10.0.1.10', 'gateway': '10.0.1.001'}, 'hccn_gateway', '10.0.1.001'),
    ({'base_address': '10.0.1.10', 'detect_address': ['10.0.1.1', '10.0.1.1\n']}, 'hccn_detect_address',
     '10.0.1.1\\n'),
    ({'base_address': '10.0.1.10', 'netmask': '255.255.255.0\n'}, 'hccn_netmask', '255.255.255.0\\n'),
])
def test_ambiguous_inventory_values_are_refused_naming_the_variable(settings, variable, value):
    result = plan({'t1': settings})
    found = messages(result, 't1')
    assert found, result
    assert any(variable in message and value in message for message in found), found
    assert result['plans']['t1'] == []


def test_an_address_written_two_ways_is_one_address():
    result = plan({'t1': {'addresses': ['10.0.1.10', '10.0.1.11']},
                   't2': {'addresses': ['10.0.1.12', '10.0.1.10'], 'in_play': False}})
    assert any('10.0.1.10 is also planned for' in message for message in messages(result)), messages(result)


@pytest.mark.parametrize('written', ['10.0.1.010', '10.0.1.0010', '010.000.001.010'])
def test_an_out_of_play_host_written_with_leading_zeros_still_counts_as_a_duplicate(written):
    # A host outside this run keeps what its NPUs hold: its plan's problem is its own, but its address
    # meets ours once both are read as numbers.
    result = plan({'t1': {'addresses': ['10.0.1.10', '10.0.1.11']},
                   't2': {'addresses': ['10.0.1.12', written], 'in_play': False}})
    assert any(problem['host'] == 't1' and problem['npu'] == 0 and written in problem['message']
               for problem in result['problems']), messages(result)


def test_one_npu_listed_twice_is_refused():
    result = plan({'t1': {'addresses': ['10.0.1.10', '10.0.1.11']}}, npu_ids=[0, 0])
    found = messages(result, 't1')
    assert any('NPU 0' in message and 'twice' in message for message in found), found
    assert result['plans']['t1'] == []


@given(st.lists(st.integers(0, 2), min_size=4, max_size=4), st.integers(11, 250))
def test_any_spelling_of_a_held_address_is_a_duplicate(zeros, last):
    address = '10.0.1.%d' % last
    written = '.'.join('0' * pad + part for pad, part in zip(zeros, address.split('.')))
    result = plan({'t1': {'addresses': [address, '10.0.1.254']},
                   't2': {'addresses': ['10.0.1.3', written], 'in_play': False}})
    assert any(problem['host'] == 't1' and problem['npu'] == 0 and 'also planned for t2 NPU 1' in problem['message']
               for problem in result['problems']), messages(result)
