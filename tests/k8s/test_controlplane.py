# -*- coding: utf-8 -*-
"""The test control plane behaves like a real cluster: TLS, RBAC, scheduling on NPU capacity."""

import base64
import json
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
import yaml

import controlplane

NAMESPACE = 'default'
A2_NODE = 'ascend-a2-01'
DUO_NODE = 'ascend-duo-01'
ALIBABA_NODE = 'ack-npu-01'


def wait_for(what, predicate, timeout=90):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.5)
    raise AssertionError('timed out after %ss waiting for %s' % (timeout, what))


def npu_pod(name, resource, count, node_selector=None):
    spec = {
        'containers': [{
            'name': 'inference',
            # kwok never pulls images; the name only has to be valid.
            'image': 'registry.invalid/npu-ascend/inference:1',
            'resources': {'limits': {resource: str(count)}, 'requests': {'cpu': '100m'}},
        }],
        'terminationGracePeriodSeconds': 0,
    }
    if node_selector:
        spec['nodeSelector'] = node_selector
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': name, 'namespace': NAMESPACE}, 'spec': spec}


@pytest.fixture
def make_pod(control_plane):
    created = []

    def create(manifest):
        control_plane.check('POST', '/api/v1/namespaces/%s/pods' % NAMESPACE, manifest)
        created.append(manifest['metadata']['name'])
        return manifest['metadata']['name']

    yield create
    for name in created:
        control_plane.request('DELETE', '/api/v1/namespaces/%s/pods/%s' % (NAMESPACE, name),
                              {'gracePeriodSeconds': 0})


def get_pod(control_plane, name):
    return control_plane.check('GET', '/api/v1/namespaces/%s/pods/%s' % (NAMESPACE, name))


def wait_for_running(control_plane, name):
    def running_pod():
        pod = get_pod(control_plane, name)
        return pod if pod['status'].get('phase') == 'Running' else None

    return wait_for('pod %s to run' % name, running_pod)


def unique(prefix):
    return '%s-%s' % (prefix, uuid.uuid4().hex[:8])


# -- nodes ----------------------------------------------------------------------------------


def test_inventory_hosts_map_to_device_plugin_resources():
    nodes = {node.name: node for node in controlplane.nodes_from_inventory(
        controlplane.REPO_ROOT / 'inventories' / 'sandbox')}
    assert set(nodes) == {A2_NODE, DUO_NODE}
    assert nodes[A2_NODE].npu_resources == {'huawei.com/Ascend910': 8}
    assert nodes[DUO_NODE].npu_resources == {'huawei.com/Ascend310P': 2}
    assert nodes[A2_NODE].arch == 'amd64'


@pytest.mark.parametrize('chip, resource', [
    ('910B4', 'huawei.com/Ascend910'), ('910', 'huawei.com/Ascend910'),
    ('910_9382', 'huawei.com/Ascend910'), ('310P3', 'huawei.com/Ascend310P'),
    ('310', 'huawei.com/Ascend310'), ('950PR', 'huawei.com/npu'),
])
def test_device_plugin_resource_per_chip(chip, resource):
    assert controlplane.device_plugin_resource(chip) == resource


def test_unknown_chip_asks_for_an_override():
    with pytest.raises(ValueError, match='--node'):
        controlplane.device_plugin_resource('310B4')


def test_node_override_replaces_resources_and_adds_nodes():
    nodes = [controlplane.NodeSpec(A2_NODE, npu_resources={'huawei.com/Ascend910': 8},
                                   chip_name='910B4')]
    result = controlplane.apply_node_overrides(nodes, ['%s:aliyun.com/npu=8' % A2_NODE, 'cpu-01'])
    assert [(node.name, node.npu_resources) for node in result] == [
        (A2_NODE, {'aliyun.com/npu': 8}), ('cpu-01', {})]
    # No Huawei device plugin there, so no chip label either.
    assert 'node.kubernetes.io/npu.chip.name' not in result[0].labels()


@pytest.mark.parametrize('text', ['', ':huawei.com/Ascend910=1', 'n:Ascend910=1',
                                  'n:huawei.com/Ascend910=eight', 'n:huawei.com/Ascend910'])
def test_malformed_node_override_is_refused(text):
    with pytest.raises(ValueError):
        controlplane.parse_node_override(text)


def test_nodes_publish_the_npu_capacity_and_are_ready(control_plane):
    nodes = {item['metadata']['name']: item
             for item in control_plane.check('GET', '/api/v1/nodes')['items']}
    assert set(nodes) == {A2_NODE, DUO_NODE, ALIBABA_NODE}
    expected = {A2_NODE: ('huawei.com/Ascend910', '8'), DUO_NODE: ('huawei.com/Ascend310P', '2'),
                ALIBABA_NODE: ('aliyun.com/npu', '4')}
    for name, (resource, count) in expected.items():
        node = nodes[name]
        assert node['status']['capacity'][resource] == count
        assert node['status']['allocatable'][resource] == count
        assert node['metadata']['labels']['kubernetes.io/hostname'] == name
        assert node['metadata']['labels']['kubernetes.io/arch'] == 'amd64'
        ready = [item for item in node['status']['conditions'] if item['type'] == 'Ready']
        assert ready and ready[0]['status'] == 'True'
    assert nodes[A2_NODE]['metadata']['labels']['node.kubernetes.io/npu.chip.name'] == '910B4'
    assert 'huawei.com/Ascend910' not in nodes[DUO_NODE]['status']['capacity']


# -- TLS and RBAC ---------------------------------------------------------------------------


def test_kubeconfig_is_the_admin_over_verified_tls(control_plane):
    config = yaml.safe_load(control_plane.kubeconfig.read_text(encoding='utf-8'))
    assert config['current-context'] == 'npu-ascend-test'
    cluster = config['clusters'][0]['cluster']
    user = config['users'][0]['user']
    assert cluster['server'] == control_plane.server
    context = ssl.create_default_context(cafile=cluster['certificate-authority'])
    context.load_cert_chain(user['client-certificate'], user['client-key'])
    request = urllib.request.Request(
        cluster['server'] + '/apis/authentication.k8s.io/v1/selfsubjectreviews', method='POST',
        data=json.dumps({'apiVersion': 'authentication.k8s.io/v1',
                         'kind': 'SelfSubjectReview'}).encode(),
        headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, context=context, timeout=10) as response:
        review = json.loads(response.read())
    assert 'system:masters' in review['status']['userInfo']['groups']
    # The serving certificate is checked: a client that trusts another CA is refused.
    with pytest.raises(urllib.error.URLError, match='CERTIFICATE_VERIFY_FAILED'):
        urllib.request.urlopen(cluster['server'] + '/readyz', timeout=10,
                               context=ssl.create_default_context())


def test_anonymous_user_may_not_list_nodes(control_plane):
    context = ssl.create_default_context(cafile=str(control_plane.pki.ca_cert))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(control_plane.server + '/api/v1/nodes', context=context, timeout=10)
    assert refused.value.code in (401, 403)


def test_rbac_refuses_an_unprivileged_service_account_until_it_is_granted(control_plane):
    account = unique('unprivileged')
    control_plane.check('POST', '/api/v1/namespaces/%s/serviceaccounts' % NAMESPACE,
                        {'metadata': {'name': account}})
    token = control_plane.check(
        'POST', '/api/v1/namespaces/%s/serviceaccounts/%s/token' % (NAMESPACE, account),
        {'apiVersion': 'authentication.k8s.io/v1', 'kind': 'TokenRequest',
         'spec': {'expirationSeconds': 600}})['status']['token']
    review = control_plane.check('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews',
                                 {'apiVersion': 'authentication.k8s.io/v1',
                                  'kind': 'SelfSubjectReview'}, token=token)
    # The token authenticates: a refusal below is authorization, not a bad token.
    assert review['status']['userInfo']['username'] == \
        'system:serviceaccount:%s:%s' % (NAMESPACE, account)

    status, body = control_plane.request('GET', '/api/v1/nodes', token=token)
    assert status == 403, body
    assert body['reason'] == 'Forbidden'

    role = unique('node-reader')
    control_plane.check('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
        'metadata': {'name': role},
        'rules': [{'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list']}]})
    control_plane.check('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        'metadata': {'name': role},
        'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': role},
        'subjects': [{'kind': 'ServiceAccount', 'name': account, 'namespace': NAMESPACE}]})
    try:
        wait_for('the binding to take effect',
                 lambda: control_plane.request('GET', '/api/v1/nodes', token=token)[0] == 200,
                 timeout=30)
    finally:
        control_plane.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/'
                              + role)
        control_plane.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/' + role)


# -- scheduling on NPU capacity -------------------------------------------------------------


def test_pod_requesting_an_ascend910_runs_on_the_a2_node(control_plane, make_pod):
    name = make_pod(npu_pod(unique('one-npu'), 'huawei.com/Ascend910', 1,
                            {'kubernetes.io/hostname': A2_NODE}))
    pod = wait_for_running(control_plane, name)
    assert pod['spec']['nodeName'] == A2_NODE
    assert all(status['ready'] for status in pod['status']['containerStatuses'])


def test_pod_requesting_an_alibaba_npu_runs_on_the_alibaba_node(control_plane, make_pod):
    name = make_pod(npu_pod(unique('aliyun-npu'), 'aliyun.com/npu', 2))
    pod = wait_for_running(control_plane, name)
    assert pod['spec']['nodeName'] == ALIBABA_NODE


def test_pod_requesting_nine_ascend910_stays_pending_for_lack_of_npus(control_plane, make_pod):
    name = make_pod(npu_pod(unique('nine-npus'), 'huawei.com/Ascend910', 9))

    def unschedulable_condition():
        conditions = get_pod(control_plane, name)['status'].get('conditions', [])
        matching = [item for item in conditions if item['type'] == 'PodScheduled']
        if matching and matching[0]['status'] == 'False':
            return matching[0]
        return None

    condition = wait_for('the scheduler to give up', unschedulable_condition, timeout=60)
    assert condition['reason'] == 'Unschedulable'
    assert 'Insufficient huawei.com/Ascend910' in condition['message']
    # Stays so: the scheduler retries, and no node ever has nine.
    time.sleep(3)
    pod = get_pod(control_plane, name)
    assert pod['status']['phase'] == 'Pending'
    assert not pod['spec'].get('nodeName')


# -- lifecycle ------------------------------------------------------------------------------


def test_up_on_a_running_state_dir_is_a_no_op(control_plane):
    again = controlplane.ControlPlane(control_plane.state_dir, control_plane.nodes)
    started = time.monotonic()
    assert again.up() is False
    assert time.monotonic() - started < 10
    assert again.server == control_plane.server


def test_command_line_status_and_env(control_plane):
    script = str(controlplane.HERE / 'controlplane.py')
    status = subprocess.run([sys.executable, script, 'status', '--state-dir',
                             str(control_plane.state_dir)], check=False, capture_output=True,
                            text=True)
    assert status.returncode == 0, status.stdout + status.stderr
    assert 'kube-apiserver' in status.stdout and 'ready' in status.stdout
    env = subprocess.run([sys.executable, script, 'env', '--state-dir',
                          str(control_plane.state_dir)], check=True, capture_output=True,
                         text=True).stdout
    assert "export KUBECONFIG=%s" % control_plane.kubeconfig in env
    assert 'K8S_TEST_PROMTOOL=' in env


def test_control_plane_stays_light(control_plane):
    rss_kib = control_plane.resident_memory_kib()
    assert set(rss_kib) == set(controlplane.COMPONENTS)
    # Generous bound: the point is to notice a component that balloons (e.g. etcd's mmap).
    assert sum(rss_kib.values()) < 1536 * 1024, rss_kib


def test_kubelet_node_gets_its_own_identity_and_no_node_object(tmp_path):
    """A kubelet node's credentials name system:node:NAME in system:nodes (NodeRestriction) and
    point at the external address; it is left out of the Node objects the harness creates."""
    plane = controlplane.ControlPlane(tmp_path, [controlplane.NodeSpec('klt-a'), controlplane.NodeSpec('kwok-b')],
                                      kubelet_nodes=['klt-a'], external_address='10.88.0.1')
    assert [node.name for node in plane.nodes] == ['kwok-b']
    plane.state = {'ports': {'apiserver': 6443}}
    plane.pki.create_ca()
    plane._issue_kubelet_credentials('klt-a')
    config = yaml.safe_load((plane.kubelet_credentials('klt-a') / 'kubeconfig').read_text())
    assert config['clusters'][0]['cluster']['server'] == 'https://10.88.0.1:6443'
    certificate = base64.b64decode(config['users'][0]['user']['client-certificate-data'])
    subject = subprocess.run(['openssl', 'x509', '-noout', '-subject', '-nameopt', 'RFC2253'],
                             input=certificate, capture_output=True, check=True).stdout.decode()
    assert subject.strip() == 'subject=CN=system:node:klt-a,O=system:nodes'


def test_kubelet_nodes_need_an_external_address(tmp_path):
    with pytest.raises(controlplane.ControlPlaneError, match='--external-address'):
        controlplane.ControlPlane(tmp_path, [], kubelet_nodes=['klt-a'])
