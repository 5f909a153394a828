# -*- coding: utf-8 -*-
"""The npu.ascend.fleet stdout callback fed events as Ansible sends them, built from Ansible's own objects
(Play over a real inventory, Task, Host, CallbackTaskResult, AggregateStats): the progress counts, when a
line is written (per task and per interval, never per host), failures and unreachable hosts as they happen,
long and odd messages, the final table and the run's outcome, and the redrawn line on a terminal only.
"""

import re

import pytest
import yaml

from ansible.executor.stats import AggregateStats
try:
    from ansible.executor.task_result import CallbackTaskResult
except ImportError:  # before ansible-core 2.19 callbacks get a TaskResult, made the same way
    from ansible.executor.task_result import TaskResult as CallbackTaskResult
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play import Play
from ansible.playbook.task import Task
from ansible.vars.manager import VariableManager

from ansible_collections.npu.ascend.plugins.callback import fleet

OPTIONS = dict((name, spec['default']) for name, spec in yaml.safe_load(fleet.DOCUMENTATION)['options'].items())
PROGRESS = re.compile(r'^\[(?P<play>[^\]]+)\] \| task (?P<number>\d+): (?P<task>.*) \| done (?P<done>\d+), '
                      r'failed (?P<failed>\d+), unreachable (?P<unreachable>\d+), skipped (?P<skipped>\d+), '
                      r'remaining (?P<remaining>\d+) of (?P<hosts>\d+)$')


class Screen:
    """Stands in for ansible's Display: keeps exactly what would reach stdout."""

    verbosity = 0

    def __init__(self):
        self.text = ''

    def display(self, msg, color=None, stderr=False, screen_only=False, log_only=False, newline=True, caplevel=None):
        self.text += msg + ('\n' if newline else '')

    def lines(self):
        return self.text.splitlines()


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Run:
    """One playbook run: an inventory of ``hosts``, the callback, and helpers that send its events."""

    def __init__(self, hosts, tty=False, **options):
        self.loader = DataLoader()
        self.inventory = InventoryManager(loader=self.loader, sources=[','.join(hosts) + ','])
        self.variables = VariableManager(loader=self.loader, inventory=self.inventory)
        self.screen = Screen()
        self.callback = fleet.CallbackModule(display=self.screen)
        self.callback._plugin_options = dict(OPTIONS, **options)
        self.clock = Clock()
        self.callback._clock = self.clock
        self.callback._tty = tty
        self.stats = AggregateStats()

    def play(self, name, hosts='all'):
        play = Play.load({'name': name, 'hosts': 'all', 'gather_facts': False}, variable_manager=self.variables,
                         loader=self.loader)
        # As after post_validate: the pattern, or the empty list a template such as report.yml's gives.
        play.hosts = hosts
        self.callback.v2_playbook_on_play_start(play)

    def task(self, name, action='ansible.builtin.command', **attributes):
        task = Task()
        task.name = name
        task.action = action
        for key, value in attributes.items():
            setattr(task, key, value)
        self.callback.v2_playbook_on_task_start(task, is_conditional=False)
        self.current = task
        return task

    def result(self, host, state, **data):
        """Send one host's result for the current task; ``state`` is ok, changed, skipped, failed or unreachable."""
        result = CallbackTaskResult(self.inventory.get_host(host), self.current, data, {'name': self.current.name})
        stat = {'ok': 'ok', 'changed': 'ok', 'skipped': 'skipped', 'failed': 'failures', 'unreachable': 'dark'}[state]
        self.stats.increment(stat, host)
        if state == 'changed':
            self.stats.increment('changed', host)
            data.setdefault('changed', True)
        if state in ('ok', 'changed'):
            self.callback.v2_runner_on_ok(result)
        elif state == 'skipped':
            self.callback.v2_runner_on_skipped(result)
        elif state == 'failed':
            self.callback.v2_runner_on_failed(result, ignore_errors=data.pop('_ignore_errors', False))
        else:
            self.callback.v2_runner_on_unreachable(result)

    def end(self, outcome=None):
        if outcome is not None:
            self.stats.set_custom_stats('npu_ascend_outcome', outcome)
        self.callback.v2_playbook_on_stats(self.stats)
        return self.screen.lines()


def _progress(lines):
    return [match.groupdict() for match in map(PROGRESS.match, lines) if match]


def _numbers(line):
    return dict((key, int(line[key])) for key in ('done', 'failed', 'unreachable', 'skipped', 'remaining', 'hosts'))


HOSTS = ['node-%d' % number for number in range(1, 5)]


def test_a_task_ends_with_its_counts_and_the_play_with_its_own():
    run = Run(HOSTS)
    run.play('Install CANN')
    run.task('Install the toolkit')
    run.result('node-1', 'ok')
    run.result('node-2', 'changed')
    run.result('node-3', 'skipped')
    run.result('node-4', 'failed', msg='node-4: cann: the installer failed. Fix: free space in /usr/local')
    run.task('Write the environment')
    run.result('node-1', 'ok')
    run.result('node-2', 'ok')
    run.result('node-3', 'ok')
    lines = run.end()
    assert lines[0] == 'PLAY [Install CANN] 4 hosts'
    first, second = _progress(lines)
    assert (first['number'], first['task']) == ('1', 'Install the toolkit')
    assert _numbers(first) == {'done': 2, 'failed': 1, 'unreachable': 0, 'skipped': 1, 'remaining': 0, 'hosts': 4}
    # The failed host is out of the play: nothing remains once the three others reported.
    assert _numbers(second) == {'done': 3, 'failed': 1, 'unreachable': 0, 'skipped': 0, 'remaining': 0, 'hosts': 4}
    assert '[Install CANN] finished: 3 done, 1 failed, 0 unreachable of 4 hosts' in lines


def test_a_long_task_shows_its_progress_once_per_interval():
    run = Run(HOSTS, progress_interval=30)
    run.play('Install the firmware and driver')
    run.task('Install the driver')
    run.result('node-1', 'changed')
    run.clock.now += 31
    run.result('node-2', 'changed')
    run.clock.now += 5
    run.result('node-3', 'changed')
    run.clock.now += 40
    run.result('node-4', 'changed')
    lines = run.end()
    assert [(line['done'], line['remaining']) for line in _progress(lines)] == [('2', '2'), ('4', '0')]


def test_an_unreachable_host_is_printed_at_once_and_left_out_of_the_later_plays():
    run = Run(HOSTS)
    run.play('Preflight')
    run.task('Gather facts')
    run.result('node-1', 'ok')
    run.result('node-2', 'unreachable', msg='Failed to connect to the host via ssh: Connection timed out', unreachable=True)
    assert run.screen.lines()[-1] == ('UNREACHABLE node-2 | Gather facts | Failed to connect to the host via ssh: '
                                      'Connection timed out')
    run.result('node-3', 'ok')
    run.result('node-4', 'ok')
    run.play('Install')
    run.task('Install the driver')
    for host in ('node-1', 'node-3', 'node-4'):
        run.result(host, 'ok')
    lines = run.end()
    assert 'PLAY [Install] 3 hosts' in lines
    assert [_numbers(line)['unreachable'] for line in _progress(lines)] == [1, 0]
    assert _numbers(_progress(lines)[-1])['remaining'] == 0


def test_a_host_unreachable_in_a_task_that_ignores_it_goes_on_silently():
    run = Run(HOSTS[:2])
    run.play('Preflight')
    run.task('Check the connection', action='ansible.builtin.ping', ignore_unreachable=True)
    run.result('node-1', 'ok')
    run.result('node-2', 'unreachable', msg='Failed to connect', unreachable=True)
    run.task('Stop the node that cannot be reached', action='ansible.builtin.fail')
    run.result('node-1', 'skipped')
    run.result('node-2', 'failed', msg='node-2 stopped at connect: Failed to connect. Fix: bring the node back')
    lines = run.end()
    assert not any(line.startswith('UNREACHABLE') for line in lines)
    assert 'FAILED node-2 | Stop the node that cannot be reached | node-2 stopped at connect: Failed to connect. ' \
           'Fix: bring the node back' in lines


def test_a_long_message_is_cut_and_says_so_and_neither_the_result_nor_a_traceback_is_printed():
    run = Run(HOSTS[:1], message_limit=200)
    run.play('Install')
    run.task('Install the driver')
    message = 'node-1: driver: the installer failed: ' + 'E' * 5000 + ' Fix: read /var/log/ascend_seclog'
    run.result('node-1', 'failed', msg=message, exception='Traceback (most recent call last):\n  File "x"',
               stdout='S' * 10000, rc=1)
    failure = [line for line in run.end() if line.startswith('FAILED')]
    assert len(failure) == 1
    assert failure[0].startswith('FAILED node-1 | Install the driver | node-1: driver: the installer failed: EEE')
    assert failure[0].endswith('... (%d more characters cut; the default callback shows the whole message)'
                               % (len(message) - 200))
    assert len(failure[0]) < 400 and 'Traceback' not in run.screen.text and 'SSS' not in run.screen.text


def test_a_message_keeps_its_lines_and_loses_terminal_codes():
    run = Run(HOSTS[:1])
    run.play('Install')
    run.task('Check')
    run.result('node-1', 'failed', msg='\x1b[31mnode-1: two problems\x1b[0m\r\nsecond line\x07')
    assert 'FAILED node-1 | Check | node-1: two problems\n    second line\n' in run.screen.text
    assert '\x1b' not in run.screen.text and '\r' not in run.screen.text and '\x07' not in run.screen.text


def test_a_failed_command_without_a_message_shows_its_return_code_and_error():
    run = Run(HOSTS[:1])
    run.play('Install')
    run.task('Run the installer')
    run.result('node-1', 'failed', rc=2, stderr='  no space left on device\n', stdout='ignored')
    assert 'FAILED node-1 | Run the installer | rc=2: no space left on device' in run.screen.lines()


def test_a_failed_loop_item_is_printed_with_its_label():
    run = Run(HOSTS[:1])
    run.play('Install')
    task = run.task('Stage the packages')
    item = CallbackTaskResult(run.inventory.get_host('node-1'), task,
                              {'item': 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run', 'failed': True,
                               'msg': 'node-1: packages: checksum mismatch. Fix: download it again'},
                              {'name': 'Stage the packages'})
    run.callback.v2_runner_item_on_failed(item)
    ignored = CallbackTaskResult(run.inventory.get_host('node-1'), task, {'item': 'x', 'msg': 'ignored'},
                                 {'name': 'Stage the packages', 'ignore_errors': True})
    run.callback.v2_runner_item_on_failed(ignored)
    assert run.screen.lines()[-1] == ('FAILED node-1 | Stage the packages | item Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
                                      ' | node-1: packages: checksum mismatch. Fix: download it again')


def test_a_rescued_host_is_back_in_the_play_and_ignored_errors_count_as_done():
    run = Run(HOSTS[:3])
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'failed', msg='node-1: transient')
    run.result('node-2', 'failed', msg='ignored', _ignore_errors=True)
    run.result('node-3', 'ok')
    run.task('Record where the node stopped')
    run.result('node-1', 'ok')
    lines = run.end()
    assert [line for line in lines if line.startswith('FAILED')] == ['FAILED node-1 | Install the driver | node-1: transient']
    first, rescue = (_numbers(line) for line in _progress(lines))
    assert (first['done'], first['failed']) == (2, 1)
    # Only node-1 runs the rescue; at its end the others count as having skipped it.
    assert (rescue['done'], rescue['failed'], rescue['skipped'], rescue['remaining']) == (1, 0, 2, 0)


def test_a_run_once_task_counts_for_every_host_and_prints_its_message():
    run = Run(HOSTS)
    run.play('Summarise')
    run.task('Summarise the run', action='ansible.builtin.debug', run_once=True)
    run.result('node-1', 'ok', msg=['All 4 nodes passed preflight', 'Retry: none'])
    run.task('Print the report of node-1', action='ansible.builtin.debug')
    for host in HOSTS:
        run.result(host, 'ok', msg='per-host report of %s' % host)
    lines = run.end()
    assert 'All 4 nodes passed preflight' in lines and 'Retry: none' in lines
    assert 'per-host report' not in run.screen.text
    assert _numbers(_progress(lines)[0])['done'] == 4


@pytest.mark.parametrize('seconds_per_result', [0, 1])
def test_a_fleet_of_150_hosts_writes_lines_per_task_and_interval_not_per_host(seconds_per_result):
    hosts = ['npu-%03d' % number for number in range(150)]
    run = Run(hosts, progress_interval=30)
    run.play('Install the firmware and driver')
    tasks = 6
    for number in range(tasks):
        run.task('Step %d' % number)
        for host in hosts:
            run.clock.now += seconds_per_result
            run.result(host, 'failed' if (number == 2 and host == 'npu-007') else 'changed',
                       msg='npu-007: driver: failed. Fix: reseat the card')
            if number == 2 and host == 'npu-007':
                hosts_left = [other for other in hosts if other != host]
        if number == 2:
            hosts = hosts_left
    lines = run.end()
    progress = _progress(lines)
    elapsed = seconds_per_result * sum(150 if number < 3 else 149 for number in range(tasks))
    assert tasks <= len(progress) <= tasks + elapsed // 30 + 1
    assert _numbers(progress[-1]) == {'done': 149, 'failed': 1, 'unreachable': 0, 'skipped': 0, 'remaining': 0,
                                      'hosts': 150}
    assert [line for line in lines if line.startswith('FAILED')] == [
        'FAILED npu-007 | Step 2 | npu-007: driver: failed. Fix: reseat the card']
    # Play header, progress, the failure, the play's end, the table's title, header and 150 rows.
    assert len(lines) == 1 + len(progress) + 1 + 1 + 1 + 1 + 1 + 150


def test_the_table_puts_failed_and_unreachable_hosts_first_and_the_outcome_last():
    run = Run(HOSTS)
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'changed')
    run.result('node-2', 'failed', msg='node-2: no')
    run.result('node-3', 'unreachable', msg='gone', unreachable=True)
    run.result('node-4', 'skipped')
    lines = run.end(outcome={'retry_hosts': ['node-2', 'node-3'],
                             'retry_command': 'ansible-playbook -i inv npu.ascend.provision --limit node-2,node-3'})
    start = lines.index('RECAP: 4 hosts, those that failed or were unreachable first')
    header, rows = lines[start + 1], lines[start + 2:start + 6]
    assert header.split() == ['HOST', 'OK', 'CHANGED', 'FAILED', 'UNREACHABLE', 'SKIPPED']
    assert [row.split() for row in rows] == [
        ['node-2', '0', '0', '1', '0', '0'],
        ['node-3', '0', '0', '0', '1', '0'],
        ['node-1', '1', '1', '0', '0', '0'],
        ['node-4', '0', '0', '0', '0', '1'],
    ]
    assert lines[start + 6:] == ['OUTCOME: 2 stopped: node-2, node-3',
                                 'Retry only these nodes: ansible-playbook -i inv npu.ascend.provision --limit node-2,node-3']


def test_without_a_published_outcome_the_run_ends_with_the_table():
    run = Run(HOSTS[:1])
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'ok')
    lines = run.end()
    assert lines[-1].split() == ['node-1', '1', '0', '0', '0', '0'] and 'OUTCOME' not in run.screen.text


def test_a_play_without_hosts_says_so():
    run = Run(HOSTS)
    run.play('Report the state of the NPU fleet', hosts=[])
    run.callback.v2_playbook_on_no_hosts_matched()
    assert run.screen.lines() == ['PLAY [Report the state of the NPU fleet] 0 hosts', '  no hosts matched']


def test_on_a_terminal_one_line_per_play_is_redrawn_and_failures_print_above_it():
    run = Run(HOSTS[:2], tty=True)
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'changed')
    run.result('node-2', 'failed', msg='node-2: no. Fix: yes')
    run.end()
    text = run.screen.text
    assert text.count('\r\x1b[K[Install] | task 1: Install the driver | done') >= 2
    # The failure clears the progress line, prints on a line of its own, and the progress line comes back.
    assert '\r\x1b[KFAILED node-2 | Install the driver | node-2: no. Fix: yes\n\r\x1b[K[Install]' in text
    assert text.count('\n[Install] finished') == 1


def test_on_a_narrow_terminal_the_task_name_gives_way_to_the_counts():
    run = Run(HOSTS[:2], tty=True)
    run.callback._terminal_width = lambda: 100
    run.play('Install')
    run.task('npu.ascend.hdk : Install the firmware and driver where the probe finds something to do')
    run.result('node-1', 'changed')
    run.callback._terminal_width = lambda: 40
    run.result('node-2', 'changed')
    redrawn = run.screen.text.split('\r\x1b[K')[-3:]
    assert redrawn[1] == '[Install] | task 1: npu.ascend.hd... | done 1, failed 0, unreachable 0, skipped 0, remaining 1 of 2'
    assert len(redrawn[1]) == 99
    # Narrower than the counts: their end, which says how far the play is, stays.
    assert redrawn[2] == 'led 0, unreachable 0, skipped 0, remaining 0 of 2'[-39:]


def test_when_not_on_a_terminal_no_control_codes_are_written():
    run = Run(HOSTS[:2], tty=False, progress_interval=0)
    run.play('Install')
    run.task('Install the driver')
    run.result('node-1', 'changed')
    run.result('node-2', 'failed', msg='node-2: no')
    run.end(outcome={'retry_hosts': ['node-2'], 'retry_command': 'ansible-playbook x --limit node-2'})
    assert '\x1b' not in run.screen.text and '\r' not in run.screen.text
    # With progress_interval 0, every result writes its line; the task's end repeats none.
    assert [(line['done'], line['failed'], line['remaining']) for line in _progress(run.screen.lines())] == [
        ('1', '0', '1'), ('1', '1', '0')]


def test_the_documentation_declares_a_stdout_callback_with_its_options():
    doc = yaml.safe_load(fleet.DOCUMENTATION)
    assert doc['name'] == 'fleet' and doc['type'] == 'stdout'
    assert fleet.CallbackModule.CALLBACK_TYPE == 'stdout' and fleet.CallbackModule.CALLBACK_NAME == 'npu.ascend.fleet'
    assert OPTIONS == {'progress_interval': 30, 'message_limit': 1000}
    for spec in doc['options'].values():
        assert spec['env'][0]['name'].startswith('ANSIBLE_FLEET_') and spec['ini'][0]['section'] == 'callback_fleet'
