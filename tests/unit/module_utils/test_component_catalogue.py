# -*- coding: utf-8 -*-
"""The component catalogue: one row per component, and the places that name components read it."""
import os

import pytest
import yaml

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue, package_names, runfile
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile
from ansible_collections.npu.ascend.plugins.plugin_utils import package_resolution

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_one_row_per_component():
    ids = component_catalogue.component_ids()
    assert len(ids) == len(set(ids))
    assert set(component_catalogue.chip_components()) | set(component_catalogue.chipless_components()) == set(ids)


@pytest.mark.parametrize('row', [row for row in component_catalogue.COMPONENTS if row['role']], ids=lambda row: row['id'])
def test_a_managed_component_has_its_role_and_version_file(row):
    assert os.path.isdir(os.path.join(REPO, 'roles', row['role']))
    assert row['version_file'] and row['version_line'] and row['reinstall']
    with open(os.path.join(REPO, 'docs', 'development.md'), encoding='utf-8') as handle:
        contract = handle.read()
    for path in row['version_file'].split(', '):
        assert path.split(' (')[0] in contract


def test_readers_use_the_catalogue():
    assert runfile.MANAGED_COMPONENTS == ('driver', 'firmware', 'toolkit', 'kernels', 'ops', 'nnal', 'docker_runtime')
    assert package_names.COMPONENTS == component_catalogue.component_ids()
    assert set(package_resolution.CHIPLESS_COMPONENTS) == {'toolkit', 'nnae', 'nnrt', 'nnal', 'docker_runtime'}


def test_unknown_component_is_refused():
    # The Docker runtime's old spelling is gone without an alias (nothing was released with it).
    for old in ('docker-runtime', 'container_runtime'):
        with pytest.raises(ValueError, match='unknown component'):
            component_catalogue.component_row(old)


def _yaml(relative):
    with open(os.path.join(REPO, relative), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def test_the_user_facing_spellings_are_the_rows():
    """The packages role's component choices and ascend_runfile's are the catalogue's ids, and so are the
    version keys of the wanted stack (preflight, health gate) and the installed fact's keys."""
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
    assert 'docker_runtime' in stack_keys


def test_one_name_per_component_from_package_to_fact_to_plan():
    """The installed fact, the plan and the wanted stack key a component by its catalogue id."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner, wanted_stack
    assert set(install_state.read_all_installed('/nonexistent-install-path', 'x86_64', {})) == set(runfile.MANAGED_COMPONENTS)
    assert set(planner.ROLE_OF) == set(runfile.MANAGED_COMPONENTS)
    assert 'docker_runtime' in wanted_stack.STACK_KEYS


@pytest.mark.parametrize('row', [row for row in component_catalogue.COMPONENTS if row['version_variable']],
                         ids=lambda row: row['id'])
def test_a_version_variable_is_its_roles_and_the_wanted_stack_reads_it(row):
    """component -> role -> version variable: the row's variable is an option of the row's role, and the
    wanted stack takes the component's version from it."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import wanted_stack
    specs = _yaml('roles/%s/meta/argument_specs.yml' % row['role'])['argument_specs']
    assert any(row['version_variable'] in entry_point['options'] for entry_point in specs.values())
    assert row['version_variable'] in wanted_stack.ROLE_VARIABLE_OF.values()
