# -*- coding: utf-8 -*-
"""Tests of the install decisions, argv building and installer-output reading in runfile.py."""

import json
import os

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state, installer_output, reboot_marker, runfile

DRIVER = '/pkg/Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run'
FIRMWARE = '/pkg/Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run'
TOOLKIT = '/pkg/Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run'
KERNELS = '/pkg/Ascend-cann-kernels-910b_8.2.RC1_linux-aarch64.run'
DOCKER = '/pkg/Ascend-docker-runtime_7.3.0_linux-aarch64.run'


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ---------------------------------------------------------------- plan_action

@pytest.mark.parametrize('installed, package, state, allow, action', [
    (None, '25.0.rc1.1', 'present', False, 'install'),
    ('25.0.rc1.1', '25.0.rc1.1', 'present', False, 'keep'),
    ('24.1.rc2', '25.0.rc1.1', 'present', False, 'upgrade'),
    ('24.1.rc2', '24.1.0', 'present', False, 'upgrade'),
    ('24.1.0', '24.1.rc2', 'present', False, 'refuse'),
    ('24.1.0', '24.1.rc2', 'present', True, 'downgrade'),
    ('8.1.RC1', '8.1.rc1', 'present', False, 'keep'),
    (None, '25.0.rc1.1', 'absent', False, 'keep'),
    ('24.1.0', '25.0.rc1.1', 'absent', False, 'uninstall'),
])
def test_plan_action(installed, package, state, allow, action):
    plan = runfile.plan_action('driver', installed, package, state, allow)
    assert plan['action'] == action
    assert plan['reason']


def test_uninstall_takes_the_packages_version_among_those_side_by_side():
    # After a CANN upgrade the old toolkit's operator kernels stay in its version directory.
    plan = runfile.plan_action('kernels', '8.2.RC1', '8.0.RC3', 'absent', False, ['8.0.RC3', '8.2.RC1'])
    assert (plan['action'], plan['version']) == ('uninstall', '8.0.RC3')
    plan = runfile.plan_action('kernels', '8.2.RC1', '8.2.rc1', 'absent', False, ['8.0.RC3', '8.2.RC1'])
    assert (plan['action'], plan['version']) == ('uninstall', '8.2.RC1')


def test_uninstall_with_a_package_of_another_version_removes_the_installed_one():
    plan = runfile.plan_action('docker_runtime', '7.3.0', '7.3.1', 'absent', False, ['7.3.0'])
    assert (plan['action'], plan['version']) == ('uninstall', '7.3.0')


def test_installed_versions():
    assert install_state.installed_versions(None) == []
    assert install_state.installed_versions({'version': '24.1.0'}) == ['24.1.0']
    assert install_state.installed_versions({'version': '8.2.RC1', 'all_versions': ['8.0.RC3', '8.2.RC1']}) \
        == ['8.0.RC3', '8.2.RC1']


def test_refused_downgrade_names_both_versions_and_the_way_out():
    reason = runfile.plan_action('toolkit', '8.2.RC1', '8.1.RC1', 'present', False)['reason']
    assert '8.2.RC1' in reason and '8.1.RC1' in reason and 'allow_downgrade' in reason


def test_plan_needs_package_version_for_present():
    with pytest.raises(ValueError):
        runfile.plan_action('driver', None, None, 'present', False)


# ---------------------------------------------------------------- argv

def test_fresh_driver_like_huaweis_deployer():
    assert runfile.build_commands('driver', 'install', DRIVER) == [
        [DRIVER, '--nox11', '--full', '--quiet', '--install-for-all']]


def test_driver_upgrade_and_custom_path():
    assert runfile.build_commands('driver', 'upgrade', DRIVER, install_path='/opt/Ascend', extra_args=['--x']) == [
        [DRIVER, '--nox11', '--upgrade', '--quiet', '--install-path=/opt/Ascend', '--x']]


def test_soc_driver_never_gets_install_for_all():
    soc = '/pkg/Ascend-hdk-310b-npu-driver-soc_25.0.rc1.1_linux-aarch64.run'
    assert runfile.build_commands('driver', 'install', soc, install_for_all=False, soc=True) == [
        [soc, '--nox11', '--full', '--quiet']]
    with pytest.raises(ValueError, match='install-for-all'):
        runfile.build_commands('driver', 'install', soc, install_for_all=True, soc=True)


def test_firmware_full_and_upgrade_without_install_for_all():
    assert runfile.build_commands('firmware', 'install', FIRMWARE) == [[FIRMWARE, '--nox11', '--full', '--quiet']]
    assert runfile.build_commands('firmware', 'upgrade', FIRMWARE) == [[FIRMWARE, '--nox11', '--upgrade', '--quiet']]


def test_cann_install_and_upgrade():
    assert runfile.build_commands('toolkit', 'install', TOOLKIT) == [
        [TOOLKIT, '--nox11', '--install', '--quiet', '--install-for-all']]
    assert runfile.build_commands('nnal', 'upgrade', '/p/n.run') == [['/p/n.run', '--nox11', '--upgrade', '--quiet']]


def test_kernels_upgrade_is_uninstall_then_install():
    commands = runfile.build_commands('kernels', 'upgrade', KERNELS)
    assert commands == [[KERNELS, '--nox11', '--uninstall'],
                        [KERNELS, '--nox11', '--install', '--quiet', '--install-for-all']]
    assert not any('--upgrade' in argv for argv in commands)


def test_docker_runtime_takes_install_scene_from_extra_args():
    assert runfile.build_commands('docker_runtime', 'install', DOCKER, extra_args=['--install-scene=containerd']) == [
        [DOCKER, '--nox11', '--install', '--install-scene=containerd']]
    assert runfile.build_commands('docker_runtime', 'upgrade', DOCKER) == [[DOCKER, '--nox11', '--upgrade']]


def test_uninstall_entry_points(tmp_path):
    script = '/usr/local/Ascend/driver/script/uninstall.sh'
    assert runfile.build_commands('driver', 'uninstall', DRIVER, uninstall_script=script) == [[script]]
    with pytest.raises(ValueError, match='uninstall script'):
        runfile.build_commands('firmware', 'uninstall', FIRMWARE)
    package = write(tmp_path / 'Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run', '#!/bin/sh\n')
    assert runfile.build_commands('toolkit', 'uninstall', str(package), uninstall_script='/x/uninstall.sh') == [
        [str(package), '--nox11', '--uninstall']]
    # Without the package file the installed script is the way out.
    assert runfile.build_commands('toolkit', 'uninstall', str(tmp_path / 'gone.run'),
                                  uninstall_script='/x/uninstall.sh') == [['/x/uninstall.sh']]
    with pytest.raises(ValueError):
        runfile.build_commands('toolkit', 'uninstall', None)


def test_nothing_to_run_for_none_and_unknown_component():
    assert runfile.build_commands('driver', 'keep', DRIVER) == []
    # An allowed downgrade runs the installer's upgrade path; a word outside the vocabulary is refused.
    assert runfile.build_commands('driver', 'downgrade', DRIVER) == runfile.build_commands('driver', 'upgrade', DRIVER)
    with pytest.raises(ValueError, match='unknown action'):
        runfile.build_commands('driver', 'none', DRIVER)
    with pytest.raises(ValueError):
        runfile.build_commands('nnae', 'install', '/p/x.run')


# ---------------------------------------------------------------- installer output

@pytest.mark.parametrize('name, reboot', [
    ('installer/driver_24.1.0_910_full-install-for-all.txt', True),
    ('installer/driver_25.0.rc1.1_910b_full.txt', False),
    ('installer/driver_25.0.rc1.1_310b-soc_full-over-23.0.rc3.txt', True),
    ('installer/firmware_7.7.0.1.231_910b_full.txt', True),
    ('installer/firmware_7.5.0.2.220_910_full.txt', True),
    ('installer/firmware_7.1.0.3.220_uninstall_script.txt', False),
    ('installer/driver_uninstall_script_force.txt', True),
    ('installer/toolkit_8.1.RC1_install_summary_310b-soc.txt', False),
    ('installer/kernels_310b_8.1.RC1_devel.txt', False),
])
def test_real_transcripts_succeed_with_the_right_reboot_answer(sample, name, reboot):
    component = os.path.basename(name).split('_')[0]
    result = installer_output.interpret_result(component, 'install', 0, sample(name))
    assert result['ok'], result
    assert result['reboot_required'] is reboot
    assert result['success_marker']


def test_takes_effect_immediately_is_not_a_reboot(sample):
    text = sample('installer/driver_25.0.rc1.1_910b_full.txt')
    assert installer_output.takes_effect_immediately(text)
    assert not installer_output.reboot_required(text)


def test_exit_code_two_is_success_for_driver_only(sample):
    text = sample('installer/driver_25.0.rc1.1_910b_full.txt')
    assert installer_output.interpret_result('driver', 'install', 2, text)['ok']
    assert installer_output.interpret_result('firmware', 'install', 2, sample('installer/firmware_7.7.0.1.231_910b_full.txt'))['ok']
    assert not installer_output.interpret_result('toolkit', 'install', 2, 'Toolkit: install success')['ok']
    assert not installer_output.interpret_result('driver', 'install', 1, text)['ok']


@pytest.mark.parametrize('line, fix_words', [
    ('[Driver] [2025-01-01 10:00:00] [ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not exists! Please add HwHiAiUser',
     'useradd -g HwHiAiUser'),
    ('[Driver] [2025-01-01 10:00:00] [ERROR]ERR_NO:0x0093;ERR_DES:do not have root permission, operation failed, '
     'please use root permission!', 'become'),
    ("[Driver] [2025-01-01 10:00:00] [ERROR]ERR_NO:0x0004;ERR_DES: Unrecognized parameters: --bogus. "
     "Try './xxx.run --help' for more information.", 'extra_args'),
    ('[Driver] [2025-01-01 10:00:00] [ERROR]The list of missing tools: lspci,ifconfig,', 'pciutils'),
    ('[Driver] [2025-01-01 10:00:00] [ERROR]Dkms install failed, details in : var/log/ascend_seclog/'
     'ascend_install.log.', 'linux-headers'),
    ('Failed to install driver package, please retry after uninstall and reboot!', 'reboot'),
    ('[WARNING]There is no chip matching the driver package.', 'another chip'),
    ('[ERROR] failed, unsupported parameters: --bogus', 'extra_args'),
])
def test_failures_name_component_cause_and_fix(line, fix_words):
    output = '[Driver] [2025-01-01 10:00:00] [INFO]Start time: 2025-01-01 10:00:00\n' + line + '\n'
    result = installer_output.interpret_result('driver', 'install', 1, output)
    assert not result['ok'] and not result['reboot_required']
    assert result['message'].startswith('driver install failed (rc=1): ')
    assert result['cause'] == installer_output._strip_log_prefix(line)
    assert not result['cause'].startswith('[')
    assert fix_words in result['fix']


def test_err_no_code_is_reported():
    failure = installer_output.find_failure('[Firmware] [d] [ERROR]ERR_NO:0x0093;ERR_DES:do not have root permission')
    assert failure['code'] == '0x0093'


def test_failure_line_beats_a_success_exit_code():
    result = installer_output.interpret_result('driver', 'upgrade', 0, '[Driver] [x] [ERROR]Dkms install failed, details in : x')
    assert not result['ok']


def test_unknown_failure_quotes_the_last_line():
    result = installer_output.interpret_result('nnal', 'install', 3, 'starting\nsomething odd happened\n')
    assert not result['ok']
    assert result['cause'] == 'something odd happened'


def test_archive_check(sample):
    assert installer_output.interpret_archive_check(0, sample('installer/driver_25.0.rc1.1_910b_check.txt')) is None
    assert installer_output.interpret_archive_check(0, sample('installer/firmware_7.7.0.1.231_910b_check.txt')) is None
    broken = 'Verifying archive integrity...  Error in SHA256 checksums: abc is different from def\n'
    assert 'is different from' in installer_output.interpret_archive_check(1, broken)
    assert installer_output.interpret_archive_check(2, '') is not None


def test_log_file_is_taken_from_the_output(sample):
    text = sample('installer/firmware_7.7.0.1.231_910b_full.txt')
    assert installer_output.log_file_from_output(text) == '/var/log/ascend_seclog/ascend_install.log'
    assert installer_output.log_file_from_output('no log named') is None


def test_log_tail_keeps_the_last_lines():
    text = '\n'.join('line %d' % number for number in range(50))
    assert installer_output.log_tail(text) == ['line %d' % number for number in range(30, 50)]
    assert installer_output.log_tail('') == []


# ---------------------------------------------------------------- reboot marker

PID1_STAT = '1 (systemd (init)) S 0 1 1 0 -1 4194560 54087 1466911 96 1254 102 71 2178 1226 20 0 1 0 4242 173 2 ...'


def test_pid1_start_time_counts_fields_after_the_command_name():
    assert reboot_marker.parse_pid1_start_time(PID1_STAT) == '4242'
    with pytest.raises(ValueError):
        reboot_marker.parse_pid1_start_time('garbage')


def test_reboot_marker_pends_until_the_boot_changes():
    boot = reboot_marker.current_boot('abc\n', PID1_STAT)
    marker = reboot_marker.add_reboot_reason({}, boot, 'driver', '25.0.rc1.1', 't1')
    marker = reboot_marker.parse_reboot_marker(json.dumps(marker))
    assert reboot_marker.reboot_pending(marker, boot) == (True, [
        {'component': 'driver', 'version': '25.0.rc1.1', 'recorded_at': 't1'}])
    restarted_container = {'boot_id': 'abc', 'pid1_start_time': '9999'}
    assert reboot_marker.reboot_pending(marker, restarted_container) == (False, [])
    rebooted_host = {'boot_id': 'def', 'pid1_start_time': '4242'}
    assert reboot_marker.reboot_pending(marker, rebooted_host)[0] is False


def test_reboot_reasons_accumulate_within_a_boot_and_reset_after():
    boot = {'boot_id': 'a', 'pid1_start_time': '1'}
    marker = reboot_marker.add_reboot_reason({}, boot, 'firmware', '7.7.0.1.231', 't1')
    marker = reboot_marker.add_reboot_reason(marker, boot, 'driver', '25.0.rc1.1', 't2')
    assert [reason['component'] for reason in marker['reasons']] == ['firmware', 'driver']
    later = {'boot_id': 'a', 'pid1_start_time': '2'}
    marker = reboot_marker.add_reboot_reason(marker, later, 'driver', '25.0.rc1.1', 't3')
    assert [reason['component'] for reason in marker['reasons']] == ['driver']


def test_damaged_marker_pends_nothing():
    assert reboot_marker.parse_reboot_marker('{not json') is None
    assert reboot_marker.reboot_pending(None, {'boot_id': 'a', 'pid1_start_time': '1'}) == (False, [])


# ---------------------------------------------------------------- installed versions

def make_tree(root, sample):
    """An install path laid out as the contract table in docs/development.md says."""
    write(root / 'driver' / 'version.info', sample('files/driver_version.info_25.0.rc1.1.txt'))
    write(root / 'driver' / 'script' / 'uninstall.sh', '#!/bin/sh\n')
    write(root / 'firmware' / 'version.info', sample('files/firmware_version.info_7.7.0.1.231.txt'))
    toolkit = root / 'ascend-toolkit' / '8.2.RC1'
    write(toolkit / 'aarch64-linux' / 'ascend_toolkit_install.info',
          sample('files/ascend_toolkit_install.info_8.2.RC1_aarch64.txt'))
    write(toolkit / 'opp_kernel' / 'version.info', sample('files/opp_kernel_version.info_8.2.RC1.txt'))
    os.symlink('8.2.RC1', str(root / 'ascend-toolkit' / 'latest'))
    write(root / 'nnal' / 'atb' / '8.2.RC1' / 'version.info', sample('files/nnal_atb_version.info_8.2.RC1.txt'))
    os.symlink('8.2.RC1', str(root / 'nnal' / 'atb' / 'latest'))
    write(root / 'Ascend-Docker-Runtime' / 'ascend_docker_runtime_install.info',
          'version=v7.3.0\narch=aarch64\ninstall-scene=containerd\n')


def test_read_all_installed_from_the_contract_paths(tmp_path, sample):
    make_tree(tmp_path, sample)
    installed = install_state.read_all_installed(str(tmp_path), 'aarch64')
    assert sorted(installed) == ['docker_runtime', 'driver', 'firmware', 'kernels', 'nnal', 'ops', 'toolkit']
    assert installed['driver']['version'] == '25.0.rc1.1'
    assert installed['driver']['compatible_version_fw'] == '[7.0.0,7.7.99]'
    assert installed['driver']['uninstall_script'] == str(tmp_path / 'driver' / 'script' / 'uninstall.sh')
    assert installed['firmware']['version'] == '7.7.0.1.231'
    assert installed['firmware']['uninstall_script'] is None
    assert installed['toolkit']['version'] == '8.2.RC1'
    assert installed['toolkit']['layout'] == 'ascend-toolkit'
    assert installed['toolkit']['path'] == os.path.realpath(str(tmp_path / 'ascend-toolkit' / '8.2.RC1'))
    assert installed['kernels']['version'] == '8.2.RC1'
    assert installed['ops'] is None
    assert installed['nnal']['version'] == '8.2.RC1'
    assert installed['docker_runtime']['version'] == '7.3.0'
    assert installed['docker_runtime']['install_scene'] == 'containerd'


def test_cann_85_layout_and_ops(tmp_path, sample):
    cann = tmp_path / 'cann-8.5.0'
    write(cann / 'x86_64-linux' / 'ascend_toolkit_install.info',
          sample('files/ascend_toolkit_install.info_8.5.0_aarch64.txt').replace('aarch64', 'x86_64'))
    write(cann / 'opp_kernel' / 'version.info', 'Version=8.5.0.0.1\nversion_dir=8.5.0\n')
    os.symlink('cann-8.5.0', str(tmp_path / 'cann'))
    installed = install_state.read_all_installed(str(tmp_path), 'x86_64')
    assert installed['toolkit']['version'] == '8.5.0'
    assert installed['toolkit']['layout'] == 'cann'
    assert installed['ops']['version'] == '8.5.0'
    assert installed['kernels'] is None


def test_nothing_installed_and_damaged_files(tmp_path):
    assert all(value is None for value in install_state.read_all_installed(str(tmp_path), 'x86_64').values())
    # A version file without a version is damaged, never "not installed" (issue 30, finding 6).
    write(tmp_path / 'driver' / 'version.info', 'no version here\n')
    installed = install_state.read_all_installed(str(tmp_path), 'x86_64')
    assert installed['driver']['version'] is None and 'names no version' in installed['driver']['damaged']
    assert all(value is None for key, value in installed.items() if key != 'driver')


def test_driver_found_through_the_install_record(tmp_path, sample):
    write(tmp_path / 'davinci' / 'driver' / 'version.info', sample('files/driver_version.info_24.1.rc1.txt'))
    record = {'Driver_Install_Path_Param': str(tmp_path / 'davinci')}
    found = install_state.read_installed('driver', str(tmp_path / 'Ascend'), 'aarch64', record)
    assert found['version'] == '24.1.rc1'


def test_kernels_and_ops_need_the_right_toolkit():
    assert 'toolkit' in runfile.check_prerequisites('kernels', '8.2.RC1', {'toolkit': None})
    assert runfile.check_prerequisites('kernels', '8.2.RC1', {'toolkit': {'version': '8.2.RC1'}}) is None
    assert '8.5.0' in runfile.check_prerequisites('ops', '8.5.0', {'toolkit': {'version': '8.2.RC1'}})
    assert runfile.check_prerequisites('driver', '25.0.rc1.1', {}) is None


def test_a_killed_installer_is_explained_with_a_fix():
    # The shell reports a SIGKILL with a bare "Killed" line and rc 137; nothing in it says what to do.
    output = '[Driver] [2025-01-01 10:00:00] [INFO]upgradePercentage:30%\nKilled\n'
    verdict = installer_output.interpret_result('driver', 'install', 137, output)
    assert not verdict['ok']
    assert 'killed (SIGKILL, rc=137)' in verdict['cause']
    assert '/usr/local/Ascend/driver/script/uninstall.sh' in verdict['fix'] and 'and reboot, then run again' in verdict['fix']
    assert verdict['message'].startswith('driver install failed (rc=137): the installer was killed')


def test_a_known_failure_line_wins_over_the_killed_explanation():
    output = '[Driver] [ERROR]Dkms install failed, details in : var/log/ascend_seclog/ascend_install.log.\nKilled\n'
    verdict = installer_output.interpret_result('driver', 'install', 137, output)
    assert 'Dkms install failed' in verdict['cause'] and 'kernel headers' in verdict['fix']


# Facts reference: the ops package replaces kernels from CANN 8.5.0 (with the cann-<version>/ layout).
@pytest.mark.parametrize('cann, component', [
    ('8.0.RC3', 'kernels'), ('8.2.RC1', 'kernels'), ('8.3.RC1', 'kernels'),
    ('8.5.0', 'ops'), ('8.5.0.1', 'ops'), ('9.0.0', 'ops'),
])
def test_operator_kernels_component_follows_the_layout_change(cann, component):
    assert runfile.operator_kernels_component(cann) == component


def test_operator_kernels_component_refuses_a_text_that_is_no_version():
    with pytest.raises(ValueError):
        runfile.operator_kernels_component('latest')


def test_installer_failure_passes_on_the_modules_own_message():
    result = {'failed': True, 'component': 'toolkit', 'msg': 'node-1: CANN toolkit: the installer failed. Fix: ...'}
    assert installer_output.installer_failure_message(result, 'node-1', 'CANN', 'Install the toolkit') == result['msg']


def test_installer_failure_without_an_answer_names_host_part_task_cause_and_fix():
    result = {'unreachable': True, 'msg': 'Failed to connect to the host via ssh: Connection closed\n'}
    message = installer_output.installer_failure_message(result, 'node-1', 'CANN', 'Install or upgrade the CANN toolkit')
    assert message.startswith('node-1: CANN: no result came back from the node (Install or upgrade the CANN toolkit): '
                              'Failed to connect to the host via ssh: Connection closed. The node went down')
    assert 'Fix: bring the node back up' in message


def test_installer_failure_of_the_roles_own_answer_check_leaves_out_the_task():
    result = {'failed': True, 'assertion': '__cann_lost | length == 0', 'msg': 'the toolkit installer: Shared connection closed'}
    message = installer_output.installer_failure_message(result, 'node-1', 'CANN', 'Check that the node answered every installer')
    assert message.startswith('node-1: CANN: no result came back from the node: the toolkit installer: Shared connection closed.')


@pytest.mark.parametrize('compat_link', ['../cann-8.5.0', '../cann'])
def test_cann_85_tree_seen_through_an_ascend_toolkit_link_is_not_kernels(tmp_path, sample, compat_link):
    # Huawei's 8.5.0 release notes say the historical paths (ascend-toolkit/latest/...) keep
    # working; however 8.5 provides them, the ops in cann-8.5.0 must not pass for a kernels package.
    cann = tmp_path / 'cann-8.5.0'
    write(cann / 'x86_64-linux' / 'ascend_toolkit_install.info',
          sample('files/ascend_toolkit_install.info_8.5.0_aarch64.txt').replace('aarch64', 'x86_64'))
    write(cann / 'opp_kernel' / 'version.info', 'Version=8.5.0.0.1\nversion_dir=8.5.0\n')
    os.symlink('cann-8.5.0', str(tmp_path / 'cann'))
    (tmp_path / 'ascend-toolkit').mkdir()
    os.symlink(compat_link, str(tmp_path / 'ascend-toolkit' / 'latest'))
    installed = install_state.read_all_installed(str(tmp_path), 'x86_64')
    assert installed['kernels'] is None
    assert installed['ops']['version'] == '8.5.0'
    assert installed['toolkit']['version'] == '8.5.0'
    assert installed['toolkit']['layout'] == 'cann'


def test_old_kernels_beside_the_cann_85_tree_are_still_found(tmp_path, sample):
    # A kernels package left in an 8.2 toolkit directory is reported, so that it can be removed.
    make_tree(tmp_path, sample)
    os.remove(str(tmp_path / 'ascend-toolkit' / 'latest'))
    os.remove(str(tmp_path / 'ascend-toolkit' / '8.2.RC1' / 'aarch64-linux' / 'ascend_toolkit_install.info'))
    cann = tmp_path / 'cann-8.5.0'
    write(cann / 'aarch64-linux' / 'ascend_toolkit_install.info',
          sample('files/ascend_toolkit_install.info_8.5.0_aarch64.txt'))
    write(cann / 'opp_kernel' / 'version.info', 'Version=8.5.0.0.1\nversion_dir=8.5.0\n')
    os.symlink('cann-8.5.0', str(tmp_path / 'cann'))
    installed = install_state.read_all_installed(str(tmp_path), 'aarch64')
    assert installed['kernels']['version'] == '8.2.RC1'
    assert installed['kernels']['path'] == os.path.realpath(str(tmp_path / 'ascend-toolkit' / '8.2.RC1'))
    assert installed['ops']['version'] == '8.5.0'
