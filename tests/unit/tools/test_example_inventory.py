# -*- coding: utf-8 -*-
"""inventories/example and the README's inventory snippet give every variable the playbooks'
roles require, read the way Ansible reads them (group_vars, model groups, inline vars); the
molecule scenario `example` then runs the example for real. npu.ascend.bundle, which needs no
server, runs here on the example as it is."""

import hashlib
import os
import re

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.manager import VariableManager
from conftest import run_playbook
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


def test_example_declares_chip_and_architecture_per_server_model():
    # What npu.ascend.bundle names the package files by before any server is reached.
    host_vars, inventory = _host_vars(EXAMPLE)
    for model in MODEL_NPU_COUNTS:
        declared = _load_yaml(os.path.join(EXAMPLE, 'group_vars', model + '.yml'))
        assert declared.get('npu_ascend_chip') and declared.get('npu_ascend_arch') in ('x86_64', 'aarch64'), model
        for host in inventory.get_hosts(model):
            assert host_vars[host.name]['npu_ascend_arch'] == declared['npu_ascend_arch'], host.name


def _stand_in_packages(directory, names):
    """A file per name and a SHA256SUMS over them, as `sha256sum *.run > SHA256SUMS` writes it."""
    sums = []
    for name in names:
        path = directory / name
        path.write_bytes(b'#!/bin/sh\n# stand-in for ' + name.encode() + b'\n')
        sums.append('%s  %s' % (hashlib.sha256(path.read_bytes()).hexdigest(), name))
    (directory / 'SHA256SUMS').write_text('\n'.join(sums) + '\n')


def test_the_bundle_check_runs_on_the_example_as_it_is(tmp_path):
    """README: npu.ascend.bundle names and checks the package files before the servers are reachable
    (the example's hosts are documentation addresses, reached by nothing here). Only the package
    directory differs: the example's /srv/ascend/packages is the user's, a temporary one stands in."""
    host_vars, _inventory = _host_vars(EXAMPLE)
    packages = tmp_path / 'packages'
    packages.mkdir()
    listing = tmp_path / 'needed.txt'
    arguments = ['-i', EXAMPLE, 'npu.ascend.bundle', '-e', 'packages_source_dir=%s' % packages,
                 '-e', 'packages_bundle_list_file=%s' % listing]
    # An empty directory: every node's files are named (its chip and architecture are declared),
    # and each is missing.
    rc, out = run_playbook(arguments)
    assert rc != 0, out
    assert 'cannot be named' not in out, out
    names = listing.read_text().split()
    for host, values in host_vars.items():
        driver = 'Ascend-hdk-%s-npu-driver_%s_linux-%s.run' % (
            values['npu_ascend_chip'], values['hdk_driver_version'], values['npu_ascend_arch'].replace('_', '-'))
        assert driver in names, (host, names)
        assert 'FAIL %s (driver %s, for %s): not found in %s' % (driver, values['hdk_driver_version'], host, packages) in out
    # The files as downloaded, with their checksums: every node passes.
    _stand_in_packages(packages, names)
    rc, out = run_playbook(arguments)
    assert rc == 0, out
    assert 'FAIL' not in out
    for host in host_vars:
        assert '%s : ok=' % host in out and 'failed=0' in out.split('%s : ok=' % host)[1][:80], out


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
    # ... and what npu.ascend.bundle, the step before the servers are reachable, names the files by.
    assert all(values.get('npu_ascend_chip') and values.get('npu_ascend_arch') for values in host_vars.values())
