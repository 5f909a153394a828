# -*- coding: utf-8 -*-
"""Run the ascend_runfile module against a small stand-in installer in a temporary install path."""

import hashlib
import json
import os
import platform
import stat

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker, runfile
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile

ARCH = platform.machine()
DRIVER_ARCH = 'x86-64' if ARCH == 'x86_64' else ARCH

# Behaves like the driver installer as far as this module cares: --check, --full/--upgrade
# writing driver/version.info under --install-path, the reboot line, and a failure mode.
INSTALLER = r'''#!/bin/bash
echo "$@" >> "$(dirname "$0")/calls.log"
path=/usr/local/Ascend
for arg in "$@"; do case "$arg" in --install-path=*) path="${arg#--install-path=}";; esac; done
case " $* " in
  *" --check "*) echo "Verifying archive integrity...  100%   SHA256 checksums are OK. All good."; exit 0;;
esac
if [ -f "$(dirname "$0")/fail" ]; then
  echo "[Driver] [2025-01-01 10:00:00] [ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not exists! Please add HwHiAiUser"
  exit 1
fi
read -r answer
mkdir -p "$path/driver/script"
printf 'Version=%s\ncompatible_version_fw=[7.0.0,7.7.99]\n' "${WRITE_VERSION:-@VERSION@}" > "$path/driver/version.info"
echo "[Driver] [2025-01-01 10:00:00] [INFO]LogFile: $(dirname "$0")/install.log"
echo "[Driver] [2025-01-01 10:00:01] [INFO]Driver package installed successfully! Reboot needed for installation/upgrade to take effect!"
echo "answered $answer" > "$(dirname "$0")/install.log"
exit 2
'''


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    packages = tmp_path / 'packages'
    packages.mkdir()
    install_path = tmp_path / 'Ascend'

    def make_driver(version):
        path = packages / ('Ascend-hdk-910b-npu-driver_%s_linux-%s.run' % (version, DRIVER_ARCH))
        path.write_text(INSTALLER.replace('@VERSION@', version))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    return {'tmp': tmp_path, 'packages': packages, 'install_path': str(install_path), 'make_driver': make_driver}


@pytest.fixture
def warnings(monkeypatch):
    # Once a controller-side plugin is imported in this process, ansible-core sends module
    # warnings to the controller's display instead of the result; record them at the source.
    recorded = []
    monkeypatch.setattr(ascend_runfile.AnsibleModule, 'warn', lambda module, text, **kwargs: recorded.append(text))
    return recorded


def calls(node):
    log = node['packages'] / 'calls.log'
    return log.read_text().splitlines() if log.exists() else []


def test_fresh_install_upgrade_and_idempotence(node, run_module):
    src = node['make_driver']('24.1.rc2')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['changed'] and result['action'] == 'install'
    assert result['version_before'] is None and result['version_after'] == '24.1.rc2'
    assert result['rc'] == 2
    assert result['reboot_required'] is True
    assert result['cmd'] == [src, '--nox11', '--full', '--quiet', '--install-for-all',
                             '--install-path=%s' % node['install_path']]
    assert result['log_tail'] == ['answered y']
    assert result['diff'] == {'before': 'version: None\n', 'after': 'version: 24.1.rc2\n'}
    assert calls(node) == ['--check', ' '.join(result['cmd'][1:])]

    marker = json.loads(open(reboot_marker.REBOOT_MARKER_PATH).read())
    assert marker['reasons'][0]['component'] == 'driver'
    assert reboot_marker.reboot_pending(marker, reboot_marker.read_current_boot())[0] is True

    again = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert not again['changed'] and again['action'] == 'keep' and again['cmd'] == []
    assert len(calls(node)) == 2

    newer = node['make_driver']('25.0.rc1.1')
    upgraded = run_module(ascend_runfile, {'src': newer, 'install_path': node['install_path']})
    assert upgraded['action'] == 'upgrade' and upgraded['version_after'] == '25.0.rc1.1'
    assert upgraded['cmd'][1:3] == ['--nox11', '--upgrade']


def test_check_mode_runs_nothing(node, run_module):
    src = node['make_driver']('25.0.rc1.1')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']}, check_mode=True)
    assert result['changed'] and result['action'] == 'install'
    assert result['cmd'][:3] == [src, '--nox11', '--full']
    assert result['version_after'] == '25.0.rc1.1'
    assert calls(node) == []
    assert not os.path.exists(os.path.join(node['install_path'], 'driver'))


def test_check_mode_plans_from_the_name_when_the_package_is_not_on_the_node(node, run_module, warnings):
    # A dry run on a fresh node: the copy did not happen, so only the name is there to decide from.
    missing = str(node['packages'] / ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % DRIVER_ARCH))
    result = run_module(ascend_runfile, {'src': missing, 'install_path': node['install_path'], 'checksum': '0' * 64},
                        check_mode=True)
    assert result['changed'] is True and result['action'] == 'install'
    assert result['package_version'] == '25.0.rc1.1' and result['version_after'] == '25.0.rc1.1'
    assert result['cmd'] == [missing, '--nox11', '--full', '--quiet', '--install-for-all',
                             '--install-path=%s' % node['install_path']]
    assert any('not on the node' in text and 'checksum' in text for text in warnings)
    assert calls(node) == []


def test_check_mode_without_the_package_reports_no_change_when_that_version_is_installed(node, run_module):
    src = node['make_driver']('25.0.rc1.1')
    run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    os.remove(src)
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']}, check_mode=True)
    assert result['changed'] is False and result['action'] == 'keep' and result['cmd'] == []


def test_a_missing_package_still_fails_outside_check_mode(node, run_module):
    missing = str(node['packages'] / ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % DRIVER_ARCH))
    result = run_module(ascend_runfile, {'src': missing, 'install_path': node['install_path']})
    assert result['failed'] and 'does not exist on the node' in result['msg']


def test_kernels_before_the_toolkit_warn_in_check_mode_and_fail_for_real(node, run_module, warnings):
    kernels = str(node['packages'] / ('Ascend-cann-kernels-910b_8.2.RC1_linux-%s.run' % ARCH))
    planned = run_module(ascend_runfile, {'src': kernels, 'install_path': node['install_path']}, check_mode=True)
    assert planned['changed'] is True and planned['action'] == 'install'
    assert planned['cmd'][:4] == [kernels, '--nox11', '--install', '--quiet']
    assert any('needs the CANN toolkit installed first' in text for text in warnings)
    with open(kernels, 'w') as handle:
        handle.write('#!/bin/sh\nexit 0\n')
    os.chmod(kernels, 0o755)
    real = run_module(ascend_runfile, {'src': kernels, 'install_path': node['install_path']})
    assert real['failed'] and 'needs the CANN toolkit installed first' in real['msg']


def test_a_package_for_another_architecture_is_refused_with_the_fix(node, run_module):
    other = 'aarch64' if ARCH == 'x86_64' else 'x86-64'
    src = str(node['packages'] / ('Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-%s.run' % other))
    with open(src, 'w') as handle:
        handle.write('#!/bin/sh\nexit 0\n')
    os.chmod(src, 0o755)
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['failed'] and result['msg'].startswith('driver package Ascend-hdk-910b-npu-driver_25.0.rc1.1')
    assert 'Fix: use the %s package of version 25.0.rc1.1' % ARCH in result['msg']
    assert calls(node) == []


def test_downgrade_is_refused_unless_allowed(node, run_module):
    run_module(ascend_runfile, {'src': node['make_driver']('25.0.rc1.1'), 'install_path': node['install_path']})
    older = node['make_driver']('24.1.rc2')
    refused = run_module(ascend_runfile, {'src': older, 'install_path': node['install_path']})
    assert refused['failed'] and 'allow_downgrade' in refused['msg']
    allowed = run_module(ascend_runfile, {'src': older, 'install_path': node['install_path'], 'allow_downgrade': True})
    assert allowed['changed'] and allowed['action'] == 'downgrade' and allowed['version_after'] == '24.1.rc2'
    assert '--upgrade' in allowed['cmd']


def test_checksum_is_verified_first(node, run_module):
    src = node['make_driver']('25.0.rc1.1')
    actual = hashlib.sha256(open(src, 'rb').read()).hexdigest()
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path'], 'checksum': '0' * 64})
    assert result['failed'] and actual in result['msg'] and '0' * 64 in result['msg']
    assert calls(node) == []
    good = run_module(ascend_runfile,
                      {'src': src, 'install_path': node['install_path'], 'checksum': 'sha256:' + actual},
                      check_mode=True)
    assert good['changed']


def test_installer_failure_names_cause_and_fix(node, run_module):
    src = node['make_driver']('25.0.rc1.1')
    (node['packages'] / 'fail').write_text('')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['failed'] and result['rc'] == 1
    assert result['msg'].startswith('driver install failed (rc=1): ERR_NO:0x0091')
    assert 'useradd' in result['fix']
    assert not os.path.exists(reboot_marker.REBOOT_MARKER_PATH)


def test_success_without_the_version_on_disk_fails(node, run_module, monkeypatch):
    src = node['make_driver']('25.0.rc1.1')
    monkeypatch.setenv('WRITE_VERSION', '24.1.rc1')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['failed'] and '24.1.rc1' in result['msg'] and '25.0.rc1.1' in result['msg']


def test_component_must_agree_with_the_file_name(node, run_module):
    src = node['make_driver']('25.0.rc1.1')
    result = run_module(ascend_runfile, {'src': src, 'component': 'firmware', 'install_path': node['install_path']})
    assert result['failed'] and 'driver package' in result['msg']


def test_absent_uses_the_installed_uninstall_script(node, run_module):
    run_module(ascend_runfile, {'src': node['make_driver']('25.0.rc1.1'), 'install_path': node['install_path']})
    script = os.path.join(node['install_path'], 'driver', 'script', 'uninstall.sh')
    with open(script, 'w') as handle:
        handle.write('#!/bin/sh\nrm -f "$(dirname "$0")/../version.info"\n'
                     'echo "[INFO]Driver package uninstalled successfully! Reboot needed for uninstallation to take effect!"\n')
    os.chmod(script, 0o755)
    planned = run_module(ascend_runfile,
                         {'component': 'driver', 'state': 'absent', 'install_path': node['install_path']},
                         check_mode=True)
    assert planned['changed'] and planned['cmd'] == [script]
    removed = run_module(ascend_runfile,
                         {'component': 'driver', 'state': 'absent', 'install_path': node['install_path']})
    assert removed['changed'] and removed['version_before'] == '25.0.rc1.1' and removed['version_after'] is None
    assert removed['reboot_required'] is True
    gone = run_module(ascend_runfile, {'component': 'driver', 'state': 'absent', 'install_path': node['install_path']})
    assert not gone['changed'] and gone['action'] == 'keep'


def test_installer_that_exits_before_reading_its_answers_reports_its_own_error(node, run_module):
    # An installer failing its prerequisites exits before reading stdin; its message must
    # reach the user, not the broken pipe from writing the prompt answers.
    src = node['make_driver']('24.1.rc2')
    (node['packages'] / 'fail').write_text('')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['failed']
    assert 'HwHiAiUser not exists' in result['msg']


def test_unread_answers_swallow_only_a_broken_pipe():
    class ClosedPipe(object):
        def write(self, data):
            raise BrokenPipeError(32, 'Broken pipe')

        def close(self):
            raise BrokenPipeError(32, 'Broken pipe')

    class FullDisk(object):
        def write(self, data):
            raise OSError(28, 'No space left on device')

    answers = ascend_runfile.UnreadAnswers(ClosedPipe())
    assert answers.write(b'y\n') == 0
    answers.close()
    with pytest.raises(OSError):
        ascend_runfile.UnreadAnswers(FullDisk()).write(b'y\n')


def test_results_say_they_did_not_fail_whatever_the_installer_rc(node, run_module):
    # Ansible marks a result with rc other than 0 as failed unless it carries failed: false;
    # the driver installer exits 2 on success, and a no-op runs nothing (rc null).
    src = node['make_driver']('24.1.rc2')
    installed = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert installed['rc'] == 2 and installed['failed'] is False
    again = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert again['rc'] is None and again['failed'] is False


HUNG_INSTALLER = r'''#!/bin/bash
echo "$@" >> "$(dirname "$0")/calls.log"
case " $* " in *" --check "*) exit 0;; esac
trap '' TERM
sleep 30
'''


def _hung_driver(node, version='25.0.rc1.1'):
    path = node['packages'] / ('Ascend-hdk-910b-npu-driver_%s_linux-%s.run' % (version, DRIVER_ARCH))
    path.write_text(HUNG_INSTALLER)
    path.chmod(0o755)
    return str(path)


def test_a_hung_installer_fails_naming_component_version_and_limit(node, run_module, monkeypatch):
    monkeypatch.setattr(ascend_runfile, 'KILL_AFTER_SECONDS', 1)
    src = _hung_driver(node)
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path'], 'timeout': 1})
    assert result['failed'] and result['cause'] == 'timeout' and result['timeout'] == 1
    assert 'driver install of version 25.0.rc1.1 did not finish within 1 seconds' in result['msg']
    assert 'hdk_driver_installer_timeout' in result['msg'] and 'Fix:' in result['msg']


@pytest.mark.parametrize('component, seconds', sorted(ascend_runfile.DEFAULT_TIMEOUTS.items()))
def test_every_component_has_a_generous_default_timeout(component, seconds):
    assert component in runfile.MANAGED_COMPONENTS and seconds >= 600


def test_the_default_timeout_wraps_every_installer_run(node, run_module, monkeypatch):
    seen = []
    real = ascend_runfile.AnsibleModule.run_command
    monkeypatch.setattr(ascend_runfile.AnsibleModule, 'run_command',
                        lambda module, argv, **kwargs: seen.append(argv) or real(module, argv, **kwargs))
    src = node['make_driver']('24.1.rc2')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['changed'] and len(seen) == 2
    for argv in seen:
        assert argv[:3] == ['timeout', '--kill-after=30', '1800'] and argv[3] == src
    # What the result reports is the installer's own argv, not the wrapper.
    assert result['cmd'][0] == src


@pytest.mark.parametrize('timeout', [0, -1])
def test_a_timeout_of_zero_or_less_is_refused_before_anything_runs(node, run_module, timeout):
    src = node['make_driver']('24.1.rc2')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path'], 'timeout': timeout})
    assert result['failed'] and 'timeout must be a positive number of seconds, got %d' % timeout in result['msg']
    assert calls(node) == []


@pytest.mark.parametrize('content, found', [
    (b'Version=24.1.rc2;reboot\n', "'24.1.rc2;reboot'"),
    (b'Version=$(touch /tmp/x)\n', "'$(touch"),
    (b'Version=`id`\n', "'`id`'"),
    (b'Version="24.1 rc2"\n', "'24.1 rc2'"),
    (b'Version=24.1.rc2\npackage_version=24.1.rc2\x1b[2J\n', "'24.1.rc2\\x1b[2J'"),
])
def test_an_installed_version_with_shell_characters_stops_the_module(node, run_module, content, found):
    version_file = os.path.join(node['install_path'], 'driver', 'version.info')
    os.makedirs(os.path.dirname(version_file))
    with open(version_file, 'wb') as handle:
        handle.write(content)
    src = node['make_driver']('25.0.rc1.1')
    result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']})
    assert result['failed'] and version_file in result['msg'] and 'not a Huawei version' in result['msg']
    assert found in result['msg'] and 'Fix:' in result['msg'] and '\x1b' not in result['msg']
    assert calls(node) == []
    with open(version_file, 'rb') as handle:
        assert handle.read() == content


def test_an_installed_version_file_that_is_not_utf8_stops_the_module(node, run_module):
    version_file = os.path.join(node['install_path'], 'driver', 'version.info')
    os.makedirs(os.path.dirname(version_file))
    content = b'Version=24.1.rc2\n\xff\xfeInnerversion=\x80\n'
    with open(version_file, 'wb') as handle:
        handle.write(content)
    src = node['make_driver']('25.0.rc1.1')
    for check_mode in (True, False):
        result = run_module(ascend_runfile, {'src': src, 'install_path': node['install_path']}, check_mode=check_mode)
        assert result['failed'] and version_file in result['msg'] and 'is not UTF-8 text' in result['msg']
        assert 'offset 17' in result['msg']
    assert calls(node) == []
    with open(version_file, 'rb') as handle:
        assert handle.read() == content
