# -*- coding: utf-8 -*-
"""Run npu_smi_info against a stand-in npu-smi that prints the real samples."""

import os
import stat

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner, tool_runner
from ansible_collections.npu.ascend.plugins.modules import npu_smi_info

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'samples', 'npu-smi')
SYNTHETIC = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'npu_smi_synthetic')

FAKE = '''#!/bin/bash
echo "$*" >> "%(log)s"
case "$*" in
  "info") cat "%(info)s"; exit %(rc)d;;
  "info -l") cat "%(list)s";;
  "info -t board -i "*) cat "%(board)s";;
  *) echo "unexpected $*"; exit 9;;
esac
'''


def make_fake(tmp_path, info, rc=0):
    binary = tmp_path / 'npu-smi'
    binary.write_text(FAKE % {
        'log': tmp_path / 'calls.log', 'info': info, 'rc': rc,
        'list': os.path.join(SAMPLES, '910B4_25.0.rc1.1_info-l.txt'),
        'board': os.path.join(SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt'),
    })
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return str(binary)


def calls(tmp_path):
    return (tmp_path / 'calls.log').read_text().splitlines()


def test_default_runs_only_npu_smi_info(tmp_path, run_module):
    binary = make_fake(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    result = run_module(npu_smi_info, {'binary_path': binary}, check_mode=True, diff=False)
    assert result['changed'] is False
    assert calls(tmp_path) == ['info']
    assert result['commands'] == [[binary, 'info']]
    smi = result['npu_smi']
    assert smi['driver_version'] == '25.0.rc1.1'
    assert len(smi['chips']) == 8 and smi['chips'][0]['name'] == '910B4'
    assert 'boards' not in smi and 'list' not in smi


def test_board_and_list_on_request(tmp_path, run_module):
    binary = make_fake(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    smi = run_module(npu_smi_info, {'binary_path': binary, 'board': True, 'list': True},
                     check_mode=True, diff=False)['npu_smi']
    assert calls(tmp_path) == ['info'] + ['info -t board -i %d' % npu for npu in range(8)] + ['info -l']
    assert smi['boards'][0]['firmware_version'] == '7.1.0.7.220'
    assert smi['boards'][3]['npu_id'] == 3
    assert smi['list']['total_count'] == 8


def test_dcmi_error_is_explained(tmp_path, run_module):
    binary = make_fake(tmp_path, os.path.join(SYNTHETIC, 'error_dcmi_-8005.txt'), rc=1)
    result = run_module(npu_smi_info, {'binary_path': binary}, check_mode=True, diff=False)
    assert result['failed']
    assert '-8005' in result['msg'] and 'rc=1' in result['msg']
    assert 'driver is not loaded' in result['msg'] and 'reboot' in result['msg']


def test_missing_binary(tmp_path, run_module, monkeypatch):
    monkeypatch.setattr(npu_smi_runner, 'NPU_SMI_DIRS', [str(tmp_path)])
    monkeypatch.setenv('PATH', str(tmp_path))
    result = run_module(npu_smi_info, {}, check_mode=True, diff=False)
    assert result['failed'] and 'npu-smi not found' in result['msg']


HANGING = '''#!/bin/bash
trap '' TERM
sleep 30
'''


def test_a_hung_npu_smi_is_stopped_at_the_timeout(tmp_path, run_module, monkeypatch):
    binary = tmp_path / 'npu-smi'
    binary.write_text(HANGING)
    binary.chmod(0o755)
    monkeypatch.setattr(tool_runner, 'KILL_AFTER_SECONDS', 1)
    result = run_module(npu_smi_info, {'binary_path': str(binary), 'timeout': 1}, check_mode=True, diff=False)
    assert result['failed']
    assert 'did not answer within 1 seconds' in result['msg'] and 'raise the timeout' in result['msg']
    assert result['commands'] == [[str(binary), 'info']]


def test_the_default_timeout_applies_when_none_is_given(tmp_path, run_module, monkeypatch):
    seen = []
    real = npu_smi_info.AnsibleModule.run_command
    monkeypatch.setattr(npu_smi_info.AnsibleModule, 'run_command',
                        lambda module, argv, **kwargs: seen.append(argv) or real(module, argv, **kwargs))
    binary = make_fake(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    run_module(npu_smi_info, {'binary_path': binary}, check_mode=True, diff=False)
    assert seen[0][:3] == ['timeout', '--kill-after=10', '120'] and seen[0][3:] == [binary, 'info']


@pytest.mark.parametrize('timeout', [0, -5])
def test_a_timeout_of_zero_or_less_is_refused(tmp_path, run_module, timeout):
    binary = make_fake(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    result = run_module(npu_smi_info, {'binary_path': binary, 'timeout': timeout}, check_mode=True, diff=False)
    assert result['failed'] and 'timeout must be a positive number of seconds, got %d' % timeout in result['msg']
    assert not (tmp_path / 'calls.log').exists()


@pytest.mark.parametrize('version', ['25.0.rc1.1;reboot', '$(id)', '`id`', '25.0\x1b[2J'])
def test_a_version_with_shell_characters_is_refused(tmp_path, run_module, version):
    with open(os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt')) as handle:
        text = handle.read()
    assert 'Version: 25.0.rc1.1' in text
    info = tmp_path / 'info.txt'
    info.write_text(text.replace('Version: 25.0.rc1.1', 'Version: ' + version, 1))
    binary = make_fake(tmp_path, str(info))
    result = run_module(npu_smi_info, {'binary_path': binary}, check_mode=True, diff=False)
    assert result['failed'] and 'is not a version' in result['msg'] and 'not a Huawei version' in result['msg']
    assert ascii(version.split(' ')[0])[1:-1][:5] in result['msg'] and '\x1b' not in result['msg']


def test_output_that_is_not_utf8_gives_a_message(tmp_path, run_module):
    info = tmp_path / 'info.txt'
    info.write_bytes(b'\xff\xfe garbage \x80\n')
    binary = make_fake(tmp_path, str(info))
    result = run_module(npu_smi_info, {'binary_path': binary}, check_mode=True, diff=False)
    assert result['failed'] and 'npu-smi' in result['msg']


def test_a_board_firmware_version_with_shell_characters_is_refused(tmp_path, run_module):
    with open(os.path.join(SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt')) as handle:
        text = handle.read()
    assert '7.1.0.7.220' in text
    board = tmp_path / 'board.txt'
    board.write_text(text.replace('7.1.0.7.220', '7.1.0.7.220;reboot', 1))
    binary = make_fake(tmp_path, os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt'))
    script = open(binary).read().replace(os.path.join(SAMPLES, '910-D801_23.0.5_info-t-board-i0.txt'), str(board))
    with open(binary, 'w') as handle:
        handle.write(script)
    result = run_module(npu_smi_info, {'binary_path': binary, 'board': True}, check_mode=True, diff=False)
    assert result['failed'] and 'firmware version that is not a version' in result['msg']
    assert "'7.1.0.7.220;reboot'" in result['msg']
