# -*- coding: utf-8 -*-
"""Issue 30, finding 7: undo is byte-exact in the layouts the attack found, and keeps an operator's key.

* a containerd config whose runtime table has no header of its own, only ``[...runtimes.ascend.options]``;
* two Docker runtimes removed in creation order used to leave ``"runtimes": {}`` behind;
* a key an operator added inside the runtime table this module created was deleted with it.
"""

import json

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import docker_config
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

tomlkit = pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
V2 = 'plugins."io.containerd.grpc.v1.cri".containerd'
HEADLESS = [
    'version = 2\n[%s.runtimes.ascend.options]\n  BinaryName = "/old"\n' % V2,
    'version = 2\n[%s.runtimes.ascend.options]\n  BinaryName = "/old"\n[%s.runtimes.runc.options]\n'
    '  SystemdCgroup = true\n' % (V2, V2),
]


@pytest.mark.parametrize('make_default', [True, False])
@pytest.mark.parametrize('original', HEADLESS)
def test_containerd_headless_runtime_table_comes_back_byte_for_byte(original, make_default):
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, make_default)
    assert containerd_layout.effective_runtime(new, 'ascend')[1]['runtime_type'] == 'io.containerd.runc.v2'
    # The structural undo, as after an edit elsewhere in the file: not the whole-text shortcut.
    record.pop('original_text')
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


@pytest.mark.parametrize('original', HEADLESS)
def test_containerd_module_headless_runtime_table(tmp_path, run_module, original):
    path = tmp_path / 'config.toml'
    path.write_text(original)
    assert run_module(containerd_runtime, {'path': str(path)})['changed']
    # Another line elsewhere, by someone else, and taken out again: the shortcut cannot help.
    path.write_text(path.read_text().replace('version = 2\n', 'version = 2\n# ops\n', 1))
    path.write_text(path.read_text().replace('# ops\n', '', 1))
    assert run_module(containerd_runtime, {'path': str(path), 'state': 'absent'})['changed']
    assert path.read_text() == original


def _register_two_then_remove_in_creation_order(run_module, module, path):
    for name in ('a', 'b'):
        assert run_module(module, {'path': str(path), 'name': name, 'default': False})['changed']
    for name in ('a', 'b'):
        assert run_module(module, {'path': str(path), 'name': name, 'state': 'absent'})['changed']


@pytest.mark.parametrize('original', ['{"debug": true}', '{\n  "runtimes": {}\n}\n', '{"runtimes": null}', '', '{}'])
def test_docker_two_runtimes_removed_in_creation_order(tmp_path, run_module, original):
    path = tmp_path / 'daemon.json'
    path.write_text(original)
    _register_two_then_remove_in_creation_order(run_module, docker_runtime, path)
    assert path.read_text() == original


def test_containerd_two_runtimes_removed_in_creation_order(tmp_path, run_module):
    original = 'version = 2'
    path = tmp_path / 'config.toml'
    path.write_text(original)
    _register_two_then_remove_in_creation_order(run_module, containerd_runtime, path)
    assert path.read_text() == original


def test_docker_operator_key_in_our_entry_is_kept_with_a_warning(tmp_path, run_module, monkeypatch):
    warnings = []
    monkeypatch.setattr(docker_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')
    run_module(docker_runtime, {'path': str(path)})
    document = json.loads(path.read_text())
    document['runtimes']['ascend']['runtimeArgs'] = ['--log-level=debug']
    path.write_text(json.dumps(document, indent=2) + '\n')
    removed = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert removed['changed']
    after = json.loads(path.read_text())
    assert after['runtimes']['ascend']['runtimeArgs'] == ['--log-level=debug']
    assert 'default-runtime' not in after and after['debug'] is True
    assert any('kept runtime ascend' in warning for warning in warnings)


def test_docker_taken_over_entry_edited_since_gets_only_its_path_back():
    original = '{"runtimes": {"ascend": {"path": "/old", "runtimeArgs": []}}}'
    new, record = docker_config.add_runtime(original, 'ascend', BINARY, False)
    edited = new.replace('"runtimeArgs": []', '"runtimeArgs": ["--x"]')
    removed = docker_config.remove_runtime(edited, 'ascend', record)
    assert json.loads(removed) == {'runtimes': {'ascend': {'path': '/old', 'runtimeArgs': ['--x']}}}


def test_containerd_operator_key_in_our_table_is_kept_with_a_warning(tmp_path, run_module, monkeypatch):
    warnings = []
    monkeypatch.setattr(containerd_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    path = tmp_path / 'config.toml'
    path.write_text('version = 2\n')
    run_module(containerd_runtime, {'path': str(path)})
    text = path.read_text()
    path.write_text(text.replace('runtime_type = "io.containerd.runc.v2"\n',
                                 'runtime_type = "io.containerd.runc.v2"\nprivileged_without_host_devices = true\n', 1))
    assert run_module(containerd_runtime, {'path': str(path), 'state': 'absent'})['changed']
    default, runtime = containerd_layout.effective_runtime(path.read_text(), 'ascend')
    assert runtime['privileged_without_host_devices'] is True and default is None
    assert any('kept runtime ascend' in warning for warning in warnings)


def test_containerd_taken_over_option_edited_since_stays_the_operators():
    original = 'version = 2\n[%s.runtimes.ascend]\n  runtime_type = "io.containerd.runc.v2"\n' \
               '[%s.runtimes.ascend.options]\n  BinaryName = "/old"\n' % (V2, V2)
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, False)
    edited = new.replace(BINARY, '/operator/choice')
    removed, _info = containerd_config.remove_runtime(edited, 'ascend', record)
    assert containerd_layout.effective_runtime(removed, 'ascend')[1]['options']['BinaryName'] == '/operator/choice'
