# -*- coding: utf-8 -*-
"""npu_metrics renders what npu_smi.parse_info reads from the real npu-smi samples as Prometheus
text: npu-exporter's names, the chips' values, HELP/TYPE lines, escaping; promtool checks it
when tests/k8s/build.sh has built one."""

import math
import os
import re
import subprocess

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_metrics
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import NpuSmiError, parse_info

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

INFO_SAMPLES = [
    '310B4_23.0.rc3_info.txt',
    '310P3_22.0.4_info-vm.txt',
    '310P3_25.5.2_info.txt',
    '910-masked_23.0.rc3_info-with-processes.txt',
    '910B-legacy910_24.1.0_info.txt',
    '910B2_23.0.7_info.txt',
    '910B3_24.1.rc2_info-with-processes.txt',
    '910B4_25.0.rc1.1_info.txt',
    'Ascend910-A3_24.1.rc3.7_info.txt',
]

_SAMPLE_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')


def unescape(value):
    return re.sub(r'\\(.)', lambda match: '\n' if match.group(1) == 'n' else match.group(1), value)


def parse_exposition(text):
    """A strict reader of the text format as written here: {name: [(labels dict, float)]}.

    Also checks that each family has one HELP and one TYPE line before its samples and that no
    family is split.
    """
    assert text.endswith('\n')
    families = {}
    declared = []
    current = None
    for line in text.splitlines():
        if line.startswith('# HELP '):
            name = line.split(' ')[2]
            assert name not in declared, 'family %s declared twice' % name
            declared.append(name)
            current = name
            families[name] = []
            continue
        if line.startswith('# TYPE '):
            parts = line.split(' ')
            assert parts[2] == current and parts[3] == 'gauge', line
            continue
        match = _SAMPLE_LINE.match(line)
        assert match, 'not a sample line: %r' % line
        name, label_text, value = match.groups()
        assert name == current, 'sample of %s outside its family %s' % (name, current)
        labels = {}
        if label_text:
            consumed = ''.join(item.group(0) for item in _LABEL.finditer(label_text))
            assert consumed == label_text, 'unparsable labels %r' % label_text
            labels = dict((key, unescape(raw)) for key, raw in _LABEL.findall(label_text))
        families[name].append((labels, float(value)))
    return families


def by_id(series):
    return dict((int(labels['id']), value) for labels, value in series)


@pytest.fixture(scope='module')
def promtool():
    """promtool from tests/k8s/build.sh --paths, or None when it has not been built here."""
    completed = subprocess.run(['bash', os.path.join(REPO_ROOT, 'tests', 'k8s', 'build.sh'), '--paths'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, universal_newlines=True)
    match = re.search(r'^PROMTOOL=(.*)$', completed.stdout, re.MULTILINE)
    if completed.returncode != 0 or not match or not os.path.isfile(match.group(1)):
        return None
    return match.group(1)


def promtool_check(promtool, text):
    if promtool is None:
        pytest.skip('promtool is not built (bash tests/k8s/build.sh)')
    completed = subprocess.run([promtool, 'check', 'metrics'], input=text, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, check=False, universal_newlines=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.parametrize('name', INFO_SAMPLES)
def test_every_chip_of_every_sample(sample, name):
    info = parse_info(sample('npu-smi/' + name))
    chips = info['chips']
    families = parse_exposition(npu_metrics.render(info, scrape_time=1700000000))
    assert families['npu_ascend_textfile_scrape_success'] == [({}, 1.0)]
    assert families['npu_ascend_textfile_scrape_timestamp_seconds'] == [({}, 1700000000.0)]
    assert 'npu_ascend_textfile_npu_smi_error_code' not in families
    assert families['machine_npu_nums'] == [({}, float(len(chips)))]
    assert families['npu_ascend_driver_info'] == [
        ({'driver_version': info['driver_version'], 'tool_version': info['tool_version']}, 1.0)]

    health = families['npu_chip_info_health_status']
    assert len(health) == len(chips)
    for index, (chip, (labels, value)) in enumerate(zip(chips, health)):
        assert list(labels) == ['id', 'npu', 'chip', 'model', 'bus']
        assert labels == {'id': str(index), 'npu': str(chip['npu_id']), 'chip': str(chip['chip_id']),
                          'model': chip['name'], 'bus': chip['bus_id'] or ''}
        assert value == (1.0 if chip['health'] == 'OK' else 0.0)
    for metric, key in (('npu_chip_info_temperature', 'temp_c'), ('npu_chip_info_power', 'power_w'),
                        ('npu_chip_info_utilization', 'aicore_pct'), ('npu_chip_info_hbm_used_memory', 'hbm_used_mb'),
                        ('npu_chip_info_hbm_total_memory', 'hbm_total_mb'),
                        ('npu_ascend_chip_ddr_used_memory', 'memory_used_mb'),
                        ('npu_ascend_chip_ddr_total_memory', 'memory_total_mb'),
                        ('npu_ascend_chip_hugepages_used', 'hugepages_used'),
                        ('npu_ascend_chip_hugepages_capacity', 'hugepages_total')):
        expected = dict((index, float(chip[key])) for index, chip in enumerate(chips) if chip[key] is not None)
        assert by_id(families.get(metric, [])) == expected, metric


@pytest.mark.parametrize('name', INFO_SAMPLES)
def test_promtool_accepts_every_sample(sample, promtool, name):
    promtool_check(promtool, npu_metrics.render(parse_info(sample('npu-smi/' + name)), scrape_time=1700000000.25))


def test_910b4_values(sample):
    families = parse_exposition(npu_metrics.render(parse_info(sample('npu-smi/910B4_25.0.rc1.1_info.txt'))))
    assert families['machine_npu_nums'] == [({}, 8.0)]
    assert by_id(families['npu_chip_info_power'])[0] == 87.2
    assert by_id(families['npu_chip_info_hbm_used_memory'])[7] == 2653.0
    assert by_id(families['npu_chip_info_hbm_total_memory'])[7] == 32768.0
    assert families['npu_chip_info_temperature'][4][0]['bus'] == '0000:01:00.0'
    # No time given: no timestamp series.
    assert 'npu_ascend_textfile_scrape_timestamp_seconds' not in families


def test_a3_second_die_has_no_power_series(sample):
    families = parse_exposition(npu_metrics.render(parse_info(sample('npu-smi/Ascend910-A3_24.1.rc3.7_info.txt'))))
    assert families['machine_npu_nums'] == [({}, 16.0)]
    # npu-smi prints "-" for the second die of each card: left out, not exported as 0.
    assert sorted(by_id(families['npu_chip_info_power'])) == list(range(0, 16, 2))
    assert [labels['chip'] for labels, value in families['npu_chip_info_health_status'][:2]] == ['0', '1']


def test_310p_without_hbm_has_no_hbm_series(sample):
    families = parse_exposition(npu_metrics.render(parse_info(sample('npu-smi/310P3_25.5.2_info.txt'))))
    assert 'npu_chip_info_hbm_used_memory' not in families
    assert 'npu_chip_info_power' not in families  # printed NA
    assert families['npu_chip_info_health_status'] == [
        ({'id': '0', 'npu': '32896', 'chip': '0', 'model': '310P3', 'bus': '0000:00:00.0'}, 1.0)]


def test_unhealthy_chip_is_zero(sample, promtool):
    text = sample('npu-smi/910B4_25.0.rc1.1_info.txt')
    row = '| 3     910B4               | OK            |'
    assert row in text
    info = parse_info(text.replace(row, '| 3     910B4               | Critical      |'))
    rendered = npu_metrics.render(info, scrape_time=1700000000)
    health = by_id(parse_exposition(rendered)['npu_chip_info_health_status'])
    assert health == dict((index, 0.0 if index == 3 else 1.0) for index in range(8))
    promtool_check(promtool, rendered)


@pytest.mark.parametrize('health', ['Warning', 'Alarm', 'Critical', 'UNKNOWN', None, ''])
def test_health_other_than_ok_is_zero(health):
    info = {'chips': [{'npu_id': 0, 'chip_id': 0, 'name': '910B4', 'health': health, 'bus_id': None}]}
    assert parse_exposition(npu_metrics.render(info))['npu_chip_info_health_status'][0][1] == 0.0


def test_processes_are_counted_per_chip(sample):
    families = parse_exposition(npu_metrics.render(parse_info(sample('npu-smi/910B3_24.1.rc2_info-with-processes.txt'))))
    assert by_id(families['npu_ascend_chip_processes']) == dict((index, 1.0) for index in range(8))
    families = parse_exposition(npu_metrics.render(parse_info(sample('npu-smi/910B4_25.0.rc1.1_info.txt'))))
    assert by_id(families['npu_ascend_chip_processes']) == dict((index, 0.0) for index in range(8))


def test_npu_smi_failure_keeps_only_the_run_series(synthetic, promtool):
    with pytest.raises(NpuSmiError) as failure:
        parse_info(synthetic('npu_smi_synthetic/error_dcmi_-8005.txt'))
    rendered = npu_metrics.render(None, scrape_time=1700000000.5, error=failure.value)
    families = parse_exposition(rendered)
    assert families == {
        'npu_ascend_textfile_scrape_success': [({}, 0.0)],
        'npu_ascend_textfile_scrape_timestamp_seconds': [({}, 1700000000.5)],
        'npu_ascend_textfile_npu_smi_error_code': [({}, -8005.0)],
    }
    promtool_check(promtool, rendered)


def test_failure_without_code(sample):
    info = parse_info(sample('npu-smi/910B4_25.0.rc1.1_info.txt'))
    # An error wins over a parsed table: the caller says the run failed.
    families = parse_exposition(npu_metrics.render(info, error='npu-smi info timed out'))
    assert families == {'npu_ascend_textfile_scrape_success': [({}, 0.0)]}


def test_label_values_are_escaped(promtool):
    name = 'odd "name" with \\ and\nnewline'
    info = {'driver_version': '25.0.rc1.1', 'tool_version': '25.0.rc1.1', 'processes': [],
            'chips': [{'npu_id': 0, 'chip_id': 0, 'name': name, 'health': 'OK', 'bus_id': None, 'temp_c': 40}]}
    rendered = npu_metrics.render(info)
    assert 'model="odd \\"name\\" with \\\\ and\\nnewline"' in rendered
    assert parse_exposition(rendered)['npu_chip_info_temperature'][0][0]['model'] == name
    promtool_check(promtool, rendered)


def test_help_is_escaped():
    family = npu_metrics.MetricFamily('x_metric', 'back\\slash\nsecond line')
    family.add(1)
    assert family.render() == '# HELP x_metric back\\\\slash\\nsecond line\n# TYPE x_metric gauge\nx_metric 1\n'


@pytest.mark.parametrize('value, text', [
    (0, '0'), (87, '87'), (-8005, '-8005'), (True, '1'), (False, '0'), (87.2, '87.2'), (30.0, '30'),
    (1700000000.5, '1700000000.5'), (float('nan'), 'NaN'), (float('inf'), '+Inf'), (-float('inf'), '-Inf'),
])
def test_format_value(value, text):
    assert npu_metrics._format_value(value) == text
    if text not in ('NaN',):
        assert float(text) == (float(value) if not math.isinf(value) else value)


@pytest.mark.parametrize('name', ['0starts_with_digit', 'has-dash', 'has space', ''])
def test_invalid_metric_name(name):
    with pytest.raises(ValueError):
        npu_metrics.MetricFamily(name, 'help')


@pytest.mark.parametrize('label', ['__reserved', 'has-dash', '1x'])
def test_invalid_label_name(label):
    family = npu_metrics.MetricFamily('x_metric', 'help')
    with pytest.raises(ValueError):
        family.add(1, {label: 'v'})
