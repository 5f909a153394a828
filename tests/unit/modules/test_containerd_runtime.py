# -*- coding: utf-8 -*-
"""Run the containerd_runtime module against config files in a temporary directory."""

import json
import os
import shutil

import pytest

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_layout, toml_editor, undo_record  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_runtime  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'containerd')
BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'


@pytest.fixture
def config(tmp_path):
    path = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'cloud-image-gpu-v2.toml'), str(path))
    path.chmod(0o640)
    return path


def test_present_check_idempotence_and_absent(config, run_module):
    original = config.read_text()
    checked = run_module(containerd_runtime, {'path': str(config)}, check_mode=True)
    assert checked['changed'] and checked['restart_needed']
    assert config.read_text() == original
    assert not os.path.exists(checked['state_file'])
    assert 'default_runtime_name = "ascend"' in checked['diff']['after']

    result = run_module(containerd_runtime, {'path': str(config), 'backup': True})
    assert result['changed'] and result['restart_needed']
    assert (result['config_version'], result['cri_plugin']) == (2, 'io.containerd.grpc.v1.cri')
    assert result['diff']['before'] == original and result['diff']['after'] == config.read_text()
    assert open(result['backup_file']).read() == original
    assert oct(config.stat().st_mode & 0o777) == oct(0o640)
    assert containerd_layout.effective_runtime(config.read_text(), 'ascend')[0] == 'ascend'
    state = json.loads(open(result['state_file']).read())
    assert state['runtimes']['ascend']['previous_default'] == "'nvidia'"
    assert oct(os.stat(result['state_file']).st_mode & 0o777) == oct(0o600)

    again = run_module(containerd_runtime, {'path': str(config)})
    assert not again['changed'] and not again['restart_needed']

    removed = run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})
    assert removed['changed']
    assert config.read_text() == original
    assert not os.path.exists(result['state_file'])
    assert not run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})['changed']


def test_absent_deletes_the_backups_present_made(config, run_module):
    original = config.read_text()
    first = run_module(containerd_runtime, {'path': str(config), 'backup': True, 'default': False})
    second = run_module(containerd_runtime, {'path': str(config), 'backup': True})
    # Two changes within a second of one process share a backup name.
    backups = list(dict.fromkeys([first['backup_file'], second['backup_file']]))
    assert all(os.path.exists(backup) for backup in backups)
    assert json.loads(open(first['state_file']).read())['runtimes']['ascend']['backups'] == backups
    operators_copy = str(config) + '.before-upgrade'
    shutil.copy(str(config), operators_copy)

    planned = run_module(containerd_runtime, {'path': str(config), 'state': 'absent', 'remove_backups': True},
                         check_mode=True)
    assert planned['changed'] and planned['removed_backups'] == backups
    assert all(os.path.exists(backup) for backup in backups)

    removed = run_module(containerd_runtime, {'path': str(config), 'state': 'absent', 'remove_backups': True})
    assert removed['changed'] and removed['removed_backups'] == backups
    assert config.read_text() == original
    assert sorted(os.listdir(str(config.parent))) == ['config.toml', 'config.toml.before-upgrade']


def test_absent_after_a_restore_by_hand_deletes_only_the_backups(config, run_module):
    original = config.read_text()
    added = run_module(containerd_runtime, {'path': str(config), 'backup': True})
    config.write_text(original)

    planned = run_module(containerd_runtime, {'path': str(config), 'state': 'absent'}, check_mode=True)
    assert planned['changed'] and not planned['restart_needed']
    removed = run_module(containerd_runtime, {'path': str(config), 'state': 'absent', 'remove_backups': True})
    assert removed['changed'] and not removed['restart_needed']
    assert removed['removed_backups'] == [added['backup_file']] and not os.path.exists(added['backup_file'])
    assert not os.path.exists(added['state_file'])
    again = run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})
    assert not again['changed'] and again['removed_backups'] == []


def test_drop_in_file_is_created_minimal_and_deleted_again(tmp_path, run_module):
    path = tmp_path / 'conf.d' / 'ascend.toml'
    result = run_module(containerd_runtime, {'path': str(path), 'config_version': 3, 'binary_name': '/opt/wrapper'})
    assert result['changed'] and result['config_version'] == 3
    assert result['cri_plugin'] == 'io.containerd.cri.v1.runtime'
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)
    assert containerd_layout.effective_runtime(path.read_text(), 'ascend')[1]['options']['BinaryName'] == '/opt/wrapper'
    assert not run_module(containerd_runtime,
                          {'path': str(path), 'config_version': 3, 'binary_name': '/opt/wrapper'})['changed']
    removed = run_module(containerd_runtime, {'path': str(path), 'state': 'absent'})
    assert removed['changed'] and not path.exists()
    assert sorted(os.listdir(str(tmp_path / 'conf.d'))) == []


@pytest.mark.skipif(not os.access('/usr/bin/containerd', os.X_OK), reason='needs containerd on this machine')
def test_missing_file_is_created_from_containerd_config_default(tmp_path, run_module):
    path = tmp_path / 'config.toml'
    result = run_module(containerd_runtime, {'path': str(path)})
    assert result['changed']
    text = path.read_text()
    assert 'default_runtime_name = "ascend"' in text and '[plugins."io.containerd.grpc.v1.cri".cni]' in text
    assert run_module(containerd_runtime, {'path': str(path), 'state': 'absent'})['changed']
    assert not path.exists()


def test_config_version_must_match_an_existing_file(config, run_module):
    result = run_module(containerd_runtime, {'path': str(config), 'config_version': 3})
    assert result['failed'] and 'version 2, not 3' in result['msg']


def test_invalid_toml_fails_and_leaves_the_file_untouched(tmp_path, run_module):
    path = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'invalid-unclosed-table.toml'), str(path))
    before = path.read_bytes()
    result = run_module(containerd_runtime, {'path': str(path)})
    assert result['failed'] and 'not valid TOML' in result['msg'] and 'line 3' in result['msg'] and 'Fix: correct the file' in result['msg']
    assert path.read_bytes() == before
    assert not os.path.exists(undo_record.state_file_path(str(path)))


def test_missing_tomlkit_is_reported_with_missing_required_lib(config, run_module, monkeypatch):
    monkeypatch.setattr(toml_editor, 'TOMLKIT_IMPORT_ERROR', 'Traceback: No module named tomlkit')
    result = run_module(containerd_runtime, {'path': str(config)})
    assert result['failed'] and 'Failed to import the required Python library (tomlkit)' in result['msg']


def _stamped(config, **options):
    """What the role asks: the probe's entry for the config, judged by the filter."""
    from ansible_collections.npu.ascend.plugins.filter.containerd_runtime_stamped import containerd_runtime_stamped
    from ansible_collections.npu.ascend.plugins.modules import ascend_facts
    asked = dict(dict(name='ascend', binary_name=BINARY, default=True, config_version=None, allow_runc_rewrite=False),
                 **options)
    return containerd_runtime_stamped(ascend_facts.file_states([str(config)]), str(config), **asked)


def test_the_stamp_vouches_for_the_config_present_left_and_for_nothing_else(config, run_module):
    stamp = config.parent / ('.%s.npu_ascend.converged' % config.name)
    run_module(containerd_runtime, {'path': str(config)}, check_mode=True)
    assert not stamp.exists() and not _stamped(config)

    run_module(containerd_runtime, {'path': str(config)})
    assert oct(stamp.stat().st_mode & 0o777) == oct(0o600)
    assert _stamped(config)
    assert not _stamped(config, default=False) and not _stamped(config, binary_name='/opt/other')
    stamped_inode = stamp.stat().st_ino
    assert not run_module(containerd_runtime, {'path': str(config)})['changed']
    assert stamp.stat().st_ino == stamped_inode

    # Another request leaves a stamp of its own.
    run_module(containerd_runtime, {'path': str(config), 'default': False})
    assert _stamped(config, default=False) and not _stamped(config)

    config.write_text(config.read_text() + '# an edit by hand\n')
    assert not _stamped(config, default=False)
    assert not run_module(containerd_runtime, {'path': str(config), 'default': False})['changed']
    assert _stamped(config, default=False)

    run_module(containerd_runtime, {'path': str(config), 'state': 'absent'}, check_mode=True)
    assert stamp.exists()
    run_module(containerd_runtime, {'path': str(config), 'state': 'absent'})
    assert not stamp.exists()


def test_a_config_converged_before_the_stamps_gets_one_without_a_change(config, run_module):
    run_module(containerd_runtime, {'path': str(config)})
    stamp = config.parent / ('.%s.npu_ascend.converged' % config.name)
    stamp.unlink()
    assert not _stamped(config)
    assert not run_module(containerd_runtime, {'path': str(config)})['changed']
    assert _stamped(config)


def test_the_controller_and_the_module_fingerprint_the_same_editor():
    import inspect
    from ansible_collections.npu.ascend.plugins.plugin_utils import container_runtime_state
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
    source = ''.join(inspect.getsource(part) for part in containerd_runtime.EDITOR_PARTS)
    assert container_runtime_state.editor_sha1() == config_stamp.text_sha1(source)
    assert tuple(os.path.basename(part.__file__) for part in containerd_runtime.EDITOR_PARTS) == config_stamp.CONTAINERD_EDITOR
