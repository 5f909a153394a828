# -*- coding: utf-8 -*-
"""containerd_config over real-world configs, checked against real containerd binaries."""

import difflib
import glob
import os
import subprocess

import pytest

tomlkit = pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, undo_record  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURES = os.path.join(REPO_ROOT, 'tests', 'fixtures', 'containerd')
CACHE = os.path.join(os.environ.get('NPU_ASCEND_CACHE', os.path.expanduser('~/.cache/npu-ascend')), 'containerd')
BINARY = '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'
VALID = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FIXTURES, '*.toml'))
               if not os.path.basename(p).startswith(('invalid-', 'unsupported-')))
# Versions the tests/containerd/build.sh pins; Debian's 1.6 comes from the distribution.
BUILT_VERSIONS = ['v1.7.35', 'v2.4.2']


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding='utf-8') as handle:
        return handle.read()


def flatten(value, path=()):
    if isinstance(value, dict):
        for key, child in value.items():
            yield from flatten(child, path + (key,))
    else:
        yield path, value


def plain(text):
    return tomlkit.parse(text).unwrap()


def owned_paths(text):
    version, plugin = containerd_layout.describe(text)
    containerd = ('plugins', plugin, 'containerd')
    return containerd + ('default_runtime_name',), containerd + ('runtimes', 'ascend')


def containerd_binaries():
    """(label, path) of every containerd this machine can run; a missing build fails in CI."""
    found = [('1.6-debian', '/usr/bin/containerd')] if os.access('/usr/bin/containerd', os.X_OK) else []
    for version in BUILT_VERSIONS:
        path = os.path.join(CACHE, version, 'bin', 'containerd')
        if os.access(path, os.X_OK):
            found.append((version, path))
        elif os.environ.get('CI'):
            pytest.fail('containerd %s is not built; run tests/containerd/build.sh' % version)
    return found


def supports(label, version, plugin=None):
    # containerd 1.x knows config versions 1 and 2; 2.x also reads 3 and 4 (and migrates 1 and 2).
    # A version 2 file holding the 2.x CRI tables is a containerd 2.x file.
    if plugin is not None and plugin.startswith('io.containerd.cri.v1'):
        return label.startswith('v2')
    return version <= 2 or label.startswith('v2')


def binary_of(runtime):
    return containerd_layout.option_value(runtime.get('options') or {}, 'BinaryName')


@pytest.mark.parametrize('name', VALID)
def test_add_keeps_every_other_key_and_absent_restores_bytes(name):
    original = fixture(name)
    new, record, info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    default_path, runtime_path = owned_paths(original)

    before, after = dict(flatten(plain(original))), dict(flatten(plain(new)))
    for path, value in before.items():
        if path == default_path:
            continue
        assert after.get(path, '<missing>') == value, 'key %s changed' % '.'.join(path)
    for path in set(after) - set(before):
        assert path == default_path or path[:len(runtime_path)] == runtime_path, 'unexpected key %s' % '.'.join(path)

    default_name, runtime = containerd_layout.effective_runtime(new, 'ascend')
    assert default_name == 'ascend'
    assert binary_of(runtime) == BINARY
    # containerd reads option keys case-insensitively: never two spellings of one option.
    spellings = [key.lower() for key in runtime['options']]
    assert len(spellings) == len(set(spellings)), runtime['options']
    runc = plain(original)
    for key in runtime_path[:-1] + ('runc',):
        runc = runc.get(key, {}) if isinstance(runc, dict) else {}
    assert runtime['runtime_type'] == runc.get('runtime_type', 'io.containerd.runc.v2')
    assert (containerd_layout.option_value(runtime['options'], 'SystemdCgroup')
            == (containerd_layout.option_value(runc.get('options', {}), 'SystemdCgroup') if runc else True))

    # Only inserted lines and the default_runtime_name line differ; no original line is lost.
    matcher = difflib.SequenceMatcher(None, original.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == 'replace':
            assert all('default_runtime_name' in line for line in original.splitlines()[i1:i2]), tag
        else:
            assert tag in ('equal', 'insert'), (tag, original.splitlines()[i1:i2])

    again, record_again, _info = containerd_config.add_runtime(new, 'ascend', BINARY, True, record)
    assert again == new and record_again == record

    restored, _info = containerd_config.remove_runtime(new, 'ascend', record)
    assert restored == original


@pytest.mark.parametrize('name', VALID)
def test_real_containerd_accepts_the_result(name, tmp_path):
    new, _record, info = containerd_config.add_runtime(fixture(name), 'ascend', BINARY, True)
    config = tmp_path / 'config.toml'
    config.write_text(new)
    checked = 0
    for label, binary in containerd_binaries():
        if not supports(label, info['config_version'], info['cri_plugin']):
            continue
        dump = subprocess.run([binary, '--config', str(config), 'config', 'dump'], env=dict(os.environ, LC_ALL='C'),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
        assert dump.returncode == 0, '%s rejected the config: %s' % (label, dump.stderr)
        default_name, runtime = containerd_layout.effective_runtime(dump.stdout, 'ascend')
        assert default_name == 'ascend', label
        assert runtime is not None and binary_of(runtime) == BINARY, label
        checked += 1
    if not checked:
        reason = 'no containerd on this machine reads config version %d (run tests/containerd/build.sh)' % info['config_version']
        if os.environ.get('CI'):
            pytest.fail(reason)
        pytest.skip(reason)


def test_versionless_config_is_edited_as_version_1():
    text = fixture('k3s-v1-legacy.toml')
    new, _record, info = containerd_config.add_runtime(text, 'ascend', BINARY, True)
    assert info == {'config_version': 1, 'cri_plugin': 'cri'}
    assert plain(new)['plugins']['cri']['containerd']['runtimes']['ascend']['options']['BinaryName'] == BINARY
    assert 'io.containerd.grpc.v1.cri' not in plain(new)['plugins']


def test_version_3_uses_the_runtime_plugin():
    new, _record, info = containerd_config.add_runtime(fixture('rke2-v3.toml'), 'ascend', BINARY, True)
    assert info == {'config_version': 3, 'cri_plugin': 'io.containerd.cri.v1.runtime'}
    assert plain(new)['plugins']['io.containerd.cri.v1.runtime']['containerd']['default_runtime_name'] == 'ascend'


def test_previous_default_comes_back_with_its_spelling_and_comment():
    original = fixture('cloud-image-gpu-v2.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    assert record['previous_default'] == "'nvidia'"
    assert 'default_runtime_name = "ascend"  # GPU images run everything through the NVIDIA runtime' in new
    not_default, record, _info = containerd_config.add_runtime(new, 'ascend', BINARY, False, record)
    assert "default_runtime_name = 'nvidia'  # GPU images" in not_default
    assert containerd_layout.effective_runtime(not_default, 'ascend')[1]['options']['BinaryName'] == BINARY
    restored, _info = containerd_config.remove_runtime(not_default, 'ascend', record)
    assert restored == original


def test_not_default_leaves_the_default_alone():
    original = fixture('default-1.6.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, False)
    assert containerd_layout.effective_runtime(new, 'ascend')[0] == 'runc'
    assert record['default_changed'] is False
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


def test_minimal_drop_in_is_created_and_removed_completely():
    for version in (1, 2, 3, 4):
        base = containerd_layout.minimal_config(version)
        new, record, info = containerd_config.add_runtime(base, 'ascend', BINARY, True)
        assert info['config_version'] == version
        runtime = containerd_layout.effective_runtime(new, 'ascend')[1]
        assert runtime == {'runtime_type': 'io.containerd.runc.v2',
                           'options': {'SystemdCgroup': True, 'BinaryName': BINARY}}
        assert containerd_config.remove_runtime(new, 'ascend', record)[0] == base


def test_without_record_absent_does_what_huawei_uninstall_does():
    original = fixture('default-1.6.toml')
    installed_by_someone_else, _record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    removed, _info = containerd_config.remove_runtime(installed_by_someone_else, 'ascend')
    assert removed == original  # runc was the default, so resetting to runc is exact here
    nvidia_default = fixture('cloud-image-gpu-v2.toml')
    installed, _record, _info = containerd_config.add_runtime(nvidia_default, 'ascend', BINARY, True)
    removed, _info = containerd_config.remove_runtime(installed, 'ascend')
    assert containerd_layout.effective_runtime(removed, 'ascend') == ('runc', None)


def test_existing_runtime_only_gets_its_binary_corrected():
    original = fixture('k3s-v2-nvidia.toml')
    new, _record, _info = containerd_config.add_runtime(original, 'nvidia', '/opt/ascend/wrapper', False)
    nvidia = containerd_layout.effective_runtime(new, 'nvidia')[1]
    assert nvidia == {'runtime_type': 'io.containerd.runc.v2',
                      'options': {'BinaryName': '/opt/ascend/wrapper', 'SystemdCgroup': True}}
    assert len(new.splitlines()) == len(original.splitlines())


def test_invalid_toml_is_refused_with_its_location():
    with pytest.raises(containerd_config.ContainerdConfigError) as error:
        containerd_config.add_runtime(fixture('invalid-unclosed-table.toml'), 'ascend', BINARY, True)
    assert 'not valid TOML' in str(error.value) and 'line 3' in str(error.value)


def test_unknown_version_and_wrong_types_are_refused():
    with pytest.raises(containerd_config.ContainerdConfigError, match='version 5'):
        containerd_config.add_runtime(fixture('unsupported-version.toml'), 'ascend', BINARY, True)
    with pytest.raises(containerd_config.ContainerdConfigError, match='not a table'):
        containerd_config.add_runtime('version = 2\nplugins = "none"\n', 'ascend', BINARY, True)
    with pytest.raises(containerd_config.ContainerdConfigError, match='not a table'):
        containerd_config.add_runtime('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes]\n'
                                      'ascend = 1\n', 'ascend', BINARY, True)


def test_state_file_sits_beside_the_config_and_is_not_a_toml_import():
    path = undo_record.state_file_path('/etc/containerd/conf.d/ascend.toml')
    assert path == '/etc/containerd/conf.d/.ascend.toml.npu_ascend.json'
    assert not path.endswith('.toml')
