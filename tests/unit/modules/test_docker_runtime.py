# -*- coding: utf-8 -*-
"""Run the docker_runtime module against daemon.json files in a temporary directory."""

import json
import os
import shutil

from ansible_collections.npu.ascend.plugins.module_utils import docker_config
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'docker')
RUNTIME = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'


def test_present_check_idempotence_and_absent(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    shutil.copy(os.path.join(FIXTURES, 'nvidia-ctk.json'), str(path))
    path.chmod(0o644)
    original = path.read_text()

    checked = run_module(docker_runtime, {'path': str(path)}, check_mode=True)
    assert checked['changed'] and path.read_text() == original
    assert '"default-runtime": "ascend"' in checked['diff']['after']

    result = run_module(docker_runtime, {'path': str(path), 'backup': True})
    assert result['changed'] and result['restart_needed']
    assert open(result['backup_file']).read() == original
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert docker_config.effective_runtime(path.read_text(), 'ascend') == (
        'ascend', {'path': RUNTIME, 'runtimeArgs': []})

    assert not run_module(docker_runtime, {'path': str(path)})['changed']

    removed = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert removed['changed'] and path.read_text() == original
    assert removed['removed_backups'] == [result['backup_file']]
    assert sorted(os.listdir(str(tmp_path))) == ['daemon.json']


def test_missing_file_is_created_0600_and_deleted_again(tmp_path, run_module):
    path = tmp_path / 'docker' / 'daemon.json'
    result = run_module(docker_runtime, {'path': str(path), 'name': 'npu', 'runtime_path': '/opt/rt', 'default': False})
    assert result['changed']
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert json.loads(path.read_text()) == {'runtimes': {'npu': {'path': '/opt/rt', 'runtimeArgs': []}}}
    assert run_module(docker_runtime, {'path': str(path), 'name': 'npu', 'state': 'absent'})['changed']
    assert not path.exists()


def test_invalid_json_fails_and_leaves_the_file_untouched(tmp_path, run_module):
    path = tmp_path / 'daemon.json'
    shutil.copy(os.path.join(FIXTURES, 'invalid-unclosed.json'), str(path))
    before = path.read_bytes()
    result = run_module(docker_runtime, {'path': str(path)})
    assert result['failed'] and 'not valid JSON' in result['msg'] and 'line 5 column 1' in result['msg'] and 'Fix: correct the file' in result['msg']
    assert path.read_bytes() == before
