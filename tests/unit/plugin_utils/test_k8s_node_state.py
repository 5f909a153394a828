# -*- coding: utf-8 -*-
"""What the k8s_node role decides about a host's Node, how the play's one write ended for it, and which labels
its uninstall removes (plugin_utils/k8s_node_state.py and the filters that expose it)."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.k8s_node_state import FilterModule
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys
from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_state import (
    k8s_node_outcome, k8s_node_state, labels_to_remove, node_refusal)

OPTIONS = {'host': 'a2-01', 'profile': 'huawei', 'node_name': None, 'label_keys': label_keys(None), 'accelerator_type': '',
           'worker_selector': True, 'noded': False, 'runtime_handler': 'ascend', 'extra_labels': {},
           'taint_until_validated': True, 'wait_seconds': 60, 'kubeconfig': None, 'context': None}


def options(**changes):
    result = dict(OPTIONS)
    result.update(changes)
    return result


def probe(chip_family='910b', npu_smi_error=None, reboot_pending=False, **npu_smi):
    npu_smi = npu_smi or {'boards': [{'npu_id': 0, 'board_id': '0x33'}],
                          'chips': [{'npu_id': index, 'chip_id': 0, 'name': '910B4'} for index in range(8)]}
    return {'chip_family': chip_family, 'npu_count': 8, 'product': 'Atlas 800I A2', 'arch': 'x86_64',
            'reboot_pending': reboot_pending, 'npu_smi': npu_smi, 'npu_smi_error': npu_smi_error,
            'installed': {'driver': {'version': '25.0.rc1.1'}, 'firmware': {'version': '7.7.0.1.231'},
                          'toolkit': None, 'docker_runtime': {'version': '7.3.0'}}}


def test_a_host_with_npus_and_a_working_npu_smi_is_labelled():
    assert node_refusal({'chip_family': '910b'}, None, 'a2-01') == ''


@pytest.mark.parametrize('found', [{}, {'chip_family': None}, {'chip_family': ''}, None])
def test_a_host_without_npus_is_refused_with_the_fix(found):
    message = node_refusal(found, 'ignored while there is no chip', 'cpu-01')
    assert message == ("cpu-01: no Ascend NPU on the PCI bus (vendor 19e5, class 0x12), so there is nothing to label. "
                       "Fix: remove the host from the play's group, or check `lspci -d 19e5:` on it.")


def test_a_failing_npu_smi_is_the_refusal_with_its_own_message():
    assert node_refusal({'chip_family': '910b'}, 'npu-smi: dcmi module initialize failed. Fix: reload the driver',
                        'a2-01') == 'a2-01: npu-smi: dcmi module initialize failed. Fix: reload the driver'


def test_a_labelled_host_wants_its_labels_the_taint_and_the_validated_label_of_its_driver():
    state = k8s_node_state(probe(), options(extra_labels={'team': 'infer', 'npu.ascend/chip': 'mine'}))
    assert state['refusal'] == '' and state['notes'] == [] and state['name'] == 'a2-01'
    assert state['labels']['accelerator'] == 'huawei-Ascend910' and state['labels']['npu.ascend/chip-family'] == '910b'
    assert state['labels']['npu.ascend/runtime-handler'] == 'ascend'
    # The extra labels win over the computed ones, and say where they come from.
    assert state['labels']['team'] == 'infer' and state['labels']['npu.ascend/chip'] == 'mine'
    assert state['label_sources']['npu.ascend/chip'] == 'k8s_node_extra_labels'
    assert state['label_sources']['npu.ascend/driver'] == 'ansible_facts.ascend.installed.driver.version'
    assert state['resource_name'] == 'huawei.com/Ascend910'
    assert state['wanted'] == {
        'host': 'a2-01', 'name': 'a2-01', 'labels': state['labels'], 'label_sources': state['label_sources'],
        'taint': 'npu.ascend/unvalidated=true:NoSchedule',
        'manage_taint': True, 'validated_label': 'npu.ascend/validated', 'validated_value': '25.0.rc1.1',
        'wait_seconds': 60, 'kubeconfig': None, 'context': None}


def test_the_node_name_label_domain_and_options_are_the_inventorys():
    state = k8s_node_state(probe(), options(node_name='node-7.example', label_keys=label_keys('npu.example.com'),
                                            runtime_handler='', taint_until_validated=False, wait_seconds='5'))
    assert state['name'] == state['wanted']['name'] == 'node-7.example'
    assert state['wanted']['validated_label'] == 'npu.example.com/validated'
    assert state['wanted']['taint'] == 'npu.example.com/unvalidated=true:NoSchedule'
    assert 'npu.example.com/chip-family' in state['labels']
    assert not any(key.startswith('npu.ascend/') for key in state['labels'])
    # No RuntimeClass: the handler label is removed (None).
    assert state['labels']['npu.example.com/runtime-handler'] is None
    assert state['wanted']['manage_taint'] is False and state['wanted']['wait_seconds'] == 5


@pytest.mark.parametrize('found,message', [
    (probe(chip_family=None), 'no Ascend NPU on the PCI bus'),
    (None, 'no Ascend NPU on the PCI bus'),
    (probe(npu_smi_error='npu-smi: dcmi module initialize failed'), 'a2-01: npu-smi: dcmi module initialize failed'),
])
def test_a_refused_host_wants_nothing_written_and_has_no_notes(found, message):
    state = k8s_node_state(found, options())
    assert message in state['refusal'] and state['wanted'] is None and state['notes'] == []


def test_while_a_reboot_is_pending_npu_smi_is_not_read():
    state = k8s_node_state(probe(npu_smi_error='npu-smi: the old driver', reboot_pending=True), options())
    assert state['refusal'] == '' and state['wanted'] is not None
    # The chip's name comes from npu-smi only: without it, that label is removed rather than left stale.
    assert state['labels']['npu.ascend/chip'] is None
    assert k8s_node_state(probe(), options())['labels']['npu.ascend/chip'] == '910B4'


def test_the_alibaba_profile_reads_no_probe_and_wants_the_taint_only():
    state = k8s_node_state('not read', options(profile='alibaba', extra_labels={'team': 'infer'}))
    assert state['refusal'] == '' and state['resource_name'] == 'aliyun.com/npu'
    assert state['labels'] == {'team': 'infer'} and state['wanted']['validated_value'] == 'true'


def test_the_vnpus_the_chips_hold_are_labels():
    chips = [{'npu_id': 0, 'chip_id': 0, 'vnpus': [{'template': 'vir02'}], 'resources': {'Ascend910B-2': 2}}]
    plain = k8s_node_state(probe(), options())['labels']
    state = k8s_node_state(probe(vnpus=chips, boards=[{'npu_id': 0, 'board_id': '0x33'}],
                                 chips=[{'npu_id': 0, 'chip_id': 0, 'name': '910B4'}]), options())
    offered = set(state['labels']) - set(plain)
    assert offered == {'npu.ascend/vnpu-Ascend910B-2', 'npu.ascend/vnpu-chips'}
    assert all(state['label_sources'][key] == 'ansible_facts.ascend.npu_smi.vnpus' for key in offered)


@pytest.mark.parametrize('wrong,error', [
    ({'profile': 'nvidia'}, ValueError), ({'label_keys': None}, TypeError), ({'label_keys': {'domain': 'x'}}, TypeError),
    ({'extra_labels': ['a=b']}, TypeError)])
def test_wrong_options_are_named(wrong, error):
    with pytest.raises(error) as raised:
        k8s_node_state(probe(), options(**wrong))
    if 'label_keys' in wrong:
        assert 'npu.ascend.k8s_label_keys' in str(raised.value)


def test_the_outcome_is_the_hosts_own_result_or_its_refusal_or_a_failure_naming_it():
    fleet = {'hosts': {'a2-01': {'name': 'a2-01', 'failed': False, 'validated': True, 'changed': True, 'msg': ''}}}
    assert k8s_node_outcome(fleet, 'a2-01') == fleet['hosts']['a2-01']
    refused = {'failed': True, 'validated': False, 'msg': 'a2-01: refused'}
    assert k8s_node_outcome(fleet, 'a2-01', 'a2-01: refused') == refused
    for missing in (fleet, None, {'hosts': {'a2-02': 'not a dict'}}):
        outcome = k8s_node_outcome(missing, 'a2-02')
        assert outcome['failed'] is True and outcome['msg'].startswith('a2-02: k8s_node: the one write')


def test_uninstall_removes_the_labels_the_role_set_and_no_other():
    labels = {'npu.ascend/driver': '25.0', 'npu.ascend.other/x': '1', 'accelerator': 'huawei-Ascend910',
              'kubernetes.io/hostname': 'a2-01', 'team': 'infer', 'zone': 'a'}
    assert labels_to_remove(labels, 'npu.ascend', {'team': 'infer'}) == ['accelerator', 'npu.ascend/driver', 'team']
    with pytest.raises(TypeError):
        labels_to_remove(['accelerator'], 'npu.ascend')


def test_the_filters_name_themselves_in_their_errors():
    filters = FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match='^k8s_node_state: '):
        filters['k8s_node_state'](probe(), options(profile='nvidia'))
    with pytest.raises(AnsibleFilterError, match='^k8s_node_state: options must be a dict'):
        filters['k8s_node_state'](probe(), ['host'])
    with pytest.raises(AnsibleFilterError, match='^k8s_node_labels_to_remove: '):
        filters['k8s_node_labels_to_remove']('accelerator', 'npu.ascend')
    assert filters['k8s_node_outcome'](None, 'a2-01')['failed'] is True
