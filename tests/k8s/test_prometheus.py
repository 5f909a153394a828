# -*- coding: utf-8 -*-
"""The exporter role's alert rules and Grafana dashboard against a real Prometheus.

Prometheus (built by tests/k8s/build.sh from its Go module) scrapes a small HTTP server in this
test that serves what the textfile_metrics program writes for a real npu-smi sample (the same
renderer, npu-exporter's metric names). The rules are the role's template, rendered; the
dashboard is the role's file. The checker of prometheus.py is tested on its own first, so that a
pass below means the queries really returned series. molecule/monitoring does the same with
node_exporter on sandbox nodes and a chip made unhealthy in the fake hardware.
"""

import http.server
import importlib.util
import json
import os
import threading
import time
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

import prometheus

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def _module_utils(name):
    # Pure modules, loaded by path as the textfile_metrics role installs them on a node.
    spec = importlib.util.spec_from_file_location('npu_ascend_' + name, REPO_ROOT / 'plugins' / 'module_utils' / 'hardware' / (name + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


npu_metrics = _module_utils('npu_metrics')
npu_smi = _module_utils('npu_smi')
ROLE = REPO_ROOT / 'roles' / 'exporter'
DASHBOARD = json.loads((ROLE / 'files' / 'npu-ascend-dashboard.json').read_text(encoding='utf-8'))
SAMPLES = REPO_ROOT / 'tests' / 'fixtures' / 'samples' / 'npu-smi'


# -- the checker, without Prometheus ----------------------------------------------------------------

def test_every_expr_of_the_dashboard_file_is_found():
    text = (ROLE / 'files' / 'npu-ascend-dashboard.json').read_text(encoding='utf-8')
    assert len(prometheus.dashboard_queries(DASHBOARD)) == text.count('"expr"') > 0


def test_variables_and_substitution():
    assert prometheus.dashboard_variables(DASHBOARD) == [('node', 'machine_npu_nums', 'node', '.+')]
    assert prometheus.substitute('a{node=~"$node"} [[node]] ${node:regex} $__rate_interval',
                                 {'node': 'x'}) == 'a{node=~"x"} x x 1m'
    with pytest.raises(prometheus.PrometheusError, match=r'\$nodes'):
        prometheus.substitute('a{node=~"$nodes"}', {'node': 'x'})


def _fake_prometheus(series):
    """query and label_values over {metric: [labels]}: an expr returns data when it names a metric present."""
    def query(expr):
        return [labels for metric, rows in series.items() if metric in expr for labels in rows
                if 'node=~"' not in expr or any(value in expr or '.+' in expr for value in labels.values())]

    def label_values(metric, label):
        return sorted({labels[label] for labels in series.get(metric, []) if label in labels})
    return query, label_values


def _with_panel(expr, title='Broken panel'):
    dashboard = json.loads(json.dumps(DASHBOARD))
    dashboard['panels'].append({'type': 'timeseries', 'title': title, 'targets': [{'refId': 'Z', 'expr': expr}]})
    return dashboard


def test_a_panel_on_a_metric_nobody_exports_is_reported():
    every_metric = {name: [{'node': 'n1'}] for name in (
        'machine_npu_nums', 'npu_chip_info_health_status', 'npu_chip_info_temperature', 'npu_chip_info_power',
        'npu_chip_info_utilization', 'npu_chip_info_hbm_used_memory', 'npu_chip_info_hbm_total_memory',
        # npu-exporter's, on training nodes with RoCE ports (docs/hccn.md).
        'npu_chip_info_link_status')}
    query, label_values = _fake_prometheus(every_metric)
    assert prometheus.check_dashboard(DASHBOARD, query, label_values) == []
    # A fleet without training nodes has no RoCE link series: named as absent, its panel is no problem.
    query_inference, _values = _fake_prometheus(dict((name, rows) for name, rows in every_metric.items()
                                                     if name != 'npu_chip_info_link_status'))
    assert len(prometheus.check_dashboard(DASHBOARD, query_inference, label_values)) == 1
    assert prometheus.check_dashboard(DASHBOARD, query_inference, label_values,
                                      absent_metrics=['npu_chip_info_link_status']) == []
    problems = prometheus.check_dashboard(_with_panel('npu_chip_info_nobody_exports{node=~"$node"}'),
                                          query, label_values)
    assert problems == ["panel 'Broken panel' query Z returns no series: npu_chip_info_nobody_exports{node=~\".+\"}"]
    # Without HBM series (a 310P-only cluster) the HBM panels are reported, each by its title.
    query, label_values = _fake_prometheus({name: rows for name, rows in every_metric.items() if 'hbm' not in name})
    assert {problem.split(' query ')[0] for problem in prometheus.check_dashboard(DASHBOARD, query, label_values)} \
        == {"panel 'HBM used'", "panel 'HBM used (%)'"}


def test_a_variable_without_values_is_reported():
    query, label_values = _fake_prometheus({})
    problems = prometheus.check_dashboard(DASHBOARD, query, label_values)
    assert problems[0] == 'variable $node: label_values(machine_npu_nums, node) has no values'


# -- against the real Prometheus ------------------------------------------------------------------

def render_rules(**overrides):
    variables = yaml.safe_load((ROLE / 'defaults' / 'main.yml').read_text(encoding='utf-8'))
    variables.update(overrides, ansible_managed='test')
    text = (ROLE / 'templates' / 'npu-ascend-alerts.yml.j2').read_text(encoding='utf-8')
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text))


class _Exposition(http.server.BaseHTTPRequestHandler):
    """Serves /metrics/<node>: the textfile program's rendering of the node's sample, unhealthy chips applied;
    for a training node also each chip's RoCE link as npu-exporter reports it (links: chip position -> 1 up, 0
    down), the one series of the dashboard that no textfile carries."""
    nodes = {}
    links = {}

    def do_GET(self):  # noqa: N802 (http.server's name)
        node = self.path.rsplit('/', 1)[-1]
        if node not in self.nodes:
            self.send_error(404)
            return
        sample, unhealthy = self.nodes[node]
        info = npu_smi.parse_info((SAMPLES / sample).read_text(encoding='utf-8'))
        # The label id is the chip's position in the table (the N of /dev/davinciN).
        for index, chip in enumerate(info['chips']):
            if index in unhealthy:
                chip['health'] = 'Critical'
                chip['healthy'] = npu_smi.chip_is_healthy(chip)
        text = npu_metrics.render(info, scrape_time=time.time())
        if node in self.links:
            text += '# TYPE npu_chip_info_link_status gauge\n' + ''.join(
                'npu_chip_info_link_status{id="%d"} %d\n' % (index, status)
                for index, status in sorted(self.links[node].items()))
        body = text.encode()
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain; version=0.0.4')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope='module')
def scraped(tmp_path_factory):
    """A Prometheus scraping two nodes (an A2 and a 300I Duo sample) every second, with the role's rules."""
    if not os.access(prometheus.binary_path(), os.X_OK):
        pytest.fail('no Prometheus: run tests/k8s/build.sh (the control plane fixture would too)')
    _Exposition.nodes = {'test-a2': ('910B4_25.0.rc1.1_info.txt', set()), 'test-duo': ('310P3_25.5.2_info.txt', set()),
                         'test-train': ('910B3_24.1.rc2_info-with-processes.txt', set())}
    _Exposition.links = {'test-train': dict((index, 1) for index in range(8))}
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _Exposition)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    directory = tmp_path_factory.mktemp('prometheus')
    (directory / 'rules.yml').write_text(render_rules(exporter_prometheus_job='node', exporter_alert_unhealthy_for='2s',
                                                      exporter_alert_link_down_for='2s'))
    config = {
        'global': {'scrape_interval': '1s', 'evaluation_interval': '1s'},
        'rule_files': [str(directory / 'rules.yml')],
        # One job, one target per node: the node's path and its node label, as a user's config for
        # node_exporter sets the node label (docs/node-metrics.md).
        'scrape_configs': [{'job_name': 'node', 'static_configs': [
            {'targets': ['127.0.0.1:%d' % server.server_address[1]],
             'labels': {'node': node, '__metrics_path__': '/metrics/' + node}} for node in _Exposition.nodes]}]}
    (directory / 'prometheus.yml').write_text(yaml.safe_dump(config))
    running = prometheus.Prometheus(directory / 'state')
    running.up(directory / 'prometheus.yml')
    try:
        prometheus._wait('every node scraped', lambda: (
            len(running.query('machine_npu_nums{job="node"}')) == len(_Exposition.nodes), running.targets()), timeout=60)
        yield running
    finally:
        running.down()
        server.shutdown()


def test_every_panel_returns_series_from_the_real_prometheus(scraped):
    assert prometheus.check_dashboard(DASHBOARD, scraped.query, scraped.label_values) == []


def test_the_real_prometheus_shows_a_panel_on_a_missing_metric(scraped):
    problems = prometheus.check_dashboard(_with_panel('sum(npu_chip_info_nobody_exports{node=~"$node"})'),
                                          scraped.query, scraped.label_values)
    assert problems == ["panel 'Broken panel' query Z returns no series: "
                        "sum(npu_chip_info_nobody_exports{node=~\".+\"})"]
    # A query Prometheus refuses is a problem too, with Prometheus's own reason.
    problems = prometheus.check_dashboard(_with_panel('sum(machine_npu_nums{node=~"$node"}'),
                                          scraped.query, scraped.label_values)
    assert len(problems) == 1 and 'bad_data' in problems[0]


def _assert_alert_fires_on_one_chip_and_resolves(scraped, alertname, fault, clear, node, chip, summary):
    """Quiet past the rule's `for`; with ``fault()`` the alert fires for that node and chip only, with its
    summary; after ``clear()`` it resolves."""
    def alerts():
        return [alert for alert in scraped.alerts() if alert['labels']['alertname'] == alertname]

    time.sleep(4)
    assert alerts() == []
    fault()
    try:
        firing = prometheus._wait('the alert firing', lambda: (
            [a for a in alerts() if a['state'] == 'firing'], alerts()), timeout=60)
        assert [(alert['labels']['node'], alert['labels']['id']) for alert in firing] == [(node, chip)]
        assert firing[0]['annotations']['summary'] == summary
    finally:
        clear()
    prometheus._wait('the alert resolved', lambda: (alerts() == [], alerts()), timeout=60)


def test_an_unhealthy_chip_fires_the_alert_on_its_node_only(scraped):
    def chip_3(unhealthy):
        _Exposition.nodes['test-a2'] = ('910B4_25.0.rc1.1_info.txt', unhealthy)

    _assert_alert_fires_on_one_chip_and_resolves(
        scraped, 'AscendNpuChipUnhealthy', lambda: chip_3({3}), lambda: chip_3(set()),
        'test-a2', '3', 'NPU chip 3 on test-a2 is unhealthy')


def test_a_roce_link_down_fires_the_alert_on_its_node_and_chip_only(scraped):
    def link_5(status):
        _Exposition.links['test-train'][5] = status

    _assert_alert_fires_on_one_chip_and_resolves(
        scraped, 'AscendNpuRoceLinkDown', lambda: link_5(0), lambda: link_5(1),
        'test-train', '5', 'The RoCE link of NPU chip 5 on test-train is down')
