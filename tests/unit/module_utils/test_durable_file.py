# -*- coding: utf-8 -*-
"""replace_durably: the whole new file or the old one, with the mode asked for, no temporary file left."""

import os
import stat

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file


def test_the_file_is_replaced_with_the_mode_given(tmp_path):
    path = tmp_path / 'report.json'
    path.write_text('old')
    durable_file.replace_durably(str(path), b'new', mode=0o644)
    assert path.read_bytes() == b'new' and stat.S_IMODE(path.stat().st_mode) == 0o644
    assert os.listdir(str(tmp_path)) == ['report.json']


def test_without_a_mode_the_new_file_is_private(tmp_path):
    path = tmp_path / 'record.json'
    durable_file.replace_durably(str(path), b'{}')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_move_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / 'config.toml'
    path.write_text('old')

    def refuse(_source, _target):
        raise OSError(28, 'No space left on device')
    with pytest.raises(OSError):
        durable_file.replace_durably(str(path), b'new', move=refuse, mode=0o644)
    assert path.read_text() == 'old' and os.listdir(str(tmp_path)) == ['config.toml']
