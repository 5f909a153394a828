# -*- coding: utf-8 -*-
"""Every variant of npu-smi's vNPU outputs that a public capture or Huawei's open npu-smi source
shows (docs/huawei-sources.md, "Outputs no public capture confirms"), read by the parsers."""
import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu


def test_info_vnpu_without_vnpus_and_without_the_table_header(synthetic):
    # 910B4 on npu-smi 26.0.rc1: "Total number of vnpu: 0" and no "Vnpu ID ... Template Name" row.
    parsed = npu_vnpu.parse_info_vnpu(synthetic('npu_smi_synthetic/info-vnpu_910B4_26.0.rc1_none-no-header.txt'))
    assert parsed['vnpus'] == []
    assert parsed['resources']['aicore'] == {'free': 20, 'total': 20}
    assert parsed['resources']['memory_gb'] == {'free': 28, 'total': 32}


def test_info_vnpu_without_the_table_header_but_with_vnpus_refused(synthetic):
    text = synthetic('npu_smi_synthetic/info-vnpu_910B4_26.0.rc1_none-no-header.txt').replace('vnpu: 0', 'vnpu: 2')
    with pytest.raises(ValueError, match='says 2 vNPUs'):
        npu_vnpu.parse_info_vnpu(text)


def test_info_vnpu_na_cells(synthetic):
    # npu-smi prints NA for a resource, vGroup, container, status or template it could not read.
    parsed = npu_vnpu.parse_info_vnpu(synthetic('npu_smi_synthetic/info-vnpu_310P3_na-cells.txt'))
    assert parsed['resources']['aicore'] == {'free': None, 'total': None}
    first, second = parsed['vnpus']
    assert (first['vnpu_id'], first['vgroup_id'], first['template']) == (100, None, 'vir04')
    # Whether a container holds it is not reported: not known to be free.
    assert first['in_use'] is True
    assert (second['vnpu_id'], second['vgroup_id'], second['template'], second['in_use']) == (101, 1, None, False)


def test_info_vnpu_bare_layout_of_a_user_report():
    # A 310P user report: the table without its borders, a '|' left at the end of some lines.
    text = ('Format:Free/Total                   NA: Currently, query is not supported.    |\n'
            ' AICORE    Memory    AICPU    VPC    VENC    VDEC    JPEGD    JPEGE    PNGD    |\n'
            '            GB\n'
            ' 4/8       21/42     3/7      6/12   1/3     6/12    8/16     4/8      NA/NA\n'
            'Total number of vnpu: 1 \n'
            'Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name\n'
            '212      |  0             |  000000000000  |  0       |  vir04\n')
    parsed = npu_vnpu.parse_info_vnpu(text)
    assert [(v['vnpu_id'], v['vgroup_id'], v['template'], v['in_use']) for v in parsed['vnpus']] == [
        (212, 0, 'vir04', False)]
    assert parsed['resources']['memory_gb'] == {'free': 21, 'total': 42}


@pytest.mark.parametrize('line, cause', [
    # npu-smi's source (info-vnpu, template-info, create-vnpu, destroy-vnpu): printed with exit status 0.
    ('The vnpu is not in docker mode, does not support querying info-vnpu.', 'VM mode'),
    ('The vnpu is not in docker mode, does not support setting create-vnpu.', 'VM mode'),
    ('Failed to get vnpu mode.', 'could not read the vNPU mode'),
    ('NPU is working in SMP mode, does not support vnpu query.', 'SMP mode'),
    ('NPU is working in SMP mode, does not support querying template-info', 'SMP mode'),
    ('NPU is working in SMP mode, does not support vnpu creation.', 'SMP mode'),
    ('Failed to get npu work mode.', 'could not read the NPU work mode'),
    ('This command cannot be executed on a VM or container.', 'VM or a container'),
    ('This device does not support querying info-vnpu.', 'no vNPU support'),
    ('This device does not support setting create-vnpu.', 'no vNPU support'),
    ('Failed to get template info.', 'could not read the templates'),
    ('create vnpu failed.', 'refused the change'),
    ('destroy vnpu 101 failed.', 'refused the change'),
])
def test_refusals_printed_with_success_are_named(line, cause):
    for parser in (npu_vnpu.parse_info_vnpu, npu_vnpu.parse_template_info, npu_vnpu.parse_created):
        with pytest.raises(npu_vnpu.VnpuUnavailable) as raised:
            parser(line + '\n')
        assert raised.value.line == line
        assert cause in raised.value.cause and raised.value.fix
    with pytest.raises(npu_vnpu.VnpuUnavailable):
        npu_vnpu.parse_destroyed(line + '\n', 100)


@pytest.mark.parametrize('parser, line', [
    (npu_vnpu.parse_mode, 'Failed to get vnpu mode.'),
    (npu_vnpu.parse_recover, 'NPU is working in SMP mode, does not support querying vnpu-cfg-recover'),
    (npu_vnpu.parse_recover, 'This command cannot be executed on a VM or container.'),
])
def test_mode_and_recovery_refusals_are_not_read_as_unset(parser, line):
    with pytest.raises(npu_vnpu.VnpuUnavailable):
        parser(line + '\n')


ROW = '|  %-4s     |  %-12s  |  %-12s  |  %-2s      |  %-15s     |'


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(100, 4000), st.sampled_from(['0', '3', 'NA']),
                          st.sampled_from(['000000000000', '00000000beef', 'NA']), st.sampled_from(['0', '1', 'NA']),
                          st.sampled_from(['vir02', 'vir10_3c_16g', 'NA'])), max_size=16), st.booleans())
def test_info_vnpu_reads_na_anywhere_and_an_absent_header_only_when_empty(rows, header):
    lines = ['| AICORE    Memory    AICPU |', '| NA/NA     8/24      NA/8  |', '| Total number of vnpu: %d |' % len(rows)]
    if rows or header:
        lines.append(ROW % ('Vnpu ID', 'Vgroup ID', 'Container ID', 'Status', 'Template Name'))
    lines += [ROW % row for row in rows]
    parsed = npu_vnpu.parse_info_vnpu('\n'.join(lines) + '\n')
    assert [vnpu['vnpu_id'] for vnpu in parsed['vnpus']] == [row[0] for row in rows]
    for vnpu, (_id, vgroup, container, status, template) in zip(parsed['vnpus'], rows):
        assert vnpu['vgroup_id'] == (None if vgroup == 'NA' else int(vgroup))
        assert vnpu['template'] == (None if template == 'NA' else template)
        # Free only when npu-smi says so: no container and status 0.
        assert vnpu['in_use'] is not (container == '000000000000' and status == '0')


def test_unknown_output_names_its_first_line():
    with pytest.raises(ValueError) as raised:
        npu_vnpu.parse_info_vnpu('\n  Something new happened here\nand more\n')
    assert not isinstance(raised.value, npu_vnpu.VnpuUnavailable)
    assert npu_vnpu.first_line('\n  Something new happened here\nand more\n') == 'Something new happened here'
    assert npu_vnpu.first_line('') == '(no output)'


def test_template_info_na_aicore_and_fractional_aicpu(synthetic):
    templates = npu_vnpu.parse_template_info(synthetic('npu_smi_synthetic/template-info_310P3_na-aicore.txt'))
    assert templates == {
        'vir01': {'aicore': None, 'memory_gb': 3, 'aicpu': 0.5},
        'vir02': {'aicore': None, 'memory_gb': 6, 'aicpu': 2},
        'vir04': {'aicore': 4, 'memory_gb': None, 'aicpu': 4},
    }


def test_template_info_of_a_server_with_mixed_cards(synthetic):
    text = synthetic('npu_smi_synthetic/template-info_mixed-cards.txt')
    assert npu_vnpu.template_info_is_mixed(text) is True
    assert sorted(npu_vnpu.parse_template_info(text)) == ['vir02', 'vir16']
    assert npu_vnpu.template_info_is_mixed(synthetic('npu_smi_synthetic/template-info_310P3.txt')) is False


def test_layout_fit_with_na_aicore_takes_the_cores_from_the_name(synthetic):
    # Issue 40: AICORE NA in template-info made the fit check raise TypeError.
    templates = npu_vnpu.parse_template_info(synthetic('npu_smi_synthetic/template-info_310P3_na-aicore.txt'))
    resources = {'aicore': {'free': 8, 'total': 8}, 'memory_gb': {'free': 24, 'total': 24}}
    fits = npu_vnpu.normalize_layout(['vir02', 'vir02', 'vir04'])
    assert npu_vnpu.layout_problems(fits, '310P', 0, templates, resources) == []
    too_many = npu_vnpu.normalize_layout(['vir04', 'vir04', 'vir02'])
    problems = npu_vnpu.layout_problems(too_many, '310P', 0, templates, resources)
    assert any('needs 10 AI cores, the chip has 8' in problem for problem in problems)
    problems = npu_vnpu.layout_problems(npu_vnpu.normalize_layout(['vir02'] * 3), '910B-inference', 0,
                                        {'vir02': {'aicore': None, 'memory_gb': None, 'aicpu': None}},
                                        {'aicore': {'free': None, 'total': None}})
    assert problems == []


@pytest.mark.parametrize('name', ['910A', '910B', 'Ascend 910B', '910ProA', '910ProB', '910PremiumA'])
def test_legacy_910_chips_have_static_templates(name):
    assert npu_vnpu.chip_family(name) == '910'
    assert sorted(npu_vnpu.TEMPLATES['910']) == ['vir02', 'vir04', 'vir08', 'vir16']
    assert list(npu_vnpu.vnpu_id_range('910', 1)) == list(range(116, 132))
    assert npu_vnpu.resource_name('vir08', '910') == 'Ascend910-8c'


def test_legacy_910_layout_fits():
    templates = dict((name, {'aicore': cores, 'memory_gb': None, 'aicpu': None})
                     for name, (cores, _memory, _cpus) in npu_vnpu.TEMPLATES['910'].items())
    resources = {'aicore': {'free': 30, 'total': 30}, 'memory_gb': {'free': 32, 'total': 32}}
    assert npu_vnpu.layout_problems(npu_vnpu.normalize_layout(['vir16', 'vir08', 'vir04', 'vir02']), '910', 0,
                                    templates, resources) == []
    problems = npu_vnpu.layout_problems(npu_vnpu.normalize_layout(['vir16', 'vir16']), '910', 0, templates, resources)
    assert any('needs 32 AI cores, the chip has 30' in problem for problem in problems)


@pytest.mark.parametrize('text, mode', [
    ('\tvnpu-mode                      : docker\n', 'docker'),
    ('\tvnpu-mode                      : VM\n', 'vm'),
])
def test_mode_as_npu_smi_prints_it(text, mode):
    assert npu_vnpu.parse_mode(text) == mode


@pytest.mark.parametrize('text, ok, message', [
    ('\tStatus                         : OK\n\tMessage                        : Set vnpu docker mode success\n',
     True, 'Set vnpu docker mode success'),
    ('\tStatus                         : Fail\n\tMessage                        : The vNPU(s) in another mode '
     'already exist. Destroy them before switching the mode\n', False, 'The vNPU(s) in another mode'),
    ('\tStatus                         : OK\n\tMessage                        : The VNPU config recover mode Enable '
     'is set successfully.\n', True, 'recover mode Enable'),
])
def test_set_answers(text, ok, message):
    assert npu_vnpu.parse_set_result(text)[0] is ok
    assert message in npu_vnpu.parse_set_result(text)[1]
