# -*- coding: utf-8 -*-
"""The molecule runner's summary of a failed scenario, over log lines as molecule writes them
(coloured, framed with "│", long results wrapped)."""

import importlib.util
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SPEC = importlib.util.spec_from_file_location('run_scenarios',
                                              os.path.join(REPO_ROOT, 'tests', 'molecule', 'run_scenarios.py'))
run_scenarios = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(run_scenarios)

FRAME = u'  \x1b[2m\u2502\x1b[0m '
FAILED_FRAME = u'  \x1b[2m\x1b[31m\u2502\x1b[0m '
MOLECULE_LOG = u'\n'.join([
    FRAME + u'TASK [npu.ascend.hdk : Install the driver] *****',
    FRAME + u'\x1b[0;32mok: [node-1]\x1b[0m',
    FRAME + u'TASK [npu.ascend.validate : Fail when the validation did not pass] *****',
    FAILED_FRAME + u'\x1b[31mfatal: [node-1 -> localhost]: FAILED! => {"assertion":\x1b[0m',
    FAILED_FRAME + u'\x1b[31m  "__validate_k8s_passed | bool", "changed": false,\x1b[0m',
    FAILED_FRAME + u'\x1b[31m  "msg": "node-1: validation failed"}\x1b[0m',
    FRAME + u'PLAY RECAP *****',
])


def test_failed_task_is_named_with_its_unwrapped_failure():
    assert run_scenarios.failed_tasks(MOLECULE_LOG) == [
        u'TASK [npu.ascend.validate : Fail when the validation did not pass]\n'
        u'    fatal: [node-1 -> localhost]: FAILED! => {"assertion": "__validate_k8s_passed | bool", '
        u'"changed": false, "msg": "node-1: validation failed"}']


def test_plain_ansible_output_and_a_failure_on_the_last_line():
    log = u'TASK [a] ***\nfatal: [h]: FAILED! => {"msg": "x"}\nok: [h]\nTASK [b] ***\nfailed: [h] (item=1) => {}'
    assert run_scenarios.failed_tasks(log) == [u'TASK [a]\n    fatal: [h]: FAILED! => {"msg": "x"}',
                                               u'TASK [b]\n    failed: [h] (item=1) => {}']


def test_only_the_last_failures_and_shortened():
    log = u'\n'.join(u'TASK [t%d] ***\nfatal: [h]: FAILED! => %s' % (n, u'x' * 700) for n in range(8))
    found = run_scenarios.failed_tasks(log)
    assert [entry.split(u'\n')[0] for entry in found] == [u'TASK [t%d]' % n for n in range(2, 8)]
    assert all(entry.endswith(u' ...') and len(entry.split(u'\n')[1]) == 4 + 600 + 4 for entry in found)


def test_a_log_without_failures():
    assert run_scenarios.failed_tasks(FRAME + u'TASK [a] ***\n' + FRAME + u'ok: [h]') == []


def _step_line(step, outcome):
    # As molecule 25 writes it: level, scenario, arrow, coloured step, outcome.
    return (u'\x1b[36mINFO    \x1b[0m \x1b[32mhost_stack_upgrade\x1b[0m \u279c \x1b[33m%s\x1b[0m: %s' % (step, outcome))


def test_a_sequence_step_without_a_playbook_is_reported():
    log = u'\n'.join([
        _step_line('verify', u'\x1b[32mExecuted: Successful\x1b[0m'),
        _step_line('side_effect', u'\x1b[35mExecuted: Missing playbook\x1b[0m \x1b[2m(Remove from test_sequence '
                                  u'to suppress)\x1b[0m'),
        _step_line('cleanup', u'\x1b[35mExecuted: Missing playbook\x1b[0m'),
    ])
    assert run_scenarios.missing_steps(log) == ['side_effect']


def test_cleanup_alone_without_a_playbook_is_no_missing_step():
    assert run_scenarios.missing_steps(_step_line('cleanup', u'Executed: Missing playbook')) == []
    assert run_scenarios.missing_steps(_step_line('side_effect', u'Executed: Successful')) == []
