# -*- coding: utf-8 -*-
"""The hdk role's decisions (plugin_utils/hdk_state.py) and the filter that exposes them."""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.hdk_state import FilterModule, hdk_state as hdk_state_filter
from ansible_collections.npu.ascend.plugins.plugin_utils.hdk_checks import HEALTH_FIX
from ansible_collections.npu.ascend.plugins.plugin_utils.hdk_state import NO_NPU_SMI, hdk_state

DRIVER, FIRMWARE = '25.0.rc1.1', '7.7.0.1.231'
WANTED = {'driver': DRIVER, 'firmware': FIRMWARE}
PATH = '/usr/local/Ascend'
OPTIONS = {'host': 'npu-01', 'install_path': PATH, 'allow_downgrade': False, 'reboot_policy': 'auto',
           'hold_kernel': False, 'chip': '910b', 'kernel': '6.1.0-18-amd64', 'architecture': 'x86_64'}
CHIP = {'npu_id': 1, 'chip_id': 0, 'name': '910B3', 'bus_id': '0000:01:00.0', 'health': 'OK', 'healthy': True}
SICK = dict(CHIP, npu_id=2, bus_id='0000:02:00.0', health='Critical', healthy=False)


def probe(driver=DRIVER, firmware=FIRMWARE, chips=(CHIP,), **extra):
    result = {'install_path': PATH, 'reboot_pending': False, 'npu_smi_error': None,
              'installed': {'driver': {'version': driver} if driver else None,
                            'firmware': {'version': firmware} if firmware else None},
              'npu_smi': {'chips': list(chips)}}
    result.update(extra)
    return result


def modules(used=True, present=True, release='6.1.0-21-amd64'):
    return {'dkms': {'used': used, 'module': 'davinci'}, 'running': {'release': '6.1.0-18-amd64', 'present': True},
            'next': {'release': release, 'present': present}}


def test_a_converged_node_has_nothing_to_do_but_the_health_check():
    state = hdk_state(probe(), WANTED, OPTIONS)
    assert state['converged'] is True and state['install_due'] is False and state['install'] == []
    assert state['health_due'] is True and state['health_problem'] == ''
    assert state['refusal'] == '' and state['packages'] == []


def test_a_fresh_node_installs_the_driver_first_and_stages_its_chip_packages():
    state = hdk_state(probe(driver=None, firmware=None, npu_smi=None), WANTED, OPTIONS)
    assert state['install'] == ['driver', 'firmware'] and state['install_due'] and not state['converged']
    assert state['packages'] == [{'component': 'driver', 'version': DRIVER, 'chip': '910b', 'soc': False},
                                 {'component': 'firmware', 'version': FIRMWARE, 'chip': '910b', 'soc': False}]
    # No driver: no health check; its chips' error says npu-smi is missing.
    assert state['health_due'] is False
    assert state['health'] == {'chips': [], 'error': NO_NPU_SMI}


def test_an_upgrade_over_a_driver_takes_the_firmware_first():
    state = hdk_state(probe(driver='24.1.rc3', firmware='7.5.0.1.129'), WANTED, OPTIONS)
    assert state['install'] == ['firmware', 'driver']


def test_a_downgrade_is_refused_with_the_hdk_fix_unless_allowed():
    state = hdk_state(probe(driver='25.2.rc1'), WANTED, OPTIONS)
    assert state['install_due'] and [item['component'] for item in state['refused']] == ['driver']
    assert state['refusal'].startswith('npu-01: ')
    assert state['refusal'].endswith('Fix: raise hdk_driver_version and hdk_firmware_version, or set '
                                     'hdk_allow_downgrade to true if the downgrade is intended.')
    allowed = hdk_state(probe(driver='25.2.rc1'), WANTED, dict(OPTIONS, allow_downgrade=True))
    assert allowed['refused'] == [] and allowed['install'] == ['driver'] and allowed['refusal'] == ''


def test_a_pending_reboot_is_due_and_skips_the_health_check():
    state = hdk_state(probe(reboot_pending=True), WANTED, OPTIONS)
    assert state['install_due'] and state['install'] == [] and not state['converged']
    assert state['health_due'] is False


def test_a_probe_of_another_path_or_without_npu_smi_is_not_current():
    assert hdk_state(probe(install_path='/opt/Ascend'), WANTED, OPTIONS)['converged'] is False
    without = probe()
    del without['npu_smi']
    state = hdk_state(without, WANTED, OPTIONS)
    assert state['probe_current'] is False and state['converged'] is False


def test_no_probe_yet_is_not_converged_and_plans_a_fresh_install():
    state = hdk_state(None, WANTED, OPTIONS)
    assert state['probe_current'] is False and state['converged'] is False
    assert state['install'] == ['driver', 'firmware'] and state['health_due'] is False


def test_holding_the_kernel_runs_the_steps():
    assert hdk_state(probe(), WANTED, dict(OPTIONS, hold_kernel=True))['converged'] is False


@pytest.mark.parametrize('kernel_modules, due', [
    (modules(used=True, present=False), True),
    (modules(used=True, present=True), False),
    # Modules not built through DKMS (a driver that keeps its own): nothing for DKMS to build.
    (modules(used=False, present=False), False),
    (None, False),
])
def test_the_next_kernel_build_is_due_when_dkms_built_for_the_running_kernel_only(kernel_modules, due):
    state = hdk_state(probe(kernel_modules=kernel_modules), WANTED, OPTIONS)
    assert state['next_kernel_build_due'] is due and state['converged'] is (not due)


def test_the_next_kernel_comes_from_the_probe_else_the_running_one():
    assert hdk_state(probe(kernel_modules=modules()), WANTED, OPTIONS)['next_kernel'] == '6.1.0-21-amd64'
    assert hdk_state(probe(), WANTED, OPTIONS)['next_kernel'] == '6.1.0-18-amd64'


def test_build_packages_name_both_kernels_once_each():
    state = hdk_state(probe(kernel_modules=modules()), WANTED, OPTIONS)
    assert state['build_packages']['apt'] == ['linux-headers-6.1.0-18-amd64', 'linux-headers-6.1.0-21-amd64',
                                              'dkms', 'gcc', 'make', 'pciutils', 'net-tools']
    same = hdk_state(probe(), WANTED, OPTIONS)['build_packages']
    assert same['apt'][:2] == ['linux-headers-6.1.0-18-amd64', 'dkms']


def test_a_dnf_node_gets_the_el_names_and_a_lock_without_the_architecture():
    kernel = '5.10.0-60.18.0.50.oe2203.x86_64'
    state = hdk_state(probe(), WANTED, dict(OPTIONS, kernel=kernel))
    assert state['build_packages']['dnf'] == ['kernel-devel-' + kernel, 'kernel-headers-' + kernel,
                                              'dkms', 'gcc', 'make', 'pciutils', 'net-tools']
    assert state['kernel_package'] == {'apt': 'linux-image-' + kernel, 'dnf': 'kernel-5.10.0-60.18.0.50.oe2203'}
    assert state['versionlock_packages'] == {'dnf': ['python3-dnf-plugin-versionlock'], 'dnf5': []}
    # An aarch64 node's release keeps an x86_64 that is not its own architecture's suffix.
    assert hdk_state(probe(), WANTED, dict(OPTIONS, kernel=kernel, architecture='aarch64'))['kernel_package']['dnf'] \
        == 'kernel-' + kernel


def test_without_the_gathered_kernel_there_are_no_kernel_package_names():
    state = hdk_state(probe(), WANTED, dict(OPTIONS, kernel=None))
    assert state['build_packages'] is None and state['kernel_package'] is None


def test_the_health_problem_names_each_sick_chip_with_the_fix():
    state = hdk_state(probe(chips=(CHIP, SICK)), WANTED, OPTIONS)
    assert state['health_problem'] == ('npu-01: NPU 2 chip 0 (910B3, bus 0000:02:00.0) health is Critical; '
                                       + HEALTH_FIX)


def test_npu_smi_errors_and_an_empty_list_are_health_problems():
    error = 'npu-smi timed out after 120 s. Fix: check the driver'
    assert hdk_state(probe(npu_smi_error=error, npu_smi=None), WANTED, OPTIONS)['health_problem'] == 'npu-01: ' + error
    assert hdk_state(probe(chips=()), WANTED, OPTIONS)['health_problem'] == 'npu-01: npu-smi lists no chip.'
    assert hdk_state(probe(npu_smi=None), WANTED, OPTIONS)['health_problem'] == 'npu-01: ' + NO_NPU_SMI


def test_after_the_installers_a_version_other_than_wanted_is_the_problem_with_the_fix():
    assert hdk_state(probe(), WANTED, OPTIONS)['version_problem'] == ''
    # Huawei's order: 25.0.RC1.1 is the same driver as 25.0.rc1.1.
    assert hdk_state(probe(driver='25.0.RC1.1'), WANTED, OPTIONS)['version_problem'] == ''
    problem = hdk_state(probe(driver='24.1.0', firmware=None), WANTED, OPTIONS)['version_problem']
    assert problem == ('npu-01: after the installers the node reports driver 24.1.0 and firmware none, wanted %s and '
                       '%s. Fix: read /var/log/ascend_seclog/ascend_install.log on the node, uninstall the '
                       'half-installed component with %s/<driver|firmware>/script/uninstall.sh, reboot and run again.'
                       % (DRIVER, FIRMWARE, PATH))
    # A component nobody asked for is not checked.
    assert hdk_state(probe(firmware=None), {'driver': DRIVER}, OPTIONS)['version_problem'] == ''


def test_the_filter_refuses_wrong_inputs_with_a_message():
    assert FilterModule().filters()['hdk_state'] is hdk_state_filter
    with pytest.raises(AnsibleFilterError, match='options must be a dict'):
        hdk_state_filter(probe(), WANTED, ['npu-01'])
    with pytest.raises(AnsibleFilterError, match='hdk_state: the probe must be'):
        hdk_state_filter('driver 25.0', WANTED, OPTIONS)
    with pytest.raises(AnsibleFilterError, match='reboot policy'):
        hdk_state_filter(probe(), WANTED, dict(OPTIONS, reboot_policy='sometimes'))


_versions = st.sampled_from([None, '24.1.rc3', DRIVER, '25.2.rc1'])
_firmwares = st.sampled_from([None, '7.5.0.1.129', FIRMWARE, '7.8.0.2.212'])
_modules = st.one_of(st.none(), st.builds(modules, st.booleans(), st.booleans()))


@settings(max_examples=150, deadline=None)
@given(_versions, _firmwares, st.booleans(), st.booleans(), st.booleans(), st.booleans(), _modules,
       st.lists(st.sampled_from([CHIP, SICK]), max_size=3), st.booleans())
def test_property_the_fields_agree_with_each_other(driver, firmware, reboot_pending, allow_downgrade, hold_kernel,
                                                   current, kernel_modules, chips, npu_smi):
    node = probe(driver=driver, firmware=firmware, chips=chips, reboot_pending=reboot_pending,
                 kernel_modules=kernel_modules, install_path=PATH if current else '/opt/Ascend')
    if not npu_smi:
        node['npu_smi'] = None
    options = dict(OPTIONS, allow_downgrade=allow_downgrade, hold_kernel=hold_kernel)
    state = hdk_state(node, WANTED, options)
    # Converged exactly when nothing is left to do; nothing installed and nothing refused twice.
    assert state['converged'] == (current and not hold_kernel and not state['install_due']
                                  and not state['next_kernel_build_due'])
    assert state['install_due'] == bool(state['install'] or state['refused'] or reboot_pending)
    assert not set(state['install']) & set(item['component'] for item in state['refused'])
    assert set(state['install']) <= {'driver', 'firmware'}
    assert [entry['component'] for entry in state['packages']] == state['install']
    # Huawei's order: over an existing driver the firmware goes first, on a fresh node the driver.
    if state['install'] == ['driver', 'firmware']:
        assert driver is None
    if state['install'] == ['firmware', 'driver']:
        assert driver is not None
    assert (state['refusal'] == '') == (state['refused'] == [])
    assert state['health_due'] == (driver is not None and not reboot_pending)
    sick = [chip for chip in chips if not chip['healthy']]
    assert (state['health_problem'] == '') == (npu_smi and bool(chips) and not sick)
    if state['health_problem']:
        assert state['health_problem'].startswith('npu-01: ')
    for names in state['build_packages'].values():
        assert len(names) == len(set(names)) and state['next_kernel'] in ' '.join(names)
