# -*- coding: utf-8 -*-
"""Issue 30, finding 8 (part): npu-smi ``nan``/``inf`` values.

``float('nan')`` and ``float('inf')`` accept them, so they passed through as NaN/Infinity, which the
JSON the modules print carries as the non-standard tokens ``NaN``/``Infinity`` that strict JSON consumers
reject. They are now "not a number": None, like ``NA`` and ``-``. The parser keeps no raw text of
numbers elsewhere, so there is none to keep here either.
"""

import json
import math
import os
import stat

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
from ansible_collections.npu.ascend.plugins.modules import npu_smi_info

SAMPLES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'samples', 'npu-smi')
NOT_NUMBERS = ['nan', 'NaN', '-nan', 'inf', '-inf', 'Infinity', '+Infinity', '1e999']


def _info(power='87.2', temp='33', aicore='0', hbm='2654 / 32768'):
    """The 910B4 sample with the first chip's values replaced (each keeps its column width)."""
    with open(os.path.join(SAMPLES, '910B4_25.0.rc1.1_info.txt')) as handle:
        lines = handle.read().splitlines()
    lines[6] = lines[6].replace('87.2        33     ', '%-11s %-6s' % (power, temp), 1)
    lines[7] = lines[7].replace('| 0           0    / 0          2654 / 32768 ',
                                '| %-11s 0    / 0          %-12s ' % (aicore, hbm), 1)
    return '\n'.join(lines) + '\n'


@pytest.mark.parametrize('text', NOT_NUMBERS)
def test_nan_and_inf_are_not_numbers(text):
    chip = npu_smi.parse_info(_info(power=text, temp=text, aicore=text, hbm='%s / 32768' % text))['chips'][0]
    assert chip['power_w'] is None and chip['temp_c'] is None and chip['aicore_pct'] is None
    assert chip['hbm_used_mb'] is None and chip['hbm_total_mb'] == 32768
    json.dumps(chip, allow_nan=False)


def test_the_other_chips_keep_their_numbers():
    chips = npu_smi.parse_info(_info(power='nan'))['chips']
    assert chips[0]['power_w'] is None and chips[1]['power_w'] == 82.7 and chips[0]['temp_c'] == 33


@given(st.floats(allow_nan=True, allow_infinity=True).map(repr) | st.sampled_from(NOT_NUMBERS))
def test_every_parsed_number_is_finite(text):
    number = npu_smi._number(text, 'Power(W)')
    assert number is None or math.isfinite(number)


def test_npu_smi_info_prints_strict_json(tmp_path, run_module):
    info = tmp_path / 'info.txt'
    info.write_text(_info(power='nan', temp='inf'))
    binary = tmp_path / 'npu-smi'
    binary.write_text('#!/bin/sh\ncat "%s"\n' % info)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    result = run_module(npu_smi_info, {'binary_path': str(binary)}, check_mode=True, diff=False)
    chip = result['npu_smi']['chips'][0]
    assert chip['power_w'] is None and chip['temp_c'] is None
    json.dumps(result, allow_nan=False)
