# -*- coding: utf-8 -*-
"""The record of a running installer: what makes it running, written whole, and its result bound to its run."""

import json
import os
import subprocess

from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.packages import installer_record, reboot_marker

BOOT = {'boot_id': 'b-1', 'pid1_start_time': '7'}


def this_boot():
    return reboot_marker.read_current_boot()


def record(**changes):
    made = installer_record.new_record('driver', '25.0.rc1.1', 'install', '/srv/driver.run', [['/srv/driver.run', '--full']],
                                       100, this_boot())
    made.update(changes)
    return made


@given(st.text(alphabet=st.characters(blacklist_categories=('Cs',), blacklist_characters='\n\x00'), max_size=30))
def test_the_start_time_is_read_after_any_command_name(name):
    stat_text = '4242 (%s) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200' % name
    assert installer_record.parse_start_time(stat_text) == '987654'


def test_a_stat_text_too_short_or_unreadable_has_no_start_time():
    assert installer_record.parse_start_time('') is None
    assert installer_record.parse_start_time('12 (x) S 1 2') is None
    assert installer_record.parse_start_time('no parenthesis') is None


def test_this_process_is_alive_and_a_reused_pid_is_not():
    start = installer_record.process_start_time(os.getpid())
    assert start is not None
    assert installer_record.alive(os.getpid(), start)
    # The same pid with another start time is another process: not the recorded installer.
    assert not installer_record.alive(os.getpid(), str(int(start) + 1))
    assert not installer_record.alive(None, start)


def test_a_finished_process_is_not_alive():
    process = subprocess.Popen(['sleep', '0.1'])
    start = installer_record.process_start_time(process.pid)
    assert installer_record.alive(process.pid, start)
    process.wait()
    assert not installer_record.alive(process.pid, start)


def test_a_record_is_running_while_its_module_or_installer_runs_in_this_boot():
    mine = record()
    installer_record.write_record(mine)
    found, problem = installer_record.read_record('driver')
    assert problem is None and found == mine
    assert installer_record.running(found, this_boot())
    # Another boot: the reboot ended every process of the record.
    assert not installer_record.running(found, BOOT)
    # Module gone, installer running: still running (the module was killed, its installer goes on).
    sleeper = subprocess.Popen(['sleep', '5'])
    try:
        gone_module = dict(found, module_pid=999999999, module_start_time='1')
        assert not installer_record.running(gone_module, this_boot())
        installer_record.note_installer(gone_module, sleeper.pid, ['/srv/driver.run', '--full'])
        again, _problem = installer_record.read_record('driver')
        assert again['installer_pid'] == sleeper.pid and again['installer_argv'] == ['/srv/driver.run', '--full']
        assert installer_record.running(again, this_boot()) and installer_record.installer_running(again, this_boot())
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not installer_record.running(again, this_boot())


def test_the_record_is_written_whole_private_and_with_nothing_beside_it():
    installer_record.write_record(record())
    names = sorted(os.listdir(installer_record.RECORD_DIR))
    assert names == ['driver.json']
    assert oct(os.stat(installer_record.record_path('driver')).st_mode & 0o777) == oct(0o600)


def test_no_record_is_no_problem_and_a_damaged_one_is_named():
    assert installer_record.read_record('driver') == (None, None)
    os.makedirs(installer_record.RECORD_DIR, exist_ok=True)
    with open(installer_record.record_path('driver'), 'w') as handle:
        handle.write('{"pid": ')
    found, problem = installer_record.read_record('driver')
    assert found is None and 'is not JSON' in problem
    with open(installer_record.record_path('driver'), 'w') as handle:
        json.dump({'component': 'firmware'}, handle)
    found, problem = installer_record.read_record('driver')
    assert found is None and 'not a record of the driver installer' in problem


def test_a_result_belongs_to_its_own_run_only():
    first = record()
    installer_record.write_record(first)
    assert installer_record.read_result(first) is None
    installer_record.write_result(first, {'changed': True, 'reboot_required': True})
    assert installer_record.read_result(first) == {'changed': True, 'reboot_required': True}
    # A later run of the same component: the earlier result is not its result.
    second = record()
    assert installer_record.read_result(second) is None


def test_wait_while_stops_at_the_deadline_or_when_the_condition_ends():
    now = [0.0]
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds

    assert installer_record.wait_while(lambda: True, 5, clock=lambda: now[0], sleep=sleep) is False
    assert now[0] >= 5
    left = [3]

    def still():
        left[0] -= 1
        return left[0] > 0

    now[0] = 0.0
    assert installer_record.wait_while(still, 100, clock=lambda: now[0], sleep=sleep) is True
    assert now[0] == 2.0


def test_describe_names_component_version_start_and_pid():
    text = installer_record.describe(record())
    assert 'driver install of version 25.0.rc1.1' in text and 'by pid %d' % os.getpid() in text
