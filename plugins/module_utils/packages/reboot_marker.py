# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reboot marker: Huawei leaves no file saying a reboot is pending, only the line
"Reboot needed" in the installer's output. ``ascend_runfile`` therefore records that line in a
small JSON file of our own, tagged with the boot it happened in (the kernel boot id *and* the
start time of PID 1, because a container restart keeps the boot id but restarts PID 1). The
reboot is pending while that tag equals the current boot. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read

REBOOT_MARKER_PATH = '/var/lib/npu_ascend/reboot-required.json'
BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id'
PID1_STAT_PATH = '/proc/1/stat'


def _read_text(path):
    """The text of ``path``, None when it cannot be read (also when it is not a small regular file)."""
    try:
        return bounded_read.read_bytes(path).decode('utf-8', 'replace')
    except (IOError, OSError, ValueError):
        return None


def parse_pid1_start_time(stat_text):
    """Field 22 (starttime) of /proc/<pid>/stat; the command name may hold spaces, so count after ')'."""
    if not stat_text or ')' not in stat_text:
        raise ValueError('unreadable /proc/1/stat: %r' % (stat_text,))
    after_name = stat_text.rsplit(')', 1)[1].split()
    # Fields 1 and 2 are pid and (comm); after_name starts with field 3.
    if len(after_name) < 20:
        raise ValueError('unreadable /proc/1/stat: too few fields')
    return after_name[19]


def current_boot(boot_id_text, pid1_stat_text):
    """Identify the running boot: ``{'boot_id', 'pid1_start_time'}``."""
    return {'boot_id': (boot_id_text or '').strip() or None,
            'pid1_start_time': parse_pid1_start_time(pid1_stat_text)}


def read_current_boot(boot_id_path=BOOT_ID_PATH, pid1_stat_path=PID1_STAT_PATH):
    return current_boot(_read_text(boot_id_path), _read_text(pid1_stat_path))


def same_boot(marker, boot):
    if not marker or not boot:
        return False
    return (marker.get('boot_id') == boot.get('boot_id')
            and str(marker.get('pid1_start_time')) == str(boot.get('pid1_start_time')))


def _valid(marker):
    """``marker`` when it has the shape add_reboot_reason writes, else None: ``"reasons": 5`` would
    break the reader and ``"reasons": "abc"`` read as three reasons 'a', 'b', 'c'."""
    if not isinstance(marker, dict):
        return None
    reasons = marker.get('reasons', [])
    if not isinstance(reasons, list) or not all(isinstance(reason, dict) for reason in reasons):
        return None
    return marker


def parse_reboot_marker(text):
    """Return the marker dict or None when absent or damaged (a damaged marker pends nothing)."""
    if not text:
        return None
    try:
        marker = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return _valid(marker)


def damaged_marker_fix(path=None):
    """The fix for a marker read_reboot_marker reports as damaged."""
    return ('Fix: if an installer asked for a reboot during this boot, reboot the node; remove %s (ascend_runfile '
            'writes it afresh when an installer asks for a reboot)' % (path or REBOOT_MARKER_PATH))


def read_reboot_marker(path=None):
    """``(marker, problem)`` of the marker file: ``(None, None)`` when there is none, ``(None, why)``
    when it is there but cannot be read or is not what ascend_runfile writes. The caller warns
    (with damaged_marker_fix); a damaged marker pends nothing and the next recorded reboot replaces it."""
    path = path or REBOOT_MARKER_PATH
    try:
        # Our own file: a link there is not ours to follow.
        data = bounded_read.read_bytes(path, follow=False)
    except bounded_read.RefusedFile as error:
        return None, 'the reboot marker %s' % error.cause
    except (IOError, OSError) as error:
        if error.errno == errno.ENOENT:
            return None, None
        return None, 'cannot read the reboot marker %s: %s' % (path, error.strerror or error)
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        return None, 'the reboot marker %s is not UTF-8 text (byte %d)' % (path, error.start)
    marker = parse_reboot_marker(text)
    if marker is None and text.strip():
        return None, ('the reboot marker %s is damaged: not the JSON object with a list of reasons that '
                      'ascend_runfile writes' % path)
    return marker, None


def add_reboot_reason(marker, boot, component, version, recorded_at):
    """Return the marker to write after ``component`` asked for a reboot in ``boot``.

    Reasons from an earlier boot are dropped: that reboot has happened.
    """
    marker = _valid(marker) or {}
    reasons = list(marker.get('reasons', [])) if same_boot(marker, boot) else []
    reasons = [reason for reason in reasons if reason.get('component') != component]
    reasons.append({'component': component, 'version': version, 'recorded_at': recorded_at})
    return {'boot_id': boot['boot_id'], 'pid1_start_time': boot['pid1_start_time'],
            'recorded_at': recorded_at, 'reasons': reasons}


def reboot_pending(marker, boot):
    """Return ``(pending, reasons)`` for the marker as seen from ``boot``."""
    marker = _valid(marker)
    if same_boot(marker, boot):
        return True, list(marker.get('reasons', []))
    return False, []
