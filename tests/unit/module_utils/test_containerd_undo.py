# -*- coding: utf-8 -*-
"""Undo that restores exactly what was there: taken-over runtimes, runc, mixed-case options, 2.x files headed version 2."""

import pytest

pytest.importorskip('tomlkit')

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout  # noqa: E402

from test_containerd_config import BINARY, fixture  # noqa: E402

OTHER_BINARY = '/opt/npu/ascend-docker-runtime'
V2 = 'plugins."io.containerd.grpc.v1.cri".containerd'


def test_a_manual_install_taken_over_comes_back_byte_for_byte():
    original = fixture('huawei-manual-ascend-v2.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', OTHER_BINARY, True)
    assert record['runtime_created'] is False
    assert record['runtime_previous']['values'] == [[['options', 'BinaryName'], '"%s"' % BINARY]]
    assert containerd_layout.effective_runtime(new, 'ascend')[1]['options']['BinaryName'] == OTHER_BINARY
    again, record_again, _info = containerd_config.add_runtime(new, 'ascend', OTHER_BINARY, True, record)
    assert again == new and record_again == record
    restored, info = containerd_config.remove_runtime(new, 'ascend', record)
    assert restored == original and info['runtime_kept'] is False


def test_a_manual_install_already_as_wanted_is_recorded_and_kept_by_absent():
    original = fixture('huawei-manual-ascend-v2.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    assert new == original
    assert record['runtime_previous'] == {'values': [], 'tables': []}
    restored, _info = containerd_config.remove_runtime(new, 'ascend', record)
    # Neither the table nor `default_runtime_name = "ascend"` (and its comment) goes.
    assert restored == original


def test_not_default_on_a_manual_default_is_undone_to_that_default():
    original = fixture('huawei-manual-ascend-v2.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, False)
    assert containerd_layout.effective_runtime(new, 'ascend')[0] == 'runc'
    assert record['previous_default'] == '"ascend"'
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


def test_a_taken_over_table_without_options_gets_them_and_loses_them_again():
    original = ('version = 2\n[%s.runtimes.ascend]\n  privileged_without_host_devices = true  # operator\n'
                '[%s.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n' % (V2, V2))
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    runtime = containerd_layout.effective_runtime(new, 'ascend')[1]
    assert runtime['options'] == {'BinaryName': BINARY} and runtime['runtime_type'] == 'io.containerd.runc.v2'
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


def test_without_a_record_a_table_with_settings_of_its_own_is_kept():
    original = fixture('huawei-manual-ascend-v2.toml').replace(
        '            SystemdCgroup = true\n        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
        '            SystemdCgroup = true\n            Root = "/run/ascend-runc"\n'
        '        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]', 1)
    assert 'Root = "/run/ascend-runc"' in original
    removed, info = containerd_config.remove_runtime(original, 'ascend')
    assert removed == original and info['runtime_kept'] is True


def test_without_a_record_a_plain_copy_of_runc_goes_as_huawei_uninstall_does():
    removed, info = containerd_config.remove_runtime(fixture('huawei-manual-ascend-v2.toml'), 'ascend')
    assert containerd_layout.effective_runtime(removed, 'ascend') == ('runc', None)
    assert info['runtime_kept'] is False


def test_runc_is_never_deleted_without_a_record():
    original = fixture('default-1.6.toml')
    assert containerd_config.remove_runtime(original, 'runc')[0] == original


def test_runc_taken_over_gets_its_binary_back():
    original = fixture('kubespray-v2-mixed-case.toml')
    new, record, _info = containerd_config.add_runtime(original, 'runc', BINARY, False)
    runc = containerd_layout.effective_runtime(new, 'runc')[1]
    assert runc['options'] == {'systemdCgroup': True, 'binaryName': BINARY}
    assert containerd_config.remove_runtime(new, 'runc', record)[0] == original


def test_mixed_case_options_are_edited_in_the_file_spelling():
    original = fixture('kubespray-v2-mixed-case.toml')
    new, record, _info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    ascend = containerd_layout.effective_runtime(new, 'ascend')[1]
    assert ascend['options'] == {'systemdCgroup': True, 'binaryName': BINARY}
    assert 'BinaryName =' not in new and 'SystemdCgroup =' not in new
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original


def test_two_spellings_of_one_option_are_refused():
    text = 'version = 2\n[%s.runtimes.ascend.options]\n  binaryName = "/a"\n  BinaryName = "/b"\n' % V2
    with pytest.raises(containerd_config.ContainerdConfigError, match='BinaryName and binaryName are one option'):
        containerd_config.add_runtime(text, 'ascend', BINARY, True)


def test_option_value_reads_any_spelling():
    assert containerd_layout.option_value({'binaryname': '/x'}, 'BinaryName') == '/x'
    assert containerd_layout.option_value({}, 'BinaryName') is None
    assert containerd_layout.option_value('not a table', 'BinaryName') is None


def test_version_2_header_with_containerd_2_tables_registers_there():
    original = fixture('containerd2-version2-header.toml')
    new, record, info = containerd_config.add_runtime(original, 'ascend', BINARY, True)
    assert info == {'config_version': 2, 'cri_plugin': 'io.containerd.cri.v1.runtime'}
    assert 'io.containerd.grpc.v1.cri' not in new
    assert containerd_layout.template_runtime(original)['options'] == {'SystemdCgroup': True}
    assert containerd_config.remove_runtime(new, 'ascend', record)[0] == original
    # A 2.x table without runtimes yet still marks a containerd 2.x file.
    images_only = 'version = 2\n[plugins."io.containerd.cri.v1.images"]\n  snapshotter = "overlayfs"\n'
    assert containerd_layout.describe(images_only) == (2, 'io.containerd.grpc.v1.cri')
    runtime_only = 'version = 2\n[plugins."io.containerd.cri.v1.runtime"]\n  enable_cdi = true\n'
    assert containerd_layout.describe(runtime_only) == (2, 'io.containerd.cri.v1.runtime')


def test_runtimes_under_both_cri_tables_are_refused():
    text = ('version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n'
            '[plugins."io.containerd.cri.v1.runtime".containerd]\n  default_runtime_name = "runc"\n')
    with pytest.raises(containerd_config.ContainerdConfigError, match='containerd config migrate'):
        containerd_config.add_runtime(text, 'ascend', BINARY, True)


@pytest.mark.parametrize('text', [
    '  version = 2\n\n[plugins]\n',
    '"version" = 2\n',
    "'version' = 3  # containerd 2.x\n[plugins]\n",
])
def test_indented_or_quoted_version_is_read_and_imported_exactly(text):
    assert containerd_layout.describe(text)[0] in (2, 3)
    new, record = containerd_config.add_import(text, '/etc/containerd/conf.d/a.toml')
    assert containerd_layout.imports_of(new) == ['/etc/containerd/conf.d/a.toml']
    assert containerd_config.remove_import(new, '/etc/containerd/conf.d/a.toml', record) == text
    added, record, _info = containerd_config.add_runtime(text, 'ascend', BINARY, True)
    assert containerd_config.remove_runtime(added, 'ascend', record)[0] == text


@pytest.mark.parametrize('text', [
    'version = 2\nplugins = {x = 1}\n',
    'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\ncontainerd = {default_runtime_name = "runc"}\n',
    'version = 2\n[[plugins]]\nx = 1\n',
    'version = 2\nversion = 3\n',
    'version = nan\n',
    'version = 2\na = ' + '[' * 5000 + ']' * 5000 + '\n',
    '\x00\x01version = 2\n',
])
def test_malformed_documents_are_refused_cleanly(text):
    with pytest.raises(containerd_config.ContainerdConfigError):
        containerd_config.add_runtime(text, 'ascend', BINARY, True)
