# -*- coding: utf-8 -*-
"""The device plugin's RBAC, rendered from the role's template and applied to the real API server.

Each API call Huawei's device plugin v7.3.0 makes (docs/kubernetes.md lists them with the source
file and function) must be allowed for its ServiceAccount, and calls it never makes must be
refused. SubjectAccessReview asks the API server's own RBAC authorizer; the device-info
ConfigMap's update-then-create is also done for real with the ServiceAccount's token.
"""

import uuid
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from test_controlplane import A2_NODE, ALIBABA_NODE, DUO_NODE, wait_for

ROLE = Path(__file__).resolve().parent.parent.parent / 'roles' / 'device_plugin'
RBAC_API = '/apis/rbac.authorization.k8s.io/v1'


def render_rbac(**overrides):
    variables = {}
    for name in ('defaults/main.yml', 'vars/main.yml'):
        variables.update(yaml.safe_load((ROLE / name).read_text(encoding='utf-8')))
    variables.update(overrides)
    text = (ROLE / 'templates' / 'rbac.yml.j2').read_text(encoding='utf-8')
    rendered = Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text))
    return [document for document in yaml.safe_load_all(rendered) if document]


def object_path(document):
    kind, meta = document['kind'], document['metadata']
    plural = {'ServiceAccount': 'serviceaccounts', 'ClusterRole': 'clusterroles',
              'ClusterRoleBinding': 'clusterrolebindings', 'Role': 'roles', 'RoleBinding': 'rolebindings'}[kind]
    base = '/api/v1' if kind == 'ServiceAccount' else RBAC_API
    if kind.startswith('Cluster'):
        return '%s/%s' % (base, plural)
    return '%s/namespaces/%s/%s' % (base, meta['namespace'], plural)


@pytest.fixture(scope='module')
def plugin_account(control_plane):
    """The rendered RBAC applied under a unique name; yields (account name, job namespace, other namespace)."""
    suffix = uuid.uuid4().hex[:8]
    name = 'dp-rbac-' + suffix
    job_namespace, other_namespace = 'jobs-' + suffix, 'other-' + suffix
    for namespace in (job_namespace, other_namespace):
        control_plane.check('POST', '/api/v1/namespaces', {'metadata': {'name': namespace}})
    documents = render_rbac(__device_plugin_name=name, __device_plugin_node_names=[A2_NODE, DUO_NODE],
                            device_plugin_job_namespaces=[job_namespace])
    created = []
    try:
        for document in documents:
            control_plane.check('POST', object_path(document), document)
            created.append('%s/%s' % (object_path(document), document['metadata']['name']))
        yield name, job_namespace, other_namespace
    finally:
        for path in reversed(created):
            control_plane.request('DELETE', path)
        for namespace in (job_namespace, other_namespace):
            control_plane.request('DELETE', '/api/v1/namespaces/' + namespace)


def allowed(control_plane, account, verb, resource, namespace='', name='', subresource=''):
    review = control_plane.check('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
        'spec': {
            'user': 'system:serviceaccount:kube-system:%s' % account,
            'groups': ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
            'resourceAttributes': {'verb': verb, 'resource': resource, 'namespace': namespace, 'name': name,
                                   'subresource': subresource, 'group': ''}}})
    return review['status'].get('allowed', False)


DEVICE_INFO = 'mindx-dl-deviceinfo-' + A2_NODE

# (verb, resource, namespace, name, subresource, the plugin's call in v7.3.0). {jobs}: the job namespace.
PLUGIN_CALLS = [
    ('list', 'pods', '', '', '', 'cur_node_informer.go InitPodInformer, kubeclient.go getPodListByCondition'),
    ('watch', 'pods', '', '', '', 'cur_node_informer.go InitPodInformer'),
    ('get', 'pods', '{jobs}', 'train-0', '', 'kubeclient.go GetPod, kube_cache.go getPod'),
    ('patch', 'pods', '{jobs}', 'train-0', '', 'kubeclient.go PatchPod'),
    ('get', 'nodes', '', A2_NODE, '', 'kubeclient.go GetNode'),
    ('patch', 'nodes', '', A2_NODE, '', 'kubeclient.go AddAnnotation'),
    ('patch', 'nodes', '', A2_NODE, 'status', 'kubeclient.go PatchNodeState (component-helpers PatchNodeStatus)'),
    ('patch', 'nodes', '', DUO_NODE, 'status', 'the same, on the other NPU node'),
    ('list', 'configmaps', '', '', '', 'ascendtolerance.go SyncResetCM informer'),
    ('watch', 'configmaps', '', '', '', 'ascendtolerance.go SyncResetCM informer'),
    ('create', 'configmaps', 'kube-system', '', '', 'client_server.go createOrUpdateDeviceCM'),
    ('update', 'configmaps', 'kube-system', DEVICE_INFO, '', 'client_server.go WriteDeviceInfoDataIntoCM'),
    ('get', 'configmaps', 'kube-system', DEVICE_INFO, '', 'client_server.go GetManuallySeparateNPUIDFromDeviceInfo'),
    ('get', 'configmaps', 'kube-system', 'mindx-dl-fault-config', '', 'server/manager.go FaultCodeCMName'),
    ('get', 'configmaps', 'kube-system', 'steptime-dtpgroup', '', 'server/plugin.go SlowNodeNoticeCMName'),
    ('create', 'events', 'kube-system', '', '', 'ascendcommon.go through kubeclient.go CreateEvent'),
    ('get', 'configmaps', '{jobs}', 'reset-config-train', '', 'client_server.go WriteResetInfoDataIntoCM'),
    ('update', 'configmaps', '{jobs}', 'reset-config-train', '', 'client_server.go WriteResetInfoDataIntoCM'),
    ('update', 'configmaps', '{jobs}', 'fault-config-train', '', 'client_server.go WriteFaultInfoDataIntoCM'),
]

# Calls the plugin never makes. {other}: a namespace not in device_plugin_job_namespaces.
NOT_PLUGIN_CALLS = [
    ('update', 'configmaps', 'kube-system', 'kube-proxy', ''),
    ('update', 'configmaps', 'kube-system', 'mindx-dl-deviceinfo-' + ALIBABA_NODE, ''),
    ('update', 'configmaps', 'kube-system', 'mindx-dl-fault-config', ''),
    ('delete', 'configmaps', 'kube-system', DEVICE_INFO, ''),
    ('update', 'configmaps', '{other}', 'reset-config-train', ''),
    ('create', 'configmaps', '{jobs}', '', ''),
    ('get', 'secrets', 'kube-system', 'bootstrap-token-abcdef', ''),
    ('list', 'secrets', '', '', ''),
    ('update', 'pods', '{jobs}', 'train-0', ''),
    ('create', 'pods', '{jobs}', '', ''),
    ('delete', 'pods', '{jobs}', 'train-0', ''),
    ('list', 'nodes', '', '', ''),
    ('patch', 'nodes', '', ALIBABA_NODE, ''),
    ('patch', 'nodes', '', ALIBABA_NODE, 'status'),
    ('update', 'nodes', '', A2_NODE, 'status'),
    ('delete', 'nodes', '', A2_NODE, ''),
    ('get', 'nodes', '', A2_NODE, 'proxy'),
    ('create', 'events', '{jobs}', '', ''),
]


def _namespace(text, job_namespace, other_namespace):
    return text.format(jobs=job_namespace, other=other_namespace)


@pytest.mark.parametrize('verb, resource, namespace, name, subresource, call', PLUGIN_CALLS,
                         ids=['%s %s%s %s' % (c[0], c[1], '/' + c[4] if c[4] else '', c[3] or c[2] or '*')
                              for c in PLUGIN_CALLS])
def test_every_call_of_the_plugin_is_allowed(control_plane, plugin_account, verb, resource, namespace, name,
                                             subresource, call):
    account, job_namespace, other_namespace = plugin_account
    namespace = _namespace(namespace, job_namespace, other_namespace)
    # The RBAC authorizer learns new roles from its informer: the first review may come early.
    assert wait_for('%s %s allowed (%s)' % (verb, resource, call),
                    lambda: allowed(control_plane, account, verb, resource, namespace, name, subresource),
                    timeout=30)


@pytest.mark.parametrize('verb, resource, namespace, name, subresource', NOT_PLUGIN_CALLS,
                         ids=['%s %s%s %s' % (c[0], c[1], '/' + c[4] if c[4] else '', c[3] or c[2] or '*')
                              for c in NOT_PLUGIN_CALLS])
def test_what_the_plugin_never_calls_is_refused(control_plane, plugin_account, verb, resource, namespace, name,
                                                subresource):
    account, job_namespace, other_namespace = plugin_account
    namespace = _namespace(namespace, job_namespace, other_namespace)
    # Granted rules are in effect (a refusal below is not a role the authorizer has not seen yet).
    wait_for('the plugin role in effect',
             lambda: allowed(control_plane, account, 'update', 'configmaps', 'kube-system', DEVICE_INFO), timeout=30)
    assert not allowed(control_plane, account, verb, resource, namespace, name, subresource)


def test_device_info_update_then_create_works_with_the_accounts_token(control_plane, plugin_account):
    account = plugin_account[0]
    token = control_plane.check(
        'POST', '/api/v1/namespaces/kube-system/serviceaccounts/%s/token' % account,
        {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
         'spec': {'expirationSeconds': 600}})['status']['token']
    path = '/api/v1/namespaces/kube-system/configmaps'
    device_info = {'apiVersion': 'v1', 'kind': 'ConfigMap',
                   'metadata': {'name': DEVICE_INFO, 'namespace': 'kube-system'},
                   'data': {'DeviceInfoCfg': '{}'}}
    try:
        # createOrUpdateDeviceCM: update first; NotFound (not Forbidden) makes it create.
        wait_for('update of the absent device-info ConfigMap to be NotFound',
                 lambda: control_plane.request('PUT', '%s/%s' % (path, DEVICE_INFO), device_info,
                                               token=token)[0] == 404, timeout=30)
        control_plane.check('POST', path, device_info, token=token)
        device_info['data']['DeviceInfoCfg'] = '{"updated": true}'
        control_plane.check('PUT', '%s/%s' % (path, DEVICE_INFO), device_info, token=token)
        # Another ConfigMap of kube-system: created by the admin, the plugin may not change it.
        other = {'apiVersion': 'v1', 'kind': 'ConfigMap',
                 'metadata': {'name': 'not-the-plugins-' + uuid.uuid4().hex[:6], 'namespace': 'kube-system'},
                 'data': {'k': 'v'}}
        control_plane.check('POST', path, other)
        other['data']['k'] = 'changed'
        status, body = control_plane.request('PUT', '%s/%s' % (path, other['metadata']['name']), other, token=token)
        assert status == 403, body
        assert control_plane.check('GET', '%s/%s' % (path, other['metadata']['name']))['data'] == {'k': 'v'}
        control_plane.request('DELETE', '%s/%s' % (path, other['metadata']['name']))
    finally:
        control_plane.request('DELETE', '%s/%s' % (path, DEVICE_INFO))
