# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Diagnosis of the classic NPU failures from evidence gathered read-only (``playbooks/doctor.yml``).

Input, all plain data:

* one *node evidence* dict per NPU node (what ``roles/doctor`` collects on the node)::

    {'node': 'npu-01',                      # its Node name in the cluster
     'facts': {...} or None,                # ansible_facts.ascend (npu.ascend.ascend_facts)
     'facts_error': '...',
     'npu_smi': {'ok': True, 'chips': [...], 'driver_version': '25.0.rc1.1'}
                or {'ok': False, 'error': 'npu-smi failed (rc=...)...'},
     'runtime': {'containerd': None or {'ok', 'error', 'default_runtime_name', 'runtime'},
                 'docker': None or {'ok', 'error', 'path', 'config_text'}},
     'kubelet': {'path': '/var/lib/kubelet/device-plugins', 'dir_exists': bool, 'socket': bool},
     'versions': {'ok', 'error', 'stack', 'conflicts', 'unknown'},  # npu.ascend.ascend_compat
     'torch_npu': None or {'python', 'version', 'error'}}

* one *cluster evidence* dict (Kubernetes objects as the API returns them)::

    {'available': bool, 'note': 'why not',
     'nodes': [Node], 'daemonsets': [DaemonSet], 'device_plugin_pods': [Pod],
     'runtime_classes': [RuntimeClass], 'pods': [Pod]}   # pods: every pod not Succeeded/Failed

Output: findings ``{node, component, problem, evidence, fix}``, component one of ``driver``,
``npu-smi``, ``device-plugin``, ``scheduling``, ``runtime``, ``versions``, ``health``.

A symptom with several possible causes is explained by the *first* cause that fails, in a fixed
order (a decision tree), so one fault gives one finding: a node whose device plugin advertises no
NPUs is explained by the driver (not installed, reboot pending), then ``npu-smi``, then unhealthy
chips, then the ``/dev/davinci*`` files, then the device plugin DaemonSet (none, no driver mount,
node labels not matching its nodeSelector, no pod on the node), then the kubelet's device-plugins
directory. Pure functions, no I/O, nothing from Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import docker_config
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.k8s import fleet
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import DEFAULT_DOMAIN, label_keys
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import chip_is_healthy
from ansible_collections.npu.ascend.plugins.plugin_utils import kernel_judgement
from ansible_collections.npu.ascend.plugins.plugin_utils import vnpu_plan

COMPONENTS = ('driver', 'npu-smi', 'device-plugin', 'scheduling', 'runtime', 'versions', 'health')
NPU_RESOURCE_PREFIXES = ('huawei.com/',)
NPU_RESOURCES = ('aliyun.com/npu',)
DEFAULT_OPTIONS = {
    'runtime_name': 'ascend',
    'runtime_class': 'ascend',
    'label_domain': DEFAULT_DOMAIN,
    'install_path': '/usr/local/Ascend',
    'device_plugin_namespace': 'kube-system',
}
# Taints the DaemonSet controller _tolerates on its own for every DaemonSet pod.
_DAEMONSET_DEFAULT_TOLERATED = (
    'node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable', 'node.kubernetes.io/disk-pressure',
    'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/unschedulable',
    'node.kubernetes.io/network-unavailable')
_DCMI_FIXES = {
    -8005: 'the NPUs are not started or the driver is not loaded: reboot the node; if npu-smi still fails, '
           'reinstall the driver (npu.ascend.hdk) and read `dmesg` for the driver\'s errors',
}
_ERROR_CODE = re.compile(r'(?:ret is|error code)\s*(-[0-9]+)', re.IGNORECASE)


def finding(node, component, problem, evidence, fix):
    if component not in COMPONENTS:
        raise ValueError('unknown component %r' % (component,))
    return {'node': node, 'component': component, 'problem': problem, 'evidence': evidence, 'fix': fix}


def _is_npu_resource(name):
    return name in NPU_RESOURCES or any(name.startswith(prefix) for prefix in NPU_RESOURCE_PREFIXES)


def _quantity(value):
    """An extended resource _quantity (always whole) as an int; None when absent."""
    if value is None:
        return None
    text = str(value).strip()
    if not re.match(r'^[0-9]+$', text):
        raise ValueError('resource _quantity %r is not a whole number' % (value,))
    return int(text)


def _meta(obj, key, default=None):
    return ((obj or {}).get('metadata') or {}).get(key, default)


def _spec(obj):
    return (obj or {}).get('spec') or {}


def _status(obj):
    return (obj or {}).get('status') or {}


def _pod_name(pod):
    return '%s/%s' % (_meta(pod, 'namespace', 'default'), _meta(pod, 'name'))


def _format_map(values):
    return ', '.join('%s=%s' % (key, values[key]) for key in sorted(values)) or 'none'


def _format_taint(taint):
    value = taint.get('value')
    return '%s%s:%s' % (taint.get('key', ''), ('=' + value) if value else '', taint.get('effect', ''))


def _selector_matches(selector, labels):
    """A nodeSelector (plain key: value map) against a Node's labels."""
    labels = labels or {}
    return all(labels.get(key) == value for key, value in (selector or {}).items())


def _tolerates(toleration, taint):
    """Kubernetes' rule: does one toleration tolerate one taint."""
    effect = toleration.get('effect')
    if effect and effect != taint.get('effect'):
        return False
    operator = toleration.get('operator') or 'Equal'
    key = toleration.get('key')
    if not key:
        return operator == 'Exists'
    if key != taint.get('key'):
        return False
    if operator == 'Exists':
        return True
    return (toleration.get('value') or '') == (taint.get('value') or '')


def _untolerated_taints(tolerations, taints, daemonset=False):
    """The NoSchedule/NoExecute taints that none of ``tolerations`` _tolerates."""
    blocking = []
    for taint in taints or []:
        if taint.get('effect') not in ('NoSchedule', 'NoExecute'):
            continue
        if daemonset and taint.get('key') in _DAEMONSET_DEFAULT_TOLERATED:
            continue
        if not any(_tolerates(toleration, taint) for toleration in tolerations or []):
            blocking.append(taint)
    return blocking


def _pod_npu_requests(pod):
    """``{resource: count}`` of the NPU resources a pod asks for (requests, else limits)."""
    spec = _spec(pod)
    totals = {}
    for container in spec.get('containers') or []:
        resources = container.get('resources') or {}
        wanted = dict(resources.get('limits') or {})
        wanted.update(resources.get('requests') or {})
        for name, value in wanted.items():
            if _is_npu_resource(name):
                totals[name] = totals.get(name, 0) + _quantity(value)
    for container in spec.get('initContainers') or []:
        resources = container.get('resources') or {}
        wanted = dict(resources.get('limits') or {})
        wanted.update(resources.get('requests') or {})
        for name, value in wanted.items():
            if _is_npu_resource(name):
                totals[name] = max(totals.get(name, 0), _quantity(value))
    return dict((name, count) for name, count in totals.items() if count > 0)


def _condition(obj, kind):
    for condition in _status(obj).get('conditions') or []:
        if condition.get('type') == kind:
            return condition
    return None


def _node_resource(node, resource):
    capacity = _quantity((_status(node).get('capacity') or {}).get(resource))
    allocatable = _quantity((_status(node).get('allocatable') or {}).get(resource))
    return capacity, allocatable


def _node_npu_resources(node):
    capacity = _status(node).get('capacity') or {}
    return dict((name, _quantity(value)) for name, value in capacity.items() if _is_npu_resource(name))


def _error_code(text):
    match = _ERROR_CODE.search(text or '')
    return int(match.group(1)) if match else None


def _installed(facts, component):
    return ((facts or {}).get('installed') or {}).get(component)


class _Context(object):
    """Indexes over the cluster evidence."""

    def __init__(self, cluster, options):
        self.options = options
        cluster = cluster or {}
        self.available = bool(cluster.get('available'))
        self.note = cluster.get('note') or ''
        self.nodes = dict((_meta(node, 'name'), node) for node in cluster.get('nodes') or [])
        self.daemonsets = list(cluster.get('daemonsets') or [])
        self.device_plugin_pods = list(cluster.get('device_plugin_pods') or [])
        self.runtime_classes = dict((_meta(item, 'name'), item) for item in cluster.get('runtime_classes') or [])
        self.pods = list(cluster.get('pods') or [])

    def used(self, node_name, resource):
        """NPUs of ``resource`` held on ``node_name`` by pods bound there, with who holds them."""
        total = 0
        holders = []
        for pod in self.pods:
            if _spec(pod).get('nodeName') != node_name:
                continue
            if _status(pod).get('phase') in ('Succeeded', 'Failed'):
                continue
            count = _pod_npu_requests(pod).get(resource, 0)
            if count:
                total += count
                holders.append('%s (%d)' % (_pod_name(pod), count))
        return total, holders


def _driver_cause(name, evidence):
    facts = evidence.get('facts')
    if not facts:
        return finding(name, 'driver', 'the node\'s Ascend facts could not be read',
                       evidence.get('facts_error') or 'npu.ascend.ascend_facts returned nothing',
                       'run `ansible -m npu.ascend.ascend_facts %s` and fix what it reports' % name)
    if not _installed(facts, 'driver'):
        return finding(name, 'driver', 'the NPU driver is not installed',
                       'no %s/driver/version.info' % evidence.get('install_path', '/usr/local/Ascend'),
                       'install it with npu.ascend.site (role npu.ascend.hdk, hdk_driver_version)')
    if facts.get('reboot_pending'):
        reasons = ', '.join('%s %s' % (reason.get('component'), reason.get('version'))
                            for reason in facts.get('reboot_reasons') or []) or 'an installer asked for it'
        return finding(name, 'driver', 'a reboot is pending: the installed driver/firmware is not running yet',
                       'reboot pending since: %s' % reasons,
                       'reboot the node (npu.ascend.site does it with hdk_reboot_policy: auto)')
    if not facts.get('npu_smi_path'):
        return finding(name, 'driver', 'the driver is installed without npu-smi (an incomplete install)',
                       'driver %s installed, no npu-smi in /usr/local/sbin or /usr/local/bin'
                       % _installed(facts, 'driver').get('version'),
                       'reinstall the driver (npu.ascend.hdk)')
    problem = kernel_judgement.kernel_problem(facts, evidence.get('install_path'))
    if problem and problem['kind'] == 'running':
        return finding(name, 'driver', 'kernel changed, driver modules missing', problem['detail'], problem['fix'])
    return None


def _next_kernel_findings(name, evidence, reported):
    """The kernel the next boot takes has no NPU modules: nothing is wrong yet, the NPUs go at that reboot."""
    problem = kernel_judgement.kernel_problem(evidence.get('facts'), evidence.get('install_path'))
    if 'driver' in reported or not problem or problem['kind'] != 'next':
        return []
    return [finding(name, 'driver', 'the kernel the next boot takes has no NPU driver modules',
                    problem['detail'], problem['fix'])]


def _npu_smi_cause(name, evidence):
    smi = evidence.get('npu_smi') or {}
    if smi.get('ok'):
        return None
    error = smi.get('error') or 'npu-smi info failed without a message'
    code = _error_code(error)
    fix = _DCMI_FIXES.get(code) or ('check that the driver is loaded (`lsmod | grep drv_davinci`, /dev/davinci*) and '
                                    'read /var/log/npu/ for npu-smi\'s own log; reinstall the driver if it stays')
    return finding(name, 'npu-smi', '`npu-smi info` fails', error, fix)


def _chips(evidence):
    smi = evidence.get('npu_smi') or {}
    return list(smi.get('chips') or []) if smi.get('ok') else []


def _describe_chip(chip):
    return 'NPU %s chip %s %s' % (chip.get('npu_id'), chip.get('chip_id'), chip.get('health'))


def _all_unhealthy_cause(name, evidence):
    chips = _chips(evidence)
    if chips and not any(chip_is_healthy(chip) for chip in chips):
        return finding(name, 'health', 'no chip is healthy, so none is advertised',
                       'npu-smi info: ' + '; '.join(_describe_chip(chip) for chip in chips),
                       _health_fix(chips))


def _health_fix(chips):
    chip = chips[0]
    return ('read the alarm with `npu-smi info -t health -i %s -c %s`; when the chip is idle, reset it with '
            '`npu-smi set -t reset -i %s -c %s`; a chip that stays unhealthy needs the card replaced (cordon the '
            'node meanwhile)' % (chip.get('npu_id'), chip.get('chip_id'), chip.get('npu_id'), chip.get('chip_id')))


def _device_files_cause(name, evidence):
    facts = evidence.get('facts') or {}
    present = list(facts.get('device_nodes') or [])
    chips = _chips(evidence)
    count = len(chips) if chips else int(facts.get('npu_count') or 0)
    expected = ['/dev/davinci%d' % index for index in range(count)] + ['/dev/davinci_manager']
    missing = [path for path in expected if path not in present]
    if not missing:
        return None
    return finding(name, 'driver', 'device files are missing: %s' % ', '.join(missing),
                   'expected %s for %d chips; present: %s' % (', '.join(expected), count,
                                                              ', '.join(present) or 'none'),
                   'the driver creates them when it loads: reboot the node (or reload the driver); if they stay '
                   'missing, reinstall the driver (npu.ascend.hdk) and read `dmesg`')


def _driver_dir(options):
    return options['install_path'].rstrip('/') + '/driver'


def _host_paths(daemonset):
    template = _spec(_spec(daemonset).get('template'))
    mounted = set()
    for container in template.get('containers') or []:
        for mount in container.get('volumeMounts') or []:
            mounted.add(mount.get('name'))
    paths = []
    for volume in template.get('volumes') or []:
        host_path = (volume.get('hostPath') or {}).get('path')
        if host_path and volume.get('name') in mounted:
            paths.append(host_path.rstrip('/') or '/')
    return paths


def _expression_holds(expression, labels):
    key, operator = expression.get('key'), expression.get('operator')
    values = expression.get('values') or []
    if operator == 'In':
        return labels.get(key) in values
    if operator == 'NotIn':
        return labels.get(key) not in values
    if operator == 'Exists':
        return key in labels
    if operator == 'DoesNotExist':
        return key not in labels
    # Gt/Lt compare integers.
    try:
        number = int(labels.get(key))
        return number > int(values[0]) if operator == 'Gt' else number < int(values[0])
    except (TypeError, ValueError, IndexError):
        return False


def _affinity_excludes(pod_spec, labels):
    """The required node affinity terms of a pod spec that reject ``labels``; [] when the node is accepted."""
    required = (((pod_spec.get('affinity') or {}).get('nodeAffinity') or {})
                .get('requiredDuringSchedulingIgnoredDuringExecution') or {})
    terms = required.get('nodeSelectorTerms') or []
    if not terms:
        return []
    failing = []
    for term in terms:
        broken = [expression for expression in term.get('matchExpressions') or []
                  if not _expression_holds(expression, labels or {})]
        if not broken:
            return []
        failing.extend(broken)
    return failing


def _ds_selector(daemonset):
    return _spec(_spec(daemonset).get('template')).get('nodeSelector') or {}


def _ds_name(daemonset):
    return '%s/%s' % (_meta(daemonset, 'namespace', 'default'), _meta(daemonset, 'name'))


def _device_plugin_causes(name, evidence, context):
    """Device plugin DaemonSet, its driver mount, the node labels, its pod, the kubelet directory."""
    options = context.options
    facts = evidence.get('facts') or {}
    node = context.nodes.get(name) or {}
    labels = _meta(node, 'labels') or {}
    accelerator = facts.get('accelerator_label')
    if not context.daemonsets:
        return finding(name, 'device-plugin', 'no device plugin DaemonSet runs in the cluster',
                       'no DaemonSet labelled app.kubernetes.io/name=ascend-device-plugin in namespace %s'
                       % options['device_plugin_namespace'],
                       'deploy it with npu.ascend.kubernetes (role npu.ascend.device_plugin)')
    intended = [ds for ds in context.daemonsets if accelerator and _ds_selector(ds).get('accelerator') == accelerator]
    intended = intended or [ds for ds in context.daemonsets if _selector_matches(_ds_selector(ds), labels)]
    intended = intended or context.daemonsets
    driver_dir = _driver_dir(options)
    mounting = [ds for ds in intended
                if any(driver_dir == path or driver_dir.startswith(path.rstrip('/') + '/') for path in _host_paths(ds))]
    if not mounting:
        return finding(name, 'device-plugin', 'the device plugin DaemonSet does not mount the driver directory %s'
                       % driver_dir,
                       '; '.join('%s mounts hostPath %s' % (_ds_name(ds), ', '.join(_host_paths(ds)) or 'nothing')
                                 for ds in intended),
                       'redeploy it with npu.ascend.device_plugin (device_plugin_install_path must be the driver\'s '
                       'install path), or add a read-only hostPath volume %s mounted at the same path' % driver_dir)
    selecting = [ds for ds in mounting if _selector_matches(_ds_selector(ds), labels)]
    if not selecting:
        gaps = []
        for ds in mounting:
            wrong = ['%s=%s (node has %s)' % (key, value, labels.get(key, 'no such label'))
                     for key, value in sorted(_ds_selector(ds).items()) if labels.get(key) != value]
            gaps.append('%s selects %s' % (_ds_name(ds), '; '.join(wrong)))
        fix = 'label the node with npu.ascend.kubernetes (role npu.ascend.k8s_node sets accelerator from the chip)'
        if accelerator:
            fix += ', or `kubectl label node %s accelerator=%s`' % (name, accelerator)
        return finding(name, 'device-plugin', 'the node\'s labels do not match the device plugin DaemonSet\'s '
                       'nodeSelector, so no device plugin runs there', '; '.join(gaps), fix)
    own = set(_meta(ds, 'name') for ds in selecting)
    pods = [pod for pod in context.device_plugin_pods
            if _spec(pod).get('nodeName') == name
            and any(ref.get('kind') == 'DaemonSet' and ref.get('name') in own
                    for ref in _meta(pod, 'ownerReferences') or [])]
    running = [pod for pod in pods if _status(pod).get('phase') == 'Running']
    if not running:
        template = _spec(_spec(selecting[0]).get('template'))
        excluded = _affinity_excludes(template, labels)
        if excluded:
            expression = excluded[0]
            paused = expression.get('operator') == 'NotIn' and labels.get(expression.get('key')) in (
                expression.get('values') or [])
            return finding(name, 'device-plugin', 'the device plugin DaemonSet\'s node affinity keeps it off the node%s'
                           % (' (paused, as during a driver upgrade)' if paused else ''),
                           '%s requires %s; node has %s=%s' % (
                               _ds_name(selecting[0]),
                               ', '.join('%s %s %s' % (item.get('key'), item.get('operator'), item.get('values') or '')
                                         for item in excluded),
                               expression.get('key'), labels.get(expression.get('key'), '<absent>')),
                           ('finish the upgrade (playbooks/upgrade.yml removes the label), or remove the label: '
                            '`kubectl label node %s %s-`' % (name, expression.get('key'))) if paused else
                           'label the node so that it satisfies the affinity, or change the DaemonSet\'s affinity')
        tolerations = template.get('tolerations') or []
        blocking = _untolerated_taints(tolerations, _spec(node).get('taints'), daemonset=True)
        if blocking:
            return finding(name, 'device-plugin', 'the device plugin DaemonSet does not tolerate the node\'s taint',
                           'node taints %s; %s _tolerates %s' % (
                               ', '.join(_format_taint(taint) for taint in blocking), _ds_name(selecting[0]),
                               json.dumps(tolerations, sort_keys=True)),
                           'add the taint to device_plugin_extra_tolerations and rerun npu.ascend.device_plugin, '
                           'or remove the taint: `kubectl taint node %s %s:%s-`' % (
                               name, blocking[0].get('key'), blocking[0].get('effect')))
        pull_problems = [fleet.image_pull_problem(status, _spec(pod)) for pod in pods
                         for status in _status(pod).get('containerStatuses') or []]
        pull_problems = [problem for problem in pull_problems if problem]
        if pull_problems:
            return finding(name, 'device-plugin', 'the device plugin pod on the node cannot pull its image',
                           '; '.join(pull_problems), fleet.IMAGE_PULL_FIX)
        if pods:
            states = []
            for pod in pods:
                waiting = [status.get('state', {}).get('waiting', {}).get('reason')
                           for status in _status(pod).get('containerStatuses') or []]
                states.append('%s %s%s' % (_pod_name(pod), _status(pod).get('phase', 'Unknown'),
                                           (' (' + ', '.join(reason for reason in waiting if reason) + ')')
                                           if any(waiting) else ''))
            return finding(name, 'device-plugin', 'the device plugin pod on the node is not running',
                           '; '.join(states),
                           'read `kubectl -n %s describe pod %s` and its log' % (
                               _meta(pods[0], 'namespace'), _meta(pods[0], 'name')))
        return finding(name, 'device-plugin', 'no device plugin pod runs on the node',
                       '%s selects the node (%s) but has no pod on it' % (
                           ', '.join(_ds_name(ds) for ds in selecting), _format_map(_ds_selector(selecting[0]))),
                       'read `kubectl -n %s describe daemonset %s` (events, node affinity) and the node\'s events'
                       % (_meta(selecting[0], 'namespace'), _meta(selecting[0], 'name')))
    kubelet = evidence.get('kubelet') or {}
    if kubelet and not (kubelet.get('dir_exists') and kubelet.get('socket')):
        path = kubelet.get('path') or '/var/lib/kubelet/device-plugins'
        return finding(name, 'device-plugin', 'the kubelet\'s device-plugins socket is missing, so the plugin '
                       'cannot register',
                       '%s %s' % (path, 'has no kubelet.sock' if kubelet.get('dir_exists') else 'does not exist'),
                       'check that the kubelet runs with its root dir at %s (`systemctl status kubelet`), restart it, '
                       'then restart the device plugin pod' % path.rsplit('/device-plugins', 1)[0])
    return None


def _capacity_findings(name, evidence, context, reported):
    """The node advertises no NPU (allocatable 0): the first failing cause explains it."""
    facts = evidence.get('facts') or {}
    resource = facts.get('k8s_resource_name')
    node = context.nodes.get(name)
    if not resource or node is None:
        return []
    capacity, allocatable = _node_resource(node, resource)
    if allocatable or _all_chips_split(node, evidence, context):
        return []
    symptom = 'node %s advertises no %s (capacity %s, allocatable %s)' % (
        name, resource, capacity if capacity is not None else 'absent',
        allocatable if allocatable is not None else 'absent')
    for key, cause in (('driver', lambda: _driver_cause(name, evidence)),
                       ('npu-smi', lambda: _npu_smi_cause(name, evidence)),
                       ('health', lambda: _all_unhealthy_cause(name, evidence)),
                       ('device-files', lambda: _device_files_cause(name, evidence)),
                       ('device-plugin', lambda: _device_plugin_causes(name, evidence, context))):
        result = cause()
        if result is not None:
            reported.add(key)
            result['problem'] = '%s: %s' % (symptom, result['problem'])
            return [result]
    return [finding(name, 'device-plugin', symptom + ', and none of the usual causes shows',
                    'driver, npu-smi, /dev/davinci*, the DaemonSet, its pod and the kubelet socket look fine',
                    'read the device plugin\'s log (/var/log/mindx-dl/devicePlugin/devicePlugin.log on the node, '
                    '`failed to get card list` or `dcmi init failed` point at the driver)')]


def _split_chips(node, context):
    labels = _meta(node, 'labels') or {}
    value = labels.get('%s/%s%s' % (context.options['label_domain'], vnpu_plan.LABEL_PREFIX, vnpu_plan.CHIPS_LABEL))
    try:
        return int(value or 0)
    except ValueError:
        return 0


def _all_chips_split(node, evidence, context):
    """No whole NPU is expected: as many chips are split into static vNPUs (npu.ascend.vnpu's labels)
    as npu-smi lists healthy ones. The labels count the split chips without naming them, so a node
    whose split chip is the unhealthy one is taken as expecting none either."""
    split = _split_chips(node, context)
    healthy = [chip for chip in _chips(evidence) if chip_is_healthy(chip)]
    return split > 0 and split >= len(healthy)


def _vnpu_findings(name, context):
    """A vNPU resource that the node's layout declares (npu.ascend.vnpu labels the Node) and its kubelet does
    not offer: the device plugin not restarted after the change, or the vNPUs lost at a reboot."""
    node = context.nodes.get(name)
    if node is None:
        return []
    domain = context.options['label_domain']
    try:
        expected = vnpu_plan.expected_allocatable(None, 0, _meta(node, 'labels') or {}, domain)
    except ValueError as error:
        return [finding(name, 'device-plugin', 'its vNPU labels cannot be read', str(error),
                        'run npu.ascend.vnpu again (tag vnpu of npu.ascend.site), which writes them')]
    findings = []
    for resource, count in sorted(expected.items()):
        capacity, allocatable = _node_resource(node, resource)
        if (allocatable or 0) >= count:
            continue
        findings.append(finding(
            name, 'device-plugin',
            'node %s offers %s of the %d %s its vNPU layout declares' % (name, allocatable or 0, count, resource),
            'label %s/%s%s=%d; capacity %s, allocatable %s' % (
                domain, vnpu_plan.LABEL_PREFIX, resource.split('/', 1)[1], count,
                capacity if capacity is not None else 'absent', allocatable if allocatable is not None else 'absent'),
            'restart the device plugin on the node (it reads the vNPUs only when it starts: delete its pod, or '
            'restart its service); if `npu-smi info -t info-vnpu -i <npu> -c <chip>` lists fewer vNPUs, they were '
            'lost (a reboot with vnpu-cfg-recover off): run npu.ascend.vnpu (tag vnpu of npu.ascend.site)'))
    return findings


def _health_findings(name, evidence, context, reported):
    if 'health' in reported:
        return []
    chips = _chips(evidence)
    sick = [chip for chip in chips if not chip_is_healthy(chip)]
    if not sick:
        return []
    extra = ''
    resource = (evidence.get('facts') or {}).get('k8s_resource_name')
    node = context.nodes.get(name)
    if resource and node is not None:
        capacity, allocatable = _node_resource(node, resource)
        extra = '; %s capacity %s, allocatable %s' % (resource, capacity, allocatable)
    return [finding(name, 'health', '%d of %d chips unhealthy' % (len(sick), len(chips)),
                    'npu-smi info: ' + '; '.join(_describe_chip(chip) for chip in sick) + extra,
                    _health_fix(sick))]


def _runtime_findings(name, evidence, context):
    options = context.options
    facts = evidence.get('facts') or {}
    runtime_name = options['runtime_name']
    findings = []
    if not _installed(facts, 'docker_runtime'):
        return [finding(name, 'runtime', 'the Ascend Docker Runtime is not installed, so containers get no '
                        '/dev/davinci* or driver files',
                        'no %s/Ascend-Docker-Runtime/ascend_docker_runtime_install.info'
                        % options['install_path'],
                        'install it with npu.ascend.site (role npu.ascend.container_runtime)')]
    runtime = evidence.get('runtime') or {}
    runtime_class = context.runtime_classes.get(options['runtime_class']) if context.available else None
    engines = []
    containerd = runtime.get('containerd')
    if containerd is not None:
        if not containerd.get('ok'):
            findings.append(finding(name, 'runtime', 'containerd\'s effective configuration cannot be read',
                                    containerd.get('error') or 'containerd config dump failed',
                                    'run `containerd config dump` on the node and fix the config it complains about'))
        else:
            engines.append(('containerd', 'containerd config dump', containerd.get('default_runtime_name'),
                            containerd.get('runtime'),
                            'restart containerd (`systemctl restart containerd`), or rerun npu.ascend.container_runtime'))
    docker = runtime.get('docker')
    if docker is not None:
        text = docker.get('config_text')
        path = docker.get('path') or '/etc/docker/daemon.json'
        try:
            default, entry = docker_config.effective_runtime(text or '', runtime_name)
        except docker_config.DockerConfigError as error:
            findings.append(finding(name, 'runtime', 'Docker\'s %s cannot be read' % path, str(error),
                                    'fix the JSON (`dockerd --validate --config-file %s`)' % path))
        else:
            engines.append(('docker', path if text is not None else path + ' (absent)', default, entry,
                            'rerun npu.ascend.container_runtime, then restart Docker'))
    for engine, source, default, entry, fix in engines:
        if entry is None:
            findings.append(finding(name, 'runtime', 'the %s runtime is not registered with %s, so its containers '
                                    'get no NPU' % (runtime_name, engine),
                                    '%s has no runtime %s (default runtime %s)' % (source, runtime_name, default),
                                    'register it with npu.ascend.container_runtime (npu.ascend.site); ' + fix))
        elif default != runtime_name and context.available and runtime_class is None:
            findings.append(finding(name, 'runtime', '%s is not %s\'s default runtime and there is no RuntimeClass '
                                    '%s, so no pod gets /dev/davinci*'
                                    % (runtime_name, engine, options['runtime_class']),
                                    '%s: default runtime %s' % (source, default),
                                    'set container_runtime_default: true and rerun npu.ascend.container_runtime, or '
                                    'create the RuntimeClass with npu.ascend.k8s_node and give pods '
                                    'runtimeClassName: %s' % options['runtime_class']))
    if context.available:
        findings.extend(_runtime_class_findings(name, context))
    return findings


def _runtime_class_findings(name, context):
    options = context.options
    wanted = options['runtime_class']
    runtime_class = context.runtime_classes.get(wanted)
    if runtime_class is None:
        return [finding(name, 'runtime', 'the RuntimeClass %s is missing: pods with runtimeClassName: %s are '
                        'refused' % (wanted, wanted),
                        'RuntimeClasses in the cluster: %s' % (', '.join(sorted(context.runtime_classes)) or 'none'),
                        'create it with npu.ascend.kubernetes (role npu.ascend.k8s_node)')]
    findings = []
    handler = runtime_class.get('handler')
    if handler != options['runtime_name']:
        findings.append(finding(name, 'runtime', 'the RuntimeClass %s names handler %s, not the registered runtime %s'
                                % (wanted, handler, options['runtime_name']),
                                'RuntimeClass %s handler=%s' % (wanted, handler),
                                'set k8s_node_runtime_handler to %s and rerun npu.ascend.k8s_node'
                                % options['runtime_name']))
    selector = ((runtime_class.get('scheduling') or {}).get('nodeSelector') or {})
    node = context.nodes.get(name)
    if node is not None and not _selector_matches(selector, _meta(node, 'labels')):
        labels = _meta(node, 'labels') or {}
        findings.append(finding(name, 'runtime', 'pods with runtimeClassName: %s cannot land on the node: it lacks the '
                                'labels the RuntimeClass selects' % wanted,
                                'RuntimeClass %s selects %s; node has %s' % (
                                    wanted, _format_map(selector),
                                    _format_map(dict((key, labels.get(key, '<absent>')) for key in selector))),
                                'relabel the node with npu.ascend.k8s_node (it sets the runtime-handler label when the '
                                'Ascend Docker Runtime is installed)'))
    return findings


def _version_findings(name, evidence, reported):
    findings = []
    versions = evidence.get('versions') or {}
    torch = evidence.get('torch_npu')
    if torch and not torch.get('version'):
        findings.append(finding(name, 'versions', 'torch_npu is not installed for %s' % torch.get('python'),
                                torch.get('error') or 'pip show torch_npu printed no version',
                                'install the torch_npu that fits the node\'s CANN into that Python, or unset '
                                'doctor_python'))
    if versions.get('error'):
        findings.append(finding(name, 'versions', 'the versions could not be checked against the matrix',
                                versions['error'], 'read the error; npu.ascend.ascend_compat runs the same check'))
    stack = versions.get('stack') or {}
    for conflict in versions.get('conflicts') or []:
        pair = conflict.get('pair') or []
        have = conflict.get('have') or {}
        needed = pair[-1] if pair else 'component'
        findings.append(finding(
            name, 'versions', '%s do not fit' % ' with '.join('%s %s' % (part, have.get(part)) for part in pair),
            'installed stack: %s; source: %s' % (_format_map(dict((key, value) for key, value in stack.items()
                                                                  if value is not None)), conflict.get('source')),
            'install a %s that fits: %s (npu.ascend.site), or add a row to doctor_compat_extra_rows if you have '
            'validated this combination' % (needed, ' or '.join(conflict.get('fits') or []))))
    # A pair no row speaks about is not known to work: the gate refuses it, so the doctor names it.
    for entry in versions.get('unknown') or []:
        pair = entry.get('pair') or []
        have = entry.get('have') or {}
        findings.append(finding(
            name, 'versions', '%s is not in the compatibility matrix' % ' with '.join(
                '%s %s' % (part, have.get(part)) for part in pair),
            'installed stack: %s; %s' % (
                _format_map(dict((key, value) for key, value in stack.items() if value is not None)),
                ('rows for %s %s: %s' % (pair[0], have.get(pair[0]), '; '.join(entry['rows'])))
                if pair and entry.get('rows') else 'no row for this release'),
            'install a documented pair (npu.ascend.site refuses this one), or add a row to doctor_compat_extra_rows '
            '(and preflight_compat_extra_rows) with the source that validates it'))
    facts = evidence.get('facts') or {}
    driver = _installed(facts, 'driver')
    smi = evidence.get('npu_smi') or {}
    if driver and smi.get('ok') and smi.get('driver_version') and 'driver' not in reported \
            and str(smi['driver_version']).lower() != str(driver.get('version')).lower():
        findings.append(finding(name, 'driver', 'the running driver is not the installed one',
                                'npu-smi reports driver %s; %s/driver/version.info says %s'
                                % (smi['driver_version'], evidence.get('install_path', '/usr/local/Ascend'),
                                   driver.get('version')),
                                'reboot the node so that the installed driver loads'))
    return findings


def _node_findings(evidence, context):
    name = evidence.get('node')
    facts = evidence.get('facts')
    if facts and not facts.get('npu_count'):
        return [finding(name, 'driver', 'no Ascend NPU on the PCI bus',
                        'pci source %s: no device of vendor 19e5 class 1200' % facts.get('pci_source'),
                        'check that the cards are seated and enabled in the BIOS (`lspci -d 19e5:`), or remove the '
                        'host from npu_nodes')]
    findings = []
    reported = set()
    if context.available:
        if name not in context.nodes:
            findings.append(finding(name, 'scheduling', 'the cluster has no Node named %s' % name,
                                    'Nodes: %s' % (', '.join(sorted(context.nodes)) or 'none'),
                                    'join the host to the cluster, or set npu_ascend_k8s_node_name to its Node\'s name'))
        else:
            findings.extend(_capacity_findings(name, evidence, context, reported))
            if 'driver' in reported:
                # Nothing further down works without a running driver.
                return findings
            if not reported:
                findings.extend(_vnpu_findings(name, context))
    # A chain: a later cause is only a consequence of an earlier one (no driver loaded, no device files).
    for key, cause in (('driver', _driver_cause), ('npu-smi', _npu_smi_cause),
                       ('device-files', _device_files_cause)):
        if key in reported:
            break
        result = cause(name, evidence)
        if result is not None:
            reported.add(key)
            findings.append(result)
            if key == 'driver':
                # Nothing further down works without a running driver.
                return findings
            break
    findings.extend(_next_kernel_findings(name, evidence, reported))
    findings.extend(_health_findings(name, evidence, context, reported))
    findings.extend(_runtime_findings(name, evidence, context))
    findings.extend(_version_findings(name, evidence, reported))
    findings.extend(_fabric_findings(name, evidence))
    return findings


def _resources_text():
    """``huawei.com/Ascend910 for the 910, 910b and A3 chips, ...``: the hardware catalogue's resources."""
    families = {}
    for row in hardware_catalogue.CHIP_FAMILIES:
        if row['k8s_resource']:
            families.setdefault(row['k8s_resource'], []).append(row['family'])
    return ', '.join('%s for the %s chips' % (resource, _and_joined(names)) for resource, names in families.items())


def _and_joined(names):
    """``a, b and c``."""
    return ', '.join(names[:-1]) + ' and ' + names[-1] if len(names) > 1 else names[0]


_RESOURCES_TEXT = _resources_text()


def _similar_resources(resource, published):
    """Published NPU resources a request for ``resource`` was probably meant to be."""
    domain = resource.split('/', 1)[0]
    same_domain = [name for name in published if name.split('/', 1)[0] == domain]
    related = [name for name in same_domain if resource.startswith(name) or name.startswith(resource)]
    return related or same_domain or list(published)


def _node_pin(pod):
    selector = _spec(pod).get('nodeSelector') or {}
    return selector.get('kubernetes.io/hostname')


def _node_block(pod, node_name, node, resource, count, context):
    """Why ``pod`` cannot get ``count`` of ``resource`` on one node, as (problem, evidence, fix), or None."""
    labels = _meta(node, 'labels') or {}
    keys = label_keys(context.options['label_domain'])
    upgrade = labels.get(keys['upgrade_state'])
    if _spec(node).get('unschedulable'):
        fix = ('wait until the upgrade finishes (%s=%s) or finish it' % (keys['upgrade_state'], upgrade) if upgrade else
               '`kubectl uncordon %s` once the node is ready again' % node_name)
        return ('node %s is cordoned' % node_name,
                'spec.unschedulable=true%s' % ((', %s=%s' % (keys['upgrade_state'], upgrade)) if upgrade else ''), fix)
    blocking = _untolerated_taints(_spec(pod).get('tolerations'), _spec(node).get('taints'))
    if blocking:
        taint = blocking[0]
        text = ', '.join(_format_taint(item) for item in blocking)
        if taint.get('key') == keys['unvalidated']:
            fix = ('the node is not validated yet: run npu.ascend.kubernetes (role npu.ascend.validate) to validate '
                   'it and lift the taint')
        else:
            fix = ('add a toleration {key: %s, operator: Exists, effect: %s} to the pod, or remove the taint: '
                   '`kubectl taint node %s %s:%s-`'
                   % (taint.get('key'), taint.get('effect'), node_name, taint.get('key'), taint.get('effect')))
        return ('node %s has a taint the pod does not tolerate' % node_name,
                'taints %s; pod tolerations %s'
                % (text, json.dumps(_spec(pod).get('tolerations') or [], sort_keys=True)), fix)
    capacity, allocatable = _node_resource(node, resource)
    allocatable = allocatable or 0
    used, holders = context.used(node_name, resource)
    free = max(allocatable - used, 0)
    if count > free:
        evidence = 'requests %d %s; node %s: capacity %s, allocatable %d, in use %d%s, free %d' % (
            count, resource, node_name, capacity, allocatable, used,
            (' by ' + ', '.join(holders)) if holders else '', free)
        if count > allocatable:
            fix = ('no node has %d %s to give: request at most %d per pod, or split the job over more pods'
                   % (count, resource, allocatable))
            if capacity and allocatable < capacity:
                fix += ' (%d chips are not allocatable: see the health findings)' % (capacity - allocatable)
        else:
            fix = ('wait for the pods holding NPUs to finish, delete one of them, or request at most %d' % free)
        return ('node %s has only %d free %s, the pod requests %d' % (node_name, free, resource, count),
                evidence, fix)
    return None


def _pending_findings(context):
    findings = []
    published = {}
    for node_name, node in context.nodes.items():
        for resource, capacity in _node_npu_resources(node).items():
            if capacity:
                published.setdefault(resource, []).append(node_name)
    for pod in context.pods:
        if _status(pod).get('phase') != 'Pending' or _spec(pod).get('nodeName'):
            continue
        scheduled = _condition(pod, 'PodScheduled') or {}
        if scheduled.get('status') != 'False':
            continue
        requests = _pod_npu_requests(pod)
        if not requests:
            continue
        message = scheduled.get('message') or scheduled.get('reason') or 'no scheduler message'
        pod_name = _pod_name(pod)
        pin = _node_pin(pod)
        explained = False
        for resource, count in sorted(requests.items()):
            if resource not in published:
                similar = _similar_resources(resource, sorted(published))
                nodes = sorted(set(node for name in similar for node in published[name]))
                target = pin if pin else (nodes[0] if nodes else '')
                findings.append(finding(
                    target, 'scheduling', 'pod %s requests %s, which no node advertises' % (pod_name, resource),
                    'pod requests %s: %d; nodes advertise %s; scheduler: %s' % (
                        resource, count, '; '.join('%s on %s' % (name, ', '.join(sorted(published[name])))
                                                   for name in sorted(published)) or 'no NPU resource', message),
                    ('request %s instead (Huawei\'s device plugin advertises %s)' % (similar[0], _RESOURCES_TEXT))
                    if similar else 'deploy the device plugin for the node\'s NPUs (npu.ascend.kubernetes)'))
                explained = True
                break
            selector = _spec(pod).get('nodeSelector') or {}
            candidates = [name for name in sorted(published[resource])
                          if _selector_matches(selector, _meta(context.nodes[name], 'labels'))]
            if not candidates:
                target = pin or sorted(published[resource])[0]
                findings.append(finding(
                    target, 'scheduling', 'pod %s selects no node that advertises %s' % (pod_name, resource),
                    'nodeSelector %s; %s advertised by %s; scheduler: %s' % (
                        _format_map(selector), resource, ', '.join(sorted(published[resource])), message),
                    'fix the pod\'s nodeSelector, or label the node that should run it'))
                explained = True
                break
            blocks = []
            for name in candidates:
                block = _node_block(pod, name, context.nodes[name], resource, count, context)
                if block is None:
                    blocks = []
                    break
                blocks.append((name, block))
            for name, (problem, evidence, fix) in blocks:
                findings.append(finding(name, 'scheduling', 'pod %s is Pending: %s' % (pod_name, problem),
                                        '%s; scheduler: %s' % (evidence, message), fix))
                explained = True
            if explained:
                break
        if not explained:
            target = pin or ''
            if not target:
                for resource in sorted(requests):
                    target = target or (sorted(published.get(resource) or [''])[0])
            findings.append(finding(target, 'scheduling', 'pod %s is Pending although its NPUs fit' % pod_name,
                                    'requests %s; scheduler: %s' % (_format_map(requests), message),
                                    'the scheduler blocks it for something else (CPU, memory, affinity): read '
                                    '`kubectl -n %s describe pod %s`'
                                    % (_meta(pod, 'namespace', 'default'), _meta(pod, 'name'))))
    return findings


def merge_options(options=None):
    merged = dict(DEFAULT_OPTIONS)
    for key, value in (options or {}).items():
        if key not in DEFAULT_OPTIONS:
            raise ValueError('unknown doctor option %r (known: %s)' % (key, ', '.join(sorted(DEFAULT_OPTIONS))))
        if value not in (None, ''):
            merged[key] = value
    return merged


def diagnose(nodes, cluster=None, options=None):
    """Findings for the NPU nodes ``nodes`` (node evidence dicts) and the cluster evidence ``cluster``."""
    if not isinstance(nodes, list):
        raise ValueError('expected a list of node evidence dicts, got %s' % type(nodes).__name__)
    context = _Context(cluster, merge_options(options))
    findings = []
    for evidence in nodes:
        if not isinstance(evidence, dict) or not evidence.get('node'):
            raise ValueError('node evidence needs a "node" name: %r' % (evidence,))
        findings.extend(_node_findings(evidence, context))
    if context.available:
        findings.extend(_pending_findings(context))
    findings.extend(_fabric_conflict_findings(nodes))
    return findings


def format_finding(item):
    """One finding as the lines a person reads."""
    return ['%s [%s] %s' % (item.get('node') or '(cluster)', item['component'], item['problem']),
            '    evidence: %s' % item['evidence'],
            '    fix: %s' % item['fix']]


# --- the NPUs' RoCE network (docs/hccn.md) ------------------------------------------------------------

COMPONENTS = COMPONENTS + ('fabric',)


def _fabric_findings(name, evidence):
    """A training node's NPU RoCE ports as hccn_info read them (evidence ``hccn``): a link down, a net
    health other than Success, a gateway or detect address outside the NPU's subnet, NPUs of one node in
    different subnets, some NPUs without an address; on an A3, a die whose HCCS link (vNIC) is down."""
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
    fabric = evidence.get('hccn')
    if not fabric:
        return []
    if not fabric.get('ok'):
        return [finding(name, 'fabric', 'the NPUs\' RoCE ports cannot be read', fabric.get('error') or 'hccn_info failed',
                        'check that the driver is loaded (npu-smi info) and hccn_tool answers (hccn_tool -i 0 -link -g)')]
    npus = fabric.get('npus') or []
    # A3: a die's link on the SuperPoD's HCCS plane, which carries HCCL inside the SuperPoD, RoCE addresses or not.
    findings = [finding(name, 'fabric', 'die %s HCCS link (vNIC) %s' % (state.get('npu'), state.get('vnic_link')),
                        'hccn_tool -i %s -vnic -g: vnic link status: %s' % (state.get('npu'), state.get('vnic_link')),
                        'check the die\'s HCCS port and the SuperPoD switch (npu-smi info -t hccs), then run the hccn '
                        'role\'s gate (site.yml --tags hccn)')
                for state in npus if state.get('vnic_link') not in (None, 'UP')]
    configured = [state for state in npus if state.get('address') and state.get('netmask')]
    if not configured:
        return findings
    for state in npus:
        npu = state.get('npu')
        if not state.get('address'):
            findings.append(finding(name, 'fabric', 'NPU %s has no RoCE address while other NPUs have one' % npu,
                                    'hccn_tool -i %s -ip -g: no address (never set)' % npu,
                                    'give it its address (npu.ascend.hccn role, hccn_base_address or hccn_addresses)'))
            continue
        if state.get('link') not in (None, 'UP'):
            findings.append(finding(name, 'fabric', 'NPU %s link %s' % (npu, state.get('link')),
                                    'hccn_tool -i %s -link -g: link status: %s' % (npu, state.get('link')),
                                    'check the NPU cable and its switch port (hccn_tool -i %s -lldp -g names the port)' % npu))
        elif state.get('net_health') not in (None, hccn_tool.NET_HEALTH_OK):
            findings.append(finding(name, 'fabric', 'NPU %s net health %s' % (npu, state.get('net_health')),
                                    'hccn_tool -i %s -net_health -g: net health status: %s; detect address %s'
                                    % (npu, state.get('net_health'), state.get('netdetect') or 'none'),
                                    'make the detect address answer the NPU, or set another one (hccn_detect_address)'))
        subnet = hccn_tool.subnet_of(state['address'], state['netmask'])
        for key in ('gateway', 'netdetect'):
            value = state.get(key)
            if value and not hccn_tool.same_subnet(value, state['address'], state['netmask']):
                findings.append(finding(name, 'fabric', 'NPU %s %s %s is outside its subnet %s' % (npu, key, value, subnet),
                                        'hccn_tool -i %s -ip -g: %s/%s' % (npu, state['address'], state['netmask']),
                                        'set the %s to an address in %s' % (key, subnet)))
    subnets = sorted(set(hccn_tool.subnet_of(state['address'], state['netmask']) for state in configured))
    model = evidence.get('hccn_subnet_rule')
    if model == 'one_subnet' and len(subnets) > 1:
        findings.append(finding(name, 'fabric', 'the NPUs are in %d subnets; this model puts every NPU of a node in one'
                                % len(subnets), ', '.join(subnets),
                                'give the NPUs addresses in one subnet (hccn_base_address, hccn_netmask)'))
    return findings


def _fabric_conflict_findings(nodes):
    """An NPU address two NPUs of the fleet hold: neither answers reliably."""
    holders = {}
    for evidence in nodes:
        fabric = evidence.get('hccn') if isinstance(evidence, dict) else None
        for state in (fabric or {}).get('npus') or []:
            if state.get('address'):
                holders.setdefault(state['address'], []).append((evidence.get('node'), state.get('npu')))
    findings = []
    for address, owners in sorted(holders.items()):
        if len(owners) < 2:
            continue
        for node, npu in owners:
            others = ', '.join('%s NPU %s' % owner for owner in owners if owner != (node, npu))
            findings.append(finding(node, 'fabric', 'NPU %s address %s is also held by %s' % (npu, address, others),
                                    'hccn_tool -i %s -ip -g: ipaddr:%s' % (npu, address),
                                    'give every NPU of the fleet its own address (hccn_base_address or hccn_addresses), '
                                    'then run the hccn role'))
    return findings
