# -*- coding: utf-8 -*-
"""The collection's metadata says what is true: no plugin was added in a release after galaxy.yml's
version, the fleet-wide Kubernetes modules are one module_defaults group (and the group works), and
galaxy.yml's addresses are either real URLs or empty where README.md says the project has none."""

import ast
import os
import re

import pytest
import yaml
from ansible.utils.version import SemanticVersion

from conftest import run_playbook

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(REPO_ROOT, 'plugins')
# Plugin types whose files carry their own documentation (doc_fragments only lend theirs,
# module_utils and plugin_utils have none; plugins/action's docs are its files under plugins/modules).
DOCUMENTED_TYPES = ('modules', 'filter', 'test', 'lookup', 'callback', 'inventory', 'connection', 'become',
                    'cache', 'strategy', 'vars')


def _load_yaml(*path):
    with open(os.path.join(REPO_ROOT, *path), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _galaxy():
    return _load_yaml('galaxy.yml')


def _documentation(path):
    """The parsed DOCUMENTATION of a plugin file (a Python plugin's string, a doc fragment class's, a Jinja2
    plugin's .yml)."""
    with open(path, encoding='utf-8') as handle:
        source = handle.read()
    if path.endswith('.py'):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Assign) and any(getattr(target, 'id', None) == 'DOCUMENTATION'
                                                    for target in node.targets):
                return yaml.safe_load(node.value.value)
        return None
    return (yaml.safe_load(source) or {}).get('DOCUMENTATION')


def _documented_plugins():
    """{relative path: DOCUMENTATION} of every plugin file that documents itself."""
    found = {}
    for plugin_type in DOCUMENTED_TYPES:
        directory = os.path.join(PLUGINS, plugin_type)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            if name.startswith('_') or not name.endswith(('.py', '.yml', '.yaml')):
                continue
            documentation = _documentation(os.path.join(directory, name))
            if documentation:
                found[os.path.join('plugins', plugin_type, name)] = documentation
    return found


def _versions_added(value, where=''):
    """(where, version) of every version_added in a documentation tree (the plugin's, its options', ...)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == 'version_added' and not isinstance(item, (dict, list)):
                yield where or '.', str(item)
            else:
                yield from _versions_added(item, '%s.%s' % (where, key) if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _versions_added(item, '%s[%d]' % (where, index))


def test_no_plugin_or_role_option_claims_a_release_after_the_collection_version():
    """An unreleased collection's plugins are all new in its first release: version_added is at most
    galaxy.yml's version (antsibull-changelog lists a plugin as new in the release its version_added names)."""
    version = SemanticVersion(str(_galaxy()['version']))
    plugins = _documented_plugins()
    # The walk found the plugins (a wrong path would pass on nothing).
    assert len([path for path in plugins if path.startswith('plugins/modules/')]) >= 10, sorted(plugins)
    assert len([path for path in plugins if path.startswith('plugins/filter/')]) >= 10, sorted(plugins)
    claims = [(path, where, added) for path, documentation in plugins.items()
              for where, added in _versions_added(documentation)]
    for role in sorted(os.listdir(os.path.join(REPO_ROOT, 'roles'))):
        specs = os.path.join('roles', role, 'meta', 'argument_specs.yml')
        if os.path.exists(os.path.join(REPO_ROOT, specs)):
            claims.extend((specs, where, added) for where, added in _versions_added(_load_yaml(specs)))
    assert claims
    later = ['%s (%s): version_added %s' % claim for claim in claims if SemanticVersion(claim[2]) > version]
    assert later == [], 'galaxy.yml is at %s' % version


def test_every_plugin_says_when_it_was_added():
    missing = sorted(path for path, documentation in _documented_plugins().items()
                     if 'version_added' not in documentation)
    assert missing == []


def _modules_with_the_cluster_options():
    return sorted(path.split('/')[-1][:-3] for path, documentation in _documented_plugins().items()
                  if path.startswith('plugins/modules/')
                  and 'npu.ascend.k8s_fleet' in (documentation.get('extends_documentation_fragment') or []))


def test_the_fleet_wide_kubernetes_modules_are_one_action_group():
    groups = _load_yaml('meta', 'runtime.yml')['action_groups']
    modules = _modules_with_the_cluster_options()
    assert modules == ['k8s_fleet_nodes', 'k8s_fleet_validate']
    assert sorted(groups['k8s_fleet']) == modules
    for group, members in groups.items():
        for member in members:
            assert os.path.exists(os.path.join(PLUGINS, 'modules', member + '.py')), (group, member)


def test_the_modules_document_their_group():
    # The modules of the group document it through the fragment that documents the options it sets.
    fragment = _documentation(os.path.join(PLUGINS, 'doc_fragments', 'k8s_fleet.py'))
    assert fragment['attributes']['action_group']['membership'] == ['npu.ascend.k8s_fleet']
    assert set(fragment['options']) == {'kubeconfig', 'context', 'request_timeout'}


PLAY = '''
- name: Give the cluster once, for both modules
  hosts: localhost
  gather_facts: false
  vars:
    ansible_python_interpreter: "{{{{ ansible_playbook_python }}}}"
  module_defaults:
    group/npu.ascend.k8s_fleet:
      kubeconfig: {kubeconfig}
  tasks:
    - name: Label
      npu.ascend.k8s_fleet_nodes:
        nodes: [{{host: a2-01, name: a2-01, wait_seconds: 0, manage_taint: false}}]
      register: labelled
    - name: Validate
      npu.ascend.k8s_fleet_validate:
        nodes:
          - host: a2-01
            name: a2-01
            pod: {{metadata: {{namespace: npu-validation, name: validate-a2-01}}}}
            resource: huawei.com/Ascend910
            taint: npu.ascend/unvalidated=true:NoSchedule
            validated_label: npu.ascend/validated
            validated_value: 25.0.rc1.1
            timeout_seconds: 1
      register: validated
    - name: Say which kubeconfig each one used
      ansible.builtin.debug:
        msg: "LABEL {{{{ labelled.hosts['a2-01'].msg }}}} VALIDATE {{{{ validated.hosts['a2-01'].msg }}}}"
'''


def test_module_defaults_of_the_group_reach_both_modules(tmp_path):
    pytest.importorskip('kubernetes')
    # A kubeconfig that does not exist: each module's message names the one it was given.
    kubeconfig = str(tmp_path / 'kubeconfig-from-module-defaults')
    playbook = tmp_path / 'play.yml'
    playbook.write_text(PLAY.format(kubeconfig=kubeconfig))
    rc, out = run_playbook(['-i', 'localhost,', '-c', 'local', str(playbook)])
    assert rc == 0, out
    label, validate = out.split('LABEL ', 1)[1].split(' VALIDATE ', 1)
    assert 'k8s_kubeconfig (%s,' % kubeconfig in label, out
    assert 'k8s_kubeconfig (%s,' % kubeconfig in validate, out


_URL = re.compile(r'^https://[^\s/]+\.[^\s/]+(/\S*)?$')


def test_galaxy_addresses_are_urls_or_said_to_be_missing():
    galaxy = _galaxy()
    with open(os.path.join(REPO_ROOT, 'README.md'), encoding='utf-8') as handle:
        readme = handle.read()
    for key in ('repository', 'documentation', 'issues'):
        # ansible-lint's production profile wants the keys; an empty one means "none yet".
        assert key in galaxy, key
        value = galaxy[key] or ''
        assert value == '' or _URL.match(value), (key, value)
    if not all(galaxy[key] for key in ('repository', 'documentation', 'issues')):
        # Where a user looks for them, README.md says where the documentation is and where to report.
        section = readme.split('## Documentation and problems', 1)
        assert len(section) == 2, 'README.md has no "Documentation and problems" section'
        assert 'no public' in section[1].split('\n## ', 1)[0]
