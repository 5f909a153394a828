# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
name: fleet
type: stdout
short_description: Progress of a run over a large fleet, its failures as they happen and a table at the end
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Opt-in output for runs over many hosts, where the default output prints a line per host per task.
    Ansible's default output stays the default; this one is chosen with
    E(ANSIBLE_STDOUT_CALLBACK=npu.ascend.fleet) or C(stdout_callback = npu.ascend.fleet) in C(ansible.cfg).
  - "Per play, one progress line with the play's host counts for its current task: C(done) (ok or changed),
    C(failed) and C(unreachable) (hosts whose last result in the play was a failure, or that could not be
    reached), C(skipped), and C(remaining), the hosts that have not reported on the task yet. When a task
    ends, the hosts that did not run it (a rescue section runs only on the hosts that failed) count as skipped."
  - On a terminal the line is redrawn in place as results come in. When the output is not a terminal (a log
    file, CI) it is never redrawn and holds no cursor or line-clearing codes; a new line is written when a
    task ends, and within a long task at most once per O(progress_interval) seconds, so the number of lines
    grows with the tasks and the time taken, not with the number of hosts.
  - Each failure and each unreachable host is printed when it happens, with the host, the task and the task's
    message as it is (the collection's messages name the host, the cause and the fix), its further lines
    indented, cut at O(message_limit) characters; never the whole result or a traceback. Failures of tasks with
    C(ignore_errors) and hosts unreachable in tasks with C(ignore_unreachable) are counted, not printed.
  - The messages of tasks that run once for the whole play (C(run_once) debug and assert tasks, such as the
    playbooks' fleet summaries) are printed; per-host debug output is not.
  - At the end, a table with one row per host (ok, changed, failed, unreachable, skipped), hosts that failed
    or were unreachable first, then the run's outcome when the playbook published C(npu_ascend_outcome) with
    M(ansible.builtin.set_stats) (the playbooks of this collection do when a node stopped) - the stopped
    nodes and the command that retries only them.
  - Nothing printed acts on the terminal. Names (hosts, plays, tasks, loop items, the outcome's hosts and retry
    command) stay on one line and show each control character escaped (C(\x1b)); messages keep their text, line
    breaks and tabs and lose escape sequences and other control characters (C0 and C1 controls, DEL, bidi
    overrides, zero-width characters).
  - Colours follow Ansible's settings (off when the output is not a terminal, unless E(ANSIBLE_FORCE_COLOR) is set).
  - For C(ansible-playbook) on a controller. AWX records job events through a stdout callback of its own; keep
    that one there.
requirements:
  - Set as the stdout callback, as above.
options:
  progress_interval:
    description:
      - When the output is not a terminal, the least number of seconds between two progress lines of the same
        task. The end of each task always writes its line.
      - V(0) writes a line for every result (one line per host per task).
    type: float
    default: 30
    env:
      - name: ANSIBLE_FLEET_PROGRESS_INTERVAL
    ini:
      - section: callback_fleet
        key: progress_interval
  message_limit:
    description:
      - The most characters of a failure's message printed; a longer message is cut and says how much was left out.
    type: int
    default: 1000
    env:
      - name: ANSIBLE_FLEET_MESSAGE_LIMIT
    ini:
      - section: callback_fleet
        key: message_limit
'''

import dataclasses
import re
import shutil
import sys
import time

from ansible import constants as C
from ansible.errors import AnsibleError
from ansible.plugins.callback import CallbackBase

# What a name, a task, a message or a retry command may carry that a terminal would act on instead of showing:
# escape sequences (CSI, OSC such as a window title or a clipboard write, DCS/SOS/PM/APC strings, two-byte ESC
# sequences) in their 7-bit and 8-bit (C1) forms, and single characters - C0 and C1 controls, DEL, and the
# invisible ones that reorder or hide text (bidi overrides and isolates, zero-width characters, line and
# paragraph separators, the byte order mark).
_SEQUENCE = re.compile(r'(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]'
                       r'|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?'
                       r'|\x1b[ -/]*[0-~]')
_CONTROL = re.compile('[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]')
_ONCE_MESSAGE_ACTIONS = frozenset(('debug', 'assert'))
_TABLE_COLUMNS = ('ok', 'changed', 'failed', 'unreachable', 'skipped')
_REDRAW = '\r\x1b[K'
_CONTINUATION = '    '


def _shown(text, lines=False):
    r"""``text`` as it may reach the terminal; the one filter of every string this callback prints.

    A name (host, play, task, loop item, the outcome's hosts and retry command) stays on one line and shows each
    control character escaped (``\x1b``, ``\n``, ``\u202e``), so that it cannot act on the terminal, forge a line,
    or pass for another name. A message (``lines``) keeps its text, tabs and line breaks and loses the rest: the
    colour codes of a tool's output, and any other sequence or control character. Printable non-ASCII stays.
    """
    text = ('%s' % text).replace('\r\n', '\n')
    if lines:
        return _CONTROL.sub(lambda match: match.group() if match.group() in '\n\t' else '', _SEQUENCE.sub('', text))
    return _CONTROL.sub(lambda match: ascii(match.group())[1:-1], text)


def _shown_event(event):
    """A warning's or deprecation's event (ansible-core's dataclass) with every text of it, and of the events it
    chains to, through ``_shown``: a module's warning is text the node wrote."""
    changes = {}
    for field in ('msg', 'help_text', 'formatted_source_context', 'formatted_traceback'):
        value = getattr(event, field, None)
        if isinstance(value, str):
            changes[field] = _shown(value, lines=True)
    chain = getattr(event, 'chain', None)
    if chain is not None and getattr(chain, 'event', None) is not None:
        changes['chain'] = dataclasses.replace(chain, event=_shown_event(chain.event))
    if getattr(event, 'events', None):
        changes['events'] = tuple(_shown_event(child) for child in event.events)
    return dataclasses.replace(event, **changes)


def _of(result, name):
    """A task result's ``host``, ``task``, ``result`` or ``task_fields``: public properties since ansible-core
    2.19 (which keeps the underscored names until 2.23), underscored attributes only before it (2.16 to 2.18)."""
    try:
        return getattr(result, name)
    except AttributeError:
        return getattr(result, '_' + name)


def _short_action(action):
    return (action or '').rsplit('.', 1)[-1]


class _PlayProgress:
    """The counts of one play (one batch of it, with serial) while it runs."""

    def __init__(self, name, hosts):
        self.name = name
        self.hosts = list(hosts)
        self.known = set(self.hosts)
        self.stopped = {}
        self.task = None
        self.task_number = 0
        self.run_once = False
        self.reported = {}

    def add_host(self, host):
        if host not in self.known:
            self.known.add(host)
            self.hosts.append(host)

    def start_task(self, name, run_once):
        self.task = name
        self.task_number += 1
        self.run_once = run_once
        self.reported = {}

    def report(self, host, state):
        """``state``: done, skipped, failed or unreachable; a host's last result in the play decides."""
        self.add_host(host)
        if state in ('failed', 'unreachable'):
            self.stopped[host] = state
            self.reported.pop(host, None)
            return
        # A host that failed and then reports again was rescued (or its failure ignored): it is back in the play.
        self.stopped.pop(host, None)
        if self.run_once:
            # Ansible applies a run_once result to every host of the play.
            for other in self.hosts:
                if other not in self.stopped:
                    self.reported[other] = state
        self.reported[host] = state

    def end_task(self):
        """At a task's end, the hosts of the play that did not run it (a rescue runs only where a task failed) skipped it."""
        for host in self.hosts:
            if host not in self.stopped and host not in self.reported:
                self.reported[host] = 'skipped'

    def counts(self):
        states = list(self.reported.values())
        done, skipped = states.count('done'), states.count('skipped')
        failed = sum(1 for state in self.stopped.values() if state == 'failed')
        unreachable = len(self.stopped) - failed
        remaining = max(0, len(self.hosts) - done - skipped - failed - unreachable)
        return {'done': done, 'failed': failed, 'unreachable': unreachable, 'skipped': skipped,
                'remaining': remaining, 'hosts': len(self.hosts)}


class CallbackModule(CallbackBase):
    """Progress lines per play, failures as they happen, a table and the run's outcome at the end."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'npu.ascend.fleet'

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._play = None
        # Hosts whose last result in an earlier play was a failure or unreachable: Ansible leaves them out of
        # the later plays, and so do the counts.
        self._out_of_run = set()
        self._last_line = None
        self._last_line_at = 0.0
        self._redrawn = False
        self._clock = time.monotonic
        self._tty = None

    # Output helpers.

    def _on_terminal(self):
        if self._tty is None:
            try:
                self._tty = sys.stdout.isatty()
            except (AttributeError, ValueError):
                self._tty = False
        return self._tty

    def _write(self, text, color=None):
        """A whole line (or several), below the progress line when that is being redrawn."""
        if self._redrawn:
            self._display.display(_REDRAW, newline=False, screen_only=True)
        self._display.display(text, color=color)
        if self._redrawn:
            self._redraw(force=True)

    def _progress_text(self, width=None):
        """The play's line; with ``width``, cut before its counts so that they fit on the terminal."""
        play = self._play
        numbers = play.counts()
        text = '[%s] | task %d: %s' % (play.name, play.task_number, play.task)
        counts = ' | done %d, failed %d, unreachable %d, skipped %d, remaining %d of %d' % (
            numbers['done'], numbers['failed'], numbers['unreachable'], numbers['skipped'], numbers['remaining'],
            numbers['hosts'])
        if width is not None and len(text) + len(counts) >= width:
            room = width - 1 - len(counts)
            text = text[:room - 3] + '...' if room > 3 else ''
            return (text + counts)[-(width - 1):]
        return text + counts

    def _redraw(self, force=False):
        text = self._progress_text(self._terminal_width())
        if text == self._last_line and not force:
            return
        self._display.display(_REDRAW + text, newline=False, screen_only=True)
        self._flush()
        self._redrawn = True
        self._last_line = text

    def _terminal_width(self):
        try:
            return shutil.get_terminal_size((120, 24)).columns
        except (OSError, ValueError):
            return 120

    def _flush(self):
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass

    def _progress(self, task_ended=False):
        """The play's line, when it changed: redrawn on a terminal; else at a task's end or once per interval."""
        if self._play is None or self._play.task is None:
            return
        if self._on_terminal():
            self._redraw()
            return
        text = self._progress_text()
        if text == self._last_line:
            return
        now = self._clock()
        if task_ended or now - self._last_line_at >= float(self.get_option('progress_interval')):
            self._display.display(text)
            self._last_line = text
            self._last_line_at = now

    def _end_line(self):
        """Leave the redrawn line where it is and go on below it."""
        if self._redrawn:
            self._display.display('', screen_only=True)
            self._redrawn = False

    def _message(self, result):
        """The task's own message, as it is, cut at message_limit; what a failure says without one."""
        text = result.get('msg')
        if isinstance(text, (list, tuple)):
            text = '\n'.join('%s' % line for line in text)
        text = '%s' % text if text not in (None, '') else ''
        if not text:
            # A command's failure carries no msg: its return code and what it wrote instead.
            output = ('%s' % (result.get('stderr') or result.get('module_stderr') or result.get('stdout')
                              or result.get('module_stdout') or '')).strip()
            parts = ['rc=%s' % result['rc']] if result.get('rc') not in (None, '') else []
            text = ': '.join(parts + ([output] if output else [])) or (
                'the task failed without a message (the default callback with -v shows its result)')
        text = _shown(text, lines=True).strip()
        limit = int(self.get_option('message_limit'))
        if limit > 0 and len(text) > limit:
            text = '%s ... (%d more characters cut; the default callback shows the whole message)' % (
                text[:limit], len(text) - limit)
        return text

    def _print_problem(self, label, result, color, item=None):
        where = '%s | %s%s' % (_shown(_of(result, 'host').get_name()), _shown(result.task_name or ''),
                               (' | item %s' % _shown(item)) if item is not None else '')
        # The message is the node's text: its further lines are indented, so that none of them can pass for a
        # line of the callback's own (OUTCOME, Retry only these nodes, FAILED).
        message = self._message(_of(result, 'result')).replace('\n', '\n' + _CONTINUATION)
        self._write('%s %s | %s' % (label, where, message), color=color)

    # Plays and tasks.

    def _end_task(self):
        play = self._play
        if play is not None and play.task is not None and (play.reported or play.stopped):
            play.end_task()
            self._progress(task_ended=True)

    def _end_play(self):
        play = self._play
        if play is None:
            return
        self._end_task()
        self._end_line()
        numbers = play.counts()
        done = numbers['hosts'] - numbers['failed'] - numbers['unreachable']
        if play.task is not None:
            self._display.display('[%s] finished: %d done, %d failed, %d unreachable of %d hosts' % (
                play.name, done, numbers['failed'], numbers['unreachable'], numbers['hosts']))
        self._out_of_run.update(play.stopped)
        self._play = None
        self._last_line = None

    def _play_hosts(self, play):
        """The hosts the play runs on (the current batch, with serial), without those out of the run."""
        try:
            inventory = play._variable_manager._inventory
            hosts = [host.get_name() for host in inventory.get_hosts(play.hosts, order=play.order)]
        except (AttributeError, TypeError, AnsibleError):
            # Without the inventory the counts grow with the hosts that report.
            hosts = []
        return [host for host in hosts if host not in self._out_of_run]

    def v2_playbook_on_play_start(self, play):
        self._end_play()
        name = _shown(play.get_name().strip()) or 'play'
        self._play = _PlayProgress(name, self._play_hosts(play))
        self._last_line_at = self._clock()
        self._display.display('PLAY [%s] %d hosts' % (name, len(self._play.hosts)), color=C.COLOR_HIGHLIGHT)

    def v2_playbook_on_no_hosts_matched(self):
        self._display.display('  no hosts matched', color=C.COLOR_SKIP)

    def v2_playbook_on_no_hosts_remaining(self):
        self._write('  no hosts remaining: every host of the play failed or was unreachable', color=C.COLOR_ERROR)

    def _start_task(self, task):
        if self._play is None:
            return
        self._end_task()
        self._play.start_task(_shown(task.get_name().strip()), bool(getattr(task, 'run_once', False)))
        self._last_line_at = self._clock()
        if self._on_terminal():
            self._redraw()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start_task(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._start_task(task)

    # Results.

    def _count(self, result, state):
        if self._play is not None:
            self._play.report(_of(result, 'host').get_name(), state)
            self._progress()

    def _handle_warnings(self, res):
        """The task's warnings and deprecations, shown as the base class shows them, their texts filtered."""
        current = getattr(self, '_current_task_result', None)
        if not hasattr(current, 'warnings'):
            # ansible-core before 2.19: the result holds the texts (warnings) and keyword dicts (deprecations).
            for warning in res.pop('warnings', None) or ():
                self._display.warning(_shown(warning, lines=True))
            for deprecation in res.pop('deprecations', None) or ():
                self._display.deprecated(**dict(deprecation, msg=_shown(deprecation.get('msg', ''), lines=True)))
            return
        for key, show in (('warnings', '_warning'), ('deprecations', '_deprecated')):
            if res.pop(key, None):
                for summary in getattr(current, key) or ():
                    getattr(self._display, show)(dataclasses.replace(summary, event=_shown_event(summary.event)))

    def v2_runner_on_ok(self, result):
        self._handle_warnings(_of(result, 'result'))
        if _of(result, 'task').run_once and _short_action(_of(result, 'task').action) in _ONCE_MESSAGE_ACTIONS:
            message = _of(result, 'result').get('msg')
            if message not in (None, ''):
                self._write(self._message({'msg': message}))
        self._count(result, 'done')

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._handle_warnings(_of(result, 'result'))
        if ignore_errors:
            self._count(result, 'done')
            return
        self._print_problem('FAILED', result, C.COLOR_ERROR)
        self._count(result, 'failed')

    def v2_runner_on_unreachable(self, result):
        if _of(result, 'task').ignore_unreachable:
            # The play goes on with the host; the task's own handling (or a later failure) says what it means.
            self._count(result, 'done')
            return
        self._print_problem('UNREACHABLE', result, C.COLOR_UNREACHABLE)
        self._count(result, 'unreachable')

    def v2_runner_on_skipped(self, result):
        self._count(result, 'skipped')

    def v2_runner_item_on_failed(self, result):
        if not _of(result, 'task_fields').get('ignore_errors'):
            self._print_problem('FAILED', result, C.COLOR_ERROR, item=self._get_item_label(_of(result, 'result')))

    # The end of the run.

    def v2_playbook_on_stats(self, stats):
        self._end_play()
        hosts = sorted(stats.processed.keys())
        if hosts:
            self._display.display('', screen_only=True)
            self._display.display('RECAP: %d hosts, those that failed or were unreachable first' % len(hosts),
                                  color=C.COLOR_HIGHLIGHT)
            self._table(stats, hosts)
        outcome = (stats.custom.get('_run') or {}).get('npu_ascend_outcome') if stats.custom else None
        if isinstance(outcome, dict):
            stopped = outcome.get('retry_hosts') or []
            if not isinstance(stopped, (list, tuple)):
                stopped = [stopped]
            self._display.display('OUTCOME: %d stopped: %s' % (len(stopped), ', '.join(_shown(host) for host in stopped)),
                                  color=C.COLOR_ERROR if stopped else C.COLOR_OK)
            if outcome.get('retry_command'):
                self._display.display('Retry only these nodes: %s' % _shown(outcome['retry_command']))

    def _table(self, stats, hosts):
        rows = []
        for host in hosts:
            summary = stats.summarize(host)
            values = [summary.get('ok', 0), summary.get('changed', 0), summary.get('failures', 0),
                      summary.get('unreachable', 0), summary.get('skipped', 0)]
            stopped = bool(values[2] or values[3])
            rows.append((not stopped, _shown(host), values))
        rows.sort(key=lambda row: (row[0], row[1]))
        width = max(len('HOST'), max(len(row[1]) for row in rows))
        self._display.display('HOST'.ljust(width) + ''.join('  %11s' % column.upper() for column in _TABLE_COLUMNS))
        for finished, host, values in rows:
            self._display.display(host.ljust(width) + ''.join('  %11d' % value for value in values),
                                  color=None if finished else C.COLOR_ERROR)
