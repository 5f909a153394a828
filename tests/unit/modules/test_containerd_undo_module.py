# -*- coding: utf-8 -*-
"""containerd_runtime and containerd_import as a task runs them: taken-over runtimes, runc, bad input."""

import os
import shutil

import pytest

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_layout, undo_record  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_import, containerd_runtime  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'containerd')


def _copy(tmp_path, name):
    path = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, name), str(path))
    return path


def test_site_then_uninstall_leaves_a_manual_install_byte_for_byte(tmp_path, run_module):
    config = _copy(tmp_path, 'huawei-manual-ascend-v2.toml')
    original = config.read_bytes()
    present = run_module(containerd_runtime, {'path': str(config)})
    assert not present['changed'] and config.read_bytes() == original
    # The takeover is on record although no byte changed.
    assert os.path.exists(present['state_file'])
    absent = run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})
    assert config.read_bytes() == original and not absent['restart_needed']
    assert not os.path.exists(present['state_file'])


def test_check_mode_writes_no_takeover_record(tmp_path, run_module):
    config = _copy(tmp_path, 'huawei-manual-ascend-v2.toml')
    checked = run_module(containerd_runtime, {'path': str(config)}, check_mode=True)
    assert not checked['changed'] and not os.path.exists(checked['state_file'])


def test_absent_without_record_keeps_a_table_of_its_own_and_warns(tmp_path, run_module, monkeypatch):
    # Warnings of one process go to a global (and deduplicated) list; record them at the source.
    warnings = []
    monkeypatch.setattr(containerd_runtime.AnsibleModule, 'warn', lambda module, text, **kwargs: warnings.append(text))
    config = tmp_path / 'config.toml'
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "ascend"\n'
            '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.ascend]\n  runtime_type = "io.containerd.runc.v2"\n'
            '  pod_annotations = ["huawei.com/*"]\n')
    config.write_text(text)
    result = run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})
    assert not result['changed'] and config.read_text() == text
    assert any('kept runtime ascend' in text and str(config) in text for text in warnings), warnings


def test_rewriting_runc_needs_the_opt_in(tmp_path, run_module):
    config = _copy(tmp_path, 'default-1.6.toml')
    original = config.read_bytes()
    refused = run_module(containerd_runtime, {'path': str(config), 'name': 'runc', 'default': False})
    assert refused['failed'] and 'refusing to register the runtime "runc"' in refused['msg']
    assert 'allow_runc_rewrite: true' in refused['msg'] and str(config) in refused['msg']
    assert config.read_bytes() == original
    assert not os.path.exists(undo_record.state_file_path(str(config)))
    allowed = run_module(containerd_runtime, {'path': str(config), 'name': 'runc', 'default': False,
                                              'allow_runc_rewrite': True, 'binary_name': '/opt/wrapper'})
    assert allowed['changed']
    assert containerd_layout.effective_runtime(config.read_text(), 'runc')[1]['options']['BinaryName'] == '/opt/wrapper'
    undone = run_module(containerd_runtime, {'path': str(config), 'name': 'runc', 'state': 'absent'})
    assert undone['changed'] and config.read_bytes() == original


def test_non_utf8_and_random_bytes_fail_and_leave_the_file(tmp_path, run_module):
    config = tmp_path / 'config.toml'
    for content in (b'version = 2\n# \xff\xfe caf\xe9\n', bytes(range(256)), b'\x00' * 64):
        config.write_bytes(content)
        for module, args in ((containerd_runtime, {}), (containerd_import, {'import': '/etc/x.toml'})):
            result = run_module(module, dict(args, path=str(config)))
            assert result['failed'] and str(config) in result['msg'], result
            assert 'Traceback' not in result['msg']
            assert config.read_bytes() == content
            assert not os.path.exists(undo_record.state_file_path(str(config)))


def test_directories_are_refused_with_the_fix(tmp_path, run_module):
    config = _copy(tmp_path, 'kubespray-v2-mirrors.toml')
    original = config.read_bytes()
    drop_ins = tmp_path / 'conf.d'
    drop_ins.mkdir()
    into_dir = run_module(containerd_import, {'path': str(config), 'import': str(drop_ins)})
    assert into_dir['failed'] and 'is a directory' in into_dir['msg'] and 'Fix:' in into_dir['msg']
    assert config.read_bytes() == original
    for module, args in ((containerd_import, {'import': '/etc/x.toml'}), (containerd_runtime, {})):
        result = run_module(module, dict(args, path=str(tmp_path)))
        assert result['failed'] and 'is a directory' in result['msg'] and 'Fix:' in result['msg']


@pytest.mark.parametrize('header', ['  version = 2\n', '"version" = 2\n'])
def test_import_into_a_config_with_an_unusual_version_line(tmp_path, run_module, header):
    config = tmp_path / 'config.toml'
    text = header + '\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause:3.9"\n'
    config.write_text(text)
    added = run_module(containerd_import, {'path': str(config), 'import': '/etc/containerd/conf.d/a.toml'})
    assert added['changed'] and added['imports'] == ['/etc/containerd/conf.d/a.toml']
    removed = run_module(containerd_import, {'path': str(config), 'import': '/etc/containerd/conf.d/a.toml',
                                             'state': 'absent'})
    assert removed['changed'] and config.read_text() == text
