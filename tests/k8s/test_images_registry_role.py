# -*- coding: utf-8 -*-
"""roles/images in registry mode, as a playbook runs it, against the real distribution registry
(tests/k8s/registry.py) over TLS with a private CA.

The archive comes from the package source with its sha256 in SHA256SUMS, as for the node delivery;
a stand-in `ctr` on PATH records any call, and there must be none: nothing is asked of or imported
on the node. A second run sends nothing; check mode sends nothing; an unknown CA and a plain-HTTP
registry stop the node with the registry, the cause and the opt-out, never a traceback. The
device plugin's DaemonSet template names the image in the registry.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import registry
from test_registry_push import IMAGE, archive_digests, assembled_archive

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
COLLECTIONS_ROOT = REPO_ROOT / '.cache' / 'collections'
ARCHIVE = 'ascend-k8sdeviceplugin_v7.3.0_linux-x86_64.tar'

PLAYBOOK = '''
- name: Push the images to the registry
  hosts: all
  gather_facts: false
  # The device plugin role's defaults and variables as shipped, for the image its DaemonSet names.
  vars_files: [%s, %s]
  roles:
    - role: npu.ascend.images
      vars:
        images_wanted: [%s]
        images_arch: x86_64
  post_tasks:
    - name: Show what the pods name
      ansible.builtin.debug:
        msg: "DELIVERED {{ images_delivered | to_json }}"
    - name: Render the image the device plugin's DaemonSet names
      ansible.builtin.debug:
        msg: "DAEMONSET {{ __device_plugin_image_reference }}"
''' % (REPO_ROOT / 'roles' / 'device_plugin' / 'defaults' / 'main.yml', REPO_ROOT / 'roles' / 'device_plugin' / 'vars' / 'main.yml',
       IMAGE)

FAKE_CTR = '#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls.txt"\nexit 3\n'


def _playbook_binary():
    binary = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return binary if os.path.exists(binary) else shutil.which('ansible-playbook')


@pytest.fixture(scope='module')
def served(tmp_path_factory):
    with registry.running(tmp_path_factory.mktemp('registry-role')) as running:
        yield running


@pytest.fixture
def site(tmp_path):
    source = tmp_path / 'packages'
    source.mkdir()
    archive = assembled_archive(tmp_path / 'build')
    shutil.copy(str(archive), str(source / ARCHIVE))
    (source / 'SHA256SUMS').write_text('%s  %s\n' % (hashlib.sha256((source / ARCHIVE).read_bytes()).hexdigest(), ARCHIVE))
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    (bin_dir / 'ctr').write_text(FAKE_CTR)
    (bin_dir / 'ctr').chmod(0o755)
    return {'tmp': tmp_path, 'source': source, 'bin': bin_dir, 'archive': source / ARCHIVE}


def run(site, variables, check=False, hosts=('node-a', 'node-b')):
    playbook = site['tmp'] / 'push.yml'
    playbook.write_text(PLAYBOOK)
    extra = site['tmp'] / 'vars.yml'
    extra.write_text(json.dumps(dict({'images_source_dir': str(site['source']), 'images_deliver': True,
                                      'ansible_python_interpreter': sys.executable}, **variables)))
    inventory = site['tmp'] / 'hosts.ini'
    inventory.write_text(''.join('%s ansible_connection=local\n' % host for host in hosts))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS_ROOT), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCALHOST_WARNING='0', LC_ALL='C.UTF-8', PATH='%s:%s' % (site['bin'], os.environ['PATH']))
    argv = [_playbook_binary(), '-i', str(inventory), '-e', '@%s' % extra, str(playbook)]
    if check:
        argv.append('--check')
    completed = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=300, check=False)
    calls = (site['bin'] / 'calls.txt').read_text() if (site['bin'] / 'calls.txt').exists() else ''
    return completed.returncode, ' '.join(completed.stdout.split()), calls


def _changed(out, host='node-a'):
    return int(out.split(host + ' : ')[-1].split('changed=')[1].split()[0])


def test_the_role_pushes_once_and_names_the_image_in_the_registry(served, site):
    variables = {'images_registry': served.address + '/ascend', 'images_registry_ca_file': str(served.ca_file)}
    reference = served.address + '/ascend/ascend-k8sdeviceplugin:v7.3.0'
    rc, out, calls = run(site, variables, check=True)
    assert rc == 0 and _changed(out) == 1, out
    assert served.get('/v2/ascend/ascend-k8sdeviceplugin/manifests/v7.3.0')[0] == 404
    rc, out, calls = run(site, variables)
    assert rc == 0, out
    assert calls == ''
    assert _changed(out) == 1 and _changed(out, 'node-b') == 0
    # One push for the play, from the first node's turn: the task ran once.
    assert out.count('TASK [npu.ascend.images : Push the images the registry lacks') == 1
    assert 'DELIVERED ["%s"]' % reference in out and 'DAEMONSET %s' % reference in out
    status, headers, body = served.get('/v2/ascend/ascend-k8sdeviceplugin/manifests/v7.3.0',
                                       accept='application/vnd.oci.image.manifest.v1+json')
    expected = archive_digests(site['archive'])
    assert status == 200 and [layer['digest'] for layer in json.loads(body)['layers']] == expected['layers']
    rc, out, calls = run(site, variables)
    assert rc == 0 and _changed(out) == 0 and calls == '', out


def test_the_daemonset_names_the_image_as_rendered_here():
    template = (REPO_ROOT / 'roles' / 'device_plugin' / 'templates' / 'daemonset.yml.j2').read_text()
    assert 'image: {{ __device_plugin_image_reference | to_json }}' in template


def test_an_unknown_ca_and_plain_http_stop_the_nodes_with_the_opt_out(served, site):
    rc, out, calls = run(site, {'images_registry': served.address + '/untrusted'})
    assert rc != 0 and calls == ''
    assert 'registry %s/untrusted' % served.address in out and 'not trusted' in out
    assert 'images_registry_insecure=true' in out and 'Traceback' not in out
    assert 'node-a: image_push' in out and 'node-b: image_push' in out
    rc, out, calls = run(site, {'images_registry': 'http://%s/plain' % served.address})
    assert rc != 0 and 'plain HTTP' in out and 'images_registry_insecure=true' in out and 'Traceback' not in out
    assert served.get('/v2/untrusted/ascend-k8sdeviceplugin/manifests/v7.3.0')[0] == 404
