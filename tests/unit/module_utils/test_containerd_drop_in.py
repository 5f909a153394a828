# -*- coding: utf-8 -*-
"""Drop-in mode: a runtime in a file of our own that the main config imports."""

import os
import subprocess

import pytest

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout  # noqa: E402

from test_containerd_config import BINARY, VALID, containerd_binaries, fixture  # noqa: E402

IMPORT = '/etc/containerd/conf.d/99-npu-ascend.toml'
IMPORTABLE = [name for name in VALID if containerd_layout.describe(fixture(name))[0] >= 2]


@pytest.mark.parametrize('name', IMPORTABLE)
def test_import_is_added_once_and_removed_to_the_original_bytes(name):
    original = fixture(name)
    new, record = containerd_config.add_import(original, IMPORT)
    assert IMPORT in containerd_layout.imports_of(new) or record == {'imports_created': False, 'entry_added': False}
    # Nothing but the imports line differs.
    changed = [line for line in new.splitlines() if line not in original.splitlines()]
    assert all(line.startswith('imports = [') for line in changed) and len(changed) <= 1
    again, _record = containerd_config.add_import(new, IMPORT)
    assert again == new
    assert containerd_config.remove_import(new, IMPORT, record) == original


def test_existing_imports_keep_their_entries_and_comment():
    original = 'version = 2\nimports = ["/etc/containerd/site.toml"]  # platform team\n\n[plugins]\n'
    new, record = containerd_config.add_import(original, IMPORT)
    assert new.splitlines()[1] == 'imports = ["/etc/containerd/site.toml", "%s"]  # platform team' % IMPORT
    assert record['imports_created'] is False
    assert containerd_config.remove_import(new, IMPORT, record) == original


def test_a_glob_that_covers_the_drop_in_is_enough():
    original = fixture('handwritten-minimal-v2.toml')
    assert containerd_layout.imports_of(original) == ['/etc/containerd/conf.d/*.toml']
    unchanged = {'imports_created': False, 'entry_added': False}
    assert containerd_config.add_import(original, IMPORT) == (original, unchanged)


def test_new_imports_line_goes_after_version_even_before_a_table():
    original = 'version = 3\n[plugins]\n'
    new, record = containerd_config.add_import(original, IMPORT)
    assert new == 'version = 3\nimports = ["%s"]\n[plugins]\n' % IMPORT
    assert containerd_config.remove_import(new, IMPORT, record) == original


def test_a_drop_in_emptied_of_its_runtime_holds_only_its_version():
    for leftover in ('version = 2\n', 'version = 2\n\n', 'version = 3'):
        assert containerd_layout.holds_only_version(leftover)
    assert not containerd_layout.holds_only_version('version = 2\n[plugins]\n')
    assert not containerd_layout.holds_only_version(fixture('default-1.6.toml'))


def test_version_1_config_cannot_import():
    with pytest.raises(containerd_config.ContainerdConfigError, match='version 1 has no imports'):
        containerd_config.add_import(fixture('k3s-v1-legacy.toml'), IMPORT)


def test_imports_that_is_not_an_array_is_refused():
    with pytest.raises(containerd_config.ContainerdConfigError, match='imports is a str'):
        containerd_config.add_import('version = 2\nimports = "/x.toml"\n', IMPORT)


def test_template_carries_the_main_configs_runc_settings_into_the_drop_in():
    main = fixture('kubespray-v2-mirrors.toml')
    template = containerd_layout.template_runtime(main)
    drop_in, _record, _info = containerd_config.add_runtime(containerd_layout.minimal_config(2), 'ascend', BINARY,
                                                            True, template=template)
    runtime = containerd_layout.effective_runtime(drop_in, 'ascend')[1]
    assert runtime['base_runtime_spec'] == '/etc/containerd/cri-base.json'
    assert runtime['options'] == {'SystemdCgroup': True, 'BinaryName': BINARY}
    assert containerd_layout.template_runtime(containerd_layout.minimal_config(3)) is None


def dump(binary, main_path):
    return subprocess.run([binary, '--config', str(main_path), 'config', 'dump'], env=dict(os.environ, LC_ALL='C'),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)


def write_drop_in_pair(tmp_path, main_text):
    drop_in_path = tmp_path / 'conf.d' / '99-npu-ascend.toml'
    drop_in_path.parent.mkdir()
    version = containerd_layout.describe(main_text)[0]
    drop_in, _record, _info = containerd_config.add_runtime(
        containerd_layout.minimal_config(version), 'ascend', BINARY, True,
        template=containerd_layout.template_runtime(main_text))
    drop_in_path.write_text(drop_in)
    main, _record = containerd_config.add_import(main_text, str(drop_in_path))
    main_path = tmp_path / 'config.toml'
    main_path.write_text(main)
    return main_path


def test_containerd_2_merges_the_drop_in_into_the_main_cri_settings(tmp_path):
    """Why drop-in mode needs containerd 2.x: 2.x merges the CRI table key by key."""
    binaries = dict(containerd_binaries())
    if 'v2.4.2' not in binaries:
        pytest.skip('containerd 2.4.2 is not built (tests/containerd/build.sh)')
    main_path = write_drop_in_pair(tmp_path, fixture('kubespray-v2-mirrors.toml'))
    result = dump(binaries['v2.4.2'], main_path)
    assert result.returncode == 0, result.stderr
    default_name, runtime = containerd_layout.effective_runtime(result.stdout, 'ascend')
    assert default_name == 'ascend' and runtime['options']['BinaryName'] == BINARY
    # The main config's own CRI settings survive the merge.
    assert 'https://quay-mirror.internal.example:5000' in result.stdout or 'quay-mirror.internal.example' in result.stdout
    assert containerd_layout.effective_runtime(result.stdout, 'runc')[1]['options']['BinaryName'] == '/usr/local/bin/runc'


def test_containerd_1_replaces_the_main_cri_table_with_the_imported_one(tmp_path):
    """The reason the role refuses drop-in mode on containerd 1.x."""
    binaries = dict(containerd_binaries())
    label = 'v1.7.35' if 'v1.7.35' in binaries else '1.6-debian'
    if label not in binaries:
        pytest.skip('no containerd 1.x on this machine')
    main_path = write_drop_in_pair(tmp_path, fixture('kubespray-v2-mirrors.toml'))
    result = dump(binaries[label], main_path)
    assert result.returncode == 0, result.stderr
    assert containerd_layout.effective_runtime(result.stdout, 'ascend')[1] is not None
    # The main config's sandbox image is gone: the imported CRI table replaced the main one.
    assert 'registry.k8s.io/pause:3.9' not in result.stdout
