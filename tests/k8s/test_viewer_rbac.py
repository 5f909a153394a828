# -*- coding: utf-8 -*-
"""The viewer role's RBAC, rendered from its template and applied to the real API server.

What a Dashboard or Grafana user reads about the NPU nodes must be allowed for the bound
subjects, and nothing else: SubjectAccessReview asks the API server's own RBAC authorizer, and a
ServiceAccount's token reads and is refused for real.
"""

import uuid
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from test_controlplane import A2_NODE, ALIBABA_NODE, DUO_NODE, wait_for
from test_device_plugin_rbac import object_path

ROLE = Path(__file__).resolve().parent.parent.parent / 'roles' / 'viewer'


def render_rbac(**overrides):
    variables = {}
    for name in ('defaults/main.yml', 'vars/main.yml'):
        variables.update(yaml.safe_load((ROLE / name).read_text(encoding='utf-8')))
    variables.update(overrides)
    text = (ROLE / 'templates' / 'rbac.yml.j2').read_text(encoding='utf-8')
    rendered = Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text))
    return [document for document in yaml.safe_load_all(rendered) if document]


@pytest.fixture(scope='module')
def viewer(control_plane):
    """The rendered RBAC, bound to a group and a ServiceAccount; yields (group, account, namespace, other)."""
    suffix = uuid.uuid4().hex[:8]
    group, namespace, other_namespace = 'npu-viewers-' + suffix, 'monitoring-' + suffix, 'other-' + suffix
    for name in (namespace, other_namespace):
        control_plane.check('POST', '/api/v1/namespaces', {'metadata': {'name': name}})
    control_plane.check('POST', '/api/v1/namespaces/%s/serviceaccounts' % namespace, {'metadata': {'name': 'grafana'}})
    documents = render_rbac(__viewer_name='npu-ascend:viewer-' + suffix, __viewer_node_names=[A2_NODE, DUO_NODE],
                            viewer_subjects=[{'kind': 'Group', 'name': group},
                                             {'kind': 'ServiceAccount', 'name': 'grafana', 'namespace': namespace}])
    created = []
    try:
        for document in documents:
            control_plane.check('POST', object_path(document), document)
            created.append('%s/%s' % (object_path(document), document['metadata']['name']))
        yield group, 'system:serviceaccount:%s:grafana' % namespace, namespace, other_namespace
    finally:
        for path in reversed(created):
            control_plane.request('DELETE', path)
        for name in (namespace, other_namespace):
            control_plane.request('DELETE', '/api/v1/namespaces/' + name)


def allowed(control_plane, user, groups, verb, resource, namespace='', name='', subresource=''):
    review = control_plane.check('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        'apiVersion': 'authorization.k8s.io/v1', 'kind': 'SubjectAccessReview',
        'spec': {'user': user, 'groups': list(groups) + ['system:authenticated'],
                 'resourceAttributes': {'verb': verb, 'resource': resource, 'namespace': namespace, 'name': name,
                                        'subresource': subresource, 'group': ''}}})
    return review['status'].get('allowed', False)


def as_group_member(control_plane, viewer, *request):
    return allowed(control_plane, 'alice-' + viewer[0], [viewer[0]], *request)


def as_account(control_plane, viewer, *request):
    return allowed(control_plane, viewer[1], ['system:serviceaccounts'], *request)


DEVICE_INFO = 'mindx-dl-deviceinfo-' + A2_NODE

# (verb, resource, namespace, name, subresource): what the Dashboard's node and pod pages and a
# Grafana Kubernetes data source read. {other}: any namespace.
VIEWER_READS = [
    ('list', 'nodes', '', '', ''),
    ('watch', 'nodes', '', '', ''),
    ('get', 'nodes', '', A2_NODE, ''),
    ('list', 'pods', '', '', ''),
    ('watch', 'pods', '', '', ''),
    ('list', 'pods', '{other}', '', ''),
    ('get', 'pods', '{other}', 'train-0', ''),
    ('get', 'configmaps', 'kube-system', DEVICE_INFO, ''),
    ('watch', 'configmaps', 'kube-system', DEVICE_INFO, ''),
    ('get', 'configmaps', 'kube-system', 'mindx-dl-deviceinfo-' + DUO_NODE, ''),
]

# What a viewer must not do or read.
NOT_VIEWER = [
    ('get', 'secrets', 'kube-system', 'bootstrap-token-abcdef', ''),
    ('list', 'secrets', '', '', ''),
    ('list', 'configmaps', 'kube-system', '', ''),
    ('get', 'configmaps', 'kube-system', 'kube-proxy', ''),
    ('get', 'configmaps', 'kube-system', 'mindx-dl-deviceinfo-' + ALIBABA_NODE, ''),
    ('get', 'configmaps', '{other}', DEVICE_INFO, ''),
    ('update', 'configmaps', 'kube-system', DEVICE_INFO, ''),
    ('patch', 'nodes', '', A2_NODE, ''),
    ('update', 'nodes', '', A2_NODE, 'status'),
    ('delete', 'nodes', '', A2_NODE, ''),
    ('get', 'nodes', '', A2_NODE, 'proxy'),
    ('create', 'pods', '{other}', '', ''),
    ('delete', 'pods', '{other}', 'train-0', ''),
    ('patch', 'pods', '{other}', 'train-0', ''),
    ('create', 'pods', '{other}', 'train-0', 'exec'),
    ('create', 'pods', '{other}', 'train-0', 'attach'),
    ('create', 'pods', '{other}', 'train-0', 'portforward'),
    ('get', 'pods', '{other}', 'train-0', 'log'),
    ('create', 'pods', '{other}', 'train-0', 'eviction'),
]


def _ids(rows):
    return ['%s %s%s %s' % (r[0], r[1], '/' + r[4] if r[4] else '', r[3] or r[2] or '*') for r in rows]


def _resolve(row, viewer):
    verb, resource, namespace, name, subresource = row
    return verb, resource, namespace.format(other=viewer[3]), name, subresource


@pytest.mark.parametrize('row', VIEWER_READS, ids=_ids(VIEWER_READS))
@pytest.mark.parametrize('subject', [as_group_member, as_account], ids=['group', 'serviceaccount'])
def test_what_a_viewer_reads_is_allowed(control_plane, viewer, subject, row):
    request = _resolve(row, viewer)
    # The RBAC authorizer learns new roles from its informer: the first review may come early.
    assert wait_for('%s allowed' % (request,), lambda: subject(control_plane, viewer, *request), timeout=30)


@pytest.mark.parametrize('row', NOT_VIEWER, ids=_ids(NOT_VIEWER))
@pytest.mark.parametrize('subject', [as_group_member, as_account], ids=['group', 'serviceaccount'])
def test_everything_else_is_refused(control_plane, viewer, subject, row):
    # Granted rules are in effect (a refusal below is not a role the authorizer has not seen yet).
    wait_for('the viewer role in effect',
             lambda: subject(control_plane, viewer, 'get', 'configmaps', 'kube-system', DEVICE_INFO), timeout=30)
    assert not subject(control_plane, viewer, *_resolve(row, viewer))


def test_someone_not_bound_gets_nothing(control_plane, viewer):
    wait_for('the viewer role in effect',
             lambda: as_group_member(control_plane, viewer, 'list', 'nodes', '', '', ''), timeout=30)
    assert not allowed(control_plane, 'mallory', ['other-group'], 'list', 'nodes')
    assert not allowed(control_plane, 'mallory', ['other-group'], 'get', 'configmaps', 'kube-system', DEVICE_INFO)


def test_the_accounts_token_reads_nodes_and_its_configmap_and_nothing_more(control_plane, viewer):
    namespace = viewer[2]
    token = control_plane.check(
        'POST', '/api/v1/namespaces/%s/serviceaccounts/grafana/token' % namespace,
        {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
         'spec': {'expirationSeconds': 600}})['status']['token']
    path = '/api/v1/namespaces/kube-system/configmaps'
    device_info = {'apiVersion': 'v1', 'kind': 'ConfigMap',
                   'metadata': {'name': DEVICE_INFO, 'namespace': 'kube-system'}, 'data': {'DeviceInfoCfg': '{}'}}
    control_plane.check('POST', path, device_info)
    try:
        assert wait_for('nodes listed with the token',
                        lambda: control_plane.request('GET', '/api/v1/nodes', token=token)[0] == 200, timeout=30)
        names = {node['metadata']['name']
                 for node in control_plane.check('GET', '/api/v1/nodes')['items']}
        assert {A2_NODE, DUO_NODE} <= names
        status, body = control_plane.request('GET', '%s/%s' % (path, DEVICE_INFO), token=token)
        assert status == 200 and body['data'] == {'DeviceInfoCfg': '{}'}, body
        for method, forbidden, payload in (
                ('GET', path, None),
                ('GET', '/api/v1/namespaces/kube-system/secrets', None),
                ('PUT', '%s/%s' % (path, DEVICE_INFO), dict(device_info, data={'DeviceInfoCfg': 'changed'})),
                ('DELETE', '%s/%s' % (path, DEVICE_INFO), None)):
            status, body = control_plane.request(method, forbidden, payload, token=token)
            assert status == 403, (method, forbidden, status, body)
        assert control_plane.check('GET', '%s/%s' % (path, DEVICE_INFO))['data'] == {'DeviceInfoCfg': '{}'}
    finally:
        control_plane.request('DELETE', '%s/%s' % (path, DEVICE_INFO))


def test_without_npu_nodes_or_subjects_nothing_is_granted_or_bound():
    documents = render_rbac(__viewer_node_names=[])
    assert [document['kind'] for document in documents] == ['ClusterRole', 'Role']
    assert documents[1]['rules'] == []


def test_user_and_group_subjects_carry_their_api_group():
    documents = render_rbac(__viewer_node_names=[A2_NODE], viewer_subjects=[
        {'kind': 'User', 'name': 'alice'}, {'kind': 'ServiceAccount', 'name': 'grafana', 'namespace': 'monitoring'}])
    binding = [document for document in documents if document['kind'] == 'ClusterRoleBinding'][0]
    assert binding['subjects'] == [
        {'kind': 'User', 'name': 'alice', 'apiGroup': 'rbac.authorization.k8s.io'},
        {'kind': 'ServiceAccount', 'name': 'grafana', 'namespace': 'monitoring'}]
