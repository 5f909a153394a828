# -*- coding: utf-8 -*-
"""timeout(1)'s wrapping, its exit codes and the timed run the modules and the npu-smi and hccn_tool readers share."""

import pytest

from ansible_collections.npu.ascend.plugins.module_utils import hccn_reader, npu_smi_reader, timed_command


def test_the_command_runs_under_timeout_with_a_kill_after():
    assert timed_command.timeout_argv(('/usr/bin/systemctl', 'show'), 30, 5) == [
        'timeout', '--kill-after=5', '30', '/usr/bin/systemctl', 'show']


@pytest.mark.parametrize('rc, elapsed, stopped', [
    (124, 0.5, True),     # SIGTERM from timeout, whatever the clock says
    (137, 30.0, True),    # SIGKILL after the whole limit
    (-9, 31.0, True),
    (137, 2.0, False),    # killed early: the OOM killer's mark, not the limit
    (0, 31.0, False),
    (1, 40.0, False),
])
def test_only_the_limit_counts_as_a_timeout(rc, elapsed, stopped):
    assert timed_command.stopped_by_timeout(rc, elapsed, 30) is stopped


class _Clock(object):
    """A clock that advances by ``step`` seconds each time it is read."""

    def __init__(self, step):
        self.now, self.step = 1000.0, step

    def __call__(self):
        self.now += self.step
        return self.now


@pytest.mark.parametrize('rc, step, stopped', [(0, 1.0, False), (124, 0.1, True), (137, 31.0, True), (137, 1.0, False)])
def test_a_timed_run_is_under_timeout_in_the_c_locale_and_says_whether_timeout_stopped_it(rc, step, stopped):
    calls = []

    def run_command(argv, environ_update=None):
        calls.append((argv, environ_update))
        return rc, 'out', 'err'

    assert timed_command.run(run_command, ['npu-smi', 'info'], 30, 10, clock=_Clock(step)) == (rc, 'out', 'err', stopped)
    assert calls == [(['timeout', '--kill-after=10', '30', 'npu-smi', 'info'], {'LC_ALL': 'C', 'LANG': 'C'})]


def test_the_tool_runner_keeps_every_argv_and_returns_what_the_tool_printed():
    runner = timed_command.ToolRunner(lambda argv, environ_update=None: (3, 'out', 'err'), '/bin/tool', 30, clock=_Clock(1.0))
    assert runner._run_kept(['/bin/tool', 'a'], 10, AssertionError) == (3, 'out', 'err')
    assert runner._run_kept(['/bin/tool', 'b'], 10, AssertionError) == (3, 'out', 'err')
    assert runner.commands == [['/bin/tool', 'a'], ['/bin/tool', 'b']]


@pytest.mark.parametrize('reader, failure, message', [
    (npu_smi_reader.NpuSmiReader, npu_smi_reader.NpuSmiFailure,
     r'^/bin/tool info did not answer within 30 seconds and was stopped; the NPU driver may be hung'),
    (lambda *args, **kwargs: hccn_reader.HccnReader(*args, node='n1', **kwargs), hccn_reader.HccnFailure,
     r'^/bin/tool info did not answer within 30 seconds on n1 and was stopped; fix: check the NPU driver'),
])
def test_each_reader_says_in_its_own_words_that_timeout_stopped_its_tool(reader, failure, message):
    calls = []

    def run_command(argv, environ_update=None):
        calls.append(argv)
        return 124, '', ''

    runner = reader(run_command, '/bin/tool', 30, clock=_Clock(0.1))
    with pytest.raises(failure, match=message):
        runner.run('info')
    assert runner.commands == [['/bin/tool', 'info']]
    assert calls == [['timeout', '--kill-after=10', '30', '/bin/tool', 'info']]
