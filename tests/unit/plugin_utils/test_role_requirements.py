# -*- coding: utf-8 -*-
import os
import textwrap

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements as rr

SITE_AND_KUBERNETES_ROLES = ['npu.ascend.preflight', 'npu.ascend.hdk', 'npu.ascend.cann', 'npu.ascend.container_runtime',
                             'npu.ascend.k8s_node', 'npu.ascend.device_plugin', 'npu.ascend.exporter',
                             'npu.ascend.validate', 'npu.ascend.fleet_report']


def _role(roles_dir, name, spec, defaults=None, role_vars=None):
    role_dir = os.path.join(str(roles_dir), name)
    os.makedirs(os.path.join(role_dir, 'meta'))
    with open(os.path.join(role_dir, 'meta', 'argument_specs.yml'), 'w') as handle:
        handle.write(textwrap.dedent(spec))
    for kind, text in (('defaults', defaults), ('vars', role_vars)):
        if text is not None:
            os.makedirs(os.path.join(role_dir, kind))
            with open(os.path.join(role_dir, kind, 'main.yml'), 'w') as handle:
                handle.write(textwrap.dedent(text))


def test_roles_dir_is_the_collections_own():
    # Found from the module's own path, so an installed collection reads its own roles.
    here = os.path.dirname(os.path.abspath(rr.__file__))
    assert rr.ROLES_DIR == os.path.join(os.path.dirname(os.path.dirname(here)), 'roles')
    assert os.path.isfile(os.path.join(rr.ROLES_DIR, 'container_runtime', 'meta', 'argument_specs.yml'))


def test_the_motivating_case_container_runtime_version_is_found_before_anything_runs():
    # What inventories/example and the README set before: versions for hdk and cann only.
    hosts = {'a2-node-01': ['hdk_driver_version', 'hdk_firmware_version', 'cann_version', 'ansible_host'],
             'duo-node-01': ['hdk_driver_version', 'hdk_firmware_version', 'cann_version']}
    missing = rr.missing_variables(hosts, SITE_AND_KUBERNETES_ROLES)
    assert [(item['variable'], item['role'], item['hosts']) for item in missing] == [
        ('container_runtime_version', 'npu.ascend.container_runtime', ['a2-node-01', 'duo-node-01'])]
    assert missing[0]['example'] == '7.3.0'
    message = rr.missing_variables_message(missing, every_host=list(hosts))
    assert 'container_runtime_version (role npu.ascend.container_runtime) missing on every host' in message
    assert '`container_runtime_version: 7.3.0`' in message


def test_every_required_variable_of_the_real_roles_has_an_example():
    for role in SITE_AND_KUBERNETES_ROLES:
        for item in rr.required_variables(role):
            assert item['example'], '%s of %s has no example value' % (item['variable'], role)


def test_all_set_means_nothing_missing():
    names = ['hdk_driver_version', 'hdk_firmware_version', 'cann_version', 'container_runtime_version']
    assert rr.missing_variables({'h1': names, 'h2': names + ['other']}, SITE_AND_KUBERNETES_ROLES) == []
    assert rr.missing_variables_message([]) == ''


def test_only_the_hosts_that_lack_a_variable_are_named():
    missing = rr.missing_variables({'h2': ['cann_version'], 'h1': []}, ['cann'])
    assert [(item['variable'], item['hosts']) for item in missing] == [('cann_version', ['h1'])]
    assert 'missing on h1;' in rr.missing_variables_message(missing, every_host=['h1', 'h2'])


def test_default_in_spec_defaults_or_vars_is_not_required_from_the_inventory(tmp_path):
    _role(tmp_path, 'r', '''
        argument_specs:
          main:
            options:
              r_needed: {type: str, required: true, description: "Needed, for example C(1.2.3)."}
              r_spec_default: {type: str, required: true, default: x}
              r_in_defaults: {type: str, required: true}
              r_in_vars: {type: str, required: true}
              r_optional: {type: str}
        ''', defaults='r_in_defaults: 1\n', role_vars='r_in_vars: 2\n')
    assert [item['variable'] for item in rr.required_variables('r', roles_dir=str(tmp_path))] == ['r_needed']
    assert rr.required_variables('r', roles_dir=str(tmp_path))[0]['example'] == '1.2.3'


def test_example_from_a_commented_default_then_the_curated_table_then_none(tmp_path):
    _role(tmp_path, 'r', '''
        argument_specs:
          main:
            options:
              r_commented: {type: str, required: true, description: [Version.]}
              hdk_driver_version: {type: str, required: true}
              r_unknown: {type: str, required: true}
        ''', defaults='---\n# r_commented: 9.9\n# a comment that is no example\n')
    examples = dict((item['variable'], item['example']) for item in rr.required_variables('r', roles_dir=str(tmp_path)))
    assert examples == {'r_commented': '9.9', 'hdk_driver_version': '25.0.rc1.1', 'r_unknown': None}
    message = rr.missing_variables_message(rr.missing_variables({'h': []}, ['r'], roles_dir=str(tmp_path)))
    assert '- r_unknown (role npu.ascend.r) missing on h; for example `r_unknown`' in message


def test_entry_points_and_names(tmp_path):
    _role(tmp_path, 'r', '''
        argument_specs:
          main:
            options: {}
          clean:
            options:
              r_what: {type: str, required: true}
        ''')
    assert rr.required_variables('npu.ascend.r', roles_dir=str(tmp_path)) == []
    items = rr.required_variables('npu.ascend.r:clean', roles_dir=str(tmp_path))
    assert [(item['role'], item['entry_point'], item['variable']) for item in items] == [('npu.ascend.r', 'clean', 'r_what')]
    assert 'entry point clean' in rr.missing_variables_message(rr.missing_variables({'h': []}, 'r:clean', str(tmp_path)))
    with pytest.raises(rr.RoleSpecError, match='no entry point upgrade'):
        rr.required_variables('r:upgrade', roles_dir=str(tmp_path))


def test_a_role_without_a_spec_requires_nothing(tmp_path):
    os.makedirs(os.path.join(str(tmp_path), 'bare', 'tasks'))
    assert rr.required_variables('bare', roles_dir=str(tmp_path)) == []


@pytest.mark.parametrize('role, match', [
    ('community.general.foo', 'not one of the npu.ascend collection'),
    ('no_such_role', 'has no role no_such_role'),
    ('../etc', 'is not a role name'),
    ('', 'is not a role name'),
])
def test_unknown_roles_are_refused(role, match):
    with pytest.raises(rr.RoleSpecError, match=match):
        rr.required_variables(role)


def test_a_broken_spec_is_named(tmp_path):
    _role(tmp_path, 'r', 'argument_specs: [unclosed\n')
    with pytest.raises(rr.RoleSpecError, match='argument_specs.yml is not valid YAML'):
        rr.required_variables('r', roles_dir=str(tmp_path))


def test_a_variable_two_roles_require_is_listed_once_under_the_first(tmp_path):
    spec = '''
        argument_specs:
          main:
            options:
              shared: {type: str, required: true}
        '''
    _role(tmp_path, 'first', spec)
    _role(tmp_path, 'second', spec)
    missing = rr.missing_variables({'h': []}, ['second', 'first'], roles_dir=str(tmp_path))
    assert [(item['role'], item['variable']) for item in missing] == [('npu.ascend.second', 'shared')]


def test_descriptions_lose_the_documentation_markup():
    item = rr.required_variables('npu.ascend.container_runtime')[0]
    assert item['description'] == 'Ascend Docker Runtime version as in the package name (for example 7.3.0).'


def test_an_installed_copy_reads_its_own_roles(tmp_path):
    # As ansible-galaxy installs it: <path>/ansible_collections/npu/ascend/{plugins,roles}.
    import importlib.util
    import shutil
    installed = tmp_path / 'ansible_collections' / 'npu' / 'ascend'
    (installed / 'plugins' / 'plugin_utils').mkdir(parents=True)
    shutil.copy(rr.__file__, str(installed / 'plugins' / 'plugin_utils' / 'role_requirements.py'))
    _role(installed / 'roles', 'container_runtime', '''
        argument_specs:
          main:
            options:
              installed_only: {type: str, required: true, description: "for example C(42)"}
        ''')
    spec = importlib.util.spec_from_file_location('installed_role_requirements',
                                                  str(installed / 'plugins' / 'plugin_utils' / 'role_requirements.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ROLES_DIR == str(installed / 'roles')
    assert [(item['variable'], item['example']) for item in module.required_variables('npu.ascend.container_runtime')] \
        == [('installed_only', '42')]
