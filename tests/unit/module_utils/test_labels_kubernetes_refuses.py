# -*- coding: utf-8 -*-
"""Labels Kubernetes refuses are never sent (issue 40, class 8): the label check agrees with the API
server's rules (a Hypothesis property against the fake API server's own, written out character by
character), each bad label is named with its key, value and where it came from, and the node still
gets its other labels and its taint in the same run, the host failing after that with the list."""

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.k8s import fleet, npu_labels

from k8s_fake_api import FakeApi, label_refusal, node

TAINT = 'npu.example.com/unvalidated=true:NoSchedule'
OURS = {'key': 'npu.example.com/unvalidated', 'value': 'true', 'effect': 'NoSchedule'}
DRIVER = 'npu.example.com/driver'

# Characters an attacker mixes in: the valid ones, and those Kubernetes refuses somewhere.
_CHARACTERS = st.sampled_from(list('aZ09-_./ \n\t:=@é') + ['\u0660', '\x00'])
_TEXT = st.one_of(st.text(_CHARACTERS, max_size=70), st.text(st.sampled_from('ab9-.'), min_size=60, max_size=70))
_KEY = st.one_of(_TEXT, st.builds(lambda prefix, name: prefix + '/' + name,
                                  st.one_of(_TEXT, st.sampled_from(['npu.example.com', 'a' * 254, 'A.b', 'a..b'])),
                                  _TEXT))


@settings(max_examples=400, deadline=None)
@given(key=_KEY, value=st.one_of(st.none(), _TEXT, st.integers(), st.booleans()))
def test_the_label_check_refuses_exactly_what_the_api_server_refuses(key, value):
    expected_refused = label_refusal(key, str(value) if isinstance(value, int) and not isinstance(value, bool)
                                     else value) is not None
    assert (npu_labels.label_problem(key, value) is not None) == expected_refused


@given(text=st.text(max_size=80))
def test_a_made_value_is_always_one_the_api_server_takes(text):
    value = npu_labels.label_value(text)
    assert value is None or label_refusal('k', value) is None


@pytest.mark.parametrize('text', ['abc\n', 'abc\r\n', '\nabc', 'a' * 64, 'a b', 'a/b', '-a', 'a-'])
def test_is_label_value_refuses_what_the_api_server_refuses(text):
    # `$` in a `^...$` pattern matches before a final newline: "abc\n" was taken as a label value.
    assert npu_labels.is_label_value(text) is False


def spec(host, labels, sources=None, **extra):
    return dict({'host': host, 'name': host, 'labels': labels, 'label_sources': sources or {}, 'taint': TAINT,
                 'manage_taint': True, 'validated_label': 'npu.example.com/validated', 'validated_value': '25.0.rc1.1',
                 'wait_seconds': 0, 'kubeconfig': None, 'context': None}, **extra)


HOSTILE = [
    # (key, value, what the inventory or the probe gave)
    (DRIVER, '25.0 RC1', 'a driver version with a space'),
    ('rack', 'r' * 70, 'a 70-character value'),
    ('team', 'infra\n', 'a trailing newline'),
    ('zone', 'eu/west', 'a "/" in a value'),
    ('my key', 'x', 'a space in a key'),
]


@pytest.mark.parametrize('key, value, _why', HOSTILE)
def test_a_bad_label_is_named_and_the_rest_and_the_taint_are_written(key, value, _why):
    api = FakeApi([node('a'), node('b')])
    labels = {'accelerator': 'huawei-Ascend910', key: value}
    sources = {key: 'k8s_node_extra_labels'}
    outcome = fleet.apply_nodes(api, [spec('a', labels, sources), spec('b', {'accelerator': 'huawei-Ascend910'})],
                                clock=api.clock, sleep=api.clock.sleep)
    result = outcome['results']['a']
    # Nothing the API server refuses was sent: no 422, one patch per node.
    assert api.count('patch_node') == 2
    assert api.nodes['a']['metadata']['labels'].get('accelerator') == 'huawei-Ascend910'
    assert key not in api.nodes['a']['metadata']['labels']
    assert api.nodes['a']['spec']['taints'] == [OURS]
    # The host fails after the good labels were written, naming the bad one, its value and its source.
    assert result['failed'] is True and result['changed'] is True
    assert result['refused_labels'] == [{'key': key, 'value': value, 'source': 'k8s_node_extra_labels',
                                         'reason': npu_labels.label_problem(key, value)}]
    assert result['msg'].startswith('a: k8s_node: ')
    assert '%s=%r' % (key, value) in result['msg'] and 'k8s_node_extra_labels' in result['msg']
    assert 'RBAC' not in result['msg'] and 'can-i' not in result['msg']
    # The other node is not held back.
    assert outcome['results']['b']['failed'] is False and api.nodes['b']['spec']['taints'] == [OURS]


def test_every_bad_label_is_named_not_only_the_first():
    api = FakeApi([node('a')])
    labels = dict((key, value) for key, value, _why in HOSTILE)
    labels['accelerator'] = 'huawei-Ascend910'
    result = fleet.apply_nodes(api, [spec('a', labels, {DRIVER: 'ansible_facts.ascend.installed.driver.version'})],
                               clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert sorted(item['key'] for item in result['refused_labels']) == sorted(key for key, _v, _w in HOSTILE)
    for key, value, _why in HOSTILE:
        assert '%s=%r' % (key, value) in result['msg']
    assert 'ansible_facts.ascend.installed.driver.version' in result['msg']
    # A label without a named source is said to come from the module's option.
    assert 'nodes[].labels' in result['msg']
    assert api.nodes['a']['metadata']['labels'] == {'accelerator': 'huawei-Ascend910'}


def test_a_refused_label_already_on_the_node_is_not_removed_nor_counted_as_a_change():
    # A label is only left out of the patch: what the node carries is left as it is.
    api = FakeApi([node('a', {'accelerator': 'huawei-Ascend910', 'team': 'infra'}, [OURS])])
    result = fleet.apply_nodes(api, [spec('a', {'accelerator': 'huawei-Ascend910', 'team': 'infra\n'})],
                               clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert api.count('patch_node') == 0
    assert api.nodes['a']['metadata']['labels']['team'] == 'infra'
    assert result['failed'] is True and result['changed'] is False


def test_a_number_from_the_inventory_is_the_string_kubernetes_stores_and_converges():
    api = FakeApi([node('a')])
    specs = [spec('a', {'rack': 12})]
    first = fleet.apply_nodes(api, specs, clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert first['failed'] is False and api.nodes['a']['metadata']['labels']['rack'] == '12'
    again = fleet.apply_nodes(api, specs, clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert again['changed'] is False


def test_a_patch_the_api_server_still_refuses_is_not_blamed_on_rbac():
    api = FakeApi([node('a')])
    api.refuse['a'] = fleet.ApiError('422 Unprocessable Entity: Node "a" is invalid: metadata.annotations: Too long',
                                     422)
    result = fleet.apply_nodes(api, [spec('a', {'accelerator': 'huawei-Ascend910'})],
                               clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert result['failed'] is True
    assert 'metadata.annotations: Too long' in result['msg']
    assert 'can-i' not in result['msg'] and 'may patch' not in result['msg']


def test_a_driver_version_the_node_cannot_be_labelled_with_is_not_written_as_validated():
    api = FakeApi([node('a', {DRIVER: '1'}, [OURS])])
    api.pod_script[('v', 'p')] = [(0, {'phase': 'Succeeded'})]
    validation = {'host': 'a', 'name': 'a', 'pod': {'metadata': {'namespace': 'v', 'name': 'p'}}, 'resource': 'r',
                  'npu_count': 1, 'success_phases': ['Succeeded'], 'timeout_seconds': 10,
                  'validated_label': 'npu.example.com/validated', 'validated_value': '25.0 RC1', 'taint': TAINT}
    result = fleet.validate_nodes(api, [validation], clock=api.clock, sleep=api.clock.sleep)['results']['a']
    assert result['failed'] is True and result['lifted'] is False
    assert "npu.example.com/validated='25.0 RC1'" in result['msg'] and 'RBAC' not in result['msg']
    assert api.count('create_pod') == 0 and api.count('patch_node') == 0


def test_the_module_names_the_source_it_was_given_and_writes_nothing_in_check_mode(run_module, monkeypatch):
    from ansible_collections.npu.ascend.plugins.modules import k8s_fleet_nodes
    api = FakeApi([node('a')])
    monkeypatch.setattr(k8s_fleet_nodes, 'KubernetesApi', lambda *args, **kwargs: api)
    args = {'nodes': [{'host': 'a', 'name': 'a', 'labels': {'accelerator': 'huawei-Ascend910', 'rack': 'r 12'},
                       'label_sources': {'rack': 'k8s_node_extra_labels'}, 'taint': TAINT, 'wait_seconds': 0,
                       'validated_label': 'npu.example.com/validated'}]}
    checked = run_module(k8s_fleet_nodes, args, check_mode=True)['hosts']['a']
    assert api.count('patch_node') == 0
    assert checked['failed'] is True and 'would be written (check mode)' in checked['msg']
    result = run_module(k8s_fleet_nodes, args)['hosts']['a']
    assert result['refused_labels'] == [{'key': 'rack', 'value': 'r 12', 'source': 'k8s_node_extra_labels',
                                         'reason': 'the value must be empty or alphanumeric at both ends, with only '
                                                   '"-", "_" and "." inside'}]
    assert "rack='r 12' (from k8s_node_extra_labels)" in result['msg'] and 'are written' in result['msg']
    assert api.nodes['a']['metadata']['labels'] == {'accelerator': 'huawei-Ascend910'}
    assert api.nodes['a']['spec']['taints'] == [OURS]


@pytest.mark.parametrize('key, value, _why', HOSTILE)
def test_the_label_patch_filter_names_every_label_kubernetes_refuses_instead_of_making_the_patch(key, value, _why):
    from ansible.errors import AnsibleFilterError
    from ansible_collections.npu.ascend.plugins.filter.k8s_label_changes import k8s_label_changes
    with pytest.raises(AnsibleFilterError) as raised:
        k8s_label_changes({}, {'accelerator': 'huawei-Ascend910', key: value, 'other key': 'x'})
    assert '%s=%r' % (key, value) in str(raised.value) and "other key='x'" in str(raised.value)


def test_the_label_patch_filter_compares_a_number_as_the_string_kubernetes_stores():
    from ansible_collections.npu.ascend.plugins.filter.k8s_label_changes import k8s_label_changes
    assert k8s_label_changes({'rack': '12'}, {'rack': 12}) == {}
    assert k8s_label_changes({}, {'rack': 12}) == {'rack': '12'}
