# -*- coding: utf-8 -*-
"""Issue 30, finding 1: absent takes out only what present put in, from the file as it is now.

The text before the first change is a shortcut to byte-exactness only while the file is still
exactly as the module left it; an operator's rewrite in between must survive absent.
"""

import json

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import docker_config

RUNTIME = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
BINARY = RUNTIME
V2 = 'plugins."io.containerd.grpc.v1.cri".containerd'


def test_docker_operator_rewrite_between_two_presents_survives_absent():
    original = '{"log-level":"info"}'
    first, record = docker_config.add_runtime(original, 'ascend', RUNTIME, True)
    rewritten = json.dumps({'data-root': '/data/docker', 'log-level': 'debug',
                            'registry-mirrors': ['https://mirror.example']}, indent=2) + '\n'
    second, record = docker_config.add_runtime(rewritten, 'ascend', RUNTIME, True, record)
    assert second != rewritten
    removed = docker_config.remove_runtime(second, 'ascend', record)
    assert json.loads(removed) == json.loads(rewritten)
    # Only our members went: the operator's layout is untouched.
    assert removed == rewritten


def test_docker_untouched_since_our_writes_still_restores_the_exact_original():
    original = '{"log-level":"info"}'
    first, record = docker_config.add_runtime(original, 'ascend', RUNTIME, True)
    second, record = docker_config.add_runtime(first, 'ascend', '/opt/other', False, record)
    assert docker_config.remove_runtime(second, 'ascend', record) == original


def test_docker_module_scenario_of_the_issue(tmp_path, run_module):
    from ansible_collections.npu.ascend.plugins.modules import docker_runtime
    path = tmp_path / 'daemon.json'
    path.write_text('{"log-level":"info"}')
    assert run_module(docker_runtime, {'path': str(path)})['changed']
    operator = {'data-root': '/data/docker', 'log-level': 'debug', 'registry-mirrors': ['https://mirror.example']}
    path.write_text(json.dumps(operator, indent=2) + '\n')
    assert run_module(docker_runtime, {'path': str(path)})['changed']
    assert run_module(docker_runtime, {'path': str(path), 'state': 'absent'})['changed']
    assert json.loads(path.read_text()) == operator


tomlkit = pytest.importorskip('tomlkit')
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, toml_editor  # noqa: E402


def test_containerd_operator_rewrite_between_two_presents_survives_absent():
    original = 'version = 2'
    first, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    # The operator rewrites the file (ending it with a line break of their own) and drops our runtime.
    rewritten = 'version = 2\n\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.9"\n'
    second, record, _info = containerd_config.add_runtime(rewritten, 'ascend', BINARY, True, record)
    removed, _info = containerd_config.remove_runtime(second, 'ascend', record)
    assert removed == rewritten


def test_containerd_operator_value_in_a_table_we_created_survives_absent():
    original = 'version = 2\n'
    first, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    edited = first.replace('default_runtime_name = "ascend"\n',
                           'default_runtime_name = "ascend"\n  snapshotter = "zfs"\n')
    assert 'snapshotter' in edited
    second, record, _info = containerd_config.add_runtime(edited, 'ascend', BINARY, True, record)
    removed, _info = containerd_config.remove_runtime(second, 'ascend', record)
    document = toml_editor.parse_config(removed)
    assert document['plugins']['io.containerd.grpc.v1.cri']['containerd']['snapshotter'] == 'zfs'
    assert containerd_layout.effective_runtime(removed, 'ascend') == (None, None)


def test_containerd_module_scenario_of_the_issue(tmp_path, run_module):
    from ansible_collections.npu.ascend.plugins.modules import containerd_runtime
    path = tmp_path / 'config.toml'
    path.write_text('version = 2')
    assert run_module(containerd_runtime, {'path': str(path)})['changed']
    rewritten = 'version = 2\n\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.9"\n'
    path.write_text(rewritten)
    assert run_module(containerd_runtime, {'path': str(path)})['changed']
    assert run_module(containerd_runtime, {'path': str(path), 'state': 'absent'})['changed']
    assert path.read_text() == rewritten
