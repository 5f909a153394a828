# -*- coding: utf-8 -*-
"""The safe writer (durable_file): never through a link, never outside its root, the mode of an existing
file kept, a fresh temporary file of its own. Written as an attacker who plants links in the writer's
directory, before the write and between its check and its rename."""
import os
import stat

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file


@pytest.fixture
def victim(tmp_path):
    """A file outside the writer's directory that root must never change."""
    outside = tmp_path / 'outside'
    outside.mkdir()
    secret = outside / 'shadow'
    secret.write_bytes(b'root:$6$secret\n')
    secret.chmod(0o640)
    return secret


def _unchanged(secret):
    return secret.read_bytes() == b'root:$6$secret\n' and stat.S_IMODE(secret.stat().st_mode) == 0o640


def test_a_link_planted_at_the_destination_is_refused_and_its_target_untouched(tmp_path, victim):
    directory = tmp_path / 'reports'
    directory.mkdir()
    (directory / 'report.json').symlink_to(victim)
    with pytest.raises(durable_file.UnsafeDestination, match='symbolic link'):
        durable_file.replace_durably(str(directory / 'report.json'), b'new', mode=0o644)
    assert _unchanged(victim) and os.path.islink(str(directory / 'report.json'))
    assert sorted(os.listdir(str(directory))) == ['report.json']


def test_a_link_planted_between_the_check_and_the_rename_is_not_written_through(tmp_path, victim, monkeypatch):
    directory = tmp_path / 'reports'
    directory.mkdir()
    path = directory / 'report.json'
    create = durable_file._create_temporary

    def plant_then_create(directory_fd, name):
        path.symlink_to(victim)
        return create(directory_fd, name)
    monkeypatch.setattr(durable_file, '_create_temporary', plant_then_create)
    with pytest.raises(OSError):
        durable_file.replace_durably(str(path), b'new')
    assert _unchanged(victim)
    assert sorted(os.listdir(str(directory))) == ['report.json']


def test_a_directory_that_resolves_outside_the_root_is_refused(tmp_path, victim):
    root = tmp_path / 'root'
    root.mkdir()
    (root / 'sub').symlink_to(victim.parent)
    with pytest.raises(durable_file.UnsafeDestination, match='outside'):
        durable_file.replace_durably(str(root / 'sub' / 'shadow'), b'owned', root=str(root))
    assert _unchanged(victim) and os.listdir(str(victim.parent)) == ['shadow']


def test_a_directory_swapped_for_a_link_after_the_check_is_refused(tmp_path, victim, monkeypatch):
    root = tmp_path / 'root'
    (root / 'sub').mkdir(parents=True)
    refuse = durable_file.refuse_outside

    def check_then_swap(path, top):
        resolved = refuse(path, top)
        os.rmdir(str(root / 'sub'))
        (root / 'sub').symlink_to(victim.parent)
        return resolved
    monkeypatch.setattr(durable_file, 'refuse_outside', check_then_swap)
    with pytest.raises(durable_file.UnsafeDestination, match='outside'):
        durable_file.replace_durably(str(root / 'sub' / 'shadow'), b'owned', root=str(root))
    assert _unchanged(victim) and os.listdir(str(victim.parent)) == ['shadow']


def test_the_temporary_file_is_never_a_planted_one(tmp_path, victim, monkeypatch):
    """Every name the writer could pick is taken by a link first: it must not write through any."""
    directory = tmp_path / 'd'
    directory.mkdir()
    names = iter(['a' * 16] * 3 + ['b' * 16])
    monkeypatch.setattr(durable_file.binascii, 'hexlify', lambda _raw: next(names).encode('ascii'))
    (directory / ('.f.%s.tmp' % ('a' * 16))).symlink_to(victim)
    durable_file.replace_durably(str(directory / 'f'), b'new')
    assert _unchanged(victim) and (directory / 'f').read_bytes() == b'new'
    assert os.path.islink(str(directory / ('.f.%s.tmp' % ('a' * 16))))


@pytest.mark.parametrize('mode', [0o600, 0o640, 0o400])
def test_an_existing_file_keeps_its_mode(tmp_path, mode):
    path = tmp_path / 'fleet-report.json'
    path.write_text('old')
    path.chmod(mode)
    durable_file.replace_durably(str(path), b'new', mode=0o644)
    assert path.read_bytes() == b'new' and stat.S_IMODE(path.stat().st_mode) == mode


def test_a_caller_may_ask_for_the_mode_of_an_existing_file(tmp_path):
    path = tmp_path / 'hosts'
    path.write_text('old')
    path.chmod(0o600)
    durable_file.replace_durably(str(path), b'new', mode=0o644, keep_mode=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failure_while_streaming_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / 'bundle.tar.gz'
    path.write_bytes(b'old')
    with pytest.raises(RuntimeError):
        with durable_file.writing(str(path), mode=0o600) as stream:
            stream.write(b'half')
            raise RuntimeError('disk full')
    assert path.read_bytes() == b'old' and os.listdir(str(tmp_path)) == ['bundle.tar.gz']


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(['sub', 'a', '..', 'link', 'x']), min_size=1, max_size=4))
def test_whatever_the_relative_name_nothing_outside_the_root_changes(tmp_path_factory, parts):
    base = tmp_path_factory.mktemp('attack')
    root = base / 'root'
    (root / 'sub').mkdir(parents=True)
    outside = base / 'outside'
    outside.mkdir()
    (root / 'link').symlink_to(outside)
    path = os.path.join(str(root), *parts)
    try:
        durable_file.replace_durably(path, b'new', root=str(root))
    except OSError:
        pass
    assert os.listdir(str(outside)) == []
    assert sorted(os.listdir(str(base))) == ['outside', 'root']


def test_rename_within_refuses_a_link_and_a_target_outside(tmp_path, victim):
    root = tmp_path / 'root'
    (root / 'parts').mkdir(parents=True)
    (root / 'parts' / 'a.json').symlink_to(victim)
    (root / 'merged').mkdir()
    with pytest.raises(durable_file.UnsafeDestination):
        durable_file.rename_within(str(root / 'parts' / 'a.json'), str(root / 'merged' / 'a.json'), str(root))
    (root / 'parts' / 'b.json').write_text('{}')
    (root / 'out').symlink_to(victim.parent)
    with pytest.raises(durable_file.UnsafeDestination):
        durable_file.rename_within(str(root / 'parts' / 'b.json'), str(root / 'out' / 'b.json'), str(root))
    assert _unchanged(victim) and os.listdir(str(victim.parent)) == ['shadow']
