# -*- coding: utf-8 -*-
"""inventories/example and the README's inventory snippet give every variable the playbooks'
roles require, read the way Ansible reads them (group_vars, model groups, inline vars); the
molecule scenario `example` then runs the example for real."""

import os
import re

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.manager import VariableManager
from playbook_roles import playbook_roles

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(REPO_ROOT, 'inventories', 'example')
PLAYBOOKS = ('site.yml', 'kubernetes.yml')
# The server models of the example and the PCI functions each shows (facts reference).
MODEL_NPU_COUNTS = {'atlas_800i_a2': 8, 'atlas_300i_duo': 2}


def _load_yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def _required_options(role):
    specs = _load_yaml(os.path.join(REPO_ROOT, 'roles', role.split('.')[-1], 'meta', 'argument_specs.yml'))['argument_specs']
    return sorted(option for option, spec in (specs['main'].get('options') or {}).items() if spec.get('required'))


def _required_by_playbooks():
    """{variable: [role, ...]} for every required option of the playbooks' roles' main entry."""
    required = {}
    for playbook in PLAYBOOKS:
        for role in playbook_roles(playbook, main_only=True):
            for option in _required_options(role):
                required.setdefault(option, set()).add(role)
    return required


def _host_vars(source):
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[source])
    variables = VariableManager(loader=loader, inventory=inventory)
    return {host.name: variables.get_vars(host=host) for host in inventory.get_hosts('npu_nodes')}, inventory


def _missing(host_vars, required):
    return {host: sorted('%s (%s)' % (name, ', '.join(sorted(roles)))
                         for name, roles in required.items() if name not in values)
            for host, values in host_vars.items()
            if any(name not in values for name in required)}


def test_the_playbooks_require_the_stack_versions():
    # The check below would pass on anything if the required options were not found.
    assert {'hdk_driver_version', 'hdk_firmware_version', 'cann_version',
            'container_runtime_version'} <= set(_required_by_playbooks())


def test_example_sets_every_required_variable_for_every_host():
    host_vars, _inventory = _host_vars(EXAMPLE)
    assert sorted(host_vars) == ['a2-node-01', 'duo-node-01']
    assert _missing(host_vars, _required_by_playbooks()) == {}


def test_example_sets_the_npu_count_per_server_model_not_per_host():
    host_vars, inventory = _host_vars(EXAMPLE)
    for model, count in MODEL_NPU_COUNTS.items():
        hosts = [host.name for host in inventory.get_hosts(model)]
        assert hosts, model
        for host in hosts:
            assert host_vars[host]['preflight_expected_npu_count'] == count, host
    assert not os.path.isdir(os.path.join(EXAMPLE, 'host_vars')) or not os.listdir(os.path.join(EXAMPLE, 'host_vars'))


def test_example_points_the_kubernetes_playbook_at_a_kubeconfig():
    host_vars, _inventory = _host_vars(EXAMPLE)
    assert all(values.get('k8s_kubeconfig') for values in host_vars.values())


def test_chip_groups_source_is_a_constructed_config_read_after_hosts():
    # Files of an inventory directory are read in name order; constructed only sees the hosts
    # of the files read before it.
    config = _load_yaml(os.path.join(EXAMPLE, 'npu_chips.yml'))
    assert config['plugin'] == 'ansible.builtin.constructed'
    assert {group['key'] for group in config['keyed_groups']} == {'ascend.chip_family', 'ascend.product'}
    sources = sorted(name for name in os.listdir(EXAMPLE) if name.endswith(('.yml', '.yaml')))
    assert sources[-1] == 'npu_chips.yml', sources


@pytest.fixture
def readme_inventory(tmp_path):
    with open(os.path.join(REPO_ROOT, 'README.md')) as handle:
        readme = handle.read()
    section = readme[readme.index('## Using it on real servers'):]
    snippet = re.search(r'```yaml\n(\s*# inventory/hosts.yml\n.*?)```', section, re.S).group(1)
    path = tmp_path / 'hosts.yml'
    path.write_text(snippet)
    return str(path)


def test_readme_snippet_sets_every_required_variable(readme_inventory):
    host_vars, _inventory = _host_vars(readme_inventory)
    assert host_vars
    assert _missing(host_vars, _required_by_playbooks()) == {}
