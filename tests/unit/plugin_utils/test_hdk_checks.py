# -*- coding: utf-8 -*-
"""The hdk role's health check of the NPU chips (plugin_utils/hdk_checks.py)."""

from ansible_collections.npu.ascend.plugins.plugin_utils.hdk_checks import health_problem

CHIP = {'npu_id': 0, 'chip_id': 0, 'name': '910B3', 'bus_id': '0000:C1:00.0', 'health': 'OK', 'healthy': True}


def test_healthy_chips_pass():
    assert health_problem({'chips': [CHIP, dict(CHIP, npu_id=1)], 'error': None}, 'a2-01') == ''


def test_each_sick_chip_is_named_with_its_health_then_the_fix():
    sick = [dict(CHIP, health='Critical', healthy=False), CHIP, dict(CHIP, npu_id=2, health='Warning', healthy=False)]
    message = health_problem({'chips': sick, 'error': None}, 'a2-01')
    assert message.startswith('a2-01: NPU 0 chip 0 (910B3, bus 0000:C1:00.0) health is Critical; '
                              'NPU 2 chip 0 (910B3, bus 0000:C1:00.0) health is Warning; Fix: see `npu-smi info -t health')
    assert 'NPU 1 ' not in message


def test_npu_smi_s_error_or_no_chip_is_the_message():
    assert health_problem({'chips': [], 'error': 'npu-smi is not installed. Fix: reinstall the driver'}, 'n1') == \
        'n1: npu-smi is not installed. Fix: reinstall the driver'
    assert health_problem({'chips': [], 'error': None}, 'n1') == 'n1: npu-smi lists no chip.'
