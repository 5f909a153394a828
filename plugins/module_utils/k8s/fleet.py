# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes writes of a whole play in one step: Node labels and taints, validation pods.

The roles k8s_node and validate decide per host what its Node should carry or whether it needs a
validation pod; the modules k8s_fleet_nodes and k8s_fleet_validate then do the writes of every
host in one process on the controller (one kubernetes client, one list of Nodes, one wait for all
pods) instead of a few processes per host, and return one result per host, which the host judges
itself. What to write is decided here, against the Node as the API server returns it, by pure
functions; the I/O goes through an ``api`` object (module_utils/k8s/client.py, or a fake in the
unit tests) whose errors are ``ApiError``. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.npu.ascend.plugins.module_utils.k8s.validation import judge_output
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
    label_changes, label_problem, parse_taint, refused_labels_text, split_labels, taints_with)

FORBIDDEN = 403
CONFLICT = 409
NOT_FOUND = 404
INVALID = 422
# Where a label of the modules' option comes from when the caller names no source of its own.
LABELS_OPTION = 'option nodes[].labels'
# How often the Nodes not registered yet and the validation pods are read again.
NODE_POLL_SECONDS = 5
POD_POLL_SECONDS = 3
# The scheduler tries an unschedulable pod again when the cluster changes, as when a device plugin that started
# with its DaemonSet registers the node's NPUs seconds later: a refusal is the answer once it has lasted this long.
UNSCHEDULABLE_SECONDS = 30
POD_LABEL_SELECTOR = 'app.kubernetes.io/name=npu-validation'


class ApiError(Exception):
    """A request the API server refused (``status`` its HTTP status) or did not answer (``status`` None)."""

    def __init__(self, message, status=None):
        super(ApiError, self).__init__(message)
        self.status = status
        self.message = message


def _mapping(value):
    """``value`` when it is a JSON object, else an empty one: an answer of another shape reads as empty."""
    return value if isinstance(value, dict) else {}


def _labels(node):
    return dict(_mapping(_mapping(_mapping(node).get('metadata')).get('labels')))


def _taints(node):
    taints = _mapping(node).get('spec')
    taints = _mapping(taints).get('taints')
    return list(taints) if isinstance(taints, list) else []


def _resource_version(node):
    return _mapping(_mapping(node).get('metadata')).get('resourceVersion')


def _shape_problem(node):
    """What keeps the Node ``node`` as the API server answered from being read safely, or None.

    Its taint list is replaced as a whole, so a Node whose metadata, labels, spec or taints are not what
    Kubernetes sends is not written from a guess: its other taints could be lost."""
    if not isinstance(node, dict):
        return 'the answer is a %s, not a Node object' % type(node).__name__
    metadata, spec = node.get('metadata'), node.get('spec')
    if not isinstance(metadata, dict):
        return 'it has no metadata'
    for what, value, kind in (('metadata.labels', metadata.get('labels'), dict), ('spec', spec, dict),
                              ('spec.taints', _mapping(spec).get('taints'), list)):
        if value is not None and not isinstance(value, kind):
            return '%s is a %s, not a %s' % (what, type(value).__name__, 'list' if kind is list else 'JSON object')
    for taint in _taints(node):
        if not isinstance(taint, dict) or not isinstance(taint.get('key'), str):
            return 'spec.taints holds %r, which is no taint' % (taint,)
    return None


def _merged_labels(current, changes):
    """``current`` with a JSON merge patch of ``changes`` applied (a None value removes the label)."""
    labels = dict(current or {})
    for key, value in (changes or {}).items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    return labels


def node_plan(node, spec):
    """What the Node ``node`` (as read) still needs so that it carries what ``spec`` says.

    ``spec``: ``labels`` (label -> value, None removes it; those Kubernetes would refuse are left out and
    listed in ``refused_labels`` with their source from ``label_sources``), ``taint`` (the until-validated taint,
    ``key=value:Effect``), ``manage_taint``, ``validated_label`` and ``validated_value``: the node is
    validated when that label equals that value (the driver it runs) once the labels are set, and
    carries the taint exactly when it is not. Returns ``label_changes``, ``taints`` (before),
    ``wanted_taints``, ``validated`` and ``patch``: the merge patch to send, or None when the Node
    is as wanted. The taint list is replaced as a whole by a patch, so a patch that changes it
    carries the resourceVersion it was computed from: the API server refuses it (409) when another
    writer changed the Node meanwhile.
    """
    wanted_labels, refused = split_labels(spec.get('labels'), spec.get('label_sources'), LABELS_OPTION)
    changes = label_changes(_labels(node), wanted_labels)
    labels = _merged_labels(_labels(node), changes)
    validated = labels.get(spec.get('validated_label')) == (spec.get('validated_value') or 'true')
    taints = _taints(node)
    wanted = taints
    if spec.get('manage_taint', True) and spec.get('taint'):
        wanted = taints_with(taints, parse_taint(spec['taint']), present=not validated)
    patch = {}
    if changes:
        patch['metadata'] = {'labels': changes}
    if wanted != taints:
        patch.setdefault('metadata', {})['resourceVersion'] = _resource_version(node)
        patch['spec'] = {'taints': wanted}
    return {'label_changes': changes, 'taints': taints, 'wanted_taints': wanted, 'validated': validated,
            'refused_labels': refused, 'patch': patch or None}


def _lift_plan(node, validated_label, validated_value, taint):
    """The merge patch that records ``validated_value`` on the Node and removes ``taint``, or None.

    Guarded by the Node's resourceVersion: the taint list it replaces is the one just read.
    """
    labels = {validated_label: validated_value} if _labels(node).get(validated_label) != validated_value else {}
    taints = _taints(node)
    wanted = taints_with(taints, parse_taint(taint), present=False)
    if not labels and wanted == taints:
        return None
    patch = {'metadata': {'resourceVersion': _resource_version(node)}}
    if labels:
        patch['metadata']['labels'] = labels
    if wanted != taints:
        patch['spec'] = {'taints': wanted}
    return patch


def cluster_groups(specs, kubeconfig, context):
    """``[((kubeconfig, context), [spec, ...]), ...]``: the specs of each cluster, those of ``(kubeconfig, context)``
    first. A spec without a kubeconfig or context of its own takes these; each spec is given its group's."""
    order, grouped = [], {}
    for spec in specs:
        key = (spec.get('kubeconfig') or kubeconfig, spec.get('context') or context)
        spec['kubeconfig'], spec['context'] = key
        if key not in grouped:
            grouped[key] = []
            order.append(key)
        grouped[key].append(spec)
    own = (kubeconfig, context)
    return sorted(((key, grouped[key]) for key in order), key=lambda item: item[0] != own)


def _where(spec):
    return 'k8s_kubeconfig (%s, context %s)' % (
        spec.get('kubeconfig') or 'the default kubeconfig', spec.get('context') or 'current')


def _text(error):
    return ' '.join(str(error).split()).rstrip('.')


def unread_message(spec, error):
    return ('%s: k8s_node cannot read Node %s from the Kubernetes API: %s. Fix: check that the API server of %s '
            'runs and is reachable from the controller, then run again.'
            % (spec['host'], spec['name'], _text(error), _where(spec)))


def _missing_message(spec):
    return ('%s: the cluster has no Node named %s after %s s. Fix: join the host to the cluster first (kubeadm join, '
            'or your installer), or set npu_ascend_k8s_node_name to the name its kubelet registers (`kubectl get '
            'nodes`).' % (spec['host'], spec['name'], spec.get('wait_seconds', 0)))


def _refused_labels_message(spec, refused, check_mode):
    return ('%s: k8s_node: Kubernetes refuses %d label(s) of Node %s, which were not sent: %s. Its other labels and '
            'its taint %s. Fix: correct each where it comes from (a label key is an optional DNS subdomain and "/", '
            'then 1-63 characters; a value is empty or 1-63 characters; both alphanumeric at the ends, with only '
            '"-", "_" and "." inside), then run again.'
            % (spec['host'], len(refused), spec['name'], refused_labels_text(refused),
               'would be written (check mode)' if check_mode else 'are written'))


def _shape_message(spec, problem, doing='k8s_node'):
    return ('%s: %s: the API server answered Node %s in a shape Kubernetes does not give (%s); nothing was written to '
            'it. Fix: check that %s names a Kubernetes API server (not a proxy that rewrites answers) and that '
            '`kubectl get node %s -o yaml` shows a Node, then run again.'
            % (spec['host'], doing, spec['name'], problem, _where(spec), spec['name']))


def _taint_message(spec, error):
    return ('%s: k8s_node: the until-validated taint %r cannot be used: %s. Nothing was written to Node %s. Fix: set '
            'npu_ascend_label_domain to a DNS subdomain (the taint is <domain>/unvalidated=true:NoSchedule), or '
            'pass a taint key[=value]:Effect whose effect is NoSchedule, PreferNoSchedule or NoExecute, then run again.'
            % (spec['host'], spec.get('taint'), _text(error), spec['name']))


def _refused_message(spec, error, doing):
    if error.status == INVALID:
        return ('%s: %s: the API server refused the content written to Node %s as invalid: %s. Fix: correct the '
                'labels or the taint it names, then run again.' % (spec['host'], doing, spec['name'], _text(error)))
    if error.status == CONFLICT:
        return ('%s: %s: Node %s changed again while it was being written: the API server refused the write twice with '
                '409 Conflict, since another writer changed the Node in between. Fix: run again; if it repeats, find '
                'the other writer of the Node\'s taints (`kubectl get node %s --show-managed-fields -o yaml`).'
                % (spec['host'], doing, spec['name'], spec['name']))
    if error.status is None:
        return ('%s: %s: Node %s could not be written: %s. Fix: check that the API server of %s runs and is reachable '
                'from the controller, then run again.' % (spec['host'], doing, spec['name'], _text(error), _where(spec)))
    if error.status == FORBIDDEN:
        return ('%s: %s: the API server refused to write Node %s: %s. Fix: check that the user of %s may patch Nodes '
                '(`kubectl auth can-i patch nodes`), then run again.'
                % (spec['host'], doing, spec['name'], _text(error), _where(spec)))
    return ('%s: %s: the API server refused to write Node %s: %s. Fix: act on the reason it gives (`kubectl get node '
            '%s -o yaml` shows the Node as it is), then run again.'
            % (spec['host'], doing, spec['name'], _text(error), spec['name']))


class _ShapeError(Exception):
    """The Node as answered cannot be read safely (_shape_problem's words)."""


def _patch_guarded(api, name, plan_for, first_node, check_mode):
    """Send ``plan_for(node)``'s patch; on a conflict read the Node again and retry once.

    Returns ``(changed, node_after, plan)``; ApiError when the API server refuses twice or otherwise,
    _ShapeError when the Node as read has a shape that cannot be written from safely.
    """
    node = first_node
    for attempt in (1, 2):
        problem = _shape_problem(node)
        if problem:
            raise _ShapeError(problem)
        plan = plan_for(node)
        if plan['patch'] is None:
            return False, node, plan
        if check_mode:
            return True, node, plan
        try:
            return True, api.patch_node(name, plan['patch']), plan
        except ApiError as error:
            if error.status != CONFLICT or attempt == 2:
                raise
        node = api.get_node(name)
        if node is None:
            raise ApiError('the Node disappeared while it was being written', NOT_FOUND)
    raise AssertionError('unreachable')  # pragma: no cover


def _name(item):
    name = _mapping(_mapping(item).get('metadata')).get('name')
    return name if isinstance(name, str) else None


def _list_by_name(api):
    # An item without a name cannot be any host's Node: it is passed over, not a reason to stop the fleet.
    return dict((_name(item), item) for item in api.list_nodes() if _name(item) is not None)


def _taint_problem(spec):
    """Why the spec's taint cannot be used (ValueError's words), or None; no taint managed is none."""
    if not spec.get('manage_taint', True) or not spec.get('taint'):
        return None
    try:
        parse_taint(spec['taint'])
    except ValueError as error:
        return error
    return None


def apply_nodes(api, specs, check_mode=False, clock=time.monotonic, sleep=time.sleep, poll=NODE_POLL_SECONDS):
    """Label and taint the Nodes of ``specs`` (one API server) where they differ from what the specs say.

    Reads every Node in one list; a Node that is not registered yet is waited for (the list read again
    every ``poll`` s) up to its spec's ``wait_seconds``; then each differing Node gets one merge patch
    (labels, and the taint list guarded by its resourceVersion; a conflict is read again and retried
    once). A spec whose taint cannot be used, or whose Node was answered in a shape that cannot be written
    from safely, fails alone; labels Kubernetes would refuse are left out of the patch (the rest and the
    taint are written) and fail the host after the write, each named. Returns ``results`` (host ->
    ``name``, ``changed``, ``failed``, ``msg``, ``refused_labels``, ``validated``, ``label_changes``,
    ``taints``, ``wanted_taints``, ``listed``), ``resources`` (the Nodes as first read, None when they
    could not be read) and ``changed``.
    """
    results = {}
    for spec in specs:
        problem = _taint_problem(spec)
        if problem is not None:
            results[spec['host']] = node_failure(spec, _taint_message(spec, problem))
    try:
        nodes = _list_by_name(api)
    except ApiError as error:
        for spec in specs:
            results.setdefault(spec['host'], node_failure(spec, unread_message(spec, error)))
        return {'results': results, 'resources': None, 'changed': False}
    resources = list(nodes.values())
    listed = dict((spec['host'], spec['name'] in nodes) for spec in specs)
    start = clock()
    waiting = [spec for spec in specs if spec['name'] not in nodes and spec['host'] not in results]
    while waiting:
        remaining = [start + float(spec.get('wait_seconds') or 0) - clock() for spec in waiting]
        if max(remaining) <= 0:
            break
        sleep(min(poll, max(remaining)))
        try:
            nodes.update(_list_by_name(api))
        except ApiError as error:
            for spec in waiting:
                results[spec['host']] = node_failure(spec, unread_message(spec, error))
            waiting = []
            break
        waiting = [spec for spec in waiting if spec['name'] not in nodes]
    for spec in waiting:
        results[spec['host']] = node_failure(spec, _missing_message(spec))
    changed = False
    for spec in specs:
        if spec['host'] in results:
            continue
        try:
            wrote, node, plan = _patch_guarded(api, spec['name'], lambda node, spec=spec: node_plan(node, spec),
                                               nodes[spec['name']], check_mode)
        except ApiError as error:
            results[spec['host']] = node_failure(spec, _refused_message(spec, error, 'k8s_node'))
            continue
        except _ShapeError as error:
            results[spec['host']] = node_failure(spec, _shape_message(spec, error))
            continue
        changed = changed or wrote
        after = plan if check_mode or not wrote or _shape_problem(node) else node_plan(node, spec)
        refused = plan['refused_labels']
        results[spec['host']] = {
            'host': spec['host'], 'name': spec['name'], 'changed': wrote, 'failed': bool(refused),
            'msg': _refused_labels_message(spec, refused, check_mode) if refused else '', 'refused_labels': refused,
            'validated': after['validated'], 'label_changes': plan['label_changes'], 'taints': plan['taints'],
            'wanted_taints': plan['wanted_taints'], 'listed': listed[spec['host']],
        }
    return {'results': results, 'resources': resources, 'changed': changed}


def node_failure(spec, message):
    return {'host': spec['host'], 'name': spec['name'], 'changed': False, 'failed': True, 'msg': message,
            'refused_labels': [], 'validated': False, 'label_changes': {}, 'taints': [], 'wanted_taints': [],
            'listed': False}


def nodes_diff(results):
    """``before``/``after`` per changed Node: the labels that change and the taint lists."""
    before, after = {}, {}
    for result in results.values():
        if not result.get('changed'):
            continue
        changes = result.get('label_changes') or {}
        before[result['name']] = {'labels': dict((key, None) for key in changes), 'taints': result.get('taints')}
        after[result['name']] = {'labels': dict(changes), 'taints': result.get('wanted_taints')}
    return {'before': before, 'after': after}


# --- validation pods ------------------------------------------------------------------------------------------------

def _unschedulable(pod):
    """Whether the scheduler has refused the pod for now (PodScheduled False, Unschedulable)."""
    status = _mapping(_mapping(pod).get('status'))
    return any(condition.get('type') == 'PodScheduled' and condition.get('status') == 'False'
               and condition.get('reason') == 'Unschedulable' for condition in _objects(status.get('conditions')))


def _pod_done(pod, success_phases, refused_for=0.0):
    """Whether a validation pod has an answer: it reached a success phase or Failed, or the scheduler has refused it
    for ``refused_for`` seconds, at least UNSCHEDULABLE_SECONDS."""
    status = _mapping(_mapping(pod).get('status'))
    if status.get('phase') in list(success_phases) + ['Failed']:
        return True
    return _unschedulable(pod) and refused_for >= UNSCHEDULABLE_SECONDS


def _objects(value):
    """The JSON objects of the list ``value`` (anything else in an answer is passed over)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def pod_report(spec, pod, log=None, log_error=None):
    """``(passed, report)`` for a validation pod as last read (None: it is gone) and its container's output.

    ``log`` is the output (read only when the pod ended Succeeded or Failed and the spec judges the
    output), ``log_error`` why it could not be read. The report says what the pod was, its phase, the
    output's problems, the scheduler's reason and each container's state, as the role's message quotes it.
    """
    status = _mapping(_mapping(pod).get('status'))
    phase = status.get('phase') if isinstance(status.get('phase'), str) else ''
    judge = bool(spec.get('judge_output'))
    problems = []
    verdict_passed = True
    if judge:
        if phase not in ('Succeeded', 'Failed'):
            verdict_passed, problems = False, ['its container did not run to the end']
        elif log is None:
            verdict_passed, problems = False, ['its log could not be read: %s' % (log_error or 'no log')]
        else:
            verdict = judge_output(log, int(spec.get('npu_count') or 1), int(spec.get('dies_per_npu') or 1))
            verdict_passed, problems = verdict['passed'], verdict['problems']
    passed = phase in (spec.get('success_phases') or ['Succeeded']) and (not judge or verdict_passed)
    metadata = (spec.get('pod') or {}).get('metadata') or {}
    report = 'pod %s/%s requesting %s %s on node %s is %s' % (
        metadata.get('namespace'), metadata.get('name'), spec.get('npu_count'), spec.get('resource'), spec['name'],
        phase or 'gone')
    if judge and problems:
        report += ': ' + '; '.join(problems)
    scheduled = ([condition for condition in _objects(status.get('conditions')) if condition.get('type') == 'PodScheduled']
                 or [{}])[0]
    if scheduled.get('status') == 'False':
        report += ': not scheduled, %s: %s' % (scheduled.get('reason', ''), scheduled.get('message', ''))
    for container in _objects(status.get('containerStatuses')):
        for state, detail in _mapping(container.get('state')).items():
            if state == 'running':
                continue
            detail = _mapping(detail)
            report += '; container %s %s%s%s' % (
                container.get('name'), state, (' (%s)' % detail['reason']) if 'reason' in detail else '',
                (', exit code %s' % detail['exitCode']) if 'exitCode' in detail else '')
            pull_problem = image_pull_problem(container, _mapping(pod).get('spec'))
            if pull_problem:
                report += ': %s; %s' % (pull_problem, IMAGE_PULL_FIX)
    return passed, report


# The kubelet's reasons for a container that waits on its image (kubelet/images/types.go).
IMAGE_PULL_REASONS = ('ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'ImageInspectError')


IMAGE_PULL_FIX = ('check that the node reaches that registry, that its containerd trusts the registry\'s CA '
                  '(/etc/containerd/certs.d/<registry>/) and has the pull Secret it needs, and that the image is there '
                  '(images_deliver with images_registry pushes it)')


def image_registry(image):
    """The registry an image reference is pulled from, as the kubelet reads it: the first path component
    when it has a dot or a port or is localhost, else Docker Hub."""
    first, sep, _rest = str(image or '').partition('/')
    return first if sep and ('.' in first or ':' in first or first == 'localhost') else 'docker.io'


def image_pull_problem(container, pod_spec=None):
    """'' or what a container waiting on its image says: the image, its registry, the kubelet's message.
    ``container`` is a containerStatuses item; the image comes from it or from the pod's spec."""
    waiting = _mapping(_mapping(_mapping(container).get('state')).get('waiting'))
    if waiting.get('reason') not in IMAGE_PULL_REASONS:
        return ''
    image = _mapping(container).get('image') or ''
    if not image:
        for spec_container in _objects(_mapping(pod_spec).get('containers')):
            if spec_container.get('name') == _mapping(container).get('name'):
                image = spec_container.get('image') or ''
    message = str(waiting.get('message') or '')
    return 'the node cannot pull %s from the registry %s%s' % (
        image or 'its image', image_registry(image), (' (%s)' % message[:300]) if message else '')


def _pod_key(spec):
    metadata = spec['pod']['metadata']
    return metadata['namespace'], metadata['name']


def _pods_by_key(api, namespaces):
    pods = {}
    for namespace in namespaces:
        for pod in api.list_pods(namespace, POD_LABEL_SELECTOR):
            # A pod without a name is none of ours.
            if _name(pod) is not None:
                pods[(namespace, _name(pod))] = pod
    return pods


def validate_nodes(api, specs, check_mode=False, clock=time.monotonic, sleep=time.sleep, poll=POD_POLL_SECONDS,
                   secrets=None):
    """Run the validation pod of every spec at once, judge each, lift the taint of those that passed.

    ``specs``: ``host``, ``name`` (the Node), ``pod`` (its definition), ``resource``, ``npu_count``,
    ``dies_per_npu``, ``judge_output``, ``success_phases``, ``timeout_seconds``, ``keep_pod``, ``validated_label``,
    ``validated_value``, ``taint``. ``secrets``: image pull Secrets to create or update first (their
    definitions). Removes pods left by an earlier run, creates them all, reads them every ``poll`` s
    until each has an answer (see _pod_done: a refusal by the scheduler counts once it has lasted
    UNSCHEDULABLE_SECONDS) or its timeout, reads the output of those that ran, removes
    them unless kept, and for those that passed records the validated driver on the Node and removes
    the taint (resourceVersion guarded, a conflict read again and retried once). Returns ``results``
    (host -> ``name``, ``passed``, ``report``, ``failed``, ``msg``, ``phase``, ``lifted``) and ``changed``.
    """
    results = {}
    for spec in specs:
        problem = _taint_problem(dict(spec, manage_taint=True)) or label_problem(spec.get('validated_label'),
                                                                                 spec.get('validated_value'))
        if problem is not None:
            results[spec['host']] = validation_failure(spec, (
                'validation: the Node cannot be marked validated with %s=%r and the taint %r: %s. No pod was started. '
                'Fix: the value is the node\'s driver label (npu.ascend.k8s_node writes it from the driver\'s '
                'version file) and the keys come from npu_ascend_label_domain: correct them, then run again.'
                % (spec.get('validated_label'), spec.get('validated_value'), spec.get('taint'), _text(problem))))
    specs = [spec for spec in specs if spec['host'] not in results]
    if check_mode:
        for spec in specs:
            results[spec['host']] = {'host': spec['host'], 'name': spec['name'], 'passed': False, 'failed': False,
                                     'report': 'would run pod %s/%s' % _pod_key(spec), 'msg': '', 'phase': '',
                                     'lifted': False}
        return {'results': results, 'changed': bool(specs)}
    namespaces = sorted(set(_pod_key(spec)[0] for spec in specs))
    try:
        for namespace in namespaces:
            api.ensure_namespace(namespace)
        for secret in secrets or []:
            api.apply_secret(secret)
        present = _pods_by_key(api, namespaces)
    except ApiError as error:
        for spec in specs:
            results[spec['host']] = validation_failure(spec, 'validation: could not prepare namespace %s: '
                                                       '%s. Fix: check that the user of %s may create namespaces, '
                                                       'secrets and pods there, then run again.'
                                                       % (_pod_key(spec)[0], _text(error), _where(spec)))
        return {'results': results, 'changed': False}
    # A pod left by an interrupted run would be judged instead of a fresh one.
    start = clock()
    leftovers = [spec for spec in specs if _pod_key(spec) in present]
    for spec in leftovers:
        try:
            api.delete_pod(*_pod_key(spec))
        except ApiError as error:
            if error.status != NOT_FOUND:
                results[spec['host']] = validation_failure(spec, _pod_refused(spec, error, 'remove the leftover'))
    while True:
        try:
            present = _pods_by_key(api, namespaces) if leftovers else {}
        except ApiError:
            # Read again at the next round; the deadline bounds it.
            pass
        leftovers = [spec for spec in leftovers if _pod_key(spec) in present and spec['host'] not in results]
        if not leftovers or clock() - start > max(float(spec.get('timeout_seconds') or 0) for spec in leftovers):
            break
        sleep(1)
    for spec in leftovers:
        results[spec['host']] = validation_failure(spec, 'validation: pod %s/%s of an earlier run is still being '
                                                   'removed. Fix: wait until `kubectl -n %s get pod %s` no longer '
                                                   'finds it, then run again.' % (_pod_key(spec) + _pod_key(spec)))
    running = []
    for spec in specs:
        if spec['host'] in results:
            continue
        try:
            api.create_pod(spec['pod'])
        except ApiError as error:
            results[spec['host']] = validation_failure(spec, _pod_refused(spec, error, 'start'))
            continue
        running.append(spec)
    start = clock()
    last = {}
    refused_since = {}
    waiting = list(running)
    while waiting:
        try:
            pods = _pods_by_key(api, namespaces)
        except ApiError:
            # Read again at the next round; the deadline bounds it.
            pods = dict((key, pod) for key, pod in last.items())
        now = clock()
        for spec in waiting:
            key = _pod_key(spec)
            last[key] = pods.get(key)
            if _unschedulable(last[key]):
                refused_since.setdefault(key, now)
            else:
                refused_since.pop(key, None)
        waiting = [spec for spec in waiting
                   if not _pod_done(last[_pod_key(spec)], spec.get('success_phases') or [],
                                    now - refused_since.get(_pod_key(spec), now))
                   and now - start < float(spec.get('timeout_seconds') or 0)]
        if waiting:
            sleep(poll)
    changed = bool(running)
    for spec in running:
        pod = last.get(_pod_key(spec))
        log, log_error = None, None
        phase = ((pod or {}).get('status') or {}).get('phase')
        if spec.get('judge_output') and phase in ('Succeeded', 'Failed'):
            try:
                log = api.pod_log(*_pod_key(spec))
            except ApiError as error:
                log_error = str(error)
        passed, report = pod_report(spec, pod, log, log_error)
        results[spec['host']] = {'host': spec['host'], 'name': spec['name'], 'passed': passed, 'report': report,
                                 'failed': not passed, 'msg': '', 'phase': phase or '', 'lifted': False}
        if not spec.get('keep_pod'):
            try:
                api.delete_pod(*_pod_key(spec))
            except ApiError:
                # The next run removes a leftover pod before it starts its own.
                pass
    for spec in running:
        result = results[spec['host']]
        if not result['passed']:
            continue
        try:
            node = api.get_node(spec['name'])
            if node is None:
                raise ApiError('the Node is gone', NOT_FOUND)
            _patch_guarded(api, spec['name'],
                           lambda node, spec=spec: {'patch': _lift_plan(node, spec['validated_label'],
                                                                        spec['validated_value'], spec['taint'])},
                           node, False)
            result['lifted'] = True
        except ApiError as error:
            result['failed'] = True
            result['msg'] = _refused_message(spec, error, 'validation passed (%s), but recording it' % result['report'])
        except _ShapeError as error:
            result['failed'] = True
            result['msg'] = _shape_message(spec, error, 'validation passed (%s), but recording it' % result['report'])
    return {'results': results, 'changed': changed}


def _pod_refused(spec, error, doing):
    return ('validation: the API server refused to %s pod %s/%s: %s. Fix: check the pod\'s settings '
            '(validate_k8s_runtime_class must name a RuntimeClass that exists, validate_k8s_namespace, '
            'validate_k8s_image) and that the user of %s may manage pods there, then run again.'
            % ((doing,) + _pod_key(spec) + (_text(error), _where(spec))))


def validation_failure(spec, message):
    return {'host': spec['host'], 'name': spec['name'], 'passed': False, 'failed': True,
            'report': message.replace('validation: ', '', 1), 'msg': '%s: %s' % (spec['host'], message), 'phase': '',
            'lifted': False}
