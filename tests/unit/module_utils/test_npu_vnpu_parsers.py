# -*- coding: utf-8 -*-
import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import NpuSmiError


def test_info_vnpu_empty(synthetic):
    parsed = npu_vnpu.parse_info_vnpu(synthetic('npu_smi_synthetic/info-vnpu_910B4_empty.txt'))
    assert parsed['vnpus'] == []
    assert parsed['resources']['aicore'] == {'free': 20, 'total': 20}
    assert parsed['resources']['memory_gb'] == {'free': 32, 'total': 32}
    assert parsed['resources']['pngd'] == {'free': None, 'total': None}


def test_info_vnpu_in_use(synthetic):
    parsed = npu_vnpu.parse_info_vnpu(synthetic('npu_smi_synthetic/info-vnpu_910B4_two-one-in-use.txt'))
    assert parsed['vnpus'] == [
        {'vnpu_id': 116, 'vgroup_id': 0, 'container_id': 'ffffffffffff', 'status': '1',
         'template': 'vir10_3c_16g', 'in_use': True},
        {'vnpu_id': 117, 'vgroup_id': 1, 'container_id': '000000000000', 'status': '0',
         'template': 'vir10_3c_16g', 'in_use': False},
    ]
    assert parsed['resources']['aicore'] == {'free': 0, 'total': 20}


def test_info_vnpu_310p(synthetic):
    parsed = npu_vnpu.parse_info_vnpu(synthetic('npu_smi_synthetic/info-vnpu_310P3_three.txt'))
    assert [(v['vnpu_id'], v['vgroup_id'], v['template']) for v in parsed['vnpus']] == [
        (100, 0, 'vir02'), (101, 1, 'vir02_1c'), (102, 2, 'vir02')]


def test_info_vnpu_count_mismatch_refused(synthetic):
    text = synthetic('npu_smi_synthetic/info-vnpu_310P3_three.txt').replace('vnpu: 3', 'vnpu: 4')
    with pytest.raises(ValueError, match='says 4 vNPUs but lists 3'):
        npu_vnpu.parse_info_vnpu(text)


def test_info_vnpu_without_borders(synthetic):
    text = synthetic('npu_smi_synthetic/info-vnpu_310P3_three.txt')
    bare = '\n'.join(line.strip().strip('|') for line in text.splitlines() if not set(line.strip()) <= set('+-='))
    assert npu_vnpu.parse_info_vnpu(bare) == npu_vnpu.parse_info_vnpu(text)


@pytest.mark.parametrize('text', ['', 'nothing useful', 'AICORE  Memory\n20/20 32/32\n'])
def test_info_vnpu_unreadable_refused(text):
    with pytest.raises(ValueError):
        npu_vnpu.parse_info_vnpu(text)


def test_info_vnpu_error_is_npu_smi_error():
    with pytest.raises(NpuSmiError):
        npu_vnpu.parse_info_vnpu('dcmi module initialize failed. ret is -8005\n')


def test_template_info(synthetic):
    templates = npu_vnpu.parse_template_info(synthetic('npu_smi_synthetic/template-info_910B4.txt'))
    assert templates == {
        'vir10_3c_16g': {'aicore': 10, 'memory_gb': 16, 'aicpu': 3},
        'vir10_4c_16g_m': {'aicore': 10, 'memory_gb': 16, 'aicpu': 4},
        'vir10_3c_16g_nm': {'aicore': 10, 'memory_gb': 16, 'aicpu': 3},
        'vir05_1c_8g': {'aicore': 5, 'memory_gb': 8, 'aicpu': 1},
    }
    templates = npu_vnpu.parse_template_info(synthetic('npu_smi_synthetic/template-info_310P3.txt'))
    assert sorted(templates) == sorted(npu_vnpu.TEMPLATES['310P'])


def test_template_info_agrees_with_the_catalogue(synthetic):
    for name, family in (('310P3', '310P'), ('910B4', '910B-inference')):
        listed = npu_vnpu.parse_template_info(synthetic('npu_smi_synthetic/template-info_%s.txt' % name))
        for template, values in listed.items():
            assert npu_vnpu.TEMPLATES[family][template] == (values['aicore'], values['memory_gb'], values['aicpu'])


def test_template_info_without_header_refused():
    with pytest.raises(ValueError, match='no "Name'):
        npu_vnpu.parse_template_info('vir02  2  6  2\n')


@pytest.mark.parametrize('template, family, expected', [
    ('vir02', '310P', 'Ascend310P-2c'),
    ('vir01', '310P', 'Ascend310P-1c'),
    ('vir02_1c', '310P', 'Ascend310P-2c.1cpu'),
    ('vir04_3c_ndvpp', '310P', 'Ascend310P-4c.3cpu.ndvpp'),
    ('vir04_4c_dvpp', '310P', 'Ascend310P-4c.4cpu.dvpp'),
    ('vir06_1c_16g', '910B-training', 'Ascend910-6c.1cpu.16g'),
    ('vir10_3c_16g_nm', '910B-inference', 'Ascend910-10c.3cpu.16g.ndvpp'),
    ('vir10_4c_16g_m', '910B-inference', 'Ascend910-10c.4cpu.16g.dvpp'),
    ('vir05_1c_8g', '910B-inference', 'Ascend910-5c.1cpu.8g'),
    # Atlas A3 (MindCluster "Mounting vNPUs": huawei.com/Ascend910-6c.1cpu.16g ...).
    ('vir06_1c_16g', 'A3', 'Ascend910-6c.1cpu.16g'),
    ('vir12_3c_32g', 'A3', 'Ascend910-12c.3cpu.32g'),
    ('vir05_1c_16g', 'A3', 'Ascend910-5c.1cpu.16g'),
    ('vir10_3c_32g', 'A3', 'Ascend910-10c.3cpu.32g'),
])
def test_resource_name(template, family, expected):
    assert npu_vnpu.resource_name(template, family) == expected


def test_resource_name_refuses_garbage():
    with pytest.raises(ValueError):
        npu_vnpu.resource_name('vir02;rm', '310P')


@pytest.mark.parametrize('name, family', [
    ('310P3', '310P'), ('Ascend 310P3', '310P'), ('910B4', '910B-inference'), ('910B3', '910B-inference'),
    ('910B1', '910B-training'), ('910B2C', '910B-training'), ('910B', '910'), ('310B4', None),
    # An A3 die as npu-smi prints it (info and -m), with or without a space, and the one 24.1.rc3 name.
    ('Ascend910', 'A3'), ('Ascend 910', 'A3'), ('ascend910', 'A3'), ('910C1', 'A3'),
    # Without its "Ascend" the A3's name is no chip: never read as one.
    ('910', None), ('910C', None), ('Ascend910B4', '910B-inference'),
    ('', None), (None, None),
])
def test_chip_family(name, family):
    assert npu_vnpu.chip_family(name) == family


def test_id_ranges():
    assert list(npu_vnpu.vnpu_id_range('310P', 0)) == list(range(100, 108))
    assert list(npu_vnpu.vnpu_id_range('310P', 1)) == list(range(116, 124))
    assert list(npu_vnpu.vnpu_id_range('910B-inference', 1)) == list(range(116, 132))
    # An A3 die by its phy id (2 x NPU + die): die 1 of NPU 7 is phy 15.
    assert list(npu_vnpu.vnpu_id_range('A3', 15)) == list(range(340, 356))


def _templates(family):
    return dict((name, {'aicore': c, 'memory_gb': m, 'aicpu': p}) for name, (c, m, p) in npu_vnpu.TEMPLATES[family].items())


RESOURCES_310P = {'aicore': {'free': 8, 'total': 8}, 'memory_gb': {'free': 24, 'total': 24}}
RESOURCES_910B4 = {'aicore': {'free': 20, 'total': 20}, 'memory_gb': {'free': 32, 'total': 32}}


def _layout(*entries):
    return npu_vnpu.normalize_layout(list(entries))


def test_fits():
    assert npu_vnpu.layout_problems(_layout('vir02', 'vir02', 'vir04'), '310P', 0, _templates('310P'),
                                    RESOURCES_310P) == []
    assert npu_vnpu.layout_problems(_layout('vir10_3c_16g', 'vir10_3c_16g'), '910B-inference', 0,
                                    _templates('910B-inference'), RESOURCES_910B4) == []


def test_unknown_template_named():
    problems = npu_vnpu.layout_problems(_layout('vir08'), '310P', 0, _templates('310P'), RESOURCES_310P)
    assert problems and 'vir08 is not one this chip lists' in problems[0]


def test_over_full_cores():
    problems = npu_vnpu.layout_problems(_layout('vir04', 'vir04', 'vir02'), '310P', 0, _templates('310P'),
                                        RESOURCES_310P)
    assert any('needs 10 AI cores, the chip has 8' in problem for problem in problems)


def test_over_full_memory():
    problems = npu_vnpu.layout_problems(_layout('vir10_3c_32g', 'vir05_1c_8g'), '910B-inference', 0,
                                        _templates('910B-inference'), RESOURCES_910B4)
    assert any('needs 40 GB of memory, the chip has 32 GB' in problem for problem in problems)


def test_vir01_pairs_share_a_vgroup():
    ok = _layout('vir01', 'vir01', 'vir02', 'vir02', 'vir02')
    assert npu_vnpu.layout_problems(ok, '310P', 0, _templates('310P'), RESOURCES_310P) == []
    too_many = _layout('vir01', 'vir02', 'vir02', 'vir02', 'vir01', 'vir01')
    problems = npu_vnpu.layout_problems(too_many, '310P', 0, _templates('310P'), RESOURCES_310P)
    assert any('needs 5 vGroups' in problem for problem in problems)


def test_ids_and_vgroups_checked():
    layout = _layout({'template': 'vir02', 'id': 99}, {'template': 'vir02', 'id': 101, 'vgroup': 4},
                     {'template': 'vir02', 'id': 101})
    problems = ' | '.join(npu_vnpu.layout_problems(layout, '310P', 0, _templates('310P'), RESOURCES_310P))
    assert 'vNPU id 99 is outside 100-107' in problems
    assert 'vNPU id 101 is given more than once' in problems
    assert 'vgroup must be 0-3' in problems
    problems = npu_vnpu.layout_problems(_layout({'template': 'vir05_1c_8g', 'vgroup': 0}), '910B-inference', 0,
                                        _templates('910B-inference'), RESOURCES_910B4)
    assert any('vgroup is for Atlas inference products' in problem for problem in problems)


RESOURCES_A3_TRAINING = {'aicore': {'free': 24, 'total': 24}, 'memory_gb': {'free': 64, 'total': 64}}
A3_TRAINING_TEMPLATES = dict((name, values) for name, values in _templates('A3').items()
                             if name in ('vir06_1c_16g', 'vir12_3c_32g'))


def test_a3_die_layouts():
    # A training die (24 AI cores, 64 GB): two vir12 fill it, four vir06 as well.
    for layout in (_layout('vir12_3c_32g', 'vir12_3c_32g'), _layout(*['vir06_1c_16g'] * 4)):
        assert npu_vnpu.layout_problems(layout, 'A3', 3, A3_TRAINING_TEMPLATES, RESOURCES_A3_TRAINING) == []
    problems = ' | '.join(npu_vnpu.layout_problems(_layout('vir12_3c_32g', 'vir12_3c_32g', 'vir06_1c_16g'), 'A3', 3,
                                                   A3_TRAINING_TEMPLATES, RESOURCES_A3_TRAINING))
    assert 'needs 30 AI cores, the chip has 24' in problems and 'needs 80 GB of memory, the chip has 64 GB' in problems
    # An inference template on a training die: the die's own template-info decides, not the family's four.
    problems = npu_vnpu.layout_problems(_layout('vir10_3c_32g'), 'A3', 3, A3_TRAINING_TEMPLATES, RESOURCES_A3_TRAINING)
    assert problems and 'vir10_3c_32g is not one this chip lists' in problems[0]
    # Ids of die phy 3 are 148-163; without info-vnpu totals an A3 die counts the smaller 20 cores.
    problems = ' | '.join(npu_vnpu.layout_problems(_layout({'template': 'vir12_3c_32g', 'id': 100}, 'vir12_3c_32g'),
                                                   'A3', 3, A3_TRAINING_TEMPLATES, {}))
    assert 'vNPU id 100 is outside 148-163' in problems and 'needs 24 AI cores, the chip has 20' in problems


def test_unsupported_chip():
    problems = npu_vnpu.layout_problems(_layout('vir02'), None, 0, {}, {})
    assert any('no static vNPU support' in problem for problem in problems)


@pytest.mark.parametrize('entry', [42, {'templat': 'vir02'}, {'template': 'vir02', 'id': '100'},
                                   {'template': 'vir02', 'vgroup': True}, {'template': 'vir02', 'color': 1}])
def test_normalize_refuses(entry):
    with pytest.raises(ValueError):
        npu_vnpu.normalize_layout([entry])


def _vnpu(vnpu_id, template, vgroup_id=None, in_use=False):
    return {'vnpu_id': vnpu_id, 'vgroup_id': vgroup_id, 'template': template, 'container_id': '0', 'status': '0',
            'in_use': in_use}


def test_diff_converged_is_empty():
    present = [_vnpu(100, 'vir02', 0), _vnpu(101, 'vir04', 1)]
    keep, destroy, create = npu_vnpu.layout_diff(_layout('vir04', 'vir02'), present)
    assert (destroy, create) == ([], [])
    assert sorted(v['vnpu_id'] for v in keep) == [100, 101]


def test_diff_changes_only_what_differs():
    present = [_vnpu(100, 'vir02'), _vnpu(101, 'vir02'), _vnpu(102, 'vir04')]
    keep, destroy, create = npu_vnpu.layout_diff(_layout('vir02', 'vir02', 'vir02', 'vir02'), present)
    assert [v['vnpu_id'] for v in destroy] == [102]
    assert [entry['template'] for entry in create] == ['vir02', 'vir02']
    assert len(keep) == 2


def test_pinned_id_not_taken_by_an_unpinned_entry():
    present = [_vnpu(100, 'vir02'), _vnpu(101, 'vir04')]
    keep, destroy, create = npu_vnpu.layout_diff(
        _layout('vir04', {'template': 'vir02', 'id': 101}), present)
    # 101 must be freed for the pinned vir02; the unpinned vir04 cannot keep it.
    assert sorted(v['vnpu_id'] for v in destroy) == [100, 101]
    assert sorted(entry['template'] for entry in create) == ['vir02', 'vir04']
    assert keep == []


TEMPLATE_NAMES = sorted(npu_vnpu.TEMPLATES['310P'])
wanted_entries = st.fixed_dictionaries({
    'template': st.sampled_from(TEMPLATE_NAMES),
    'vnpu_id': st.one_of(st.none(), st.integers(100, 107)),
    'vgroup_id': st.one_of(st.none(), st.integers(0, 3)),
})
present_vnpus = st.lists(st.tuples(st.sampled_from(TEMPLATE_NAMES), st.integers(0, 3)), max_size=8).map(
    lambda items: [_vnpu(100 + index, template, vgroup) for index, (template, vgroup) in enumerate(items)])


@settings(max_examples=300, deadline=None)
@given(st.lists(wanted_entries, max_size=8), present_vnpus)
def test_diff_properties(wanted, present):
    keep, destroy, create = npu_vnpu.layout_diff(wanted, present)
    # Every present vNPU is kept or destroyed, never both, never lost.
    assert sorted(v['vnpu_id'] for v in keep + destroy) == sorted(v['vnpu_id'] for v in present)
    # Every wanted entry is served by a kept vNPU or created.
    assert len(keep) + len(create) == len(wanted)
    # After acting, the layout is converged: created vNPUs get the id and vGroup asked for (or free ones).
    taken = set(v['vnpu_id'] for v in keep)
    free = iter(sorted(set(range(100, 116)) - taken - set(e['vnpu_id'] for e in create if e['vnpu_id'])))
    created = []
    for entry in create:
        created.append(_vnpu(entry['vnpu_id'] if entry['vnpu_id'] is not None else next(free), entry['template'],
                             entry['vgroup_id'] if entry['vgroup_id'] is not None else 0))
    if len(set(e['vnpu_id'] for e in wanted if e['vnpu_id'] is not None)) == len(
            [e for e in wanted if e['vnpu_id'] is not None]):
        destroy_again, create_again = npu_vnpu.layout_diff(wanted, keep + created)[1:]
        assert (destroy_again, create_again) == ([], [])


def _render_info_vnpu(vnpus):
    rule = '+' + '-' * 79 + '+'
    lines = [rule, '| AICORE    Memory    AICPU |', '| 8/8       24/24     8/8   |', rule,
             '| Total number of vnpu: %d |' % len(vnpus), rule,
             '|  Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name       |', rule]
    for vnpu in vnpus:
        lines.append('|  %-8d |  %-13d |  %-13s |  %-7s |  %-19s |' % (
            vnpu['vnpu_id'], vnpu['vgroup_id'], vnpu['container_id'], vnpu['status'], vnpu['template']))
        lines.append(rule)
    return '\n'.join(lines) + '\n'


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({
    'vnpu_id': st.integers(100, 4000), 'vgroup_id': st.integers(0, 3),
    'container_id': st.one_of(st.just('000000000000'), st.text('0123456789abcdef', min_size=12, max_size=12)),
    'status': st.sampled_from(['0', '1']), 'template': st.sampled_from(TEMPLATE_NAMES)}), max_size=16))
def test_info_vnpu_round_trip(vnpus):
    parsed = npu_vnpu.parse_info_vnpu(_render_info_vnpu(vnpus))
    expected = [dict(v, in_use=not (set(v['container_id']) == {'0'} and v['status'] == '0')) for v in vnpus]
    assert parsed['vnpus'] == expected


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_info_vnpu_never_crashes_otherwise(text):
    try:
        npu_vnpu.parse_info_vnpu(text)
    except (ValueError, NpuSmiError):
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_template_info_never_crashes_otherwise(text):
    try:
        npu_vnpu.parse_template_info(text)
    except (ValueError, NpuSmiError):
        pass


@pytest.mark.parametrize('text, expected', [
    ('\tStatus                         : OK\n\tMessage                        : Create vnpu success\n', True),
    ('Status : FAILED\nMessage : resource not enough\n', False),
    ('', False),
])
def test_created(text, expected):
    if expected:
        assert npu_vnpu.parse_created(text) == 'Create vnpu success'
    else:
        with pytest.raises(ValueError):
            npu_vnpu.parse_created(text)


def test_destroyed():
    text = '  Status                         : OK\n  Message                        : Destroy vnpu 100 success\n'
    assert npu_vnpu.parse_destroyed(text, 100) == 'Destroy vnpu 100 success'
    with pytest.raises(ValueError):
        npu_vnpu.parse_destroyed(text, 101)


def test_mode_and_recover():
    assert npu_vnpu.parse_mode('    vnpu-mode                      : docker\n') == 'docker'
    assert npu_vnpu.parse_mode('garbage') is None
    assert npu_vnpu.parse_recover('VNPU config recover mode : Enable\n') is True
    assert npu_vnpu.parse_recover('VNPU config recover mode : Disable\n') is False
    assert npu_vnpu.parse_recover('') is None
