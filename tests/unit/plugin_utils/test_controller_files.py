# -*- coding: utf-8 -*-
"""plan_writes: only the files whose bytes or mode differ, names kept inside the directory."""

import os

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import controller_files as cf


def test_a_directory_that_holds_the_files_needs_no_write(tmp_path):
    (tmp_path / 'rules').mkdir()
    (tmp_path / 'rules' / 'a.yml').write_text('groups: []\n')
    os.chmod(str(tmp_path / 'rules' / 'a.yml'), 0o644)
    assert cf.plan_writes(str(tmp_path), {'rules/a.yml': 'groups: []\n'}, 0o644) == []


def test_new_changed_and_mode_only_files_are_planned_in_name_order(tmp_path):
    (tmp_path / 'same.yml').write_text('x\n')
    os.chmod(str(tmp_path / 'same.yml'), 0o600)
    (tmp_path / 'old.yml').write_text('before\n')
    os.chmod(str(tmp_path / 'old.yml'), 0o644)
    changes = cf.plan_writes(str(tmp_path), {'old.yml': 'after\n', 'same.yml': 'x\n', 'sub/new.json': '{}'}, 0o644)
    assert [(change['name'], change['before'], change['after'], change['content_changed']) for change in changes] == [
        ('old.yml', b'before\n', b'after\n', True),
        ('same.yml', b'x\n', b'x\n', False),
        ('sub/new.json', None, b'{}', True)]
    assert changes[2]['path'] == os.path.join(str(tmp_path), 'sub', 'new.json')


@pytest.mark.parametrize('name', ['/etc/passwd', '../outside', 'a/../../b', 'a//b', './a', 'a\\b', '', 'a/'])
def test_names_that_leave_the_directory_or_are_not_plain_are_refused(tmp_path, name):
    with pytest.raises(cf.ControllerFilesError):
        cf.plan_writes(str(tmp_path), {name: 'x'}, 0o644)


def test_a_path_that_is_not_a_regular_file_and_content_that_is_not_text_are_refused(tmp_path):
    (tmp_path / 'dir.yml').mkdir()
    with pytest.raises(cf.ControllerFilesError, match='not a regular file'):
        cf.plan_writes(str(tmp_path), {'dir.yml': 'x'}, 0o644)
    os.symlink('/etc/hostname', str(tmp_path / 'link.yml'))
    with pytest.raises(cf.ControllerFilesError, match='not a regular file'):
        cf.plan_writes(str(tmp_path), {'link.yml': 'x'}, 0o644)
    with pytest.raises(cf.ControllerFilesError, match='not text'):
        cf.plan_writes(str(tmp_path), {'a.json': {'parsed': True}}, 0o644)


@pytest.mark.parametrize('mode, value', [('0644', 0o644), ('600', 0o600), ('0755', 0o755), ('0o640', 0o640)])
def test_octal_modes(mode, value):
    assert cf.parse_mode(mode) == value


@pytest.mark.parametrize('mode', ['rw-r--r--', '1777', '9', '-1'])
def test_modes_other_than_permission_bits_are_refused(mode):
    with pytest.raises(cf.ControllerFilesError):
        cf.parse_mode(mode)


_SEGMENT = st.text(st.characters(blacklist_characters='/\\\x00', blacklist_categories=('Cs',)), min_size=1, max_size=8)


@given(st.lists(_SEGMENT, min_size=1, max_size=4))
def test_any_accepted_name_stays_inside_the_directory(segments):
    name = '/'.join(segments)
    directory = '/srv/monitoring'
    try:
        path = os.path.join(directory, cf._relative_name(name))
    except cf.ControllerFilesError:
        assert any(segment in ('.', '..') for segment in segments)
        return
    assert os.path.normpath(path).startswith(directory + os.sep)
