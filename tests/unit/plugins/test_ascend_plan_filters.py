# -*- coding: utf-8 -*-
"""The filters over the wanted stack and the planner: names and the messages they fail with."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_plan import (
    FilterModule, ascend_operator_kernels_installed, ascend_plan, ascend_plan_packages, ascend_plan_refusal,
    ascend_probe_current, ascend_wanted_stack)


def test_registered_names():
    assert sorted(FilterModule().filters()) == [
        'ascend_operator_kernels_installed', 'ascend_plan', 'ascend_plan_packages', 'ascend_plan_refusal',
        'ascend_probe_current', 'ascend_wanted_stack']


def test_a_node_plan_from_variables_and_probe():
    wanted = ascend_wanted_stack({'hdk_driver_version': '25.0.rc1.1', 'cann_version': '8.5.0'})
    assert wanted == {'driver': '25.0.rc1.1', 'toolkit': '8.5.0', 'ops': '8.5.0'}
    plan = ascend_plan({'installed': {'driver': {'version': '25.0.rc1.1'}}}, wanted)
    assert plan['order'] == ['toolkit', 'ops']
    assert ascend_plan_packages(plan, 'cann', '910b') == [{'component': 'toolkit', 'version': '8.5.0'},
                                                          {'component': 'ops', 'version': '8.5.0', 'chip': '910b'}]


@pytest.mark.parametrize('call, message', [
    (lambda: ascend_wanted_stack({'cann_version': 'latest'}), 'cann_version is .latest., which is not a Huawei version'),
    (lambda: ascend_wanted_stack('hdk_driver_version'), 'mapping'),
    (lambda: ascend_plan({}, {'driver': '1'}, reboot_policy='later'), 'reboot policy'),
    (lambda: ascend_plan_packages({'order': []}), 'expects a plan'),
    (lambda: ascend_plan_packages(ascend_plan({}, {}), 'exporter'), 'role'),
    (lambda: ascend_plan_refusal({'order': []}, 'hdk', 'n1'), 'expects a plan'),
    (lambda: ascend_plan_refusal(ascend_plan({}, {}), 'exporter', 'n1'), 'role'),
    (lambda: ascend_operator_kernels_installed(None, '910b'), 'installed software'),
])
def test_failures_are_filter_errors(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()


@pytest.mark.parametrize('probe, install_path, npu_smi, current', [
    (None, '/usr/local/Ascend', False, False),
    ({'install_path': '/usr/local/Ascend'}, '/usr/local/Ascend', False, True),
    ({'install_path': '/usr/local/Ascend'}, '/usr/local/Ascend', True, False),
    ({'install_path': '/usr/local/Ascend', 'npu_smi': None}, '/usr/local/Ascend', True, True),
    ({'install_path': '/opt/ascend', 'npu_smi': {}}, '/usr/local/Ascend', False, False),
    ('not a probe', '/usr/local/Ascend', False, False),
])
def test_a_probe_is_current_for_its_install_path_and_the_chips_when_asked(probe, install_path, npu_smi, current):
    assert ascend_probe_current(probe, install_path, npu_smi=npu_smi) is current
