"""A real Prometheus for the tests: start it, ask its HTTP API, check a Grafana dashboard against it.

The binary is the one tests/k8s/build.sh builds from the Prometheus Go module. `up` writes
nothing but the state directory (the given configuration is used as it is), listens on a free
loopback port and waits for /-/ready; `down` stops the process group and removes the directory.

    prometheus.py up --state-dir DIR --config FILE
    prometheus.py wait-targets --state-dir DIR --job node --count 2
    prometheus.py wait-alert --state-dir DIR --alert AscendNpuChipUnhealthy --label node=a2 [--absent]
    prometheus.py check-dashboard --state-dir DIR --dashboard FILE
    prometheus.py down --state-dir DIR [--keep-logs]

Every failure is one line on stderr and exit status 1. Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / 'build.sh'
READY_TIMEOUT_SECONDS = 90
REQUEST_TIMEOUT_SECONDS = 20

# Grafana's built-in interval variables, given the values a dashboard over a short range would get.
_BUILTIN_VARIABLES = {'__interval': '1m', '__rate_interval': '1m', '__range': '5m', '__interval_ms': '60000'}
_LABEL_VALUES = re.compile(r'^\s*label_values\(\s*(?:(?P<metric>.+?)\s*,\s*)?(?P<label>[a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$')


class PrometheusError(Exception):
    pass


# -- the dashboard's queries (pure) --------------------------------------------------------------

def _panels(panels):
    for panel in panels or []:
        yield panel
        # A collapsed row keeps its panels inside it.
        yield from _panels(panel.get('panels'))


def dashboard_queries(dashboard):
    """Every Prometheus query of the dashboard's panels: [(panel title, refId, expr)], in order."""
    queries = []
    for panel in _panels(dashboard.get('panels')):
        for target in panel.get('targets') or []:
            expr = target.get('expr')
            if expr and not target.get('hide'):
                queries.append((panel.get('title', '(untitled)'), target.get('refId', ''), expr))
    return queries


def dashboard_variables(dashboard):
    """The dashboard's query variables: [(name, label_values metric selector, label, allValue)]."""
    variables = []
    for variable in (dashboard.get('templating') or {}).get('list') or []:
        if variable.get('type') != 'query':
            continue
        query = variable.get('query')
        text = query.get('query', '') if isinstance(query, dict) else (query or '')
        match = _LABEL_VALUES.match(text)
        if not match:
            raise PrometheusError('variable %s: only label_values(...) queries are understood, got %r'
                                  % (variable.get('name'), text))
        variables.append((variable['name'], match.group('metric'), match.group('label'), variable.get('allValue')))
    return variables


def substitute(expr, values):
    """expr with Grafana's $name, ${name}, ${name:fmt} and [[name]] replaced from values."""
    every = dict(_BUILTIN_VARIABLES, **values)

    def replace(match):
        name = match.group('a') or match.group('b') or match.group('c')
        if name not in every:
            raise PrometheusError('the query %r uses $%s, which the dashboard does not define' % (expr, name))
        return every[name]
    return re.sub(r'\$\{(?P<a>\w+)(?::\w+)?\}|\[\[(?P<b>\w+)\]\]|\$(?P<c>\w+)', replace, expr)


def check_dashboard(dashboard, query, label_values, absent_metrics=()):
    """Problems of the dashboard against a Prometheus: a list of sentences, empty when every query has data.

    query(expr) returns the instant query's result list; label_values(metric, label) the values.
    Each variable must have values; every panel query then runs with the variables at their "All"
    value (a regex over every value, as the dashboard opens) and must return series. A panel may
    show no data for one node that lacks its metric (no HBM on a 310P): that is not a problem.
    ``absent_metrics``: metrics the scraped fleet is known not to export (the textfile has no RoCE
    link; npu-exporter reports it on training nodes): a query on one of them may return nothing.
    """
    problems = []
    choices = {}
    for name, metric, label, all_value in dashboard_variables(dashboard):
        if not label_values(metric, label):
            problems.append('variable $%s: label_values(%s, %s) has no values' % (name, metric or '', label))
        choices[name] = all_value or '.+'
    queries = dashboard_queries(dashboard)
    if not queries:
        problems.append('the dashboard has no Prometheus queries')
    for title, ref_id, expr in queries:
        try:
            concrete = substitute(expr, choices)
            result = query(concrete)
        except PrometheusError as error:
            problems.append('panel %r query %s: %s' % (title, ref_id, error))
            continue
        if not result and not any(metric in concrete for metric in absent_metrics):
            problems.append('panel %r query %s returns no series: %s' % (title, ref_id, concrete))
    return problems


# -- the process and its API -----------------------------------------------------------------------

def binary_path():
    output = subprocess.run(['bash', str(BUILD_SCRIPT), '--paths'], stdout=subprocess.PIPE, check=True,
                            universal_newlines=True).stdout
    paths = dict(line.split('=', 1) for line in output.splitlines() if '=' in line)
    return paths['PROMETHEUS']


def _free_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


class Prometheus:
    def __init__(self, state_dir):
        self.state_dir = Path(state_dir)
        self.state_file = self.state_dir / 'state.json'
        self.log_file = self.state_dir / 'prometheus.log'

    @property
    def state(self):
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            raise PrometheusError('no Prometheus state in %s: run `prometheus.py up` first' % self.state_dir)

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.state['port']

    def up(self, config, binary=None):
        if self.state_file.exists():
            print('prometheus.py: already running from %s, left alone' % self.state_dir, file=sys.stderr)
            return
        binary = binary or binary_path()
        if not os.access(binary, os.X_OK):
            raise PrometheusError('%s is missing: run %s (it builds Prometheus from its Go module)'
                                  % (binary, BUILD_SCRIPT))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        argv = [binary, '--config.file=%s' % Path(config).resolve(),
                '--storage.tsdb.path=%s' % (self.state_dir / 'data'),
                '--web.listen-address=127.0.0.1:%d' % port, '--storage.tsdb.retention.time=2h']
        with open(self.log_file, 'ab') as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True, env=dict(os.environ, LC_ALL='C'))
        self.state_file.write_text(json.dumps({'pid': process.pid, 'port': port, 'config': str(config)}) + '\n')
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise PrometheusError('prometheus exited %d at start: %s' % (process.returncode, self._log_tail()))
            try:
                with urllib.request.urlopen(self.url + '/-/ready', timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise PrometheusError('prometheus not ready within %d s: %s' % (READY_TIMEOUT_SECONDS, self._log_tail()))

    def _log_tail(self):
        try:
            return ' | '.join(self.log_file.read_text(errors='replace').splitlines()[-5:])
        except OSError:
            return '(no log)'

    def down(self, keep_logs=False):
        if not self.state_file.exists():
            return
        pid = self.state.get('pid')
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    os.killpg(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                continue
            break
        if keep_logs:
            shutil.rmtree(str(self.state_dir / 'data'), ignore_errors=True)
            self.state_file.unlink()
        else:
            shutil.rmtree(str(self.state_dir), ignore_errors=True)

    def api(self, path, **params):
        url = self.url + path + ('?' + urllib.parse.urlencode(params, doseq=True) if params else '')
        try:
            with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_SECONDS) as response:
                body = json.loads(response.read().decode())
        except urllib.error.HTTPError as error:
            body = json.loads(error.read().decode() or '{}')
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise PrometheusError('%s: %s' % (url, error))
        if body.get('status') != 'success':
            raise PrometheusError('%s: %s: %s' % (path, body.get('errorType'), body.get('error')))
        return body['data']

    def query(self, expr):
        return self.api('/api/v1/query', query=expr)['result']

    def label_values(self, metric, label):
        params = {'match[]': [metric]} if metric else {}
        return self.api('/api/v1/label/%s/values' % label, **params)

    def alerts(self):
        return self.api('/api/v1/alerts')['alerts']

    def targets(self):
        return self.api('/api/v1/targets', state='active')['activeTargets']


def _matching_alerts(alerts, name, labels, state):
    return [alert for alert in alerts
            if alert['labels'].get('alertname') == name and (state is None or alert['state'] == state)
            and all(alert['labels'].get(key) == value for key, value in labels.items())]


def _wait(what, condition, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        done, last = condition()
        if done:
            return last
        time.sleep(1)
    raise PrometheusError('%s: not within %d s; last seen: %s' % (what, timeout, json.dumps(last)[:1500]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # --state-dir before or after the command; the command's own copy only sets it when given.
    parser.add_argument('--state-dir', dest='state_dir')
    commands = parser.add_subparsers(dest='command', required=True)
    for name in ('up', 'down', 'wait-targets', 'wait-alert', 'check-dashboard', 'alerts'):
        command = commands.add_parser(name)
        command.add_argument('--state-dir', dest='state_dir', default=argparse.SUPPRESS)
    commands.choices['up'].add_argument('--config', required=True)
    commands.choices['down'].add_argument('--keep-logs', action='store_true')
    targets = commands.choices['wait-targets']
    targets.add_argument('--job', required=True)
    targets.add_argument('--count', type=int, required=True)
    targets.add_argument('--timeout', type=int, default=120)
    alert = commands.choices['wait-alert']
    alert.add_argument('--alert', required=True)
    alert.add_argument('--label', action='append', default=[], help='NAME=VALUE the alert must carry')
    alert.add_argument('--state', default='firing', help='firing (default) or pending')
    alert.add_argument('--absent', action='store_true', help='wait until no such alert is there, in any state')
    alert.add_argument('--timeout', type=int, default=180)
    commands.choices['check-dashboard'].add_argument('--dashboard', required=True)
    commands.choices['check-dashboard'].add_argument(
        '--absent-metric', action='append', default=[],
        help='a metric the scraped nodes do not export: queries on it may return nothing')
    args = parser.parse_args(argv)
    if not args.state_dir:
        parser.error('--state-dir is required')
    prometheus = Prometheus(args.state_dir)
    try:
        if args.command == 'up':
            prometheus.up(args.config)
        elif args.command == 'down':
            prometheus.down(args.keep_logs)
        elif args.command == 'alerts':
            print(json.dumps(prometheus.alerts(), indent=2, sort_keys=True))
        elif args.command == 'wait-targets':
            def healthy():
                mine = [target for target in prometheus.targets() if target['labels'].get('job') == args.job]
                return len([t for t in mine if t['health'] == 'up']) == args.count and len(mine) == args.count, mine
            found = _wait('%d healthy targets of job %s' % (args.count, args.job), healthy, args.timeout)
            print(json.dumps([target['labels'] for target in found], sort_keys=True))
        elif args.command == 'wait-alert':
            labels = dict(item.split('=', 1) for item in args.label)

            def seen():
                alerts = prometheus.alerts()
                matching = _matching_alerts(alerts, args.alert, labels, None if args.absent else args.state)
                return (not matching if args.absent else bool(matching)), (matching or alerts)
            what = '%s %s %s' % (args.alert, labels, 'gone' if args.absent else args.state)
            print(json.dumps(_wait(what, seen, args.timeout), sort_keys=True))
        elif args.command == 'check-dashboard':
            dashboard = json.loads(Path(args.dashboard).read_text())
            problems = check_dashboard(dashboard, prometheus.query, prometheus.label_values, args.absent_metric)
            if problems:
                raise PrometheusError('%s: %d problem(s): %s' % (args.dashboard, len(problems), '; '.join(problems)))
            for name, metric, label, _all in dashboard_variables(dashboard):
                print('variable $%s: %s' % (name, ', '.join(prometheus.label_values(metric, label))))
            print('%s: every query of %d returns series' % (args.dashboard, len(dashboard_queries(dashboard))))
    except PrometheusError as error:
        print('prometheus.py: %s' % error, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
