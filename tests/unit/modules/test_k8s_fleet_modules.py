# -*- coding: utf-8 -*-
"""k8s_fleet_nodes and k8s_fleet_validate as a task runs them: arguments, one API per cluster, check
mode and diff (against the in-memory API server of k8s_fake_api); and module_utils/k8s/client.py's
requests as the kubernetes client sends them, to a small HTTP server on loopback."""

import json

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.k8s import client, fleet_module
from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet import ApiError
from ansible_collections.npu.ascend.plugins.modules import k8s_fleet_nodes, k8s_fleet_validate

from k8s_fake_api import FakeApi, HostileServer, node

TAINT = 'npu.ascend/unvalidated=true:NoSchedule'
OURS = {'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}


@pytest.fixture
def clusters(monkeypatch):
    """(kubeconfig, context) -> FakeApi; a missing one cannot be reached."""
    apis = {}

    def api_for(kubeconfig=None, context=None, request_timeout=None):
        if (kubeconfig, context) not in apis:
            raise ApiError('the kubeconfig cannot be used: Invalid kube-config file. No configuration found.')
        return apis[(kubeconfig, context)]
    monkeypatch.setattr(k8s_fleet_nodes, 'KubernetesApi', api_for)
    monkeypatch.setattr(k8s_fleet_validate, 'KubernetesApi', api_for)
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    return apis


def wanted(host, **extra):
    return dict({'host': host, 'name': host, 'labels': {'npu.ascend/driver': '25.0.rc1.1'}, 'taint': TAINT,
                 'validated_label': 'npu.ascend/validated', 'validated_value': '25.0.rc1.1', 'wait_seconds': 0}, **extra)


def test_nodes_of_two_clusters_and_one_unreachable_cluster(run_module, clusters):
    clusters[('/main', None)] = FakeApi([node('a'), node('b')])
    clusters[('/other', 'edge')] = FakeApi([node('c')])
    result = run_module(k8s_fleet_nodes, {'kubeconfig': '/main', 'nodes': [
        wanted('a'), wanted('b'), wanted('c', kubeconfig='/other', context='edge'), wanted('d', kubeconfig='/gone')]})
    assert result['changed'] is True
    assert [result['hosts'][host]['failed'] for host in 'abcd'] == [False, False, False, True]
    assert result['hosts']['d']['msg'].startswith(
        'd: k8s_node cannot read Node d from the Kubernetes API: the kubeconfig cannot be used')
    assert 'k8s_kubeconfig (/gone, context current)' in result['hosts']['d']['msg']
    assert clusters[('/other', 'edge')].nodes['c']['spec']['taints'] == [OURS]
    # The shared list is the module's own cluster's, and not every host was in it.
    assert sorted(item['metadata']['name'] for item in result['resources']) == ['a', 'b']
    assert result['all_listed'] is False
    assert result['diff']['after']['a'] == {'labels': {'npu.ascend/driver': '25.0.rc1.1'}, 'taints': [OURS]}


def test_check_mode_reports_the_real_runs_change_and_writes_nothing(run_module, clusters):
    api = clusters[(None, None)] = FakeApi([node('a')])
    checked = run_module(k8s_fleet_nodes, {'nodes': [wanted('a')]}, check_mode=True)
    assert api.count('patch_node') == 0
    real = run_module(k8s_fleet_nodes, {'nodes': [wanted('a')]})
    assert checked['changed'] is real['changed'] is True
    again = run_module(k8s_fleet_nodes, {'nodes': [wanted('a')]})
    assert again['changed'] is False and again['all_listed'] is True and again['hosts']['a']['validated'] is False


def test_manage_taint_without_a_taint_is_refused(run_module, clusters):
    clusters[(None, None)] = FakeApi([node('a')])
    result = run_module(k8s_fleet_nodes, {'nodes': [dict(wanted('a'), taint=None)]})
    assert result['failed'] and 'manage_taint needs a taint' in result['msg']


def pod(host):
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'npu-validate-' + host, 'namespace': 'npu-validation'}}


def test_validate_makes_one_pull_secret_and_hides_the_password(run_module, clusters, capsys):
    api = clusters[(None, None)] = FakeApi([node('a', {'npu.ascend/driver': '1'}, [OURS])])
    api.pod_script[('npu-validation', 'npu-validate-a')] = [(0, {'phase': 'Succeeded'})]
    result = run_module(k8s_fleet_validate, {'nodes': [{
        'host': 'a', 'name': 'a', 'pod': pod('a'), 'resource': 'aliyun.com/npu', 'validated_label': 'npu.ascend/validated',
        'validated_value': '1', 'taint': TAINT, 'timeout_seconds': 5,
        'registry': {'server': 'registry.example.invalid', 'username': 'u', 'password': 'hunter2-secret'}}]})
    assert result['hosts']['a']['passed'] and result['hosts']['a']['lifted']
    secret = api.secrets[('npu-validation', 'npu-validation-registry')]
    assert secret['type'] == 'kubernetes.io/dockerconfigjson'
    import base64
    auths = json.loads(base64.b64decode(secret['data']['.dockerconfigjson']))['auths']
    assert auths['registry.example.invalid']['password'] == 'hunter2-secret'
    assert 'hunter2-secret' not in json.dumps(result)


def test_validate_needs_a_named_pod(run_module, clusters):
    clusters[(None, None)] = FakeApi()
    result = run_module(k8s_fleet_validate, {'nodes': [{
        'host': 'a', 'name': 'a', 'pod': {'metadata': {}}, 'resource': 'r', 'validated_label': 'l',
        'validated_value': 'v', 'taint': TAINT}]})
    assert result['failed'] and 'metadata.name and metadata.namespace' in result['msg']


@pytest.mark.parametrize('module', [k8s_fleet_nodes, k8s_fleet_validate])
def test_a_controller_without_the_kubernetes_library_is_told_what_to_install(run_module, module, monkeypatch):
    monkeypatch.setattr(fleet_module, 'KUBERNETES_IMPORT_ERROR', ImportError('No module named kubernetes'))
    result = run_module(module, {'nodes': []})
    assert result['failed'] and 'Failed to import the required Python library (kubernetes)' in result['msg']


# --- the real kubernetes client against a loopback HTTP server ------------------------------------------------------

def _cluster(nodes):
    """Nodes read, listed and merge-patched (409 on a stale resourceVersion); a POST echoes its body."""
    def answer(handler):
        path, body = handler.path.split('?')[0], handler.body
        if handler.command == 'GET' and path.startswith('/api/v1/nodes/'):
            name = path.rsplit('/', 1)[1]
            if name in nodes:
                return handler.send_json(nodes[name])
            return handler.send_json({'kind': 'Status', 'message': 'nodes "%s" not found' % name, 'code': 404}, 404)
        if handler.command == 'GET':
            return handler.send_json({'kind': 'NodeList', 'items': list(nodes.values())})
        if handler.command == 'POST':
            return handler.send_json(body, 201)
        name = path.rsplit('/', 1)[1]
        if body.get('metadata', {}).get('resourceVersion') not in (None, nodes[name]['metadata']['resourceVersion']):
            return handler.send_json({'kind': 'Status', 'message': 'the object has been modified', 'code': 409}, 409)
        nodes[name]['metadata']['labels'].update(body.get('metadata', {}).get('labels', {}))
        return handler.send_json(nodes[name])
    return answer


@pytest.fixture
def api_server(tmp_path):
    with HostileServer(_cluster({'a': node('a', {'x': 'y'}, version=5)}), tmp_path) as server:
        yield server


def test_the_client_lists_reads_and_merge_patches_nodes_as_plain_dicts(api_server):
    api = client.KubernetesApi(api_server.kubeconfig, 'hostile')
    assert [item['metadata']['name'] for item in api.list_nodes()] == ['a']
    assert api.get_node('a')['metadata']['resourceVersion'] == '5'
    assert api.get_node('missing') is None
    patched = api.patch_node('a', {'metadata': {'labels': {'z': '1'}}})
    assert patched['metadata']['labels'] == {'x': 'y', 'z': '1'}
    method, path, content_type, body = api_server.requests[-1]
    assert (method, content_type, body) == ('PATCH', 'application/merge-patch+json', {'metadata': {'labels': {'z': '1'}}})
    with pytest.raises(ApiError) as raised:
        api.patch_node('a', {'metadata': {'resourceVersion': '4'}, 'spec': {'taints': []}})
    assert raised.value.status == 409 and 'the object has been modified' in raised.value.message


def test_the_client_creates_a_pod_whose_quantities_are_numbers(api_server):
    api = client.KubernetesApi(api_server.kubeconfig, 'hostile')
    pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p', 'namespace': 'n'},
           'spec': {'containers': [{'name': 'c', 'image': 'i', 'resources': {'limits': {'huawei.com/Ascend910': 1}}}]}}
    api.create_pod(pod)
    method, path, _content_type, body = api_server.requests[-1]
    assert (method, path.split('?')[0]) == ('POST', '/api/v1/namespaces/n/pods')
    assert body['spec']['containers'][0]['resources'] == {'limits': {'huawei.com/Ascend910': '1'}}
    # The caller's definition is left as it was.
    assert pod['spec']['containers'][0]['resources']['limits']['huawei.com/Ascend910'] == 1


def test_the_client_says_why_it_cannot_connect(tmp_path, api_server):
    kubeconfig = tmp_path / 'dead'
    kubeconfig.write_text(open(api_server.kubeconfig).read().replace(':%d' % api_server.server.server_port, ':9'))
    api = client.KubernetesApi(str(kubeconfig), None)
    with pytest.raises(ApiError) as raised:
        api.list_nodes()
    assert raised.value.status is None
    assert 'refused' in raised.value.message.lower() or 'max retries' in raised.value.message.lower()


def test_a_kubeconfig_that_cannot_be_used_is_an_api_error(tmp_path):
    with pytest.raises(ApiError) as raised:
        client.KubernetesApi(str(tmp_path / 'missing'), 'nowhere')
    assert raised.value.message.startswith('the kubeconfig cannot be used')
