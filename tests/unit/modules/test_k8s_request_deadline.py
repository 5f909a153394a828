# -*- coding: utf-8 -*-
"""Every Kubernetes request has one deadline (issue 40, class 6): the real kubernetes client against a loopback
API server that trickles its answer a byte at a time (each read gets its byte in time, so per-read timeouts
never fire) or never answers (which the client used to retry, taking several times its timeout). The request
fails by its deadline, naming the request and the limit, and the fleet module's hosts say so."""

import json
import time

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.k8s import client
from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet import ApiError
from ansible_collections.npu.ascend.plugins.modules import k8s_fleet_nodes, k8s_fleet_validate

from k8s_fake_api import HostileServer

# Slack over the deadline for a loaded 2-core machine: the old per-read timeouts took the whole trickle
# (TRICKLE_SECONDS) or four times the timeout.
SLACK = 2.5


def _trickle(handler):
    handler.trickle(0.1)


def _silent(handler):
    handler.silent()


@pytest.mark.parametrize('answer', [_trickle, _silent], ids=['trickles', 'never-answers'])
def test_a_request_ends_at_its_deadline_and_names_itself(tmp_path, answer):
    with HostileServer(answer, tmp_path) as server:
        api = client.KubernetesApi(server.kubeconfig, None, request_timeout=1)
        start = time.monotonic()
        with pytest.raises(ApiError) as raised:
            api.list_nodes()
        elapsed = time.monotonic() - start
    assert elapsed < 1 + SLACK
    assert raised.value.message.startswith(
        "the list of the cluster's Nodes (GET /api/v1/nodes) got no complete answer within 1 s")
    assert 'k8s_request_timeout' in raised.value.message


def test_a_patch_that_never_ends_names_the_node(tmp_path):
    with HostileServer(_silent, tmp_path) as server:
        api = client.KubernetesApi(server.kubeconfig, None, request_timeout=1)
        with pytest.raises(ApiError) as raised:
            api.patch_node('a2-01', {'metadata': {'labels': {'x': 'y'}}})
    assert raised.value.message.startswith('the patch of Node a2-01 (PATCH /api/v1/nodes/a2-01) got no complete answer')
    assert raised.value.message.endswith('the write may still take effect, and the next run reads the object again')


@pytest.mark.parametrize('retried', [False, True], ids=['read-timeout', 'retries-gave-up-on-read-timeouts'])
def test_a_read_timeout_that_ends_the_request_first_is_the_same_deadline(tmp_path, monkeypatch, retried):
    # On a busy controller the request's own read timeout (the same deadline) can end it before the
    # waiting thread looks; the message must not depend on which of the two came first.
    from urllib3.exceptions import MaxRetryError, ReadTimeoutError
    error = ReadTimeoutError(None, '/api/v1/nodes/a2-01', 'Read timed out. (read timeout=1.0)')
    if retried:
        error = MaxRetryError(None, '/api/v1/nodes/a2-01', error)
    with HostileServer(_silent, tmp_path) as server:
        api = client.KubernetesApi(server.kubeconfig, None, request_timeout=1)
    monkeypatch.setattr(client, '_within', lambda seconds, function: (True, {'error': error}))
    with pytest.raises(ApiError) as raised:
        api.patch_node('a2-01', {'metadata': {'labels': {'x': 'y'}}})
    assert raised.value.message.startswith(
        'the patch of Node a2-01 (PATCH /api/v1/nodes/a2-01) got no complete answer within 1 s')


def test_the_fleet_module_fails_each_host_by_the_deadline_it_was_given(run_module, tmp_path):
    with HostileServer(_trickle, tmp_path) as server:
        start = time.monotonic()
        result = run_module(k8s_fleet_nodes, {'kubeconfig': server.kubeconfig, 'request_timeout': 1, 'nodes': [
            {'host': host, 'name': host, 'labels': {'a': 'b'}, 'taint': 'npu.ascend/unvalidated=true:NoSchedule',
             'validated_label': 'npu.ascend/validated', 'wait_seconds': 0} for host in ('a', 'b')]})
        elapsed = time.monotonic() - start
    assert elapsed < 1 + SLACK
    for host in ('a', 'b'):
        assert result['hosts'][host]['failed'] is True
        assert 'GET /api/v1/nodes' in result['hosts'][host]['msg'] and 'within 1 s' in result['hosts'][host]['msg']


def test_a_validation_whose_pod_list_never_answers_ends_by_its_timeout(run_module, tmp_path):
    def answer(handler):
        if handler.command == 'GET' and handler.path.startswith('/api/v1/namespaces/v/pods'):
            return handler.silent()
        if handler.command == 'GET':
            return handler.send_json({'kind': 'Namespace', 'metadata': {'name': 'v'}})
        return handler.send_json({'kind': 'Pod', 'metadata': {'name': 'p', 'namespace': 'v'}}, 201)
    with HostileServer(answer, tmp_path) as server:
        start = time.monotonic()
        result = run_module(k8s_fleet_validate, {'kubeconfig': server.kubeconfig, 'request_timeout': 1, 'nodes': [{
            'host': 'a', 'name': 'a', 'pod': {'metadata': {'name': 'p', 'namespace': 'v'}}, 'resource': 'r',
            'validated_label': 'npu.ascend/validated', 'validated_value': '1',
            'taint': 'npu.ascend/unvalidated=true:NoSchedule', 'timeout_seconds': 1}]})
        elapsed = time.monotonic() - start
    assert result['hosts']['a']['failed'] is True
    assert 'GET /api/v1/namespaces/v/pods' in result['hosts']['a']['msg']
    assert elapsed < 1 + SLACK


@pytest.mark.parametrize('seconds', [0, -5])
def test_a_request_timeout_below_one_second_is_refused(run_module, seconds):
    result = run_module(k8s_fleet_nodes, {'request_timeout': seconds, 'nodes': []})
    assert result['failed'] and 'request_timeout' in result['msg'] and 'k8s_request_timeout' in result['msg']


def test_a_credential_plugin_that_never_returns_ends_at_the_deadline(tmp_path):
    # kubeconfig users with `exec` run a command for their token (aws eks get-token, gke-gcloud-auth-plugin);
    # the kubernetes client waits for it without a timeout.
    kubeconfig = tmp_path / 'exec-kubeconfig'
    kubeconfig.write_text(json.dumps({
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'c',
        'clusters': [{'name': 'c', 'cluster': {'server': 'http://127.0.0.1:9'}}],
        'contexts': [{'name': 'c', 'context': {'cluster': 'c', 'user': 'u'}}],
        'users': [{'name': 'u', 'user': {'exec': {'apiVersion': 'client.authentication.k8s.io/v1beta1',
                                                  'command': 'sleep', 'args': ['6']}}}]}))
    start = time.monotonic()
    with pytest.raises(ApiError) as raised:
        client.KubernetesApi(str(kubeconfig), None, request_timeout=1)
    assert time.monotonic() - start < 1 + SLACK
    assert raised.value.message.startswith('the kubeconfig cannot be used: its credentials (')
    assert 'within 1 s' in raised.value.message
