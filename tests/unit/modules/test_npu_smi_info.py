# -*- coding: utf-8 -*-
"""Run npu_smi_info against a stand-in npu-smi that prints the real samples."""

import os
import stat

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
    monkeypatch.setattr(npu_smi_info, 'NPU_SMI_DIRS', [str(tmp_path)])
    monkeypatch.setenv('PATH', str(tmp_path))
    result = run_module(npu_smi_info, {}, check_mode=True, diff=False)
    assert result['failed'] and 'npu-smi not found' in result['msg']
