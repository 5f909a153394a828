# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The few Kubernetes API calls of the fleet modules (module_utils/k8s/fleet.py), over the kubernetes client.

Built from a kubeconfig and context as kubernetes.core's modules are (C(K8S_AUTH_KUBECONFIG) and
C(K8S_AUTH_CONTEXT) are the modules' fallbacks; no kubeconfig file: the in-cluster service account).
Objects go in and come out as plain dicts (the API server's JSON, camelCase keys): the raw answer
is decoded, not turned into the client's model classes, which for a list of a thousand Nodes costs
more than the request. Every request has one deadline for its whole answer (``request_timeout``
seconds, as ``kubectl --request-timeout`` gives), however slowly the API server sends it; every failure,
and an answer of another shape than a list where a list belongs, is an ``ApiError`` naming the request.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import threading

from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet import ApiError

try:
    from kubernetes import client as _client, config as _config
    from kubernetes.client.rest import ApiException as _ApiException
    from urllib3.exceptions import ReadTimeoutError as _ReadTimeoutError
    KUBERNETES_IMPORT_ERROR = None
except ImportError as error:  # pragma: no cover - depends on the controller's Python
    _client = _config = None
    _ApiException = Exception
    _ReadTimeoutError = ()  # matches nothing
    KUBERNETES_IMPORT_ERROR = error

MERGE_PATCH = 'application/merge-patch+json'
# The collection's name as the writer of what it creates (as the roles' server-side applies say), not a label domain.
FIELD_MANAGER = 'npu.ascend'
# Seconds each request may take in all, from the connection to the last byte of the answer (the modules'
# request_timeout): an API server that does not answer, or trickles its answer, is an error, not a hang.
REQUEST_TIMEOUT = 60
# Seconds to connect, within that deadline.
CONNECT_TIMEOUT = 10

# What each call asks, for the message of a request that failed or ran out of time.
_REQUESTS = {
    'list_node': 'the list of the cluster\'s Nodes (GET /api/v1/nodes)',
    'read_node': 'Node {0} (GET /api/v1/nodes/{0})',
    'patch_node': 'the patch of Node {0} (PATCH /api/v1/nodes/{0})',
    'read_namespace': 'Namespace {0} (GET /api/v1/namespaces/{0})',
    'create_namespace': 'the creation of a Namespace (POST /api/v1/namespaces)',
    'read_namespaced_secret': 'Secret {1}/{0} (GET /api/v1/namespaces/{1}/secrets/{0})',
    'create_namespaced_secret': 'the creation of a Secret in {0} (POST /api/v1/namespaces/{0}/secrets)',
    'patch_namespaced_secret': 'the patch of Secret {1}/{0} (PATCH /api/v1/namespaces/{1}/secrets/{0})',
    'list_namespaced_pod': 'the list of the pods in {0} (GET /api/v1/namespaces/{0}/pods)',
    'create_namespaced_pod': 'the creation of a pod in {0} (POST /api/v1/namespaces/{0}/pods)',
    'delete_namespaced_pod': 'the removal of pod {1}/{0} (DELETE /api/v1/namespaces/{1}/pods/{0})',
    'read_namespaced_pod_log': 'the log of pod {1}/{0} (GET /api/v1/namespaces/{1}/pods/{0}/log)',
}


def _request(method, args):
    return _REQUESTS.get(method, method).format(*[str(arg) for arg in args if isinstance(arg, str)] + ['', ''])


def _message(error, what):
    if isinstance(error, _ApiException) and getattr(error, 'status', None):
        detail = ''
        try:
            detail = json.loads(error.body).get('message', '')
        except (TypeError, ValueError, AttributeError):
            detail = (error.body or '') if isinstance(error.body, str) else ''
        detail = detail if isinstance(detail, str) else ''
        return ApiError('%s %s%s' % (error.status, error.reason, (': ' + detail) if detail else ''), error.status)
    return ApiError('%s: %s' % (what, ' '.join(str(error).split()) or type(error).__name__))


def _read_timed_out(error):
    """Whether ``error`` is urllib3's read timeout, alone or as the reason the client's retries gave up."""
    return isinstance(error, _ReadTimeoutError) or isinstance(getattr(error, 'reason', None), _ReadTimeoutError)


def _items(answer, what):
    """The ``items`` of a list answer; ApiError when the answer is no list of Kubernetes' shape."""
    items = answer.get('items') if isinstance(answer, dict) else None
    if isinstance(answer, dict) and items is None:
        return []
    if not isinstance(items, list):
        raise ApiError('the API server answered %s with %s, not the list of objects a Kubernetes API server gives'
                       % (what, 'items of type %s' % type(items).__name__ if isinstance(answer, dict)
                          else 'a JSON %s' % type(answer).__name__))
    return items


def _quantities_as_strings(pod):
    """``pod`` with its containers' resource quantities as strings (``1`` -> ``"1"``).

    The API server takes either, but the client's own model of a Pod (kubernetes 35 and later)
    refuses a number where a quantity belongs, before sending anything.
    """
    pod = dict(pod, spec=dict(pod.get('spec') or {}))
    containers = []
    for container in pod['spec'].get('containers') or []:
        container = dict(container)
        if isinstance(container.get('resources'), dict):
            container['resources'] = dict(
                (kind, dict((name, str(value)) for name, value in (amounts or {}).items()))
                for kind, amounts in container['resources'].items())
        containers.append(container)
    pod['spec']['containers'] = containers
    return pod


def _within(seconds, function):
    """``(done, outcome)``: ``function()`` run in a daemon thread for at most ``seconds``; ``outcome`` holds its
    ``value`` or ``error``, or, when it is not done, what it stored so far (``function`` gets the dict)."""
    outcome = {}

    def run():
        try:
            outcome['value'] = function(outcome)
        except Exception as error:  # pylint: disable=broad-except
            # The client raises its own errors and urllib3's (refused, timed out, TLS); each is a message.
            outcome['error'] = error

    worker = threading.Thread(target=run, name='npu.ascend kubernetes')
    worker.daemon = True
    worker.start()
    worker.join(seconds)
    return not worker.is_alive(), outcome


def _shut_down(response):
    """Ends the read of an answer another thread is still receiving (urllib3 2.3 and later), quietly."""
    try:
        response.shutdown()
    except Exception:  # pylint: disable=broad-except
        # No answer yet, or an older urllib3: the thread's read timeout ends it, and it is a daemon thread.
        pass


class KubernetesApi(object):
    """CoreV1 calls on plain dicts for k8s_fleet's functions; ``ApiError`` for every failure."""

    def __init__(self, kubeconfig=None, context=None, request_timeout=REQUEST_TIMEOUT):
        if _client is None:
            raise ApiError('the Python library kubernetes is missing on the controller (%s); install it in the '
                           'Python Ansible runs with (pip install kubernetes), as kubernetes.core needs it too'
                           % KUBERNETES_IMPORT_ERROR)
        self._timeout = float(request_timeout)

        def connect(_outcome):
            if kubeconfig or os.path.exists(os.path.expanduser(os.environ.get('KUBECONFIG', '~/.kube/config'))):
                return _config.new_client_from_config(config_file=kubeconfig, context=context or None)
            configuration = _client.Configuration()
            _config.load_incluster_config(client_configuration=configuration)
            return _client.ApiClient(configuration)

        # A kubeconfig user with `exec` runs a command for its token, which the client waits for without end.
        done, outcome = _within(self._timeout, connect)
        if not done:
            raise ApiError('the kubeconfig cannot be used: its credentials (an exec plugin\'s command, or a token '
                           'file) were not ready within %g s (the module\'s request_timeout, k8s_request_timeout in '
                           'the inventory)' % self._timeout)
        if 'error' in outcome:
            error = outcome['error']
            text = ' '.join(str(error).split()) or type(error).__name__
            if not isinstance(error, EnvironmentError) and type(error).__name__ != 'ConfigException':
                # The client's loader fails this way on a kubeconfig whose fields have another shape.
                text = ('its fields are not what a kubeconfig holds (%s: %s); `kubectl config view` with it shows '
                        'what is wrong' % (type(error).__name__, text))
            raise ApiError('the kubeconfig cannot be used: %s' % text)
        self._core = _client.CoreV1Api(outcome['value'])

    def _call(self, method, *args, **kwargs):
        """The answer's bytes, within the request's one deadline.

        urllib3's timeouts bound each read, not the answer: a server that sends a byte now and then holds
        a read for ever, and the client retries one that does not answer. So the request runs in a thread of
        its own, and one that is not done by the deadline is an ApiError; its connection is shut down when
        the answer had begun, else its own read timeout (the same deadline) ends it."""
        what = _request(method, args)
        kwargs.update(_preload_content=False, _request_timeout=(min(CONNECT_TIMEOUT, self._timeout), self._timeout))

        def request(outcome):
            outcome['response'] = getattr(self._core, method)(*args, **kwargs)
            return outcome['response'].data

        done, outcome = _within(self._timeout, request)
        # The request's own read timeout is the same deadline: on a busy controller it can end the request
        # before this thread looks, and that is the same lack of an answer.
        if not done or _read_timed_out(outcome.get('error')):
            _shut_down(outcome.get('response'))
            raise ApiError('%s got no complete answer within %g s, the deadline of each request (the module\'s '
                           'request_timeout, k8s_request_timeout in the inventory)%s'
                           % (what, self._timeout, '' if method.startswith(('list_', 'read_')) else
                              '; the write may still take effect, and the next run reads the object again'))
        if 'error' in outcome:
            raise _message(outcome['error'], what)
        return outcome['value']

    def _json(self, method, *args, **kwargs):
        data = self._call(method, *args, **kwargs)
        try:
            return json.loads(data)
        except ValueError as error:
            raise ApiError('the API server answered %s with something other than JSON: %s'
                           % (_request(method, args), error))

    def list_nodes(self):
        return _items(self._json('list_node'), _request('list_node', ()))

    def get_node(self, name):
        try:
            return self._json('read_node', name)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    def patch_node(self, name, patch):
        return self._json('patch_node', name, patch, _content_type=MERGE_PATCH, field_manager=FIELD_MANAGER)

    def ensure_namespace(self, name):
        try:
            self._call('read_namespace', name)
        except ApiError as error:
            if error.status != 404:
                raise
            self._json('create_namespace', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {
                'name': name, 'labels': {'app.kubernetes.io/managed-by': FIELD_MANAGER}}}, field_manager=FIELD_MANAGER)

    def apply_secret(self, secret):
        namespace, name = secret['metadata']['namespace'], secret['metadata']['name']
        try:
            current = self._json('read_namespaced_secret', name, namespace)
        except ApiError as error:
            if error.status != 404:
                raise
            self._json('create_namespaced_secret', namespace, secret, field_manager=FIELD_MANAGER)
            return True
        current = current if isinstance(current, dict) else {}
        if current.get('data') == secret.get('data') and current.get('type') == secret.get('type'):
            return False
        self._json('patch_namespaced_secret', name, namespace, {'data': secret.get('data')},
                   _content_type=MERGE_PATCH, field_manager=FIELD_MANAGER)
        return True

    def list_pods(self, namespace, label_selector):
        return _items(self._json('list_namespaced_pod', namespace, label_selector=label_selector),
                      _request('list_namespaced_pod', (namespace,)))

    def create_pod(self, pod):
        return self._json('create_namespaced_pod', pod['metadata']['namespace'], _quantities_as_strings(pod),
                          field_manager=FIELD_MANAGER)

    def delete_pod(self, namespace, name):
        self._call('delete_namespaced_pod', name, namespace)

    def pod_log(self, namespace, name):
        data = self._call('read_namespaced_pod_log', name, namespace)
        return data.decode('utf-8', 'replace') if isinstance(data, bytes) else str(data)
