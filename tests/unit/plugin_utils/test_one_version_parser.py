# -*- coding: utf-8 -*-
"""One parser reads every version a user sets: the wanted stack (and so the plan), the compatibility
gate and the sort filter accept and refuse the same strings, and a refusal names the variable the user
set and what a version looks like (issue 34: '25.0 rc1.1' passed the gate while the sort refused it,
and 'latest; rm -rf /' was blamed on preflight_compat_extra_rows)."""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.ascend_package import ascend_version_sort
from ansible_collections.npu.ascend.plugins.filter.ascend_plan import ascend_wanted_stack
from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import (
    VERSION_SHAPE, InvalidVersion, checked_version)
from ansible_collections.npu.ascend.plugins.module_utils.packages.compat_matrix import COMPAT_MATRIX
from ansible_collections.npu.ascend.plugins.plugin_utils import wanted_stack

BAD = ['25.0 rc1.1', 'latest; rm -rf /', 'latest', '25.0.rc1.1; reboot', '$(id)', '25..0', '.25.0', 'rc1']
GOOD = ['25.0.rc1.1', '8.2.RC1', '7.7.0.1.231', '6.0.0.SPC1', 'v7.3.0', '8.1.RC1.alpha002', ' 8.5.0 ']


def _gate(version):
    compatibility.check_stack({'driver': version}, COMPAT_MATRIX)


def _sort(version):
    ascend_version_sort([version])


def _plan(version):
    wanted_stack.wanted_stack({'hdk_driver_version': version})


def _accepted(reader, version):
    try:
        reader(version)
    except (ValueError, AnsibleFilterError):
        return False
    return True


@pytest.mark.parametrize('version', BAD)
def test_a_bad_version_is_refused_by_the_plan_the_gate_and_the_sort(version):
    with pytest.raises(InvalidVersion) as plan_error:
        _plan(version)
    message = str(plan_error.value)
    assert message.startswith('hdk_driver_version is %r, which is not a Huawei version: ' % version.strip())
    assert 'Fix: set hdk_driver_version to' in message and VERSION_SHAPE in message
    assert 'preflight_compat' not in message and 'extra_rows' not in message
    with pytest.raises(InvalidVersion, match=r'^stack\.driver is '):
        _gate(version)
    with pytest.raises(AnsibleFilterError, match='not a Huawei version|invalid Ascend version|empty'):
        _sort(version)


@pytest.mark.parametrize('version', GOOD)
def test_a_good_version_is_read_alike_everywhere(version):
    assert _accepted(_plan, version) and _accepted(_gate, version) and _accepted(_sort, version)


def test_the_filter_names_the_variable_and_adds_no_second_fix():
    with pytest.raises(AnsibleFilterError) as error:
        ascend_wanted_stack({'hdk_driver_version': 'latest; rm -rf /'})
    message = str(error.value)
    assert message.startswith("ascend_wanted_stack: hdk_driver_version is 'latest; rm -rf /', which is not")
    assert message.count('Fix:') == 1


@pytest.mark.parametrize('variable, stack_key', [
    ('hdk_firmware_version', 'firmware'), ('cann_version', 'cann'), ('container_runtime_version', 'docker_runtime'),
])
def test_each_role_variable_is_named(variable, stack_key):
    variables = {variable: '25.0 rc1.1', 'cann_nnal': True}
    with pytest.raises(InvalidVersion, match='^%s is ' % variable):
        wanted_stack.wanted_stack(variables)
    with pytest.raises(InvalidVersion, match=r'^preflight_stack\.%s is ' % stack_key):
        wanted_stack.wanted_stack({}, {stack_key: '25.0 rc1.1'}, 'preflight_stack')


def test_nnal_version_is_named_when_nnal_is_on():
    with pytest.raises(InvalidVersion, match='^cann_nnal_version is '):
        wanted_stack.wanted_stack({'cann_version': '8.2.RC1', 'cann_nnal': True, 'cann_nnal_version': 'x y'})


def test_a_value_that_is_not_text_is_named():
    with pytest.raises(InvalidVersion, match='^hdk_driver_version is .*a list, not a string'):
        checked_version(['25.0.rc1.1'], 'hdk_driver_version')


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='0123456789.rcRCabetlpSP _-;/$x', min_size=1, max_size=14))
def test_the_plan_the_gate_and_the_sort_agree_on_every_string(text):
    verdicts = set([_accepted(_plan, text), _accepted(_gate, text), _accepted(_sort, text)])
    # The plan ignores a version that is blank (not managed); the gate drops it from the stack too.
    if text.strip():
        assert len(verdicts) == 1, text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 99), min_size=1, max_size=4).map(lambda parts: '.'.join(map(str, parts))),
       st.sampled_from([' ', '\t', ' rc', '; rm -rf /']))
def test_blanks_and_shell_inside_a_version_are_refused(version, inside):
    text = version + inside + '1'
    assert not _accepted(_plan, text) and not _accepted(_gate, text) and not _accepted(_sort, text)
