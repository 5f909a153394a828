# -*- coding: utf-8 -*-
import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import vnpu_plan

CHIPS = [{'npu_id': 1, 'chip_id': 0, 'name': '310P3'}, {'npu_id': 1, 'chip_id': 1, 'name': '310P3'}]


def test_one_layout_for_every_chip():
    assert vnpu_plan.chip_layouts(CHIPS, ['vir02', {'template': 'vir04', 'id': 102}]) == [
        {'npu_id': 1, 'chip_id': 0, 'name': '310P3', 'vnpus': [{'template': 'vir02'}, {'template': 'vir04', 'id': 102}]},
        {'npu_id': 1, 'chip_id': 1, 'name': '310P3', 'vnpus': [{'template': 'vir02'}, {'template': 'vir04', 'id': 102}]},
    ]


def test_per_chip_replaces_and_unset_chips_are_left_out():
    assert vnpu_plan.chip_layouts(CHIPS, None, [{'npu': 1, 'chip': 1, 'vnpus': []}]) == [
        {'npu_id': 1, 'chip_id': 1, 'name': '310P3', 'vnpus': []}]
    both = vnpu_plan.chip_layouts(CHIPS, ['vir02'], [{'npu': 1, 'chip': 0, 'vnpus': ['vir04']}])
    assert [chip['vnpus'] for chip in both] == [[{'template': 'vir04'}], [{'template': 'vir02'}]]
    assert vnpu_plan.chip_layouts(CHIPS) == []


@pytest.mark.parametrize('layout, per_chip, message', [
    ('vir02', None, 'must be a list'),
    (None, [{'npu': 1, 'chip': 5, 'vnpus': []}], 'NPU 1 chip 5, which npu-smi does not list'),
    (None, [{'npu': 1, 'chip': 0, 'vnpus': []}, {'npu': 1, 'chip': 0, 'vnpus': []}], 'twice'),
    (None, [{'npu': 1, 'chip': 0}], 'exactly npu, chip and vnpus'),
    (None, [{'npu': '1', 'chip': 0, 'vnpus': []}], 'whole number'),
])
def test_refusals(layout, per_chip, message):
    with pytest.raises(ValueError, match=message):
        vnpu_plan.chip_layouts(CHIPS, layout, per_chip)


def test_resource_labels_only_changes():
    current = {'npu.ascend/vnpu-Ascend310P-4c': '1', 'npu.ascend/vnpu-Ascend310P-2c': '2', 'other': 'x'}
    changes = vnpu_plan.resource_labels('npu.ascend', [{'Ascend310P-2c': 2}, {'Ascend310P-2c': 2}], current)
    assert changes == {'npu.ascend/vnpu-Ascend310P-4c': None, 'npu.ascend/vnpu-Ascend310P-2c': '4'}
    converged = {'npu.ascend/vnpu-Ascend310P-2c': '4'}
    assert vnpu_plan.resource_labels('npu.ascend', {'Ascend310P-2c': 4}, converged) == {}


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(['Ascend310P-1c', 'Ascend310P-2c', 'Ascend910-10c.3cpu.16g.ndvpp']),
                       st.integers(1, 16)),
       st.dictionaries(st.sampled_from(['npu.ascend/vnpu-Ascend310P-2c', 'npu.ascend/vnpu-Ascend310P-4c', 'k']),
                       st.sampled_from(['1', '4'])))
def test_resource_labels_converge(resources, current):
    changes = vnpu_plan.resource_labels('npu.ascend', resources, current)
    after = dict(current)
    for key, value in changes.items():
        if value is None:
            after.pop(key, None)
        else:
            after[key] = value
    assert vnpu_plan.resource_labels('npu.ascend', resources, after) == {}
    assert after.get('k') == current.get('k')
    assert sorted(k for k in after if k.startswith('npu.ascend/vnpu-')) == sorted(
        'npu.ascend/vnpu-' + name for name in resources)


def test_split_chips_label():
    changes = vnpu_plan.resource_labels('npu.ascend', {'Ascend310P-2c': 4}, {}, split_chips=1)
    assert changes == {'npu.ascend/vnpu-Ascend310P-2c': '4', 'npu.ascend/vnpu-chips': '1'}
    # Back to whole chips: every vNPU label goes, the chip count too.
    assert vnpu_plan.resource_labels('npu.ascend', {}, changes, split_chips=0) == {
        'npu.ascend/vnpu-Ascend310P-2c': None, 'npu.ascend/vnpu-chips': None}


def test_expected_allocatable():
    labels = {'npu.ascend/vnpu-Ascend310P-2c': '4', 'npu.ascend/vnpu-chips': '1', 'accelerator': 'huawei-Ascend310P'}
    assert vnpu_plan.expected_allocatable('huawei.com/Ascend310P', 2, labels, 'npu.ascend') == {
        'huawei.com/Ascend310P-2c': 4, 'huawei.com/Ascend310P': 1}
    assert vnpu_plan.expected_allocatable('huawei.com/Ascend910', 8, {}, 'npu.ascend') == {'huawei.com/Ascend910': 8}
    with pytest.raises(ValueError, match='not a count'):
        vnpu_plan.expected_allocatable('huawei.com/Ascend910', 8, {'npu.ascend/vnpu-chips': 'x'}, 'npu.ascend')


def test_labels_and_expectation_agree():
    """What the vnpu role writes is what the health gate reads back."""
    labels = {}
    for key, value in vnpu_plan.resource_labels('d.example', [{'Ascend910-5c.1cpu.8g': 2}, {}], {}, 1).items():
        labels[key] = value
    assert vnpu_plan.expected_allocatable('huawei.com/Ascend910', 8, labels, 'd.example') == {
        'huawei.com/Ascend910-5c.1cpu.8g': 2, 'huawei.com/Ascend910': 7}


def test_offered_labels_from_the_vnpus_the_chips_hold():
    chips = [{'npu_id': 8, 'chip_id': 0, 'resources': {'Ascend310P-2c': 2, 'Ascend310P-2c.1cpu': 1},
              'vnpus': [{'template': 'vir02'}, {'template': 'vir02_1c'}, {'template': 'vir02'}]},
             {'npu_id': 8, 'chip_id': 1, 'resources': {}, 'vnpus': []},
             # A vNPU of a template the device plugin does not publish: the chip is split all the same.
             {'npu_id': 9, 'chip_id': 0, 'resources': {}, 'vnpus': [{'template': 'made-by-hand'}]}]
    assert vnpu_plan.offered_labels('npu.ascend', chips) == {
        'npu.ascend/vnpu-Ascend310P-2c': '2', 'npu.ascend/vnpu-Ascend310P-2c.1cpu': '1', 'npu.ascend/vnpu-chips': '2'}
    assert vnpu_plan.offered_labels('npu.ascend', chips[1:2]) == {}
    assert vnpu_plan.offered_labels('npu.ascend', None) == {}


def test_an_a3_with_two_split_dies_is_expected_to_offer_its_14_other_dies_whole():
    # The health gate's count on a 16-die A3: dies 0 and 1 of NPU 2 (phy 4, 5) split, the rest whole.
    chips = [{'npu_id': npu, 'chip_id': die, 'vnpus': [], 'resources': {}} for npu in range(8) for die in (0, 1)]
    for die in chips[4:6]:
        die['vnpus'] = [{'template': 'vir12_3c_32g'}, {'template': 'vir06_1c_16g'}, {'template': 'vir06_1c_16g'}]
        die['resources'] = {'Ascend910-12c.3cpu.32g': 1, 'Ascend910-6c.1cpu.16g': 2}
    labels = vnpu_plan.offered_labels('npu.ascend', chips)
    assert labels == {'npu.ascend/vnpu-Ascend910-12c.3cpu.32g': '2', 'npu.ascend/vnpu-Ascend910-6c.1cpu.16g': '4',
                      'npu.ascend/vnpu-chips': '2'}
    assert vnpu_plan.expected_allocatable('huawei.com/Ascend910', 16, labels, 'npu.ascend') == {
        'huawei.com/Ascend910-12c.3cpu.32g': 2, 'huawei.com/Ascend910-6c.1cpu.16g': 4, 'huawei.com/Ascend910': 14}


_RESOURCES = st.sampled_from(['Ascend310P-1c', 'Ascend310P-2c', 'Ascend310P-4c.3cpu', 'Ascend910-5c.1cpu.8g'])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_RESOURCES, st.integers(min_value=1, max_value=8), max_size=3), max_size=8))
def test_what_k8s_node_sets_is_what_the_vnpu_role_would_and_the_gate_expects(per_chip):
    """The labels from the probe's reading equal those the vnpu role writes on a Node without any, and the
    health gate's expectation from them counts every vNPU and every chip not split."""
    chips = [{'resources': resources, 'vnpus': [{}] * sum(resources.values())} for resources in per_chip]
    offered = vnpu_plan.offered_labels('npu.ascend', chips)
    split = len([resources for resources in per_chip if resources])
    assert offered == vnpu_plan.resource_labels('npu.ascend', per_chip, {}, split)
    expected = vnpu_plan.expected_allocatable('huawei.com/Ascend310P', len(per_chip), offered, 'npu.ascend')
    totals = {}
    for resources in per_chip:
        for name, count in resources.items():
            totals['huawei.com/' + name] = totals.get('huawei.com/' + name, 0) + count
    assert expected == dict(totals, **{'huawei.com/Ascend310P': len(per_chip) - split if totals else len(per_chip)})
