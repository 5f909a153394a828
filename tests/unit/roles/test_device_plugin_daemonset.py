# -*- coding: utf-8 -*-
"""The device plugin's DaemonSet template, rendered as the role renders it: the pull policy follows
where the image comes from, extra host paths are mounted at their own path, hostPID only when asked.

The pod running from this template on real kubelets is molecule/kubelet's.
"""

from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from conftest import trust_as_template

ROLE = Path(__file__).resolve().parents[3] / 'roles' / 'device_plugin'
TEMPLATE = ROLE / 'templates' / 'daemonset.yml.j2'


def render(**overrides):
    variables = {'__device_plugin_wanted': ['huawei-Ascend310P', 'huawei-Ascend910']}
    for name in ('defaults/main.yml', 'vars/main.yml'):
        # As the role's own files, their templated defaults are templated (the pull policy's is).
        variables.update((key, trust_as_template(value) if isinstance(value, str) else value)
                         for key, value in yaml.safe_load((ROLE / name).read_text(encoding='utf-8')).items())
    # The collection's filters (label keys, registry reference) are tested on their own.
    variables.update({'__device_plugin_keys': {'device_plugin': 'npu.ascend/device-plugin',
                                               'unvalidated': 'npu.ascend/unvalidated'},
                      '__device_plugin_image_reference': 'ascend-k8sdeviceplugin:v7.3.0'})
    variables.update(overrides)
    templar = Templar(loader=DataLoader(), variables=variables)
    rendered = templar.template(trust_as_template(TEMPLATE.read_text(encoding='utf-8')))
    return [document for document in yaml.safe_load_all(rendered) if document]


def pod_specs(documents):
    return [document['spec']['template']['spec'] for document in documents]


@pytest.mark.parametrize('overrides, policy', [
    ({}, 'IfNotPresent'),
    ({'images_deliver': True}, 'Never'),
    ({'images_deliver': 'true', 'images_registry': ''}, 'Never'),
    # Pushed to a registry: the pods pull from there.
    ({'images_deliver': True, 'images_registry': 'registry.example.com:5000/ascend'}, 'IfNotPresent'),
    # The images role delivers for the Huawei profile only.
    ({'images_deliver': True, 'k8s_npu_profile': 'alibaba'}, 'IfNotPresent'),
    ({'images_deliver': True, 'device_plugin_image_pull_policy': 'Always'}, 'Always'),
])
def test_the_pull_policy_never_reaches_a_registry_when_the_images_are_on_the_nodes(overrides, policy):
    for spec in pod_specs(render(**overrides)):
        assert [container['imagePullPolicy'] for container in spec['containers']] == [policy]


def test_huaweis_mounts_only_and_no_host_pid_by_default():
    for spec in pod_specs(render()):
        assert 'hostPID' not in spec
        assert [volume['hostPath']['path'] for volume in spec['volumes']] == [
            '/var/lib/kubelet/device-plugins', '/var/lib/kubelet/pod-resources', '/usr/local/Ascend/driver',
            '/var/log/mindx-dl/devicePlugin', '/etc/localtime']


def test_extra_host_paths_are_mounted_at_their_own_path_read_only_unless_told():
    documents = render(device_plugin_host_pid=True, device_plugin_extra_host_paths=[
        {'path': '/usr/local/dcmi', 'type': 'Directory'},
        {'path': '/dev', 'read_only': False},
        {'path': '/etc/a file with spaces: and "quotes"', 'read_only': 'no', 'type': ''}])
    assert len(documents) == 2
    for spec in pod_specs(documents):
        assert spec['hostPID'] is True
        volumes = {volume['name']: volume for volume in spec['volumes']}
        mounts = {mount['name']: mount for mount in spec['containers'][0]['volumeMounts']}
        assert len(volumes) == len(spec['volumes']) == len(mounts) == 8
        assert volumes['extra-1']['hostPath'] == {'path': '/usr/local/dcmi', 'type': 'Directory'}
        assert volumes['extra-2']['hostPath'] == {'path': '/dev'}
        assert volumes['extra-3']['hostPath'] == {'path': '/etc/a file with spaces: and "quotes"'}
        assert [(mounts[name]['mountPath'], mounts[name]['readOnly']) for name in ('extra-1', 'extra-2', 'extra-3')] == [
            ('/usr/local/dcmi', True), ('/dev', False), ('/etc/a file with spaces: and "quotes"', False)]
