# -*- coding: utf-8 -*-
"""One label domain and one Node name for every role (issue 31).

The domain of the collection's labels and taint has one default, ``DEFAULT_DOMAIN`` in
plugins/module_utils/k8s/npu_labels.py; every role, playbook and plugin takes the keys from it through
``npu.ascend.k8s_label_keys`` (or ``label_keys`` in Python), given ``npu_ascend_label_domain``. The
Node of a host is ``npu_ascend_k8s_node_name``, else the inventory name, in every role. These tests
fail when a role, playbook or plugin spells the domain or a Node name of its own again.
"""

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
ROLES = REPO / 'roles'

KEYS_RULE = 'npu_ascend_label_domain | default(none) | npu.ascend.k8s_label_keys'
NODE_NAME_RULE = 'npu_ascend_k8s_node_name | default(inventory_hostname, true)'

# The per-role variables the shared ones replaced: none may come back as a role option.
REPLACED = {
    'k8s_node_label_domain', 'k8s_node_name', 'k8s_node_taint', 'validate_k8s_label_domain', 'validate_k8s_node_name',
    'validate_k8s_taint', 'k8s_maintenance_label_domain', 'k8s_maintenance_node_name',
    'k8s_maintenance_device_plugin_pause_label', 'doctor_label_domain', 'doctor_k8s_node_name',
    'fleet_report_label_domain', 'fleet_report_k8s_node_name', 'upgrade_label_domain', 'health_gate_node_name',
    'device_plugin_unvalidated_taint_key', 'exporter_unvalidated_taint_key', 'device_plugin_pause_label',
}


def _role_files():
    for pattern in ('*/defaults/*.yml', '*/vars/*.yml', '*/tasks/*.yml', '*/handlers/*.yml', '*/templates/*',
                    '*/meta/argument_specs.yml'):
        yield from sorted(ROLES.glob(pattern))


YAML_AND_TEMPLATES = list(_role_files()) + sorted((REPO / 'playbooks').rglob('*.yml'))


@pytest.mark.parametrize('path', YAML_AND_TEMPLATES, ids=lambda path: str(path.relative_to(REPO)))
def test_no_role_or_playbook_spells_a_label_key_of_its_own(path):
    text = path.read_text(encoding='utf-8')
    assert 'npu.ascend/' not in text, '%s spells a label or taint key; take it from %s' % (path, KEYS_RULE)
    # A domain default of its own, in a Jinja default or as a YAML value of a *domain* variable.
    assert not re.search(r"default\(\s*['\"]npu\.ascend['\"]", text), path
    assert not re.search(r'(?m)^\s*\w*domain\w*:\s*["\']?npu\.ascend["\']?\s*$', text), path


def _argument_specs():
    for path in sorted(ROLES.glob('*/meta/argument_specs.yml')):
        for entry_point, spec in (yaml.safe_load(path.read_text(encoding='utf-8'))['argument_specs'] or {}).items():
            yield path.parent.parent.name, entry_point, spec.get('options') or {}


def test_no_role_has_an_option_or_default_of_its_own_for_the_domain_or_the_node_name():
    for path in sorted(ROLES.glob('*/defaults/main.yml')):
        defaults = yaml.safe_load(path.read_text(encoding='utf-8')) or {}
        assert not REPLACED & set(defaults), path
        assert not {'npu_ascend_label_domain', 'npu_ascend_k8s_node_name'} & set(defaults), \
            '%s: the shared variables have no role default (the domain is defaulted by k8s_label_keys)' % path
    for role, entry_point, options in _argument_specs():
        assert not REPLACED & set(options), (role, entry_point)
        for name in ('npu_ascend_label_domain', 'npu_ascend_k8s_node_name'):
            assert 'default' not in options.get(name, {}), (role, entry_point, name)


def _role_vars(role):
    path = ROLES / role / 'vars' / 'main.yml'
    return (yaml.safe_load(path.read_text(encoding='utf-8')) or {}) if path.exists() else {}


def _uses(role, suffix):
    """Whether the role's tasks, templates or vars read ``__<prefix>_<suffix>``."""
    texts = [path.read_text(encoding='utf-8') for pattern in ('tasks/*.yml', 'templates/*', 'vars/*.yml')
             for path in (ROLES / role).glob(pattern)]
    return any(re.search(r'__%s\w*_%s\b' % (role, suffix), text) for text in texts)


KUBERNETES_ROLES = ['k8s_node', 'validate', 'device_plugin', 'exporter', 'k8s_maintenance', 'doctor',
                    'fleet_report', 'health_gate']


@pytest.mark.parametrize('role', KUBERNETES_ROLES)
def test_every_kubernetes_role_derives_keys_and_node_name_by_the_one_rule(role):
    variables = _role_vars(role)
    keys = [value for name, value in variables.items() if name.endswith('_keys')]
    assert keys == ['{{ %s }}' % KEYS_RULE], '%s: %r' % (role, keys)
    names = [value for name, value in variables.items() if name.endswith('_node_name')]
    if _uses(role, 'node_name'):
        assert names == ['{{ %s }}' % NODE_NAME_RULE], '%s: %r' % (role, names)


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for section in ('block', 'rescue', 'always', 'tasks', 'pre_tasks', 'post_tasks'):
            yield from _tasks(node.get(section))


TASK_FILES = sorted(ROLES.glob('*/tasks/*.yml')) + sorted((REPO / 'playbooks').rglob('*.yml'))


@pytest.mark.parametrize('path', TASK_FILES, ids=lambda path: str(path.relative_to(REPO)))
def test_no_node_object_is_named_after_the_inventory_host_directly(path):
    # A Node read or written by the inventory name alone misses a host whose kubelet registered
    # another name (its FQDN): the Node's name is npu_ascend_k8s_node_name first.
    for task in _tasks(yaml.safe_load(path.read_text(encoding='utf-8'))):
        for action, args in task.items():
            if not action.startswith('kubernetes.core.') or not isinstance(args, dict):
                continue
            text = yaml.safe_dump(args)
            if args.get('kind') == 'Node' or 'nodeName' in text:
                assert not re.search(r'(?<![\w(])inventory_hostname\s*}}', str(args.get('name', ''))), (path, task)
                assert 'spec.nodeName={{ inventory_hostname' not in text, (path, task)


def test_python_has_one_default_domain():
    literal = re.compile(r"""['"]npu\.ascend['"]""")
    found = []
    for path in sorted((REPO / 'plugins').rglob('*.py')):
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            if literal.search(line):
                found.append((str(path.relative_to(REPO)), line.strip()))
    # The collection's own name (role_requirements, the field manager of its writes) is not a label domain.
    assert sorted(found) == [
        ('plugins/module_utils/k8s/client.py', "FIELD_MANAGER = 'npu.ascend'"),
        ('plugins/module_utils/k8s/npu_labels.py', "DEFAULT_DOMAIN = 'npu.ascend'"),
        ('plugins/plugin_utils/role_requirements.py', "COLLECTION = 'npu.ascend'"),
    ]
