# -*- coding: utf-8 -*-
"""The Grafana dashboard the exporter role ships: a structure Grafana imports, on the datasource
the importer picks, over the npu-exporter metrics of the facts reference (section 9)."""

import json
import os
import re

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DASHBOARD = os.path.join(REPO_ROOT, 'roles', 'exporter', 'files', 'npu-ascend-dashboard.json')

# npu-exporter metrics named in the facts reference.
EXPORTER_METRICS = {
    'machine_npu_nums', 'npu_chip_info_health_status', 'npu_chip_info_temperature', 'npu_chip_info_power',
    'npu_chip_info_utilization', 'npu_chip_info_hbm_used_memory', 'npu_chip_info_hbm_total_memory',
    'npu_chip_info_error_code', 'npu_chip_info_network_status', 'npu_chip_info_link_status',
}
PROMQL_FUNCTIONS = {'sum', 'count', 'max', 'min', 'avg', 'vector', 'or', 'by', 'rate', 'label_values'}
DATASOURCE = {'type': 'prometheus', 'uid': '${datasource}'}


@pytest.fixture(scope='module')
def dashboard():
    with open(DASHBOARD) as handle:
        return json.load(handle)


def metric_names(expression):
    without_selectors = re.sub(r'\{[^}]*\}', '', expression)
    without_strings = re.sub(r'"[^"]*"', '', without_selectors)
    return {name for name in re.findall(r'[a-zA-Z_:][a-zA-Z0-9_:]*', without_strings)
            if name not in PROMQL_FUNCTIONS}


def test_is_an_importable_dashboard(dashboard):
    assert dashboard['uid'] and dashboard['title']
    assert isinstance(dashboard['schemaVersion'], int)
    # An exported dashboard carries no database id; Grafana assigns one at import.
    assert 'id' not in dashboard


def test_datasource_is_a_variable_the_importer_chooses(dashboard):
    variables = {variable['name']: variable for variable in dashboard['templating']['list']}
    assert variables['datasource']['type'] == 'datasource'
    assert variables['datasource']['query'] == 'prometheus'
    assert variables['node']['datasource'] == DATASOURCE
    for panel in dashboard['panels']:
        assert panel['datasource'] == DATASOURCE, panel['title']
        for target in panel['targets']:
            assert target['datasource'] == DATASOURCE, panel['title']


def test_panels_have_unique_ids_and_do_not_overlap(dashboard):
    ids = [panel['id'] for panel in dashboard['panels']]
    assert len(ids) == len(set(ids))
    cells = set()
    for panel in dashboard['panels']:
        grid = panel['gridPos']
        assert 0 <= grid['x'] and grid['x'] + grid['w'] <= 24, panel['title']
        for x in range(grid['x'], grid['x'] + grid['w']):
            for y in range(grid['y'], grid['y'] + grid['h']):
                assert (x, y) not in cells, 'panel %s overlaps another' % panel['title']
                cells.add((x, y))


def test_queries_use_only_exporter_metrics_and_the_node_variable(dashboard):
    for panel in dashboard['panels']:
        assert panel['targets'], panel['title']
        for target in panel['targets']:
            names = metric_names(target['expr'])
            assert names and names <= EXPORTER_METRICS, (panel['title'], names - EXPORTER_METRICS)
            assert 'node=~"$node"' in target['expr'], panel['title']
    node_query = next(v for v in dashboard['templating']['list'] if v['name'] == 'node')['definition']
    assert metric_names(node_query.replace('node)', ')')) <= EXPORTER_METRICS


@pytest.mark.parametrize('metric, unit', [
    ('npu_chip_info_health_status', None),
    ('npu_chip_info_utilization', 'percent'),
    ('npu_chip_info_temperature', 'celsius'),
    ('npu_chip_info_power', 'watt'),
    ('npu_chip_info_hbm_used_memory', 'decmbytes'),
])
def test_each_quantity_has_a_per_chip_panel(dashboard, metric, unit):
    per_chip = [panel for panel in dashboard['panels']
                if any(metric in target['expr'] and '{{id}}' in target['legendFormat']
                       and '{{node}}' in target['legendFormat'] for target in panel['targets'])]
    assert per_chip, 'no per-node, per-chip panel for %s' % metric
    if unit:
        assert any(panel['fieldConfig']['defaults'].get('unit') == unit for panel in per_chip)
