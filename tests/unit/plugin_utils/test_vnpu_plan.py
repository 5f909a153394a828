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


def _planned(npu_id, chip_id, change=False, in_use=(), vnpus=(), resources=None, **plan):
    chip = {'npu_id': npu_id, 'chip_id': chip_id, 'name': '310P3'}
    return {'chip': dict(chip, family='310P'), 'item': dict(chip, vnpus=[{'template': 'vir02'}]),
            'vnpus': [{'template': template} for template in vnpus], 'resources': resources or {},
            'plan': dict({'change': change, 'destroy': [], 'create': [], 'mode': False, 'recover': False,
                          'in_use': list(in_use)}, **plan)}


ROLE_OPTIONS = {'host': 'npu-01', 'layout': ['vir02'], 'per_chip': [], 'force': False, 'kubernetes': True,
                'drain': False}


def test_role_state_before_the_plan_gives_the_layouts_only():
    state = vnpu_plan.role_state(CHIPS, dict(ROLE_OPTIONS, per_chip=[{'npu': 1, 'chip': 1, 'vnpus': []}]))
    assert state == {'layouts': vnpu_plan.chip_layouts(CHIPS, ['vir02'], [{'npu': 1, 'chip': 1, 'vnpus': []}]),
                     'split_chips': 1}


def test_role_state_names_the_changing_chips_and_the_plan_lines():
    results = [_planned(1, 0, vnpus=['vir02'], resources={'Ascend310P-2c': 1}),
               _planned(1, 1, change=True, destroy=['vir04 id 101 vgroup 1'], create=['vir02'], mode=True,
                        recover=True, resources={'Ascend310P-2c': 1})]
    state = vnpu_plan.role_state(CHIPS, ROLE_OPTIONS, results)
    assert state['changing'] == [results[1]['item']] and state['changed'] == [results[1]['chip']]
    assert state['lines'] == ['NPU 1 chip 0 (310P3): as declared (vir02)',
                              'NPU 1 chip 1 (310P3): destroy [vir04 id 101 vgroup 1], create [vir02], set container '
                              'mode, set config recovery']
    assert (state['in_use'], state['drain'], state['force'], state['refusal']) == ([], False, False, None)
    assert state['resources'] == [{'Ascend310P-2c': 1}, {'Ascend310P-2c': 1}]
    whole = vnpu_plan.role_state(CHIPS, ROLE_OPTIONS, [_planned(1, 0)])
    assert whole['lines'] == ['NPU 1 chip 0 (310P3): as declared (whole chip)'] and whole['changing'] == []


@pytest.mark.parametrize('force, kubernetes, drain, refused, drained', [
    (False, True, False, True, False),
    (False, False, True, True, False),
    (True, True, False, False, False),
    (False, True, True, False, True),
])
def test_vnpus_in_use_are_refused_unless_forced_or_drained(force, kubernetes, drain, refused, drained):
    results = [_planned(1, 0, change=True, in_use=['vir02 id 100 vgroup 0 (in use by container abc)']),
               _planned(1, 1, change=True, in_use=['vir02 id 101 vgroup 1 (in use by container def)', 'x'])]
    state = vnpu_plan.role_state(CHIPS, dict(ROLE_OPTIONS, force=force, kubernetes=kubernetes, drain=drain), results)
    assert state['drain'] is drained and state['force'] is (force or (kubernetes and drain))
    if refused:
        assert state['refusal'] == (
            'npu-01: the declared vNPU layout destroys vNPUs a container is using: NPU 1 chip 0 (310P3): vir02 id 100 '
            'vgroup 0 (in use by container abc); NPU 1 chip 1 (310P3): vir02 id 101 vgroup 1 (in use by container '
            'def), x. Nothing was changed. Fix: stop the containers that use them, or let the role drain the node '
            '(vnpu_kubernetes and vnpu_drain true), then run again; set vnpu_force to true only once nothing runs on '
            'them.')
    else:
        assert state['refusal'] is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.text(min_size=1, max_size=8), max_size=2)), max_size=4),
       st.booleans(), st.booleans(), st.booleans())
def test_role_state_never_changes_a_busy_chip_without_leave(plans, force, kubernetes, drain):
    results = [_planned(1, index, change=change, in_use=in_use) for index, (change, in_use) in enumerate(plans)]
    state = vnpu_plan.role_state([], dict(ROLE_OPTIONS, layout=None, force=force, kubernetes=kubernetes, drain=drain),
                                 results)
    busy = any(in_use for _change, in_use in plans)
    assert (state['refusal'] is not None) == (busy and not force and not (kubernetes and drain))
    assert len(state['changing']) == len([plan for plan in plans if plan[0]]) == len(state['changed'])
    assert state['drain'] == (busy and kubernetes and drain and any(plan[0] for plan in plans))
    assert len(state['lines']) == len(plans)


def test_vnpu_state_filter_names_the_fix():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.npu.ascend.plugins.filter.vnpu_chip_layouts import FilterModule, vnpu_state
    assert FilterModule().filters()['vnpu_state'] is vnpu_state
    with pytest.raises(AnsibleFilterError, match='must be a list.*Fix: correct vnpu_layout'):
        vnpu_state(CHIPS, dict(ROLE_OPTIONS, layout='vir02'))
    with pytest.raises(AnsibleFilterError, match='plan_results must be the list'):
        vnpu_state(CHIPS, ROLE_OPTIONS, {})
