# -*- coding: utf-8 -*-
"""roles/images as a playbook runs it, against a stand-in `ctr` that keeps its images in a file.

Proves in Ansible itself, not only in the filters: a node that lacks the image gets it from the
archive (one listing, the import, one listing after); a node that has it costs one listing and
changes nothing; check mode reports the same change and imports nothing; an archive whose sha256
differs is refused before anything reaches the node; an archive saved under another name fails
with the name it held. The real containerd does the same in molecule/kubelet.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import COLLECTIONS_ROOT, playbook_binary

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason='the role writes root-owned files, as on a node')

IMAGE = 'ascend-k8sdeviceplugin:v7.3.0'
ARCHIVE = 'ascend-k8sdeviceplugin_v7.3.0_linux-x86_64.tar'

# Lists the store, or adds the RepoTags of an archive's manifest.json to it in full form, as ctr 1.6 does.
FAKE_CTR = '''#!%s
import json, os, sys, tarfile
here = os.path.dirname(os.path.abspath(__file__))
store, calls = os.path.join(here, 'store.txt'), os.path.join(here, 'calls.txt')
args = sys.argv[1:]
with open(calls, 'a') as log:
    log.write(' '.join(args) + '\\n')
refs = open(store).read().split() if os.path.exists(store) else []
if args[2:4] == ['images', 'ls']:
    print('\\n'.join(refs + ['sha256:' + 'e' * 64]))
elif args[2:4] == ['images', 'import']:
    with tarfile.open(args[-1]) as archive:
        manifest = json.load(archive.extractfile('manifest.json'))
    for tag in manifest[0]['RepoTags']:
        full = tag if '/' in tag and '.' in tag.split('/')[0] else 'docker.io/library/' + tag
        refs.append(full)
        print('unpacking %%s (sha256:...)...done' %% full)
    open(store, 'w').write('\\n'.join(refs) + '\\n')
else:
    sys.exit(3)
''' % sys.executable

PLAYBOOK = '''
- name: Deliver the image
  hosts: localhost
  gather_facts: false
  roles:
    - role: npu.ascend.images
      vars:
        images_wanted: [%s]
        images_arch: x86_64
        images_containerd_snapshotter: native
''' % IMAGE


def archive_bytes(tag):
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode='w') as archive:
        manifest = json.dumps([{'Config': 'c.json', 'RepoTags': [tag], 'Layers': []}]).encode()
        info = tarfile.TarInfo('manifest.json')
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
    return stream.getvalue()


@pytest.fixture
def node(tmp_path):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    ctr = bin_dir / 'ctr'
    ctr.write_text(FAKE_CTR)
    ctr.chmod(0o755)
    source = tmp_path / 'packages'
    source.mkdir()
    return {'tmp': tmp_path, 'bin': bin_dir, 'source': source}


def put_archive(node, tag=IMAGE, listed_sum=None):
    data = archive_bytes(tag)
    (node['source'] / ARCHIVE).write_bytes(data)
    (node['source'] / 'SHA256SUMS').write_text('%s  %s\n' % (listed_sum or hashlib.sha256(data).hexdigest(), ARCHIVE))


def run(node, check=False):
    playbook = node['tmp'] / 'images.yml'
    playbook.write_text(PLAYBOOK)
    variables = node['tmp'] / 'vars.yml'
    variables.write_text('images_source_dir: %s\nimages_staging_dir: %s\nansible_python_interpreter: %s\n'
                         % (node['source'], node['tmp'] / 'staging', sys.executable))
    (node['bin'] / 'calls.txt').write_text('')
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0', LC_ALL='C.UTF-8',
               PATH='%s:%s' % (node['bin'], os.environ['PATH']))
    argv = [playbook_binary(), '-i', 'localhost,', '-c', 'local', '-e', '@%s' % variables, str(playbook)]
    if check:
        argv.append('--check')
    completed = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=300, check=False)
    calls = [line.split()[2:4] for line in (node['bin'] / 'calls.txt').read_text().splitlines()]
    store = (node['bin'] / 'store.txt').read_text().split() if (node['bin'] / 'store.txt').exists() else []
    return completed.returncode, ' '.join(completed.stdout.split()), calls, store


def changed(out):
    return int(out.split('changed=')[-1].split()[0])


def test_a_missing_image_is_loaded_once_and_a_second_run_only_lists(node):
    put_archive(node)
    rc, out, calls, store = run(node)
    assert rc == 0, out
    assert calls == [['images', 'ls'], ['images', 'import'], ['images', 'ls']]
    assert store == ['docker.io/library/' + IMAGE]
    assert not (node['tmp'] / 'staging' / ARCHIVE).exists()
    rc, out, calls, store = run(node)
    assert (rc, changed(out), calls) == (0, 0, [['images', 'ls']]), out


def test_check_mode_reports_the_import_and_makes_none(node):
    put_archive(node)
    rc, out, calls, store = run(node, check=True)
    assert rc == 0, out
    assert 'Would copy %s/%s to the node and import %s into containerd' % (node['source'], ARCHIVE, IMAGE) in out
    assert changed(out) == 1 and calls == [['images', 'ls']] and store == []


def test_an_archive_with_another_sha256_is_refused_before_the_node_is_touched(node):
    put_archive(node, listed_sum='0' * 64)
    rc, out, calls, store = run(node)
    assert rc != 0
    assert 'is not the file that was checked' in out and calls == [['images', 'ls']]
    assert not (node['tmp'] / 'staging').exists()


def test_an_archive_saved_under_the_registry_name_fails_with_what_it_held(node):
    registry_name = 'swr.cn-south-1.myhuaweicloud.com/ascendhub/' + IMAGE
    put_archive(node, tag=registry_name)
    rc, out, calls, store = run(node)
    assert rc != 0
    assert 'the import added: %s' % registry_name in out, out
    assert 'ctr -n k8s.io images tag <name> docker.io/library/%s' % IMAGE in out
