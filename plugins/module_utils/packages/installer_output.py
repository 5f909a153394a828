# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How to read what a Huawei installer printed: its success lines, its reboot lines and its
failure lines, turned into an error that names the component, the installer's own line and the
fix. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.packages.runfile import DEFAULT_INSTALL_PATH, HDK_COMPONENTS

INSTALL_LOG_DIR = '/var/log/ascend_seclog'
INSTALL_LOG_PATH = INSTALL_LOG_DIR + '/ascend_install.log'
# Huawei's deployer accepts 2 as success from the HDK installers; its meaning is unconfirmed.
SUCCESS_RC = {'driver': (0, 2), 'firmware': (0, 2)}
# A SIGKILL: the shell's 128 + 9, or run_command's -9 when the installer itself was killed.
KILLED_RC = (137, -9)


_SUCCESS_MARKERS = (
    re.compile(r'package installed successfully', re.I),
    re.compile(r'package uninstalled successfully', re.I),
    re.compile(r'\binstall success\b', re.I),
    re.compile(r'\bupgrade success\b', re.I),
    re.compile(r'\buninstall success\b', re.I),
    re.compile(r'chips are successfully upgraded', re.I),
)
# "Reboot needed" is the driver's line. The firmware says "Reboot now or after driver
# installation ... to take effect": the same instruction in other words, and the new
# firmware really is inactive until the next boot.
_REBOOT_MARKERS = (
    re.compile(r'Reboot needed', re.I),
    re.compile(r'Reboot now or after driver installation', re.I),
)
_IMMEDIATE_MARKER = re.compile(r'takes? effect immediately', re.I)
_LINE_PREFIX = re.compile(r'^(?:\[[^\]]*\]\s*)*')
_ERR_NO = re.compile(r'ERR_NO:(0x[0-9A-Fa-f]+);?\s*ERR_DES:\s*(.*)$')
_LOG_FILE = re.compile(r'\bLogFile:\s*(\S+)')
# What makeself itself prints while it checks and unpacks the archive, before the installer
# runs: never the reason an installer failed.
_MAKESELF_LINE = re.compile(r'^\s*(Verifying archive integrity|Uncompressing|All good|\d+%)|checksums are OK', re.I)

_ERR_NO_FIXES = {
    '0x0004': 'the installer does not accept one of the options; check extra_args and that the file is '
              'the component you meant',
    '0x0093': 'run the task as root (become: true)',
    '0x0091': 'create the HwHiAiUser group and user first (groupadd HwHiAiUser; useradd -g HwHiAiUser '
              '-d /home/HwHiAiUser -m HwHiAiUser -s /bin/bash)',
}

_FAILURE_PATTERNS = (
    (re.compile(r'list of missing tools', re.I),
     'install the missing tools (lspci comes from pciutils, ifconfig from net-tools) and retry'),
    (re.compile(r'Dkms install failed', re.I),
     'install dkms, gcc, make and the kernel headers of the running kernel (linux-headers-$(uname -r) on '
     'Debian/Ubuntu, kernel-devel-$(uname -r) on RPM systems), then retry; details are in '
     + INSTALL_LOG_PATH),
    (re.compile(r'Failed to install driver package', re.I),
     'uninstall the driver (%s/driver/script/uninstall.sh), reboot, then install again' % DEFAULT_INSTALL_PATH),
    (re.compile(r'no chip matching the driver package', re.I),
     'this package is for another chip; use the package whose chip matches the PCI devices '
     '(see ascend_facts pci_devices)'),
    (re.compile(r'unsupported parameters', re.I),
     'the installer does not accept one of the options; check extra_args'),
    (re.compile(r'declined EULA', re.I),
     'the EULA prompt was answered with no; the module answers y on stdin, so check extra_args'),
    (re.compile(r'No space left on device|not enough (?:disk )?space|insufficient (?:disk )?space'
                r'|free space of \S+ is less than', re.I),
     'free disk space (CANN needs at least 10 GB free on /) and retry'),
    (re.compile(r'Error in (?:\w+ )?check ?sums|is different from|Corrupted|corrupt', re.I),
     'the package file is damaged; copy or download it again and compare its sha256'),
    (re.compile(r'permission denied', re.I),
     'run the task as root (become: true) and check that the .run file is executable'),
)


def _strip_log_prefix(line):
    """Drop the ``[Driver] [date] [LEVEL]`` prefixes so the installer's message stands alone."""
    return _LINE_PREFIX.sub('', line.strip()).strip()


def _is_error_line(line):
    return '[ERROR]' in line.upper() or 'ERR_NO:' in line


def find_failure(output):
    """Return ``{'cause': line, 'fix': text, 'code': ERR_NO or None}`` for the first known failure, else None."""
    lines = [line for line in (output or '').splitlines() if line.strip()]
    for line in lines:
        match = _ERR_NO.search(line)
        if match:
            code = match.group(1).lower()
            fix = _ERR_NO_FIXES.get(code) or 'see %s for details' % INSTALL_LOG_PATH
            return {'cause': _strip_log_prefix(line), 'fix': fix, 'code': code}
    for pattern, fix in _FAILURE_PATTERNS:
        for line in lines:
            if pattern.search(line):
                return {'cause': _strip_log_prefix(line), 'fix': fix, 'code': None}
    for line in lines:
        if _is_error_line(line):
            return {'cause': _strip_log_prefix(line), 'fix': 'see the installer log (log_tail) for details',
                    'code': None}
    return None


def reboot_required(output):
    """True when the installer asked for a reboot; "takes effect immediately" means no."""
    return any(marker.search(output or '') for marker in _REBOOT_MARKERS)


def takes_effect_immediately(output):
    return bool(_IMMEDIATE_MARKER.search(output or ''))


def _has_success_marker(output):
    return any(marker.search(output or '') for marker in _SUCCESS_MARKERS)


def log_file_from_output(output):
    """The installer names its log file (``LogFile: /var/log/...``); return the last one named."""
    found = _LOG_FILE.findall(output or '')
    return found[-1] if found else None


def installer_failure_message(result, host, part, task_name=None):
    """The message a role stops with when one of its installer tasks failed.

    ``result`` is the failed task's result. ascend_runfile's own failures name the component, the
    cause and the fix, and are passed on as they are; any other result means that no answer came
    back from the node (it went down, rebooted or the connection broke under the installer).
    ``part`` names what was being installed (``CANN``, ``firmware and driver``); ``task_name``
    is added unless the result is the roles' own check that every installer answered.
    """
    result = result or {}
    if 'component' in result:
        return result.get('msg') or ''
    where = '' if 'assertion' in result or not task_name else ' (%s)' % task_name
    return ('%s: %s: no result came back from the node%s: %s. The node went down, rebooted or the '
            'connection broke while the installer ran. Fix: bring the node back up and make sure it is '
            'reachable, then run again: a half-finished install is found by the installer (or reported by '
            'preflight as a leftover) and repaired.' % (host, part, where, (result.get('msg') or '').strip()))


def interpret_result(component, action, rc, output):
    """Judge one installer run.

    Returns ``{'ok': bool, 'reboot_required': bool, 'message': text, 'cause', 'fix'}``.
    An exit code outside the component's success codes always fails; a success code still
    fails when the output holds a known failure line (an installer that says it failed did).
    """
    success_codes = SUCCESS_RC.get(component, (0,))
    failure = find_failure(output)
    ok = rc in success_codes and failure is None
    result = {
        'ok': ok,
        'reboot_required': ok and reboot_required(output),
        'success_marker': _has_success_marker(output),
        'cause': None,
        'fix': None,
        'message': None,
    }
    if ok:
        result['message'] = '%s %s finished (rc=%s)' % (component, action, rc)
        return result
    if failure is None and rc in KILLED_RC:
        # A SIGKILL leaves only the shell's "Killed" behind, which says nothing about what to do.
        failure = {'cause': 'the installer was killed (SIGKILL, rc=%s) before it finished, leaving a partial '
                            'install' % rc,
                   'fix': 'find what killed it (the kernel OOM killer in `journalctl -k`, a timeout, an operator), '
                          'remove the partial install with %s/%s/script/uninstall.sh (delete that directory if the '
                          'script is missing)%s, then run again'
                          % (DEFAULT_INSTALL_PATH, component if component in HDK_COMPONENTS else '<component>',
                             ' and reboot' if component in HDK_COMPONENTS else ''),
                   'code': None}
    if failure is None:
        last_lines = [_strip_log_prefix(line) for line in (output or '').splitlines()
                      if line.strip() and not _MAKESELF_LINE.search(line)]
        failure = {'cause': last_lines[-1] if last_lines else
                   'the installer exited with rc=%s without printing a reason' % rc,
                   'fix': 'read the installer log (log_tail in the result, or %s and the logs beside it on the '
                          'node); a damaged package shows with `<package>.run --check`; then run again'
                          % INSTALL_LOG_PATH, 'code': None}
    result['cause'] = failure['cause']
    result['fix'] = failure['fix']
    result['message'] = '%s %s failed (rc=%s): %s. Fix: %s.' % (
        component, action, rc, failure['cause'].rstrip('.'), failure['fix'])
    return result


def interpret_archive_check(rc, output):
    """Judge ``<file>.run --check``; return None when the archive is intact, else the reason."""
    failure = None
    for line in (output or '').splitlines():
        if re.search(r'Error in|is different from|Corrupted|corrupt|checksums? (?:are|is) (?:not|wrong)', line, re.I):
            failure = _strip_log_prefix(line)
            break
    if rc == 0 and failure is None:
        return None
    if failure is None:
        lines = [_strip_log_prefix(line) for line in (output or '').splitlines() if line.strip()]
        failure = lines[-1] if lines else 'no output'
    return 'the archive check failed (rc=%s): %s' % (rc, failure)


def decode_log(data):
    """The text of installer log bytes: UTF-8, with anything else (Huawei's logs can hold GBK text)
    shown as ``\\xNN`` escapes rather than failing the read."""
    return data.decode('utf-8', 'backslashreplace')


def log_tail(text, lines=20):
    if not text:
        return []
    return text.splitlines()[-lines:]
