# -*- coding: utf-8 -*-
"""Atlas A3 in Kubernetes (issue 41): the SuperPoD membership npu-smi's spod-info says, the labels
it gives, the die pair a validation pod asks for and the verdict on it, and the fleet report's view
of 8 NPUs x 2 dies. Real A3 captures where public ones exist (docs/huawei-sources.md, "Atlas A3")."""

import os
import stat

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.filter.npu_whole_request import npu_whole_request
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue, npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.k8s import npu_labels, validation
from ansible_collections.npu.ascend.plugins.modules import npu_smi_info
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as fr

from conftest import SAMPLES_DIR


def _sample(name):
    with open(os.path.join(SAMPLES_DIR, 'npu-smi', name), encoding='utf-8') as handle:
        return handle.read()


A3_TABLE = _sample('Ascend910-A3_24.1.rc3.7_info.txt')
# The four tab-indented lines of a real A3 node's log (MindCluster fault-diag test data: server 40, die 1).
SPOD_REAL = ('\tSDID                           : 167837697\n\tSuper Pod Size                 : 384\n'
             '\tSuper Pod ID                   : 0\n\tServer Index                   : 40\n')
SPOD_REFUSED = 'This device does not support querying spod-info.\n'


def a3_facts(**extra):
    facts = {'chip_family': 'A3', 'npu_count': 16, 'product': 'Atlas 800T A3', 'arch': 'aarch64', 'installed': {}}
    facts.update(extra)
    return facts


def a3_chips():
    return npu_smi.parse_info(A3_TABLE)['chips']


# --- npu-smi info -t spod-info -------------------------------------------------------------------

def test_spod_info_of_a_real_a3_log():
    assert npu_smi.parse_spod_info(SPOD_REAL) == {
        'sdid': 167837697, 'super_pod_size': 384, 'super_pod_id': 0, 'server_index': 40}


@pytest.mark.parametrize('text', [SPOD_REFUSED, 'This device does not support querying spod_info.\n'])
def test_spod_info_refusal_is_no_membership(text):
    assert npu_smi.parse_spod_info(text) is None


@pytest.mark.parametrize('text', ['', 'Super Pod ID : 3\n', SPOD_REAL.replace(': 40', ': -1'),
                                  SPOD_REAL.replace(': 0\n', ': NA\n')])
def test_spod_info_without_the_four_numbers_is_refused(text):
    with pytest.raises(ValueError):
        npu_smi.parse_spod_info(text)


def test_spod_info_error_code_is_npu_smi_error():
    with pytest.raises(npu_smi.NpuSmiError):
        npu_smi.parse_spod_info('dcmi module initialize failed. ret is -8005\n')


@given(pod=st.integers(0, 2 ** 31), index=st.integers(0, 1023), size=st.integers(1, 10 ** 6),
       indent=st.sampled_from(['\t', '', '  ']), width=st.integers(0, 40))
def test_spod_info_reads_any_padding(pod, index, size, indent, width):
    values = (('SDID', index << 22), ('Super Pod Size', size), ('Super Pod ID', pod), ('Server Index', index))
    text = ''.join('%s%s : %s\n' % (indent, key.ljust(width), value) for key, value in values)
    assert npu_smi.parse_spod_info(text) == {'sdid': index << 22, 'super_pod_size': size, 'super_pod_id': pod,
                                             'server_index': index}


# --- the reader: one spod-info call per A3 node, none elsewhere ------------------------------------

FAKE = '''#!/bin/bash
echo "$*" >> "%(log)s"
case "$*" in
  "info") cat "%(info)s";;
  "info -t board -i "*) printf 'NPU ID : 0\\nBoard ID : 0x71\\n';;
  "info -t spod-info -i 0 -c 0") %(spod)s;;
  *) echo "unexpected $*"; exit 9;;
esac
'''


def fake_npu_smi(tmp_path, info, spod):
    binary = tmp_path / 'npu-smi'
    binary.write_text(FAKE % {'log': tmp_path / 'calls.log', 'info': info, 'spod': spod})
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return str(binary)


def test_a3_board_read_adds_one_spod_info(tmp_path, run_module):
    spod = tmp_path / 'spod.txt'
    spod.write_text(SPOD_REAL)
    binary = fake_npu_smi(tmp_path, os.path.join(SAMPLES_DIR, 'npu-smi', 'Ascend910-A3_24.1.rc3.7_info.txt'),
                          'cat "%s"' % spod)
    smi = run_module(npu_smi_info, {'binary_path': binary, 'board': True}, check_mode=True, diff=False)['npu_smi']
    calls = (tmp_path / 'calls.log').read_text().splitlines()
    assert calls.count('info -t spod-info -i 0 -c 0') == 1
    assert smi['super_pod'] == {'sdid': 167837697, 'super_pod_size': 384, 'super_pod_id': 0, 'server_index': 40}


@pytest.mark.parametrize('spod', ['echo "%s"' % SPOD_REFUSED.strip(), 'echo "not supported"; exit 1'])
def test_an_a3_outside_a_super_pod_is_read_and_not_refused(tmp_path, run_module, spod):
    binary = fake_npu_smi(tmp_path, os.path.join(SAMPLES_DIR, 'npu-smi', 'Ascend910-A3_24.1.rc3.7_info.txt'), spod)
    result = run_module(npu_smi_info, {'binary_path': binary, 'board': True}, check_mode=True, diff=False)
    assert not result.get('failed'), result
    assert result['npu_smi']['super_pod'] is None


def test_an_a2_node_gets_no_spod_info_call(tmp_path, run_module):
    binary = fake_npu_smi(tmp_path, os.path.join(SAMPLES_DIR, 'npu-smi', '910B4_25.0.rc1.1_info.txt'), 'exit 9')
    smi = run_module(npu_smi_info, {'binary_path': binary, 'board': True}, check_mode=True, diff=False)['npu_smi']
    assert not any('spod-info' in call for call in (tmp_path / 'calls.log').read_text().splitlines())
    assert smi['super_pod'] is None


# --- labels ---------------------------------------------------------------------------------------

def test_a_super_pod_member_is_labelled_from_spod_info():
    labels, notes = npu_labels.node_labels(a3_facts(), chips=a3_chips(),
                                           super_pod={'super_pod_id': 7, 'server_index': 1, 'sdid': 4194304})
    assert notes == []
    assert labels['accelerator'] == 'huawei-Ascend910'
    assert labels['accelerator-type'] == 'module-a3-16-super-pod'
    assert labels['huawei.com/topotree.superpodid'] == '7'
    assert labels['npu.ascend/super-pod-server-index'] == '1'
    assert labels['npu.ascend/npu-count'] == '16'
    assert npu_labels.resource_name('A3') == 'huawei.com/Ascend910'


def test_an_a3_server_outside_a_super_pod_is_module_a3_16_and_loses_the_super_pod_labels():
    labels = npu_labels.node_labels(a3_facts(), chips=a3_chips(), super_pod=None)[0]
    assert labels['accelerator-type'] == 'module-a3-16'
    # Present with None: a node that left its SuperPoD loses both labels (a merge patch removes them).
    assert 'huawei.com/topotree.superpodid' in labels and labels['huawei.com/topotree.superpodid'] is None
    assert labels['npu.ascend/super-pod-server-index'] is None


def test_an_explicit_accelerator_type_wins_over_membership():
    labels = npu_labels.node_labels(a3_facts(), chips=a3_chips(), accelerator_type_override='module-a3-8-super-pod',
                                    super_pod={'super_pod_id': 7, 'server_index': 1})[0]
    assert labels['accelerator-type'] == 'module-a3-8-super-pod'
    assert labels['huawei.com/topotree.superpodid'] == '7'


@pytest.mark.parametrize('family,count,product', [('910b', 8, 'Atlas 800I A2'), ('310p', 2, 'Atlas 300I Duo')])
def test_other_chips_never_carry_or_lose_the_super_pod_labels(family, count, product):
    labels = npu_labels.node_labels(a3_facts(chip_family=family, npu_count=count, product=product),
                                    super_pod={'super_pod_id': 7, 'server_index': 1})[0]
    assert 'huawei.com/topotree.superpodid' not in labels
    assert 'npu.ascend/super-pod-server-index' not in labels


@pytest.mark.parametrize('reading', [{}, {'super_pod_id': -1, 'server_index': 0}, {'super_pod_id': '7', 'server_index': 0},
                                     {'super_pod_id': True, 'server_index': 0}, 'pod 7'])
def test_a_reading_that_is_no_membership_labels_a_server(reading):
    labels = npu_labels.node_labels(a3_facts(), chips=a3_chips(), super_pod=reading)[0]
    assert labels['accelerator-type'] == 'module-a3-16'
    assert labels['huawei.com/topotree.superpodid'] is None


def test_super_pod_types_come_from_the_catalogue():
    assert hardware_catalogue.super_pod_accelerator_type('A3', 16) == 'module-a3-16-super-pod'
    assert hardware_catalogue.super_pod_accelerator_type('A3', 8) is None
    assert hardware_catalogue.super_pod_accelerator_type('910b', 8) is None
    assert set(hardware_catalogue.super_pod_chip_names()) == set(hardware_catalogue.chip_names_of('A3'))


# --- the die pair ---------------------------------------------------------------------------------

def test_the_whole_npu_request_is_a_die_pair_on_a3_only():
    assert npu_whole_request('A3') == {'npu_count': 2, 'dies_per_npu': 2}
    assert npu_whole_request('a3') == {'npu_count': 2, 'dies_per_npu': 2}
    assert npu_whole_request('910b') == {'npu_count': 1, 'dies_per_npu': 1}
    assert npu_whole_request('') == {'npu_count': 1, 'dies_per_npu': 1}
    # 2 is a request size Huawei documents for A3 and keeps an NPU whole.
    assert 2 in hardware_catalogue.chip_family_row('A3')['request_sizes']


def ls_lines(devices):
    names = ['davinci%d' % device for device in devices] + ['davinci_manager']
    return ''.join('crw-rw----    1 root root 236, %d Dec  2 21:49 /dev/%s\n' % (index, name)
                   for index, name in enumerate(names))


def container_table(phys):
    """The A3 sample's table cut to the dies a container got (npu-smi in a container lists only those)."""
    lines = A3_TABLE.splitlines(True)
    header_end = next(index for index, line in enumerate(lines) if line.startswith('+====')) + 1
    body = []
    for phy in phys:
        npu, chip = divmod(phy, 2)
        start = next(index for index in range(header_end, len(lines) - 1)
                     if lines[index].startswith('| ') and lines[index + 1].startswith('| ')
                     and lines[index].split('|')[1].split()[:1] == [str(npu)]
                     and lines[index + 1].split('|')[1].split()[:2] == [str(chip), str(phy)])
        body += lines[start:start + 2] + ['+' + '-' * 96 + '+\n']
    return ''.join(lines[:header_end] + body)


def test_both_dies_of_one_npu_pass():
    verdict = validation.judge_output(ls_lines([2, 3]) + container_table([2, 3]), 2, 2)
    assert verdict['passed'], verdict['problems']
    assert [(chip['npu_id'], chip['chip_id']) for chip in verdict['chips']] == [(1, 0), (1, 1)]


def test_dies_of_two_npus_fail_with_the_npus_named():
    verdict = validation.judge_output(ls_lines([1, 2]) + container_table([1, 2]), 2, 2)
    assert not verdict['passed']
    assert verdict['problems'] == ['the container got part of an NPU: NPU 0 (chip 1); NPU 1 (chip 0) of 2 dies '
                                   'each; a request of whole NPUs must get every die of each NPU together']


def test_one_die_alone_is_judged_as_before():
    assert validation.judge_output(ls_lines([5]) + container_table([5]), 1, 2)['passed']


@given(phys=st.lists(st.integers(0, 15), min_size=2, max_size=4, unique=True).filter(lambda items: len(items) % 2 == 0))
def test_a_request_of_whole_npus_passes_exactly_when_every_npu_is_whole(phys):
    phys = sorted(phys)
    verdict = validation.judge_output(ls_lines(phys) + container_table(phys), len(phys), 2)
    whole = all(phys.count(phy ^ 1) for phy in phys)
    assert verdict['passed'] is whole


# --- the fleet report -----------------------------------------------------------------------------

def report_entry(super_pod=None, labels=None):
    facts = {'chip_family': 'A3', 'product': 'Atlas 800T A3', 'arch': 'x86_64', 'npu_count': 16,
             'npu_smi_path': '/usr/local/sbin/npu-smi', 'installed': {}, 'reboot_pending': False}
    smi = npu_smi.parse_info(A3_TABLE)
    if super_pod is not None:
        smi['super_pod'] = super_pod
    node = {'metadata': {'name': 'a3-node', 'labels': labels or {}}, 'spec': {},
            'status': {'capacity': {'huawei.com/Ascend910': '16'}, 'allocatable': {'huawei.com/Ascend910': '16'}}}
    return fr.node_entry('a3-node', {'facts': facts, 'npu_smi': smi, 'npu_smi_error': None},
                         {'configured': True, 'node_name': 'a3-node', 'node': node}, {})


def test_the_report_shows_an_a3_as_8_npus_of_2_dies_in_its_super_pod():
    entry = report_entry(super_pod={'super_pod_id': 0, 'server_index': 40, 'super_pod_size': 384, 'sdid': 1})
    assert entry['hardware']['npus'] == 8 and entry['hardware']['dies_per_npu'] == 2
    assert entry['hardware']['super_pod'] == {'id': '0', 'server_index': '40'}
    view = fr._node_view(entry)
    assert view['chips'] == '16/16 dies OK (8 NPUs x 2 dies)'
    assert view['hardware'] == 'Atlas 800T A3 A3, SuperPoD 0 server 40'


def test_the_report_takes_the_super_pod_from_the_node_labels_when_npu_smi_did_not_say():
    entry = report_entry(labels={'huawei.com/topotree.superpodid': '7', 'npu.ascend/super-pod-server-index': '1'})
    assert entry['hardware']['super_pod'] == {'id': '7', 'server_index': '1'}
    assert report_entry()['hardware']['super_pod'] is None
