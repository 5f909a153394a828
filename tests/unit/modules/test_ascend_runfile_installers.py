# -*- coding: utf-8 -*-
"""ascend_runfile's ``installers``: several packages installed in their order by one module run (one background
job per role), each with what a single installer has (record, adoption, node lock), stopping at the first failure."""

import os
import platform
import stat
import time

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock
from ansible_collections.npu.ascend.plugins.module_utils.packages import installer_record, reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile

DRIVER_ARCH = 'x86-64' if platform.machine() == 'x86_64' else platform.machine()
DRIVER = '25.0.rc1.1'
FIRMWARE = '7.7.0.1.231'

# Enough of Huawei's driver and firmware installers: --check, an install writing <component>/version.info,
# the reboot line, and a failure when a file named after the component is beside the package.
INSTALLER = r'''#!/bin/bash
here="$(dirname "$0")"
echo "@COMPONENT@ $*" >> "$here/calls.log"
path=/usr/local/Ascend
for arg in "$@"; do case "$arg" in --install-path=*) path="${arg#--install-path=}";; esac; done
case " $* " in *" --check "*) echo "SHA256 checksums are OK. All good."; exit 0;; esac
if [ -f "$here/fail-@COMPONENT@" ]; then
  echo "[@COMPONENT@] [ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not exists! Please add HwHiAiUser"
  exit 1
fi
mkdir -p "$path/@COMPONENT@"
printf 'Version=@VERSION@\n' > "$path/@COMPONENT@/version.info"
echo "[@COMPONENT@] [INFO]@COMPONENT@ package installed successfully! Reboot needed for installation/upgrade to take effect!"
exit 0
'''


@pytest.fixture
def node(tmp_path, monkeypatch):
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    # Module warnings go to the controller's display once a controller plugin was imported: record them here.
    warned = []
    monkeypatch.setattr(ascend_runfile.AnsibleModule, 'warn', lambda module, text, **kwargs: warned.append(text))

    def package(component, version):
        name = ('Ascend-hdk-910b-npu-driver_%s_linux-%s.run' % (version, DRIVER_ARCH) if component == 'driver'
                else 'Ascend-hdk-910b-npu-firmware_%s.run' % version)
        path = tmp_path / name
        path.write_text(INSTALLER.replace('@COMPONENT@', component).replace('@VERSION@', version))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    return {'tmp': tmp_path, 'install_path': str(tmp_path / 'Ascend'), 'calls': tmp_path / 'calls.log',
            'driver': package('driver', DRIVER), 'firmware': package('firmware', FIRMWARE), 'warned': warned}


def installs(node):
    lines = node['calls'].read_text().splitlines() if node['calls'].exists() else []
    return [line.split()[0] for line in lines if '--check' not in line]


def both(node, **extra):
    return dict({'installers': [{'src': node['driver']}, {'src': node['firmware'], 'component': 'firmware'}],
                 'install_path': node['install_path']}, **extra)


def test_the_installers_run_in_their_order_in_one_run_and_a_second_run_keeps_both(node, run_module):
    result = run_module(ascend_runfile, both(node))
    assert not result.get('failed'), result
    assert installs(node) == ['driver', 'firmware']
    assert result['changed'] and result['reboot_required']
    assert result['components'] == ['driver', 'firmware'] and result['changed_components'] == ['driver', 'firmware']
    assert [entry['version_after'] for entry in result['results']] == [DRIVER, FIRMWARE]
    # Each installer has its own record and result, as a single run writes them.
    for component in ('driver', 'firmware'):
        record, problem = installer_record.read_record(component)
        assert problem is None and installer_record.read_result(record)['component'] == component
    # The lock is released between installers and at the end: another process can take it now.
    node_lock.NodeLock(timeout=0).acquire().release()
    again = run_module(ascend_runfile, both(node))
    assert not again['changed'] and again['changed_components'] == []
    assert [entry['action'] for entry in again['results']] == ['keep', 'keep'] and len(installs(node)) == 2


def test_the_first_failed_installer_ends_the_run_with_its_own_message_and_the_next_does_not_run(node, run_module):
    (node['tmp'] / 'fail-driver').write_text('')
    result = run_module(ascend_runfile, both(node))
    assert result['failed'] and result['component'] == 'driver'
    assert 'HwHiAiUser not exists' in result['msg'] and result['cause']
    assert installs(node) == ['driver'] and len(result['results']) == 1


def test_a_failure_after_a_change_reports_the_change(node, run_module):
    (node['tmp'] / 'fail-firmware').write_text('')
    result = run_module(ascend_runfile, both(node))
    assert result['failed'] and result['component'] == 'firmware' and result['changed']
    # The failed firmware installer ran too: what it left is a change as well.
    assert result['changed_components'] == ['driver', 'firmware'] and installs(node) == ['driver', 'firmware']
    assert [entry['failed'] for entry in result['results']] == [False, True]


def test_check_mode_plans_every_installer_and_runs_none(node, run_module):
    result = run_module(ascend_runfile, both(node), check_mode=True)
    assert result['changed'] and result['changed_components'] == ['driver', 'firmware']
    assert [entry['action'] for entry in result['results']] == ['install', 'install']
    assert not node['calls'].exists()
    assert installer_record.read_record('driver') == (None, None)


def test_an_entry_s_own_options_are_checked_as_a_single_run_s(node, run_module):
    bad = both(node)
    bad['installers'][1]['timeout'] = 0
    result = run_module(ascend_runfile, bad)
    assert result['failed'] and 'timeout must be a positive number of seconds' in result['msg']
    assert installs(node) == ['driver']


@pytest.mark.parametrize('extra', [{'src': '/srv/x.run'}, {'timeout': 5}, {'state': 'absent'}])
def test_installers_goes_with_the_shared_options_only(node, run_module, extra):
    result = run_module(ascend_runfile, both(node, **extra))
    assert result['failed'] and not node['calls'].exists()


def test_an_earlier_run_s_driver_result_is_taken_while_that_run_still_holds_the_lock_for_its_next_installer(
        node, run_module, node_lock_in_tmp):
    """The controller was killed during the driver of a firmware-and-driver job; the job goes on to the firmware,
    holding the node lock. The rerun takes the driver's result without waiting for the lock, and starts nothing."""
    earlier_result = {'failed': False, 'changed': True, 'component': 'driver', 'action': 'install',
                      'reason': 'not installed', 'package_version': DRIVER, 'version_before': None,
                      'version_after': DRIVER, 'reboot_required': True, 'cmd': [], 'commands': [], 'rc': 0,
                      'stdout_lines': [], 'log_tail': []}
    ready_read, ready_write = os.pipe()
    done_read, done_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            with node_lock.NodeLock(path=node_lock_in_tmp, holder={'module': 'npu.ascend.ascend_runfile'}):
                mine = installer_record.new_record('driver', DRIVER, 'install', node['driver'], [[node['driver']]], 60,
                                                   reboot_marker.read_current_boot())
                installer_record.write_record(mine)
                os.write(ready_write, b'x')
                # The driver installer runs for a while after the rerun has started, then ends.
                time.sleep(1.0)
                os.makedirs(os.path.join(node['install_path'], 'driver'))
                with open(os.path.join(node['install_path'], 'driver', 'version.info'), 'w') as handle:
                    handle.write('Version=%s\n' % DRIVER)
                installer_record.write_result(mine, earlier_result)
                # "The firmware installer": the lock stays held until the test has its answer.
                os.read(done_read, 1)
        finally:
            os._exit(0)
    os.read(ready_read, 1)
    try:
        result = run_module(ascend_runfile, {'installers': [{'src': node['driver']}], 'install_path': node['install_path'],
                                             'lock_timeout': 0})
    finally:
        os.write(done_write, b'x')
        os.waitpid(pid, 0)
    assert not result.get('failed'), result
    adopted = result['results'][0]
    assert adopted['adopted']['module_pid'] == pid and result['changed'] and result['reboot_required']
    assert not node['calls'].exists()
