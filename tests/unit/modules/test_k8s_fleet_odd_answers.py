# -*- coding: utf-8 -*-
"""A misspelled taint and API answers of an unexpected shape are messages naming the host, never a traceback
(issue 40, class 7, the Kubernetes part): the fleet modules run with the real kubernetes client against a
loopback API server that answers Nodes and pods without metadata, lists that are no lists, and JSON that is
no object; the taint filter gets a misspelled effect and taint lists of other shapes."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.k8s_taints import k8s_taints
from ansible_collections.npu.ascend.plugins.modules import k8s_fleet_nodes, k8s_fleet_validate

from k8s_fake_api import FakeApi, HostileServer, node

TAINT = 'npu.ascend/unvalidated=true:NoSchedule'
OURS = {'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}


def wanted(host, **extra):
    return dict({'host': host, 'name': host, 'labels': {'npu.ascend/driver': '25.0.rc1.1'}, 'taint': TAINT,
                 'validated_label': 'npu.ascend/validated', 'validated_value': '25.0.rc1.1', 'wait_seconds': 0}, **extra)


@pytest.mark.parametrize('taint', ['npu.ascend/unvalidated=true:NoSchedul', 'npu.ascend/unvalidated=true',
                                   'npu ascend/unvalidated=true:NoSchedule', 'npu.ascend/unvalidated=tr ue:NoSchedule'])
def test_a_taint_that_cannot_be_used_fails_its_host_alone_with_a_message(run_module, monkeypatch, taint):
    api = FakeApi([node('a'), node('b')])
    monkeypatch.setattr(k8s_fleet_nodes, 'KubernetesApi', lambda *args, **kwargs: api)
    result = run_module(k8s_fleet_nodes, {'nodes': [wanted('a', taint=taint), wanted('b')]})
    assert result['hosts']['a']['failed'] is True
    message = result['hosts']['a']['msg']
    assert message.startswith('a: k8s_node: the until-validated taint %r cannot be used' % taint)
    assert 'Fix:' in message and 'npu_ascend_label_domain' in message
    assert api.nodes['a']['metadata']['labels'] == {}
    assert result['hosts']['b']['failed'] is False and api.nodes['b']['spec']['taints'] == [OURS]


def test_a_misspelled_taint_is_refused_by_validation_before_any_pod_runs(run_module, monkeypatch):
    api = FakeApi([node('a', {'npu.ascend/driver': '1'}, [OURS])])
    monkeypatch.setattr(k8s_fleet_validate, 'KubernetesApi', lambda *args, **kwargs: api)
    result = run_module(k8s_fleet_validate, {'nodes': [{
        'host': 'a', 'name': 'a', 'pod': {'metadata': {'name': 'p', 'namespace': 'v'}}, 'resource': 'r',
        'validated_label': 'npu.ascend/validated', 'validated_value': '1', 'taint': 'npu.ascend/unvalidated:NoExecut'}]})
    assert result['hosts']['a']['failed'] is True and 'NoExecut' in result['hosts']['a']['msg']
    assert api.count('create_pod') == 0


@pytest.mark.parametrize('taint', [{'key': 'npu.ascend/unvalidated', 'effect': 'NoSchedul'},
                                   {'key': 'npu ascend', 'effect': 'NoSchedule'},
                                   {'key': 'npu.ascend/unvalidated', 'value': 'a b', 'effect': 'NoSchedule'},
                                   {'effect': 'NoSchedule'}, 'npu.ascend/unvalidated=true:NoSchedul'])
def test_the_taint_filter_refuses_a_taint_kubernetes_refuses(taint):
    with pytest.raises(AnsibleFilterError) as raised:
        k8s_taints([], taint)
    assert str(raised.value).startswith('k8s_taints: ')


@pytest.mark.parametrize('current', [['npu.ascend/unvalidated=true:NoSchedule'], [None], [{'effect': 'NoSchedule'}],
                                     {'key': 'x'}])
def test_the_taint_filter_says_what_is_wrong_with_a_taint_list_of_another_shape(current):
    with pytest.raises(AnsibleFilterError) as raised:
        k8s_taints(current, TAINT)
    assert 'k8s_taints' in str(raised.value)


def _nodes_answer(items):
    def answer(handler):
        if handler.path.startswith('/api/v1/nodes'):
            return handler.send_json(items)
        return handler.send_json({'kind': 'Status', 'code': 404}, 404)
    return answer


# Items that are no Node with a name are passed over: host a's Node is written, b (not listed) is waited for.
JUNK_AND_A_NODE = [
    {'kind': 'NodeList', 'items': [{'kind': 'Node'}, node('a')]},
    {'kind': 'NodeList', 'items': [{'metadata': None}, {'metadata': {'name': 7}}, 'a', None, node('a')]},
]
# Host a's own Node in a shape Kubernetes does not give, or no list of Nodes at all: every host fails.
ODD_NODE_LISTS = [
    {'kind': 'NodeList', 'items': [{'metadata': {'name': 'a', 'labels': ['x']}, 'spec': {}}]},
    {'kind': 'NodeList', 'items': [{'metadata': {'name': 'a'}, 'spec': {'taints': 'NoSchedule'}}]},
    {'kind': 'NodeList', 'items': [{'metadata': {'name': 'a'}, 'spec': {'taints': [None]}}]},
    {'kind': 'NodeList', 'items': [{'metadata': {'name': 'a'}, 'spec': 'x'}]},
    {'kind': 'NodeList', 'items': {'a': node('a')}},
    {'kind': 'NodeList', 'items': 'a'},
    [node('a')],
    'a',
]


@pytest.mark.parametrize('answer', JUNK_AND_A_NODE)
def test_items_of_a_node_list_that_are_no_node_are_passed_over(run_module, tmp_path, answer):
    with HostileServer(_nodes_answer(answer), tmp_path) as server:
        result = run_module(k8s_fleet_nodes, {'kubeconfig': server.kubeconfig, 'nodes': [wanted('a'), wanted('b')]})
    assert result['hosts']['a']['failed'] is False and result['hosts']['a']['changed'] is True
    assert result['hosts']['b']['failed'] is True and 'no Node named b' in result['hosts']['b']['msg']
    assert [item['metadata']['name'] for item in result['resources']] == ['a']


@pytest.mark.parametrize('answer', ODD_NODE_LISTS)
def test_a_node_list_of_an_unexpected_shape_is_a_message_for_each_host(run_module, tmp_path, answer):
    with HostileServer(_nodes_answer(answer), tmp_path) as server:
        result = run_module(k8s_fleet_nodes, {'kubeconfig': server.kubeconfig, 'nodes': [wanted('a'), wanted('b')]})
        patches = [request for request in server.requests if request[0] == 'PATCH']
    for host in 'ab':
        outcome = result['hosts'][host]
        assert outcome['failed'] is True
        assert outcome['msg'].startswith('%s: ' % host) and 'Fix:' in outcome['msg']
    assert 'API server' in result['hosts']['a']['msg']
    # Nothing is written to a Node read in a shape Kubernetes does not give: its other taints could be lost.
    assert patches == []


def _pods_answer(pods):
    def answer(handler):
        if handler.command == 'GET' and handler.path.startswith('/api/v1/namespaces/v/pods'):
            return handler.send_json({'kind': 'PodList', 'items': pods})
        if handler.command == 'GET' and '/namespaces/' in handler.path and '/pods' not in handler.path:
            return handler.send_json({'kind': 'Namespace', 'metadata': {'name': 'v'}})
        if handler.command == 'POST':
            return handler.send_json({'kind': 'Pod', 'metadata': {'name': 'p', 'namespace': 'v'}}, 201)
        if handler.command == 'DELETE':
            return handler.send_json({'kind': 'Status', 'code': 200})
        return handler.send_json({'kind': 'Status', 'code': 404}, 404)
    return answer


ODD_POD_LISTS = [
    [{'kind': 'Pod'}, {'metadata': None}, 'p', None],
    [{'metadata': {'name': 'p'}, 'status': 'Running'}],
    [{'metadata': {'name': 'p'}, 'status': {'phase': ['Succeeded'], 'conditions': 'x', 'containerStatuses': [None]}}],
    [{'metadata': {'name': 'p'}, 'status': {'phase': 'Failed', 'conditions': [None, 'x'],
                                            'containerStatuses': [{'name': 'c', 'state': 'x'},
                                                                  {'name': 'c', 'state': {'terminated': 'x'}}]}}],
]


@pytest.mark.parametrize('pods', ODD_POD_LISTS)
def test_pods_of_an_unexpected_shape_are_a_failed_validation_not_a_traceback(run_module, tmp_path, monkeypatch, pods):
    monkeypatch.setattr('time.sleep', lambda seconds: None)
    with HostileServer(_pods_answer(pods), tmp_path) as server:
        result = run_module(k8s_fleet_validate, {'kubeconfig': server.kubeconfig, 'nodes': [{
            'host': 'a', 'name': 'a', 'pod': {'metadata': {'name': 'p', 'namespace': 'v'}}, 'resource': 'r',
            'validated_label': 'npu.ascend/validated', 'validated_value': '1', 'taint': TAINT, 'timeout_seconds': 0}]})
    assert result['hosts']['a']['failed'] is True and result['hosts']['a']['passed'] is False
    assert 'pod v/p' in result['hosts']['a']['report']


_CONTEXT = {'current-context': 'c', 'contexts': [{'name': 'c', 'context': {'cluster': 'k', 'user': 'u'}}]}


@pytest.mark.parametrize('kubeconfig', [
    {'current-context': 'c', 'contexts': [{'name': 'c', 'context': 'x'}]},
    dict(_CONTEXT, clusters=[{'name': 'k', 'cluster': 'x'}], users=[{'name': 'u', 'user': 'x'}]),
    dict(_CONTEXT, clusters=[{'name': 'k', 'cluster': {'server': 5}}], users=[{'name': 'u', 'user': {'token': ['x']}}]),
    'x', [],
])
def test_a_kubeconfig_of_another_shape_fails_each_host_with_a_message(run_module, tmp_path, kubeconfig):
    import json
    path = tmp_path / 'kubeconfig'
    path.write_text(json.dumps(kubeconfig))
    result = run_module(k8s_fleet_nodes, {'kubeconfig': str(path), 'nodes': [wanted('a')]})
    assert result['hosts']['a']['failed'] is True
    assert result['hosts']['a']['msg'].startswith('a: k8s_node cannot read Node a from the Kubernetes API: '
                                                  'the kubeconfig cannot be used: ')
