# -*- coding: utf-8 -*-
"""The health gate's decisions (plugin_utils/health_gate.py) and the filter that exposes them."""

import json

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.health_gate_state import FilterModule, health_gate_state
from ansible_collections.npu.ascend.plugins.plugin_utils.health_gate import gate_state

CHIP = {'npu_id': 1, 'chip_id': 0, 'bus_id': '0000:01:00.0', 'health': 'OK', 'healthy': True}
SICK = {'npu_id': 2, 'chip_id': 0, 'bus_id': '0000:02:00.0', 'health': 'Critical', 'healthy': False}
OPTIONS = {'host': 'npu-01', 'install_path': '/usr/local/Ascend', 'node_name': 'node-01', 'resource_name': '',
           'timeout_seconds': 10}


def probe(chips=(CHIP, dict(CHIP, npu_id=2)), **extra):
    result = {'installed': {'driver': {'version': '25.0.rc1.1'}, 'firmware': {'version': '7.7.0.1.231'},
                            'toolkit': None},
              'reboot_pending': False, 'npu_smi_path': '/usr/local/sbin/npu-smi', 'npu_smi_error': None,
              'npu_smi': {'chips': list(chips)}}
    result.update(extra)
    return result


def node_read(labels=None, allocatable=None):
    return {'resources': [{'metadata': {'name': 'node-01', 'labels': labels or {}},
                           'status': {'allocatable': allocatable or {}}}]}


ACCELERATED = {'accelerator': 'huawei-Ascend910'}


def test_a_healthy_node_at_its_versions_passes_and_publishes_its_chips_and_versions():
    state = gate_state(probe(), {'driver': '25.0.rc1.1'}, OPTIONS)
    assert (state['versions'], state['kernel'], state['chips'], state['kubernetes']) == (None, None, None, None)
    assert state['result'] == {'chips': 2, 'versions': {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'}}


def test_pending_reboot_and_wrong_versions_in_one_message():
    state = gate_state(probe(reboot_pending=True), {'driver': '25.2.0', 'firmware': '7.7.0.1.231'}, OPTIONS)
    assert state['versions'] == (
        'npu-01: health gate: a reboot is still pending for the new firmware or driver (reboot the node, then run '
        'again); driver 25.0.rc1.1 (wanted 25.2.0); Fix: read the installer log '
        '/var/log/ascend_seclog/ascend_install.log on the node, then run the playbook again.')
    only_reboot = gate_state(probe(reboot_pending=True), {}, OPTIONS)['versions']
    assert 'reboot is still pending' in only_reboot and 'wanted' not in only_reboot


def test_a_kernel_without_the_driver_modules_is_named_with_its_fix():
    modules = {'running': {'release': '6.1.0-9', 'present': False}, 'next': {}, 'dkms': {}}
    message = gate_state(probe(kernel_modules=modules), {}, OPTIONS)['kernel']
    assert message.startswith('npu-01: health gate: ') and '6.1.0-9' in message and '. Fix: ' in message


@pytest.mark.parametrize('extra, expected', [
    ({'npu_smi_error': 'npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005.', 'npu_smi': None},
     'npu-01: health gate: npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005. Fix: check the '
     'driver (`lsmod | grep drv_`, dmesg), reboot if the driver was just replaced.'),
    ({'npu_smi_error': 'npu-smi timed out after 5 s. Fix: reboot.', 'npu_smi': None},
     'npu-01: health gate: npu-smi timed out after 5 s. Fix: reboot.'),
    ({'npu_smi_path': None, 'npu_smi': None},
     'npu-01: health gate: npu-smi is not installed. Fix: install the driver (npu.ascend.hdk).'),
    ({'npu_smi': {'chips': []}},
     'npu-01: health gate: npu-smi lists no chip. Fix: check the cards on PCI (lspci -d 19e5:) and the driver.'),
    ({'npu_smi': {'chips': [CHIP, SICK]}},
     'npu-01: health gate: NPU 2 chip 0 (bus 0000:02:00.0) health is Critical; Fix: see `npu-smi info -t health '
     '-i <npu> -c <chip>`, reboot or reseat the card, then run again.'),
])
def test_every_npu_smi_failure_is_one_message(extra, expected):
    assert gate_state(probe(**extra), {}, OPTIONS)['chips'] == expected


def test_the_resource_comes_from_the_accelerator_label_or_the_option():
    state = gate_state(probe(), {}, OPTIONS, [node_read(ACCELERATED)])['kubernetes']
    assert (state['resource'], state['retries'], state['delay']) == ('huawei.com/Ascend910', 4, 3)
    assert state['problem'] is None and state['expected'] == {'huawei.com/Ascend910': 2}
    named = gate_state(probe(), {}, dict(OPTIONS, resource_name='x.io/npu'), [node_read()])['kubernetes']
    assert named['resource'] == 'x.io/npu'


def test_no_accelerator_label_is_a_problem_whatever_was_read():
    for reads in ([node_read()], [{'resources': []}], [node_read({'accelerator': 'nvidia-a100'}), {'skipped': True}]):
        state = gate_state(probe(), {}, OPTIONS, reads)['kubernetes']
        assert state['problem'] == (
            'npu-01: health gate: node node-01 has no Huawei accelerator label, so its NPU resource is unknown. Fix: '
            'run npu.ascend.k8s_node (playbooks/kubernetes.yml) or set health_gate_resource_name.')


def test_counts_are_judged_only_after_the_wait_read_again():
    first = node_read(ACCELERATED, {'huawei.com/Ascend910': '0'})
    # A dry run skips the wait: nothing to judge.
    assert gate_state(probe(), {}, OPTIONS, [first, {'skipped': True}])['kubernetes']['problem'] is None
    settled = gate_state(probe(), {}, OPTIONS, [first, node_read(ACCELERATED, {'huawei.com/Ascend910': '2'})])
    assert settled['kubernetes']['settled'] and settled['kubernetes']['problem'] is None
    short = gate_state(probe(), {}, OPTIONS, [first, node_read(ACCELERATED, {'huawei.com/Ascend910': '1'})])
    assert not short['kubernetes']['settled']
    assert short['kubernetes']['problem'] == (
        'npu-01: health gate: node node-01 offers 1 huawei.com/Ascend910 after 10 s, its npu-smi shows 2 healthy '
        'chips. Fix: check the device plugin pod on the node and its log (/var/log/mindx-dl/devicePlugin/'
        'devicePlugin.log: "failed to get card list" means the driver is not usable from it), and that the node '
        'is not labelled npu.ascend/device-plugin=paused.')
    gone = gate_state(probe(), {}, OPTIONS, [first, {'resources': []}])['kubernetes']
    assert not gone['settled'] and 'offers 0 huawei.com/Ascend910' in gone['problem']


def test_a_split_node_is_expected_to_offer_its_vnpus_beside_its_whole_chips():
    labels = dict(ACCELERATED, **{'npu.ascend/vnpu-Ascend910-4c': '2', 'npu.ascend/vnpu-chips': '1'})
    offered = {'huawei.com/Ascend910': '1', 'huawei.com/Ascend910-4c': '0'}
    state = gate_state(probe(), {}, OPTIONS, [node_read(labels), node_read(labels, offered)])['kubernetes']
    assert state['expected'] == {'huawei.com/Ascend910-4c': 2, 'huawei.com/Ascend910': 1}
    assert ('offers %s after 10 s, expected %s from its 2 healthy chips and its vNPU layout (labels npu.ascend/vnpu-*)'
            % (json.dumps(state['offered']), json.dumps(state['expected']))) in state['problem']
    assert 'run npu.ascend.vnpu again.' in state['problem']


def test_filter_errors_name_the_fix():
    assert FilterModule().filters() == {'health_gate_state': health_gate_state}
    with pytest.raises(AnsibleFilterError, match='expects what npu.ascend.ascend_facts returned'):
        health_gate_state('text', {})
    with pytest.raises(AnsibleFilterError, match='is not a count.*npu.ascend.vnpu'):
        health_gate_state(probe(), {}, OPTIONS, [node_read(ACCELERATED),
                                                 node_read(dict(ACCELERATED, **{'npu.ascend/vnpu-chips': 'x'}))])
    with pytest.raises(AnsibleFilterError, match='node_reads must be a list'):
        health_gate_state(probe(), {}, OPTIONS, {})


_chips = st.lists(st.fixed_dictionaries({'npu_id': st.integers(0, 15), 'chip_id': st.integers(0, 1),
                                         'bus_id': st.text(max_size=12), 'health': st.sampled_from(['OK', 'Warning',
                                                                                                    'Critical']),
                                         'healthy': st.booleans()}), max_size=8)
_read = st.one_of(st.just({'skipped': True}), st.just({'resources': []}),
                  st.builds(node_read, st.dictionaries(st.sampled_from(['accelerator', 'npu.ascend/vnpu-Ascend910-4c',
                                                                       'other']), st.sampled_from(['huawei-Ascend910',
                                                                                                   '1', '3', 'x'])),
                            st.dictionaries(st.sampled_from(['huawei.com/Ascend910', 'huawei.com/Ascend910-4c']),
                                            st.sampled_from(['0', '1', '2', '500m']))))


@settings(max_examples=200, deadline=None)
@given(_chips, st.lists(_read, max_size=3), st.booleans())
def test_any_node_is_passed_or_named_with_a_fix(chips, reads, pending):
    try:
        state = gate_state(probe(chips, reboot_pending=pending), {'driver': '25.0.rc1.1'}, OPTIONS, reads)
    except ValueError as exc:
        assert 'is not a count' in str(exc)
        return
    sick = [chip for chip in chips if not chip['healthy']]
    assert (state['chips'] is None) == (bool(chips) and not sick)
    assert (state['versions'] is None) == (not pending)
    for message in (state['versions'], state['chips'], state['kubernetes']['problem']):
        assert message is None or (message.startswith('npu-01: health gate: ') and 'Fix: ' in message)
    kubernetes = state['kubernetes']
    if kubernetes['settled']:
        assert kubernetes['offered'] == kubernetes['expected'] and kubernetes['resource']
    assert state['result']['chips'] == len(chips)
