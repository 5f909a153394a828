# -*- coding: utf-8 -*-
"""What hccn_tool prints for a never-configured NPU, and the outputs no public capture confirms: each
variant we know of is read (docs/huawei-sources.md, "Outputs no public capture confirms")."""

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware.hccn_tool import HccnParseError

UNSET_IP = {'address': None, 'netmask': None}


@pytest.mark.parametrize('text', [
    'Get ipconf failed, because no ip was preset there!\n',   # a 910B3 on driver 25.5.1, MindIE's guide
    'Get ip failed, because no ip was preset there!\n',       # the 950 generation's tool
    'ipaddr:0.0.0.0\nnetmask:0.0.0.0\n',                      # our simulator's old guess
    '',                                                       # an empty answer
    '\n',
])
def test_ip_never_set_reads_as_unset(text):
    assert hccn_tool.parse_ip(text) == UNSET_IP


def test_ip_never_set_sample(sample):
    assert hccn_tool.parse_ip(sample('hccn/ip-g_not-preset.txt')) == UNSET_IP


@pytest.mark.parametrize('text', [
    'Get gateway failed, because no gateway was preset there!\n',
    'default gateway:0.0.0.0, Iface:eth3\n',
    'default gateway:0.0.0.0\n',
    '',
])
def test_gateway_never_set_reads_as_none(text):
    assert hccn_tool.parse_gateway(text) is None


def test_gateway_never_set_sample(sample):
    assert hccn_tool.parse_gateway(sample('hccn/gateway-g_not-preset.txt')) is None


@pytest.mark.parametrize('text', [
    'netdetect addr: 0.0.0.0\n',
    'netdetect address: 0.0.0.0\n',
    'Get netdetect failed, because no netdetect ip was preset there!\n',
    '',
])
def test_detect_address_never_set_reads_as_none(text):
    assert hccn_tool.parse_netdetect(text) is None


@pytest.mark.parametrize('parser,text', [
    (hccn_tool.parse_ip, 'Get gateway failed, because no gateway was preset there!\n'),
    (hccn_tool.parse_gateway, 'Get ipconf failed, because no ip was preset there!\n'),
])
def test_a_not_preset_error_of_another_value_is_not_taken(parser, text):
    with pytest.raises(HccnParseError):
        parser(text)


@pytest.mark.parametrize('what,text,expected', [
    ('address', 'Get ipconf failed, because no ip was preset there!\n', True),
    ('address', 'Get ip failed, because no ip was preset there!', True),
    ('gateway', 'Get gateway failed, because no gateway was preset there!\n', True),
    ('netdetect', 'Get netdetect failed, because no netdetect ip was preset there!\n', True),
    ('gateway', 'Get ipconf failed, because no ip was preset there!\n', False),
    ('address', 'dsmi get device info failed. ret is -8005\n', False),
    ('address', '', False),
    ('link', 'Get ipconf failed, because no ip was preset there!\n', False),
])
def test_says_not_preset(what, text, expected):
    assert hccn_tool.says_not_preset(what, text) is expected


@pytest.mark.parametrize('status', ['Socket failed', 'Unknown', 'Socket fail', 'Detect ip set'])
def test_net_health_words_of_the_status_table(status):
    assert hccn_tool.parse_net_health('net health status: %s\n' % status) == status
    assert status in hccn_tool.NET_HEALTH_STATUSES


def test_ping_without_its_first_line_counts_the_replies(sample):
    ping = hccn_tool.parse_ping(sample('hccn/ping-g_no-header.txt'), npu=2, target='10.0.0.20')
    assert (ping['npu'], ping['target'], ping['transmitted'], ping['received']) == (2, '10.0.0.20', 3, 2)
    assert ping['loss_pct'] == 33.33 and ping['times_ms'] == [0.089, 0.071]


def test_ping_without_its_first_line_and_no_summary_is_refused():
    with pytest.raises(HccnParseError):
        hccn_tool.parse_ping('recv seq=0,time=0.089000ms\n', npu=2, target='10.0.0.20')


@given(st.integers(1, 20), st.data())
def test_ping_received_count_does_not_depend_on_the_first_line(sent, data):
    received = data.draw(st.integers(0, sent))
    body = ''.join('recv seq=%d,time=0.1ms\n' % seq for seq in range(received))
    loss = 100.0 * (sent - received) / sent
    summary = '%d packets transmitted, %d received, %.2f%% packet loss\n' % (sent, received, loss)
    with_header = hccn_tool.parse_ping('device 1 PING 10.0.0.9\n' + body + summary)
    without = hccn_tool.parse_ping(body + summary, npu=1, target='10.0.0.9')
    assert with_header == without


def test_ping_summary_in_the_sources_other_spelling():
    # The driver source's -hccs_ping prints `packets loss`; both spellings are read.
    ping = hccn_tool.parse_ping('device 0 PING 10.0.0.9\n3 packets transmitted, 3 received, 0.00% packets loss\n')
    assert (ping['transmitted'], ping['received'], ping['loss_pct']) == (3, 3, 0.0)


@pytest.mark.parametrize('text', ['address_\u0660=10.0.0.10\n', 'ipaddr:\u0661\u0660.0.0.1\nnetmask:255.255.255.0\n'])
def test_digits_of_other_scripts_are_not_numbers(text):
    # int() reads ARABIC-INDIC DIGIT ONE ZERO as 10: such text is no NPU id and no address.
    if text.startswith('address_'):
        assert hccn_tool.parse_hccn_conf(text) == {}
    else:
        with pytest.raises(HccnParseError):
            hccn_tool.parse_ip(text)
