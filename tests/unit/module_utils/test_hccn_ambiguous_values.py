# -*- coding: utf-8 -*-
"""Values two readers would take for two different things never reach the hardware: an address with
leading zeros (inet_aton reads 010 as 8, others as 10), a trailing newline, /etc/hccn.conf holding
one key twice or one address on two NPUs."""

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware.hccn_tool import HccnParseError


@pytest.mark.parametrize('value', ['010.000.001.010', '10.0.1.010', '10.00.1.1', '0010.0.0.1'])
def test_leading_zeros_are_refused(value):
    problem = hccn_tool.ipv4_problem(value)
    assert problem and 'leading zero' in problem and value in problem


@pytest.mark.parametrize('value', ['10.0.0.10\n', '10.0.0.10\r\n', '\n10.0.0.10', '10.0.0.10 ', '10.0.0.10\x00'])
def test_whitespace_around_an_address_is_refused(value):
    assert hccn_tool.ipv4_problem(value)
    with pytest.raises(ValueError):
        hccn_tool.ip_to_int(value)


def test_netmask_with_a_trailing_newline_is_no_netmask():
    assert hccn_tool.netmask_prefix('255.255.255.0\n') is None


@pytest.mark.parametrize('value', ['0.0.0.0', '10.0.0.10', '255.255.255.255', '100.0.10.0'])
def test_plain_addresses_pass(value):
    assert hccn_tool.ipv4_problem(value) == ''


@given(st.lists(st.integers(0, 255), min_size=4, max_size=4), st.integers(0, 3), st.integers(1, 2))
def test_any_padded_part_is_refused(parts, index, zeros):
    text = '.'.join(('0' * zeros + str(part)) if position == index else str(part)
                    for position, part in enumerate(parts))
    assert 'leading zero' in hccn_tool.ipv4_problem(text)


@pytest.mark.parametrize('text', ['ipaddr:010.000.001.010\nnetmask:255.255.255.0\n',
                                  'ipaddr:10.0.1.10\nnetmask:255.255.255.000\n'])
def test_the_node_printing_leading_zeros_is_refused(text):
    with pytest.raises(HccnParseError, match='leading zero'):
        hccn_tool.parse_ip(text)


def test_conf_with_a_key_twice_is_a_problem():
    problems = hccn_tool.conf_problems('address_0=10.0.0.10\nnetmask_0=255.255.255.0\naddress_0=10.0.0.11\n')
    assert len(problems) == 1
    assert 'address_0' in problems[0] and '10.0.0.10' in problems[0] and '10.0.0.11' in problems[0]
    assert 'lines 1 and 3' in problems[0]


def test_conf_with_one_address_on_two_npus_is_a_problem():
    problems = hccn_tool.conf_problems('address_0=10.0.0.10\naddress_1=10.0.0.10\n')
    assert len(problems) == 1 and 'NPU 0' in problems[0] and 'NPU 1' in problems[0] and '10.0.0.10' in problems[0]


def test_conf_with_an_ambiguous_value_is_a_problem():
    problems = hccn_tool.conf_problems('address_0=010.0.0.10\nnetmask_0=255.255.255.0\n')
    assert len(problems) == 1 and 'address_0' in problems[0] and 'leading zero' in problems[0]


def test_a_plain_conf_has_no_problem(sample):
    assert hccn_tool.conf_problems(sample('hccn/hccn.conf')) == []
    assert hccn_tool.conf_problems('address_0=10.0.0.10\naddress_1=10.0.0.11\nsend_arp_status_0=1\n'
                                   'send_arp_status_1=1\n') == []


def test_device_names_with_a_newline_or_other_digits_are_no_npu():
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner
    names = ['davinci0', 'davinci0\n', 'davinci\u0661', 'davinci1', 'davinci_manager', 'davinci01x']
    assert hccn_tool_runner.npu_ids_from_devices(names) == [0, 1]
