# -*- coding: utf-8 -*-
"""The controller-side package hash: one entry per path, streamed, with what made a path unusable."""

import hashlib
import os

from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.lookup import ascend_file_sha256
from ansible_collections.npu.ascend.plugins.lookup.ascend_file_sha256 import LookupModule as _LookupModule


def LookupModule():
    """The lookup as the plugin loader makes it: ansible-core 2.16 to 2.18 read its options under the name the
    loader gives it (2.19 defaults that name to None)."""
    lookup = _LookupModule()
    lookup._load_name = 'npu.ascend.ascend_file_sha256'
    return lookup


def test_each_path_in_order_with_its_checksum(tmp_path):
    package = tmp_path / 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
    package.write_bytes(b'#!/bin/sh\nexit 0\n' * 1000)
    link = tmp_path / 'link.run'
    link.symlink_to(package)
    entries = LookupModule().run([str(tmp_path / 'missing.run'), str(package), str(link)], variables={})
    assert [entry['path'] for entry in entries] == [str(tmp_path / 'missing.run'), str(package), str(link)]
    assert entries[0] == {'path': str(tmp_path / 'missing.run'), 'exists': False, 'checksum': None, 'error': None}
    expected = hashlib.sha256(package.read_bytes()).hexdigest()
    assert entries[1]['exists'] and entries[1]['checksum'] == expected and entries[1]['error'] is None
    assert entries[2]['checksum'] == expected


def test_a_directory_or_a_dangling_link_is_not_a_package(tmp_path):
    (tmp_path / 'dir.run').mkdir()
    (tmp_path / 'dangling.run').symlink_to(tmp_path / 'nowhere')
    directory, dangling = LookupModule().run([str(tmp_path / 'dir.run'), str(tmp_path / 'dangling.run')], variables={})
    assert not directory['exists'] and directory['error'] == 'not a regular file'
    # A dangling link is missing as far as the package is concerned.
    assert not dangling['exists'] and dangling['checksum'] is None


def test_an_unreadable_file_says_why(tmp_path, monkeypatch):
    package = tmp_path / 'a.run'
    package.write_bytes(b'x')

    def refuse(path, mode='r'):
        raise PermissionError(13, 'Permission denied', path)
    monkeypatch.setattr(ascend_file_sha256, 'open', refuse, raising=False)
    entry = ascend_file_sha256.file_sha256(str(package))
    assert not entry['exists'] and entry['checksum'] is None and 'Permission denied' in entry['error']


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=3 * 1024 * 1024 + 7))
def test_blocks_add_up_to_the_whole_file(tmp_path_factory, content):
    path = tmp_path_factory.mktemp('hash') / 'p.run'
    path.write_bytes(content)
    assert ascend_file_sha256.file_sha256(str(path))['checksum'] == hashlib.sha256(content).hexdigest()
    os.unlink(str(path))
