# -*- coding: utf-8 -*-
"""The image_assemble action: the archive is written once, whole, never through a link; check mode writes
nothing; a bad package or base is a message, not a traceback."""

import os
from unittest import mock

from ansible_collections.npu.ascend.plugins.action.image_assemble import ActionModule

from test_image_assembly import IMAGE, docker_base, package, read_archive


def _run(tmp_path, check_mode=False, **args):
    task = mock.MagicMock()
    task.async_val = 0
    task.check_mode = check_mode
    task.action = 'npu.ascend.image_assemble'
    task.args = dict({'package': str(tmp_path / 'plugin.zip'), 'base': str(tmp_path / 'base.tar'), 'image': IMAGE,
                      'arch': 'x86_64', 'dest': str(tmp_path / 'build' / 'plugin.tar')}, **args)
    connection = mock.MagicMock()
    connection._shell.tmpdir = str(tmp_path)
    action = ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    return action.run(task_vars={})


def _inputs(tmp_path):
    (tmp_path / 'plugin.zip').write_bytes(package())
    (tmp_path / 'base.tar').write_bytes(docker_base()[0])


def test_check_mode_writes_nothing_then_the_run_writes_once(tmp_path):
    _inputs(tmp_path)
    dry = _run(tmp_path, check_mode=True)
    assert dry['changed'] and not (tmp_path / 'build').exists()
    first = _run(tmp_path)
    assert not first.get('failed'), first
    assert first['changed'] and first['base_image'] == 'ubuntu:22.04'
    assert first['files'] == ['/usr/local/bin/device-plugin', '/usr/local/faultCode.json']
    assert len(first['run_lines_left_out']) == 2 and 'skipped' not in first
    archive = tmp_path / 'build' / 'plugin.tar'
    assert read_archive(archive.read_bytes())[0]['RepoTags'] == [IMAGE]
    assert os.stat(str(archive)).st_mode & 0o777 == 0o600
    inode = os.stat(str(archive)).st_ino
    second = _run(tmp_path)
    assert not second['changed'] and os.stat(str(archive)).st_ino == inode
    assert not _run(tmp_path, check_mode=True)['changed']


def test_another_tag_rewrites_the_archive(tmp_path):
    _inputs(tmp_path)
    _run(tmp_path)
    result = _run(tmp_path, image='ascend-k8sdeviceplugin:v7.3.1')
    assert result['changed']
    assert read_archive((tmp_path / 'build' / 'plugin.tar').read_bytes())[0]['RepoTags'] == ['ascend-k8sdeviceplugin:v7.3.1']


def test_a_link_at_the_destination_is_refused(tmp_path):
    _inputs(tmp_path)
    (tmp_path / 'build').mkdir()
    target = tmp_path / 'elsewhere'
    target.write_text('keep')
    os.symlink(str(target), str(tmp_path / 'build' / 'plugin.tar'))
    result = _run(tmp_path)
    assert result['failed'] and 'image_assemble' in result['msg']
    assert target.read_text() == 'keep'


def test_bad_inputs_are_messages(tmp_path):
    _inputs(tmp_path)
    (tmp_path / 'plugin.zip').write_bytes(b'not a zip')
    result = _run(tmp_path)
    assert result['failed'] and 'the package is not a zip file' in result['msg'] and 'Fix:' in result['msg']
    missing = _run(tmp_path, base=str(tmp_path / 'nothing.tar'))
    assert missing['failed'] and 'No such file' in missing['msg']
