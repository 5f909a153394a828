# -*- coding: utf-8 -*-
"""The fleet-wide Kubernetes writes (module_utils/k8s/fleet.py) against an in-memory API server:
what a Node still needs (a property over any labels and taints), the number of requests for a
fleet (constant in N when converged), the wait for Nodes not registered yet, conflicts retried once,
and the validation pods of many nodes judged with one deadline."""

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.k8s import fleet
from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet import ApiError

from k8s_fake_api import FakeApi, merge_patch, node

TAINT = 'npu.example.com/unvalidated=true:NoSchedule'
OURS = {'key': 'npu.example.com/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}
VALIDATED = 'npu.example.com/validated'
DRIVER = 'npu.example.com/driver'


def spec(host, labels=None, validated_value='25.0.rc1.1', manage_taint=True, wait_seconds=60, name=None):
    return {'host': host, 'name': name or host, 'labels': dict({DRIVER: validated_value} if labels is None else labels),
            'taint': TAINT, 'manage_taint': manage_taint, 'validated_label': VALIDATED,
            'validated_value': validated_value, 'wait_seconds': wait_seconds, 'kubeconfig': None, 'context': None}


def run(api, specs, **kwargs):
    return fleet.apply_nodes(api, specs, clock=api.clock, sleep=api.clock.sleep, **kwargs)


# --- what a Node still needs ----------------------------------------------------------------------------------------

def test_a_new_node_gets_its_labels_and_the_taint_in_one_patch_guarded_by_its_resource_version():
    plan = fleet.node_plan(node('a', {'kubernetes.io/hostname': 'a'}), spec('a'))
    assert plan['patch'] == {'metadata': {'labels': {DRIVER: '25.0.rc1.1'}, 'resourceVersion': '1'},
                             'spec': {'taints': [OURS]}}
    assert plan['validated'] is False


def test_a_validated_node_loses_the_taint_and_keeps_the_others():
    other = {'key': 'node.kubernetes.io/unschedulable', 'effect': 'NoSchedule'}
    current = node('a', {DRIVER: '25.0.rc1.1', VALIDATED: '25.0.rc1.1'}, [other, OURS], version=7)
    plan = fleet.node_plan(current, spec('a'))
    assert plan['patch'] == {'metadata': {'resourceVersion': '7'}, 'spec': {'taints': [other]}}
    assert plan['validated'] is True


def test_a_label_change_alone_needs_no_resource_version():
    current = node('a', {DRIVER: '24.1.rc2', VALIDATED: '24.1.rc2', 'gone': 'x'}, [OURS])
    plan = fleet.node_plan(current, spec('a', labels={DRIVER: '25.0.rc1.1', 'gone': None}))
    # A driver upgrade: not validated for the new driver, so the taint stays (it is there already).
    assert plan['patch'] == {'metadata': {'labels': {DRIVER: '25.0.rc1.1', 'gone': None}}}
    assert plan['validated'] is False


def test_without_manage_taint_the_taints_are_left_alone():
    assert fleet.node_plan(node('a', {DRIVER: '25.0.rc1.1'}), spec('a', manage_taint=False))['patch'] is None


_KEYS = st.sampled_from(['accelerator', DRIVER, VALIDATED, 'npu.example.com/chip', 'other'])
_VALUES = st.sampled_from(['25.0.rc1.1', '24.1.rc2', 'true', 'x'])
_TAINTS = st.lists(st.fixed_dictionaries({
    'key': st.sampled_from(['npu.example.com/unvalidated', 'node.kubernetes.io/unschedulable', 'other/t']),
    'effect': st.sampled_from(['NoSchedule', 'NoExecute']),
}, optional={'value': st.sampled_from(['true', 'false'])}), max_size=4)


@settings(max_examples=300, deadline=None)
@given(current=st.dictionaries(_KEYS, _VALUES), taints=_TAINTS,
       wanted=st.dictionaries(_KEYS, st.one_of(st.none(), _VALUES)), validated_value=_VALUES,
       manage_taint=st.booleans())
def test_one_patch_converges_and_keeps_what_is_not_ours(current, taints, wanted, validated_value, manage_taint):
    before = node('a', current, taints, version=3)
    the_spec = dict(spec('a', labels=wanted, validated_value=validated_value, manage_taint=manage_taint))
    plan = fleet.node_plan(before, the_spec)
    after = before if plan['patch'] is None else merge_patch(before, plan['patch'])
    after['metadata']['resourceVersion'] = '4'
    again = fleet.node_plan(after, the_spec)
    # Converged after one patch: nothing left to send.
    assert again['patch'] is None
    labels = after['metadata']['labels']
    # Every wanted label as wanted, every other label untouched.
    for key, value in wanted.items():
        assert labels.get(key) == value
    for key, value in current.items():
        if key not in wanted:
            assert labels[key] == value
    ours = [t for t in after.get('spec', {}).get('taints') or []
            if t['key'] == OURS['key'] and t['effect'] == OURS['effect']]
    if manage_taint:
        # Tainted exactly while not validated for the wanted driver, once.
        assert (ours == [OURS]) == (labels.get(VALIDATED) != validated_value)
        assert len(ours) <= 1
    else:
        assert after.get('spec', {}).get('taints') == before.get('spec', {}).get('taints')

    # Taints that are not ours are all kept, in order.
    def others(node_):
        return [t for t in (node_.get('spec', {}).get('taints') or [])
                if (t['key'], t['effect']) != (OURS['key'], OURS['effect'])]
    assert others(after) == others(before)
    # The taint list is only ever sent with the resourceVersion it was computed from.
    if plan['patch'] and 'spec' in plan['patch']:
        assert plan['patch']['metadata']['resourceVersion'] == '3'


# --- the fleet ------------------------------------------------------------------------------------------------------

def converged(name):
    return node(name, {DRIVER: '25.0.rc1.1', VALIDATED: '25.0.rc1.1'})


@pytest.mark.parametrize('count', [1, 10, 200])
def test_a_converged_fleet_costs_one_request_whatever_its_size(count):
    api = FakeApi([converged('n%03d' % index) for index in range(count)])
    outcome = run(api, [spec('n%03d' % index) for index in range(count)])
    assert api.calls == [('list_nodes',)]
    assert outcome['changed'] is False
    assert len(outcome['resources']) == count
    assert all(not result['failed'] and result['validated'] and result['listed']
               for result in outcome['results'].values())


def test_a_first_run_costs_one_list_and_one_patch_per_node():
    api = FakeApi([node('n%02d' % index) for index in range(20)])
    outcome = run(api, [spec('n%02d' % index) for index in range(20)])
    assert api.count('list_nodes') == 1 and api.count('patch_node') == 20 and len(api.calls) == 21
    assert outcome['changed'] is True
    for index in range(20):
        stored = api.nodes['n%02d' % index]
        assert stored['spec']['taints'] == [OURS]
        assert stored['metadata']['labels'][DRIVER] == '25.0.rc1.1'
        assert outcome['results']['n%02d' % index]['validated'] is False
    # A second run finds nothing to do.
    api.calls = []
    assert run(api, [spec('n%02d' % index) for index in range(20)])['changed'] is False
    assert api.calls == [('list_nodes',)]


def test_check_mode_reports_the_same_change_and_writes_nothing():
    api = FakeApi([node('a'), converged('b')])
    outcome = run(api, [spec('a'), spec('b')], check_mode=True)
    assert outcome['changed'] is True
    assert outcome['results']['a']['changed'] is True and outcome['results']['b']['changed'] is False
    assert outcome['results']['a']['wanted_taints'] == [OURS]
    assert api.count('patch_node') == 0
    assert fleet.nodes_diff(outcome['results']) == {
        'before': {'a': {'labels': {DRIVER: None}, 'taints': []}},
        'after': {'a': {'labels': {DRIVER: '25.0.rc1.1'}, 'taints': [OURS]}}}


def test_a_node_that_joins_late_is_waited_for_and_one_that_never_joins_fails_alone():
    api = FakeApi([node('a')])
    api.joining['late'] = 12
    outcome = run(api, [spec('a'), spec('late', wait_seconds=30), spec('never', wait_seconds=20)])
    assert not outcome['results']['a']['failed']
    assert not outcome['results']['late']['failed']
    assert outcome['results']['late']['listed'] is False
    assert api.nodes['late']['spec']['taints'] == [OURS]
    never = outcome['results']['never']
    assert never['failed']
    assert never['msg'].startswith('never: the cluster has no Node named never after 20 s. Fix: join the host')
    # Bounded by the longest wait, read every 5 s: not one read per node.
    assert api.clock.now <= 20 and api.count('list_nodes') <= 5


def test_an_api_server_that_cannot_be_read_fails_every_node_with_the_cause_and_the_fix():
    api = FakeApi([node('a')])
    api.list_error = ApiError("HTTPSConnectionPool(host='127.0.0.1', port=1): Max retries exceeded "
                              "(Caused by NewConnectionError: Failed to establish a new connection: "
                              "[Errno 111] Connection refused)")
    the_spec = dict(spec('a'), kubeconfig='/tmp/dead.kubeconfig', context='dead')
    outcome = run(api, [the_spec])
    message = outcome['results']['a']['msg']
    assert outcome['results']['a']['failed'] and outcome['resources'] is None
    assert message.startswith('a: k8s_node cannot read Node a from the Kubernetes API: HTTPSConnectionPool')
    assert 'Connection refused' in message
    assert 'Fix: check that the API server of k8s_kubeconfig (/tmp/dead.kubeconfig, context dead) runs' in message


def test_a_conflict_is_read_again_and_retried_once():
    api = FakeApi([node('a'), node('b')])
    api.races['a'] = 1
    outcome = run(api, [spec('a'), spec('b')])
    assert not outcome['results']['a']['failed']
    taints = api.nodes['a']['spec']['taints']
    # The other writer's taint survived; ours was added on top of it.
    assert taints[-1] == OURS and taints[0]['key'].startswith('other/race-')
    assert api.count('get_node') == 1


def test_a_node_that_conflicts_twice_fails_alone_with_the_fix():
    api = FakeApi([node('a'), node('b')])
    api.races['a'] = 2
    outcome = run(api, [spec('a'), spec('b')])
    assert outcome['results']['a']['failed']
    assert '409 Conflict' in outcome['results']['a']['msg'] and 'Fix: run again' in outcome['results']['a']['msg']
    assert not outcome['results']['b']['failed'] and api.nodes['b']['spec']['taints'] == [OURS]


def test_a_refused_patch_fails_that_node_only():
    api = FakeApi([node('a'), node('b')])
    api.refuse['a'] = ApiError('403 Forbidden: nodes "a" is forbidden', 403)
    outcome = run(api, [spec('a'), spec('b')])
    assert outcome['results']['a']['msg'].startswith('a: k8s_node: the API server refused to write Node a: 403 Forbidden')
    assert 'kubectl auth can-i patch nodes' in outcome['results']['a']['msg']
    assert not outcome['results']['b']['failed']


def test_hosts_are_grouped_by_cluster_their_own_first():
    specs = [dict(spec('a'), kubeconfig=None), dict(spec('b'), kubeconfig='/other'), dict(spec('c'), context='x')]
    groups = fleet.cluster_groups(specs, '/main', None)
    assert [(key, [item['host'] for item in members]) for key, members in groups] == [
        (('/main', None), ['a']), (('/other', None), ['b']), (('/main', 'x'), ['c'])]


# --- validation pods ------------------------------------------------------------------------------------------------

NS = 'npu-validation'
SCHEDULED = {'type': 'PodScheduled', 'status': 'True'}
UNSCHEDULABLE = {'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable',
                 'message': '0/3 nodes are available: 1 Insufficient huawei.com/Ascend910.'}


def vspec(host, judge_output=False, success_phases=('Succeeded',), timeout=60, keep_pod=False, npu_count=1,
          validated_value='25.0.rc1.1'):
    return {'host': host, 'name': host, 'resource': 'huawei.com/Ascend910', 'npu_count': npu_count,
            'judge_output': judge_output, 'success_phases': list(success_phases), 'timeout_seconds': timeout,
            'keep_pod': keep_pod, 'validated_label': VALIDATED, 'validated_value': validated_value, 'taint': TAINT,
            'kubeconfig': None, 'context': None,
            'pod': {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'npu-validate-' + host, 'namespace': NS}}}


def validate(api, specs, **kwargs):
    return fleet.validate_nodes(api, specs, clock=api.clock, sleep=api.clock.sleep, **kwargs)


def test_every_pod_runs_at_once_and_each_node_is_judged_on_its_own():
    api = FakeApi([node(name, {DRIVER: '25.0.rc1.1'}, [OURS, {'key': 'keep', 'effect': 'NoSchedule'}])
                   for name in ('ok', 'full', 'slow', 'crash')])
    api.pod_script[(NS, 'npu-validate-ok')] = [(4, {'phase': 'Succeeded', 'conditions': [SCHEDULED]})]
    api.pod_script[(NS, 'npu-validate-full')] = [(2, {'phase': 'Pending', 'conditions': [UNSCHEDULABLE]})]
    api.pod_script[(NS, 'npu-validate-crash')] = [(3, {'phase': 'Failed', 'conditions': [SCHEDULED], 'containerStatuses': [
        {'name': 'validate', 'state': {'terminated': {'reason': 'Error', 'exitCode': 127}}}]})]
    outcome = validate(api, [vspec('ok'), vspec('full'), vspec('slow', timeout=30), vspec('crash')])
    results = outcome['results']
    assert results['ok']['passed'] and results['ok']['lifted'] and not results['ok']['failed']
    assert results['ok']['report'] == ('pod npu-validation/npu-validate-ok requesting 1 huawei.com/Ascend910 on node ok '
                                       'is Succeeded')
    assert results['full']['failed'] and results['full']['report'] == (
        'pod npu-validation/npu-validate-full requesting 1 huawei.com/Ascend910 on node full is Pending: not scheduled, '
        'Unschedulable: 0/3 nodes are available: 1 Insufficient huawei.com/Ascend910.')
    assert results['crash']['report'].endswith('is Failed; container validate terminated (Error), exit code 127')
    assert results['slow']['failed'] and results['slow']['report'].endswith('on node slow is Pending')
    # One deadline: the slow pod's 30 s, not the sum; the others stopped early.
    assert 30 <= api.clock.now <= 33
    assert api.count('create_pod') == 4 and api.count('list_pods') <= 13
    # The pods are gone; only the node that passed lost the taint, and got the driver recorded.
    assert api.pods == {}
    assert api.nodes['ok']['spec']['taints'] == [{'key': 'keep', 'effect': 'NoSchedule'}]
    assert api.nodes['ok']['metadata']['labels'][VALIDATED] == '25.0.rc1.1'
    for name in ('full', 'slow', 'crash'):
        assert OURS in api.nodes[name]['spec']['taints'] and VALIDATED not in api.nodes[name]['metadata']['labels']
    assert outcome['changed'] is True


def test_a_pod_refused_until_the_device_plugin_registers_the_npus_is_scheduled_and_passes():
    # The DaemonSet's plugin registers the node's NPUs 10 s after the pod was created: the scheduler refuses the
    # pod at first, then takes it.
    api = FakeApi([node('late', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pod_script[(NS, 'npu-validate-late')] = [
        (1, {'phase': 'Pending', 'conditions': [UNSCHEDULABLE]}),
        (10, {'phase': 'Running', 'conditions': [SCHEDULED]}),
        (12, {'phase': 'Succeeded', 'conditions': [SCHEDULED]})]
    result = validate(api, [vspec('late', timeout=120)])['results']['late']
    assert result['passed'] and result['lifted']


def test_a_refusal_that_lasts_is_the_answer_before_the_timeout():
    api = FakeApi([node('full', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pod_script[(NS, 'npu-validate-full')] = [(1, {'phase': 'Pending', 'conditions': [UNSCHEDULABLE]})]
    result = validate(api, [vspec('full', timeout=300)])['results']['full']
    assert result['failed'] and 'Unschedulable: 0/3 nodes are available' in result['report']
    assert fleet.UNSCHEDULABLE_SECONDS <= api.clock.now <= fleet.UNSCHEDULABLE_SECONDS + 1 + 2 * fleet.POD_POLL_SECONDS


def test_the_output_is_judged_when_asked(sample):
    table = sample('npu-smi/910B4_25.0.rc1.1_info.txt')
    api = FakeApi([node('good', {DRIVER: '25.0.rc1.1'}, [OURS]), node('all', {DRIVER: '25.0.rc1.1'}, [OURS])])
    for name in ('good', 'all'):
        api.pod_script[(NS, 'npu-validate-' + name)] = [(1, {'phase': 'Succeeded'})]
    api.pod_logs[(NS, 'npu-validate-good')] = '/dev/davinci0\n/dev/davinci_manager\n' + table
    api.pod_logs[(NS, 'npu-validate-all')] = '/dev/davinci0\n/dev/davinci1\n/dev/davinci_manager\n' + table
    results = validate(api, [vspec('good', judge_output=True), vspec('all', judge_output=True)])['results']
    assert results['good']['passed']
    assert not results['all']['passed']
    assert 'the container saw 2 NPU device(s) (/dev/davinci0, /dev/davinci1), not the 1 it was allocated' \
        in results['all']['report']


def test_a_pod_that_never_ran_is_reported_with_its_container_not_run_when_judging_output():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pod_script[(NS, 'npu-validate-a')] = [(1, {'phase': 'Pending', 'conditions': [UNSCHEDULABLE]})]
    result = validate(api, [vspec('a', judge_output=True)])['results']['a']
    assert result['report'].startswith('pod npu-validation/npu-validate-a requesting 1 huawei.com/Ascend910 on node a '
                                       'is Pending: its container did not run to the end: not scheduled, Unschedulable')
    assert api.count('pod_log') == 0


def test_a_leftover_pod_is_removed_first_and_a_kept_pod_stays():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pods[(NS, 'npu-validate-a')] = {'metadata': {'name': 'npu-validate-a', 'namespace': NS}}
    api.created[(NS, 'npu-validate-a')] = -100
    api.pod_script[(NS, 'npu-validate-a')] = [(0, {'phase': 'Running'})]
    result = validate(api, [vspec('a', success_phases=['Running', 'Succeeded'], keep_pod=True)])['results']['a']
    assert result['passed']
    deletes = [index for index, call in enumerate(api.calls) if call[0] == 'delete_pod']
    creates = [index for index, call in enumerate(api.calls) if call[0] == 'create_pod']
    assert len(deletes) == 1 and deletes[0] < creates[0]
    assert (NS, 'npu-validate-a') in api.pods


def test_an_api_server_away_for_a_moment_while_pods_are_awaited_costs_a_round_not_the_run():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pods[(NS, 'npu-validate-a')] = {'metadata': {'name': 'npu-validate-a', 'namespace': NS}}
    api.created[(NS, 'npu-validate-a')] = 0
    api.pod_script[(NS, 'npu-validate-a')] = [(0, {'phase': 'Succeeded'})]
    original = api.list_pods

    def flaky(namespace, selector):
        # The first list (of leftovers) answers; the next two, while waiting, do not.
        if api.count('list_pods') in (1, 3):
            api.pod_list_errors = 1
        return original(namespace, selector)
    api.list_pods = flaky
    result = validate(api, [vspec('a')])['results']['a']
    assert result['passed'] and result['lifted']


def test_a_refused_pod_fails_its_node_with_the_api_servers_words():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS]), node('b', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.refuse_pod[(NS, 'npu-validate-a')] = ApiError('403 Forbidden: pod rejected: RuntimeClass "ascend" not found', 403)
    api.pod_script[(NS, 'npu-validate-b')] = [(1, {'phase': 'Succeeded'})]
    results = validate(api, [vspec('a'), vspec('b')])['results']
    assert results['a']['failed'] and results['a']['msg'].startswith(
        'a: validation: the API server refused to start pod npu-validation/npu-validate-a: 403 Forbidden: pod rejected: '
        'RuntimeClass "ascend" not found. Fix:')
    assert results['b']['passed'] and results['b']['lifted']


def test_a_taint_lift_that_conflicts_twice_fails_the_node_that_passed():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pod_script[(NS, 'npu-validate-a')] = [(1, {'phase': 'Succeeded'})]
    api.races['a'] = 2
    result = validate(api, [vspec('a')])['results']['a']
    assert result['passed'] and result['failed'] and not result['lifted']
    assert '409 Conflict' in result['msg'] and 'Fix: run again' in result['msg']


def test_check_mode_runs_no_pod():
    api = FakeApi([node('a')])
    outcome = validate(api, [vspec('a')], check_mode=True)
    assert outcome['changed'] is True and api.calls == []


def test_the_namespace_and_the_pull_secret_come_first():
    api = FakeApi([node('a', {DRIVER: '25.0.rc1.1'}, [OURS])])
    api.pod_script[(NS, 'npu-validate-a')] = [(1, {'phase': 'Succeeded'})]
    secret = {'metadata': {'name': 'npu-validation-registry', 'namespace': NS}, 'data': {}}
    validate(api, [vspec('a')], secrets=[secret])
    assert api.calls[:2] == [('ensure_namespace', NS), ('apply_secret', 'npu-validation-registry')]


def test_a_validation_pod_that_cannot_pull_its_image_names_the_image_and_its_registry():
    pod_spec = {'pod': {'metadata': {'namespace': 'npu-validation', 'name': 'validate-a'}}, 'name': 'a', 'npu_count': 1,
                'resource': 'huawei.com/Ascend910', 'success_phases': ['Succeeded']}
    pod = {'spec': {'containers': [{'name': 'validate', 'image': 'registry.example.com/ascend/busybox:1.36'}]},
           'status': {'phase': 'Pending', 'containerStatuses': [
               {'name': 'validate', 'state': {'waiting': {'reason': 'ErrImagePull', 'message': 'connection refused'}}}]}}
    passed, report = fleet.pod_report(pod_spec, pod)
    assert not passed
    assert ('container validate waiting (ErrImagePull): the node cannot pull registry.example.com/ascend/busybox:1.36 '
            'from the registry registry.example.com (connection refused)') in report
    assert 'images_registry' in report
    # Another reason of waiting is no pull problem.
    pod['status']['containerStatuses'][0]['state']['waiting'] = {'reason': 'ContainerCreating'}
    assert 'cannot pull' not in fleet.pod_report(pod_spec, pod)[1]


@pytest.mark.parametrize('image, registry', [
    ('busybox:1.36', 'docker.io'), ('library/busybox', 'docker.io'), ('localhost/a:1', 'localhost'),
    ('r.example:5000/a/b:1', 'r.example:5000'), ('', 'docker.io')])
def test_image_registry(image, registry):
    assert fleet.image_registry(image) == registry
