# -*- coding: utf-8 -*-
"""A run that finds the same package's installer still running (its controller died) waits for it and
returns its result: it never starts a second installer on top of it."""

import json
import os
import stat
import subprocess
import time

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock

from ansible_collections.npu.ascend.plugins.module_utils.packages import installer_record, reboot_marker
from ansible_collections.npu.ascend.plugins.modules import ascend_runfile

# The driver installer stand-in of the node lock's tests: --check, an install writing version.info.
from test_ascend_runfile_node_lock import DRIVER_ARCH, INSTALLER

VERSION = '25.0.rc1.1'


@pytest.fixture
def driver(tmp_path, monkeypatch):
    monkeypatch.setattr(reboot_marker, 'REBOOT_MARKER_PATH', str(tmp_path / 'state' / 'reboot-required.json'))
    src = tmp_path / ('Ascend-hdk-910b-npu-driver_%s_linux-%s.run' % (VERSION, DRIVER_ARCH))
    src.write_text(INSTALLER)
    src.chmod(src.stat().st_mode | stat.S_IXUSR)
    return {'src': str(src), 'install_path': str(tmp_path / 'Ascend'), 'calls': tmp_path / 'calls.log'}


def installs(driver):
    lines = driver['calls'].read_text().splitlines() if driver['calls'].exists() else []
    return [line for line in lines if '--check' not in line]


def write_version(driver):
    os.makedirs(os.path.join(driver['install_path'], 'driver'), exist_ok=True)
    with open(os.path.join(driver['install_path'], 'driver', 'version.info'), 'w') as handle:
        handle.write('Version=%s\n' % VERSION)


@pytest.fixture
def earlier_run(node_lock_in_tmp):
    """``with earlier_run(result, package_version, seconds) as pid``: a forked process that is an earlier run's
    module: it holds the node lock, records its installer, runs for ``seconds``, then writes ``result``
    (None: writes none, as a killed module) and ends."""
    import contextlib

    @contextlib.contextmanager
    def run(result, package_version=VERSION, seconds=1.0, on_finish=None):
        ready_read, ready_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                with node_lock.NodeLock(path=node_lock_in_tmp, holder={'module': 'npu.ascend.ascend_runfile'}):
                    mine = installer_record.new_record('driver', package_version, 'install', '/srv/x.run',
                                                       [['/srv/x.run', '--full']], 60, reboot_marker.read_current_boot())
                    installer_record.write_record(mine)
                    os.write(ready_write, b'x')
                    time.sleep(seconds)
                    if on_finish:
                        on_finish()
                    if result is not None:
                        installer_record.write_result(mine, result)
            finally:
                os._exit(0)
        os.read(ready_read, 1)
        try:
            yield pid
        finally:
            os.waitpid(pid, 0)
    return run


EARLIER_SUCCESS = {'failed': False, 'changed': True, 'component': 'driver', 'action': 'install', 'reason': 'not installed',
                   'package_version': VERSION, 'version_before': None, 'version_after': VERSION,
                   'reboot_required': True, 'cmd': ['/srv/x.run', '--full'], 'commands': [['/srv/x.run', '--full']],
                   'rc': 2, 'stdout_lines': ['Reboot needed'], 'log_tail': []}


def test_a_running_install_of_the_same_package_is_waited_for_and_its_result_returned(driver, run_module, earlier_run):
    # lock_timeout 0: the wait for the earlier installer is bounded by its own deadline, not by the lock timeout.
    args = {'src': driver['src'], 'install_path': driver['install_path'], 'lock_timeout': 0}
    with earlier_run(EARLIER_SUCCESS, on_finish=lambda: write_version(driver)) as pid:
        result = run_module(ascend_runfile, args)
    assert not result.get('failed'), result
    assert result['changed'] and result['reboot_required'] and result['version_after'] == VERSION
    assert result['adopted']['module_pid'] == pid
    assert 'this run waited for it and started no installer of its own' in result['reason']
    # No installer ran in this run, not even the archive check.
    assert not driver['calls'].exists()
    # The next run finds the driver installed and keeps it.
    again = run_module(ascend_runfile, args)
    assert not again['changed'] and again['action'] == 'keep' and 'adopted' not in again


def test_a_failed_earlier_installer_fails_this_run_with_its_own_message(driver, run_module, earlier_run):
    failed = dict(EARLIER_SUCCESS, failed=True, changed=True, reboot_required=False, version_after=None,
                  msg='driver install failed: HwHiAiUser not exists! Fix: create the HwHiAiUser user, then run again',
                  cause='user')
    with earlier_run(failed):
        result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert result['failed'] and result['msg'] == failed['msg'] and result['component'] == 'driver'
    assert result['adopted'] and not driver['calls'].exists()


def test_an_earlier_module_killed_without_a_result_leaves_the_decision_to_the_installed_version(
        driver, run_module, earlier_run, monkeypatch):
    recorded = []
    monkeypatch.setattr(ascend_runfile.AnsibleModule, 'warn', lambda module, text, **kwargs: recorded.append(text))
    with earlier_run(None, on_finish=lambda: write_version(driver)):
        result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert not result['failed'] and not result['changed'] and result['action'] == 'keep', result
    assert any('ended without a result' in text for text in recorded)
    assert not driver['calls'].exists()


def test_an_orphaned_installer_is_waited_for_before_deciding_again(driver, run_module, monkeypatch):
    """The module that started it is gone (killed), its installer still runs: wait until it ends."""
    installer = subprocess.Popen(['sh', '-c', 'sleep 1.5; mkdir -p "$0/driver"; echo Version=%s > "$0/driver/version.info"'
                                  % VERSION, driver['install_path']])
    mine = installer_record.new_record('driver', VERSION, 'install', driver['src'], [[driver['src'], '--full']], 60,
                                       reboot_marker.read_current_boot())
    mine.update(module_pid=999999999, module_start_time='1')
    installer_record.note_installer(mine, installer.pid, [driver['src'], '--full'])
    monkeypatch.setattr(ascend_runfile.AnsibleModule, 'warn', lambda module, text, **kwargs: None)
    try:
        result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    finally:
        installer.wait()
    assert result['action'] == 'keep' and not result['changed'], result
    assert not driver['calls'].exists()


def test_a_running_installer_of_another_version_is_not_adopted_and_the_lock_timeout_holds(driver, run_module,
                                                                                          earlier_run):
    with earlier_run(dict(EARLIER_SUCCESS, package_version='24.1.rc2'), package_version='24.1.rc2', seconds=3):
        result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path'],
                                             'lock_timeout': 0})
    assert result['failed'] and 'driver install not started' in result['msg'] and 'held by pid' in result['msg']
    assert 'adopted' not in result


def test_a_record_of_another_boot_is_ignored_and_this_run_installs(driver, run_module):
    stale = installer_record.new_record('driver', VERSION, 'install', driver['src'], [[driver['src']]], 60,
                                        {'boot_id': 'another-boot', 'pid1_start_time': '1'})
    installer_record.write_record(stale)
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert result['changed'] and 'adopted' not in result and len(installs(driver)) == 1


def test_an_install_records_its_installer_and_its_result(driver, run_module):
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    mine, problem = installer_record.read_record('driver')
    assert problem is None
    assert mine['module_pid'] == os.getpid() and mine['installer_argv'][:1] == [driver['src']]
    assert mine['argv'] == result['commands'] and mine['package_version'] == VERSION
    assert mine['deadline_epoch'] > mine['started_epoch']
    with open(mine['result_path']) as handle:
        saved = json.load(handle)
    assert saved['run_id'] == mine['run_id'] and saved['result']['reboot_required'] is True
    assert saved['result']['changed'] is True


def test_a_failed_install_records_its_failure(driver, run_module):
    with open(driver['src'], 'a'):
        pass
    os.chmod(driver['src'], 0o644)
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert result['failed'] and 'not executable' in result['msg']
    mine, _problem = installer_record.read_record('driver')
    assert installer_record.read_result(mine)['msg'] == result['msg']


def test_check_mode_records_nothing(driver, run_module):
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']}, check_mode=True)
    assert result['changed']
    assert installer_record.read_record('driver') == (None, None)


def test_a_record_that_cannot_be_written_starts_nothing(driver, run_module, monkeypatch, tmp_path):
    blocker = tmp_path / 'not-a-directory'
    blocker.write_text('')
    monkeypatch.setattr(installer_record, 'RECORD_DIR', str(blocker / 'installers'))
    result = run_module(ascend_runfile, {'src': driver['src'], 'install_path': driver['install_path']})
    assert result['failed'] and 'driver install not started: cannot record the installer run' in result['msg']
    assert not driver['calls'].exists()
