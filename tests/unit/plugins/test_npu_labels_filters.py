# -*- coding: utf-8 -*-
"""The npu_labels and k8s_taints filters: what a playbook gets, and how bad input fails."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.k8s_label_changes import k8s_label_changes
from ansible_collections.npu.ascend.plugins.filter.k8s_taints import k8s_taints
from ansible_collections.npu.ascend.plugins.filter.npu_labels import npu_labels

A2_FACTS = {'chip_family': '910b', 'npu_count': 8, 'product': 'Atlas 800I A2', 'arch': 'aarch64',
            'installed': {'driver': {'version': '25.0.rc1.1'}, 'firmware': None}}


def test_npu_labels_returns_labels_notes_and_resource():
    result = npu_labels(A2_FACTS, boards=[{'board_id': '0x33'}], domain='npu.ascend')
    assert result['resource_name'] == 'huawei.com/Ascend910'
    assert result['labels']['host-arch'] == 'huawei-arm'
    assert result['labels']['npu.ascend/firmware'] is None
    assert result['notes'] == []


def test_npu_labels_reports_bad_input_as_filter_errors():
    with pytest.raises(AnsibleFilterError, match='expects ansible_facts.ascend'):
        npu_labels(None)
    with pytest.raises(AnsibleFilterError, match='DNS subdomain'):
        npu_labels(A2_FACTS, domain='Bad_Domain')


def test_npu_labels_adds_the_vnpu_labels_only_when_given_the_chips_vnpus():
    duo = dict(A2_FACTS, chip_family='310p', npu_count=2, product='Atlas 300I Duo')
    vnpus = [{'npu_id': 0, 'chip_id': 0, 'resources': {'Ascend310P-2c': 2}, 'vnpus': [{}, {}]},
             {'npu_id': 0, 'chip_id': 1, 'resources': {}, 'vnpus': []}]
    labels = npu_labels(duo, domain='npu.ascend', vnpus=vnpus)['labels']
    assert (labels['npu.ascend/vnpu-Ascend310P-2c'], labels['npu.ascend/vnpu-chips']) == ('2', '1')
    assert not [key for key in npu_labels(duo, domain='npu.ascend')['labels'] if '/vnpu-' in key]
    with pytest.raises(AnsibleFilterError, match='cannot be a label name'):
        npu_labels(duo, vnpus=[{'resources': {'Ascend 310P': 1}, 'vnpus': [{}]}])


def test_k8s_taints_from_kubectl_notation():
    assert k8s_taints(None, 'npu.ascend/unvalidated=true:NoSchedule') == [
        {'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}]
    assert k8s_taints([{'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}],
                      'npu.ascend/unvalidated=true:NoSchedule', present=False) == []


def test_k8s_taints_bad_input():
    with pytest.raises(AnsibleFilterError, match='expects a list'):
        k8s_taints('npu.ascend/unvalidated', 'npu.ascend/unvalidated=true:NoSchedule')
    with pytest.raises(AnsibleFilterError, match='Effect'):
        k8s_taints([], 'npu.ascend/unvalidated=true')


def test_k8s_label_changes():
    assert k8s_label_changes({'a': '1'}, {'a': '1', 'b': None}) == {}
    assert k8s_label_changes(None, {'a': '1'}) == {'a': '1'}
    with pytest.raises(AnsibleFilterError, match='must be a dict'):
        k8s_label_changes(['a'], {})


def test_k8s_label_keys_default_and_custom_domain():
    from ansible_collections.npu.ascend.plugins.filter.k8s_label_keys import k8s_label_keys
    from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import DEFAULT_DOMAIN
    assert k8s_label_keys(None)['domain'] == DEFAULT_DOMAIN
    assert k8s_label_keys('')['unvalidated'] == DEFAULT_DOMAIN + '/unvalidated'
    assert k8s_label_keys('npu.example.com')['upgrade_state'] == 'npu.example.com/upgrade-state'


def test_k8s_label_keys_names_the_variable_to_fix():
    from ansible_collections.npu.ascend.plugins.filter.k8s_label_keys import k8s_label_keys
    with pytest.raises(AnsibleFilterError, match='npu_ascend_label_domain.*not a DNS subdomain.*Fix'):
        k8s_label_keys('Example.COM')
    with pytest.raises(AnsibleFilterError, match='expects the label domain as a string'):
        k8s_label_keys(['npu.example.com'])


def test_k8s_node_labels_a_training_node_whose_fabric_passed_and_removes_it_once_it_no_longer_holds():
    """What k8s_node computes from its probe (ascend_facts with fabric) and sends as a merge patch."""
    facts = dict(A2_FACTS, product='Atlas 800T A2', fabric={'state': 'passed'})
    chips = [{'npu_id': npu, 'chip_id': 0, 'name': '910B3'} for npu in range(8)]
    labelled = npu_labels(facts, chips=chips, domain='npu.example.com')['labels']
    assert k8s_label_changes({}, labelled)['npu.example.com/fabric'] == 'passed'
    facts['fabric'] = {'state': 'changed', 'reason': '/etc/hccn.conf is not the one the gate checked'}
    result = npu_labels(facts, chips=chips, domain='npu.example.com')
    assert k8s_label_changes(labelled, result['labels']) == {'npu.example.com/fabric': None}
    assert result['notes'] == ['fabric label not set: /etc/hccn.conf is not the one the gate checked']
