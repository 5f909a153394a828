"""The validation pod's verdict from its own output: real npu-smi samples after `ls -l` lines as
busybox and coreutils print them."""
import os

import pytest
from hypothesis import given, strategies as st

from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.npu_validation_verdict import npu_validation_verdict
from ansible_collections.npu.ascend.plugins.module_utils.k8s import validation

from conftest import SAMPLES_DIR


def sample(name):
    with open(os.path.join(SAMPLES_DIR, 'npu-smi', name)) as handle:
        return handle.read()


A2_TABLE = sample('910B4_25.0.rc1.1_info.txt')
DUO_TABLE = sample('310P3_25.5.2_info.txt')


def ls_lines(devices, manager=True):
    """`ls -l /dev/davinci*` as coreutils prints it (busybox's differs only in spacing)."""
    names = ['davinci%d' % device for device in sorted(devices)] + (['davinci_manager'] if manager else [])
    return ''.join('crw-rw----    1 root     root      236,   %d Dec  2 21:49 /dev/%s\n' % (index, name)
                   for index, name in enumerate(names))


def test_one_allocated_npu_and_a_working_npu_smi_pass():
    verdict = validation.judge_output(ls_lines([3]) + A2_TABLE, 1)
    assert verdict['passed'] is True
    assert verdict['problems'] == []
    assert verdict['devices'] == [3]
    assert len(verdict['chips']) == 8 and {chip['health'] for chip in verdict['chips']} == {'OK'}


def test_a_duo_card_table_is_read_too():
    verdict = validation.judge_output(ls_lines([0, 1]) + DUO_TABLE, 2)
    assert verdict['passed'] is True, verdict['problems']


def test_a_container_that_saw_every_npu_of_the_node_fails():
    verdict = validation.judge_output(ls_lines(range(8)) + A2_TABLE, 1)
    assert verdict['passed'] is False
    assert verdict['problems'] == ['the container saw 8 NPU device(s) (/dev/davinci0, /dev/davinci1, /dev/davinci2, '
                                   '/dev/davinci3, /dev/davinci4, /dev/davinci5, /dev/davinci6, /dev/davinci7), '
                                   'not the 1 it was allocated']


def test_a_container_without_npu_devices_fails_with_what_ls_said():
    output = "ls: /dev/davinci*: No such file or directory\n"
    verdict = validation.judge_output(output, 1)
    assert verdict['passed'] is False
    assert verdict['problems'] == ['the container saw 0 NPU device(s) (none), not the 1 it was allocated',
                                   'the container has no /dev/davinci_manager',
                                   'npu-smi info printed no chip table in the container']


def test_a_missing_management_device_fails():
    verdict = validation.judge_output(ls_lines([0], manager=False) + A2_TABLE, 1)
    assert verdict['problems'] == ['the container has no /dev/davinci_manager']


def test_an_npu_smi_failure_is_quoted():
    output = ls_lines([0]) + 'dcmi module initialize failed. ret is -8005\n'
    verdict = validation.judge_output(output, 1)
    assert verdict['problems'] == ['npu-smi info failed in the container: dcmi module initialize failed. '
                                   'ret is -8005 (error code -8005)']


def test_an_unhealthy_chip_in_the_container_fails():
    table = A2_TABLE.replace('| 0     910B4               | OK            |',
                             '| 0     910B4               | Critical      |', 1)
    assert table != A2_TABLE
    verdict = validation.judge_output(ls_lines([0]) + table, 1)
    assert verdict['problems'] == ['npu-smi info in the container lists unhealthy chips (NPU 0 chip 0: Critical)']


def test_a_davinci_name_inside_a_longer_path_is_not_a_device():
    output = ls_lines([0]) + '-rw-r--r-- 1 root root 0 Dec  2 21:49 /tmp/dev/davinci5\n' + A2_TABLE
    assert validation.judge_output(output, 1)['devices'] == [0]


@given(devices=st.sets(st.integers(min_value=0, max_value=15), max_size=16),
       npu_count=st.integers(min_value=1, max_value=16))
def test_it_passes_exactly_when_the_container_saw_as_many_devices_as_requested(devices, npu_count):
    verdict = validation.judge_output(ls_lines(devices) + A2_TABLE, npu_count)
    assert verdict['devices'] == sorted(devices)
    assert verdict['passed'] is (len(devices) == npu_count)


@pytest.mark.parametrize('npu_count', [0, -1, True, '1'])
def test_a_count_that_is_not_a_positive_integer_is_refused(npu_count):
    with pytest.raises(ValueError):
        validation.judge_output('', npu_count)


def test_the_filter_takes_the_log_lines_as_kubernetes_core_returns_them():
    lines = (ls_lines([1]) + A2_TABLE).splitlines()
    assert npu_validation_verdict(lines, '1')['passed'] is True


@pytest.mark.parametrize('output, npu_count', [({'log': ''}, 1), ('', 0), ('', 'two')])
def test_the_filter_refuses_bad_input_with_a_message(output, npu_count):
    with pytest.raises(AnsibleFilterError, match='npu_validation_verdict'):
        npu_validation_verdict(output, npu_count)
