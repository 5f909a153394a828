# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a run ended for each node of the fleet, the failure budget, and the command that retries.

A fleet of hundreds of servers always has a few that are powered off, sick or wrongly described
in the inventory. The playbooks let the healthy part proceed and report the rest: each stage's
rescue records where a node stopped (``outcome_stopped``: stage, task, message, unreachable), and
this module turns those records and Ansible's host lists into one row per node, the verdict of
the failure budget, the summary's lines and the retry command. Controller side only, no Ansible
imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import shlex

from ansible_collections.npu.ascend.plugins.plugin_utils.preflight_summary import HOSTS_SHOWN, hosts_text, nodes_text

# What a node is left with when it stopped in a stage: the state an operator finds on it.
STAGE_STATE = {
    'connect': 'untouched: the node was not reached',
    'preflight': 'untouched: preflight changes nothing',
    'budget': 'untouched: the run stopped everywhere before the first change',
    'hdk': ('firmware and driver possibly part way (the installer log under /var/log/ascend_seclog says how '
            'far); CANN and the container runtime not changed in this run'),
    'cann': 'firmware and driver as wanted; CANN possibly part way; the container runtime not changed in this run',
    'container_runtime': ('firmware, driver and CANN as wanted; the container engines\' configs as the role left '
                          'them or rolled back, as its message says'),
    'hccn': ('host stack as installed; the NPU RoCE addresses as the message says: unchanged when the plan was refused, '
             'else set (and saved in /etc/hccn.conf) before the gate failed'),
    'k8s_node': 'host stack as installed; its Node possibly without the NPU labels or the until-validated taint',
    'device_plugin': ('host stack as installed; the device plugin or npu-exporter possibly not running for it; '
                      'its Node keeps the until-validated taint'),
    'validate': ('host stack as installed; its Node keeps the until-validated taint, so no NPU workload is '
                 'scheduled on it'),
    'upgrade': 'stays cordoned, labelled upgrade-state=failed; its components as far as the message says',
    'uninstall': 'part way out: the components the message names are still installed',
    'vnpu': ('host stack as installed; its chips\' vNPUs as far as the message says (npu-smi info -t info-vnpu); '
             'cordoned if it was drained for them'),
    'report': 'unchanged (the report only reads)',
    'doctor': 'unchanged (the doctor only reads)',
    'bundle': 'not reached (the package check runs on the controller)',
    'collect': 'unchanged (collecting only reads; its temporary bundle is removed)',
}
UNKNOWN_STATE = 'unknown: it stopped answering; its last known state is in the fleet report'
# A reboot that did not come back: the installers had finished, so the stage's own state says too little.
REBOOT_STATE = ('its installers finished and it was rebooting: the new firmware and driver take effect once it is '
                'up; later components not changed in this run')

FIX_UNREACHABLE = ('bring the node back (power, network, SSH: ansible -m ansible.builtin.ping <host> must answer), '
                   'then run the retry command')
FIX_FAILED = 'follow the fix in the message, then run the retry command'
# ansible.builtin.reboot's words when the node did not answer again within reboot_timeout.
_REBOOT_TIMEOUT = re.compile(r'timed out waiting for (last boot time check|post-reboot test command|reboot)', re.I)
FIX_REBOOT = ('the node did not come back from its reboot within hdk_reboot_timeout: look at its console (BMC), power '
              'it on if it is off, then run the retry command')
FIX_UNKNOWN = 'read the message and the task output above, fix the cause, then run the retry command'
_HAS_FIX = re.compile(r'\bfix:', re.I)
# A message longer than this is cut in the summary; the full one was printed when the node stopped.
MESSAGE_SHOWN = 400


class OutcomeError(ValueError):
    """Input that cannot be judged, with the variable to fix in its text."""


def _text(value):
    return '' if value is None else str(value)


def _first_lines(message, limit=MESSAGE_SHOWN):
    text = ' '.join(_text(message).split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + '...'


def stop_record(stage, task, result, unreachable=None, play=None):
    """The record a stage's rescue keeps for its host (``outcome_stopped``).

    ``result`` is the failed task's result (``ansible_failed_result``) or a message. A result whose
    ``unreachable`` is true (a task run with ``ignore_unreachable``) marks the node unreachable.
    ``play`` names the play it stopped in, so that a later gate of the same run (npu.ascend.provision)
    judges only the nodes that reached it.
    """
    if isinstance(result, dict):
        message = result.get('msg') or result.get('stderr') or result.get('stdout') or ''
        if not message and result.get('results'):
            # A loop: the first failed item's message.
            failed = [item for item in result['results'] if isinstance(item, dict) and item.get('failed')]
            message = (failed[0].get('msg') if failed else '') or ''
        unreachable = bool(result.get('unreachable')) if unreachable is None else unreachable
    else:
        message = _text(result)
    stage = _text(stage) or 'unknown'
    message = _text(message).strip() or 'no message (see the task output above)'
    return {
        'stage': stage,
        'play': _text(play),
        'task': _text(task),
        'message': message,
        'unreachable': bool(unreachable),
        'state': _state(stage, message),
        # Empty when the message carries its own fix (the collection's messages do).
        'fix': _fix(message, bool(unreachable)),
    }


def _state(stage, message):
    return REBOOT_STATE if _REBOOT_TIMEOUT.search(message) else STAGE_STATE.get(stage, UNKNOWN_STATE)


def _fix(message, unreachable):
    if unreachable:
        return FIX_UNREACHABLE
    if _REBOOT_TIMEOUT.search(message):
        return FIX_REBOOT
    return '' if _HAS_FIX.search(message) else FIX_UNKNOWN


def host_rows(records, hosts_all, hosts_active, group_hosts=None):
    """One row per node: ``host``, ``status`` (ok, failed, unreachable, not_run), ``stage``, ``task``,
    ``message``, ``state`` (what the node is left with) and ``fix``.

    ``records``: host -> its ``outcome_stopped`` (or None). ``hosts_all``: the hosts the play targeted
    (``ansible_play_hosts_all``: the ``--limit`` applied, failed hosts kept); ``hosts_active``: those
    still in the play (``ansible_play_hosts``); ``group_hosts``: every host of the group
    (``groups['npu_nodes']``), so that hosts left out by ``--limit`` get a row too. Not-ok rows
    come first (unreachable, failed, not run), then the rest, each in inventory order.
    """
    records = dict(records or {})
    hosts_all = [_text(host) for host in hosts_all or []]
    active = set(_text(host) for host in hosts_active or [])
    targeted = set(hosts_all)
    rows = []
    for host in hosts_all:
        if host in active:
            rows.append({'host': host, 'status': 'ok', 'stage': '', 'task': '', 'message': '', 'state': '', 'fix': ''})
            continue
        record = records.get(host)
        if isinstance(record, dict):
            unreachable = bool(record.get('unreachable'))
            stage = _text(record.get('stage')) or 'unknown'
            message = _text(record.get('message'))
            rows.append({
                'host': host,
                'status': 'unreachable' if unreachable else 'failed',
                'stage': stage,
                'task': _text(record.get('task')),
                'message': message,
                'state': _state(stage, message),
                'fix': _fix(message, unreachable) or FIX_FAILED,
            })
        else:
            # Ansible took the host out without a stage recording why: a connection lost between
            # tasks (unreachable hosts get no rescue), or a failure outside the collection's stages.
            rows.append({
                'host': host, 'status': 'unreachable', 'stage': 'unknown', 'task': '',
                'message': 'stopped answering, or failed outside the npu.ascend stages (its error is above)',
                'state': UNKNOWN_STATE, 'fix': FIX_UNREACHABLE,
            })
    for host in group_hosts or []:
        host = _text(host)
        if host not in targeted:
            rows.append({'host': host, 'status': 'not_run', 'stage': '', 'task': '',
                         'message': 'left out of this run (--limit)', 'state': 'as the previous run left it',
                         'fix': ''})
    order = {'unreachable': 0, 'failed': 1, 'not_run': 2, 'ok': 3}
    return sorted(rows, key=lambda row: order[row['status']])


def hosts_to_read(hosts, hosts_active, stops_by_host):
    """The hosts of ``hosts`` that stopped earlier in the run (not in ``hosts_active``) and are worth
    reading on their behalf: all but those whose stop record says they were unreachable, since trying a
    dead node again costs a connection timeout each."""
    active = set(hosts_active)
    return [host for host in hosts if host not in active
            and not (stops_by_host.get(host) or {}).get('unreachable')]


def max_fail_percentage(value, name='npu_ascend_max_fail_percentage'):
    """The budget as a number from 0 to 100, or OutcomeError naming the variable."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise OutcomeError('%s is %r, not a number. Fix: set it to a percentage from 0 to 100' % (name, value))
    if not 0 <= number <= 100:
        raise OutcomeError('%s is %s, outside 0 to 100. Fix: set it to a percentage from 0 to 100' % (name, value))
    return number


def failure_budget(hosts_all, hosts_active, budget, name='npu_ascend_max_fail_percentage', stage='preflight',
                   stops=None, play=None):
    """Whether the nodes that failed this gate stay within the budget.

    A node whose stop record (``stops``: host -> outcome_stopped) names another play than ``play``
    stopped before the gate's play and was judged by an earlier gate: it is not counted here.
    Returns ``total``, ``failed`` (the hosts), ``earlier`` (those left out), ``percentage``,
    ``budget``, ``exceeded`` and ``message``: the reason the run stops everywhere when exceeded,
    else a one-line account.
    """
    budget = max_fail_percentage(budget, name)
    stops = stops or {}
    earlier = [_text(host) for host in hosts_all or []
               if play and (stops.get(host) or {}).get('play') not in (None, '', play)]
    hosts_all = [_text(host) for host in hosts_all or [] if _text(host) not in earlier]
    active = set(_text(host) for host in hosts_active or [])
    failed = [host for host in hosts_all if host not in active]
    total = len(hosts_all)
    percentage = (100.0 * len(failed) / total) if total else 0.0
    exceeded = percentage > budget
    if exceeded:
        message = (
            'Stopped before any change: %d of %s failed %s (%.0f%%), more than the failure budget %s=%g%% allows: '
            '%s. No node was changed: when many nodes fail together, they usually share one cause (the stack, the '
            'package source, the inventory). Fix: see each node\'s message above and fix what they share; if these '
            'nodes are really down or sick, raise %s or leave them out with --limit' % (
                len(failed), nodes_text(total), stage, percentage, name, budget, hosts_text(failed), name))
    elif failed:
        message = ('%d of %s failed %s (%.0f%%, within the budget %s=%g%%): %s; the others go on' % (
            len(failed), nodes_text(total), stage, percentage, name, budget, hosts_text(failed)))
    else:
        message = 'All %s passed %s' % (nodes_text(total), stage)
    if earlier:
        message += ' (%s that stopped earlier in the run not counted)' % nodes_text(len(earlier))
    return {'total': total, 'failed': failed, 'earlier': earlier, 'percentage': round(percentage, 1), 'budget': budget,
            'exceeded': exceeded, 'message': message}


def retry_command(hosts, playbook=None, inventories=None, tags=None, skip_tags=None, check_mode=False):
    """The ``ansible-playbook`` command that runs the playbook again on ``hosts`` only (None when there are none)."""
    hosts = [_text(host) for host in hosts or []]
    if not hosts:
        return None
    argv = ['ansible-playbook']
    for source in inventories or []:
        argv += ['-i', _text(source)]
    argv.append(_text(playbook) or 'PLAYBOOK')
    argv += ['--limit', ','.join(hosts)]
    tags = [_text(tag) for tag in tags or [] if _text(tag) != 'all']
    if tags:
        argv += ['--tags', ','.join(tags)]
    skip_tags = [_text(tag) for tag in skip_tags or []]
    if skip_tags:
        argv += ['--skip-tags', ','.join(skip_tags)]
    if check_mode:
        argv.append('--check')
    return ' '.join(shlex.quote(arg) for arg in argv)


def summary_lines(rows, retry=None, limit=HOSTS_SHOWN):
    """The run's summary: counts, then each node that did not finish with its stage, message, state and fix."""
    rows = list(rows or [])
    count = {}
    for row in rows:
        count[row['status']] = count.get(row['status'], 0) + 1
    targeted = len(rows) - count.get('not_run', 0)
    lines = ['Run of %s: %d done, %d failed, %d unreachable%s' % (
        nodes_text(targeted), count.get('ok', 0), count.get('failed', 0), count.get('unreachable', 0),
        ('; %d not in this run (--limit): %s' % (
            count['not_run'], hosts_text([row['host'] for row in rows if row['status'] == 'not_run'], limit)))
        if count.get('not_run') else '')]
    for status, title in (('unreachable', 'Unreachable'), ('failed', 'Failed')):
        stopped = [row for row in rows if row['status'] == status]
        if not stopped:
            continue
        lines.append('%s:' % title)
        for row in stopped:
            where = 'at %s' % row['stage'] + (', task "%s"' % row['task'] if row['task'] else '')
            lines.append('  %s (%s): %s' % (row['host'], where, _first_lines(row['message'])))
            lines.append('    left: %s; fix: %s' % (row['state'], row['fix']))
    if retry:
        lines.append('Retry only these nodes: %s' % retry)
    return lines
