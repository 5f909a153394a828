# -*- coding: utf-8 -*-
"""The exporter DaemonSet mounts the two sockets npu-exporter maps containers through, and nothing else of the engine."""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from conftest import trust_as_template

from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys

ROLE = Path(__file__).resolve().parents[3] / 'roles' / 'exporter'


def daemonset(domain=None, **overrides):
    variables = {}
    for name in ('defaults/main.yml', 'vars/main.yml'):
        loaded = yaml.safe_load((ROLE / name).read_text(encoding='utf-8')) or {}
        # Role variables are templates, as Ansible loads them.
        variables.update((key, trust_as_template(value) if isinstance(value, str) else value)
                         for key, value in loaded.items())
    # What npu.ascend.k8s_label_keys gives for npu_ascend_label_domain (a bare Templar has no collection filters).
    variables['__exporter_keys'] = label_keys(domain)
    variables['__exporter_image_reference'] = 'npu-exporter:v7.3.0'
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    rendered = templar.template(trust_as_template((ROLE / 'templates' / 'objects.yml.j2').read_text(encoding='utf-8')))
    documents = [document for document in yaml.safe_load_all(rendered) if document]
    return [document for document in documents if document['kind'] == 'DaemonSet'][0]['spec']['template']['spec']


def engine_mounts(spec):
    volumes = dict((volume['name'], volume) for volume in spec['volumes'])
    mounts = []
    for mount in spec['containers'][0]['volumeMounts']:
        host = volumes[mount['name']]['hostPath']
        if host['path'].startswith(('/run', '/var/run')):
            mounts.append((host['path'], host.get('type'), mount['mountPath'], mount.get('readOnly')))
    return mounts


@pytest.mark.parametrize('overrides, sockets', [
    ({}, ['/run/containerd/containerd.sock']),
    ({'exporter_container_mode': 'docker'}, ['/run/docker/containerd/containerd.sock', '/run/cri-dockerd.sock']),
    ({'exporter_container_mode': 'docker', 'exporter_containerd_socket': '/run/containerd/containerd.sock'},
     ['/run/containerd/containerd.sock', '/run/cri-dockerd.sock']),
])
def test_only_the_sockets_the_exporter_asks_through_are_mounted(overrides, sockets):
    spec = daemonset(**overrides)
    assert engine_mounts(spec) == [(socket, 'Socket', socket, True) for socket in sockets]
    args = spec['containers'][0]['args']
    mode = overrides.get('exporter_container_mode', 'containerd')
    assert '-containerMode=' + mode in args
    assert '-containerd=' + sockets[0] in args and '-endpoint=' + sockets[-1] in args
    # Never the Docker API (root on the node) and never the whole of containerd's state directory.
    paths = [volume['hostPath']['path'] for volume in spec['volumes'] if 'hostPath' in volume]
    assert '/run/docker.sock' not in paths and '/var/run/docker.sock' not in paths and '/run/containerd' not in paths


@pytest.mark.parametrize('domain', [None, 'npu.example.com'])
def test_the_daemonset_tolerates_the_taint_of_the_one_label_domain(domain):
    tolerated = [toleration['key'] for toleration in daemonset(domain)['tolerations']]
    assert label_keys(domain)['unvalidated'] in tolerated
