#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make bench`: provisions sandbox fleets from bare to validated and compares them with their floors.

On nodes named bench-01..bench-NN (inventory generated under .cache/bench/), each installer
lasting Huawei's own duration times --install-scale (the install_time_scale fault, applied by
the fake packages; sandbox/packages/build.py holds the durations):

1. the naive baseline: bench/naive.py runs the same installers node after node on one bare node
   of each model, timing each installer; the baseline of the main fleet is the sum over its
   nodes (the script does one node after the other, nothing overlaps);
2. the scale curve: for each N of --scale-points (and the main N), a fleet of N bare nodes gets
   playbooks/site.yml (the first run) and again (the converged run): per-node Ansible cost
   (controller CPU seconds, tasks) as N grows;
3. on the main fleet (--nodes) also a test control plane, playbooks/kubernetes.yml after the
   first site.yml, both playbooks again converged, and bench/noop.yml, the no-op floor: facts
   and one read per component on the same nodes;
4. with --levers, the converged site.yml again under each Ansible lever (bench/ansible.cfg
   holds the ones kept).

Timings per task, role and host, changed tasks and copied bytes come from the bench_json
callback (bench/callback_plugins). Writes bench/results.json, bench/results.png (with
.cache/bench/venv's matplotlib) and prints the ratios and whether each target is met.
Targets missed do not fail the run; a provisioning failure does (exit 1).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import datetime
import importlib
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH_DIR = os.path.join(REPO_ROOT, 'bench')
CACHE_DIR = os.path.join(REPO_ROOT, '.cache', 'bench')
INVENTORY_DIR = os.path.join(CACHE_DIR, 'inventory')
LOG_DIR = os.path.join(CACHE_DIR, 'logs')
RUNS_DIR = os.path.join(CACHE_DIR, 'runs')
K8S_STATE_DIR = os.path.join(CACHE_DIR, 'k8s')
MONITORING_DIR = os.path.join(CACHE_DIR, 'monitoring')
FACT_CACHE_DIR = os.path.join(CACHE_DIR, 'facts')
PARTIAL_RESULTS = os.path.join(CACHE_DIR, 'results.partial.json')
MITOGEN_DIR = os.path.join(CACHE_DIR, 'mitogen')
CHART_PYTHON = os.path.join(CACHE_DIR, 'venv', 'bin', 'python')
SANDBOX_INVENTORY = os.path.join(REPO_ROOT, 'inventories', 'sandbox')
PYTHON = sys.executable
PACKAGES_ROLE = 'npu.ascend.packages'

sys.path.insert(0, os.path.join(REPO_ROOT, 'sandbox'))
fleet = importlib.import_module('fleet')

# Node models, in turn: bench-01 is an Atlas 800I A2, bench-02 an Atlas 300I Duo, ...
MODELS = (
    {'sandbox_product': 'Atlas 800I A2', 'sandbox_chip_name': '910B4', 'sandbox_npu_count': 8,
     'sandbox_chips_per_npu': 1},
    {'sandbox_product': 'Atlas 300I Duo', 'sandbox_chip_name': '310P3', 'sandbox_npu_count': 1,
     'sandbox_chips_per_npu': 2},
)

TARGETS = {
    'converged_over_noop': 2.0,
    'converged_tasks_per_node': 20,
    'first_over_one_node': 1.3,
    'speedup_over_naive_per_node': 0.7,
}
# Huawei's installers take about 21 minutes a node (build.py's table); 0.025 makes that 32 s, so
# that the whole bench (naive baseline, fleets of 1, 2, 4 and 8 nodes) stays within a quarter of
# an hour on two idle cores.
DEFAULT_INSTALL_SCALE = 0.025
DEFAULT_SCALE_POINTS = '1,2,4,8'
# Tasks that run on the controller only: they cost Ansible time but no round trip to the node.
CONTROLLER_ACTIONS = frozenset(
    prefix + name for prefix in ('', 'ansible.builtin.', 'ansible.legacy.')
    for name in ('set_fact', 'debug', 'assert', 'fail', 'include_tasks', 'include_role', 'include_vars',
                 'import_tasks', 'import_role', 'meta', 'add_host', 'group_by', 'set_stats', 'pause'))


class BenchError(Exception):
    """Provisioning or set-up failed: the benchmark has no meaning, `make bench` fails."""


def log(message):
    print('bench: %s' % message, flush=True)


def load_average():
    with open('/proc/loadavg') as handle:
        return [float(value) for value in handle.read().split()[:3]]


# -- inventory ------------------------------------------------------------------------------


def promtool_path():
    result = subprocess.run(['bash', os.path.join(REPO_ROOT, 'tests', 'k8s', 'build.sh'), '--paths'],
                            capture_output=True, text=True, check=False)
    for line in result.stdout.splitlines():
        if line.startswith('PROMTOOL='):
            return line.split('=', 1)[1]
    raise BenchError('tests/k8s/build.sh --paths names no PROMTOOL (exit %d): run `bash tests/k8s/build.sh` '
                     'to build the control plane and promtool' % result.returncode)


def write_yaml(path, data, comment):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write('---\n# %s\n' % comment)
        yaml.safe_dump(data, handle, default_flow_style=False, sort_keys=True)


def bench_hosts(count):
    return ['bench-%02d' % index for index in range(1, count + 1)]


def write_inventory(hosts, install_scale):
    """The bench fleet of these hosts: the sandbox inventory's group variables (the stack, the
    connection), with the paths that inventory derives from its own location made absolute."""
    if os.path.isdir(INVENTORY_DIR):
        shutil.rmtree(INVENTORY_DIR)
    write_yaml(os.path.join(INVENTORY_DIR, 'hosts.yml'),
               {'all': {'children': {'npu_nodes': {'children': {'sandbox_nodes': {
                   'hosts': dict((host, None) for host in hosts)}}}}}},
               'Generated by bench/run.py; the bench fleet.')
    overrides = {
        'npu_nodes': {
            'packages_source_dir': str(fleet.PACKAGES_OUT_DIR),
            'k8s_kubeconfig': os.path.join(K8S_STATE_DIR, 'kubeconfig'),
            'k8s_context': 'npu-ascend-test',
            'validate_k8s_success_phases': ['Running', 'Succeeded'],
            'validate_k8s_check_output': False,
            'exporter_monitoring_dir': MONITORING_DIR,
            'exporter_promtool': promtool_path(),
            'fleet_report_dir': os.path.join(CACHE_DIR, 'fleet-report'),
        },
        # The connection and the packages to build, as the sandbox has them.
        'sandbox_nodes': {},
    }
    for group, extra in overrides.items():
        group_vars = fleet.load_vars_dir(fleet.Path(SANDBOX_INVENTORY) / 'group_vars', group)
        group_vars.update(extra)
        # The sandbox polls its second-long installers every 2 s; the bench's last Huawei's
        # durations, so the product's own poll interval applies (sandbox/inventory/sandbox_nodes.yml).
        for name in [name for name in group_vars if name.endswith('_installer_poll_interval')]:
            del group_vars[name]
        # A path the sandbox inventory derives from its own location (the SSH key, the podman
        # wrapper in the ProxyCommand) resolves where the sandbox's does.
        for name in sorted(name for name, value in group_vars.items()
                           if isinstance(value, str) and 'inventory_dir' in value):
            group_vars[name] = group_vars[name].replace('inventory_dir', repr(SANDBOX_INVENTORY))
        write_yaml(os.path.join(INVENTORY_DIR, 'group_vars', group, 'bench.yml'), group_vars,
                   'Generated by bench/run.py from inventories/sandbox/group_vars/%s.' % group)
    for host in hosts:
        host_vars = dict(host_model(host))
        host_vars.update({'sandbox_arch': 'x86_64', 'sandbox_unhealthy_chips': [],
                          'sandbox_faults': {'install_time_scale': install_scale}})
        write_yaml(os.path.join(INVENTORY_DIR, 'host_vars', host + '.yml'), host_vars,
                   'Generated by bench/run.py: each installer lasts Huawei\'s duration times install_time_scale.')
    return hosts


def host_model(host):
    """bench-01 is an Atlas 800I A2, bench-02 an Atlas 300I Duo, and so on in turn."""
    return MODELS[(int(host.rsplit('-', 1)[1]) - 1) % len(MODELS)]


def huawei_install_seconds():
    """The table of Huawei's installer durations the fake packages carry (for the report)."""
    spec = importlib.util.spec_from_file_location('bench_sandbox_package_builder', str(fleet.PACKAGE_BUILDER))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.HUAWEI_INSTALL_SECONDS)

# -- running things -------------------------------------------------------------------------


def run_logged(name, argv, env=None, fail=True):
    """Runs argv with its output in .cache/bench/logs/<name>.log; returns (seconds, returncode)."""
    os.makedirs(LOG_DIR, exist_ok=True)
    path = os.path.join(LOG_DIR, name + '.log')
    started = time.monotonic()
    with open(path, 'w') as handle:
        result = subprocess.run([str(a) for a in argv], stdout=handle, stderr=subprocess.STDOUT,
                                env=env, cwd=REPO_ROOT, check=False)
    seconds = time.monotonic() - started
    if result.returncode != 0 and fail:
        with open(path) as handle:
            tail = ''.join(handle.readlines()[-40:])
        raise BenchError('%s failed (exit %d) after %.0f s; last lines of %s:\n%s'
                         % (name, result.returncode, seconds, path, tail))
    log('%s: %.1f s' % (name, seconds))
    return seconds, result.returncode


def fleet_command(*args):
    return [PYTHON, os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'), '--inventory', INVENTORY_DIR] + list(args)


def controlplane_command(*args):
    return [PYTHON, os.path.join(REPO_ROOT, 'tests', 'k8s', 'controlplane.py')] + list(args) + [
        '--state-dir', K8S_STATE_DIR]


def ansible_env(forks, extra=None):
    env = dict(os.environ)
    env.update({
        'ANSIBLE_CONFIG': os.path.join(BENCH_DIR, 'ansible.cfg'),
        'ANSIBLE_FORKS': str(forks),
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(REPO_ROOT, '.cache', 'collections'),
        'ANSIBLE_NOCOLOR': '1',
    })
    env.update(extra or {})
    return env


def node_cpu_seconds():
    """CPU seconds the bench nodes' containers have used so far, from their cgroups (v1 cpuacct or
    v2 cpu.stat); None when a node's cgroup cannot be read."""
    total = 0.0
    for host in fleet.inventory_hosts(INVENTORY_DIR):
        current = fleet.Fleet.inspect(host)
        if current is None:
            # Not up in this phase (the single-node run has only the first node).
            continue
        cgroup = current.get('State', {}).get('CgroupPath', '').lstrip('/')
        if not cgroup:
            return None
        v1 = os.path.join('/sys/fs/cgroup/cpuacct', cgroup, 'cpuacct.usage')
        v2 = os.path.join('/sys/fs/cgroup', cgroup, 'cpu.stat')
        try:
            if os.path.exists(v1):
                with open(v1) as handle:
                    total += int(handle.read()) / 1e9
            else:
                with open(v2) as handle:
                    fields = dict(line.split() for line in handle if line.strip())
                total += int(fields['usage_usec']) / 1e6
        except (OSError, KeyError, ValueError):
            return None
    return total


def playbook(name, path, forks, extra_env=None, extra_args=()):
    """Runs one playbook with the timing callback; returns the callback's document."""
    os.makedirs(RUNS_DIR, exist_ok=True)
    out = os.path.join(RUNS_DIR, name + '.json')
    if os.path.exists(out):
        os.unlink(out)
    env = ansible_env(forks, dict(extra_env or {}, BENCH_JSON_OUT=out))
    before, nodes_before = resource.getrusage(resource.RUSAGE_CHILDREN), node_cpu_seconds()
    seconds, _rc = run_logged(name, ['ansible-playbook', '-i', INVENTORY_DIR, path] + list(extra_args), env=env)
    after, nodes_after = resource.getrusage(resource.RUSAGE_CHILDREN), node_cpu_seconds()
    with open(out) as handle:
        document = json.load(handle)
    document['process_seconds'] = round(seconds, 3)
    # ansible-playbook and its ssh processes; the modules run in the nodes, outside this count.
    document['controller_cpu_seconds'] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 3)
    # Everything the nodes ran meanwhile: modules, installers, systemd, containerd...
    document['nodes_cpu_seconds'] = (round(nodes_after - nodes_before, 3)
                                     if nodes_before is not None and nodes_after is not None else None)
    return document


def per_host_tasks(document):
    """{host: (tasks run, round trips to the node, tasks skipped)}; a task that ran twice on a
    host (handlers, loops of includes) counts once. Tasks run once for the whole fleet are not a
    node's own (run_once_tasks counts them), but their round trips to the node they ran on are."""
    counts = {}
    for task in document['tasks']:
        local = task['action'] in CONTROLLER_ACTIONS or task.get('delegated_to_controller')
        for host, record in task['hosts'].items():
            run, trips, skipped = counts.get(host, (0, 0, 0))
            if record['status'] == 'skipped':
                skipped += 0 if task.get('run_once') else 1
            else:
                run += 0 if task.get('run_once') else 1
                trips += 0 if local else 1
            counts[host] = (run, trips, skipped)
    return counts


def run_once_tasks(document):
    """How many tasks that run once for the whole fleet ran (were not skipped)."""
    return sum(1 for task in document['tasks'] if task.get('run_once')
               and any(record['status'] != 'skipped' for record in task['hosts'].values()))


def summarize(document, top=15):
    """What results.json keeps of a run: totals, per node, per role, the slowest tasks."""
    roles = {}
    for task in document['tasks']:
        role = task['role'] or '(play)'
        entry = roles.setdefault(role, {'wall': 0.0, 'host_seconds': 0.0, 'tasks': 0})
        entry['wall'] = round(entry['wall'] + task['wall'], 3)
        entry['host_seconds'] = round(entry['host_seconds'] + task['host_seconds'], 3)
        entry['tasks'] += 1
    slowest = sorted(document['tasks'], key=lambda t: t['wall'], reverse=True)[:top]
    installer_tasks = [t for t in document['tasks'] if t['action'] in ('npu.ascend.ascend_runfile', 'ascend_runfile')]
    counts = per_host_tasks(document)
    nodes = len(document['hosts']) or 1
    return {
        'wall_seconds': document['process_seconds'],
        'controller_cpu_seconds': document['controller_cpu_seconds'],
        'nodes_cpu_seconds': document['nodes_cpu_seconds'],
        'callback_wall_seconds': document['wall_seconds'],
        'changed_tasks': document['changed_tasks'],
        'changed_by_host': dict((h, s.get('changed', 0)) for h, s in document['hosts'].items()),
        # The packages role stages the .run files; other copies (the exporter's monitoring
        # files on the controller) are counted apart.
        'copied_bytes': document['copied']['by_role'].get(PACKAGES_ROLE, 0),
        'copied_bytes_all_copies': document['copied']['bytes'],
        'copied_files': document['copied']['files'],
        'copied_bytes_by_host': document['copied']['by_host'],
        'copied_bytes_by_role': document['copied']['by_role'],
        'tasks_run': sum(run for run, _trips, _skipped in counts.values()),
        # Per node: what Ansible spent on each one.
        'nodes': nodes,
        'controller_cpu_seconds_per_node': round(document['controller_cpu_seconds'] / nodes, 3),
        'tasks_by_host': dict((h, c[0]) for h, c in sorted(counts.items())),
        'round_trips_by_host': dict((h, c[1]) for h, c in sorted(counts.items())),
        'skipped_by_host': dict((h, c[2]) for h, c in sorted(counts.items())),
        'tasks_per_node_max': max((c[0] for c in counts.values()), default=0),
        'tasks_per_node_mean': round(sum(c[0] for c in counts.values()) / nodes, 1),
        'run_once_tasks': run_once_tasks(document),
        'round_trips_per_node_max': max((c[1] for c in counts.values()), default=0),
        'installer_task_host_seconds': round(sum(t['host_seconds'] for t in installer_tasks), 3),
        'roles': roles,
        'slowest_tasks': [{'name': t['name'], 'role': t['role'], 'wall': t['wall'],
                           'host_seconds': t['host_seconds']} for t in slowest],
    }


def combine(*summaries):
    total = {'wall_seconds': round(sum(s['wall_seconds'] for s in summaries), 3),
             'controller_cpu_seconds': round(sum(s['controller_cpu_seconds'] for s in summaries), 3),
             'nodes_cpu_seconds': (round(sum(s['nodes_cpu_seconds'] for s in summaries), 3)
                                   if all(s['nodes_cpu_seconds'] is not None for s in summaries) else None),
             'changed_tasks': sum(s['changed_tasks'] for s in summaries),
             'copied_bytes': sum(s['copied_bytes'] for s in summaries),
             'tasks_run': sum(s['tasks_run'] for s in summaries)}
    return total


# -- levers ---------------------------------------------------------------------------------


def mitogen_strategy_dir():
    """Mitogen for Ansible, installed into .cache/bench/mitogen by the bench target when its
    pinned release can be installed; None when absent."""
    candidate = os.path.join(MITOGEN_DIR, 'ansible_mitogen', 'plugins', 'strategy')
    return candidate if os.path.isdir(candidate) else None


def podman_connection_inventory():
    """A second inventory source giving each bench node the podman connection. Host variables of
    an inventory file outrank the bench inventory's group_vars; extra variables (-e) would not do,
    since they also apply to the tasks delegated to the controller."""
    hosts = fleet.inventory_hosts(INVENTORY_DIR)
    path = os.path.join(CACHE_DIR, 'podman-connection.yml')
    write_yaml(path, {'all': {'hosts': dict(
        (host, {'ansible_connection': 'containers.podman.podman',
                'ansible_podman_executable': os.path.join(REPO_ROOT, 'sandbox', 'podman.sh')})
        for host in sorted(hosts))}}, 'Generated by bench/run.py: the podman connection lever.')
    return path


def levers():
    """(name, environment, extra arguments) of each lever measured on the converged fleet, one
    at a time."""
    found = [
        ('baseline (SSH, pipelining, ControlPersist)', {}, []),
        ('no pipelining', {}, ['-e', 'ansible_pipelining=false']),
        # What the sandbox used before it reached its nodes over SSH: five podman commands a task.
        ('podman connection', {}, ['-i', podman_connection_inventory()]),
        ('strategy free', {'ANSIBLE_STRATEGY': 'free'}, []),
        ('fact cache (jsonfile, gathering smart)', {
            'ANSIBLE_GATHERING': 'smart', 'ANSIBLE_CACHE_PLUGIN': 'jsonfile',
            'ANSIBLE_CACHE_PLUGIN_CONNECTION': FACT_CACHE_DIR, 'ANSIBLE_CACHE_PLUGIN_TIMEOUT': '3600'}, []),
        # What sudo around every module costs: the inventory logs in as the sudo user ops; this
        # lever alone logs in as root (the nodes accept the key for root too) and drops become.
        ('no become (nodes reached as root)', {}, ['-e', 'ansible_user=root', '-e', 'ansible_become=false']),
    ]
    strategy_dir = mitogen_strategy_dir()
    if strategy_dir:
        # Mitogen takes over the ssh connection (its mitogen_ssh, ProxyCommand included).
        found.append(('mitogen_linear', {'ANSIBLE_STRATEGY_PLUGINS': strategy_dir,
                                         'ANSIBLE_STRATEGY': 'mitogen_linear'}, []))
    found.append(('baseline again', {}, []))
    return found


def lever_study(forks):
    results = []
    site = os.path.join(REPO_ROOT, 'playbooks', 'site.yml')
    for index, (name, env, extra_args) in enumerate(levers()):
        slug = 'lever-%d' % index
        if 'ANSIBLE_CACHE_PLUGIN' in env:
            shutil.rmtree(FACT_CACHE_DIR, ignore_errors=True)
            # Fill the cache the way an earlier run would have.
            run_logged(slug + '-prime', ['ansible', '-i', INVENTORY_DIR, 'npu_nodes', '-m', 'ansible.builtin.setup'],
                       env=ansible_env(forks, env))
        try:
            summary = summarize(playbook(slug, site, forks, env, extra_args))
        except BenchError as error:
            # A lever that breaks the run is a finding, not a provisioning failure.
            log('lever %s failed: %s' % (name, str(error).splitlines()[0]))
            results.append({'lever': name, 'env': env, 'args': extra_args, 'failed': str(error).splitlines()[0]})
            continue
        results.append({'lever': name, 'env': env, 'args': extra_args, 'wall_seconds': summary['wall_seconds'],
                        'changed_tasks': summary['changed_tasks'], 'load_average': load_average()})
    return results


# -- the benchmark --------------------------------------------------------------------------


def ratio(numerator, denominator):
    return round(numerator / denominator, 3) if denominator else None


def converged_round(converged, noop):
    """One round of the converged target: both playbooks' walls, the floor's, their ratio, and what changed."""
    return {'site': converged['site']['wall_seconds'], 'kubernetes': converged['kubernetes']['wall_seconds'],
            'total': converged['total']['wall_seconds'], 'noop': noop['wall_seconds'],
            'ratio': ratio(converged['total']['wall_seconds'], noop['wall_seconds']),
            'changed_tasks': converged['total']['changed_tasks'], 'copied_bytes': converged['total']['copied_bytes']}


def evaluate(results):
    nodes = results['settings']['nodes']
    forks = results['settings']['forks']
    converged_site = results['converged']['site']
    first_site = results['first']['site']['wall_seconds']
    # The median round (an odd number of rounds: the middle one; an even number: the upper middle).
    rounds = results.get('converged_rounds') or [converged_round(results['converged'], results['noop'])]
    median = sorted(rounds, key=lambda entry: entry['ratio'] if entry['ratio'] is not None else float('inf'))[
        len(rounds) // 2]
    converged = {'wall_seconds': median['total'], 'changed_tasks': sum(entry['changed_tasks'] for entry in rounds),
                 'copied_bytes': sum(entry['copied_bytes'] for entry in rounds)}
    noop = median['noop']
    ratios = {
        'converged_over_noop': median['ratio'],
        'converged_rounds': len(rounds),
        'converged_changed_tasks': converged['changed_tasks'],
        'converged_copied_bytes': converged['copied_bytes'],
        'converged_site_tasks_per_node_max': converged_site['tasks_per_node_max'],
    }
    converged_met = (ratios['converged_over_noop'] is not None
                     and ratios['converged_over_noop'] <= TARGETS['converged_over_noop']
                     and converged['changed_tasks'] == 0 and converged['copied_bytes'] == 0)
    targets = [{
        'target': 'converged site.yml + kubernetes.yml <= %.1fx no-op floor, 0 changed, 0 bytes copied'
                  % TARGETS['converged_over_noop'],
        'value': '%sx (%.1f s / %.1f s, median of %d rounds: %s), %d changed, %d bytes' % (
            ratios['converged_over_noop'], converged['wall_seconds'], noop, len(rounds),
            ', '.join('%sx' % entry['ratio'] for entry in rounds), converged['changed_tasks'],
            converged['copied_bytes']),
        'met': converged_met,
    }]
    targets.append({
        'target': 'converged site.yml <= %d tasks per node' % TARGETS['converged_tasks_per_node'],
        'value': '%d tasks on the node with the most (%d round trips to it; mean %.1f), and %d run once for the fleet' % (
            converged_site['tasks_per_node_max'], converged_site['round_trips_per_node_max'],
            converged_site['tasks_per_node_mean'], converged_site.get('run_once_tasks', 0)),
        'met': converged_site['tasks_per_node_max'] <= TARGETS['converged_tasks_per_node'],
    })
    one_node = scale_point(results, 1)
    if one_node and nodes > 1:
        single = one_node['first']['wall_seconds']
        ratios['first_site_over_one_node_site'] = ratio(first_site, single)
        targets.append({
            'target': 'first site.yml on %d nodes <= %.1fx the same run on one node (forks %d >= N %d)'
                      % (nodes, TARGETS['first_over_one_node'], forks, nodes),
            'value': '%sx (%.0f s / %.0f s)' % (ratios['first_site_over_one_node_site'], first_site, single),
            'met': forks >= nodes and ratios['first_site_over_one_node_site'] <= TARGETS['first_over_one_node'],
        })
    naive = results.get('naive')
    if naive:
        longest = naive['installer_seconds_longest_node']
        ratios['first_site_over_longest_node_installers'] = ratio(first_site, longest)
        ratios['first_total_over_longest_node_installers'] = ratio(results['first']['total']['wall_seconds'], longest)
        ratios['speedup_over_naive'] = ratio(naive['wall_seconds'], first_site)
        wanted = TARGETS['speedup_over_naive_per_node'] * nodes
        targets.append({
            'target': 'naive baseline / first site.yml >= %.1f x N = %.1f' % (
                TARGETS['speedup_over_naive_per_node'], wanted),
            'value': '%sx (%.0f s / %.0f s)' % (ratios['speedup_over_naive'], naive['wall_seconds'], first_site),
            'met': ratios['speedup_over_naive'] >= wanted,
        })
    # The scale curve's flatness: cost per node on the largest fleet over that on one node.
    curve = results.get('scale', [])
    if len(curve) > 1 and curve[0]['nodes'] == 1:
        for phase in ('first', 'converged'):
            ratios['%s_cpu_per_node_largest_over_one' % phase] = ratio(
                curve[-1][phase]['controller_cpu_seconds_per_node'], curve[0][phase]['controller_cpu_seconds_per_node'])
    results['ratios'] = ratios
    results['targets'] = targets


def scale_point(results, nodes):
    return next((point for point in results.get('scale', []) if point['nodes'] == nodes), None)


RESTART_FAILED_UNITS = ['sh', '-c', "units=$(systemctl --failed --no-legend --plain | cut -d' ' -f1); "
                                    "systemctl reset-failed; [ -z \"$units\" ] || systemctl restart $units"]


def bring_up(hosts, attempts=6):
    """fleet.py up for hosts; a node whose systemd came up degraded (on a host crowded with systemd
    containers a path unit can fail for want of inotify instances) gets its failed units
    restarted, and up waits again."""
    for attempt in range(1, attempts + 1):
        _seconds, returncode = run_logged('fleet-up', fleet_command('up', '--limit', ','.join(hosts)),
                                          fail=attempt == attempts)
        if returncode == 0:
            break
        log('a node came up degraded (attempt %d): restarting its failed units' % attempt)
        time.sleep(10 * attempt)
        for host in hosts:
            subprocess.run(fleet_command('exec', host, '--', *RESTART_FAILED_UNITS), capture_output=True,
                           check=False)
    run_logged('probe-image', fleet_command('probe-image', *hosts))


def naive_baseline(args):
    """bench/naive.py on one bare node of each model; the baseline of the main fleet is the sum
    of its nodes' times, each node timed as the node of its model."""
    hosts = write_inventory(bench_hosts(min(args.nodes, len(MODELS))), args.install_scale)
    bring_up(hosts)
    naive_out = os.path.join(RUNS_DIR, 'naive.json')
    os.makedirs(RUNS_DIR, exist_ok=True)
    run_logged('naive', [PYTHON, os.path.join(BENCH_DIR, 'naive.py'), '--inventory', INVENTORY_DIR,
                         '--out', naive_out])
    run_logged('fleet-down-after-naive', fleet_command('down'))
    with open(naive_out) as handle:
        return naive_for_fleet(json.load(handle)['nodes'], args.nodes)


def naive_for_fleet(measured, count):
    """The naive baseline of a fleet of count nodes from the nodes it was measured on: each node
    of the fleet takes what the measured node of its model took."""
    by_model = dict((host_model(host)['sandbox_product'], record) for host, record in measured.items())
    fleet_nodes = [by_model[host_model(host)['sandbox_product']] for host in bench_hosts(count)]
    return {
        'measured_on': sorted(measured),
        'nodes': measured,
        'wall_seconds': round(sum(node['wall_seconds'] for node in fleet_nodes), 3),
        'installer_seconds_total': round(sum(node['installer_seconds'] for node in fleet_nodes), 3),
        'installer_seconds_longest_node': max(node['installer_seconds'] for node in fleet_nodes),
    }


def fleet_run(args, results, count, forks):
    """A fleet of count bare nodes: the first site.yml, then (the main fleet) kubernetes.yml, then
    the converged run(s) and (the main fleet) the no-op floor and the levers."""
    main_fleet = count == args.nodes
    hosts = write_inventory(bench_hosts(count), args.install_scale)
    tag = 'n%d' % count
    log('fleet of %d: %s' % (count, ', '.join(hosts)))
    bring_up(hosts)
    site = os.path.join(REPO_ROOT, 'playbooks', 'site.yml')
    kubernetes = os.path.join(REPO_ROOT, 'playbooks', 'kubernetes.yml')
    point = {'nodes': count, 'first': summarize(playbook(tag + '-first-site', site, forks))}
    if main_fleet:
        run_logged('controlplane-up', controlplane_command('up', '--nodes-from-inventory', INVENTORY_DIR))
        first_kubernetes = summarize(playbook(tag + '-first-kubernetes', kubernetes, forks))
        results['load_average']['after_first'] = load_average()
    point['converged'] = summarize(playbook(tag + '-converged-site', site, forks))
    point['load_average'] = load_average()
    results['scale'].append(point)
    results['scale'].sort(key=lambda entry: entry['nodes'])
    if main_fleet:
        converged_kubernetes = summarize(playbook(tag + '-converged-kubernetes', kubernetes, forks))
        results['first'] = {'site': point['first'], 'kubernetes': first_kubernetes,
                            'total': combine(point['first'], first_kubernetes)}
        results['converged'] = {'site': point['converged'], 'kubernetes': converged_kubernetes,
                                'total': combine(point['converged'], converged_kubernetes)}
        results['load_average']['after_converged'] = load_average()
        results['noop'] = summarize(playbook(tag + '-noop', os.path.join(BENCH_DIR, 'noop.yml'), forks))
        results['converged_rounds'] = [converged_round(results['converged'], results['noop'])]
        # More rounds of the same three runs, back to back: one round's ratio moves by a quarter on a
        # 2-core machine (a node's module waiting for a core), the median of several much less.
        for index in range(2, args.rounds + 1):
            again_site = summarize(playbook('%s-converged-site-%d' % (tag, index), site, forks))
            again_kubernetes = summarize(playbook('%s-converged-kubernetes-%d' % (tag, index), kubernetes, forks))
            again_noop = summarize(playbook('%s-noop-%d' % (tag, index), os.path.join(BENCH_DIR, 'noop.yml'), forks))
            results['converged_rounds'].append(converged_round(
                {'site': again_site, 'kubernetes': again_kubernetes,
                 'total': combine(again_site, again_kubernetes)}, again_noop))
        if args.levers:
            results['levers'] = lever_study(forks)
    if not (main_fleet and args.keep):
        if main_fleet:
            run_logged('controlplane-down', controlplane_command('down'), fail=False)
        run_logged('fleet-down-' + tag, fleet_command('down'))


def benchmark(args):
    points = sorted(set(args.scale_points) | {1, args.nodes})
    forks = args.forks or max(*points, 10)
    results = {
        'started': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
        'settings': {'nodes': args.nodes, 'scale_points': points, 'install_scale': args.install_scale,
                     'huawei_install_seconds': huawei_install_seconds(), 'forks': forks,
                     'cpus': os.cpu_count(), 'ansible_cfg': 'bench/ansible.cfg'},
        'load_average': {'start': load_average()},
        'scale': [],
    }
    components = fleet.load_vars_dir(fleet.Path(SANDBOX_INVENTORY) / 'group_vars', 'sandbox_nodes').get(
        'sandbox_package_versions') or {}
    per_node = sum(results['settings']['huawei_install_seconds'].get(c, 0) for c in components) * args.install_scale
    log('fleets of %s nodes (main %d), installers at %.3f x Huawei\'s (%.0f s a node), forks %d, '
        'load average %s' % (', '.join(str(p) for p in points), args.nodes, args.install_scale, per_node, forks,
                             results['load_average']['start']))
    # Set-up, not measured: image, packages, the probe image's archive, a clean slate.
    write_inventory(bench_hosts(max(points)), args.install_scale)
    run_logged('fleet-image', fleet_command('image'))
    run_logged('fleet-packages', fleet_command('packages'))
    run_logged('fleet-down-before', fleet_command('down'))
    run_logged('controlplane-down-before', controlplane_command('down'), fail=False)
    if not args.skip_naive:
        results['naive'] = naive_baseline(args)
        results['load_average']['after_naive'] = load_average()
    os.makedirs(CACHE_DIR, exist_ok=True)
    # The main fleet last, so that --keep leaves it (converged, with its control plane).
    for count in [p for p in points if p != args.nodes] + [args.nodes]:
        fleet_run(args, results, count, forks)
        results['load_average']['after_n%d' % count] = load_average()
        # What is measured so far survives a bench stopped before the end.
        with open(PARTIAL_RESULTS, 'w') as handle:
            json.dump(results, handle, indent=1, sort_keys=True)
    results['load_average']['end'] = load_average()
    evaluate(results)
    return results


def teardown(largest):
    """Removes the control plane and every bench node a run may have left."""
    write_inventory(bench_hosts(largest), 0)
    run_logged('controlplane-down', controlplane_command('down'), fail=False)
    run_logged('fleet-down', fleet_command('down'), fail=False)


def render_chart(results_path, chart_path):
    if not os.path.exists(CHART_PYTHON):
        log('no chart: %s is missing (make bench creates it from bench/requirements.txt)' % CHART_PYTHON)
        return False
    result = subprocess.run([CHART_PYTHON, os.path.join(BENCH_DIR, 'chart.py'), results_path, chart_path],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        log('chart failed (exit %d): %s' % (result.returncode, result.stderr.strip()[-1000:]))
        return False
    log('chart: %s' % os.path.relpath(chart_path, REPO_ROOT))
    return True


def report(results):
    settings = results['settings']
    print('\n======== make bench: main fleet %d nodes, installers at %s x Huawei\'s, forks %d ========'
          % (settings['nodes'], settings['install_scale'], settings['forks']))
    rows = []
    naive = results.get('naive')
    if naive:
        rows.append(('naive baseline (node after node)', naive, 'wall_seconds'))
        rows.append(('  sum of installers, all nodes', naive, 'installer_seconds_total'))
        rows.append(('  installers of the longest node', naive, 'installer_seconds_longest_node'))
    one_node = scale_point(results, 1)
    if one_node and settings['nodes'] > 1:
        rows.append(('first run on one node: site.yml', one_node['first'], 'wall_seconds'))
    for phase in ('first', 'converged'):
        rows.append(('%s run: site.yml' % phase, results[phase]['site'], 'wall_seconds'))
        rows.append(('%s run: kubernetes.yml' % phase, results[phase]['kubernetes'], 'wall_seconds'))
    rows.append(('no-op floor (noop.yml)', results['noop'], 'wall_seconds'))
    print('%-40s %10s %16s %10s' % ('', 'wall', 'controller CPU', 'nodes CPU'))
    for name, entry, key in rows:
        cpu = [entry.get(k) if key == 'wall_seconds' else None for k in ('controller_cpu_seconds', 'nodes_cpu_seconds')]
        print('%-40s %8.1f s %14s %10s' % (name, entry[key], *('' if c is None else '%.1f s' % c for c in cpu)))
    for phase in ('first', 'converged'):
        total = results[phase]['total']
        print('%s run: %d tasks run, %d changed, %d bytes of packages copied'
              % (phase, total['tasks_run'], total['changed_tasks'], total['copied_bytes']))
    print('\nscale curve, site.yml (per node: controller CPU seconds, tasks run on the node with the most)')
    print('%6s %12s %14s %10s %14s %14s %10s' % ('N', 'first wall', 'CPU s / node', 'tasks', 'converged wall',
                                                 'CPU s / node', 'tasks'))
    for point in results['scale']:
        first, converged = point['first'], point['converged']
        print('%6d %10.1f s %14.2f %10d %12.1f s %14.2f %10d' % (
            point['nodes'], first['wall_seconds'], first['controller_cpu_seconds_per_node'],
            first['tasks_per_node_max'], converged['wall_seconds'], converged['controller_cpu_seconds_per_node'],
            converged['tasks_per_node_max']))
    for lever in results.get('levers', []):
        print('lever %-40s %s' % (lever['lever'], ('%8.1f s' % lever['wall_seconds']) if 'wall_seconds' in lever
                                  else 'failed: ' + lever['failed']))
    print('ratios: %s' % json.dumps(results['ratios'], sort_keys=True))
    for target in results['targets']:
        print('[%s] %s: %s' % ('MET' if target['met'] else 'MISSED', target['target'], target['value']))
    print('load average (1, 5, 15 min) at the start %s, at the end %s'
          % (results['load_average']['start'], results['load_average']['end']))


def scale_points_argument(text):
    try:
        points = sorted(set(int(value) for value in text.split(',') if value.strip()))
    except ValueError:
        raise argparse.ArgumentTypeError('fleet sizes are whole numbers separated by commas, such as 1,2,4,8')
    if not points or points[0] < 1:
        raise argparse.ArgumentTypeError('fleet sizes must be at least 1')
    return points


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=int(os.environ.get('BENCH_NODES', 4)),
                        help='nodes of the main fleet (default: $BENCH_NODES or 4)')
    parser.add_argument('--scale-points', type=scale_points_argument,
                        default=scale_points_argument(os.environ.get('BENCH_SCALE_POINTS', DEFAULT_SCALE_POINTS)),
                        help='fleet sizes of the scale curve (default: $BENCH_SCALE_POINTS or %s); 1 and the '
                             'main fleet are always measured' % DEFAULT_SCALE_POINTS)
    parser.add_argument('--install-scale', type=float,
                        default=float(os.environ.get('BENCH_INSTALL_SCALE', DEFAULT_INSTALL_SCALE)),
                        help='each installer lasts Huawei\'s duration times this (default: $BENCH_INSTALL_SCALE '
                             'or %s)' % DEFAULT_INSTALL_SCALE)
    parser.add_argument('--forks', type=int, default=int(os.environ.get('BENCH_FORKS', 0)),
                        help='Ansible forks (default: $BENCH_FORKS, or max(largest fleet, 10))')
    parser.add_argument('--rounds', type=int, default=int(os.environ.get('BENCH_ROUNDS', 3)),
                        help='rounds of the converged site.yml, kubernetes.yml and floor on the main fleet; the '
                             'converged target takes the median round ($BENCH_ROUNDS, default 3)')
    parser.add_argument('--levers', action='store_true', default=os.environ.get('BENCH_LEVERS') == '1',
                        help='also measure each Ansible lever on the converged main fleet ($BENCH_LEVERS=1)')
    parser.add_argument('--skip-naive', action='store_true', help='leave out the naive baseline')
    parser.add_argument('--levers-only', action='store_true',
                        help='only the lever study, on the converged fleet an earlier --keep run left')
    parser.add_argument('--keep', action='store_true', help='leave the main fleet and the control plane running')
    parser.add_argument('--results', default=os.path.join(BENCH_DIR, 'results.json'))
    parser.add_argument('--chart', default=os.path.join(BENCH_DIR, 'results.png'))
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error('--rounds must be at least 1')
    if args.nodes < 1 or args.install_scale < 0:
        parser.error('--nodes must be at least 1 and --install-scale not negative')
    try:
        if args.levers_only:
            # The study replaces the levers of the results file the --keep run wrote, if any.
            forks = args.forks or max(*args.scale_points, args.nodes, 10)
            results = {}
            if os.path.exists(args.results):
                with open(args.results) as handle:
                    results = json.load(handle)
            started_load = load_average()
            results['levers'] = lever_study(forks)
            results['levers_load_average'] = [started_load, load_average()]
            with open(args.results, 'w') as handle:
                json.dump(results, handle, indent=1, sort_keys=True)
                handle.write('\n')
            for lever in results['levers']:
                log('lever %s: %s' % (lever['lever'], lever.get('wall_seconds', lever.get('failed'))))
            if 'settings' in results:
                render_chart(args.results, args.chart)
            return 0
        results = benchmark(args)
    except (BenchError, fleet.SandboxError) as error:
        print('bench: error: %s' % error, file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            teardown(max(set(args.scale_points) | {args.nodes}))
    with open(args.results, 'w') as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write('\n')
    log('results: %s' % os.path.relpath(args.results, REPO_ROOT))
    render_chart(args.results, args.chart)
    report(results)
    return 0


if __name__ == '__main__':
    sys.exit(main())
