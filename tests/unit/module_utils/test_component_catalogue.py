# -*- coding: utf-8 -*-
"""The component catalogue: one row per component, and the places that name components read it."""
import os

import pytest
import yaml

from ansible_collections.npu.ascend.plugins.module_utils import ascend_package, component_catalogue, runfile
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile
from ansible_collections.npu.ascend.plugins.plugin_utils import package_resolution

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_one_row_per_component():
    ids = component_catalogue.component_ids()
    assert len(ids) == len(set(ids))
    assert set(component_catalogue.chip_components()) | set(component_catalogue.chipless_components()) == set(ids)


@pytest.mark.parametrize('row', [row for row in component_catalogue.COMPONENTS if row['role']], ids=lambda row: row['id'])
def test_a_managed_component_has_its_role_fact_key_and_version_file(row):
    assert os.path.isdir(os.path.join(REPO, 'roles', row['role']))
    assert row['fact_key'] and row['version_file'] and row['version_line'] and row['reinstall']
    with open(os.path.join(REPO, 'docs', 'development.md'), encoding='utf-8') as handle:
        contract = handle.read()
    for path in row['version_file'].split(', '):
        assert path.split(' (')[0] in contract


def test_readers_use_the_catalogue():
    assert runfile.MANAGED_COMPONENTS == ('driver', 'firmware', 'toolkit', 'kernels', 'ops', 'nnal', 'docker_runtime')
    assert runfile.FACT_KEYS['docker_runtime'] == 'docker_runtime'
    assert ascend_package.COMPONENTS == component_catalogue.component_ids()
    assert set(package_resolution.CHIPLESS_COMPONENTS) == {'toolkit', 'nnae', 'nnrt', 'nnal', 'docker_runtime'}


def test_unknown_component_is_refused():
    with pytest.raises(ValueError, match='unknown component'):
        component_catalogue.component_row('docker_runtime')


def _yaml(relative):
    with open(os.path.join(REPO, relative), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def test_the_user_facing_spellings_are_the_rows():
    """The packages role's component choices and ascend_runfile's are the catalogue's ids; the version keys
    of the wanted stack (preflight, health gate) use the fact keys (docker_runtime)."""
    packages = _yaml('roles/packages/meta/argument_specs.yml')['argument_specs']
    choices = [((option.get('options') or {}).get('component') or {}).get('choices')
               for entry_point in packages.values() for option in entry_point['options'].values()]
    choices = [found for found in choices if found]
    assert len(choices) == 2
    for found in choices:
        assert found == [row['id'] for row in component_catalogue.COMPONENTS if row['id'] != 'driver-hotpatch']
    documented = yaml.safe_load(ascend_runfile.DOCUMENTATION)['options']['component']['choices']
    assert documented == list(component_catalogue.managed_components())
    preflight = _yaml('roles/preflight/meta/argument_specs.yml')['argument_specs']['main']['options']
    stack_keys = set(next(option['options'] for option in preflight.values()
                          if set(('driver', 'firmware', 'nnal')) <= set(option.get('options') or {})))
    assert component_catalogue.fact_keys()['docker_runtime'] in stack_keys
