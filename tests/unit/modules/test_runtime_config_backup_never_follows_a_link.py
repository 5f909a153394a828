# -*- coding: utf-8 -*-
"""The backup the runtime config modules make (backup: true) goes through the safe writer: its name is
predictable (<config>.<pid>.<time>~, Ansible's backup_local naming), so a link planted there must not
make root copy the engine's config, registry credentials and all, over the link's target."""
import os
import stat
import time

import pytest

from ansible_collections.npu.ascend.plugins.modules import docker_runtime

SECRET = b'operator file that root must not overwrite\n'


def _planted(config, victim):
    """Links at every backup name the next seconds can give this process."""
    now = time.time()
    for offset in range(4):
        suffix = time.strftime('%Y-%m-%d@%H:%M:%S~', time.localtime(now + offset))
        name = '%s.%s.%s' % (config, os.getpid(), suffix)
        if not os.path.lexists(name):
            os.symlink(str(victim), name)


@pytest.fixture
def victim(tmp_path):
    outside = tmp_path / 'outside'
    outside.mkdir()
    path = outside / 'authorized_keys'
    path.write_bytes(SECRET)
    path.chmod(0o600)
    return path


def test_a_link_planted_at_the_backup_name_is_not_written_through(tmp_path, victim, run_module):
    config = tmp_path / 'daemon.json'
    config.write_text('{"registry-mirrors": ["https://ops:secret@mirror"]}\n')
    _planted(config, victim)
    result = run_module(docker_runtime, {'path': str(config), 'backup': True})
    assert victim.read_bytes() == SECRET and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert result['failed'] and 'symbolic link' in result['msg'] and 'back up' in result['msg'], result
    assert config.read_text() == '{"registry-mirrors": ["https://ops:secret@mirror"]}\n'


def test_the_backup_is_a_copy_with_the_config_mode(tmp_path, run_module):
    config = tmp_path / 'daemon.json'
    config.write_text('{"debug": true}\n')
    config.chmod(0o640)
    result = run_module(docker_runtime, {'path': str(config), 'backup': True})
    assert not result.get('failed'), result
    backup = result['backup_file']
    assert open(backup).read() == '{"debug": true}\n' and stat.S_IMODE(os.lstat(backup).st_mode) == 0o640
    assert os.path.basename(backup).startswith('daemon.json.%d.' % os.getpid()) and backup.endswith('~')
