# -*- coding: utf-8 -*-
"""Issue 30, finding 8: a float version, a failed write reported as a change, LF lines in CRLF files,
``"runtimes": null`` and a stamp that cannot be written beside a symlinked config."""

import json
import os

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files, docker_config
from ansible_collections.npu.ascend.plugins.modules import docker_runtime

tomlkit = pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'


@pytest.mark.parametrize('version', ['2.0', '1.0', '3e0'])
def test_a_float_version_is_refused_naming_the_file_and_the_fix(tmp_path, run_module, version):
    path = tmp_path / 'config.toml'
    path.write_text('version = %s\n' % version)
    with pytest.raises(containerd_config.ContainerdConfigError, match='integer'):
        containerd_layout.describe(path.read_text())
    result = run_module(containerd_runtime, {'path': str(path)})
    assert result['failed'] and str(path) in result['msg'] and 'version = %d' % float(version) in result['msg']
    assert path.read_text() == 'version = %s\n' % version


def _full_disk(*_args, **_kwargs):
    raise OSError(28, 'No space left on device')


@pytest.mark.parametrize('state', ['present', 'absent'])
def test_a_failed_config_write_reports_no_change(tmp_path, run_module, monkeypatch, state):
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')
    if state == 'absent':
        run_module(docker_runtime, {'path': str(path)})
    before = path.read_bytes()
    monkeypatch.setattr(config_files, 'write_config_atomically', _full_disk)
    result = run_module(docker_runtime, {'path': str(path), 'state': state})
    assert result['failed'] and 'No space left' in result['msg']
    assert result['changed'] is False and result['restart_needed'] is False
    assert path.read_bytes() == before


def test_a_failed_record_update_after_absent_puts_the_config_back(tmp_path, run_module, monkeypatch):
    path = tmp_path / 'daemon.json'
    path.write_text('{"debug": true}\n')
    run_module(docker_runtime, {'path': str(path)})
    before = path.read_bytes()
    record = (tmp_path / '.daemon.json.npu_ascend.json').read_bytes()
    monkeypatch.setattr(config_files, 'save_records', _full_disk)
    result = run_module(docker_runtime, {'path': str(path), 'state': 'absent'})
    assert result['failed'] and result['changed'] is False and 'No space left' in result['msg']
    assert path.read_bytes() == before and (tmp_path / '.daemon.json.npu_ascend.json').read_bytes() == record


def test_lines_added_to_a_crlf_daemon_json_end_in_crlf():
    original = '{\r\n  "debug": true\r\n}\r\n'
    new, record = docker_config.add_runtime(original, 'ascend', BINARY, True)
    assert '\n' not in new.replace('\r\n', '')
    assert docker_config.remove_runtime(new, 'ascend', record) == original
    record.pop('original_text')
    assert docker_config.remove_runtime(new, 'ascend', record) == original


@pytest.mark.parametrize('original', [
    'version = 2\r\n[plugins."io.containerd.grpc.v1.cri".containerd]\r\n  snapshotter = "overlayfs"\r\n',
    'version = 2\r\n',
    'version = 2',
])
def test_lines_added_to_a_crlf_containerd_config_end_in_crlf(original):
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    if '\r\n' in original:
        assert '\n' not in new.replace('\r\n', '')
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original
    record.pop('original_text')
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


def test_runtimes_null_becomes_the_object_not_a_second_key():
    original = '{\n  "runtimes": null,\n  "debug": true\n}\n'
    new, record = docker_config.add_runtime(original, 'ascend', BINARY, True)
    assert new.count('"runtimes"') == 1
    assert json.loads(new)['runtimes'] == {'ascend': {'path': BINARY, 'runtimeArgs': []}}
    record.pop('original_text')
    assert docker_config.remove_runtime(new, 'ascend', record) == original


def test_a_stamp_that_cannot_be_written_does_not_hide_the_change(tmp_path, run_module, monkeypatch):
    warnings = []
    monkeypatch.setattr(containerd_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    real = tmp_path / 'real'
    real.mkdir()
    (real / 'config.toml').write_text('version = 2\n')
    links = tmp_path / 'read-only'
    links.mkdir()
    link = links / 'config.toml'
    link.symlink_to(real / 'config.toml')
    replace = durable_file.replace_durably

    def read_only_links(path, *args, **kwargs):
        if os.path.dirname(path) == str(links):
            raise PermissionError(13, 'Read-only file system', path)
        return replace(path, *args, **kwargs)
    monkeypatch.setattr(durable_file, 'replace_durably', read_only_links)
    result = run_module(containerd_runtime, {'path': str(link)})
    assert result['changed'] and not result.get('failed')
    assert containerd_layout.effective_runtime((real / 'config.toml').read_text(), 'ascend')[0] == 'ascend'
    assert any('stamp' in warning and 'Read-only' in warning for warning in warnings)
    assert not any('nothing was changed' in warning for warning in warnings)
