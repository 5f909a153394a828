# -*- coding: utf-8 -*-
"""The hccn filters: registered names, and bad input failing as a filter error."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.hccn import (
    FilterModule, hccn_fleet_plan, hccn_gate_problems, hccn_roce_model)


def test_registered_under_their_names():
    assert set(FilterModule().filters()) == {'hccn_roce_model', 'hccn_fleet_plan', 'hccn_gate_problems'}


def test_bad_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError):
        hccn_roce_model('910B1')
    with pytest.raises(AnsibleFilterError):
        hccn_fleet_plan([])
    with pytest.raises(AnsibleFilterError):
        hccn_gate_problems({}, 'node')
    with pytest.raises(AnsibleFilterError, match='hccn_fleet_plan'):
        hccn_fleet_plan({'t1': {'settings': 'ten', 'npu_ids': [0], 'subnet_rule': 'one_subnet'}})
    result = hccn_fleet_plan({'t1': {'settings': {'base_address': 'ten', 'netmask': '255.255.255.0'},
                                     'npu_ids': [0], 'subnet_rule': 'one_subnet'}})
    assert 'hccn_base_address' in result['problems'][0]['message']


def test_plan_through_the_filter():
    result = hccn_fleet_plan({'t1': {'settings': {'base_address': '10.0.0.10', 'netmask': '255.255.255.0',
                                                  'detect_address': '10.0.0.1'},
                                     'npu_ids': [0, 1], 'subnet_rule': 'one_subnet', 'in_play': True}})
    assert [npu['address'] for npu in result['plans']['t1']] == ['10.0.0.10', '10.0.0.11']
    assert result['problems'] == []
    assert hccn_roce_model([{'name': '910B2'}])['roce'] is True
