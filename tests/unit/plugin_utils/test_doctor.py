# -*- coding: utf-8 -*-
"""The doctor's decision trees, fed with realistic evidence: real npu-smi samples, Kubernetes
objects shaped as the API returns them, real scheduler messages and the compatibility matrix."""

import copy
import os

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi

from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.plugin_utils import doctor
from ansible_collections.npu.ascend.plugins.module_utils.packages.compat_matrix import COMPAT_MATRIX

from conftest import SAMPLES_DIR

A2 = 'npu-a2-01'
DUO = 'npu-duo-01'
DRIVER_DIR = '/usr/local/Ascend/driver'
ERROR_8005 = ('npu-smi failed (rc=255): dcmi module initialize failed. ret is -8005 [error code -8005]. This means '
              'the NPU device is not started or the NPU driver is not loaded; reboot the node; if the error stays, '
              'reinstall the driver (and check the firmware).')
# kube-scheduler's words for the cases below (its FitError format, as on a real cluster).
MSG_INSUFFICIENT = ('0/2 nodes are available: 1 Insufficient huawei.com/Ascend910, 1 node(s) didn\'t match Pod\'s '
                    'node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for '
                    'incoming pod, 1 Preemption is not helpful for scheduling.')
MSG_MISMATCH = ('0/2 nodes are available: 2 Insufficient huawei.com/Ascend910B. preemption: 0/2 nodes are available: '
                '2 Preemption is not helpful for scheduling.')
MSG_TAINT = ('0/2 nodes are available: 1 node(s) had untolerated taint {npu.ascend/maintenance: true}, 1 node(s) '
             'didn\'t match Pod\'s node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not '
             'helpful for scheduling.')


def sample_chips(name):
    with open(os.path.join(SAMPLES_DIR, 'npu-smi', name)) as handle:
        return npu_smi.parse_info(handle.read())


A2_SMI = sample_chips('910B4_25.0.rc1.1_info.txt')
DUO_SMI = sample_chips('310P3_25.5.2_info.txt')


def facts(family='910b', chips=8, accelerator='huawei-Ascend910', resource='huawei.com/Ascend910', **changes):
    value = {
        'arch': 'x86_64', 'chip_family': family, 'npu_count': chips, 'pci_source': 'sysfs',
        'product': 'Atlas 800I A2' if family == '910b' else 'Atlas 300I Duo',
        'k8s_resource_name': resource, 'accelerator_label': accelerator,
        'installed': {'driver': {'version': '25.0.rc1.1'}, 'firmware': {'version': '7.7.0.1.231'},
                      'toolkit': {'version': '8.2.RC1'}, 'docker_runtime': {'version': '7.3.0'}},
        'device_nodes': ['/dev/davinci%d' % index for index in range(chips)]
        + ['/dev/davinci_manager', '/dev/devmm_svm', '/dev/hisi_hdc'],
        'npu_smi_path': '/usr/local/sbin/npu-smi', 'reboot_pending': False, 'reboot_reasons': [],
    }
    value.update(changes)
    return value


def containerd(default='ascend', registered=True):
    runtime = {'runtime_type': 'io.containerd.runc.v2',
               'options': {'BinaryName': '/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'}}
    return {'ok': True, 'config_version': 2, 'cri_plugin': 'io.containerd.grpc.v1.cri',
            'default_runtime_name': default, 'runtime': runtime if registered else None}


def stack_check(**stack):
    report = compatibility.check_stack(stack, COMPAT_MATRIX)
    return {'stack': stack, 'conflicts': report['conflicts'], 'unknown': report['unknown']}


def node_evidence(name=A2, smi=None, **changes):
    smi = A2_SMI if smi is None else smi
    evidence = {
        'node': name, 'install_path': '/usr/local/Ascend', 'facts': facts(),
        'npu_smi': {'ok': True, 'chips': copy.deepcopy(smi['chips']), 'driver_version': smi['driver_version']},
        'runtime': {'containerd': containerd(), 'docker': None},
        'kubelet': {'path': '/var/lib/kubelet/device-plugins', 'dir_exists': True, 'socket': True},
        'versions': stack_check(cann='8.2.RC1', driver='25.0.rc1.1', firmware='7.7.0.1.231', chip_family='910b'),
        'torch_npu': None,
    }
    evidence['npu_smi']['driver_version'] = '25.0.rc1.1'
    evidence.update(changes)
    return evidence


def duo_evidence(**changes):
    evidence = node_evidence(DUO, smi=DUO_SMI, facts=facts('310p', 2, 'huawei-Ascend310P', 'huawei.com/Ascend310P'))
    evidence['npu_smi']['chips'] = evidence['npu_smi']['chips'][:2]
    evidence['versions'] = stack_check(cann='8.2.RC1', driver='25.0.rc1.1', firmware='7.7.0.1.231', chip_family='310p')
    evidence.update(changes)
    return evidence


def k8s_node(name, resource, count, allocatable=None, labels=None, taints=None, unschedulable=False):
    base_labels = {'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux',
                   'accelerator': 'huawei-' + resource.split('/')[1], 'npu.ascend/runtime-handler': 'ascend'}
    base_labels.update(labels or {})
    node = {'apiVersion': 'v1', 'kind': 'Node',
            'metadata': {'name': name, 'labels': dict((k, v) for k, v in base_labels.items() if v is not None)},
            'spec': {'taints': taints or []},
            'status': {'capacity': {'cpu': '64', 'memory': '256Gi', 'pods': '110', resource: str(count)},
                       'allocatable': {'cpu': '64', 'memory': '256Gi', 'pods': '110',
                                       resource: str(count if allocatable is None else allocatable)}}}
    if unschedulable:
        node['spec']['unschedulable'] = True
    return node


def daemonset(suffix, accelerator, driver_mount=True, tolerations=None):
    volumes = [{'name': 'device-plugins', 'hostPath': {'path': '/var/lib/kubelet/device-plugins', 'type': 'Directory'}},
               {'name': 'log', 'hostPath': {'path': '/var/log/mindx-dl/devicePlugin', 'type': 'DirectoryOrCreate'}}]
    mounts = [{'name': 'device-plugins', 'mountPath': '/var/lib/kubelet/device-plugins'},
              {'name': 'log', 'mountPath': '/var/log/mindx-dl/devicePlugin'}]
    if driver_mount:
        volumes.append({'name': 'driver', 'hostPath': {'path': DRIVER_DIR, 'type': 'Directory'}})
        mounts.append({'name': 'driver', 'mountPath': DRIVER_DIR, 'readOnly': True})
    return {'apiVersion': 'apps/v1', 'kind': 'DaemonSet',
            'metadata': {'name': 'ascend-device-plugin-' + suffix, 'namespace': 'kube-system',
                         'labels': {'app.kubernetes.io/name': 'ascend-device-plugin'}},
            'spec': {'template': {'spec': {
                'nodeSelector': {'accelerator': accelerator},
                'affinity': {'nodeAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': {
                    'nodeSelectorTerms': [{'matchExpressions': [
                        {'key': 'npu.ascend/device-plugin', 'operator': 'NotIn', 'values': ['paused']}]}]}}},
                'tolerations': tolerations if tolerations is not None else [
                    {'key': 'CriticalAddonsOnly', 'operator': 'Exists'},
                    {'key': 'npu.ascend/unvalidated', 'operator': 'Exists', 'effect': 'NoSchedule'}],
                'containers': [{'name': 'device-plugin', 'volumeMounts': mounts}],
                'volumes': volumes}}}}


def plugin_pod(suffix, node, phase='Running'):
    return {'apiVersion': 'v1', 'kind': 'Pod',
            'metadata': {'name': 'ascend-device-plugin-%s-x7k2p' % suffix, 'namespace': 'kube-system',
                         'ownerReferences': [{'kind': 'DaemonSet', 'name': 'ascend-device-plugin-' + suffix}]},
            'spec': {'nodeName': node}, 'status': {'phase': phase}}


def pod(name, resource, count, node=None, pending_message=None, tolerations=None, node_selector=None):
    value = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name, 'namespace': 'default'},
             'spec': {'containers': [{'name': 'main', 'resources': {
                 'limits': {resource: str(count)}, 'requests': {resource: str(count)}}}]},
             'status': {'phase': 'Running' if node else 'Pending'}}
    if node:
        value['spec']['nodeName'] = node
    if tolerations:
        value['spec']['tolerations'] = tolerations
    if node_selector:
        value['spec']['nodeSelector'] = node_selector
    if pending_message:
        value['status']['conditions'] = [{'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable',
                                          'message': pending_message}]
    return value


def cluster(**changes):
    value = {
        'available': True,
        'nodes': [k8s_node(A2, 'huawei.com/Ascend910', 8), k8s_node(DUO, 'huawei.com/Ascend310P', 2)],
        'daemonsets': [daemonset('910', 'huawei-Ascend910'), daemonset('310p', 'huawei-Ascend310P')],
        'device_plugin_pods': [plugin_pod('910', A2), plugin_pod('310p', DUO)],
        'runtime_classes': [{'apiVersion': 'node.k8s.io/v1', 'kind': 'RuntimeClass', 'metadata': {'name': 'ascend'},
                             'handler': 'ascend',
                             'scheduling': {'nodeSelector': {'npu.ascend/runtime-handler': 'ascend'}}}],
        'pods': [],
    }
    value.update(changes)
    return value


def with_node(nodes, name, node):
    return [node if item['metadata']['name'] == name else item for item in nodes]


def zero_a2(state=None, **node_changes):
    """A cluster in which the A2 advertises no NPU, as the device plugin (stand-in) does when it finds none."""
    state = state or cluster()
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(A2, 'huawei.com/Ascend910', 0, **node_changes))
    return state


def only(findings, node=None):
    chosen = [item for item in findings if node is None or item['node'] == node]
    assert len(chosen) == 1, chosen
    return chosen[0]


def test_the_sample_fleet_is_healthy():
    assert len(A2_SMI['chips']) == 8
    assert doctor.diagnose([node_evidence(), duo_evidence()], cluster()) == []


def test_every_finding_has_the_five_fields_and_a_known_component():
    evidence = node_evidence(npu_smi={'ok': False, 'error': ERROR_8005})
    for item in doctor.diagnose([evidence, duo_evidence()], zero_a2()):
        assert set(item) == {'node', 'component', 'problem', 'evidence', 'fix'}
        assert item['component'] in doctor.COMPONENTS
        assert all(item[key] for key in item)


# --- the device plugin advertises no NPU: the first failing cause explains it ------------------

def test_zero_npus_explained_by_a_missing_driver_and_nothing_else():
    installed = dict(facts()['installed'], driver=None)
    evidence = node_evidence(facts=facts(installed=installed, device_nodes=[], npu_smi_path=None),
                             npu_smi={'ok': False, 'error': 'npu-smi is not installed'})
    item = only(doctor.diagnose([evidence], zero_a2()))
    assert item['component'] == 'driver'
    assert 'advertises no huawei.com/Ascend910 (capacity 0, allocatable 0)' in item['problem']
    assert 'not installed' in item['problem']
    assert 'npu.ascend.hdk' in item['fix']


def test_zero_npus_explained_by_a_pending_reboot():
    evidence = node_evidence(facts=facts(reboot_pending=True,
                                         reboot_reasons=[{'component': 'driver', 'version': '25.0.rc1.1'}]),
                             npu_smi={'ok': False, 'error': ERROR_8005})
    item = only(doctor.diagnose([evidence], zero_a2()))
    assert item['component'] == 'driver'
    assert 'reboot is pending' in item['problem']
    assert 'driver 25.0.rc1.1' in item['evidence']
    assert item['fix'].startswith('reboot the node')


def test_zero_npus_explained_by_npu_smi_8005_before_labels_and_device_files():
    state = zero_a2(labels={'accelerator': None})
    evidence = node_evidence(npu_smi={'ok': False, 'error': ERROR_8005},
                             facts=facts(device_nodes=['/dev/davinci_manager']))
    item = only(doctor.diagnose([evidence], state))
    assert item['component'] == 'npu-smi'
    assert item['node'] == A2
    assert 'ret is -8005' in item['evidence']
    assert 'reboot the node' in item['fix']


def test_zero_npus_explained_by_all_chips_unhealthy():
    evidence = node_evidence()
    for chip in evidence['npu_smi']['chips']:
        chip['health'] = 'Alarm'
    item = only(doctor.diagnose([evidence], zero_a2()))
    assert item['component'] == 'health'
    assert 'NPU 0 chip 0 Alarm' in item['evidence']
    assert 'npu-smi info -t health -i 0 -c 0' in item['fix']


def test_zero_npus_explained_by_missing_device_files():
    evidence = node_evidence(facts=facts(device_nodes=['/dev/davinci_manager', '/dev/devmm_svm']))
    item = only(doctor.diagnose([evidence], zero_a2()))
    assert item['component'] == 'driver'
    assert '/dev/davinci0' in item['problem'] and '/dev/davinci7' in item['problem']


def test_zero_npus_explained_by_no_daemonset():
    item = only(doctor.diagnose([node_evidence()], zero_a2(cluster(daemonsets=[], device_plugin_pods=[]))))
    assert item['component'] == 'device-plugin'
    assert 'no device plugin DaemonSet' in item['problem']
    assert 'npu.ascend.device_plugin' in item['fix']


def test_zero_npus_explained_by_a_daemonset_without_the_driver_mount():
    state = zero_a2(cluster(daemonsets=[daemonset('910', 'huawei-Ascend910', driver_mount=False),
                                        daemonset('310p', 'huawei-Ascend310P')]))
    item = only(doctor.diagnose([node_evidence()], state))
    assert item['component'] == 'device-plugin'
    assert DRIVER_DIR in item['problem']
    assert 'kube-system/ascend-device-plugin-910 mounts hostPath /var/lib/kubelet/device-plugins' in item['evidence']


def test_zero_npus_explained_by_the_accelerator_label():
    state = zero_a2(labels={'accelerator': None})
    state['device_plugin_pods'] = [plugin_pod('310p', DUO)]
    item = only(doctor.diagnose([node_evidence()], state))
    assert item['component'] == 'device-plugin'
    assert 'accelerator=huawei-Ascend910 (node has no such label)' in item['evidence']
    assert 'kubectl label node %s accelerator=huawei-Ascend910' % A2 in item['fix']


def test_zero_npus_explained_by_a_paused_device_plugin():
    state = zero_a2(labels={'npu.ascend/device-plugin': 'paused'})
    state['device_plugin_pods'] = [plugin_pod('310p', DUO)]
    item = only(doctor.diagnose([node_evidence()], state))
    assert 'paused' in item['problem']
    assert 'npu.ascend/device-plugin=paused' in item['evidence']


def test_zero_npus_explained_by_a_taint_the_daemonset_does_not_tolerate():
    state = zero_a2(taints=[{'key': 'example.com/dedicated', 'value': 'ml', 'effect': 'NoExecute'}])
    state['device_plugin_pods'] = [plugin_pod('310p', DUO)]
    item = only(doctor.diagnose([node_evidence()], state))
    assert 'does not tolerate' in item['problem']
    assert 'example.com/dedicated=ml:NoExecute' in item['evidence']
    assert 'kubectl taint node %s example.com/dedicated:NoExecute-' % A2 in item['fix']


def test_zero_npus_explained_by_a_plugin_pod_that_is_not_running_then_by_no_pod():
    state = zero_a2()
    state['device_plugin_pods'] = [plugin_pod('910', A2, phase='Pending'), plugin_pod('310p', DUO)]
    state['device_plugin_pods'][0]['status']['containerStatuses'] = [
        {'name': 'device-plugin', 'state': {'waiting': {'reason': 'CrashLoopBackOff'}}}]
    item = only(doctor.diagnose([node_evidence()], state))
    assert 'not running' in item['problem'] and 'CrashLoopBackOff' in item['evidence']
    state['device_plugin_pods'] = [plugin_pod('310p', DUO)]
    item = only(doctor.diagnose([node_evidence()], state))
    assert item['problem'].endswith('no device plugin pod runs on the node')


def test_zero_npus_explained_by_the_kubelet_socket_then_unexplained():
    evidence = node_evidence(kubelet={'path': '/var/lib/kubelet/device-plugins', 'dir_exists': True, 'socket': False})
    item = only(doctor.diagnose([evidence], zero_a2()))
    assert 'kubelet.sock' in item['evidence']
    item = only(doctor.diagnose([node_evidence()], zero_a2()))
    assert 'none of the usual causes' in item['problem']
    assert 'devicePlugin.log' in item['fix']


def test_the_kubelet_socket_is_not_a_finding_while_npus_are_advertised():
    evidence = node_evidence(kubelet={'path': '/var/lib/kubelet/device-plugins', 'dir_exists': False, 'socket': False})
    assert doctor.diagnose([evidence], cluster()) == []


# --- faults that do not zero the capacity ----------------------------------------------------

def test_a_missing_device_file_is_found_while_npus_are_advertised():
    present = ['/dev/davinci%d' % index for index in range(1, 8)] + ['/dev/davinci_manager']
    item = only(doctor.diagnose([node_evidence(facts=facts(device_nodes=present))], cluster()))
    assert item['component'] == 'driver'
    assert item['problem'] == 'device files are missing: /dev/davinci0'


def test_unhealthy_chips_with_the_capacity_they_cost():
    evidence = node_evidence()
    evidence['npu_smi']['chips'][3]['health'] = 'Critical'
    state = cluster(nodes=[k8s_node(A2, 'huawei.com/Ascend910', 8, allocatable=7),
                           k8s_node(DUO, 'huawei.com/Ascend310P', 2)])
    item = only(doctor.diagnose([evidence], state))
    assert item['component'] == 'health'
    assert item['problem'] == '1 of 8 chips unhealthy'
    assert 'NPU 3 chip 0 Critical' in item['evidence']
    assert 'capacity 8, allocatable 7' in item['evidence']


def test_npu_smi_failure_without_a_cluster():
    evidence = node_evidence(npu_smi={'ok': False, 'error': ERROR_8005})
    item = only(doctor.diagnose([evidence], {'available': False, 'note': 'no kubeconfig'}))
    assert item['component'] == 'npu-smi'


def test_a_node_missing_from_the_cluster():
    state = cluster(nodes=[k8s_node(DUO, 'huawei.com/Ascend310P', 2)])
    item = only(doctor.diagnose([node_evidence()], state))
    assert item['problem'] == 'the cluster has no Node named %s' % A2


# --- containers without /dev/davinci*: the runtime ---------------------------------------------

def test_runtime_not_installed():
    installed = dict(facts()['installed'], docker_runtime=None)
    item = only(doctor.diagnose([node_evidence(facts=facts(installed=installed))], cluster()))
    assert item['component'] == 'runtime'
    assert 'npu.ascend.container_runtime' in item['fix']


def test_runtime_not_registered_with_containerd():
    evidence = node_evidence(runtime={'containerd': containerd(default='runc', registered=False), 'docker': None})
    item = only(doctor.diagnose([evidence], cluster()))
    assert 'not registered with containerd' in item['problem']
    assert 'default runtime runc' in item['evidence']


def test_runtime_not_default_matters_only_without_a_runtime_class():
    evidence = node_evidence(runtime={'containerd': containerd(default='runc'), 'docker': None})
    assert doctor.diagnose([evidence], cluster()) == []
    findings = doctor.diagnose([evidence], cluster(runtime_classes=[]))
    assert len(findings) == 2
    assert 'not containerd\'s default runtime' in findings[0]['problem']
    assert 'RuntimeClass ascend is missing' in findings[1]['problem']


def test_runtime_class_missing_wrong_handler_and_node_selector():
    item = only(doctor.diagnose([node_evidence()], cluster(runtime_classes=[])))
    assert item['problem'].startswith('the RuntimeClass ascend is missing')
    assert item['evidence'] == 'RuntimeClasses in the cluster: none'
    state = cluster()
    state['runtime_classes'][0]['handler'] = 'ascend-runtime'
    assert 'names handler ascend-runtime' in only(doctor.diagnose([node_evidence()], state))['problem']
    state = cluster()
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(A2, 'huawei.com/Ascend910', 8,
                                                            labels={'npu.ascend/runtime-handler': None}))
    assert 'npu.ascend/runtime-handler=<absent>' in only(doctor.diagnose([node_evidence()], state))['evidence']


def test_docker_daemon_json_read_with_the_collection_parser():
    broken = {'containerd': containerd(), 'docker': {'path': '/etc/docker/daemon.json', 'config_text': '{"runtimes": '}}
    assert 'cannot be read' in only(doctor.diagnose([node_evidence(runtime=broken)], cluster()))['problem']
    plain = {'containerd': containerd(),
             'docker': {'path': '/etc/docker/daemon.json', 'config_text': '{"log-driver": "json-file"}\n'}}
    assert 'not registered with docker' in only(doctor.diagnose([node_evidence(runtime=plain)], cluster()))['problem']
    good = {'containerd': containerd(), 'docker': {'path': '/etc/docker/daemon.json', 'config_text': (
        '{"default-runtime": "ascend", "runtimes": {"ascend": {"path": '
        '"/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime", "runtimeArgs": []}}}')}}
    assert doctor.diagnose([node_evidence(runtime=good)], cluster()) == []


# --- versions -----------------------------------------------------------------------------------

def test_cann_that_does_not_fit_the_driver():
    versions = stack_check(cann='8.0.RC1', driver='25.0.rc1.1', firmware='7.7.0.1.231', chip_family='910b')
    assert versions['conflicts'], 'the matrix must reject CANN 8.0.RC1 with driver 25.0.rc1.1'
    findings = doctor.diagnose([node_evidence(versions=versions)], cluster())
    assert findings and all(item['component'] == 'versions' for item in findings)
    assert any('cann 8.0.RC1' in item['problem'] and 'driver 25.0.rc1.1' in item['problem'] for item in findings)
    assert any('24.1.rc1' in item['fix'] for item in findings)


def test_a_pair_the_matrix_does_not_know_is_a_finding():
    versions = stack_check(cann='8.3.RC1', driver='25.2.0', firmware='7.7.0.1.231', chip_family='910b')
    assert versions['unknown'] and not versions['conflicts']
    item = only(doctor.diagnose([node_evidence(versions=versions)], cluster()))
    assert item['component'] == 'versions'
    assert 'cann 8.3.RC1 with driver 25.2.0 is not in the compatibility matrix' == item['problem']
    assert 'doctor_compat_extra_rows' in item['fix']


def test_torch_npu_against_cann_and_missing_torch_npu():
    versions = stack_check(cann='8.2.RC1', driver='25.0.rc1.1', firmware='7.7.0.1.231', torch_npu='2.1.0.post3')
    item = only(doctor.diagnose([node_evidence(versions=versions)], cluster()))
    assert 'torch_npu 2.1.0.post3' in item['problem']
    missing = {'python': '/opt/venv/bin/python', 'version': None,
               'error': 'WARNING: Package(s) not found: torch_npu'}
    item = only(doctor.diagnose([node_evidence(torch_npu=missing)], cluster()))
    assert item['problem'] == 'torch_npu is not installed for /opt/venv/bin/python'


def test_running_driver_differs_from_the_installed_one():
    evidence = node_evidence()
    evidence['npu_smi']['driver_version'] = '24.1.rc2'
    item = only(doctor.diagnose([evidence], cluster()))
    assert item['component'] == 'driver'
    assert 'npu-smi reports driver 24.1.rc2' in item['evidence']


# --- pods Pending for NPUs ---------------------------------------------------------------------

def test_pending_for_a_resource_no_node_advertises():
    state = cluster(pods=[pod('train-910b', 'huawei.com/Ascend910B', 1, pending_message=MSG_MISMATCH)])
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert item['node'] == A2
    assert item['component'] == 'scheduling'
    assert 'requests huawei.com/Ascend910B, which no node advertises' in item['problem']
    assert 'huawei.com/Ascend910 on %s' % A2 in item['evidence']
    assert MSG_MISMATCH in item['evidence']
    assert item['fix'].startswith('request huawei.com/Ascend910 instead')


def test_pending_for_more_npus_than_free_names_the_holders():
    state = cluster(pods=[pod('big-job', 'huawei.com/Ascend910', 6, node=A2),
                          pod('second-job', 'huawei.com/Ascend910', 4, pending_message=MSG_INSUFFICIENT)])
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert item['node'] == A2
    assert 'only 2 free huawei.com/Ascend910, the pod requests 4' in item['problem']
    assert 'in use 6 by default/big-job (6), free 2' in item['evidence']
    assert 'request at most 2' in item['fix']


def test_pending_for_more_npus_than_any_node_has():
    state = cluster(pods=[pod('huge', 'huawei.com/Ascend910', 9, pending_message=MSG_INSUFFICIENT)])
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert 'no node has 9 huawei.com/Ascend910' in item['fix']


def test_pending_because_of_a_taint():
    taint = {'key': 'npu.ascend/maintenance', 'value': 'true', 'effect': 'NoSchedule'}
    state = cluster(pods=[pod('no-toleration', 'huawei.com/Ascend910', 1, pending_message=MSG_TAINT,
                              node_selector={'kubernetes.io/hostname': A2})])
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(A2, 'huawei.com/Ascend910', 8, taints=[taint]))
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert item['node'] == A2
    assert 'taint the pod does not tolerate' in item['problem']
    assert 'npu.ascend/maintenance=true:NoSchedule' in item['evidence']
    assert 'kubectl taint node %s npu.ascend/maintenance:NoSchedule-' % A2 in item['fix']
    tolerated = [{'key': 'npu.ascend/maintenance', 'operator': 'Exists'}]
    state['pods'][0]['spec']['tolerations'] = tolerated
    assert 'although its NPUs fit' in only(doctor.diagnose([node_evidence(), duo_evidence()], state))['problem']


def test_pending_on_an_unvalidated_node_says_to_validate():
    taint = {'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}
    state = cluster(pods=[pod('job', 'huawei.com/Ascend910', 1, pending_message=MSG_TAINT)])
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(A2, 'huawei.com/Ascend910', 8, taints=[taint]))
    assert 'npu.ascend.validate' in only(doctor.diagnose([node_evidence(), duo_evidence()], state))['fix']


def test_pending_on_a_cordoned_node_in_an_upgrade():
    state = cluster(pods=[pod('job', 'huawei.com/Ascend910', 1, pending_message='0/2 nodes are available: 1 node(s) '
                              'were unschedulable, 1 node(s) didn\'t match Pod\'s node affinity/selector.')])
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(
        A2, 'huawei.com/Ascend910', 8, unschedulable=True, labels={'npu.ascend/upgrade-state': 'upgrading'}))
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert item['problem'].endswith('node %s is cordoned' % A2)
    assert 'npu.ascend/upgrade-state=upgrading' in item['evidence']
    assert 'upgrade' in item['fix']


def test_pending_with_a_selector_no_npu_node_matches():
    state = cluster(pods=[pod('pinned', 'huawei.com/Ascend310P', 1, pending_message=MSG_INSUFFICIENT,
                              node_selector={'kubernetes.io/hostname': A2})])
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert item['node'] == A2
    assert 'selects no node that advertises huawei.com/Ascend310P' in item['problem']


def test_pods_without_npus_or_not_judged_by_the_scheduler_are_ignored():
    plain = pod('web', 'cpu', 1, pending_message='0/2 nodes are available: 2 Insufficient cpu.')
    fresh = pod('fresh', 'huawei.com/Ascend910', 1)
    assert doctor.diagnose([node_evidence(), duo_evidence()], cluster(pods=[plain, fresh])) == []


# --- helpers ----------------------------------------------------------------------------------

@pytest.mark.parametrize('toleration, expected', [
    ({'key': 'k', 'operator': 'Equal', 'value': 'v', 'effect': 'NoSchedule'}, True),
    ({'key': 'k', 'value': 'v'}, True),
    ({'key': 'k', 'operator': 'Exists'}, True),
    ({'operator': 'Exists'}, True),
    ({'key': 'k', 'value': 'other'}, False),
    ({'key': 'k', 'operator': 'Exists', 'effect': 'NoExecute'}, False),
    ({'key': 'other', 'operator': 'Exists'}, False),
])
def test_tolerates(toleration, expected):
    assert doctor._tolerates(toleration, {'key': 'k', 'value': 'v', 'effect': 'NoSchedule'}) is expected


def test_pod_npu_requests_sums_containers_and_reads_limits():
    value = pod('p', 'huawei.com/Ascend910', 2)
    value['spec']['containers'].append({'name': 'side', 'resources': {'limits': {'huawei.com/Ascend910': '1',
                                                                                 'cpu': '500m'}}})
    value['spec']['initContainers'] = [{'name': 'init', 'resources': {'limits': {'aliyun.com/npu': '1'}}}]
    assert doctor._pod_npu_requests(value) == {'huawei.com/Ascend910': 3, 'aliyun.com/npu': 1}
    with pytest.raises(ValueError, match='whole number'):
        doctor._quantity('1.5')


def test_bad_input_and_options():
    with pytest.raises(ValueError, match='list of node evidence'):
        doctor.diagnose({'node': A2})
    with pytest.raises(ValueError, match='"node" name'):
        doctor.diagnose([{}])
    with pytest.raises(ValueError, match='unknown doctor option'):
        doctor.diagnose([], {}, {'runtime': 'x'})
    findings = doctor.diagnose([node_evidence(runtime={'containerd': containerd(default='npu', registered=False),
                                                       'docker': None})],
                               cluster(), {'runtime_name': 'npu', 'runtime_class': 'ascend'})
    assert [item['problem'][:34] for item in findings] == ['the npu runtime is not registered ',
                                                           'the RuntimeClass ascend names hand']


def test_format_finding():
    lines = doctor.format_finding({'node': '', 'component': 'scheduling', 'problem': 'p', 'evidence': 'e', 'fix': 'f'})
    assert lines == ['(cluster) [scheduling] p', '    evidence: e', '    fix: f']


def test_another_label_domain_is_read_for_the_taint_and_the_upgrade_state():
    # Issue 31: the doctor reads the labels and taint under the domain the roles wrote them with.
    taint = {'key': 'npu.example.com/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}
    state = cluster(pods=[pod('job', 'huawei.com/Ascend910', 1, pending_message=MSG_TAINT)])
    state['nodes'] = with_node(state['nodes'], A2, k8s_node(A2, 'huawei.com/Ascend910', 8, taints=[taint]))
    options = {'label_domain': 'npu.example.com'}
    assert 'npu.ascend.validate' in only(doctor.diagnose([node_evidence(), duo_evidence()], state, options))['fix']
    # Under the default domain the same taint is someone else's: remove it or tolerate it.
    assert 'kubectl taint node' in only(doctor.diagnose([node_evidence(), duo_evidence()], state))['fix']

    state['nodes'] = with_node(state['nodes'], A2, k8s_node(
        A2, 'huawei.com/Ascend910', 8, unschedulable=True, labels={'npu.example.com/upgrade-state': 'upgrading'}))
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state, options))
    assert 'npu.example.com/upgrade-state=upgrading' in item['evidence']


# --- static vNPUs (npu.ascend.vnpu labels the Node with the layout) -----------------------------

def _split_duo(offered_vnpus, whole=1, all_split=False):
    """klt-duo-like node: one chip split into two vir02 (labels), the kubelet offering ``offered_vnpus``."""
    labels = {'npu.ascend/vnpu-Ascend310P-2c': '4' if all_split else '2', 'npu.ascend/vnpu-chips': '2' if all_split else '1'}
    node = k8s_node(DUO, 'huawei.com/Ascend310P', whole, labels=labels)
    if offered_vnpus is not None:
        node['status']['capacity']['huawei.com/Ascend310P-2c'] = str(offered_vnpus)
        node['status']['allocatable']['huawei.com/Ascend310P-2c'] = str(offered_vnpus)
    state = cluster()
    state['nodes'] = with_node(state['nodes'], DUO, node)
    return state


def test_a_vnpu_layout_offered_as_declared_is_no_finding():
    assert doctor.diagnose([node_evidence(), duo_evidence()], _split_duo(2)) == []
    # Every chip split: no whole NPU is expected, so none offered is no finding either.
    assert doctor.diagnose([node_evidence(), duo_evidence()], _split_duo(4, whole=0, all_split=True)) == []


def test_a_vnpu_resource_not_offered_is_diagnosed():
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], _split_duo(None)))
    assert item['node'] == DUO and item['component'] == 'device-plugin'
    assert item['problem'] == 'node %s offers 0 of the 2 huawei.com/Ascend310P-2c its vNPU layout declares' % DUO
    assert 'capacity absent, allocatable absent' in item['evidence']
    assert 'restart the device plugin' in item['fix'] and 'vnpu-cfg-recover' in item['fix']
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], _split_duo(1)))
    assert item['problem'].startswith('node %s offers 1 of the 2' % DUO)


def test_unreadable_vnpu_labels_are_a_finding():
    state = _split_duo(2)
    state['nodes'][1]['metadata']['labels']['npu.ascend/vnpu-Ascend310P-2c'] = 'many'
    item = only(doctor.diagnose([node_evidence(), duo_evidence()], state))
    assert 'vNPU labels cannot be read' in item['problem']


def test_a_split_node_whose_only_whole_chip_is_unhealthy_expects_no_whole_npu():
    """klt-a2-01 of the kubelet scenario: NPU 0 split, NPU 1 whole but unhealthy."""
    evidence = duo_evidence()
    first = evidence['npu_smi']['chips'][0]
    evidence['npu_smi']['chips'] = [first, dict(first, chip_id=1, health='Critical')]
    state = _split_duo(2, whole=0)
    state['nodes'][1]['status']['capacity']['huawei.com/Ascend310P'] = '1'
    findings = doctor.diagnose([node_evidence(), evidence], state)
    assert [(item['node'], item['component']) for item in findings] == [(DUO, 'health')]


# --- an Atlas A3: 16 dies, two per NPU, power on chip 0 only (the real 24.1.rc3.7 table) -------

A3 = 'npu-a3-01'
A3_SMI = sample_chips('Ascend910-A3_24.1.rc3.7_info.txt')


def a3_evidence(**changes):
    evidence = node_evidence(A3, smi=A3_SMI, facts=facts('A3', 16, product='Atlas 800T A3'))
    evidence['versions'] = stack_check(cann='8.5.0', driver='25.3.rc1', firmware='7.8.0.2.212', chip_family='A3')
    evidence.update(changes)
    return evidence


def a3_cluster(allocatable=None):
    return cluster(nodes=[k8s_node(A3, 'huawei.com/Ascend910', 16, allocatable=allocatable)],
                   device_plugin_pods=[plugin_pod('910', A3)])


def test_a_healthy_a3_with_16_dies_is_no_finding():
    assert len(A3_SMI['chips']) == 16
    assert [chip['power_w'] is None for chip in A3_SMI['chips']] == [False, True] * 8
    assert doctor.diagnose([a3_evidence()], a3_cluster()) == []


def test_an_unhealthy_a3_die_is_named_by_npu_and_chip():
    evidence = a3_evidence()
    evidence['npu_smi']['chips'][7]['health'] = 'Critical'
    item = only(doctor.diagnose([evidence], a3_cluster(allocatable=15)))
    assert item['component'] == 'health'
    assert item['problem'] == '1 of 16 chips unhealthy'
    assert 'NPU 3 chip 1 Critical' in item['evidence'] and 'capacity 16, allocatable 15' in item['evidence']


def test_a_missing_device_file_of_the_last_a3_die_is_found():
    present = ['/dev/davinci%d' % index for index in range(15)] + ['/dev/davinci_manager']
    item = only(doctor.diagnose([a3_evidence(facts=facts('A3', 16, device_nodes=present))], a3_cluster()))
    assert item['component'] == 'driver' and item['problem'] == 'device files are missing: /dev/davinci15'


def test_an_a3_stack_the_matrix_does_not_know_is_a_finding():
    evidence = a3_evidence(versions=stack_check(cann='8.3.RC1', driver='25.3.rc1', chip_family='A3'))
    item = only(doctor.diagnose([evidence], a3_cluster()))
    assert 'cann 8.3.RC1 with driver 25.3.rc1' in item['problem'] + item['evidence']


def test_zero_npus_explained_by_an_image_the_node_cannot_pull_names_the_registry():
    state = zero_a2()
    state['device_plugin_pods'] = [plugin_pod('910', A2, phase='Pending'), plugin_pod('310p', DUO)]
    state['device_plugin_pods'][0]['status']['containerStatuses'] = [
        {'name': 'device-plugin', 'image': 'registry.example.com:5000/ascend/ascend-k8sdeviceplugin:v7.3.0',
         'state': {'waiting': {'reason': 'ImagePullBackOff', 'message': 'Back-off pulling image: x509: unknown authority'}}}]
    item = only(doctor.diagnose([node_evidence()], state))
    assert item['problem'].endswith('the device plugin pod on the node cannot pull its image')
    assert 'registry.example.com:5000/ascend/ascend-k8sdeviceplugin:v7.3.0 from the registry registry.example.com:5000' \
        in item['evidence'] and 'x509: unknown authority' in item['evidence']
    assert 'certs.d' in item['fix'] and 'images_registry' in item['fix']
