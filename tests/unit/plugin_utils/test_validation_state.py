# -*- coding: utf-8 -*-
"""What the validate role decides about a host (plugin_utils/validation_state.py) and the filter that exposes it."""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.validation_state import FilterModule, validation_state
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys
from ansible_collections.npu.ascend.plugins.plugin_utils import validation_state as vs

KEYS = label_keys(None)
HUAWEI = {'resource_name': '', 'image': 'docker.io/library/ubuntu:24.04', 'command': ['/bin/sh', '-c', 'x'],
          'judge_output': True}
OPTIONS = {'host': 'npu-01', 'node_name': 'Node-01.example', 'label_keys': KEYS, 'profile_name': 'huawei',
           'profile': HUAWEI, 'resource_name': '', 'npu_count': 0, 'image': '', 'command': [], 'check_output': True,
           'force': False, 'check_mode': False}
TAINT = {'key': KEYS['unvalidated'], 'value': 'true', 'effect': 'NoSchedule'}


def node(labels=None, taints=None, name='Node-01.example'):
    return {'metadata': {'name': name, 'labels': dict({'accelerator': 'huawei-Ascend910'}, **(labels or {}))},
            'spec': {'taints': taints or []}}


def state(*nodes, **options):
    return vs.validation_state([list(nodes)], dict(OPTIONS, **options))


def test_the_node_is_found_in_any_read_and_skipped_reads_are_left_out():
    wanted = node()
    reads = [None, {'skipped': True, 'resources': [wanted]}, {'resources': [node(name='other')]}, [wanted]]
    assert vs.validation_state(reads, OPTIONS)['node'] is wanted
    assert vs.validation_state([None, {'changed': False, 'resources': [wanted]}], OPTIONS)['node'] is wanted
    missing = vs.validation_state([[node(name='other')], None], OPTIONS)
    assert missing['node'] is None and not missing['run']
    assert missing['refusal'] == ("npu-01: validation: the cluster has no Node named Node-01.example. Fix: join the "
                                  "host first, or set npu_ascend_k8s_node_name to its Node's name.")


def test_a_node_validated_for_its_driver_and_untainted_needs_nothing():
    done = state(node({KEYS['driver']: '25.0.rc1.1', KEYS['validated']: '25.0.rc1.1'}))
    assert (done['needed'], done['run'], done['refusal'], done['passed']) == (False, False, None, True)
    assert done['message'] == ('npu-01: already validated (driver 25.0.rc1.1); set validate_k8s_force to validate '
                               'again.')
    assert state(node({KEYS['driver']: '25.0.rc1.1', KEYS['validated']: '25.0.rc1.1'}), force=True)['run']


@pytest.mark.parametrize('labels, taints', [
    ({KEYS['driver']: '25.2.0', KEYS['validated']: '25.0.rc1.1'}, []),
    ({KEYS['driver']: '25.0.rc1.1', KEYS['validated']: '25.0.rc1.1'}, [TAINT]),
    ({}, []),
])
def test_a_new_driver_or_the_taint_needs_a_pod(labels, taints):
    needed = state(node(labels, taints))
    assert needed['needed'] and needed['run'] and needed['refusal'] is None
    assert needed['validated_value'] == labels.get(KEYS['driver'], 'true')
    dry = state(node(labels, taints), check_mode=True)
    assert dry['needed'] and not dry['run'] and dry['passed']
    assert dry['message'] == 'npu-01: would validate node Node-01.example with a pod (not in a dry run).'


def test_the_pod_of_the_huawei_profile():
    pod = state(node())
    assert (pod['pod_name'], pod['resource'], pod['npu_count'], pod['dies_per_npu']) == (
        'npu-validate-node-01-example', 'huawei.com/Ascend910', 1, 1)
    assert (pod['image'], pod['command'], pod['judge_output']) == (HUAWEI['image'], HUAWEI['command'], True)
    own = state(node(), image='registry.local/ubuntu:24.04', command=['true'])
    assert (own['image'], own['command'], own['judge_output']) == ('registry.local/ubuntu:24.04', ['true'], False)
    assert not state(node(), check_output=False)['judge_output']


def test_an_a3_node_asks_for_a_whole_npu_and_a_split_node_for_one_vnpu():
    a3 = state(node({KEYS['domain'] + '/chip-family': 'A3'}))
    assert (a3['npu_count'], a3['dies_per_npu']) == (2, 2)
    assert state(node({KEYS['domain'] + '/chip-family': 'A3'}), npu_count=4)['npu_count'] == 4
    split = state(node({KEYS['domain'] + '/vnpu-Ascend910-4c': '2', KEYS['domain'] + '/vnpu-Ascend910-2c': '1',
                        KEYS['domain'] + '/chip-family': 'A3'}))
    assert (split['resource'], split['npu_count'], split['dies_per_npu']) == ('huawei.com/Ascend910-2c', 1, 1)
    named = state(node({KEYS['domain'] + '/chip-family': 'A3'}), resource_name='huawei.com/Ascend910')
    assert (named['resource'], named['npu_count'], named['dies_per_npu']) == ('huawei.com/Ascend910', 1, 1)


def test_a_pod_without_resource_or_image_is_refused():
    bare = {'metadata': {'name': 'Node-01.example'}}
    assert vs.validation_state([[bare]], OPTIONS)['refusal'] == (
        'npu-01: validation: no NPU resource is known for node Node-01.example (it has no Huawei accelerator label). '
        'Fix: run npu.ascend.k8s_node first, or set validate_k8s_resource_name.')
    alibaba = state(node(), profile_name='alibaba', profile={'resource_name': 'aliyun.com/npu', 'image': '',
                                                             'command': [], 'judge_output': False})
    assert alibaba['resource'] == 'aliyun.com/npu' and alibaba['refusal'] == (
        'npu-01: validation: the alibaba profile has no default image. Fix: set validate_k8s_image (for Alibaba, the '
        'ResNet-50 example image in your registry, with validate_k8s_registry for its credentials).')
    # Nothing to run, nothing to refuse.
    assert vs.validation_state([[bare]], dict(OPTIONS, check_mode=True))['refusal'] is None


def test_the_outcome_of_the_play_step():
    passed = vs.validation_state([[node()]], OPTIONS, {'hosts': {'npu-01': {'failed': False, 'report': 'ran.'}}})
    assert passed['passed'] and passed['message'] == 'npu-01: validation passed: ran.'
    refused = vs.validation_state([[node()]], OPTIONS, {'hosts': {'npu-01': {'failed': True, 'msg': 'npu-01: 403'}}})
    assert (refused['passed'], refused['message']) == (False, 'npu-01: 403')
    failed = vs.validation_state([[node()]], OPTIONS, {'hosts': {'npu-01': {'failed': True, 'msg': '',
                                                                            'report': '0/1 nodes: Insufficient x.'}}})
    assert not failed['passed'] and failed['message'].startswith(
        'npu-01: validation failed: 0/1 nodes: Insufficient x. The taint %s is not lifted. Fix: for Insufficient '
        'huawei.com/Ascend910, check that the device plugin runs on the node' % KEYS['unvalidated_taint'])
    assert '(`kubectl describe node Node-01.example`)' in failed['message']
    for fleet in ({'skipped': True}, {'hosts': {}}, None):
        lost = vs.validation_state([[node()]], OPTIONS, fleet)
        assert not lost['passed'] and lost['message'] == (
            'npu-01: validation: the one step of the pods of the play gave no result for this host. Fix: run again.')


def test_filter_refuses_bad_input_with_a_message():
    assert FilterModule().filters() == {'validation_state': validation_state}
    with pytest.raises(AnsibleFilterError, match='expects a list of Node reads'):
        validation_state({})
    with pytest.raises(AnsibleFilterError, match='is not a count.*npu.ascend.vnpu'):
        validation_state([[node({KEYS['domain'] + '/vnpu-chips': 'x'})]], OPTIONS)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_the_pod_name_is_always_a_dns_label(name):
    result = vs.pod_name(name)
    assert result.startswith('npu-validate') and len(result) <= 63
    assert all(char in 'abcdefghijklmnopqrstuvwxyz0123456789-' for char in result) and not result.endswith('-')


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([KEYS['driver'], KEYS['validated'], 'accelerator']),
                       st.sampled_from(['25.0.rc1.1', '25.2.0', 'huawei-Ascend310P', 'true'])),
       st.lists(st.sampled_from([TAINT, {'key': 'other', 'effect': 'NoSchedule'}]), max_size=2),
       st.booleans(), st.booleans())
def test_a_pod_runs_exactly_when_the_node_is_not_validated_for_its_driver(labels, taints, force, check_mode):
    result = state(dict(node(taints=taints), metadata={'name': 'Node-01.example', 'labels': labels}),
                   force=force, check_mode=check_mode)
    validated = labels.get(KEYS['validated']) == labels.get(KEYS['driver'], 'true') and TAINT not in taints
    assert result['needed'] == (force or not validated)
    assert result['run'] == (result['needed'] and not check_mode)
    assert result['passed'] != result['run']
    assert result['message'].startswith('npu-01: ')
