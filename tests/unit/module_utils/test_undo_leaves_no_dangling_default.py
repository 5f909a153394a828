# -*- coding: utf-8 -*-
"""Issue 30, finding 2: after absent the default runtime names a runtime that exists.

Two runtimes made default one after the other (``a`` then ``b``) and removed in creation order
used to leave ``default_runtime_name = "a"`` / ``"default-runtime": "a"``, naming a runtime that
was gone: containerd's CRI and dockerd refuse such a config.
"""

import json

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import docker_config
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

tomlkit = pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, toml_editor  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
CONTAINERD_ORIGINAL = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n'
                       '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                       '  runtime_type = "io.containerd.runc.v2"\n')


def _docker_default_exists(text):
    document = json.loads(text or '{}')
    default = document.get('default-runtime')
    return default is None or default in docker_config.BUILTIN_RUNTIMES or default in (document.get('runtimes') or {})


@pytest.mark.parametrize('order', [('a', 'b'), ('b', 'a')])
def test_docker_two_defaults_removed_in_any_order(tmp_path, run_module, order):
    path = tmp_path / 'daemon.json'
    original = '{\n  "debug": true\n}\n'
    path.write_text(original)
    for name in ('a', 'b'):
        assert run_module(docker_runtime, {'path': str(path), 'name': name, 'runtime_path': '/opt/' + name})['changed']
    first = run_module(docker_runtime, {'path': str(path), 'name': order[0], 'state': 'absent'})
    assert first['changed'] and _docker_default_exists(path.read_text())
    run_module(docker_runtime, {'path': str(path), 'name': order[1], 'state': 'absent'})
    assert path.read_text() == original


def test_docker_a_previous_default_removed_by_hand_is_not_put_back():
    original = '{"default-runtime": "runc"}'
    first, record_a = docker_config.add_runtime(original, 'a', '/opt/a', True)
    second, record_b = docker_config.add_runtime(first, 'b', '/opt/b', True)
    # Runtime a goes by hand (no hand-over from its record): b's previous default names nothing now.
    by_hand = json.loads(second)
    del by_hand['runtimes']['a']
    removed = docker_config.remove_runtime(json.dumps(by_hand), 'b', record_b)
    assert _docker_default_exists(removed)
    assert 'default-runtime' not in json.loads(removed)


def test_docker_a_default_dangling_before_the_module_comes_back_as_it_was():
    original = '{"default-runtime": "nvidia", "debug": true}'
    new, record = docker_config.add_runtime(original, 'ascend', '/opt/a', True)
    edited = new.replace('"debug": true', '"debug": false')
    assert json.loads(docker_config.remove_runtime(edited, 'ascend', record))['default-runtime'] == 'nvidia'


def _containerd_default_exists(text):
    default, _runtime = containerd_layout.effective_runtime(text, 'x')
    document = toml_editor.parse_config(text)
    runtimes = document['plugins']['io.containerd.grpc.v1.cri']['containerd'].get('runtimes', {})
    return default in (None, 'runc') or default in runtimes


@pytest.mark.parametrize('order', [('a', 'b'), ('b', 'a')])
def test_containerd_two_defaults_removed_in_any_order(tmp_path, run_module, order):
    path = tmp_path / 'config.toml'
    path.write_text(CONTAINERD_ORIGINAL)
    for name in ('a', 'b'):
        assert run_module(containerd_runtime, {'path': str(path), 'name': name, 'binary_name': '/opt/' + name})['changed']
    run_module(containerd_runtime, {'path': str(path), 'name': order[0], 'state': 'absent'})
    assert _containerd_default_exists(path.read_text())
    run_module(containerd_runtime, {'path': str(path), 'name': order[1], 'state': 'absent'})
    assert path.read_text() == CONTAINERD_ORIGINAL


def test_containerd_a_previous_default_removed_by_hand_is_not_put_back():
    original = 'version = 2\n'
    first, record_a, _info = containerd_config.add_runtime(original, 'a', '/opt/a', True)
    second, record_b, _info = containerd_config.add_runtime(first, 'b', '/opt/b', True, None)
    document = toml_editor.parse_config(second)
    del document['plugins']['io.containerd.grpc.v1.cri']['containerd']['runtimes']['a']
    removed, _info = containerd_config.remove_runtime(tomlkit.dumps(document), 'b', record_b)
    assert containerd_layout.effective_runtime(removed, 'b') == (None, None)
