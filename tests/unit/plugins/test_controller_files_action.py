# -*- coding: utf-8 -*-
"""The controller_files action: only what differs is written, check mode writes nothing, failures are messages."""

import os
from unittest import mock

from ansible_collections.npu.ascend.plugins.action.controller_files import ActionModule


def _run(tmp_path, check_mode=False, diff=False, **args):
    task = mock.MagicMock()
    task.async_val = 0
    task.check_mode = check_mode
    task.diff = diff
    task.action = 'npu.ascend.controller_files'
    task.args = dict({'dir': str(tmp_path / 'monitoring')}, **args)
    connection = mock.MagicMock()
    connection._shell.tmpdir = str(tmp_path)
    action = ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    return action.run(task_vars={})


FILES = {'rules/alerts.yml': 'groups: []\n', 'prometheus.yml': 'rule_files: [rules/*.yml]\n'}


def test_the_first_run_writes_every_file_and_the_second_nothing(tmp_path):
    first = _run(tmp_path, files=FILES)
    assert not first.get('failed'), first
    assert first['changed'] and first['written'] == ['prometheus.yml', 'rules/alerts.yml']
    directory = tmp_path / 'monitoring'
    assert (directory / 'rules' / 'alerts.yml').read_text() == 'groups: []\n'
    assert oct(os.stat(str(directory / 'prometheus.yml')).st_mode & 0o777) == '0o644'
    second = _run(tmp_path, files=FILES)
    assert not second['changed'] and second['written'] == []


def test_check_mode_reports_the_same_change_writes_nothing_and_shows_the_diff(tmp_path):
    _run(tmp_path, files=FILES)
    changed = dict(FILES, **{'prometheus.yml': 'rule_files: []\n'})
    dry = _run(tmp_path, check_mode=True, diff=True, files=changed)
    assert dry['changed'] and dry['written'] == ['prometheus.yml']
    assert dry['diff'] == [{'before_header': str(tmp_path / 'monitoring' / 'prometheus.yml'),
                            'after_header': str(tmp_path / 'monitoring' / 'prometheus.yml'),
                            'before': 'rule_files: [rules/*.yml]\n', 'after': 'rule_files: []\n'}]
    assert (tmp_path / 'monitoring' / 'prometheus.yml').read_text() == 'rule_files: [rules/*.yml]\n'
    real = _run(tmp_path, files=changed)
    assert real['written'] == dry['written']
    assert (tmp_path / 'monitoring' / 'prometheus.yml').read_text() == 'rule_files: []\n'


def test_a_mode_alone_is_corrected_without_rewriting(tmp_path):
    _run(tmp_path, files=FILES)
    path = str(tmp_path / 'monitoring' / 'rules' / 'alerts.yml')
    os.chmod(path, 0o600)
    inode = os.stat(path).st_ino
    result = _run(tmp_path, files=FILES)
    assert result['written'] == ['rules/alerts.yml']
    assert os.stat(path).st_ino == inode and os.stat(path).st_mode & 0o777 == 0o644


def test_files_of_the_directory_not_named_are_left_alone(tmp_path):
    other = tmp_path / 'monitoring' / 'rules' / 'site.yml'
    other.parent.mkdir(parents=True)
    other.write_text('groups: [site]\n')
    _run(tmp_path, files=FILES)
    assert other.read_text() == 'groups: [site]\n'


def test_a_name_outside_the_directory_fails_with_the_fix_and_writes_nothing(tmp_path):
    result = _run(tmp_path, files={'../escape.yml': 'x', 'ok.yml': 'y'})
    assert result['failed']
    assert "'../escape.yml' is not a plain relative path" in result['msg'] and 'Fix:' in result['msg']
    assert not (tmp_path / 'escape.yml').exists() and not (tmp_path / 'monitoring').exists()


def test_an_unwritable_directory_is_a_message(tmp_path):
    blocker = tmp_path / 'monitoring'
    blocker.write_text('a file where the directory should be\n')
    result = _run(tmp_path, files=FILES)
    assert result['failed'] and 'controller_files: cannot' in result['msg'] and 'Fix:' in result['msg']
    assert blocker.read_text() == 'a file where the directory should be\n'


def _validator(tmp_path, body):
    """A validator script that logs each call, then runs ``body`` (sh) with $1 the staged main file."""
    log = tmp_path / 'validator.log'
    script = tmp_path / 'validator'
    script.write_text('#!/bin/sh\necho "$1" >> %s\n%s\n' % (log, body))
    script.chmod(0o755)
    return str(script), log


# Refuses a main file that names "bad", and a set whose relative reference does not resolve beside it.
CHECKS = ('dir=$(dirname "$1"); [ -f "$dir/rules/alerts.yml" ] || { echo "rules/alerts.yml not beside $1"; exit 1; }\n'
          'if grep -q bad "$1"; then echo "FAILED: bad directive in $1"; exit 1; fi')


def test_a_set_to_change_is_checked_as_a_whole_aside_then_written(tmp_path):
    command, log = _validator(tmp_path, CHECKS)
    result = _run(tmp_path, files=FILES, validate={'file': 'prometheus.yml', 'command': [command, '%s']})
    assert not result.get('failed'), result
    assert result['changed'] and result['validated']
    checked = log.read_text().split()
    assert len(checked) == 1 and not checked[0].startswith(str(tmp_path / 'monitoring'))
    assert not os.path.exists(checked[0]), 'the staging directory is left behind'
    again = _run(tmp_path, files=FILES, validate={'file': 'prometheus.yml', 'command': [command, '%s']})
    assert not again['changed'] and not again['validated']
    assert len(log.read_text().split()) == 1, 'a set that does not change was checked again'


def test_a_set_the_validator_refuses_is_not_written_and_the_message_shows_why(tmp_path):
    command, log = _validator(tmp_path, CHECKS)
    _run(tmp_path, files=FILES)
    refused = _run(tmp_path, files=dict(FILES, **{'prometheus.yml': 'bad: true\n'}),
                   validate={'file': 'prometheus.yml', 'command': [command, '%s']})
    assert refused['failed'] and 'FAILED: bad directive' in refused['msg'] and 'exit 1' in refused['msg']
    assert 'nothing was written' in refused['msg'] and 'Fix:' in refused['msg']
    assert (tmp_path / 'monitoring' / 'prometheus.yml').read_text() == FILES['prometheus.yml']
    dry = _run(tmp_path, check_mode=True, files=dict(FILES, **{'prometheus.yml': 'bad: true\n'}),
               validate={'file': 'prometheus.yml', 'command': [command, '%s']})
    assert dry['failed'], 'a dry run must show that the real run would be refused'
    assert len(log.read_text().split()) == 2


def test_a_validator_that_hangs_or_is_missing_is_a_message(tmp_path):
    command, _log = _validator(tmp_path, 'sleep 30')
    hung = _run(tmp_path, files=FILES, validate={'file': 'prometheus.yml', 'command': [command, '%s'], 'timeout': 1})
    assert hung['failed'] and 'did not finish within 1 s' in hung['msg']
    assert not (tmp_path / 'monitoring' / 'prometheus.yml').exists()
    missing = _run(tmp_path, files=FILES, validate={'file': 'prometheus.yml', 'command': [str(tmp_path / 'nope'), '%s']})
    assert missing['failed'] and 'cannot run' in missing['msg'] and 'Fix:' in missing['msg']


def test_a_validate_option_that_names_no_file_or_no_placeholder_is_refused(tmp_path):
    command, log = _validator(tmp_path, 'exit 0')
    for validate in ({'file': 'other.yml', 'command': [command, '%s']},
                     {'file': 'prometheus.yml', 'command': [command]},
                     {'file': 'prometheus.yml', 'command': [command, '%s', '%s']}):
        result = _run(tmp_path, files=FILES, validate=validate)
        assert result['failed'] and 'Fix:' in result['msg'], validate
    assert not log.exists() and not (tmp_path / 'monitoring').exists()
