# -*- coding: utf-8 -*-
"""The planner and the wanted stack: table-driven cases, and properties over generated nodes."""
import os

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.packages import runfile
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import version_mismatches
from ansible_collections.npu.ascend.plugins.plugin_utils import planner, wanted_stack

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

VARIABLES = {'hdk_driver_version': '25.0.rc1.1', 'hdk_firmware_version': '7.7.0.1.231', 'cann_version': '8.2.RC1',
             'container_runtime_version': '7.3.0'}
WANTED = {'firmware': '7.7.0.1.231', 'driver': '25.0.rc1.1', 'toolkit': '8.2.RC1', 'kernels': '8.2.RC1',
          'docker_runtime': '7.3.0'}


def _installed(**versions):
    installed = dict((component, None) for component in planner.ROLE_OF)
    installed.update((component, {'version': version}) for component, version in versions.items())
    return installed


CONVERGED = _installed(driver='25.0.rc1.1', firmware='7.7.0.1.231', toolkit='8.2.RC1', kernels='8.2.RC1',
                       docker_runtime='7.3.0')


# ---------------------------------------------------------------- the wanted stack

@pytest.mark.parametrize('variables, stack, wanted', [
    (VARIABLES, None, WANTED),
    # Role defaults: kernels on, NNAL off; NNAL follows CANN unless its own version is set.
    (dict(VARIABLES, cann_nnal=True), None, dict(WANTED, nnal='8.2.RC1')),
    (dict(VARIABLES, cann_nnal='true', cann_nnal_version='8.2.RC2'), None, dict(WANTED, nnal='8.2.RC2')),
    (dict(VARIABLES, cann_kernels='false'), None, dict((k, v) for k, v in WANTED.items() if k != 'kernels')),
    # From 8.5.0 the operator kernels are the ops package.
    (dict(VARIABLES, cann_version='8.5.0'), None,
     {'firmware': '7.7.0.1.231', 'driver': '25.0.rc1.1', 'toolkit': '8.5.0', 'ops': '8.5.0', 'docker_runtime': '7.3.0'}),
    # Empty: not managed.
    ({'hdk_driver_version': '', 'cann_version': ''}, None, {}),
    ({}, None, {}),
    # An explicit stack replaces the role variables; an empty one does not.
    (VARIABLES, {'driver': '24.1.rc2'}, {'driver': '24.1.rc2'}),
    (VARIABLES, {}, WANTED),
])
def test_wanted_stack(variables, stack, wanted):
    result = wanted_stack.wanted_stack(variables, stack)
    assert result == wanted
    order = ('firmware', 'driver', 'toolkit', 'kernels', 'ops', 'nnal', 'docker_runtime')
    assert list(result) == [component for component in order if component in wanted]


def test_nnal_version_is_not_read_while_nnal_is_off():
    class Strict(dict):
        def __getitem__(self, key):
            if key == 'cann_nnal_version':
                raise AssertionError('templated an unused variable')
            return dict.__getitem__(self, key)
    assert 'nnal' not in wanted_stack.wanted_stack(Strict(VARIABLES, cann_nnal_version='{{ undefined }}'))


@pytest.mark.parametrize('variables, stack, message', [
    ([], None, 'mapping'),
    (dict(VARIABLES, cann_version='eight'), None, 'cann_version is .eight., which is not a Huawei version'),
    ({}, {'cann': '8.2.RC1', 'runtime': '7.3.0'}, 'unknown stack key'),
])
def test_wanted_stack_refuses(variables, stack, message):
    with pytest.raises((TypeError, ValueError), match=message):
        wanted_stack.wanted_stack(variables, stack)


def test_the_defaults_are_the_roles_defaults():
    """The wanted stack applies the cann role's defaults where a host does not set them."""
    with open(os.path.join(REPO, 'roles', 'cann', 'defaults', 'main.yml')) as handle:
        cann = yaml.safe_load(handle)
    defaults = dict((variable, default) for _key, variable, default in wanted_stack.ROLE_VARIABLES)
    assert defaults['cann_kernels'] is cann['cann_kernels']
    assert defaults['cann_nnal'] is cann['cann_nnal']
    assert cann['cann_nnal_version'] == '{{ cann_version }}' and defaults['cann_nnal_version'] is None


# ---------------------------------------------------------------- the plan

@pytest.mark.parametrize('installed, wanted, allow, order, actions', [
    # Fresh node: driver before firmware, everything installed.
    (_installed(), WANTED, False, ['driver', 'firmware', 'toolkit', 'kernels', 'docker_runtime'],
     {'driver': 'install', 'firmware': 'install', 'toolkit': 'install', 'kernels': 'install',
      'docker_runtime': 'install'}),
    # Converged: nothing to do.
    (CONVERGED, WANTED, False, [], dict((component, 'keep') for component in WANTED)),
    # Over an installed driver the firmware goes first.
    (_installed(driver='24.1.rc2', firmware='7.5.0.1.129', toolkit='8.2.RC1', kernels='8.2.RC1', docker_runtime='7.3.0'),
     WANTED, False, ['firmware', 'driver'],
     {'driver': 'upgrade', 'firmware': 'upgrade', 'toolkit': 'keep', 'kernels': 'keep', 'docker_runtime': 'keep'}),
    # A stale kernels package alone.
    (dict(CONVERGED, kernels={'version': '8.0.RC3'}), WANTED, False, ['kernels'],
     dict(dict((component, 'keep') for component in WANTED), kernels='upgrade')),
    # A lower wanted version: refused, or a downgrade when that role allows it.
    (dict(CONVERGED, toolkit={'version': '8.3.RC1'}), WANTED, False, [],
     dict(dict((component, 'keep') for component in WANTED), toolkit='refuse')),
    (dict(CONVERGED, toolkit={'version': '8.3.RC1'}), WANTED, {'cann': True}, ['toolkit'],
     dict(dict((component, 'keep') for component in WANTED), toolkit='downgrade')),
    (dict(CONVERGED, toolkit={'version': '8.3.RC1'}), WANTED, {'hdk': True}, [],
     dict(dict((component, 'keep') for component in WANTED), toolkit='refuse')),
    # Equal in Huawei's order is equal.
    (dict(CONVERGED, toolkit={'version': '8.2.rc1'}), WANTED, False, [], dict((component, 'keep') for component in WANTED)),
    # Nothing wanted: nothing planned.
    (CONVERGED, {}, False, [], {}),
])
def test_plan_node(installed, wanted, allow, order, actions):
    plan = planner.plan_node(wanted, {'installed': installed}, allow_downgrade=allow)
    assert plan['order'] == order
    assert dict((item['component'], item['action']) for item in plan['components']) == actions
    for item in plan['components']:
        # The planner's word is ascend_runfile's word.
        assert item['action'] == runfile.plan_action(item['component'], item['have'], item['want'], 'present',
                                                     planner._allowed(allow, item['role']))['action']
    assert [item['component'] for item in plan['refused']] == [c for c, a in actions.items() if a == 'refuse']
    assert sum((part['install'] for part in plan['roles'].values()), []) == order


@pytest.mark.parametrize('installed, pending, policy, needed, line', [
    (_installed(), False, 'auto', True, 'reboot when the installer asks for it (driver and firmware change)'),
    (_installed(), False, 'never', True,
     'no reboot (policy never): the node will report "reboot pending" (driver and firmware change)'),
    (CONVERGED, True, 'auto', True, 'reboot when the installer asks for it (a reboot is already pending)'),
    (CONVERGED, False, 'auto', False, 'no reboot'),
    # CANN alone changes: no reboot.
    (dict(CONVERGED, toolkit=None, kernels=None), False, 'auto', False, 'no reboot'),
])
def test_reboot(installed, pending, policy, needed, line):
    plan = planner.plan_node(WANTED, {'installed': installed, 'reboot_pending': pending}, reboot_policy=policy)
    assert plan['reboot']['needed'] is needed
    assert line in plan['lines']


@pytest.mark.parametrize('installed, engines, restarts, line', [
    (CONVERGED, {'containerd': 'registered', 'docker': 'registered'}, [], 'no service restart'),
    (CONVERGED, {'containerd': {'state': 'unregistered'}, 'docker': 'registered'}, ['containerd'],
     'restart containerd (runtime registration)'),
    # A new runtime binary restarts every engine it is registered with.
    (dict(CONVERGED, docker_runtime={'version': '7.2.0'}), {'containerd': 'registered', 'docker': 'registered'},
     ['containerd', 'docker'], 'restart containerd and docker (runtime registration)'),
    (CONVERGED, None, [], 'no service restart'),
])
def test_engines(installed, engines, restarts, line):
    plan = planner.plan_node(WANTED, {'installed': installed, 'engines': engines})
    assert plan['restarts'] == restarts
    assert plan['lines'][-1] == line
    assert plan['changes'] is bool(restarts) or plan['order'] != []


def test_lines_say_what_preflight_printed():
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, driver={'version': '24.1.rc2'},
                                                        toolkit={'version': '8.3.RC1'})})
    assert plan['lines'] == [
        'keep firmware 7.7.0.1.231 (no change)', 'upgrade driver 24.1.rc2 -> 25.0.rc1.1',
        'refuse toolkit downgrade 8.3.RC1 -> 8.2.RC1', 'keep kernels 8.2.RC1 (no change)',
        'keep docker_runtime 7.3.0 (no change)', 'reboot when the installer asks for it (driver change)',
        'no service restart']
    assert planner.plan_node({}, {'installed': CONVERGED})['lines'] == ['nothing to do: no component version is set']


@pytest.mark.parametrize('wanted, probe, policy, message', [
    ({'runtime': '7.3.0'}, {}, 'auto', 'unknown component'),
    (WANTED, {}, 'sometimes', 'reboot policy'),
    (WANTED, {'engines': {'containerd': 'maybe'}}, 'auto', 'not one of'),
    ([], {}, 'auto', 'mapping'),
    (WANTED, 'facts', 'auto', 'ascend_facts'),
])
def test_plan_refuses_bad_input(wanted, probe, policy, message):
    with pytest.raises((TypeError, ValueError), match=message):
        planner.plan_node(wanted, probe, reboot_policy=policy)


def test_packages_to_stage():
    plan = planner.plan_node(dict(WANTED, nnal='8.2.RC1'), {'installed': dict(CONVERGED, driver=None, kernels=None)})
    assert planner.packages_to_stage(plan, 'hdk', '910b') == [
        {'component': 'driver', 'version': '25.0.rc1.1', 'chip': '910b', 'soc': False}]
    assert planner.packages_to_stage(plan, 'cann', '310b') == [
        {'component': 'kernels', 'version': '8.2.RC1', 'chip': '310b'}, {'component': 'nnal', 'version': '8.2.RC1'}]
    assert planner.packages_to_stage(plan, 'container_runtime') == []
    assert [entry['component'] for entry in planner.packages_to_stage(plan, chip='910b')] == ['driver', 'kernels', 'nnal']
    with pytest.raises(ValueError, match='role'):
        planner.packages_to_stage(plan, 'exporter')


@pytest.mark.parametrize('cann, operator_package', [
    # Huawei's A3 names: Atlas-A3-cann-kernels up to 8.3 and for the 8.5.0 alphas, Ascend-cann-A3-ops from 8.5.0.
    ('8.3.RC1', 'Atlas-A3-cann-kernels_8.3.RC1_linux-x86_64.run'),
    ('8.5.0.alpha002', 'Atlas-A3-cann-kernels_8.5.0.alpha002_linux-x86_64.run'),
    ('8.5.0', 'Ascend-cann-A3-ops_8.5.0_linux-x86_64.run'),
])
def test_a_bare_a3_node_gets_the_a3_packages(cann, operator_package):
    from ansible_collections.npu.ascend.plugins.plugin_utils import package_resolution
    wanted = wanted_stack.wanted_stack(dict(VARIABLES, hdk_driver_version='25.3.rc1',
                                            hdk_firmware_version='7.8.0.2.212', cann_version=cann))
    staged = planner.packages_to_stage(planner.plan_node(wanted, None), chip='A3')
    names = [entry['file_name'] for entry in package_resolution.plan_packages(staged, arch='x86_64')]
    assert names == ['Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run', 'Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run',
                     'Ascend-cann-toolkit_%s_linux-x86_64.run' % cann, operator_package,
                     'Ascend-docker-runtime_7.3.0_linux-x86_64.run']


# ---------------------------------------------------------------- agreement on "outdated"

def test_a_stale_kernels_package_is_outdated_for_everyone():
    """health_gate, upgrade.yml and the fleet report read the same plan's outdated list."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report
    stale = dict(CONVERGED, kernels={'version': '8.0.RC3'})
    wanted = wanted_stack.wanted_stack(VARIABLES)
    plan = planner.plan_node(wanted, {'installed': stale})
    assert [entry['component'] for entry in plan['outdated']] == ['kernels']
    entry = fleet_report.node_entry('n1', gathered={'facts': {'installed': stale}}, wanted=wanted)
    versions = [check for check in entry['checks'] if check['name'] == fleet_report.CHECK_VERSIONS][0]
    assert versions['status'] == fleet_report.FAILED and 'CANN kernels 8.0.RC3' in versions['message']


_VERSIONS = st.sampled_from(['24.1.rc2', '24.1.0', '25.0.rc1.1', '8.2.RC1', '8.2.rc1', '8.3.RC1', '7.3.0'])


@settings(max_examples=200, deadline=None)
@given(installed=st.dictionaries(st.sampled_from(sorted(planner.ROLE_OF)), st.one_of(st.none(), _VERSIONS)),
       wanted=st.dictionaries(st.sampled_from(sorted(planner.ROLE_OF)), _VERSIONS),
       allow=st.booleans(), pending=st.booleans())
def test_plan_properties(installed, wanted, allow, pending):
    probe = {'installed': dict((c, {'version': v} if v else None) for c, v in installed.items()),
             'reboot_pending': pending}
    plan = planner.plan_node(wanted, probe, allow_downgrade=allow)
    # Every wanted component once; keep exactly where the versions agree; outdated is what is not kept.
    assert sorted(item['component'] for item in plan['components']) == sorted(wanted)
    assert [m['component'] for m in plan['outdated']] == [m['component'] for m in version_mismatches(probe['installed'], wanted)]
    assert set(m['component'] for m in plan['outdated']) == set(
        item['component'] for item in plan['components'] if item['action'] != 'keep')
    assert all(item['action'] in runfile.ACTIONS for item in plan['components'])
    if not allow:
        assert all(item['action'] != 'downgrade' for item in plan['components'])
    # The driver comes after the firmware exactly when a driver is installed.
    order = [item['component'] for item in plan['components']]
    if 'driver' in order and 'firmware' in order:
        assert (order.index('firmware') < order.index('driver')) is bool(installed.get('driver'))
    assert plan['reboot']['needed'] is (pending or any(
        item['role'] == 'hdk' and item['action'] in runfile.INSTALLING_ACTIONS for item in plan['components']))


# ---------------------------------------------------------------- a role's refusal message

def test_a_role_with_nothing_refused_says_nothing():
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, toolkit={'version': '8.3.RC1'})})
    assert planner.refusal_message(plan, 'hdk', 'a2-01') == ''
    assert planner.refusal_message(plan, 'container_runtime', 'a2-01') == ''


def test_a_refused_downgrade_names_each_reason_and_the_role_s_own_variables():
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, toolkit={'version': '8.3.RC1'},
                                                        kernels={'version': '8.3.RC1'})})
    message = planner.refusal_message(plan, 'cann', 'a2-01')
    reasons = [item['reason'] for item in plan['roles']['cann']['refused']]
    assert len(reasons) == 2
    assert message == 'a2-01: %s. Fix: raise cann_version (or cann_nnal_version), or set cann_allow_downgrade to true ' \
                      'if the downgrade is intended.' % '; '.join(reasons)


@pytest.mark.parametrize('role, component, variable', [
    ('hdk', 'driver', 'hdk_allow_downgrade'),
    ('container_runtime', 'docker_runtime', 'container_runtime_allow_downgrade')])
def test_each_install_role_names_its_own_downgrade_flag(role, component, variable):
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, **{component: {'version': '99.0.0'}})})
    assert 'set %s to true' % variable in planner.refusal_message(plan, role, 'n1')


def test_a_damaged_install_alone_carries_its_own_fix():
    damaged = {'version': None, 'damaged': '/usr/local/Ascend/driver/version.info names no version. Fix: reinstall'}
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, driver=damaged)})
    message = planner.refusal_message(plan, 'hdk', 'a2-01')
    assert message.startswith('a2-01: driver: /usr/local/Ascend/driver/version.info names no version')
    assert 'hdk_allow_downgrade' not in message
    # Beside a refused downgrade, the downgrade's fix is given too.
    plan = planner.plan_node(WANTED, {'installed': dict(CONVERGED, driver=damaged, firmware={'version': '99.0.0'})})
    assert planner.refusal_message(plan, 'hdk', 'a2-01').endswith('if the downgrade is intended.')


def test_a_refusal_for_an_unknown_role_is_an_error():
    with pytest.raises(ValueError, match='not one of'):
        planner.refusal_message(planner.plan_node(WANTED, {'installed': CONVERGED}), 'vnpu', 'n1')


def test_every_installed_operator_kernels_version_is_uninstalled_ops_first():
    installed = dict(_installed(toolkit='8.5.0'), kernels={'version': '8.3.RC1', 'all_versions': ['8.2.RC1', '8.3.RC1']},
                     ops={'version': '8.5.0'})
    assert planner.operator_kernels_installed(installed, '910b') == [
        {'component': 'ops', 'version': '8.5.0', 'chip': '910b'},
        {'component': 'kernels', 'version': '8.2.RC1', 'chip': '910b'},
        {'component': 'kernels', 'version': '8.3.RC1', 'chip': '910b'}]
    assert planner.operator_kernels_installed(_installed(toolkit='8.2.RC1'), '910b') == []
