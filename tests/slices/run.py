#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make slices`: one job sliced four ways, as AWX runs it, in the collection's execution environment.

A light fleet (sandbox_light: true, as the scale lane's nodes) of FLEET_SIZE hosts slc-001...:
the job's limit leaves LEFT_OUT out (a node in maintenance), POWERED_OFF is in the inventory but
never started (unreachable). The other hosts are sliced as AWX slices a job (the n-th slice takes
every fourth host from the n-th on, each slice's inventory holds only its hosts), and each slice runs
npu.ascend.site as AWX runs a job on an execution node: `ansible-runner transmit` of the job's private
data directory (project, inventory, extra variables, the machine credential's key) into `podman run
<execution environment> ansible-runner worker`, whose events `ansible-runner process` turns back
into the job's artifacts. The four run side by side, each with its own failure budget, and each
writes its part of the fleet report in a directory all four mount (fleet_report_part=auto). Then a
fifth job, npu.ascend.report with fleet_report_merge_parts=true over the whole inventory, writes
the fleet report, which must list every node once: the live ones passed, POWERED_OFF unreachable,
LEFT_OUT in no part.

The nodes are reached as servers are: SSH to an address and port. Each node's port on 127.0.0.1
is a small forwarder here that runs the node's `sshd -i` (the sandbox's nodes listen on no port;
inventories/sandbox does the same with a ProxyCommand, which the image has no podman for); the
execution environment's container shares the host's network.

Writes .cache/slices/results.json (durations, per slice status) and prints a summary; exits non-zero
when a check fails. Nodes and forwarders are removed at the end (--keep leaves the nodes up).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import yaml

SLICES_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(SLICES_DIR))
sys.path.insert(0, os.path.join(REPO_ROOT, 'sandbox'))
sys.path.insert(0, SLICES_DIR)
import fleet  # noqa: E402  (sandbox/fleet.py)
import ee_image  # noqa: E402

WORK_DIR = os.path.join(REPO_ROOT, '.cache', 'slices')
INVENTORY_DIR = os.path.join(WORK_DIR, 'inventory')
JOBS_DIR = os.path.join(WORK_DIR, 'jobs')
REPORTS_DIR = os.path.join(WORK_DIR, 'reports')
LOG_DIR = os.path.join(WORK_DIR, 'logs')
RESULTS = os.path.join(WORK_DIR, 'results.json')
SANDBOX_INVENTORY = os.path.join(REPO_ROOT, 'inventories', 'sandbox')
PODMAN = os.path.join(REPO_ROOT, 'sandbox', 'podman.sh')
VENV_BIN = os.path.dirname(os.path.abspath(sys.executable))

HOST_PREFIX = 'slc-'
SLICE_COUNT = 4
# Where the job's container sees the package directory and the shared report directory (docs/awx.md:
# paths exposed to the jobs).
PACKAGES_MOUNT = '/packages'
REPORTS_MOUNT = '/reports'
# The job template's extra variables. A budget of 50%: a slice of three with its dead node (one in
# three) goes on, as a slice's own budget allows; the fleet-wide 10% default would stop it.
EXTRA_VARS = {'fleet_report_part': 'auto', 'fleet_report_dir': REPORTS_MOUNT, 'packages_source_dir': PACKAGES_MOUNT,
              'npu_ascend_max_fail_percentage': 50}
MODELS = (
    {'sandbox_product': 'Atlas 800I A2', 'sandbox_chip_name': '910B4', 'sandbox_npu_count': 8,
     'sandbox_chips_per_npu': 1},
    {'sandbox_product': 'Atlas 300I Duo', 'sandbox_chip_name': '310P3', 'sandbox_npu_count': 1,
     'sandbox_chips_per_npu': 2},
)
# The project AWX would sync: one playbook of the user's own calling the collection's, as docs/awx.md
# describes for a playbook project.
PROJECT_PLAYBOOKS = {
    'slice.yml': '---\n- name: Provision the slice\'s nodes\n  ansible.builtin.import_playbook: npu.ascend.site\n',
    'merge.yml': '---\n- name: The fleet report of the slices\' parts\n  ansible.builtin.import_playbook: npu.ascend.report\n',
}


class SlicesError(Exception):
    pass


def log(message):
    print('slices: %s' % message, flush=True)


def hosts_for(count):
    return ['%s%03d' % (HOST_PREFIX, index) for index in range(1, count + 1)]


def awx_slices(hosts, count=SLICE_COUNT):
    """AWX's job slicing: slice n (from 1) of `count` takes hosts[n-1::count] of the job's hosts, in
    inventory order."""
    return [hosts[index::count] for index in range(count) if hosts[index::count]]


# -- inventory --------------------------------------------------------------------------------


def write_yaml(path, data, comment):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as handle:
        handle.write('---\n# %s\n' % comment)
        yaml.safe_dump(data, handle, default_flow_style=False, sort_keys=True)


def write_inventory(directory, hosts, ports, install_scale):
    """The job's inventory as the execution environment sees it: the sandbox's stack and node
    descriptions, the connection an SSH server at 127.0.0.1:<port> needs, nothing of the podman proxy."""
    shutil.rmtree(directory, ignore_errors=True)
    write_yaml(os.path.join(directory, 'hosts.yml'),
               {'all': {'children': {'npu_nodes': {'children': {'sandbox_nodes': {
                   'hosts': dict((host, None) for host in hosts)}}}}}},
               'Generated by tests/slices/run.py.')
    group_vars = os.path.join(SANDBOX_INVENTORY, 'group_vars')
    stack = dict((name, value) for name, value in fleet.load_vars_dir(fleet.Path(group_vars), 'npu_nodes').items()
                 if not name.startswith(('k8s_', 'exporter_', 'validate_', 'fleet_report_')))
    stack['packages_source_dir'] = PACKAGES_MOUNT
    write_yaml(os.path.join(directory, 'group_vars', 'npu_nodes', 'stack.yml'), stack,
               'From inventories/sandbox/group_vars/npu_nodes; no cluster (site.yml only).')
    sandbox = fleet.load_vars_dir(fleet.Path(group_vars), 'sandbox_nodes')
    connection = dict((name, value) for name, value in sandbox.items() if not name.startswith(('ansible_', 'sandbox_repo')))
    connection.update({
        'ansible_connection': 'ansible.builtin.ssh',
        'ansible_host': '127.0.0.1',
        'ansible_user': fleet.LOGIN_USER,
        'ansible_become': True,
        'ansible_pipelining': True,
        'ansible_ssh_retries': 3,
        'ansible_python_interpreter': '/usr/bin/python3',
        # All nodes share the image's host keys (sandbox/fleet.py); none is remembered.
        'ansible_ssh_common_args': '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR',
    })
    write_yaml(os.path.join(directory, 'group_vars', 'sandbox_nodes', 'connection.yml'), connection,
               'From inventories/sandbox/group_vars/sandbox_nodes, with SSH to an address instead of the podman proxy.')
    for index, host in enumerate(hosts):
        host_vars = dict(MODELS[index % len(MODELS)])
        host_vars.update({'sandbox_arch': 'x86_64', 'sandbox_unhealthy_chips': [], 'sandbox_light': True,
                          'sandbox_faults': {'install_time_scale': install_scale}})
        if host in ports:
            host_vars['ansible_port'] = ports[host]
        write_yaml(os.path.join(directory, 'host_vars', host + '.yml'), host_vars,
                   'Generated by tests/slices/run.py: a light node (sandbox/README.md).')


def subset_inventory(source, target, hosts):
    """A slice's inventory: the same variables, only its hosts (AWX gives each slice only its hosts)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(os.path.join(source, 'group_vars'), os.path.join(target, 'group_vars'))
    os.makedirs(os.path.join(target, 'host_vars'))
    for host in hosts:
        shutil.copy2(os.path.join(source, 'host_vars', host + '.yml'), os.path.join(target, 'host_vars'))
    write_yaml(os.path.join(target, 'hosts.yml'),
               {'all': {'children': {'npu_nodes': {'children': {'sandbox_nodes': {
                   'hosts': dict((host, None) for host in hosts)}}}}}},
               'Generated by tests/slices/run.py: one slice of the job.')


# -- the forwarders -----------------------------------------------------------------------------


class Forwarders(threading.Thread):
    """127.0.0.1:<port> per node; each connection is piped to `podman exec -i <node> sshd -i`."""

    def __init__(self, hosts):
        super(Forwarders, self).__init__(daemon=True)
        self.hosts = hosts
        self.ports = {}
        self.ready = threading.Event()
        self.loop = None
        self.error = None

    def run(self):
        # A `podman exec` whose exit the child watcher finds reaped already is logged as a warning;
        # its exit status is not used (the SSH session on it says what happened).
        logging.getLogger('asyncio').setLevel(logging.ERROR)
        self.loop = asyncio.new_event_loop()
        try:
            self.loop.run_until_complete(self._start())
        except OSError as error:
            self.error = error
            self.ready.set()
            return
        self.ready.set()
        self.loop.run_forever()

    async def _start(self):
        for host in self.hosts:
            server = await asyncio.start_server(lambda reader, writer, host=host: self._serve(host, reader, writer),
                                                '127.0.0.1', 0)
            self.ports[host] = server.sockets[0].getsockname()[1]

    async def _serve(self, host, reader, writer):
        process = await asyncio.create_subprocess_exec(
            PODMAN, 'exec', '-i', host, '/usr/sbin/sshd', '-i', stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)

        async def pump(source, sink, close):
            try:
                while True:
                    data = await source.read(65536)
                    if not data:
                        break
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                close()

        def close_stdin():
            if not process.stdin.is_closing():
                process.stdin.close()

        await asyncio.gather(pump(reader, process.stdin, close_stdin), pump(process.stdout, writer, writer.close))
        if process.returncode is None:
            process.terminate()
        await process.wait()

    def stop(self):
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)


# -- the jobs -----------------------------------------------------------------------------------


def prepare_job(name, inventory_source, hosts, playbook, extra_vars):
    """The private data directory AWX would transmit for one job (of one slice)."""
    job = os.path.join(JOBS_DIR, name)
    shutil.rmtree(job, ignore_errors=True)
    os.makedirs(os.path.join(job, 'project'))
    os.makedirs(os.path.join(job, 'env'))
    for file_name, text in PROJECT_PLAYBOOKS.items():
        with open(os.path.join(job, 'project', file_name), 'w') as handle:
            handle.write(text)
    subset_inventory(inventory_source, os.path.join(job, 'inventory'), hosts)
    with open(os.path.join(job, 'env', 'extravars'), 'w') as handle:
        yaml.safe_dump(extra_vars, handle)
    # The machine credential: ansible-runner loads it into an ssh-agent in the container.
    shutil.copy2(str(fleet.SSH_KEY), os.path.join(job, 'env', 'ssh_key'))
    with open(os.path.join(job, 'env', 'envvars'), 'w') as handle:
        yaml.safe_dump({'ANSIBLE_FORCE_COLOR': 'false', 'ANSIBLE_NOCOLOR': '1'}, handle)
    return job


def start_job(name, job, playbook, image, packages_dir):
    """transmit | podman run <image> ansible-runner worker | process, as a shell pipeline; returns
    (Popen, log path, start time)."""
    runner = os.path.join(VENV_BIN, 'ansible-runner')
    container = 'slc-job-%s' % name
    worker = ' '.join([PODMAN, 'run', '--rm', '-i', '--name', container, '--network', 'host',
                       '-v', '%s:%s:ro' % (packages_dir, PACKAGES_MOUNT), '-v', '%s:%s' % (REPORTS_DIR, REPORTS_MOUNT),
                       image, 'ansible-runner', 'worker', '--private-data-dir', '/runner'])
    pipeline = 'set -o pipefail; %s transmit %s -p %s | %s | %s process %s' % (runner, job, playbook, worker, runner, job)
    os.makedirs(LOG_DIR, exist_ok=True)
    path = os.path.join(LOG_DIR, name + '.log')
    with open(path, 'w') as handle:
        # The child keeps its own copy of the log's descriptor; it is waited for in run_jobs.
        process = subprocess.Popen(['bash', '-c', pipeline], stdout=handle, stderr=subprocess.STDOUT,
                                   cwd=REPO_ROOT, start_new_session=True)
    return process, path, time.monotonic()


def job_outcome(job):
    """ansible-runner's status and rc of the job, from the artifacts `process` wrote (in artifacts/
    itself: the job's ident stays with the worker)."""
    artifacts = os.path.join(job, 'artifacts')
    if not os.path.isfile(os.path.join(artifacts, 'status')):
        return {'status': 'no artifacts', 'rc': None}
    outcome = {}
    for key in ('status', 'rc'):
        path = os.path.join(artifacts, key)
        outcome[key] = None
        if os.path.exists(path):
            with open(path) as handle:
                outcome[key] = handle.read().strip()
    return outcome


def run_jobs(jobs, image, packages_dir, timeout):
    """Runs the named jobs side by side; returns {name: {wall_seconds, status, rc, exit, log}}."""
    started = dict((name, start_job(name, job, playbook, image, packages_dir)) for name, (job, playbook) in jobs.items())
    results = {}
    while len(results) < len(started):
        time.sleep(1)
        for name, (process, path, begun) in started.items():
            if name in results:
                continue
            code = process.poll()
            timed_out = code is None and time.monotonic() - begun > timeout
            if timed_out:
                os.killpg(process.pid, signal.SIGTERM)
                subprocess.run([PODMAN, 'rm', '-f', 'slc-job-%s' % name], capture_output=True, check=False)
                code = process.wait()
            if code is None:
                continue
            results[name] = dict(job_outcome(jobs[name][0]), exit=code, timed_out=timed_out,
                                 log=os.path.relpath(path, REPO_ROOT), wall_seconds=round(time.monotonic() - begun, 1))
    return results


# -- checks -------------------------------------------------------------------------------------


def check_report(report, fleet_hosts, live, powered_off, left_out):
    """The merged fleet report's promises; returns the problems (empty when it keeps them)."""
    problems = []
    nodes = report.get('nodes') or {}
    if sorted(nodes) != sorted(fleet_hosts) or report.get('summary', {}).get('nodes') != len(fleet_hosts):
        problems.append('the report lists %s, the fleet is %s' % (sorted(nodes), sorted(fleet_hosts)))
    for host in live:
        if (nodes.get(host) or {}).get('status') != 'passed':
            problems.append('%s: %s, expected passed (%s)' % (host, (nodes.get(host) or {}).get('status'),
                                                              '; '.join((nodes.get(host) or {}).get('errors') or [])))
    for host in powered_off:
        entry = nodes.get(host) or {}
        if entry.get('status') != 'error' or entry.get('reachable') is not False:
            problems.append('%s was powered off: expected an unreachable error, got %s' % (host, entry.get('status')))
    for host in left_out:
        entry = nodes.get(host) or {}
        if entry.get('status') != 'error' or not any('in none of the' in check.get('message', '')
                                                     for check in entry.get('checks') or []):
            problems.append('%s was left out of every slice: expected it named as in no part, got %s'
                            % (host, entry.get('status')))
    return problems


# -- the lane -----------------------------------------------------------------------------------


def fleet_command(*args):
    return [sys.executable, os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'), '--inventory', INVENTORY_DIR] + list(args)


def timed(name, argv, results, fail=True):
    os.makedirs(LOG_DIR, exist_ok=True)
    path = os.path.join(LOG_DIR, name + '.log')
    started = time.monotonic()
    with open(path, 'w') as handle:
        result = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, cwd=REPO_ROOT, check=False)
    results['durations'][name] = round(time.monotonic() - started, 1)
    log('%s: %.1f s' % (name, results['durations'][name]))
    if result.returncode != 0 and fail:
        with open(path) as handle:
            tail = ''.join(handle.readlines()[-30:])
        raise SlicesError('%s failed (exit %d); %s ends:\n%s' % (name, result.returncode, path, tail))
    return result


def lane(args, results):
    fleet_hosts = hosts_for(args.nodes)
    left_out, powered_off = [fleet_hosts[-1]], [fleet_hosts[-2]]
    job_hosts = [host for host in fleet_hosts if host not in left_out]
    live = [host for host in job_hosts if host not in powered_off]
    slices = awx_slices(job_hosts)
    results.update({'fleet': fleet_hosts, 'left_out': left_out, 'powered_off': powered_off,
                    'slices': dict(('s%d' % (index + 1), hosts) for index, hosts in enumerate(slices)),
                    'install_scale': args.install_scale, 'extra_vars': EXTRA_VARS})
    started = time.monotonic()
    image = ee_image.build(os.path.join(ee_image.EE_CONTEXT, args.tarball), os.path.join(ee_image.EE_CONTEXT,
                                                                                         'execution-environment.yml'))
    results['durations']['execution_environment'] = round(time.monotonic() - started, 1)
    results['image'] = image
    log('execution environment %s: %.1f s' % (image, results['durations']['execution_environment']))
    write_inventory(INVENTORY_DIR, fleet_hosts, {}, args.install_scale)
    timed('fleet-image', fleet_command('image'), results)
    timed('fleet-packages', fleet_command('packages'), results)
    timed('fleet-down-before', fleet_command('down'), results, fail=False)
    timed('fleet-up', fleet_command('up', '--limit', ','.join(live)), results)
    timed('probe-image', fleet_command('probe-image', *live), results)
    forwarders = Forwarders(fleet_hosts)
    forwarders.start()
    forwarders.ready.wait(30)
    if forwarders.error is not None or len(forwarders.ports) != len(fleet_hosts):
        raise SlicesError('the SSH forwarders did not start: %s' % forwarders.error)
    try:
        write_inventory(INVENTORY_DIR, fleet_hosts, forwarders.ports, args.install_scale)
        shutil.rmtree(REPORTS_DIR, ignore_errors=True)
        os.makedirs(REPORTS_DIR)
        # The job's container runs as uid 1000 (ansible-builder's USER): the shared report directory is its.
        os.chown(REPORTS_DIR, 1000, 0)
        jobs = {}
        for name, hosts in results['slices'].items():
            jobs[name] = (prepare_job(name, INVENTORY_DIR, hosts, 'slice.yml', EXTRA_VARS), 'slice.yml')
        started = time.monotonic()
        results['jobs'] = run_jobs(jobs, image, str(fleet.PACKAGES_OUT_DIR), args.timeout)
        results['durations']['slices_side_by_side'] = round(time.monotonic() - started, 1)
        for name, outcome in sorted(results['jobs'].items()):
            log('  slice %s (%s): %s, rc %s, %.1f s' % (name, ', '.join(results['slices'][name]), outcome['status'],
                                                        outcome['rc'], outcome['wall_seconds']))
        merge_vars = {'fleet_report_merge_parts': True, 'fleet_report_dir': REPORTS_MOUNT}
        merge = {'merge': (prepare_job('merge', INVENTORY_DIR, fleet_hosts, 'merge.yml', merge_vars), 'merge.yml')}
        started = time.monotonic()
        results['jobs'].update(run_jobs(merge, image, str(fleet.PACKAGES_OUT_DIR), args.timeout))
        results['durations']['merge'] = round(time.monotonic() - started, 1)
        log('  merge: %s, rc %s, %.1f s' % (results['jobs']['merge']['status'], results['jobs']['merge']['rc'],
                                            results['jobs']['merge']['wall_seconds']))
    finally:
        forwarders.stop()
    report_path = os.path.join(REPORTS_DIR, 'fleet-report.json')
    if not os.path.exists(report_path):
        raise SlicesError('the merge wrote no fleet report; see %s' % results['jobs']['merge']['log'])
    with open(report_path) as handle:
        report = json.load(handle)
    results['report'] = dict((host, {'status': entry['status'], 'problems': [
        check['message'] for check in entry['checks'] if check['status'] in ('failed', 'error')]})
        for host, entry in report['nodes'].items())
    results['report_parts'] = report.get('run', {}).get('parts')
    problems = check_report(report, fleet_hosts, live, powered_off, left_out)
    # Each slice ran on its own: the one with the dead node ends failed (the node stopped at connect:
    # Ansible's exit 2), the others successful.
    for name, hosts in results['slices'].items():
        expected = 'failed' if set(hosts) & set(powered_off) else 'successful'
        if results['jobs'][name].get('status') != expected:
            problems.append('slice %s (%s): %s, expected %s (%s)' % (name, ', '.join(hosts), results['jobs'][name].get(
                'status'), expected, results['jobs'][name]['log']))
    if results['jobs']['merge'].get('status') != 'successful':
        problems.append('the merge job: %s (%s)' % (results['jobs']['merge'].get('status'), results['jobs']['merge']['log']))
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=int(os.environ.get('SLICES_NODES', 10)),
                        help='fleet size, the left-out and the powered-off host included (default: $SLICES_NODES or 10)')
    parser.add_argument('--install-scale', type=float, default=float(os.environ.get('SLICES_INSTALL_SCALE', 0.01)),
                        help='installers last Huawei\'s duration times this (default: $SLICES_INSTALL_SCALE or 0.01)')
    parser.add_argument('--timeout', type=float, default=1800.0, help='seconds a job may take')
    parser.add_argument('--keep', action='store_true', help='leave the nodes up')
    with open(os.path.join(REPO_ROOT, 'galaxy.yml')) as handle:
        version = yaml.safe_load(handle)['version']
    parser.add_argument('--tarball', default='npu-ascend-%s.tar.gz' % version,
                        help='the collection tarball in .cache/ee (default: galaxy.yml\'s version)')
    args = parser.parse_args(argv)
    if args.nodes < SLICE_COUNT + 2:
        parser.error('--nodes must be at least %d: four slices, a left-out and a powered-off host' % (SLICE_COUNT + 2))
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    os.makedirs(WORK_DIR, exist_ok=True)
    results = {'durations': {}}
    started = time.monotonic()
    # What the results say when the lane is stopped (SIGTERM, Ctrl-C) before it could judge.
    problems = ['interrupted']
    try:
        problems = lane(args, results)
    except (SlicesError, ee_image.BuildError, fleet.SandboxError) as error:
        problems = [str(error)]
    finally:
        if not args.keep:
            timed('fleet-down', fleet_command('down'), results, fail=False)
        results['durations']['total'] = round(time.monotonic() - started, 1)
        results['problems'] = problems
        with open(RESULTS, 'w') as handle:
            json.dump(results, handle, indent=1, sort_keys=True)
            handle.write('\n')
    print('\n======== make slices: %d nodes, %d slices in %s ========' % (args.nodes, SLICE_COUNT, results.get('image')))
    for name, value in results['durations'].items():
        print('%-24s %7.1f s' % (name, value))
    for host, entry in sorted(results.get('report', {}).items()):
        print('%-10s %-7s %s' % (host, entry['status'], (entry['problems'] or [''])[0][:150]))
    for problem in problems:
        print('PROBLEM: %s' % problem)
    report_md = os.path.relpath(os.path.join(REPORTS_DIR, 'fleet-report.md'), REPO_ROOT)
    print('results: %s; the merged report: %s' % (os.path.relpath(RESULTS, REPO_ROOT), report_md))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
