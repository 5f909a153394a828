# -*- coding: utf-8 -*-
"""An in-memory API server for module_utils/k8s/fleet.py: Nodes with resourceVersions and JSON merge
patches as the API server applies them (409 on a stale resourceVersion, 422 for a label or taint it
refuses), validation pods whose status the test scripts, and a clock that sleeping advances. Every request
is recorded. And HostileServer, a loopback HTTP API server for the real kubernetes client, answering in
any shape and at any pace."""

import copy
import string

from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet import ApiError


def node(name, labels=None, taints=None, version=1):
    obj = {'metadata': {'name': name, 'labels': dict(labels or {}), 'resourceVersion': str(version)}, 'spec': {}}
    if taints is not None:
        obj['spec']['taints'] = list(taints)
    return obj


def merge_patch(target, patch):
    """RFC 7386, as the API server applies application/merge-patch+json."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


_INNER = set(string.ascii_letters + string.digits + '-_.')
_DNS = set(string.ascii_lowercase + string.digits + '-.')


def _name_ok(text, limit=63):
    """Kubernetes' qualified-name part and label value, written out character by character
    (apimachinery validation.IsQualifiedName, IsValidLabelValue), not with the collection's regex."""
    if not text or len(text) > limit:
        return False
    return text[0].isascii() and text[0].isalnum() and text[-1].isascii() and text[-1].isalnum() and all(
        character in _INNER for character in text)


def label_refusal(key, value):
    """What the API server says of a label (its 422 reason), or None when it takes it."""
    if not isinstance(key, str):
        return 'key %r: not a string' % (key,)
    parts = key.split('/')
    if len(parts) > 2:
        return 'key %r: a qualified name has at most one "/"' % key
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or not set(prefix) <= _DNS or any(
                not part or not (part[0].isalnum() and part[-1].isalnum()) for part in prefix.split('.')):
            return 'key %r: prefix must be a DNS-1123 subdomain' % key
    if not _name_ok(parts[-1]):
        return 'key %r: name part must be 63 characters or less, alphanumeric at both ends' % key
    if value is None:
        return None
    if not isinstance(value, str):
        return 'value of %s: must be a string' % key
    if value and not _name_ok(value):
        return 'value %r of %s: must be 63 characters or less, alphanumeric at both ends' % (value, key)
    return None


def taint_refusal(taint):
    if not isinstance(taint, dict) or taint.get('effect') not in ('NoSchedule', 'PreferNoSchedule', 'NoExecute'):
        return 'taint %r: effect must be NoSchedule, PreferNoSchedule or NoExecute' % (taint,)
    return label_refusal(taint.get('key'), taint.get('value'))


class Clock(object):
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class FakeApi(object):
    def __init__(self, nodes=(), clock=None):
        self.nodes = dict((item['metadata']['name'], copy.deepcopy(item)) for item in nodes)
        self.version = 100
        self.calls = []
        self.clock = clock or Clock()
        # name -> time at which the Node registers
        self.joining = {}
        self.list_error = None
        # name -> number of writes by "another writer" just before our next patches (each causes a 409)
        self.races = {}
        # name -> ApiError raised by every patch
        self.refuse = {}
        # pods
        self.pods = {}
        # (namespace, name) -> list of (after seconds, status) for a pod created now
        self.pod_script = {}
        self.pod_logs = {}
        self.refuse_pod = {}
        self.namespaces = set()
        self.secrets = {}
        self.created = {}
        # How many of the next pod lists fail (the API server briefly away).
        self.pod_list_errors = 0

    def _bump(self, name):
        self.version += 1
        self.nodes[name]['metadata']['resourceVersion'] = str(self.version)

    def _register(self):
        for name, when in list(self.joining.items()):
            if self.clock() >= when:
                self.nodes[name] = node(name)
                del self.joining[name]

    def list_nodes(self):
        self.calls.append(('list_nodes',))
        if self.list_error:
            raise self.list_error
        self._register()
        return [copy.deepcopy(item) for item in self.nodes.values()]

    def get_node(self, name):
        self.calls.append(('get_node', name))
        self._register()
        return copy.deepcopy(self.nodes.get(name))

    def patch_node(self, name, patch):
        self.calls.append(('patch_node', name, copy.deepcopy(patch)))
        if name in self.refuse:
            raise self.refuse[name]
        if name not in self.nodes:
            raise ApiError('404 Not Found', 404)
        if self.races.get(name):
            self.races[name] -= 1
            # Another writer adds a taint of its own meanwhile.
            spec = self.nodes[name].setdefault('spec', {})
            spec['taints'] = list(spec.get('taints') or []) + [
                {'key': 'other/race-%d' % self.version, 'effect': 'NoSchedule'}]
            self._bump(name)
        # As the API server's validation: the whole patch is refused (422) for one bad label or taint.
        refusals = [label_refusal(key, value) for key, value in ((patch.get('metadata') or {}).get('labels') or {}).items()]
        refusals += [taint_refusal(taint) for taint in ((patch.get('spec') or {}).get('taints') or [])]
        refusals = [refusal for refusal in refusals if refusal]
        if refusals:
            raise ApiError('422 Unprocessable Entity: Node "%s" is invalid: %s' % (name, refusals[0]), 422)
        wanted = (patch.get('metadata') or {}).get('resourceVersion')
        if wanted is not None and wanted != self.nodes[name]['metadata']['resourceVersion']:
            raise ApiError('409 Conflict: the object has been modified', 409)
        patch = copy.deepcopy(patch)
        (patch.get('metadata') or {}).pop('resourceVersion', None)
        self.nodes[name] = merge_patch(self.nodes[name], patch)
        self._bump(name)
        return copy.deepcopy(self.nodes[name])

    # --- pods -------------------------------------------------------------------------------------------------------

    def ensure_namespace(self, name):
        self.calls.append(('ensure_namespace', name))
        self.namespaces.add(name)

    def apply_secret(self, secret):
        self.calls.append(('apply_secret', secret['metadata']['name']))
        self.secrets[(secret['metadata']['namespace'], secret['metadata']['name'])] = copy.deepcopy(secret)

    def _status(self, key):
        pod = self.pods[key]
        status = {'phase': 'Pending'}
        for after, scripted in self.pod_script.get(key, []):
            if self.clock() - self.created[key] >= after:
                status = scripted
        pod['status'] = copy.deepcopy(status)
        return pod

    def list_pods(self, namespace, label_selector):
        self.calls.append(('list_pods', namespace, label_selector))
        if self.pod_list_errors:
            self.pod_list_errors -= 1
            raise ApiError('HTTPSConnectionPool: Read timed out')
        return [copy.deepcopy(self._status(key)) for key in sorted(self.pods) if key[0] == namespace]

    def create_pod(self, pod):
        key = (pod['metadata']['namespace'], pod['metadata']['name'])
        self.calls.append(('create_pod',) + key)
        if key in self.refuse_pod:
            raise self.refuse_pod[key]
        if key in self.pods:
            raise ApiError('409 Conflict: pods "%s" already exists' % key[1], 409)
        self.pods[key] = copy.deepcopy(pod)
        self.created[key] = self.clock()
        return copy.deepcopy(pod)

    def delete_pod(self, namespace, name):
        self.calls.append(('delete_pod', namespace, name))
        if (namespace, name) not in self.pods:
            raise ApiError('404 Not Found', 404)
        del self.pods[(namespace, name)]

    def pod_log(self, namespace, name):
        self.calls.append(('pod_log', namespace, name))
        log = self.pod_logs.get((namespace, name))
        if isinstance(log, ApiError):
            raise log
        return log or ''

    def count(self, call):
        return len([item for item in self.calls if item[0] == call])


# --- a loopback API server for the real kubernetes client: answers of any shape and at any pace -----------------------

class HostileServer(object):
    """An HTTP server on loopback that answers each request with ``answer(handler)`` (``handler`` is the
    BaseHTTPRequestHandler, its JSON ``body`` decoded: ``send_json``, ``trickle`` and ``silent`` below), one
    thread per request, and a kubeconfig naming it (context ``hostile``); ``requests`` records (method, path,
    content type, body). ``with HostileServer(answer, tmp_path) as server: KubernetesApi(server.kubeconfig, None)``."""

    def __init__(self, answer, tmp_path):
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.stop = threading.Event()
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def send_json(self, body, status=200):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def trickle(self, every=0.1):
                """A 200 whose body never ends: one byte every ``every`` s (each read gets its byte in time)."""
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', '100000000')
                self.end_headers()
                self.wfile.write(b'{"kind": "NodeList", "items": [')
                while not outer.stop.wait(every):
                    try:
                        self.wfile.write(b' ')
                        self.wfile.flush()
                    except OSError:
                        return

            def silent(self):
                """Reads the request and never answers."""
                outer.stop.wait(600)

            def _any(self):
                length = int(self.headers.get('Content-Length') or 0)
                raw = self.rfile.read(length) if length else b''
                try:
                    self.body = json.loads(raw) if raw else None
                except ValueError:
                    self.body = raw
                outer.requests.append((self.command, self.path, self.headers.get('Content-Type'), self.body))
                answer(self)

            do_GET = do_POST = do_PATCH = do_DELETE = _any

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.kubeconfig = str(tmp_path / 'hostile-kubeconfig')
        with open(self.kubeconfig, 'w') as handle:
            json.dump({
                'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'hostile',
                'clusters': [{'name': 'hostile', 'cluster': {'server': 'http://127.0.0.1:%d' % self.server.server_port}}],
                'contexts': [{'name': 'hostile', 'context': {'cluster': 'hostile', 'user': 'hostile'}}],
                'users': [{'name': 'hostile', 'user': {'token': 'not-a-secret'}}]}, handle)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
