# -*- coding: utf-8 -*-
"""hccn_info and hccn against a stand-in hccn_tool that keeps its state in a JSON file and prints
Huawei's strings (tests/fixtures/samples/hccn)."""

import json
import stat
import sys

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner
from ansible_collections.npu.ascend.plugins.modules import hccn, hccn_info

FAKE = '''#!%(python)s
import json, sys
state_path, conf_path, log = %(state)r, %(conf)r, %(log)r
with open(log, "a") as handle:
    handle.write(" ".join(sys.argv[1:]) + "\\n")
state = json.load(open(state_path))
args = sys.argv[1:]
npu, command, mode, rest = args[1], args[2], args[3], args[4:]
values = state["npus"].setdefault(npu, {})
def save():
    json.dump(state, open(state_path, "w"))
    if state.get("save_conf", True):
        with open(conf_path, "w") as handle:
            for n, v in sorted(state["npus"].items()):
                for key in ("address", "netmask", "gateway", "netdetect"):
                    if v.get(key):
                        handle.write("%%s_%%s=%%s\\n" %% (key, n, v[key]))
if npu in state.get("fail", []):
    print("dsmi get device info failed. ret is -8005"); sys.exit(1)
if mode == "-g":
    if command == "-ip":
        print("ipaddr:%%s\\nnetmask:%%s" %% (values.get("address", "0.0.0.0"), values.get("netmask", "0.0.0.0")))
    elif command == "-gateway":
        print("default gateway:%%s, Iface:eth%%s" %% (values.get("gateway", "0.0.0.0"), npu))
    elif command == "-netdetect":
        print("netdetect addr: %%s" %% values.get("netdetect", "0.0.0.0"))
    elif command == "-link":
        print("link status: %%s" %% values.get("link", "UP"))
    elif command == "-net_health":
        state["health_reads"] = state.get("health_reads", 0) + 1
        json.dump(state, open(state_path, "w"))
        settling = state["health_reads"] <= state.get("settle_reads", 0)
        print("net health status: %%s" %% ("Init" if settling else values.get("health", "Success")))
    elif command == "-lldp":
        print("Port ID TLV\\n\\tIfname: 400GE1/1/%%s:1" %% npu)
    elif command == "-ping":
        lost = rest[1] in state.get("unreachable", [])
        print("device %%s PING %%s" %% (npu, rest[1]))
        if not lost:
            print("recv seq=0,time=0.100000ms\\nrecv seq=1,time=0.200000ms\\nrecv seq=2,time=0.300000ms")
        print("3 packets transmitted, %%d received, %%s packet loss" %% (0 if lost else 3, "100.00%%" if lost else "0.00%%"))
elif mode == "-s":
    if command == "-ip":
        if rest[1].startswith("192.168.1."):
            print("Ipaddr conflict."); sys.exit(1)
        if not state.get("ignore_sets"):
            values.update(address=rest[1], netmask=rest[3])
    elif command == "-gateway":
        values["gateway"] = rest[1]
    elif command == "-netdetect":
        values["netdetect"] = rest[1]
    save()
    print("Cmd executed successfully!")
'''


@pytest.fixture
def tool(tmp_path, monkeypatch):
    paths = {'state': str(tmp_path / 'state.json'), 'conf': str(tmp_path / 'hccn.conf'),
             'log': str(tmp_path / 'calls.log'), 'python': sys.executable}
    binary = tmp_path / 'hccn_tool'
    binary.write_text(FAKE % paths)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(hccn_tool_runner, 'HCCN_CONF', paths['conf'])

    class Tool(object):
        path = str(binary)

        def state(self, **state):
            state.setdefault('npus', {})
            with open(paths['state'], 'w') as handle:
                json.dump(state, handle)

        def calls(self):
            with open(paths['log']) as handle:
                return handle.read().splitlines()

        def conf(self, text):
            with open(paths['conf'], 'w') as handle:
                handle.write(text)
    tool = Tool()
    tool.state()
    return tool


def wanted(npus=(0, 1), base=10):
    return [{'npu': npu, 'address': '10.0.0.%d' % (base + npu), 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
             'netdetect': '10.0.0.1'} for npu in npus]


def test_info_reads_every_npu(tool, run_module):
    tool.state(npus={'0': {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
                           'netdetect': '10.0.0.1'}, '1': {'link': 'DOWN', 'health': 'Fault'}})
    result = run_module(hccn_info, {'binary_path': tool.path, 'npus': [0, 1]}, check_mode=True, diff=False)
    assert result['changed'] is False
    first, second = result['hccn']['npus']
    assert first == {'npu': 0, 'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1',
                     'netdetect': '10.0.0.1', 'link': 'UP', 'net_health': 'Success'}
    assert (second['address'], second['link'], second['net_health']) == (None, 'DOWN', 'Fault')
    assert result['hccn']['conf_readable'] is False
    assert len(result['commands']) == 10


def test_info_pings_and_lldp(tool, run_module):
    tool.state(unreachable=['10.0.0.21'])
    result = run_module(hccn_info, {'binary_path': tool.path, 'npus': [0], 'read': ['link', 'lldp'],
                                    'ping': [{'npu': 0, 'address': '10.0.0.20', 'peer': 'n2 NPU 0'},
                                             {'npu': 0, 'address': '10.0.0.21'}]},
                        check_mode=True, diff=False)
    assert result['hccn']['npus'] == [{'npu': 0, 'link': 'UP', 'lldp_port': '400GE1/1/0:1'}]
    good, lost = result['hccn']['pings']
    assert (good['received'], good['avg_ms'], good['peer']) == (3, 0.2, 'n2 NPU 0')
    assert (lost['received'], lost['loss_pct']) == (0, 100.0)


def test_info_tool_failure_is_a_message(tool, run_module):
    tool.state(fail=['1'])
    result = run_module(hccn_info, {'binary_path': tool.path, 'npus': [0, 1]}, check_mode=True, diff=False)
    assert result['failed'] and '-8005' in result['msg'] and 'fix:' in result['msg']


def test_info_missing_tool(tmp_path, run_module, monkeypatch):
    monkeypatch.setattr(hccn_tool_runner, 'HCCN_TOOL_PATHS', [str(tmp_path / 'nothing')])
    result = run_module(hccn_info, {'npus': [0], 'install_path': str(tmp_path)}, check_mode=True, diff=False)
    assert result['failed'] and 'hccn_tool not found' in result['msg'] and 'driver' in result['msg']


def test_info_timeout(tmp_path, run_module):
    binary = tmp_path / 'hccn_tool'
    binary.write_text('#!/bin/bash\nsleep 30\n')
    binary.chmod(0o755)
    result = run_module(hccn_info, {'binary_path': str(binary), 'npus': [0], 'timeout': 1}, check_mode=True, diff=False)
    assert result['failed'] and 'did not answer within 1 seconds' in result['msg']


def test_info_unknown_output_is_refused(tmp_path, run_module):
    binary = tmp_path / 'hccn_tool'
    binary.write_text('#!/bin/bash\necho "net health status: Splendid"\necho "link status: UP"\n'
                      'echo ipaddr:1.2.3.4; echo netmask:255.0.0.0; echo "netdetect addr: 1.2.3.5"; '
                      'echo "default gateway:1.2.3.1"\n')
    binary.chmod(0o755)
    result = run_module(hccn_info, {'binary_path': str(binary), 'npus': [0], 'read': ['net_health']},
                        check_mode=True, diff=False)
    assert result['failed'] and 'Splendid' in result['msg']


def test_set_only_what_differs_then_nothing(tool, run_module):
    tool.state(npus={'0': {'address': '10.0.0.10', 'netmask': '255.255.255.0', 'gateway': '10.0.0.1'}})
    check = run_module(hccn, {'binary_path': tool.path, 'npus': wanted()}, check_mode=True)
    assert check['changed'] is True
    assert check['changes'] == [{'npu': 0, 'set': ['netdetect']}, {'npu': 1, 'set': ['address', 'gateway', 'netdetect']}]
    assert not [call for call in tool.calls() if ' -s ' in call]
    real = run_module(hccn, {'binary_path': tool.path, 'npus': wanted()})
    assert real['changed'] is True and real['changes'] == check['changes']
    sets = [call for call in tool.calls() if ' -s ' in call]
    assert sets == ['-i 0 -netdetect -s address 10.0.0.1', '-i 1 -ip -s address 10.0.0.11 netmask 255.255.255.0',
                    '-i 1 -gateway -s gateway 10.0.0.1', '-i 1 -netdetect -s address 10.0.0.1']
    assert real['conf_saved'] is True
    assert 'address_1=10.0.0.11' in real['diff']['after'] and 'address_1=\n' in real['diff']['before']
    again = run_module(hccn, {'binary_path': tool.path, 'npus': wanted()})
    assert again['changed'] is False and again['changes'] == []


def test_refused_address_names_the_npu(tool, run_module):
    result = run_module(hccn, {'binary_path': tool.path,
                               'npus': [{'npu': 0, 'address': '192.168.1.5', 'netmask': '255.255.255.0'}]})
    assert result['failed'] and 'setting NPU 0 (address) was refused' in result['msg'] and 'Ipaddr conflict' in result['msg']


def test_value_not_held_after_set_fails(tool, run_module):
    tool.state(ignore_sets=True)
    result = run_module(hccn, {'binary_path': tool.path, 'npus': wanted(npus=(0,))})
    assert result['failed'] and 'does not hold its address' in result['msg']


def test_conf_not_saved_is_reported(tool, run_module, monkeypatch):
    warnings = []
    monkeypatch.setattr(hccn.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    tool.state(save_conf=False, npus={'0': {'address': '10.0.0.10', 'netmask': '255.255.255.0',
                                            'gateway': '10.0.0.1', 'netdetect': '10.0.0.1'}})
    tool.conf('address_0=10.0.0.99\nnetmask_0=255.255.255.0\n')
    result = run_module(hccn, {'binary_path': tool.path, 'npus': wanted(npus=(0,))})
    assert result['changed'] is False
    assert result['conf_saved'] is False and result['conf_differences'] == {'0': ['address', 'gateway', 'netdetect']}
    assert any('does not hold the live NPU 0 address, gateway, netdetect' in text for text in warnings)


def test_bad_wanted_values_fail_before_any_run(tool, run_module):
    result = run_module(hccn, {'binary_path': tool.path, 'npus': [{'npu': 0, 'address': '10.0.0.300',
                                                                   'netmask': '255.255.255.0'}]})
    assert result['failed'] and '10.0.0.300' in result['msg']
    assert result['commands'] == []


def test_info_waits_for_the_net_health_to_settle(tool, run_module):
    tool.state(settle_reads=1)
    result = run_module(hccn_info, {'binary_path': tool.path, 'npus': [0], 'read': ['link', 'net_health'],
                                    'wait_timeout': 5, 'wait_interval': 1}, check_mode=True, diff=False)
    assert result['hccn']['settled'] is True and result['hccn']['npus'][0]['net_health'] == 'Success'
    assert tool.calls().count('-i 0 -net_health -g') == 2


def test_info_that_does_not_settle_says_so(tool, run_module):
    tool.state(npus={'0': {'health': 'Receive timeout'}})
    result = run_module(hccn_info, {'binary_path': tool.path, 'npus': [0], 'read': ['link', 'net_health'],
                                    'wait_timeout': 2, 'wait_interval': 1}, check_mode=True, diff=False)
    assert result['hccn']['settled'] is False and 'failed' not in result
    assert result['hccn']['waited'] >= 1


def test_set_reports_the_sha256_of_the_conf_it_left(tool, run_module):
    import hashlib
    result = run_module(hccn, {'binary_path': tool.path, 'npus': wanted()})
    with open(hccn_tool_runner.HCCN_CONF, 'rb') as handle:
        assert result['conf_sha256'] == hashlib.sha256(handle.read()).hexdigest()
    assert run_module(hccn, {'binary_path': tool.path, 'npus': wanted()})['conf_sha256'] == result['conf_sha256']
