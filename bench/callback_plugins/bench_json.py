# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback used by ``make bench`` only: dumps timings, changes and copied bytes as JSON."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: bench_json
type: aggregate
short_description: Timings per task, role and host, changed tasks and copied bytes, as JSON
description:
  - Written for C(bench/run.py). Records, for every task and host, when the task started and
    ended on that host, its status, and for C(ansible.builtin.copy) results the bytes the copy
    transferred (a copy that found the same content on the node transfers nothing).
  - Writes one JSON document to the file named by the environment variable C(BENCH_JSON_OUT)
    when the playbook ends.
requirements:
  - enable in callbacks_enabled
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

COPY_ACTIONS = ('copy', 'ansible.builtin.copy', 'ansible.legacy.copy')


def copied_bytes(result):
    """Bytes a copy result transferred: the copy module ran (its result names the temporary
    source it installed from) and changed the file. A copy that only fixed attributes runs
    the file module instead and reports no source."""
    items = result.get('results') if isinstance(result.get('results'), list) else [result]
    total = 0
    files = 0
    for item in items:
        if not isinstance(item, dict) or not item.get('changed') or 'src' not in item:
            continue
        total += int(item.get('size') or 0)
        files += 1
    return total, files


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'bench_json'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.started = time.time()
        self.tasks = {}
        self.order = []
        self.running = {}
        self.copied = {'bytes': 0, 'files': 0, 'by_host': {}, 'by_role': {}}
        self.playbook = None

    def v2_playbook_on_start(self, playbook):
        self.playbook = getattr(playbook, '_file_name', None)

    def _task_entry(self, task):
        uuid = task._uuid
        if uuid not in self.tasks:
            role = task._role.get_name() if task._role else None
            self.tasks[uuid] = {
                'name': task.get_name(),
                'role': role,
                'action': task.action,
                # Delegated to the controller: no round trip to the node.
                'delegated_to_controller': task.delegate_to in ('localhost', '127.0.0.1'),
                # Once for the whole fleet (recorded on the first host): not a cost of each node.
                'run_once': bool(task.run_once),
                'hosts': {},
            }
            self.order.append(uuid)
        return self.tasks[uuid]

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_entry(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._task_entry(task)

    def v2_runner_on_start(self, host, task):
        self._task_entry(task)
        self.running[(host.get_name(), task._uuid)] = time.time()

    def _finish(self, result, status):
        now = time.time()
        host = result._host.get_name()
        task = result._task
        entry = self._task_entry(task)
        started = self.running.pop((host, task._uuid), now)
        record = {'start': round(started - self.started, 3), 'end': round(now - self.started, 3),
                  'status': status, 'changed': bool(result._result.get('changed')) and status == 'ok'}
        if task.action in COPY_ACTIONS and status == 'ok':
            size, files = copied_bytes(result._result)
            record['copied_bytes'] = size
            self.copied['bytes'] += size
            self.copied['files'] += files
            self.copied['by_host'][host] = self.copied['by_host'].get(host, 0) + size
            role = entry['role'] or '(play)'
            self.copied['by_role'][role] = self.copied['by_role'].get(role, 0) + size
        # A task can run more than once on a host (handlers notified again, include loops).
        previous = entry['hosts'].get(host)
        if previous is not None:
            record['start'] = previous['start']
            record['changed'] = record['changed'] or previous['changed']
            record['copied_bytes'] = record.get('copied_bytes', 0) + previous.get('copied_bytes', 0)
        entry['hosts'][host] = record

    def v2_runner_on_ok(self, result):
        self._finish(result, 'ok')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._finish(result, 'failed')

    def v2_runner_on_skipped(self, result):
        self._finish(result, 'skipped')

    def v2_runner_on_unreachable(self, result):
        self._finish(result, 'unreachable')

    def v2_playbook_on_stats(self, stats):
        hosts = {}
        for host in sorted(stats.processed):
            hosts[host] = stats.summarize(host)
        tasks = []
        for uuid in self.order:
            entry = self.tasks[uuid]
            runs = list(entry['hosts'].values())
            if runs:
                entry['wall'] = round(max(r['end'] for r in runs) - min(r['start'] for r in runs), 3)
                entry['host_seconds'] = round(sum(r['end'] - r['start'] for r in runs), 3)
            else:
                entry['wall'] = entry['host_seconds'] = 0.0
            tasks.append(entry)
        document = {
            'playbook': self.playbook,
            'wall_seconds': round(time.time() - self.started, 3),
            'hosts': hosts,
            'changed_tasks': sum(h.get('changed', 0) for h in hosts.values()),
            'failed_hosts': sorted(h for h, s in hosts.items() if s.get('failures') or s.get('unreachable')),
            'copied': self.copied,
            'tasks': tasks,
        }
        out = os.environ.get('BENCH_JSON_OUT')
        if out:
            with open(out, 'w') as handle:
                json.dump(document, handle, indent=1, sort_keys=True)
