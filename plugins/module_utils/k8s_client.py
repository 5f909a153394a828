# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The few Kubernetes API calls of the fleet modules (module_utils/k8s_fleet.py), over the kubernetes client.

Built from a kubeconfig and context as kubernetes.core's modules are (C(K8S_AUTH_KUBECONFIG) and
C(K8S_AUTH_CONTEXT) are the modules' fallbacks; no kubeconfig file: the in-cluster service account).
Objects go in and come out as plain dicts (the API server's JSON, camelCase keys): the raw answer
is decoded, not turned into the client's model classes, which for a list of a thousand Nodes costs
more than the request. Every request has a timeout; every failure is an ``ApiError``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.npu.ascend.plugins.module_utils.k8s_fleet import ApiError

try:
    from kubernetes import client as _client, config as _config
    from kubernetes.client.rest import ApiException as _ApiException
    from kubernetes.config.config_exception import ConfigException as _ConfigException
    KUBERNETES_IMPORT_ERROR = None
except ImportError as error:  # pragma: no cover - depends on the controller's Python
    _client = _config = None
    _ApiException = _ConfigException = Exception
    KUBERNETES_IMPORT_ERROR = error

MERGE_PATCH = 'application/merge-patch+json'
# The collection's name as the writer of what it creates (as the roles' server-side applies say), not a label domain.
FIELD_MANAGER = 'npu.ascend'
# (connect, read) seconds of every request: an API server that does not answer is an error, not a hang.
REQUEST_TIMEOUT = (10, 60)


def _message(error):
    if isinstance(error, _ApiException) and getattr(error, 'status', None):
        detail = ''
        try:
            detail = json.loads(error.body).get('message', '')
        except (TypeError, ValueError, AttributeError):
            detail = (error.body or '') if isinstance(error.body, str) else ''
        return ApiError('%s %s%s' % (error.status, error.reason, (': ' + detail) if detail else ''), error.status)
    return ApiError(' '.join(str(error).split()) or type(error).__name__)


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


class KubernetesApi(object):
    """CoreV1 calls on plain dicts for k8s_fleet's functions; ``ApiError`` for every failure."""

    def __init__(self, kubeconfig=None, context=None):
        if _client is None:
            raise ApiError('the Python library kubernetes is missing on the controller (%s); install it in the '
                           'Python Ansible runs with (pip install kubernetes), as kubernetes.core needs it too'
                           % KUBERNETES_IMPORT_ERROR)
        try:
            if kubeconfig or os.path.exists(os.path.expanduser(os.environ.get('KUBECONFIG', '~/.kube/config'))):
                api_client = _config.new_client_from_config(config_file=kubeconfig, context=context or None)
            else:
                configuration = _client.Configuration()
                _config.load_incluster_config(client_configuration=configuration)
                api_client = _client.ApiClient(configuration)
        except (_ConfigException, IOError, OSError, ValueError, TypeError) as error:
            raise ApiError('the kubeconfig cannot be used: %s' % ' '.join(str(error).split()))
        self._core = _client.CoreV1Api(api_client)

    def _call(self, method, *args, **kwargs):
        kwargs.update(_preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        try:
            response = getattr(self._core, method)(*args, **kwargs)
        except Exception as error:  # pylint: disable=broad-except
            # The client raises its own errors and urllib3's (refused, timed out, TLS); each is a message.
            raise _message(error)
        return response.data

    def _json(self, method, *args, **kwargs):
        data = self._call(method, *args, **kwargs)
        try:
            return json.loads(data)
        except ValueError as error:
            raise ApiError('the API server answered something other than JSON: %s' % error)

    def list_nodes(self):
        return self._json('list_node').get('items') or []

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
        if current.get('data') == secret.get('data') and current.get('type') == secret.get('type'):
            return False
        self._json('patch_namespaced_secret', name, namespace, {'data': secret.get('data')},
                   _content_type=MERGE_PATCH, field_manager=FIELD_MANAGER)
        return True

    def list_pods(self, namespace, label_selector):
        return self._json('list_namespaced_pod', namespace, label_selector=label_selector).get('items') or []

    def create_pod(self, pod):
        return self._json('create_namespaced_pod', pod['metadata']['namespace'], _quantities_as_strings(pod),
                          field_manager=FIELD_MANAGER)

    def delete_pod(self, namespace, name):
        self._call('delete_namespaced_pod', name, namespace)

    def pod_log(self, namespace, name):
        data = self._call('read_namespaced_pod_log', name, namespace)
        return data.decode('utf-8', 'replace') if isinstance(data, bytes) else str(data)
