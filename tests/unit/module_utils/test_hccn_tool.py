# -*- coding: utf-8 -*-
import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware.hccn_tool import HccnParseError


def test_ip(sample):
    assert hccn_tool.parse_ip(sample('hccn/ip-g.txt')) == {'address': '10.0.0.10', 'netmask': '255.255.255.0'}


def test_ip_unset_is_none():
    assert hccn_tool.parse_ip('ipaddr:0.0.0.0\nnetmask:0.0.0.0\n') == {'address': None, 'netmask': None}


# An empty answer is an address never set (test_hccn_unset_and_unverified_outputs.py).
@pytest.mark.parametrize('text', ['ipaddr:10.0.0.1\n', 'ipaddr:10.0.0.300\nnetmask:255.255.255.0\n',
                                  'ipaddr:10.0.0.1\nnetmask:255.0.255.0\n',
                                  'ipaddr:10.0.0.1\nipaddr:10.0.0.2\nnetmask:255.255.255.0\n',
                                  'Ipaddr conflict.\n'])
def test_ip_refuses_what_it_does_not_know(text):
    with pytest.raises(HccnParseError):
        hccn_tool.parse_ip(text)


@pytest.mark.parametrize('name,expected', [('netdetect-g_driver-source.txt', '10.0.0.1'),
                                           ('netdetect-g_guide.txt', '11.12.165.1')])
def test_netdetect_both_spellings(sample, name, expected):
    assert hccn_tool.parse_netdetect(sample('hccn/' + name)) == expected


def test_netdetect_unset():
    assert hccn_tool.parse_netdetect('netdetect addr: 0.0.0.0\n') is None


def test_gateway_with_and_without_iface(sample):
    assert hccn_tool.parse_gateway(sample('hccn/gateway-g_guide.txt')) == '11.12.165.1'
    assert hccn_tool.parse_gateway('default gateway:10.0.0.1\n') == '10.0.0.1'
    with pytest.raises(HccnParseError):
        hccn_tool.parse_gateway('gateway 10.0.0.1\n')


def test_link(sample):
    assert hccn_tool.parse_link(sample('hccn/link-g_up.txt')) == 'UP'
    assert hccn_tool.parse_link(sample('hccn/link-g_down.txt')) == 'DOWN'
    with pytest.raises(HccnParseError):
        hccn_tool.parse_link('link status: FLAPPING\n')


@pytest.mark.parametrize('status', hccn_tool.NET_HEALTH_STATUSES)
def test_every_net_health_status(status):
    assert hccn_tool.parse_net_health('net health status: %s\n' % status) == status


def test_net_health_unknown_is_refused():
    with pytest.raises(HccnParseError, match='not one hccn_tool is known to print'):
        hccn_tool.parse_net_health('net health status: Fine\n')


def test_ping(sample):
    ping = hccn_tool.parse_ping(sample('hccn/ping-g_910b.txt'))
    assert ping == {'npu': 3, 'target': '29.1.137.205', 'transmitted': 3, 'received': 3, 'loss_pct': 0.0,
                    'times_ms': [1.418, 0.067, 0.063], 'avg_ms': 0.516, 'max_ms': 1.418}


def test_ping_all_lost():
    text = 'device 0 PING 10.0.0.20\n3 packets transmitted, 0 received, 100.00% packet loss\n'
    ping = hccn_tool.parse_ping(text)
    assert (ping['received'], ping['loss_pct'], ping['avg_ms']) == (0, 100.0, None)


def test_ping_received_more_than_sent_is_refused():
    with pytest.raises(HccnParseError):
        hccn_tool.parse_ping('device 0 PING 10.0.0.20\n3 packets transmitted, 4 received, 0.00% packet loss\n')


def test_lldp_ifname(sample):
    assert hccn_tool.parse_lldp_ifname(sample('hccn/lldp-g.txt')) == '400GE1/1/20:2'
    assert hccn_tool.parse_lldp_ifname('\tIfname: 400GE1/1/5:1\n') == '400GE1/1/5:1'
    assert hccn_tool.parse_lldp_ifname('') is None


def test_hccn_conf(sample):
    conf = hccn_tool.parse_hccn_conf(sample('hccn/hccn.conf'))
    assert conf[0] == {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'netdetect': '10.0.0.1',
                       'gateway': '10.0.0.1', 'send_arp_status': '1'}
    assert conf[1]['address'] == '10.0.0.11'


def test_conf_differences():
    conf = {0: {'address': '10.0.0.10', 'netmask': '255.255.255.0'}}
    live = {0: {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': None, 'netdetect': '10.0.0.1'},
            1: {'address': '10.0.0.11', 'netmask': '255.255.255.0'}}
    assert hccn_tool.conf_differences(conf, live) == {0: ['netdetect'], 1: ['address', 'netmask']}


def test_state_differences_address_and_netmask_go_together():
    live = {'address': '10.0.0.10', 'netmask': '255.255.0.0', 'gateway': '10.0.0.1', 'netdetect': None}
    wanted = {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1', 'netdetect': '10.0.0.1'}
    assert hccn_tool.npu_state_differences(live, wanted) == ['address', 'netdetect']
    assert hccn_tool.npu_state_differences(wanted, wanted) == []


@pytest.mark.parametrize('mask,prefix', [('255.255.255.0', 24), ('255.255.0.0', 16), ('255.255.255.255', 32),
                                         ('0.0.0.0', 0), ('255.0.255.0', None), ('255.255.255.1', None)])
def test_netmask_prefix(mask, prefix):
    assert hccn_tool.netmask_prefix(mask) == prefix


# --- properties -------------------------------------------------------------------------------

addresses = st.tuples(*[st.integers(0, 255)] * 4).map(lambda parts: '.'.join(str(part) for part in parts))
prefixes = st.integers(0, 32)


@given(addresses, prefixes)
def test_ip_round_trip(address, prefix):
    netmask = hccn_tool.int_to_ip((0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF if prefix else 0)
    parsed = hccn_tool.parse_ip('ipaddr:%s\nnetmask:%s\n' % (address, netmask))
    assert parsed['address'] == (None if address == '0.0.0.0' else address)
    assert hccn_tool.netmask_prefix(netmask) == prefix
    assert hccn_tool.ip_to_int(hccn_tool.int_to_ip(hccn_tool.ip_to_int(address))) == hccn_tool.ip_to_int(address)


@given(st.sampled_from(hccn_tool.NET_HEALTH_STATUSES), st.sampled_from(['', ' ', '\t']), st.sampled_from(['\n', '\r\n', '']))
def test_net_health_survives_blanks(status, blank, end):
    assert hccn_tool.parse_net_health('net health status:%s%s%s' % (blank, status, end)) == status


@given(st.text(max_size=200))
def test_parsers_never_raise_anything_but_parse_errors(text):
    for parser in (hccn_tool.parse_ip, hccn_tool.parse_netdetect, hccn_tool.parse_gateway, hccn_tool.parse_link,
                   hccn_tool.parse_net_health, hccn_tool.parse_ping):
        try:
            parser(text)
        except HccnParseError:
            pass
    hccn_tool.parse_lldp_ifname(text)
    hccn_tool.parse_hccn_conf(text)


@given(st.integers(1, 50), st.integers(0, 50), st.lists(st.floats(0.001, 1000, allow_nan=False), max_size=5))
def test_ping_summary_is_read_as_printed(sent, received, times):
    received = min(sent, received)
    loss = 100.0 * (sent - received) / sent
    text = 'device 1 PING 10.1.0.1\n' + ''.join('recv seq=%d,time=%.6fms\n' % (index, value)
                                                for index, value in enumerate(times))
    text += '%d packets transmitted, %d received, %.2f%% packet loss\n' % (sent, received, loss)
    ping = hccn_tool.parse_ping(text)
    assert (ping['transmitted'], ping['received'], ping['loss_pct']) == (sent, received, round(loss, 2))
    assert len(ping['times_ms']) == len(times)


@given(st.dictionaries(st.integers(0, 15), st.fixed_dictionaries({'address': addresses, 'netmask': addresses}), max_size=8))
def test_conf_round_trip(npus):
    text = ''.join('%s_%d=%s\n' % (key, npu, value) for npu, values in npus.items() for key, value in values.items())
    assert hccn_tool.parse_hccn_conf(text) == npus
