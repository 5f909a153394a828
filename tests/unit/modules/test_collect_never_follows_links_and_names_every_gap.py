# -*- coding: utf-8 -*-
"""ascend_collect as an attacker sees it: the archive is written by the safe writer (a link planted at any
name it uses is never written through, a failed bundle leaves nothing behind), the log directories and
records are read without following a link (the device plugin's container can replace its log directory
through its hostPath mount), and every file left out has an entry in the index."""
import os
import stat
import tarfile

import pytest

from ansible_collections.npu.ascend.plugins.module_utils import diagnostics
from ansible_collections.npu.ascend.plugins.modules import ascend_collect
import test_ascend_collect
from test_ascend_collect import _args, _members

# The simulated node of the module's own tests (its logs, records and configs).
node = test_ascend_collect.node

SHADOW = b'root:$6$rounds=5000$never-in-a-bundle:19000:0:99999:7:::\n'


@pytest.fixture
def victim(tmp_path):
    outside = tmp_path / 'outside'
    outside.mkdir()
    secret = outside / 'shadow'
    secret.write_bytes(SHADOW)
    secret.chmod(0o640)
    return secret


def _untouched(victim):
    return victim.read_bytes() == SHADOW and stat.S_IMODE(victim.stat().st_mode) == 0o640


def _everything(dest):
    return b''.join(_members(dest).values())


def _entry(result, path, suffix=''):
    member = diagnostics.member_for_file(str(path)) + suffix
    entries = [entry for entry in result['index'] if entry['member'] == member]
    assert len(entries) == 1, (member, result['index'])
    return entries[0]


def test_a_link_planted_at_the_partial_name_does_not_make_root_write_its_target(node, run_module, victim):
    dest = node['tmp'] / 'bundle.tar.gz'
    os.symlink(str(victim), '%s.%d.partial' % (dest, os.getpid()))
    result = run_module(ascend_collect, _args(node), diff=False)
    assert not result.get('failed'), result
    assert _untouched(victim)
    assert not os.path.islink(str(dest)) and stat.S_ISREG(os.lstat(str(dest)).st_mode)
    assert stat.S_IMODE(os.lstat(str(dest)).st_mode) == 0o600 and 'index.json' in _members(str(dest))


def test_a_link_at_dest_is_refused_with_a_message_and_its_target_untouched(node, run_module, victim):
    dest = node['tmp'] / 'bundle.tar.gz'
    dest.symlink_to(victim)
    result = run_module(ascend_collect, _args(node), diff=False)
    assert result['failed'] and 'symbolic link' in result['msg'] and 'Fix:' in result['msg']
    assert _untouched(victim) and os.path.islink(str(dest))


def test_a_bundle_that_fails_half_way_leaves_no_partial_file(node, run_module, monkeypatch):
    def full(_archive, _info, _data=None):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(tarfile.TarFile, 'addfile', full)
    result = run_module(ascend_collect, _args(node), diff=False)
    assert result['failed'] and 'No space left on device' in result['msg']
    assert not [name for name in os.listdir(str(node['tmp'])) if name.startswith('bundle') or name.startswith('.bundle')]


@pytest.mark.parametrize('where', ['directory', 'parent'])
def test_a_log_directory_replaced_by_a_link_is_refused_and_nothing_under_it_is_read(node, run_module, victim,
                                                                                    monkeypatch, where):
    if where == 'directory':
        # The device plugin's container replaced /var/log/mindx-dl/devicePlugin by a link to /etc.
        directory = node['tmp'] / 'devicePlugin'
        directory.symlink_to(victim.parent)
    else:
        (victim.parent / 'devicePlugin').mkdir()
        (victim.parent / 'devicePlugin' / 'shadow.log').write_bytes(SHADOW)
        (node['tmp'] / 'mindx-dl').symlink_to(victim.parent)
        directory = node['tmp'] / 'mindx-dl' / 'devicePlugin'
    monkeypatch.setattr(ascend_collect, 'LOG_DIRECTORIES', (str(node['logs']), str(directory)))
    result = run_module(ascend_collect, _args(node), diff=False)
    assert SHADOW not in _everything(result['dest'])
    entry = _entry(result, directory, '/')
    assert entry['status'] == 'refused' and 'symbolic link' in entry['detail'], entry


def test_a_log_swapped_for_a_link_after_the_listing_is_not_followed(node, run_module, victim, monkeypatch):
    listdir = os.listdir

    def list_then_swap(path='.'):
        names = listdir(path)
        if 'install_4.log' in names:
            os.unlink(str(node['logs'] / 'install_4.log'))
            os.symlink(str(victim), str(node['logs'] / 'install_4.log'))
        return names
    monkeypatch.setattr(os, 'listdir', list_then_swap)
    result = run_module(ascend_collect, _args(node), diff=False)
    assert SHADOW not in _everything(result['dest'])
    entry = _entry(result, node['logs'] / 'install_4.log')
    assert entry['status'] == 'refused' and 'symbolic link' in entry['detail'], entry


def test_records_that_are_links_are_refused_and_not_read(node, run_module, victim, monkeypatch):
    records = node['tmp'] / 'records'
    (records / 'stolen.json').symlink_to(victim)
    (records / 'elsewhere').symlink_to(victim.parent)
    result = run_module(ascend_collect, _args(node), diff=False)
    assert SHADOW not in _everything(result['dest'])
    for path in (records / 'stolen.json', records / 'elsewhere'):
        entry = _entry(result, path)
        assert entry['status'] == 'refused' and 'symbolic link' in entry['detail'], entry
    # The records that are files are still there.
    assert _entry(result, records / 'reboot-required.json')['status'] == 'collected'


def test_a_records_directory_that_is_a_link_is_refused(node, run_module, victim, monkeypatch):
    monkeypatch.setattr(ascend_collect, 'RECORDS_DIR', str(node['tmp'] / 'records-link'))
    (node['tmp'] / 'records-link').symlink_to(victim.parent)
    result = run_module(ascend_collect, _args(node), diff=False)
    assert SHADOW not in _everything(result['dest'])
    entry = _entry(result, node['tmp'] / 'records-link', '/')
    assert entry['status'] == 'refused' and 'symbolic link' in entry['detail'], entry


def test_every_file_left_out_of_a_log_directory_has_an_entry(node, run_module):
    (node['logs'] / 'current.log').symlink_to(node['logs'] / 'install_0.log')
    (node['logs'] / 'old').mkdir()
    result = run_module(ascend_collect, _args(node, max_log_files=3), diff=False)
    fifo = _entry(result, node['logs'] / 'pipe.log')
    assert fifo['status'] == 'refused' and 'FIFO' in fifo['detail']
    link = _entry(result, node['logs'] / 'current.log')
    assert link['status'] == 'refused' and 'symbolic link' in link['detail']
    assert _entry(result, node['logs'] / 'old')['status'] == 'refused'
    # Six logs, the newest three kept: the note names the number, the option and the logs left out.
    note = _entry(result, node['logs'], '/')
    assert note['status'] == 'truncated' and 'max_log_files' in note['detail'] and '6 log files' in note['detail']
    assert all(name in note['detail'] for name in ('install_0.log', 'install_1.log', 'install_2.log'))
