# -*- coding: utf-8 -*-
"""Run the containerd_import module (and containerd_runtime in drop-in use) on files in a temporary directory."""

import os
import shutil

import pytest

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_layout  # noqa: E402
from ansible_collections.npu.ascend.plugins.modules import containerd_import, containerd_runtime  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        'fixtures', 'containerd')


@pytest.fixture
def main_config(tmp_path):
    path = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'kubespray-v2-mirrors.toml'), str(path))
    path.chmod(0o600)
    return path


def test_drop_in_round_trip_leaves_the_main_config_as_it_was(main_config, tmp_path, run_module):
    original = main_config.read_bytes()
    drop_in = tmp_path / 'conf.d' / '99-npu-ascend.toml'

    planned = run_module(containerd_runtime, {'path': str(drop_in), 'template_config': str(main_config)},
                         check_mode=True)
    assert planned['changed'] and not drop_in.exists()
    written = run_module(containerd_runtime, {'path': str(drop_in), 'template_config': str(main_config)})
    assert written['changed'] and written['config_version'] == 2
    runtime = containerd_layout.effective_runtime(drop_in.read_text(), 'ascend')[1]
    assert runtime['base_runtime_spec'] == '/etc/containerd/cri-base.json'

    checked = run_module(containerd_import, {'path': str(main_config), 'import': str(drop_in)}, check_mode=True)
    assert checked['changed'] and main_config.read_bytes() == original
    assert checked['imports'] == [str(drop_in)]
    imported = run_module(containerd_import, {'path': str(main_config), 'import': str(drop_in), 'backup': True})
    assert imported['changed'] and open(imported['backup_file'], 'rb').read() == original
    assert oct(main_config.stat().st_mode & 0o777) == oct(0o600)
    again = run_module(containerd_import, {'path': str(main_config), 'import': str(drop_in)})
    assert not again['changed']

    removed = run_module(containerd_import, {'path': str(main_config), 'import': str(drop_in), 'state': 'absent',
                                             'remove_backups': True})
    assert removed['changed'] and main_config.read_bytes() == original
    assert removed['removed_backups'] == [imported['backup_file']] and not os.path.exists(imported['backup_file'])
    assert not os.path.exists(removed['state_file'])
    gone = run_module(containerd_runtime, {'path': str(drop_in), 'state': 'absent'})
    assert gone['changed'] and not drop_in.exists()


def test_template_of_another_version_is_refused(tmp_path, run_module):
    main = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'rke2-v3.toml'), str(main))
    drop_in = tmp_path / 'ascend.toml'
    result = run_module(containerd_runtime, {'path': str(drop_in), 'config_version': 2,
                                             'template_config': str(main)})
    assert result['failed'] and 'is config version 3' in result['msg']


def test_missing_main_config_and_version_1_are_refused(tmp_path, run_module):
    missing = run_module(containerd_import, {'path': str(tmp_path / 'none.toml'), 'import': '/x.toml'})
    assert missing['failed'] and 'does not exist' in missing['msg']
    legacy = tmp_path / 'config.toml'
    shutil.copy(os.path.join(FIXTURES, 'k3s-v1-legacy.toml'), str(legacy))
    before = legacy.read_bytes()
    refused = run_module(containerd_import, {'path': str(legacy), 'import': '/x.toml'})
    assert refused['failed'] and 'version 1 has no imports' in refused['msg']
    assert legacy.read_bytes() == before
