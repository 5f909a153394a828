# -*- coding: utf-8 -*-
"""The one runner of the node's tools: every argv kept, each run under timeout(1), and each tool's reader saying in
its own words that timeout stopped its tool."""

import pytest

from conftest import AdvancingClock

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner, npu_smi_runner, tool_runner


def test_the_tool_runner_keeps_every_argv_and_returns_what_the_tool_printed():
    runner = tool_runner.ToolRunner(lambda argv, environ_update=None: (3, 'out', 'err'), '/bin/tool', 30, clock=AdvancingClock(1.0))
    assert runner._run_tool(['a']) == (3, 'out', 'err')
    assert runner._run_tool(['-i', 1]) == (3, 'out', 'err')
    assert runner.commands == [['/bin/tool', 'a'], ['/bin/tool', '-i', '1']]


@pytest.mark.parametrize('reader, failure, message', [
    (npu_smi_runner.NpuSmiReader, npu_smi_runner.NpuSmiFailure,
     r'^/bin/tool info did not answer within 30 seconds and was stopped; the NPU driver may be hung'),
    (lambda *args, **kwargs: hccn_tool_runner.HccnReader(*args, node='n1', **kwargs), hccn_tool_runner.HccnFailure,
     r'^/bin/tool info did not answer within 30 seconds on n1 and was stopped; fix: check the NPU driver'),
])
def test_each_reader_says_in_its_own_words_that_timeout_stopped_its_tool(reader, failure, message):
    calls = []

    def run_command(argv, environ_update=None):
        calls.append(argv)
        return 124, '', ''

    runner = reader(run_command, '/bin/tool', 30, clock=AdvancingClock(0.1))
    with pytest.raises(failure, match=message):
        runner.run('info')
    assert runner.commands == [['/bin/tool', 'info']]
    assert calls == [['timeout', '--kill-after=10', '30', '/bin/tool', 'info']]
