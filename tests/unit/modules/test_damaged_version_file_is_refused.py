# -*- coding: utf-8 -*-
"""Issue 30, finding 6: a damaged version file read as "not installed".

An empty ``driver/version.info``, ``Version=`` with no value, or no Version line at all beside an
existing driver tree read as "not installed", so the planner and ascend_runfile planned a ``--full``
install over it (docs/packages.md: such a file is never read as "not installed"). Damaged is now its
own state: the probe reports it per component (``version`` null, ``damaged`` the reason with the fix),
ascend_runfile refuses it (also in check mode and for state=absent), the planner refuses that
component with the reason, and preflight names it in a check of its own.
"""

import os
import platform

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility, install_state, reboot_marker, runfile
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import version_mismatches
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import VersionFileError
from ansible_collections.npu.ascend.plugins.modules import ascend_compat, ascend_facts, ascend_runfile
from ansible_collections.npu.ascend.plugins.plugin_utils import planner, preflight_checks

ARCH = platform.machine()
DRIVER_ARCH = 'x86-64' if ARCH == 'x86_64' else ARCH

DAMAGED_DRIVER_FILES = {
    'empty': '',
    'blank Version': 'Version=\ncompatible_version_fw=[7.0.0,7.7.99]\n',
    'no Version line': 'Innerversion=V100R001C21SPC002B220\ncompatible_version_fw=[7.0.0,7.7.99]\n',
}
# Where each component records its version, relative to the install path, and the line that names it.
VERSION_FILES = {
    'driver': ('driver/version.info', 'Version='),
    'firmware': ('firmware/version.info', 'Version='),
    'toolkit': ('ascend-toolkit/latest/%s-linux/ascend_toolkit_install.info' % ARCH, 'version='),
    'kernels': ('ascend-toolkit/latest/opp_kernel/version.info', 'version_dir='),
    'nnal': ('nnal/atb/latest/version.info', 'Ascend-cann-atb'),
    'docker_runtime': ('Ascend-Docker-Runtime/ascend_docker_runtime_install.info', 'version='),
}


def _write(path, text):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)
    return path


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    monkeypatch.setattr(install_state, 'INSTALL_RECORD_PATH', str(tmp_path / 'ascend_install.info'))
    monkeypatch.setattr(ascend_facts, 'SYSFS_PCI_DEVICES', str(tmp_path / 'no-sysfs'))
    install_path = tmp_path / 'Ascend'
    calls = tmp_path / 'calls.log'
    package = tmp_path / ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % DRIVER_ARCH)
    package.write_text('#!/bin/sh\necho "$@" >> "%s"\nexit 0\n' % calls)
    package.chmod(0o755)
    _write(str(install_path / 'driver' / 'script' / 'uninstall.sh'), '#!/bin/sh\necho uninstall >> "%s"\n' % calls)
    os.chmod(str(install_path / 'driver' / 'script' / 'uninstall.sh'), 0o755)
    return {'tmp': tmp_path, 'install_path': str(install_path), 'src': str(package), 'calls': calls,
            'version_file': str(install_path / 'driver' / 'version.info')}


# ---------------------------------------------------------------- the probe (install_state)

@pytest.mark.parametrize('case', sorted(DAMAGED_DRIVER_FILES))
def test_a_damaged_driver_version_file_is_damaged_not_absent(node, case):
    path = _write(node['version_file'], DAMAGED_DRIVER_FILES[case])
    entry = install_state.read_installed('driver', node['install_path'], ARCH)
    assert entry is not None and entry['version'] is None
    assert path in entry['damaged'] and 'Version=' in entry['damaged'] and '--upgrade' in entry['damaged']
    assert 'Fix:' in entry['damaged'] and entry['version_file'] == path
    assert install_state.installed_versions(entry) == []


@pytest.mark.parametrize('component', sorted(VERSION_FILES))
def test_every_component_reports_a_damaged_version_file(tmp_path, component):
    relative, line = VERSION_FILES[component]
    if relative.startswith('ascend-toolkit/latest/'):
        os.makedirs(str(tmp_path / 'ascend-toolkit' / '8.2.RC1'))
        os.symlink('8.2.RC1', str(tmp_path / 'ascend-toolkit' / 'latest'))
    if relative.startswith('nnal/atb/latest/'):
        os.makedirs(str(tmp_path / 'nnal' / 'atb' / '8.2.RC1'))
        os.symlink('8.2.RC1', str(tmp_path / 'nnal' / 'atb' / 'latest'))
    path = _write(str(tmp_path / relative), '# nothing here\n')
    entry = install_state.read_installed(component, str(tmp_path), ARCH)
    assert entry is not None and entry['version'] is None
    assert os.path.realpath(path) in entry['damaged'] or path in entry['damaged']
    assert line in entry['damaged'] and 'Fix:' in entry['damaged']


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet='Vv=ersion \n#:.0123456789abc[]', max_size=40))
def test_a_present_driver_version_file_is_never_read_as_not_installed(tmp_path, text):
    """Whatever a present version file holds: a version, damaged, or refused; never None."""
    path = _write(str(tmp_path / 'driver' / 'version.info'), text)
    try:
        entry = install_state.read_installed('driver', str(tmp_path), ARCH)
    except VersionFileError as error:
        assert path in str(error)
        return
    assert entry is not None
    assert (entry['version'] is None) == ('damaged' in entry)


def test_a_missing_version_file_is_still_not_installed(node):
    assert install_state.read_installed('driver', node['install_path'], ARCH) is None


# ---------------------------------------------------------------- the modules

@pytest.mark.parametrize('case', sorted(DAMAGED_DRIVER_FILES))
def test_ascend_facts_reports_the_damaged_component_and_carries_on(node, run_module, case):
    path = _write(node['version_file'], DAMAGED_DRIVER_FILES[case])
    result = run_module(ascend_facts, {'install_path': node['install_path']}, check_mode=True, diff=False)
    driver = result['ansible_facts']['ascend']['installed']['driver']
    assert not result.get('failed') and driver['version'] is None and path in driver['damaged']


@pytest.mark.parametrize('case', sorted(DAMAGED_DRIVER_FILES))
@pytest.mark.parametrize('check_mode', [True, False])
@pytest.mark.parametrize('state', ['present', 'absent'])
def test_ascend_runfile_refuses_a_damaged_component(node, run_module, case, check_mode, state):
    path = _write(node['version_file'], DAMAGED_DRIVER_FILES[case])
    args = {'src': node['src'], 'install_path': node['install_path'], 'state': state}
    result = run_module(ascend_runfile, args, check_mode=check_mode)
    assert result['failed'] and path in result['msg'] and 'Fix:' in result['msg'] and '--upgrade' in result['msg']
    assert result['action'] != 'install' and '--full' not in ' '.join(result['cmd'])
    assert not node['calls'].exists()
    with open(path) as handle:
        assert handle.read() == DAMAGED_DRIVER_FILES[case]


def test_ascend_runfile_refuses_kernels_over_a_damaged_toolkit(node, run_module, tmp_path):
    toolkit = os.path.join(node['install_path'], 'ascend-toolkit', '8.2.RC1')
    info = _write(os.path.join(toolkit, '%s-linux' % ARCH, 'ascend_toolkit_install.info'), 'arch=%s\n' % ARCH)
    os.symlink('8.2.RC1', os.path.join(node['install_path'], 'ascend-toolkit', 'latest'))
    package = tmp_path / ('Ascend-cann-kernels-910b_8.2.RC1_linux-%s.run' % ARCH)
    package.write_text('#!/bin/sh\nexit 0\n')
    package.chmod(0o755)
    for check_mode in (True, False):
        result = run_module(ascend_runfile, {'src': str(package), 'install_path': node['install_path']},
                            check_mode=check_mode)
        assert result['failed'] and 'toolkit' in result['msg'] and os.path.basename(info) in result['msg']


def test_ascend_compat_refuses_to_judge_a_damaged_stack(node, run_module):
    path = _write(node['version_file'], '')
    result = run_module(ascend_compat, {'install_path': node['install_path'], 'stack': {'cann': '8.2.RC1'}},
                        check_mode=True, diff=False)
    assert result['failed'] and path in result['msg']


def test_prerequisites_name_a_damaged_toolkit():
    damaged = {'version': None, 'damaged': '/x/ascend_toolkit_install.info names no version. Fix: restore it'}
    message = runfile.check_prerequisites('kernels', '8.2.RC1', {'toolkit': damaged})
    assert message and '/x/ascend_toolkit_install.info' in message


# ---------------------------------------------------------------- the controller: planner, preflight, compat

DAMAGED = {'version': None, 'path': '/usr/local/Ascend/driver', 'version_file': '/usr/local/Ascend/driver/version.info',
           'damaged': '/usr/local/Ascend/driver/version.info is empty. Fix: restore it or reinstall with --upgrade'}


def _probe(**installed):
    probe = {'installed': dict((component, None) for component in planner.ROLE_OF), 'reboot_pending': False}
    probe['installed'].update(installed)
    return probe


def test_the_planner_refuses_a_damaged_component_with_the_reason():
    plan = planner.plan_node({'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'},
                             _probe(driver=DAMAGED, firmware={'version': '7.1.0.11.220'}), allow_downgrade=True)
    driver = [item for item in plan['components'] if item['component'] == 'driver'][0]
    assert driver['action'] == 'refuse' and driver['damaged'] and DAMAGED['damaged'] in driver['reason']
    assert 'driver' not in plan['order'] and driver in plan['refused']
    assert any(line.startswith('refuse driver') and 'damaged' in line for line in plan['lines'])
    assert plan['roles']['hdk']['install'] == ['firmware']


def test_preflight_names_a_damaged_component_in_its_own_check_not_as_a_downgrade():
    plan = planner.plan_node({'driver': '25.0.rc1.1'}, _probe(driver=DAMAGED))
    assert preflight_checks.downgrade_check(plan)['ok']
    check = preflight_checks.damaged_check(plan)
    assert not check['ok'] and DAMAGED['version_file'] in check['detail'] and 'restore' in check['fix']
    assert preflight_checks.damaged_check(planner.plan_node({'driver': '25.0.rc1.1'}, _probe()))['ok']


def test_version_mismatches_call_a_damaged_component_damaged():
    mismatch = version_mismatches({'driver': DAMAGED}, {'driver': '25.0.rc1.1'})[0]
    assert mismatch['installed'] is None and 'damaged' in mismatch['text'] and 'not installed' not in mismatch['text']


def test_compat_probe_stack_does_not_take_a_damaged_version():
    assert 'driver' not in compatibility.probe_stack({}, {'driver': DAMAGED})
