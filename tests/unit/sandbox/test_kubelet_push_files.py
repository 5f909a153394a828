# -*- coding: utf-8 -*-
"""sandbox/kubelet/push_files.py: the tar stream join.yml unpacks in a node, checked by unpacking it
with GNU tar as the node does."""

import importlib.util
import io
import os
import subprocess
import tarfile

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def push_files():
    spec = importlib.util.spec_from_file_location('npu_ascend_sandbox_push_files',
                                                  os.path.join(REPO_ROOT, 'sandbox', 'kubelet', 'push_files.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_files_land_with_their_modes_and_existing_directories_keep_theirs(push_files, tmp_path):
    source = tmp_path / 'runc'
    source.write_bytes(b'#!/bin/sh\nexec runc.real "$@"\n')
    root = tmp_path / 'root'
    (root / 'var' / 'tmp').mkdir(parents=True)
    os.chmod(root / 'var' / 'tmp', 0o1777)
    stream = push_files.archive([
        {'src': str(source), 'dest': '/usr/local/sbin/runc', 'mode': '0755'},
        {'content': 'token: secret\n', 'dest': '/etc/kubernetes/kubelet.conf', 'mode': '0600'},
        {'content': 'pause', 'dest': '/var/tmp/pause.oci.tar', 'mode': '0644'},
    ])
    subprocess.run(['tar', '-C', str(root), '--no-overwrite-dir', '-xf', '-'], input=stream, check=True)
    assert (root / 'usr/local/sbin/runc').read_bytes() == source.read_bytes()
    assert oct(os.stat(root / 'usr/local/sbin/runc').st_mode & 0o7777) == '0o755'
    assert (root / 'etc/kubernetes/kubelet.conf').read_text() == 'token: secret\n'
    assert oct(os.stat(root / 'etc/kubernetes/kubelet.conf').st_mode & 0o7777) == '0o600'
    assert oct(os.stat(root / 'var' / 'tmp').st_mode & 0o7777) == '0o1777'


@pytest.mark.parametrize('dest', ['etc/relative', '/etc/../../escape', '/opt/cni/../../../x'])
def test_a_path_outside_the_root_is_refused(push_files, dest):
    with pytest.raises(ValueError, match='absolute path without'):
        push_files.archive([{'content': 'x', 'dest': dest, 'mode': '0644'}])


def test_members_are_owned_by_root(push_files):
    with tarfile.open(fileobj=io.BytesIO(push_files.archive([{'content': 'x', 'dest': '/etc/x', 'mode': '0644'}]))) as tar:
        member = tar.getmember('etc/x')
    assert (member.uid, member.gid, member.uname) == (0, 0, 'root')
