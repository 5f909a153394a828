# -*- coding: utf-8 -*-
"""The device plugin's RBAC template: rendered as the role renders it, checked rule by rule.

What the API server makes of it is tested in tests/k8s/test_device_plugin_rbac.py.
"""

import re
from pathlib import Path

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from conftest import trust_as_template

ROLE = Path(__file__).resolve().parents[3] / 'roles' / 'device_plugin'
TEMPLATE = ROLE / 'templates' / 'rbac.yml.j2'


def render(**overrides):
    variables = {}
    for name in ('defaults/main.yml', 'vars/main.yml'):
        variables.update(yaml.safe_load((ROLE / name).read_text(encoding='utf-8')))
    variables.update(overrides)
    rendered = Templar(loader=DataLoader(), variables=variables).template(
        trust_as_template(TEMPLATE.read_text(encoding='utf-8')))
    return [document for document in yaml.safe_load_all(rendered) if document]


def rules(documents, kind):
    return [rule for document in documents if document['kind'] == kind for rule in document.get('rules', [])]


def grants(documents, resource):
    return [rule for document in documents for rule in document.get('rules', []) if resource in rule['resources']]


def test_no_rule_has_an_empty_resource_names_list_which_would_mean_every_name():
    documents = render(__device_plugin_node_names=[])
    for document in documents:
        for rule in document.get('rules', []):
            assert 'resourceNames' not in rule or rule['resourceNames'], rule
    # Without the node names nothing is granted on nodes at all.
    assert grants(documents, 'nodes') == [] and grants(documents, 'nodes/status') == []


def test_nodes_and_device_info_are_restricted_to_the_named_nodes():
    documents = render(__device_plugin_node_names=['node-b', 'node-a', 'node-b'])
    assert [(rule['resourceNames'], rule['verbs']) for rule in grants(documents, 'nodes')] == \
        [(['node-a', 'node-b'], ['get', 'patch'])]
    assert [(rule['resourceNames'], rule['verbs']) for rule in grants(documents, 'nodes/status')] == \
        [(['node-a', 'node-b'], ['patch'])]
    named = [rule for rule in rules(documents, 'Role') if 'update' in rule['verbs']]
    assert named == [{'apiGroups': [''], 'resources': ['configmaps'],
                      'resourceNames': ['mindx-dl-deviceinfo-node-a', 'mindx-dl-deviceinfo-node-b'],
                      'verbs': ['get', 'update']}]


@pytest.mark.parametrize('version, verbs', [
    ('v7.3.0', ['patch']), ('v7.3.2', ['patch']), ('7.3.0', ['patch']),
    ('v26.0.0', ['patch', 'update']), ('v26.1.0', ['patch', 'update']),
])
def test_node_status_update_only_for_releases_that_call_update_status(version, verbs):
    documents = render(__device_plugin_node_names=['n1'], device_plugin_version=version)
    assert [rule['verbs'] for rule in grants(documents, 'nodes/status')] == [verbs]


def test_nothing_the_plugin_never_calls():
    documents = render(__device_plugin_node_names=['n1'])
    for document in documents:
        for rule in document.get('rules', []):
            assert '*' not in rule['verbs'] and '*' not in rule['resources']
            assert set(rule['resources']) <= {'pods', 'nodes', 'nodes/status', 'configmaps', 'events'}, rule
            assert 'delete' not in rule['verbs'] and 'deletecollection' not in rule['verbs']
    assert [rule['verbs'] for rule in grants(documents, 'pods')] == [['get', 'list', 'watch', 'patch']]
    # Cluster-wide on ConfigMaps: only list and watch (the hot-reset informer).
    assert [rule['verbs'] for rule in rules(documents, 'ClusterRole') if 'configmaps' in rule['resources']
            and 'resourceNames' not in rule] == [['list', 'watch'], ['get', 'update']]
    events = grants(documents, 'events')
    assert events == [{'apiGroups': [''], 'resources': ['events'], 'verbs': ['create']}]


def test_the_plugins_own_objects_are_granted_in_kube_system_whatever_its_namespace():
    documents = render(__device_plugin_node_names=['n1'], device_plugin_namespace='npu-system',
                       device_plugin_job_namespaces=['train', 'infer', 'train'])
    roles = [document for document in documents if document['kind'] == 'Role']
    assert [role['metadata']['namespace'] for role in roles] == ['kube-system']
    bindings = [document for document in documents if document['kind'] == 'RoleBinding']
    assert [(binding['metadata']['namespace'], binding['roleRef']['name']) for binding in bindings] == [
        ('kube-system', 'npu-ascend:ascend-device-plugin'),
        ('infer', 'npu-ascend:ascend-device-plugin:job-configmaps'),
        ('train', 'npu-ascend:ascend-device-plugin:job-configmaps')]
    for document in documents:
        for subject in document.get('subjects', []):
            assert subject == {'kind': 'ServiceAccount', 'name': 'ascend-device-plugin', 'namespace': 'npu-system'}


def test_no_job_namespace_binds_no_job_grant():
    documents = render(__device_plugin_node_names=['n1'], device_plugin_job_namespaces=[])
    assert [document['metadata']['namespace'] for document in documents if document['kind'] == 'RoleBinding'] == \
        ['kube-system']


def test_every_rule_names_the_call_that_needs_it():
    lines = TEMPLATE.read_text(encoding='utf-8').splitlines()
    rule_starts = [index for index, line in enumerate(lines) if line.strip().startswith('- apiGroups:')]
    assert len(rule_starts) == 9
    for index in rule_starts:
        # The comment block right above the rule (template lines in between are skipped).
        comment = []
        cursor = index - 1
        while cursor >= 0 and lines[cursor].strip().startswith(('#', '{%')):
            comment.append(lines[cursor])
            cursor -= 1
        assert re.search(r'\.go\b', ' '.join(comment)), 'rule at line %d has no source comment' % (index + 1)
