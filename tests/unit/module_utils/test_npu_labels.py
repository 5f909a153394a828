# -*- coding: utf-8 -*-
"""Node labels and taints computed from an NPU node's facts (facts reference section 9)."""

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.k8s import npu_labels
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
    accelerator_type, label_value, node_labels, parse_taint, taints_with)
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import parse_board_id


def facts(chip_family='910b', npu_count=8, product='Atlas 800I A2', arch='x86_64', **installed):
    versions = {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231', 'toolkit': None, 'docker_runtime': None}
    versions.update(installed)
    return {
        'chip_family': chip_family, 'npu_count': npu_count, 'product': product, 'arch': arch,
        'installed': {component: ({'version': version} if version else None)
                      for component, version in versions.items()},
    }


def chips(count, name='910B4'):
    return [{'npu_id': index, 'chip_id': 0, 'name': name} for index in range(count)]


def test_atlas_800i_a2_gets_huawei_and_own_labels():
    labels, notes = node_labels(facts(toolkit='8.2.RC1'), boards=[{'npu_id': 0, 'board_id': '0x33'}],
                                chips=chips(8))
    assert notes == []
    assert labels['accelerator'] == 'huawei-Ascend910'
    assert labels['host-arch'] == 'huawei-x86'
    assert labels['accelerator-type'] == 'module-910b-8'
    assert labels['server-usage'] == 'infer'
    assert labels['workerselector'] == 'dls-worker-node'
    assert labels['nodeDEnable'] is None
    assert labels['npu.ascend/chip-family'] == '910b'
    assert labels['npu.ascend/chip'] == '910B4'
    assert labels['npu.ascend/npu-count'] == '8'
    assert labels['npu.ascend/product'] == 'Atlas-800I-A2'
    assert labels['npu.ascend/driver'] == '25.0.rc1.1'
    assert labels['npu.ascend/firmware'] == '7.7.0.1.231'
    assert labels['npu.ascend/cann'] == '8.2.RC1'


def test_atlas_300i_duo_on_arm_counts_chips_and_has_no_accelerator_type():
    labels, notes = node_labels(facts('310p', 2, 'Atlas 300I Duo', 'aarch64'),
                                boards=[{'npu_id': 0, 'board_id': 'NA'}], chips=chips(2, '310P3'))
    assert labels['accelerator'] == 'huawei-Ascend310P'
    assert labels['host-arch'] == 'huawei-arm'
    assert labels['accelerator-type'] is None
    assert labels['server-usage'] is None
    assert labels['npu.ascend/chip'] == '310P3'
    assert labels['npu.ascend/npu-count'] == '2'
    assert notes == []


def test_absent_components_are_removed_not_left_stale():
    labels, _notes = node_labels(facts(driver=None, firmware=None))
    assert labels['npu.ascend/driver'] is None
    assert labels['npu.ascend/firmware'] is None
    assert labels['npu.ascend/cann'] is None
    # Without npu-smi the PCI count stands in, and the chip name is unknown.
    assert labels['npu.ascend/npu-count'] == '8'
    assert labels['npu.ascend/chip'] is None


def test_runtime_handler_label_only_with_the_runtime_installed():
    without, _notes = node_labels(facts())
    with_runtime, _notes = node_labels(facts(docker_runtime='v7.3.0'))
    assert without['npu.ascend/runtime-handler'] is None
    assert with_runtime['npu.ascend/runtime-handler'] == 'ascend'
    assert with_runtime['npu.ascend/ascend-docker-runtime'] == 'v7.3.0'
    disabled, _notes = node_labels(facts(docker_runtime='v7.3.0'), runtime_handler='')
    assert disabled['npu.ascend/runtime-handler'] is None


def test_options_switch_huawei_labels_and_domain():
    labels, _notes = node_labels(facts(), domain='npu.example.com', worker_selector=False, noded=True,
                                 accelerator_type_override='module 910b 8')
    assert labels['workerselector'] is None
    assert labels['nodeDEnable'] == 'on'
    assert labels['accelerator-type'] == 'module-910b-8'
    assert 'npu.example.com/chip-family' in labels
    assert not any(key.startswith('npu.ascend/') for key in labels)


@pytest.mark.parametrize('family, count, board, product, expected', [
    ('910b', 8, '0x33', 'Atlas 800I A2', 'module-910b-8'),
    ('910b', 8, '0x3c', None, 'module-910b-8'),
    ('910b', 16, None, None, 'module-910b-16'),
    ('910b', 1, '0x28', None, 'card-910b-2'),
    ('910b', 2, None, 'Atlas 300T A2', 'card-910b-2'),
    ('910b', 4, None, None, None),
    ('A3', 16, None, None, 'module-a3-16'),
    ('A3', 8, None, None, None),
    ('910', 8, '0x02', None, None),
    ('310p', 2, None, 'Atlas 300I Duo', None),
])
def test_accelerator_type(family, count, board, product, expected):
    assert accelerator_type(family, count, board, product) == expected


def test_undecidable_910_accelerator_type_is_explained():
    labels, notes = node_labels(facts('910', 8, None), boards=[{'board_id': '0x02'}])
    assert labels['accelerator-type'] is None
    assert len(notes) == 1 and 'accelerator-type cannot be derived' in notes[0] and '0x02' in notes[0]


def test_family_without_accelerator_label_is_noted():
    labels, notes = node_labels(facts('310b', 1, None, 'aarch64'))
    assert labels['accelerator'] is None
    assert any('no accelerator label' in note for note in notes)


def test_node_without_npus_is_refused():
    with pytest.raises(ValueError, match='no Ascend NPU'):
        node_labels({'chip_family': None, 'npu_count': 0})


@pytest.mark.parametrize('text, expected', [
    ('Atlas 800I A2', 'Atlas-800I-A2'),
    ('25.0.rc1.1', '25.0.rc1.1'),
    ('8.1.RC1.alpha002', '8.1.RC1.alpha002'),
    ('v7.3.0', 'v7.3.0'),
    ('6.0.0.SPC1', '6.0.0.SPC1'),
    ('  -weird/version+build_ ', 'weird-version-build'),
    ('x' * 70 + '.1', 'x' * 63),
    ('...', None),
    ('', None),
    (None, None),
])
def test_label_value(text, expected):
    assert label_value(text) == expected
    if expected is not None:
        assert npu_labels.is_label_value(expected)


@pytest.mark.parametrize('domain', ['', 'NPU.Ascend', 'npu_ascend', '-npu.ascend', 'npu..ascend'])
def test_bad_domains_are_refused(domain):
    with pytest.raises(ValueError, match='DNS subdomain'):
        node_labels(facts(), domain=domain)


@pytest.mark.parametrize('text, expected', [('0x33', 0x33), ('0X3C', 0x3c), ('NA', None), ('', None),
                                            (None, None), ('40', 40), (0x28, 0x28)])
def test_parse_board_id(text, expected):
    assert parse_board_id(text) == expected


UNVALIDATED = {'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}
NOT_READY = {'key': 'node.kubernetes.io/not-ready', 'effect': 'NoExecute', 'timeAdded': '2025-01-01T00:00:00Z'}


def test_taint_added_keeping_others():
    assert taints_with([NOT_READY], UNVALIDATED) == [NOT_READY, UNVALIDATED]
    assert taints_with(None, UNVALIDATED) == [UNVALIDATED]


def test_taint_already_there_changes_nothing():
    current = [UNVALIDATED, NOT_READY]
    assert taints_with(current, UNVALIDATED) == current


def test_taint_with_other_value_is_replaced_and_removal_keeps_others():
    stale = dict(UNVALIDATED, value='false')
    assert taints_with([stale, NOT_READY], UNVALIDATED) == [NOT_READY, UNVALIDATED]
    assert taints_with([UNVALIDATED, NOT_READY], UNVALIDATED, present=False) == [NOT_READY]
    assert taints_with([NOT_READY], UNVALIDATED, present=False) == [NOT_READY]


def test_same_key_other_effect_is_another_taint():
    other_effect = dict(UNVALIDATED, effect='NoExecute')
    assert taints_with([other_effect], UNVALIDATED) == [other_effect, UNVALIDATED]


@pytest.mark.parametrize('text, expected', [
    ('npu.ascend/unvalidated=true:NoSchedule', UNVALIDATED),
    ('dedicated:NoExecute', {'key': 'dedicated', 'effect': 'NoExecute'}),
])
def test_parse_taint(text, expected):
    assert parse_taint(text) == expected


@pytest.mark.parametrize('text', ['npu.ascend/unvalidated=true', 'a=b:Sometimes', 'bad key=x:NoSchedule',
                                  'k=not valid:NoSchedule'])
def test_parse_taint_refuses_malformed(text):
    with pytest.raises(ValueError):
        parse_taint(text)


def test_label_changes_only_what_differs():
    current = {'accelerator': 'huawei-Ascend910', 'npu.ascend/driver': '24.1.rc2', 'npu.ascend/cann': '8.0.RC3',
               'kubernetes.io/hostname': 'n1'}
    wanted = {'accelerator': 'huawei-Ascend910', 'npu.ascend/driver': '25.0.rc1.1', 'npu.ascend/cann': None,
              'npu.ascend/firmware': None}
    assert npu_labels.label_changes(current, wanted) == {'npu.ascend/driver': '25.0.rc1.1', 'npu.ascend/cann': None}
    assert npu_labels.label_changes(dict(current, **{'npu.ascend/driver': '25.0.rc1.1'}),
                                    {'accelerator': 'huawei-Ascend910', 'npu.ascend/firmware': None}) == {}
    assert npu_labels.label_changes(None, {'a': 'b'}) == {'a': 'b'}


def test_label_keys_spell_every_key_from_one_domain():
    keys = npu_labels.label_keys('npu.example.com')
    assert keys == {
        'domain': 'npu.example.com', 'validated': 'npu.example.com/validated', 'driver': 'npu.example.com/driver',
        'runtime_handler': 'npu.example.com/runtime-handler', 'upgrade_state': 'npu.example.com/upgrade-state',
        'device_plugin': 'npu.example.com/device-plugin', 'unvalidated': 'npu.example.com/unvalidated',
        'fabric': 'npu.example.com/fabric', 'unvalidated_taint': 'npu.example.com/unvalidated=true:NoSchedule'}
    # The taint parses as the k8s_taints filter takes it, with the key the DaemonSets tolerate.
    assert npu_labels.parse_taint(keys['unvalidated_taint'])['key'] == keys['unvalidated']


@pytest.mark.parametrize('unset', [None, ''])
def test_label_keys_without_a_domain_use_the_one_default(unset):
    assert npu_labels.label_keys(unset)['domain'] == npu_labels.DEFAULT_DOMAIN
    assert npu_labels.label_keys(unset) == npu_labels.label_keys(npu_labels.DEFAULT_DOMAIN)


def test_label_keys_agree_with_the_labels_the_node_gets():
    keys = npu_labels.label_keys('npu.example.com')
    labels, _notes = npu_labels.node_labels(facts(docker_runtime='v7.3.0'), domain=keys['domain'])
    assert labels[keys['driver']] == '25.0.rc1.1'
    assert labels[keys['runtime_handler']] == 'ascend'


@pytest.mark.parametrize('domain', ['NPU.example', 'npu_example', '.npu', 'npu.example.com/', 'a' * 254])
def test_label_keys_refuse_a_domain_kubernetes_would_refuse(domain):
    with pytest.raises(ValueError, match='not a DNS subdomain'):
        npu_labels.label_keys(domain)


def _fabric(state, reason=None):
    return {'state': state, 'verdict': 'passed', 'reason': reason, 'marker': '/var/lib/npu_ascend/hccn-fabric.json'}


def test_a_training_node_whose_fabric_passed_is_labelled():
    keys = npu_labels.label_keys('npu.example.com')
    node = dict(facts(product='Atlas 800T A2'), fabric=_fabric('passed'))
    labels, notes = node_labels(node, chips=chips(8, '910B3'), domain=keys['domain'])
    assert labels[keys['fabric']] == 'passed' and notes == []


@pytest.mark.parametrize('state', ['failed', 'changed', 'damaged'])
def test_a_training_node_whose_verdict_does_not_hold_loses_the_label_and_says_why(state):
    node = dict(facts(product='Atlas 800T A2'), fabric=_fabric(state, 'the last fabric gate failed: t2 NPU 3'))
    labels, notes = node_labels(node, chips=chips(8, '910B3'))
    # None: the merge patch removes the label a node carried before.
    assert 'npu.ascend/fabric' in labels and labels['npu.ascend/fabric'] is None
    assert notes == ['fabric label not set: the last fabric gate failed: t2 NPU 3']


@pytest.mark.parametrize('fabric', [None, {'state': 'absent', 'reason': 'no fabric gate is recorded'}])
def test_a_training_node_without_a_gate_gets_no_label_and_no_note(fabric):
    labels, notes = node_labels(dict(facts(product='Atlas 800T A2'), fabric=fabric), chips=chips(8, '910B1'))
    assert labels['npu.ascend/fabric'] is None and notes == []


@pytest.mark.parametrize('chip_list', [chips(8, '910B4'), chips(2, '310P3'), [],
                                       chips(1, '910B3') + chips(1, '910B4'), chips(8, 'Ascend910') + chips(8, '910B3')])
def test_inference_mixed_and_unknown_chips_get_no_fabric_label_even_with_a_passed_marker(chip_list):
    labels, notes = node_labels(dict(facts(), fabric=_fabric('passed')), chips=chip_list)
    assert labels['npu.ascend/fabric'] is None
    assert not [note for note in notes if 'fabric' in note]


def test_an_a3_node_whose_gate_passed_is_labelled():
    # The hccn role gates an A3's 16 dies (RoCE between SuperPoDs, HCCS inside one): a passed gate holds for it too.
    labels, notes = node_labels(dict(facts('A3', 16, 'Atlas 800T A3'), fabric=_fabric('passed')), chips=chips(16, 'Ascend910'))
    assert labels['npu.ascend/fabric'] == 'passed' and notes == []


def test_the_first_generation_training_chips_are_labelled_too():
    labels, _notes = node_labels(dict(facts('910', 8, None), fabric=_fabric('passed')), chips=chips(8, '910B'),
                                 accelerator_type_override='module')
    assert labels['npu.ascend/fabric'] == 'passed'
