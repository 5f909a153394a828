# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of the installer running on a node, and of its result, kept free of Ansible.

The roles start every ``.run`` installer on all nodes of a play at once (Ansible's ``async``) and
then wait for them, so an installer outlives the connection that started it: when the controller
dies or is killed mid-run, the installer goes on. A later run must then wait for that installer and
use its result, never start a second one on top of it. The node lock (``node_lock``) keeps two
installers from running together, but it says nothing about whose installer holds it, how long it
may take or how it ended; this record does.

``ascend_runfile`` writes, per component, ``<RECORD_DIR>/<component>.json`` before its first
installer command (and again with each command's pid), and ``<component>.result.json`` when it ends,
successful or not. Both are written whole through the one safe writer (``durable_file``): a crash
leaves the previous file or the new one, never half of one. The files live in ``/run`` (a tmpfs):
they describe processes of the running boot, which a reboot ends, so a record from another boot
is one of nothing running (and is not found after a reboot at all).

What makes a record *running*: it is of this boot, and the module process or the installer
process it names is still alive, each identified by its pid *and* its start time (field 22 of
``/proc/<pid>/stat``), so a pid reused by another process is not taken for the installer. A record
whose processes are gone and that has no result is one of a module killed before it could write
one: the version files then say what the installer did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import json
import os
import time

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read
from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file

RECORD_DIR = '/run/npu_ascend/installers'
PROC = '/proc'
_POLL_SECONDS = 1.0


def record_path(component, directory=None):
    return os.path.join(directory or RECORD_DIR, '%s.json' % component)


def result_path(component, directory=None):
    return os.path.join(directory or RECORD_DIR, '%s.result.json' % component)


def parse_start_time(stat_text):
    """Field 22 (starttime, clock ticks since boot) of a /proc/<pid>/stat text; None when unreadable.

    The command name (field 2) may hold spaces and parentheses, so fields are counted after the last ')'.
    """
    if not stat_text or ')' not in stat_text:
        return None
    after_name = stat_text.rsplit(')', 1)[1].split()
    # after_name starts with field 3 (state); starttime is field 22.
    if len(after_name) < 20:
        return None
    return after_name[19]


def _parse_state(stat_text):
    """Field 3 (state: R, S, D, Z, ...) of a /proc/<pid>/stat text; None when unreadable."""
    if not stat_text or ')' not in stat_text:
        return None
    after_name = stat_text.rsplit(')', 1)[1].split()
    return after_name[0] if after_name else None


def _stat_text(pid, proc):
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        return bounded_read.read_bytes(os.path.join(proc or PROC, str(pid), 'stat'), limit=4096).decode('utf-8', 'replace')
    except (IOError, OSError, ValueError):
        return None


def process_start_time(pid, proc=None):
    """The start time of process ``pid``, None when there is no such process (or it cannot be read)."""
    return parse_start_time(_stat_text(pid, proc))


def alive(pid, start_time, proc=None):
    """Whether the process ``pid`` that started at ``start_time`` still runs (not a later process with its pid)."""
    if pid is None or start_time is None:
        return False
    text = _stat_text(pid, proc)
    # A zombie has ended; only its parent has not collected its exit status yet.
    return parse_start_time(text) == str(start_time) and _parse_state(text) not in (None, 'Z', 'X')


def new_record(component, package_version, action, src, commands, budget_seconds, boot, clock=time.time, proc=None):
    """The record of an installer run this process is about to start.

    ``budget_seconds`` is how long all of its commands may take together (their timeouts and the kill
    margins): a run that waits for it waits no longer than that from its start.
    """
    now = clock()
    pid = os.getpid()
    return {
        'run_id': binascii.hexlify(os.urandom(8)).decode('ascii'),
        'component': component,
        'package_version': package_version,
        'action': action,
        'src': src,
        'argv': [list(argv) for argv in commands],
        'boot': boot,
        'module_pid': pid,
        'module_start_time': process_start_time(pid, proc),
        'installer_pid': None,
        'installer_start_time': None,
        'installer_argv': None,
        'started_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)),
        'started_epoch': now,
        'deadline_epoch': now + budget_seconds,
        'result_path': result_path(component, os.path.dirname(record_path(component))),
    }


def _write_json(path, data):
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    durable_file.replace_durably(path, (json.dumps(data, sort_keys=True) + '\n').encode('utf-8'), mode=0o600,
                                 keep_mode=False)


def write_record(record):
    """Writes the record whole (raises OSError/IOError when it cannot)."""
    _write_json(record_path(record['component']), record)


def note_installer(record, pid, argv, proc=None):
    """Adds the installer process just started to the record and writes it again."""
    record['installer_pid'] = pid
    record['installer_start_time'] = process_start_time(pid, proc)
    record['installer_argv'] = list(argv)
    write_record(record)


_REQUIRED = ('run_id', 'component', 'boot', 'module_pid', 'started_epoch', 'deadline_epoch', 'result_path')


def _read_json(path):
    """(data, problem): (None, None) when the file is not there."""
    try:
        text = bounded_read.read_bytes(path, follow=False).decode('utf-8')
    except (IOError, OSError) as error:
        if getattr(error, 'errno', None) == 2:
            return None, None
        return None, 'cannot read %s: %s' % (path, error)
    except ValueError as error:
        return None, 'cannot read %s: %s' % (path, error)
    try:
        data = json.loads(text)
    except ValueError as error:
        return None, '%s is not JSON (%s)' % (path, error)
    if not isinstance(data, dict):
        return None, '%s does not hold a JSON object' % path
    return data, None


def read_record(component):
    """(record, problem) for ``component``: (None, None) when there is none; a damaged record is a problem."""
    path = record_path(component)
    record, problem = _read_json(path)
    if record is None:
        return None, problem
    missing = [key for key in _REQUIRED if key not in record]
    if missing or record.get('component') != component:
        return None, '%s is not a record of the %s installer (missing %s)' % (path, component, ', '.join(missing) or
                                                                              'its component')
    return record, None


def same_boot(record, boot):
    recorded = record.get('boot') or {}
    return bool(boot) and recorded.get('boot_id') == boot.get('boot_id') and \
        str(recorded.get('pid1_start_time')) == str(boot.get('pid1_start_time'))


def running(record, boot, proc=None):
    """Whether the module or the installer the record names still runs in this boot."""
    if not record or not same_boot(record, boot):
        return False
    return (alive(record.get('module_pid'), record.get('module_start_time'), proc)
            or alive(record.get('installer_pid'), record.get('installer_start_time'), proc))


def installer_running(record, boot, proc=None):
    """Whether the installer process itself (not the module that started it) still runs in this boot."""
    return bool(record) and same_boot(record, boot) and alive(
        record.get('installer_pid'), record.get('installer_start_time'), proc)


def describe(record):
    """One line naming the recorded installer, for messages and results."""
    return ('the %s %s of version %s started at %s by pid %s' % (
        record.get('component'), record.get('action') or 'installer', record.get('package_version') or '(installed)',
        record.get('started_at') or '?', record.get('module_pid')))


def write_result(record, result, clock=time.time):
    """Writes the result of the recorded run next to its record (raises OSError/IOError when it cannot)."""
    _write_json(record['result_path'], {
        'run_id': record['run_id'],
        'finished_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(clock())),
        'result': result,
    })


def read_result(record):
    """The result the recorded run wrote, None when it wrote none (yet) or it belongs to another run."""
    data, _problem = _read_json(record['result_path'])
    if not data or data.get('run_id') != record.get('run_id') or not isinstance(data.get('result'), dict):
        return None
    return data['result']


def wait_while(condition, deadline, clock=time.time, sleep=time.sleep, poll=_POLL_SECONDS):
    """Waits until ``condition()`` is false or ``deadline`` passes; returns whether it ended in time."""
    while condition():
        if clock() >= deadline:
            return False
        sleep(poll)
    return True
