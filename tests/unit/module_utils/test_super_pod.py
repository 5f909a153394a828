# -*- coding: utf-8 -*-
"""The A3 SuperPoD readings: npu-smi's spod-info, the SDID, the vNIC rule, hccn_tool's -vnic and -hccs_ping."""
import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware import super_pod

# A real A3 SuperPoD node's log (MindCluster fault-diagnosis test data, docs/huawei-sources.md).
REAL_SPOD = ('\tSDID                           : 167837697\n\tSuper Pod Size                 : 384\n'
             '\tSuper Pod ID                   : 0\n\tServer Index                   : 40\n')


def test_spod_info_of_a_real_node():
    assert super_pod.parse_spod_info(REAL_SPOD) == {'sdid': 167837697, 'size': 384, 'id': 0, 'server_index': 40}
    assert super_pod.decode_sdid(167837697) == (40, 0, 1, 1)
    assert super_pod.decode_sdid(169082890) == (40, 5, 0, 10)


@pytest.mark.parametrize('text', ['This device does not support querying spod-info.\n',
                                  'This device does not support querying spod_info.'])
def test_spod_info_unsupported_is_no_membership(text):
    assert super_pod.parse_spod_info(text) is None


@pytest.mark.parametrize('text', ['', 'garbage', REAL_SPOD.replace('384', 'NA'), REAL_SPOD + '\tServer Index : 41\n',
                                  REAL_SPOD.replace('\tSuper Pod ID                   : 0\n', ''),
                                  REAL_SPOD.replace('40', '-1')])
def test_spod_info_refuses_what_it_does_not_know(text):
    with pytest.raises(super_pod.SuperPodParseError):
        super_pod.parse_spod_info(text)


@given(st.integers(0, 1023), st.integers(0, 7), st.integers(0, 1), st.integers(0, 2048), st.integers(0, 1000),
       st.sampled_from(['\t', '', '  ']), st.integers(0, 40))
def test_spod_info_round_trip(server, npu, die, size, pod, indent, pad):
    sdid = super_pod.encode_sdid(server, npu, die, 2 * npu + die)
    text = ''.join('%s%s%s: %s\n' % (indent, key, ' ' * (pad + 1), value) for key, value in (
        ('SDID', sdid), ('Super Pod Size', size), ('Super Pod ID', pod), ('Server Index', server)))
    assert super_pod.parse_spod_info(text) == {'sdid': sdid, 'size': size, 'id': pod, 'server_index': server}
    assert super_pod.decode_sdid(sdid) == (server, npu, die, 2 * npu + die)


@given(st.integers(0, 47), st.integers(0, 15))
def test_vnic_rule_round_trips_through_hccn_tools_check(server, device):
    address = super_pod.vnic_address('super_pod_server', server, device)
    octets = [int(part) for part in address.split('.')]
    # hccn_tool's own check of a vNIC address: 192.<server>.<2 + die>.<199 - device>, die = device % 2.
    assert octets[0] == 192 and octets[1] == server and octets[2] - 2 == device % 2 and 199 - octets[3] == device
    assert not hccn_tool.ipv4_problem(address)


def test_vnic_rule_of_huaweis_example_and_of_no_rule():
    assert super_pod.vnic_address('super_pod_server', 0, 0) == '192.0.2.199'
    assert super_pod.vnic_address('super_pod_server', 0, 1) == '192.0.3.198'
    assert super_pod.vnic_address(None, 0, 1) is None
    assert super_pod.vnic_address('super_pod_server', None, 1) is None


@pytest.mark.parametrize('index, members', [(0, True), (47, True), (48, False), (None, False), (-1, False)])
def test_membership_follows_hccn_tools_bound(index, members):
    assert super_pod.is_member(index, 48) is members


def test_servers_in_a_pod():
    assert super_pod.servers_in(384, 8) == 48 and super_pod.servers_in(16, 8) == 2
    assert super_pod.servers_in(0, 8) is None and super_pod.servers_in(384, 0) is None


# --- hccn_tool -vnic -g and -hccs_ping ---------------------------------------------------------------------

def test_vnic_of_the_driver_source_format():
    text = 'vnic link status: UP\nvnic ipaddr: 192.0.2.199\nvnic netmask: 255.255.255.0\n'
    assert hccn_tool.parse_vnic(text) == {'vnic_link': 'UP', 'vnic_address': '192.0.2.199',
                                          'vnic_netmask': '255.255.255.0'}
    assert hccn_tool.parse_vnic(text.replace('UP', 'DOWN'))['vnic_link'] == 'DOWN'


@pytest.mark.parametrize('text', ['', 'vnic link status: UP', 'vnic link status: MAYBE\nvnic ipaddr: 192.0.2.199\n'
                                  'vnic netmask: 255.255.255.0', 'vnic link status: UP\nvnic ipaddr: *.*.*.*\n'
                                  'vnic netmask: 255.255.255.0', 'vnic link status: UP\nvnic ipaddr: 192.0.2.199\n'
                                  'vnic netmask: 255.0.255.0'])
def test_vnic_refuses_what_it_does_not_know(text):
    with pytest.raises(hccn_tool.HccnParseError):
        hccn_tool.parse_vnic(text)


# The driver source's format (tool_cmd.c, tool_ping_printf): no public capture; the numbers are invented.
HCCS_PING = ('device 0 PING 192.1.2.199\n\nThis pkt ping success!\nrecv seq 0, time = 12.345us, L1 plane check result '
             '= 0x0\n\nThis pkt ping success!\nrecv seq 1, time = 11.001us, L1 plane check result = 0x0\n\n'
             'This pkt check recv msg fail!\n3 packets transmitted, 2 received, 33.33% packets loss\n'
             'max time 12.345us\nmin time 11.001us\naverage time 11.673us\nTP95 time 12.345us\n')


def test_hccs_ping_of_the_driver_source_format():
    result = hccn_tool.parse_hccs_ping(HCCS_PING)
    assert (result['npu'], result['target'], result['transmitted'], result['received']) == (0, '192.1.2.199', 3, 2)
    assert result['times_us'] == [12.345, 11.001] and result['max_us'] == 12.345 and result['loss_pct'] == 33.33


@pytest.mark.parametrize('text', ['', 'device 0 PING 192.1.2.199\n', HCCS_PING.replace('2 received', '4 received'),
                                  HCCS_PING + HCCS_PING])
def test_hccs_ping_refuses_what_it_does_not_know(text):
    with pytest.raises(hccn_tool.HccnParseError):
        hccn_tool.parse_hccs_ping(text)


@given(st.integers(1, 50), st.data())
def test_hccs_ping_counts_its_replies(count, data):
    received = data.draw(st.integers(0, count))
    times = data.draw(st.lists(st.floats(0.001, 99999, allow_nan=False).map(lambda value: round(value, 3)),
                               min_size=received, max_size=received))
    lines = ['device 7 PING 192.3.3.192', '']
    for seq, time in enumerate(times):
        lines += ['This pkt ping success!', 'recv seq %d, time = %.3fus, L1 plane check result = 0x0' % (seq, time), '']
    lines += ['This pkt send fail!'] * (count - received)
    lines.append('%d packets transmitted, %d received, %.2f%% packets loss'
                 % (count, received, 100.0 * (count - received) / count))
    result = hccn_tool.parse_hccs_ping('\n'.join(lines))
    assert result['received'] == received and result['times_us'] == times


@pytest.mark.parametrize('text, expected', [
    ('The command is not supported on this product.\n', True), ('The command is not supported on this product', True),
    ('The device is occupied. Please try again later.', False), ('', False)])
def test_not_supported(text, expected):
    assert hccn_tool.says_not_supported(text) is expected
