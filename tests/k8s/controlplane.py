# -*- coding: utf-8 -*-
"""A throw-away Kubernetes control plane on loopback, for the tests.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as local processes with
TLS on every connection and RBAC on; kwok stands in for the kubelets of the sandbox nodes. One
Node object is created per inventory host, carrying the NPU capacity that Huawei's device plugin
would publish on a real server (its image cannot run here).

Command line (run with the project's venv python):

    python tests/k8s/controlplane.py up --state-dir DIR --nodes-from-inventory inventories/sandbox
    python tests/k8s/controlplane.py up --state-dir DIR --node ack-01:aliyun.com/npu=4
    python tests/k8s/controlplane.py status --state-dir DIR
    eval "$(python tests/k8s/controlplane.py env --state-dir DIR)"
    python tests/k8s/controlplane.py down --state-dir DIR

From Python (pytest fixtures)::

    with ControlPlane(state_dir, nodes) as control_plane:
        control_plane.request('GET', '/api/v1/nodes')

The binaries come from tests/k8s/build.sh, which `up` runs first (a no-op once they are cached).
"""

import argparse
import base64
import contextlib
import dataclasses
import json
import os
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
BUILD_SCRIPT = HERE / 'build.sh'
DEFAULT_STATE_DIR = REPO_ROOT / '.cache' / 'k8s' / 'controlplane'

CONTEXT_NAME = 'npu-ascend-test'
# Components in start order; `down` stops them in reverse.
COMPONENTS = ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok')
# Started last, on request: publishes the sandbox nodes' NPUs from npu-smi (device_plugin_standin.py).
STANDIN = 'device-plugin-standin'
STANDIN_SCRIPT = HERE / 'device_plugin_standin.py'
# kwok manages only the nodes that carry this annotation, so a node created some other way (or
# by a role under test) is left alone.
KWOK_NODE_ANNOTATION = ('kwok.x-k8s.io/node', 'fake')
# The cluster's Service IP range: an allocation range only, nothing is ever routed to it.
SERVICE_CLUSTER_IP_RANGE = '10.96.0.0/24'
SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local'
# A bigger history than the tests make, small enough that a runaway test cannot eat the disk.
ETCD_QUOTA_BACKEND_BYTES = 256 * 1024 * 1024

# What a node offers besides NPUs when the inventory says nothing: a typical Atlas server.
DEFAULT_CPU = '64'
DEFAULT_MEMORY = '256Gi'
DEFAULT_PODS = '110'

# `uname -m` (the sandbox inventory's sandbox_arch) -> the kubernetes.io/arch label value.
KUBERNETES_ARCH = {'x86_64': 'amd64', 'amd64': 'amd64', 'aarch64': 'arm64', 'arm64': 'arm64'}

STARTUP_TIMEOUT_SECONDS = 180
# The API server's client identity towards the kubelets (pod logs, exec).
KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client'
# The data is thrown away, so a component slow to shut down gracefully is simply killed.
STOP_TIMEOUT_SECONDS = 10


class ControlPlaneError(RuntimeError):
    """The control plane could not be started, reached or stopped."""


@dataclasses.dataclass
class NodeSpec:
    """One Node object: what a kubelet plus Huawei's device plugin would register."""

    name: str
    arch: str = 'amd64'
    npu_resources: dict = dataclasses.field(default_factory=dict)
    chip_name: str = ''

    def capacity(self):
        capacity = {'cpu': DEFAULT_CPU, 'memory': DEFAULT_MEMORY, 'pods': DEFAULT_PODS}
        capacity.update({resource: str(count) for resource, count in self.npu_resources.items()})
        return capacity

    def labels(self):
        labels = {
            'kubernetes.io/hostname': self.name,
            'kubernetes.io/arch': self.arch,
            'kubernetes.io/os': 'linux',
        }
        if self.chip_name:
            # The device plugin labels its node with the chip it found (facts reference, section 9).
            labels['node.kubernetes.io/npu.chip.name'] = self.chip_name
        return labels


# ---------------------------------------------------------------------------------------------
# Nodes: from an inventory and from command-line overrides


def device_plugin_resource(chip_name):
    """The extended resource Huawei's device plugin publishes for a chip (facts reference, 9)."""
    chip = chip_name.strip().upper()
    if chip.startswith('910'):  # 910, 910B (legacy), 910B1-B4 (A2), 910_93xx (A3)
        return 'huawei.com/Ascend910'
    if chip.startswith('310P'):
        return 'huawei.com/Ascend310P'
    if chip == '310':
        return 'huawei.com/Ascend310'
    if chip.startswith('950'):
        return 'huawei.com/npu'
    raise ValueError(
        'no device plugin resource is known for chip %r: give the node one with '
        '--node NAME:RESOURCE=COUNT' % chip_name)


def _load_yaml_file(path):
    with open(path, encoding='utf-8') as stream:
        return yaml.safe_load(stream) or {}


def _load_vars(vars_dir, name):
    """group_vars/<name> or host_vars/<name>: a YAML file, or a directory of YAML files."""
    merged = {}
    for suffix in ('', '.yml', '.yaml'):
        candidate = vars_dir / (name + suffix)
        if candidate.is_file() and suffix:
            merged.update(_load_yaml_file(candidate))
        elif candidate.is_dir() and not suffix:
            for part in sorted(candidate.iterdir()):
                if part.suffix in ('.yml', '.yaml') and part.is_file():
                    merged.update(_load_yaml_file(part))
    return merged


def _walk_inventory_group(group_name, group, ancestry, hosts):
    """Record, for each host, its inline vars and the groups it is in (root first)."""
    group = group or {}
    lineage = ancestry + [group_name]
    for host_name, host_vars in (group.get('hosts') or {}).items():
        entry = hosts.setdefault(host_name, {'groups': [], 'vars': {}})
        for member_of in lineage:
            if member_of not in entry['groups']:
                entry['groups'].append(member_of)
        entry['vars'].update(host_vars or {})
    for child_name, child in (group.get('children') or {}).items():
        _walk_inventory_group(child_name, child, lineage, hosts)


def inventory_host_vars(inventory):
    """{host: vars} for a YAML inventory file or directory, with Ansible's precedence for the
    sources read here: group_vars/all < parent groups < child groups < inline < host_vars.

    Only literal values are meaningful to the caller; Jinja templates are left unrendered.
    """
    inventory = Path(inventory)
    if inventory.is_dir():
        inventory_dir = inventory
        sources = sorted(path for path in inventory.iterdir()
                         if path.is_file() and path.suffix in ('.yml', '.yaml'))
    else:
        inventory_dir = inventory.parent
        sources = [inventory]
    if not sources:
        raise ValueError('no YAML inventory file in %s' % inventory)
    hosts = {}
    group_vars = {}
    for source in sources:
        for group_name, group in _load_yaml_file(source).items():
            _walk_inventory_group(group_name, group, [], hosts)
    result = {}
    for host_name, entry in hosts.items():
        merged = {}
        groups = ['all'] + [group for group in entry['groups'] if group != 'all']
        for group in groups:
            if group not in group_vars:
                group_vars[group] = _load_vars(inventory_dir / 'group_vars', group)
            merged.update(group_vars[group])
        merged.update(entry['vars'])
        merged.update(_load_vars(inventory_dir / 'host_vars', host_name))
        result[host_name] = merged
    return result


def node_from_host_vars(host_name, host_vars):
    """The Node a sandbox host registers: arch from sandbox_arch, NPUs from sandbox_chip_name,
    sandbox_npu_count and sandbox_chips_per_npu (the device plugin counts chips)."""
    arch_name = str(host_vars.get('sandbox_arch', 'x86_64'))
    if arch_name not in KUBERNETES_ARCH:
        raise ValueError('%s: unknown sandbox_arch %r' % (host_name, arch_name))
    node = NodeSpec(name=host_name, arch=KUBERNETES_ARCH[arch_name])
    chip_name = host_vars.get('sandbox_chip_name')
    if chip_name:
        chips = int(host_vars.get('sandbox_npu_count', 1)) * int(host_vars.get('sandbox_chips_per_npu', 1))
        node.chip_name = str(chip_name)
        node.npu_resources = {device_plugin_resource(str(chip_name)): chips}
    return node


def nodes_from_inventory(inventory):
    return [node_from_host_vars(host, host_vars)
            for host, host_vars in sorted(inventory_host_vars(inventory).items())]


def parse_node_override(text):
    """NAME[:RESOURCE=COUNT[,RESOURCE=COUNT...]] -> (name, {resource: count}).

    An empty resource list means a node without NPUs.
    """
    name, _separator, resources_text = text.partition(':')
    if not name:
        raise ValueError('node override %r has no node name' % text)
    resources = {}
    for item in filter(None, resources_text.split(',')):
        resource, separator, count = item.partition('=')
        if not separator or '/' not in resource or not count.isdigit():
            raise ValueError('node override %r: expected RESOURCE=COUNT such as '
                             'huawei.com/Ascend910=8 or aliyun.com/npu=4, got %r' % (text, item))
        resources[resource] = int(count)
    return name, resources


def apply_node_overrides(nodes, overrides):
    """Replace the NPU resources of the named nodes; add the nodes that are not there yet."""
    by_name = {node.name: node for node in nodes}
    result = list(nodes)
    for text in overrides:
        name, resources = parse_node_override(text)
        if name in by_name:
            by_name[name].npu_resources = resources
            if not any(resource.startswith('huawei.com/') for resource in resources):
                # No Huawei device plugin on this node, so nothing writes its chip label.
                by_name[name].chip_name = ''
        else:
            node = NodeSpec(name=name, npu_resources=resources)
            by_name[name] = node
            result.append(node)
    return result


# ---------------------------------------------------------------------------------------------
# Certificates and kubeconfigs


def _run(argv, **kwargs):
    env = dict(os.environ, LC_ALL='C')
    return subprocess.run(argv, check=True, env=env, **kwargs)


def _openssl_key(key_path):
    _run(['openssl', 'genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
          '-out', str(key_path)], stdout=subprocess.DEVNULL)
    key_path.chmod(0o600)


class PublicKeyInfrastructure:
    """A private CA and the certificates every component needs, made with openssl."""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.ca_cert = self.directory / 'ca.crt'
        self.ca_key = self.directory / 'ca.key'

    def create_ca(self):
        self.directory.mkdir(parents=True, exist_ok=True)
        _openssl_key(self.ca_key)
        _run(['openssl', 'req', '-x509', '-new', '-key', str(self.ca_key), '-sha256', '-days', '30',
              '-subj', '/CN=npu-ascend-test-ca',
              '-addext', 'basicConstraints=critical,CA:TRUE',
              '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
              '-out', str(self.ca_cert)])

    def issue(self, name, common_name, organization=None, server_names=(), server=False):
        """Sign NAME.crt/NAME.key. Client certs carry the identity in CN (user) and O (group)."""
        key = self.directory / (name + '.key')
        csr = self.directory / (name + '.csr')
        cert = self.directory / (name + '.crt')
        extensions = self.directory / (name + '.ext')
        _openssl_key(key)
        subject = ('/O=%s' % organization if organization else '') + '/CN=%s' % common_name
        _run(['openssl', 'req', '-new', '-key', str(key), '-subj', subject, '-out', str(csr)])
        lines = ['basicConstraints=critical,CA:FALSE',
                 'keyUsage=critical,digitalSignature,keyEncipherment',
                 'extendedKeyUsage=%s' % ('serverAuth,clientAuth' if server else 'clientAuth')]
        if server_names:
            lines.append('subjectAltName=' + ','.join(
                ('IP:' if _is_ip_address(entry) else 'DNS:') + entry for entry in server_names))
        extensions.write_text('\n'.join(lines) + '\n', encoding='utf-8')
        _run(['openssl', 'x509', '-req', '-in', str(csr), '-CA', str(self.ca_cert),
              '-CAkey', str(self.ca_key), '-set_serial', '0x%s' % os.urandom(12).hex(),
              '-sha256', '-days', '30', '-extfile', str(extensions), '-out', str(cert)],
             stderr=subprocess.DEVNULL)
        csr.unlink()
        extensions.unlink()
        return cert, key

    def create_service_account_keys(self):
        private_key = self.directory / 'service-account.key'
        public_key = self.directory / 'service-account.pub'
        _openssl_key(private_key)
        _run(['openssl', 'pkey', '-in', str(private_key), '-pubout', '-out', str(public_key)])
        return private_key, public_key


def _is_ip_address(text):
    try:
        socket.inet_pton(socket.AF_INET6 if ':' in text else socket.AF_INET, text)
    except OSError:
        return False
    return True


def write_kubeconfig(path, server, ca_cert, client_cert, client_key, user):
    config = {
        'apiVersion': 'v1',
        'kind': 'Config',
        'clusters': [{'name': CONTEXT_NAME, 'cluster': {
            'server': server, 'certificate-authority': str(ca_cert)}}],
        'users': [{'name': user, 'user': {
            'client-certificate': str(client_cert), 'client-key': str(client_key)}}],
        'contexts': [{'name': CONTEXT_NAME, 'context': {'cluster': CONTEXT_NAME, 'user': user}}],
        'current-context': CONTEXT_NAME,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding='utf-8')
    path.chmod(0o600)


# ---------------------------------------------------------------------------------------------
# Processes


def free_loopback_ports(count):
    """COUNT distinct ports nothing listens on now; held together so none is handed out twice."""
    sockets = []
    try:
        for _port_number in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(('127.0.0.1', 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(('127.0.0.1', port))
        except OSError:
            return False
    return True


def process_start_time(pid):
    """Field 22 of /proc/PID/stat, or None: tells a recycled pid from the process we started."""
    try:
        with open('/proc/%d/stat' % pid, encoding='ascii', errors='replace') as stream:
            stat = stream.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; fields after it are plain.
    fields_after_name = stat.rsplit(')', 1)[1].split()
    if fields_after_name[0] == 'Z':
        return None
    return fields_after_name[19]


def build_binaries():
    """Run build.sh (a no-op once cached) and return what it reports: {NAME: path or version}."""
    _run(['bash', str(BUILD_SCRIPT)], stdout=sys.stderr)
    output = _run(['bash', str(BUILD_SCRIPT), '--paths'], stdout=subprocess.PIPE,
                  universal_newlines=True).stdout
    return dict(line.split('=', 1) for line in output.splitlines() if '=' in line)


class ControlPlane:
    """A control plane whose files all live under STATE_DIR.

    Layout: pki/ (CA, certificates, service account keys), data/ (etcd), config/ (component
    kubeconfigs, kwok stages), logs/<component>.log, pids/<component>.pid ("PID STARTTIME"),
    state.json (ports, nodes, binaries) and kubeconfig (the admin's, context npu-ascend-test).
    """

    def __init__(self, state_dir=DEFAULT_STATE_DIR, nodes=(), apiserver_port=None, binaries=None,
                 device_plugin_standin=False, kubelet_nodes=(), external_address=None):
        self.state_dir = Path(state_dir).resolve()
        # Nodes whose real kubelet registers them (see kubelet_credentials); not created here.
        self.kubelet_nodes = sorted(set(kubelet_nodes))
        self.nodes = [node for node in nodes if node.name not in self.kubelet_nodes]
        # The address the kubelets reach the API server at (the sandbox network's gateway).
        self.external_address = external_address
        if self.kubelet_nodes and not external_address:
            raise ControlPlaneError('real kubelets need --external-address: the address their '
                                    'nodes reach this machine at (e.g. the podman network gateway)')
        self.device_plugin_standin = device_plugin_standin
        self.requested_apiserver_port = apiserver_port
        self.binaries = binaries
        self.pki = PublicKeyInfrastructure(self.state_dir / 'pki')
        # The aggregation layer's CA must differ from the client CA: a certificate from it is
        # trusted to assert any user in request headers.
        self.front_proxy_pki = PublicKeyInfrastructure(self.state_dir / 'pki' / 'front-proxy')
        self.kubeconfig = self.state_dir / 'kubeconfig'
        self.logs_dir = self.state_dir / 'logs'
        self.pids_dir = self.state_dir / 'pids'
        self.config_dir = self.state_dir / 'config'
        self.state_file = self.state_dir / 'state.json'
        self._children = {}
        self._ssl_context = None
        self.state = {}

    # -- public API -------------------------------------------------------------------------

    def __enter__(self):
        self.up()
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.down(keep_logs=exc_type is not None)

    @property
    def server(self):
        return 'https://127.0.0.1:%d' % self.state['ports']['apiserver']

    def up(self):
        """Start everything and wait until it is usable. False when it was already running."""
        if self._load_state() and self.is_healthy():
            print('controlplane: already running in %s (%s)' % (self.state_dir, self.server),
                  file=sys.stderr)
            return False
        # Whatever a crashed or half-stopped earlier run left behind goes first.
        self._stop_recorded_processes()
        self._remove_state(keep_logs=False)
        try:
            self._start()
        except BaseException:
            self.down(keep_logs=True)
            raise
        return True

    def down(self, keep_logs=False):
        """Stop every component and remove the state directory (logs kept when asked)."""
        self._load_state()
        self._stop_recorded_processes()
        self._remove_state(keep_logs=keep_logs)

    def status(self):
        """{component: 'running' | 'stopped'} plus 'apiserver': 'ready' | 'not ready'."""
        self._load_state()
        result = {}
        for component in self.components():
            result[component] = 'running' if self._recorded_pid(component) else 'stopped'
        result['apiserver'] = 'ready' if self.state and self._apiserver_ready() else 'not ready'
        return result

    def is_healthy(self):
        return (all(self._recorded_pid(component) for component in self.components())
                and self._apiserver_ready())

    def components(self):
        """The components this control plane runs, in start order."""
        return tuple(self.state.get('components', COMPONENTS))

    def environment(self):
        """Shell variables a caller needs: the kubeconfig and the cached tool paths."""
        self._load_state()
        if not self.state:
            raise ControlPlaneError('no control plane in %s' % self.state_dir)
        variables = {'KUBECONFIG': str(self.kubeconfig), 'K8S_AUTH_KUBECONFIG': str(self.kubeconfig),
                     'K8S_TEST_APISERVER': self.server}
        for name, value in sorted(self.state['binaries'].items()):
            variables['K8S_TEST_' + name] = value
        return variables

    def request(self, method, path, body=None, token=None, content_type='application/json'):
        """(HTTP status, decoded JSON body) of one API call.

        With TOKEN the call authenticates as that bearer token and sends no client certificate;
        otherwise it is the admin (system:masters).
        """
        headers = {'Accept': 'application/json'}
        data = None
        if body is not None:
            data = json.dumps(body).encode('utf-8')
            headers['Content-Type'] = content_type
        if token:
            headers['Authorization'] = 'Bearer ' + token
            context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        else:
            context = self._admin_ssl_context()
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        try:
            decoded = json.loads(payload) if payload else None
        except ValueError:
            decoded = payload.decode('utf-8', 'replace')
        return status, decoded

    def check(self, method, path, body=None, expected=(200, 201), **kwargs):
        status, decoded = self.request(method, path, body, **kwargs)
        if status not in expected:
            raise ControlPlaneError('%s %s: HTTP %s: %s' % (method, path, status, decoded))
        return decoded

    # -- start-up ---------------------------------------------------------------------------

    def _start(self):
        started = time.monotonic()
        binaries = self.binaries or build_binaries()
        for directory in (self.logs_dir, self.pids_dir, self.config_dir, self.state_dir / 'data'):
            directory.mkdir(parents=True, exist_ok=True)
        apiserver_port = self.requested_apiserver_port
        if apiserver_port and not port_is_free(apiserver_port):
            raise ControlPlaneError('port %d on 127.0.0.1 is in use' % apiserver_port)
        ports = dict(zip(('etcd_client', 'etcd_peer', 'apiserver', 'controller_manager',
                          'scheduler', 'kwok'), free_loopback_ports(6)))
        if apiserver_port:
            ports['apiserver'] = apiserver_port
        # Written first, so that `down` finds the ports and binaries of a start that fails.
        self.state = {'ports': ports, 'binaries': binaries,
                      'components': COMPONENTS + ((STANDIN,) if self.device_plugin_standin else ()),
                      'nodes': [dataclasses.asdict(node) for node in self.nodes],
                      'kubelet_nodes': self.kubelet_nodes, 'external_address': self.external_address}
        self._save_state()
        self._create_pki()
        self._start_etcd()
        self._start_apiserver()
        self._start_controller_manager()
        self._start_scheduler()
        self._start_kwok()
        for node in self.nodes:
            self._register_node(node)
        self._wait_for('kube-controller-manager /healthz',
                       lambda: self._component_healthy(ports['controller_manager']))
        self._wait_for('kube-scheduler /healthz', lambda: self._component_healthy(ports['scheduler']))
        self._wait_for('kwok /healthz', lambda: self._plain_healthz(ports['kwok']))
        for node in self.nodes:
            self._wait_for('node %s Ready and schedulable' % node.name,
                           lambda node=node: self._node_schedulable(node))
        self._wait_for('the default ServiceAccount', lambda: self.request(
            'GET', '/api/v1/namespaces/default/serviceaccounts/default')[0] == 200)
        if self.kubelet_nodes:
            self._grant_kubelet_api()
        # Last: from now on a node shows NPUs only while its device plugin pod runs.
        if self.device_plugin_standin:
            self._spawn(STANDIN, [sys.executable, str(STANDIN_SCRIPT), '--state-dir', str(self.state_dir)])
        print('controlplane: up in %.1fs at %s; KUBECONFIG=%s' % (
            time.monotonic() - started, self.server, self.kubeconfig), file=sys.stderr)

    def _create_pki(self):
        pki = self.pki
        pki.create_ca()
        loopback = ('127.0.0.1', 'localhost')
        pki.issue('etcd-server', 'etcd', server_names=loopback, server=True)
        pki.issue('apiserver-etcd-client', 'kube-apiserver-etcd-client')
        # The in-cluster names and the first Service IP are what pods would use to reach it.
        external = (self.external_address,) if self.external_address else ()
        pki.issue('apiserver', 'kube-apiserver', server=True, server_names=loopback + external + (
            '10.96.0.1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc',
            'kubernetes.default.svc.cluster.local'))
        # The API server's identity towards the kubelets (logs, exec): bound to
        # system:kubelet-api-admin once the API server runs.
        pki.issue('apiserver-kubelet-client', KUBELET_CLIENT_USER)
        for name in self.kubelet_nodes:
            self._issue_kubelet_credentials(name)
        pki.issue('admin', 'npu-ascend-admin', organization='system:masters')
        pki.issue('controller-manager', 'system:kube-controller-manager')
        pki.issue('controller-manager-serving', 'kube-controller-manager', server_names=loopback,
                  server=True)
        pki.issue('scheduler', 'system:kube-scheduler')
        pki.issue('scheduler-serving', 'kube-scheduler', server_names=loopback, server=True)
        # kwok does the work of every kubelet at once (all nodes, their leases and pods); the
        # Node authorizer grants a kubelet only its own node, so kwok gets cluster-admin.
        pki.issue('kwok', 'kwok-controller', organization='system:masters')
        pki.create_service_account_keys()
        self.front_proxy_pki.create_ca()
        self.front_proxy_pki.issue('front-proxy-client', 'front-proxy-client')
        for name, user in (('admin', 'npu-ascend-admin'),
                           ('controller-manager', 'system:kube-controller-manager'),
                           ('scheduler', 'system:kube-scheduler'), ('kwok', 'kwok-controller')):
            path = self.kubeconfig if name == 'admin' else self.config_dir / (name + '.kubeconfig')
            write_kubeconfig(path, self.server, pki.ca_cert, pki.directory / (name + '.crt'),
                             pki.directory / (name + '.key'), user)

    def _issue_kubelet_credentials(self, name):
        """kubelets/NAME/kubeconfig: the node's own identity (system:node:NAME in system:nodes, so
        the Node authorizer and NodeRestriction apply), self-contained for copying into the node."""
        cert, key = self.pki.issue('kubelet-' + name, 'system:node:' + name, organization='system:nodes')
        directory = self.kubelet_credentials(name)
        directory.mkdir(parents=True, exist_ok=True)
        user = 'system:node:' + name
        config = {
            'apiVersion': 'v1', 'kind': 'Config',
            'clusters': [{'name': CONTEXT_NAME, 'cluster': {
                'server': 'https://%s:%d' % (self.external_address, self.state['ports']['apiserver']),
                'certificate-authority-data': _base64_file(self.pki.ca_cert)}}],
            'users': [{'name': user, 'user': {'client-certificate-data': _base64_file(cert),
                                              'client-key-data': _base64_file(key)}}],
            'contexts': [{'name': CONTEXT_NAME, 'context': {'cluster': CONTEXT_NAME, 'user': user}}],
            'current-context': CONTEXT_NAME,
        }
        kubeconfig = directory / 'kubeconfig'
        kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False), encoding='utf-8')
        kubeconfig.chmod(0o600)
        shutil.copyfile(self.pki.ca_cert, directory / 'ca.crt')

    def kubelet_credentials(self, name):
        """The directory holding NAME's kubelet kubeconfig and the cluster CA (its client CA)."""
        return self.state_dir / 'kubelets' / name

    def _grant_kubelet_api(self):
        self.check('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
            'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding',
            'metadata': {'name': 'npu-ascend-test:apiserver-kubelet-client'},
            'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole',
                        'name': 'system:kubelet-api-admin'},
            'subjects': [{'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'User',
                          'name': KUBELET_CLIENT_USER}]})

    def _start_etcd(self):
        ports, pki = self.state['ports'], self.pki.directory
        client_url = 'https://127.0.0.1:%d' % ports['etcd_client']
        peer_url = 'https://127.0.0.1:%d' % ports['etcd_peer']
        self._spawn('etcd', [
            self.state['binaries']['ETCD'],
            '--name=npu-ascend-test',
            '--data-dir=%s' % (self.state_dir / 'data' / 'etcd'),
            '--listen-client-urls=' + client_url, '--advertise-client-urls=' + client_url,
            '--listen-peer-urls=' + peer_url, '--initial-advertise-peer-urls=' + peer_url,
            '--initial-cluster=npu-ascend-test=' + peer_url, '--initial-cluster-state=new',
            '--cert-file=%s/etcd-server.crt' % pki, '--key-file=%s/etcd-server.key' % pki,
            '--trusted-ca-file=%s' % self.pki.ca_cert, '--client-cert-auth=true',
            '--peer-cert-file=%s/etcd-server.crt' % pki, '--peer-key-file=%s/etcd-server.key' % pki,
            '--peer-trusted-ca-file=%s' % self.pki.ca_cert, '--peer-client-cert-auth=true',
            '--quota-backend-bytes=%d' % ETCD_QUOTA_BACKEND_BYTES,
            '--auto-compaction-mode=periodic', '--auto-compaction-retention=5m',
            '--snapshot-count=5000',
            # The data is thrown away after the run: durability is not worth an fsync per write.
            '--unsafe-no-fsync=true',
            '--log-level=warn',
        ])
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        context.load_cert_chain(str(pki / 'apiserver-etcd-client.crt'),
                                str(pki / 'apiserver-etcd-client.key'))

        def etcd_healthy():
            body = _https_get(client_url + '/health', context)
            return body is not None and json.loads(body).get('health') == 'true'

        self._wait_for('etcd /health', etcd_healthy)

    def _start_apiserver(self):
        ports, pki = self.state['ports'], self.pki.directory
        self._spawn('kube-apiserver', [
            self.state['binaries']['KUBE_APISERVER'],
            # Real kubelets in the sandbox nodes reach it over the sandbox network.
            '--bind-address=%s' % ('0.0.0.0' if self.external_address else '127.0.0.1'),
            '--advertise-address=127.0.0.1',
            '--secure-port=%d' % ports['apiserver'],
            '--kubelet-client-certificate=%s/apiserver-kubelet-client.crt' % pki,
            '--kubelet-client-key=%s/apiserver-kubelet-client.key' % pki,
            '--kubelet-preferred-address-types=InternalIP',
            '--etcd-servers=https://127.0.0.1:%d' % ports['etcd_client'],
            '--etcd-cafile=%s' % self.pki.ca_cert,
            '--etcd-certfile=%s/apiserver-etcd-client.crt' % pki,
            '--etcd-keyfile=%s/apiserver-etcd-client.key' % pki,
            '--tls-cert-file=%s/apiserver.crt' % pki, '--tls-private-key-file=%s/apiserver.key' % pki,
            '--client-ca-file=%s' % self.pki.ca_cert,
            # Published in kube-system/extension-apiserver-authentication, where the controller
            # manager and scheduler look for it when they authenticate their own callers.
            '--requestheader-client-ca-file=%s' % self.front_proxy_pki.ca_cert,
            '--requestheader-allowed-names=front-proxy-client',
            '--requestheader-username-headers=X-Remote-User',
            '--requestheader-group-headers=X-Remote-Group',
            '--requestheader-extra-headers-prefix=X-Remote-Extra-',
            '--proxy-client-cert-file=%s' % (self.front_proxy_pki.directory / 'front-proxy-client.crt'),
            '--proxy-client-key-file=%s' % (self.front_proxy_pki.directory / 'front-proxy-client.key'),
            '--authorization-mode=Node,RBAC',
            '--enable-admission-plugins=NodeRestriction',
            '--service-account-issuer=' + SERVICE_ACCOUNT_ISSUER,
            '--service-account-key-file=%s/service-account.pub' % pki,
            '--service-account-signing-key-file=%s/service-account.key' % pki,
            '--service-cluster-ip-range=' + SERVICE_CLUSTER_IP_RANGE,
            # The `kubernetes` Service would point at 127.0.0.1, which Endpoint validation
            # rejects; nothing in the tests reaches the apiserver through that Service.
            '--endpoint-reconciler-type=none',
            '--allow-privileged=true',
            '--event-ttl=15m',
            '--profiling=false',
        ])
        self._wait_for('kube-apiserver /readyz', self._apiserver_ready)

    def _start_controller_manager(self):
        ports, pki = self.state['ports'], self.pki.directory
        kubeconfig = self.config_dir / 'controller-manager.kubeconfig'
        self._spawn('kube-controller-manager', [
            self.state['binaries']['KUBE_CONTROLLER_MANAGER'],
            '--kubeconfig=%s' % kubeconfig,
            '--authentication-kubeconfig=%s' % kubeconfig,
            '--authorization-kubeconfig=%s' % kubeconfig,
            '--bind-address=127.0.0.1', '--secure-port=%d' % ports['controller_manager'],
            '--tls-cert-file=%s/controller-manager-serving.crt' % pki,
            '--tls-private-key-file=%s/controller-manager-serving.key' % pki,
            '--client-ca-file=%s' % self.pki.ca_cert,
            '--root-ca-file=%s' % self.pki.ca_cert,
            '--service-account-private-key-file=%s/service-account.key' % pki,
            # Each controller acts under its own ServiceAccount, so RBAC sees what it does.
            '--use-service-account-credentials=true',
            '--cluster-signing-cert-file=%s' % self.pki.ca_cert,
            '--cluster-signing-key-file=%s' % self.pki.ca_key,
            '--service-cluster-ip-range=' + SERVICE_CLUSTER_IP_RANGE,
            '--leader-elect=false',
            '--profiling=false',
        ])

    def _start_scheduler(self):
        ports, pki = self.state['ports'], self.pki.directory
        kubeconfig = self.config_dir / 'scheduler.kubeconfig'
        self._spawn('kube-scheduler', [
            self.state['binaries']['KUBE_SCHEDULER'],
            '--kubeconfig=%s' % kubeconfig,
            '--authentication-kubeconfig=%s' % kubeconfig,
            '--authorization-kubeconfig=%s' % kubeconfig,
            '--bind-address=127.0.0.1', '--secure-port=%d' % ports['scheduler'],
            '--tls-cert-file=%s/scheduler-serving.crt' % pki,
            '--tls-private-key-file=%s/scheduler-serving.key' % pki,
            '--client-ca-file=%s' % self.pki.ca_cert,
            '--leader-elect=false',
            '--profiling=false',
        ])

    def _start_kwok(self):
        stages_dir = Path(self.state['binaries']['KWOK_STAGES_DIR'])
        stages = sorted(stages_dir.glob('*.yaml'))
        if not stages:
            raise ControlPlaneError('no kwok stages in %s: run %s' % (stages_dir, BUILD_SCRIPT))
        config = self.config_dir / 'kwok.yaml'
        config.write_text('\n---\n'.join(stage.read_text(encoding='utf-8').strip()
                                         for stage in stages) + '\n', encoding='utf-8')
        annotation = '%s=%s' % KWOK_NODE_ANNOTATION
        self._spawn('kwok', [
            self.state['binaries']['KWOK'],
            '--config=%s' % config,
            '--kubeconfig=%s' % (self.config_dir / 'kwok.kubeconfig'),
            '--manage-all-nodes=false',
            '--manage-nodes-with-annotation-selector=' + annotation,
            '--server-address=127.0.0.1:%d' % self.state['ports']['kwok'],
            '--node-lease-duration-seconds=40',
        ])

    def _register_node(self, node):
        capacity = node.capacity()
        manifest = {
            'apiVersion': 'v1', 'kind': 'Node',
            'metadata': {'name': node.name, 'labels': node.labels(),
                         'annotations': {KWOK_NODE_ANNOTATION[0]: KWOK_NODE_ANNOTATION[1]}},
            'spec': {},
        }
        self.check('POST', '/api/v1/nodes', manifest)
        # Capacity is status: set it through the status subresource, as a kubelet and the
        # device plugin (through the kubelet) do; kwok keeps what is there.
        self.check('PATCH', '/api/v1/nodes/%s/status' % node.name,
                   {'status': {'capacity': capacity, 'allocatable': capacity}},
                   content_type='application/merge-patch+json')

    def _node_schedulable(self, node):
        status, body = self.request('GET', '/api/v1/nodes/' + node.name)
        if status != 200:
            return False
        conditions = {item['type']: item['status'] for item in body['status'].get('conditions', [])}
        blocking_taints = [taint for taint in body['spec'].get('taints', [])
                           if taint['key'].startswith('node.kubernetes.io/')]
        allocatable = body['status'].get('allocatable', {})
        return (conditions.get('Ready') == 'True' and not blocking_taints
                and all(allocatable.get(resource) == str(count)
                        for resource, count in node.npu_resources.items()))

    # -- health -----------------------------------------------------------------------------

    def _admin_ssl_context(self):
        if self._ssl_context is None:
            context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
            context.load_cert_chain(str(self.pki.directory / 'admin.crt'),
                                    str(self.pki.directory / 'admin.key'))
            self._ssl_context = context
        return self._ssl_context

    def _apiserver_ready(self):
        if not self.state or not self.pki.ca_cert.exists():
            return False
        return _https_get(self.server + '/readyz', self._admin_ssl_context()) == b'ok'

    def _component_healthy(self, port):
        # /healthz is on the always-allowed list: only the serving certificate is checked.
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        return _https_get('https://127.0.0.1:%d/healthz' % port, context) == b'ok'

    @staticmethod
    def _plain_healthz(port):
        return _http_get('http://127.0.0.1:%d/healthz' % port) == b'ok'

    def _wait_for(self, what, predicate, timeout=STARTUP_TIMEOUT_SECONDS):
        deadline = time.monotonic() + timeout
        while True:
            dead = [component for component in self._children if not self._recorded_pid(component)]
            if dead:
                raise ControlPlaneError('%s exited while waiting for %s\n%s' % (
                    ', '.join(dead), what, self.log_tails(dead)))
            try:
                if predicate():
                    return
            except (OSError, ValueError, KeyError, ControlPlaneError):
                pass  # not up yet: connection refused, half-written answer, object missing
            if time.monotonic() > deadline:
                raise ControlPlaneError('timed out after %ds waiting for %s\n%s' % (
                    timeout, what, self.log_tails(self._children)))
            time.sleep(0.25)

    def log_tails(self, components, lines=15):
        tails = []
        for component in components:
            log = self.logs_dir / (component + '.log')
            if log.exists():
                text = log.read_text(encoding='utf-8', errors='replace').splitlines()[-lines:]
                tails.append('--- %s (last %d lines)\n%s' % (log, len(text), '\n'.join(text)))
        return '\n'.join(tails)

    # -- processes and state ----------------------------------------------------------------

    def _spawn(self, component, argv):
        log_path = self.logs_dir / (component + '.log')
        with open(log_path, 'ab') as log:
            # A session of its own: the component outlives `controlplane.py up`, and `down`
            # signals its whole process group.
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, cwd=str(self.state_dir),
                                       env=dict(os.environ, LC_ALL='C'), start_new_session=True)
        self._children[component] = process
        start_time = process_start_time(process.pid)
        (self.pids_dir / (component + '.pid')).write_text(
            '%d %s\n' % (process.pid, start_time), encoding='ascii')

    def _recorded_pid(self, component):
        """The pid of COMPONENT if the process recorded for it still runs, else None."""
        child = self._children.get(component)
        if child is not None and child.poll() is not None:
            return None
        try:
            pid_text, start_time = (self.pids_dir / (component + '.pid')).read_text(
                encoding='ascii').split()
        except (OSError, ValueError):
            return None
        pid = int(pid_text)
        return pid if process_start_time(pid) == start_time else None

    def _stop_recorded_processes(self):
        running = {}
        for component in reversed(self.components()):
            pid = self._recorded_pid(component)
            if pid:
                running[component] = pid
                _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        while running and time.monotonic() < deadline:
            running = {component: pid for component, pid in running.items()
                       if self._recorded_pid(component)}
            time.sleep(0.1)
        for pid in running.values():
            _signal_group(pid, signal.SIGKILL)
        for child in self._children.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=5)
        self._children = {}

    def _remove_state(self, keep_logs):
        if not self.state_dir.exists():
            return
        for entry in self.state_dir.iterdir():
            if keep_logs and entry == self.logs_dir:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        if not keep_logs:
            self.state_dir.rmdir()
        self.state = {}
        self._ssl_context = None

    def _load_state(self):
        if not self.state:
            try:
                self.state = json.loads(self.state_file.read_text(encoding='utf-8'))
            except (OSError, ValueError):
                self.state = {}
        return bool(self.state)

    def _save_state(self):
        temporary = self.state_file.with_suffix('.tmp')
        temporary.write_text(json.dumps(self.state, indent=2) + '\n', encoding='utf-8')
        temporary.replace(self.state_file)

    def resident_memory_kib(self):
        """{component: RSS in KiB} of the running components (their whole process group)."""
        result = {}
        for component in self.components():
            pid = self._recorded_pid(component)
            if pid:
                result[component] = _process_group_rss_kib(pid)
        return result


def _signal_group(pid, signum):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def _process_group_rss_kib(group):
    total = 0
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry, encoding='ascii', errors='replace') as stream:
                fields = stream.read().rsplit(')', 1)[1].split()
            if int(fields[2]) != group:
                continue
            with open('/proc/%s/status' % entry, encoding='ascii', errors='replace') as stream:
                for line in stream:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total


def _base64_file(path):
    return base64.b64encode(Path(path).read_bytes()).decode('ascii')


def _https_get(url, context):
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as response:
            return response.read()
    except (urllib.error.URLError, OSError, ssl.SSLError):
        return None


def _http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read()
    except (urllib.error.URLError, OSError):
        return None


# ---------------------------------------------------------------------------------------------
# Command line


def _nodes_from_arguments(arguments):
    nodes = []
    if arguments.nodes_from_inventory:
        nodes = nodes_from_inventory(arguments.nodes_from_inventory)
    nodes = apply_node_overrides(nodes, arguments.node or [])
    if not nodes:
        raise SystemExit('controlplane: no nodes: give --nodes-from-inventory or --node')
    return nodes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    subcommands = parser.add_subparsers(dest='command', required=True)
    for name, summary in (('up', 'start the control plane and register the nodes'),
                          ('down', 'stop it and remove its state directory'),
                          ('status', 'say which components run; exit 1 unless all are healthy'),
                          ('env', 'print shell exports (KUBECONFIG, tool paths)')):
        subparser = subcommands.add_parser(name, help=summary)
        subparser.add_argument('--state-dir', type=Path, default=DEFAULT_STATE_DIR)
        if name == 'up':
            subparser.add_argument('--nodes-from-inventory', metavar='INVENTORY',
                                   help='YAML inventory file or directory: one Node per host')
            subparser.add_argument('--node', action='append', metavar='NAME[:RESOURCE=N,...]',
                                   help='add a node, or replace the NPU resources of an '
                                        'inventory node (e.g. ascend-a2-01:aliyun.com/npu=8); '
                                        'repeatable')
            subparser.add_argument('--apiserver-port', type=int,
                                   help='secure port on 127.0.0.1 (default: a free one)')
            subparser.add_argument('--kubelet-node', action='append', default=[], metavar='NAME',
                                   help='a node whose real kubelet joins: no Node object is made '
                                        'for it; its kubeconfig is written to '
                                        'STATE_DIR/kubelets/NAME/ (repeatable)')
            subparser.add_argument('--external-address', metavar='IP',
                                   help='the address kubelet nodes reach this machine at; the API '
                                        'server then listens on all addresses')
            subparser.add_argument('--device-plugin-standin', action='store_true',
                                   help="publish each sandbox node's NPUs from npu-smi while a "
                                        'device plugin pod runs there (see device_plugin_standin.py)')
        if name == 'down':
            subparser.add_argument('--keep-logs', action='store_true')
    arguments = parser.parse_args(argv)

    if arguments.command == 'up':
        try:
            nodes = _nodes_from_arguments(arguments)
        except ValueError as error:
            raise SystemExit('controlplane: %s' % error)
        try:
            control_plane = ControlPlane(arguments.state_dir, nodes, arguments.apiserver_port,
                                         device_plugin_standin=arguments.device_plugin_standin,
                                         kubelet_nodes=arguments.kubelet_node,
                                         external_address=arguments.external_address)
        except ControlPlaneError as error:
            raise SystemExit('controlplane: %s' % error)
        try:
            control_plane.up()
        except (ControlPlaneError, subprocess.CalledProcessError) as error:
            raise SystemExit('controlplane: up failed (logs kept in %s): %s' % (
                control_plane.logs_dir, error))
        print(control_plane.kubeconfig)
        return 0
    control_plane = ControlPlane(arguments.state_dir)
    if arguments.command == 'down':
        control_plane.down(keep_logs=arguments.keep_logs)
        return 0
    if arguments.command == 'status':
        status = control_plane.status()
        for component, state in status.items():
            print('%-24s %s' % (component, state))
        healthy = all(state in ('running', 'ready') for state in status.values())
        return 0 if healthy else 1
    try:
        variables = control_plane.environment()
    except ControlPlaneError as error:
        raise SystemExit('controlplane: %s' % error)
    for name, value in variables.items():
        print('export %s=%s' % (name, shlex.quote(str(value))))
    return 0


if __name__ == '__main__':
    sys.exit(main())
