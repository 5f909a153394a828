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
