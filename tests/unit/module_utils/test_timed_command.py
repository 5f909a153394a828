# -*- coding: utf-8 -*-
"""timeout(1)'s wrapping, its exit codes and the timed run the modules and the runner of the node's tools share."""

import pytest

from conftest import AdvancingClock

from ansible_collections.npu.ascend.plugins.module_utils import timed_command


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


@pytest.mark.parametrize('rc, step, stopped', [(0, 1.0, False), (124, 0.1, True), (137, 31.0, True), (137, 1.0, False)])
def test_a_timed_run_is_under_timeout_in_the_c_locale_and_says_whether_timeout_stopped_it(rc, step, stopped):
    calls = []

    def run_command(argv, environ_update=None):
        calls.append((argv, environ_update))
        return rc, 'out', 'err'

    assert timed_command.run(run_command, ['npu-smi', 'info'], 30, 10, clock=AdvancingClock(step)) == (rc, 'out', 'err', stopped)
    assert calls == [(['timeout', '--kill-after=10', '30', 'npu-smi', 'info'], {'LC_ALL': 'C', 'LANG': 'C'})]
