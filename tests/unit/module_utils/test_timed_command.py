# -*- coding: utf-8 -*-
"""timeout(1)'s wrapping and its exit codes, shared by ascend_runfile and ascend_facts."""

import pytest

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
