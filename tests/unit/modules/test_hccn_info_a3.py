# -*- coding: utf-8 -*-
"""hccn_info on an A3: the dies' vNICs, HCCS pings (and the product's refusal of them), the SuperPoD from npu-smi."""

import stat
import sys

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner
from ansible_collections.npu.ascend.plugins.modules import hccn_info

# Stand-ins printing the driver source's strings (docs/hccn.md, "A3"): -vnic -g, -hccs_ping, and npu-smi's spod-info.
HCCN_TOOL = '''#!%(python)s
import sys
args = sys.argv[1:]
die, command = int(args[1]), args[2]
if command == "-vnic":
    print("vnic link status: %%s\\nvnic ipaddr: 192.3.%%d.%%d\\nvnic netmask: 255.255.255.0"
          %% ("DOWN" if die == 5 else "UP", 2 + die %% 2, 199 - die))
elif command == "-hccs_ping":
    if %(unsupported)r:
        print("The command is not supported on this product."); sys.exit(1)
    lost = die == 5
    print("device %%d PING %%s\\n" %% (die, args[-1]))
    for seq in range(0 if lost else 3):
        print("This pkt ping success!\\nrecv seq %%d, time = 10.%%d00us, L1 plane check result = 0x0\\n" %% (seq, seq))
    print("3 packets transmitted, %%d received, %%s packets loss" %% (0 if lost else 3, "100.00%%" if lost else "0.00%%"))
else:
    print("link status: UP")
'''
NPU_SMI = '''#!/bin/sh
%(body)s
'''


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def tools(tmp_path, monkeypatch):
    monkeypatch.setattr(hccn_tool_runner, 'HCCN_CONF', str(tmp_path / 'hccn.conf'))

    def make(unsupported=False, spod='printf "\\tSDID : 12582912\\n\\tSuper Pod Size : 384\\n\\tSuper Pod ID : 2\\n'
                                     '\\tServer Index : 3\\n"'):
        return (executable(tmp_path / 'hccn_tool', HCCN_TOOL % {'python': sys.executable, 'unsupported': unsupported}),
                executable(tmp_path / 'npu-smi', NPU_SMI % {'body': spod}))
    return make


def test_vnic_hccs_pings_and_the_super_pod(tools, run_module):
    hccn_tool, npu_smi = tools()
    result = run_module(hccn_info, {'binary_path': hccn_tool, 'npus': [4, 5], 'read': ['link', 'vnic'],
                                    'hccs_ping': [{'npu': 4, 'address': '192.1.2.195', 'peer': 'p2 die 4'},
                                                  {'npu': 5, 'address': '192.1.3.194'}],
                                    'super_pod': {'npu_id': 2, 'chip_id': 0, 'npu_smi_path': npu_smi}},
                        check_mode=True, diff=False)
    assert result['hccn']['npus'] == [
        {'npu': 4, 'link': 'UP', 'vnic_link': 'UP', 'vnic_address': '192.3.2.195', 'vnic_netmask': '255.255.255.0'},
        {'npu': 5, 'link': 'UP', 'vnic_link': 'DOWN', 'vnic_address': '192.3.3.194', 'vnic_netmask': '255.255.255.0'}]
    good, lost = result['hccn']['hccs_pings']
    assert (good['received'], good['supported'], good['peer'], good['times_us']) == (3, True, 'p2 die 4',
                                                                                     [10.0, 10.1, 10.2])
    assert (lost['received'], lost['loss_pct'], lost['error']) == (0, 100.0, None)
    assert result['hccn']['super_pod'] == {'sdid': 12582912, 'size': 384, 'id': 2, 'server_index': 3}
    assert [npu_smi, 'info', '-t', 'spod-info', '-i', '2', '-c', '0'] in result['commands']


def test_a_product_without_hccs_ping_is_not_a_failure(tools, run_module):
    hccn_tool, npu_smi = tools(unsupported=True, spod='echo "This device does not support querying spod-info."')
    result = run_module(hccn_info, {'binary_path': hccn_tool, 'npus': [0], 'read': ['link'],
                                    'hccs_ping': [{'npu': 0, 'address': '192.1.2.199'}],
                                    'super_pod': {'npu_id': 0, 'npu_smi_path': npu_smi}}, check_mode=True, diff=False)
    ping = result['hccn']['hccs_pings'][0]
    assert (ping['supported'], ping['error'], ping['summary']) == (False, None,
                                                                   'NPU 0 -> 192.1.2.199 (HCCS): not supported on this product')
    assert result['hccn']['super_pod'] is None


def test_an_unreadable_spod_info_fails_naming_the_command(tools, run_module):
    hccn_tool, npu_smi = tools(spod='echo "Super Pod ID : banana"')
    result = run_module(hccn_info, {'binary_path': hccn_tool, 'npus': [0], 'read': ['link'],
                                    'super_pod': {'npu_id': 0, 'npu_smi_path': npu_smi}}, check_mode=True, diff=False)
    assert result['failed'] and 'npu-smi info -t spod-info -i 0 -c 0' in result['msg']
    assert 'fix:' in result['msg'] and 'Traceback' not in result['msg']
