# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions behind installing Huawei ``.run`` packages, kept free of Ansible.

What lives here, and why it is shared by ``ascend_facts`` and ``ascend_runfile``:

* where each component records its installed version (the "Installed-version files"
  table of docs/development.md) and how to read all of them into one dict;
* what to do with a package given what is installed (``plan_action``);
* the exact argv Huawei's own deployer uses for each component and action;
* how to read an installer's output: the success lines, the reboot lines and the
  failure lines, turned into an error that names the component, the installer's own
  line and the fix;
* the reboot marker: Huawei leaves no file saying a reboot is pending, only the line
  "Reboot needed" in the installer's output. ``ascend_runfile`` therefore records that
  line in a small JSON file of our own, tagged with the boot it happened in (the kernel
  boot id *and* the start time of PID 1, because a container restart keeps the boot id
  but restarts PID 1). The reboot is pending while that tag equals the current boot.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re

from ansible_collections.npu.ascend.plugins.module_utils.ascend_version import compare_versions, parse_version
from ansible_collections.npu.ascend.plugins.module_utils import version_files

DEFAULT_INSTALL_PATH = '/usr/local/Ascend'
INSTALL_RECORD_PATH = '/etc/ascend_install.info'
INSTALL_LOG_DIR = '/var/log/ascend_seclog'
INSTALL_LOG_PATH = INSTALL_LOG_DIR + '/ascend_install.log'
REBOOT_MARKER_PATH = '/var/lib/npu_ascend/reboot-required.json'
BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id'
PID1_STAT_PATH = '/proc/1/stat'
KNOWN_ARCHES = ('x86_64', 'aarch64')

# Components ascend_runfile can manage: each has a version file in the contract table.
MANAGED_COMPONENTS = ('driver', 'firmware', 'toolkit', 'kernels', 'ops', 'nnal', 'docker-runtime')
# Keys of the ``installed`` fact; ``docker-runtime`` becomes an identifier-friendly key.
FACT_KEYS = {
    'firmware': 'firmware', 'driver': 'driver', 'toolkit': 'toolkit', 'kernels': 'kernels',
    'ops': 'ops', 'nnal': 'nnal', 'docker-runtime': 'docker_runtime',
}
HDK_COMPONENTS = ('driver', 'firmware')
CANN_COMPONENTS = ('toolkit', 'kernels', 'ops', 'nnal')
# Kernels and ops packages offer --install but no --upgrade (facts reference section 3).
INSTALL_ONLY_COMPONENTS = ('kernels', 'ops')
# Huawei's deployer accepts 2 as success from the HDK installers; its meaning is unconfirmed.
SUCCESS_RC = {'driver': (0, 2), 'firmware': (0, 2)}
# A SIGKILL: the shell's 128 + 9, or run_command's -9 when the installer itself was killed.
KILLED_RC = (137, -9)
# The only first-release layout change: CANN >= 8.5.0 installs under <ip>/cann-<ver>.
CANN_LAYOUT_CHANGE = '8.5.0'

ACTIONS = ('install', 'upgrade', 'none', 'uninstall', 'refuse')


def operator_kernels_component(cann_version):
    """The package carrying a CANN release's operator kernels: ``ops`` from CANN_LAYOUT_CHANGE on,
    ``kernels`` before it. ValueError names a text that is not a version."""
    return 'ops' if compare_versions(str(cann_version), CANN_LAYOUT_CHANGE) >= 0 else 'kernels'


# --------------------------------------------------------------------------------------
# Installed versions
# --------------------------------------------------------------------------------------

def _read_text(path):
    """The text of ``path``, None when it cannot be read; VersionFileError when it is not UTF-8."""
    try:
        with open(path, 'rb') as handle:
            data = handle.read()
    except (IOError, OSError):
        return None
    return version_files.decode_version_file(data, path)


def _parse_file(parser, path):
    """The parsed version file at ``path``, None when absent or without a version.

    A file that is there but holds a value no Huawei installer writes raises VersionFileError
    naming the file: treating it as "not installed" would install over whatever is there.
    """
    text = _read_text(path)
    if text is None:
        return None
    try:
        parsed = parser(text)
    except version_files.VersionFileError as error:
        raise version_files.VersionFileError('%s: %s. Fix: look at the file; if it is damaged, reinstall the '
                                             'component that owns it' % (path, error))
    except ValueError:
        return None
    if not parsed or not parsed.get('version'):
        return None
    return parsed


def _strip_v(version):
    # The docker runtime writes version=v7.3.0; every other component has no prefix.
    version = str(version).strip()
    if version[:1] in ('v', 'V') and version[1:2].isdigit():
        return version[1:]
    return version


def _existing(path):
    return path if os.path.exists(path) else None


def _arch_order(arch):
    if arch in KNOWN_ARCHES:
        return (arch,) + tuple(other for other in KNOWN_ARCHES if other != arch)
    return KNOWN_ARCHES


def _entry(version, home, version_file, parsed, uninstall_script=None, **extra):
    entry = {
        'version': _strip_v(version),
        'path': home,
        'version_file': version_file,
        'uninstall_script': uninstall_script if uninstall_script and os.path.exists(uninstall_script) else None,
    }
    for key, value in parsed.items():
        if key not in entry and key != 'version':
            entry[key] = value
    entry.update(extra)
    return entry


def _read_driver(install_path):
    home = os.path.join(install_path, 'driver')
    version_file = os.path.join(home, 'version.info')
    parsed = _parse_file(version_files.parse_driver_version_info, version_file)
    if parsed is None:
        return None
    return _entry(parsed['version'], home, version_file, parsed,
                  os.path.join(home, 'script', 'uninstall.sh'),
                  upgrade_tool=_existing(os.path.join(home, 'tools', 'upgrade-tool')))


def _read_firmware(install_path):
    home = os.path.join(install_path, 'firmware')
    version_file = os.path.join(home, 'version.info')
    parsed = _parse_file(version_files.parse_firmware_version_info, version_file)
    if parsed is None:
        return None
    return _entry(parsed['version'], home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))


def _toolkit_candidates(install_path, arch):
    # Older CANN: <ip>/ascend-toolkit/latest -> <ver>; 8.5.0 and later: <ip>/cann -> cann-<ver>.
    for layout, link in (('ascend-toolkit', os.path.join(install_path, 'ascend-toolkit', 'latest')),
                         ('cann', os.path.join(install_path, 'cann'))):
        for candidate_arch in _arch_order(arch):
            version_file = os.path.join(link, '%s-linux' % candidate_arch, 'ascend_toolkit_install.info')
            if os.path.exists(version_file):
                yield layout, link, candidate_arch, version_file
                break


def _read_toolkit(install_path, arch):
    found = []
    for layout, link, toolkit_arch, version_file in _toolkit_candidates(install_path, arch):
        parsed = _parse_file(version_files.parse_toolkit_install_info, version_file)
        if parsed is None:
            continue
        home = os.path.realpath(link)
        set_env = os.path.join(os.path.dirname(link) if layout == 'ascend-toolkit' else link, 'set_env.sh')
        found.append(_entry(
            parsed['version'], home, version_file, parsed,
            os.path.join(home, '%s-linux' % toolkit_arch, 'script', 'uninstall.sh'),
            layout=layout, arch=parsed.get('arch') or toolkit_arch, set_env=_existing(set_env)))
    if not found:
        return None
    # Both layouts can coexist during a move to 8.5.0; the newer one is what is in use.
    found.sort(key=lambda item: parse_version(item['version']).sort_key)
    return found[-1]


def _in_opp_kernel_tree(component, install_path, home):
    """True when ``home`` (a resolved version directory) is where ``component`` installs: kernels
    in ``<ip>/ascend-toolkit/<ver>``, ops in ``<ip>/cann-<ver>``. CANN 8.5 keeps the historical
    ascend-toolkit paths working (its release notes), so the cann tree can also be reached through
    ``ascend-toolkit/latest``; what is found there is still the ops package."""
    parent, name = os.path.split(home)
    if component == 'kernels':
        return parent == os.path.realpath(os.path.join(install_path, 'ascend-toolkit'))
    return parent == os.path.realpath(install_path) and name.startswith('cann-')


def _read_opp_kernel(component, install_path):
    """Kernels live in the toolkit tree (<= 8.3), ops in the cann tree (>= 8.5)."""
    if component == 'kernels':
        current = os.path.join(install_path, 'ascend-toolkit', 'latest')
        pattern = os.path.join(install_path, 'ascend-toolkit', '*', 'opp_kernel', 'version.info')
    else:
        current = os.path.join(install_path, 'cann')
        pattern = os.path.join(install_path, 'cann-*', 'opp_kernel', 'version.info')
    candidates = [os.path.join(current, 'opp_kernel', 'version.info')]
    candidates.extend(path for path in sorted(glob.glob(pattern)) if '/latest/' not in path)
    seen_homes = set()
    entries = []
    for version_file in candidates:
        home = os.path.realpath(os.path.dirname(os.path.dirname(version_file)))
        if home in seen_homes or not _in_opp_kernel_tree(component, install_path, home):
            continue
        seen_homes.add(home)
        parsed = _parse_file(version_files.parse_opp_kernel_version_info, version_file)
        if parsed is not None:
            entries.append(_entry(parsed['version'], home, version_file, parsed))
    if not entries:
        return None
    # The one under the active toolkit link comes first: that is what programs load.
    chosen = entries[0]
    chosen['all_versions'] = sorted(set(item['version'] for item in entries),
                                    key=lambda text: parse_version(text).sort_key)
    return chosen


def _read_nnal(install_path):
    home = os.path.join(install_path, 'nnal', 'atb', 'latest')
    version_file = os.path.join(home, 'version.info')
    parsed = _parse_file(version_files.parse_nnal_version_info, version_file)
    if parsed is None:
        return None
    set_env = os.path.join(install_path, 'nnal', 'atb', 'set_env.sh')
    return _entry(parsed['version'], os.path.realpath(home), version_file, parsed,
                  os.path.join(home, 'script', 'uninstall.sh'), set_env=_existing(set_env))


def _read_docker_runtime(install_path):
    home = os.path.join(install_path, 'Ascend-Docker-Runtime')
    version_file = os.path.join(home, 'ascend_docker_runtime_install.info')
    parsed = _parse_file(version_files.parse_docker_runtime_install_info, version_file)
    if parsed is None:
        return None
    return _entry(parsed['version'], home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))


def read_install_record(path=INSTALL_RECORD_PATH):
    """Return /etc/ascend_install.info as a dict, or None when absent or unreadable."""
    text = _read_text(path)
    if text is None:
        return None
    try:
        return version_files.parse_install_info(text)
    except ValueError:
        return None


def _hdk_install_path(component, install_path, record):
    # The driver/firmware can live elsewhere (the 310B SoC uses /var/davinci); the install
    # record says where, and it is only consulted when the default place holds nothing.
    if not record:
        return None
    key = '%s_Install_Path_Param' % component.capitalize()
    other = record.get(key)
    if other and os.path.normpath(other) != os.path.normpath(install_path):
        return other
    return None


def read_installed(component, install_path=DEFAULT_INSTALL_PATH, arch=None, record=None):
    """Return ``{version, path, version_file, uninstall_script, ...}`` or None for one component."""
    if component == 'driver' or component == 'firmware':
        reader = _read_driver if component == 'driver' else _read_firmware
        found = reader(install_path)
        if found is None:
            alternative = _hdk_install_path(component, install_path, record)
            if alternative:
                found = reader(alternative)
        return found
    if component == 'toolkit':
        return _read_toolkit(install_path, arch)
    if component in ('kernels', 'ops'):
        return _read_opp_kernel(component, install_path)
    if component == 'nnal':
        return _read_nnal(install_path)
    if component == 'docker-runtime':
        return _read_docker_runtime(install_path)
    raise ValueError('no installed-version file is known for component %r (managed: %s)'
                     % (component, ', '.join(MANAGED_COMPONENTS)))


def read_all_installed(install_path=DEFAULT_INSTALL_PATH, arch=None, record=None):
    """Return the ``installed`` fact: one entry (or None) per managed component."""
    return dict((FACT_KEYS[component], read_installed(component, install_path, arch, record))
                for component in MANAGED_COMPONENTS)


# --------------------------------------------------------------------------------------
# Deciding
# --------------------------------------------------------------------------------------

def installed_versions(entry):
    """Every version of a component on the node (``entry`` as read_installed returns it): the
    operator kernels of an older toolkit stay in its version directory, so kernels can have several."""
    if not entry:
        return []
    return list(entry.get('all_versions') or [entry['version']])


def plan_action(component, installed_version, package_version, state='present', allow_downgrade=False,
                all_installed_versions=None):
    """Decide what to do; returns ``{'action': one of ACTIONS, 'reason': text}``.

    A downgrade is carried out as an upgrade run (Huawei's ``--upgrade`` path replaces
    whatever is installed) only when explicitly allowed. For state=absent, the plan's
    ``version`` is the one to remove: the package's when it is among ``all_installed_versions``
    (operator kernels of older toolkits stay beside the current ones), else the installed one.
    """
    if state not in ('present', 'absent'):
        raise ValueError('state must be present or absent, got %r' % (state,))
    if state == 'absent':
        if package_version is not None:
            for version in all_installed_versions or []:
                if compare_versions(version, package_version) == 0:
                    return {'action': 'uninstall', 'version': version,
                            'reason': '%s %s is installed' % (component, version)}
        if installed_version is None:
            return {'action': 'none', 'reason': '%s is not installed' % component}
        return {'action': 'uninstall', 'version': installed_version,
                'reason': '%s %s is installed' % (component, installed_version)}
    if package_version is None:
        raise ValueError('the package version is needed for state=present')
    if installed_version is None:
        return {'action': 'install', 'reason': '%s is not installed' % component}
    order = compare_versions(package_version, installed_version)
    if order == 0:
        return {'action': 'none', 'reason': '%s %s is already installed' % (component, installed_version)}
    if order > 0:
        return {'action': 'upgrade',
                'reason': '%s %s is installed, the package is %s' % (component, installed_version, package_version)}
    if allow_downgrade:
        return {'action': 'upgrade',
                'reason': 'downgrading %s from %s to %s (allow_downgrade is set)'
                          % (component, installed_version, package_version)}
    return {'action': 'refuse',
            'reason': 'refusing to downgrade %s from %s to %s; set allow_downgrade=true to do it anyway'
                      % (component, installed_version, package_version)}


def check_prerequisites(component, package_version, installed):
    """Return a message when a CANN add-on would install without the toolkit it needs, else None.

    ``installed`` is the dict of read_all_installed().
    """
    if component not in ('kernels', 'ops'):
        return None
    toolkit = (installed or {}).get('toolkit')
    if not toolkit:
        return ('the CANN %s package needs the CANN toolkit installed first; install '
                'Ascend-cann-toolkit_%s first' % (component, package_version))
    if component == 'ops' and compare_versions(toolkit['version'], CANN_LAYOUT_CHANGE) < 0:
        return ('the CANN ops package %s needs toolkit >= %s, but toolkit %s is installed; upgrade the toolkit first'
                % (package_version, CANN_LAYOUT_CHANGE, toolkit['version']))
    return None


def supports_install_for_all(component, soc=False):
    """True when the installer accepts --install-for-all (the SoC driver rejects it)."""
    if component == 'driver':
        return not soc
    return component in CANN_COMPONENTS


def _install_path_args(install_path):
    # Leaving the default out keeps argv identical to Huawei's deployer and works with
    # installers (firmware) that do not document --install-path.
    if install_path and os.path.normpath(install_path) != DEFAULT_INSTALL_PATH:
        return ['--install-path=%s' % install_path]
    return []


def build_commands(component, action, src=None, install_path=DEFAULT_INSTALL_PATH, install_for_all=True,
                   extra_args=None, soc=False, uninstall_script=None):
    """Return the argv lists to run, in order, for ``action`` on ``component``.

    ``extra_args`` are appended to every run of the ``.run`` file (for example
    ``--install-scene=containerd`` for the docker runtime) but not to uninstall scripts.
    Raises ValueError when the action cannot be done (no src, no uninstall entry point).
    """
    if component not in MANAGED_COMPONENTS:
        raise ValueError('unsupported component %r (managed: %s)' % (component, ', '.join(MANAGED_COMPONENTS)))
    extra = list(extra_args or [])
    path_args = _install_path_args(install_path)
    for_all = ['--install-for-all'] if install_for_all and supports_install_for_all(component, soc) else []
    if install_for_all and component == 'driver' and soc:
        raise ValueError('the SoC driver package rejects --install-for-all; set install_for_all=false')

    if action == 'none' or action == 'refuse':
        return []
    if action == 'uninstall':
        return [_uninstall_argv(component, src, path_args, extra, uninstall_script)]
    if not src:
        raise ValueError('installing %s needs the package file (src)' % component)

    if component == 'driver':
        if action == 'install':
            return [[src, '--nox11', '--full', '--quiet'] + for_all + path_args + extra]
        return [[src, '--nox11', '--upgrade', '--quiet'] + path_args + extra]
    if component == 'firmware':
        mode = '--full' if action == 'install' else '--upgrade'
        return [[src, '--nox11', mode, '--quiet'] + path_args + extra]
    if component == 'docker-runtime':
        mode = '--install' if action == 'install' else '--upgrade'
        return [[src, '--nox11', mode] + path_args + extra]
    install_argv = [src, '--nox11', '--install', '--quiet'] + for_all + path_args + extra
    if action == 'install':
        return [install_argv]
    if component in INSTALL_ONLY_COMPONENTS:
        # No --upgrade exists: remove the old one, then install the new one.
        return [[src, '--nox11', '--uninstall'] + path_args + extra, install_argv]
    return [[src, '--nox11', '--upgrade', '--quiet'] + path_args + extra]


def _uninstall_argv(component, src, path_args, extra, uninstall_script):
    if component in HDK_COMPONENTS:
        if not uninstall_script:
            raise ValueError('cannot uninstall %s: its uninstall script is missing' % component)
        return [uninstall_script]
    if src and os.path.exists(src):
        return [src, '--nox11', '--uninstall'] + path_args + extra
    if uninstall_script:
        return [uninstall_script]
    raise ValueError('cannot uninstall %s: give src (the .run file) or keep its installed uninstall script'
                     % component)


# --------------------------------------------------------------------------------------
# Reading installer output
# --------------------------------------------------------------------------------------

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


def strip_log_prefix(line):
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
            return {'cause': strip_log_prefix(line), 'fix': fix, 'code': code}
    for pattern, fix in _FAILURE_PATTERNS:
        for line in lines:
            if pattern.search(line):
                return {'cause': strip_log_prefix(line), 'fix': fix, 'code': None}
    for line in lines:
        if _is_error_line(line):
            return {'cause': strip_log_prefix(line), 'fix': 'see the installer log (log_tail) for details',
                    'code': None}
    return None


def reboot_required(output):
    """True when the installer asked for a reboot; "takes effect immediately" means no."""
    return any(marker.search(output or '') for marker in _REBOOT_MARKERS)


def takes_effect_immediately(output):
    return bool(_IMMEDIATE_MARKER.search(output or ''))


def has_success_marker(output):
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
        'success_marker': has_success_marker(output),
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
        last_lines = [strip_log_prefix(line) for line in (output or '').splitlines()
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
            failure = strip_log_prefix(line)
            break
    if rc == 0 and failure is None:
        return None
    if failure is None:
        lines = [strip_log_prefix(line) for line in (output or '').splitlines() if line.strip()]
        failure = lines[-1] if lines else 'no output'
    return 'the archive check failed (rc=%s): %s' % (rc, failure)


# --------------------------------------------------------------------------------------
# Reboot marker
# --------------------------------------------------------------------------------------

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


def parse_reboot_marker(text):
    """Return the marker dict or None when absent or damaged (a damaged marker pends nothing)."""
    if not text:
        return None
    try:
        marker = json.loads(text)
    except ValueError:
        return None
    return marker if isinstance(marker, dict) else None


def add_reboot_reason(marker, boot, component, version, recorded_at):
    """Return the marker to write after ``component`` asked for a reboot in ``boot``.

    Reasons from an earlier boot are dropped: that reboot has happened.
    """
    reasons = list(marker.get('reasons', [])) if same_boot(marker, boot) else []
    reasons = [reason for reason in reasons if reason.get('component') != component]
    reasons.append({'component': component, 'version': version, 'recorded_at': recorded_at})
    return {'boot_id': boot['boot_id'], 'pid1_start_time': boot['pid1_start_time'],
            'recorded_at': recorded_at, 'reasons': reasons}


def reboot_pending(marker, boot):
    """Return ``(pending, reasons)`` for the marker as seen from ``boot``."""
    if same_boot(marker, boot):
        return True, list(marker.get('reasons', []))
    return False, []


def log_tail(text, lines=20):
    if not text:
        return []
    return text.splitlines()[-lines:]
