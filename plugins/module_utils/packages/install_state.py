# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where each Ascend component records its installed version, read into one dict.

The "Installed-version files" table of docs/development.md: the driver's and firmware's
``version.info``, the toolkit's ``ascend_toolkit_install.info`` (per architecture, under
``cann-<version>`` from CANN 8.5.0), the operator kernels' or ops' files, NNAL's and the Ascend
Docker Runtime's, and ``/etc/ascend_install.info`` where Huawei's installers record their paths.
Shared by ``ascend_facts``, ``ascend_compat`` and ``ascend_runfile``; no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import glob
import os

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue, version_files
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import parse_version
from ansible_collections.npu.ascend.plugins.module_utils.packages.runfile import DEFAULT_INSTALL_PATH, MANAGED_COMPONENTS

INSTALL_RECORD_PATH = '/etc/ascend_install.info'
KNOWN_ARCHES = ('x86_64', 'aarch64')
# The line each component's version file names its version with (docs/development.md's table), and
# how Huawei's installer of that component goes over an existing install: what a damaged file's fix says.
_VERSION_LINES = dict((row['id'], (row['version_line'], row['reinstall']))
                      for row in component_catalogue.COMPONENTS if row['version_line'])


def _read_text(path):
    """The text of ``path``, None when it cannot be read; VersionFileError when it is not UTF-8, not a
    regular file (a FIFO would hang the read, /dev/zero never end it) or larger than any version file."""
    try:
        data = bounded_read.read_bytes(path)
    except bounded_read.RefusedFile as error:
        raise version_files.VersionFileError(
            '%s. Fix: remove what is there and put back the file the installer wrote (or reinstall the component '
            'that owns it), then run again' % error.cause)
    except (IOError, OSError) as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        # There but unreadable (permissions, I/O error): not the same as "not installed".
        raise version_files.VersionFileError('cannot read %s: %s. Fix: run as root (become: true); if the disk '
                                             'reports errors, repair it first' % (path, error.strerror or error))
    return version_files.decode_version_file(data, path)


class _Damaged(object):
    """What _parse_file returns for a version file that is there but names no version."""

    def __init__(self, problem):
        self.problem = problem


def _damaged_reason(component, path, problem):
    """The ``damaged`` text of a component whose version file ``path`` is there but names no version."""
    line, how = _VERSION_LINES[component]
    return ('%s is there but %s, so which %s is installed cannot be told (an interrupted install, a full disk or '
            'a hand edit). It is not read as "not installed": a fresh install over it is not what Huawei\'s installer '
            'expects. Fix: restore the file as the installer wrote it (a line %s naming the installed version), or '
            'reinstall %s over it by hand with %s, then run again' % (path, problem, component, line, component, how))


def _parse_file(parser, path):
    """The parsed version file at ``path``; None when absent; _Damaged when it is there but names no
    version (empty, ``Version=`` blank, no Version line).

    A file that is there but holds a value no Huawei installer writes raises VersionFileError
    naming the file: treating it as "not installed" would install over whatever is there.
    """
    text = _read_text(path)
    if text is None:
        return None
    if not text.strip():
        return _Damaged('is empty')
    try:
        parsed = parser(text)
    except version_files.VersionFileError as error:
        raise version_files.VersionFileError('%s: %s. Fix: look at the file; if it is damaged, reinstall the '
                                             'component that owns it' % (path, error))
    except ValueError as error:
        return _Damaged('names no version (%s)' % error)
    if not parsed or not parsed.get('version'):
        return _Damaged('names no version')
    return parsed


def _damaged_entry(component, home, version_file, damaged, uninstall_script=None):
    """The entry of a component whose version file is damaged: ``version`` None, ``damaged`` the reason."""
    return {
        'version': None,
        'path': home,
        'version_file': version_file,
        'uninstall_script': uninstall_script if uninstall_script and os.path.exists(uninstall_script) else None,
        'damaged': _damaged_reason(component, version_file, damaged.problem),
    }


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
    if isinstance(parsed, _Damaged):
        return _damaged_entry('driver', home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))
    return _entry(parsed['version'], home, version_file, parsed,
                  os.path.join(home, 'script', 'uninstall.sh'),
                  upgrade_tool=_existing(os.path.join(home, 'tools', 'upgrade-tool')))


def _read_firmware(install_path):
    home = os.path.join(install_path, 'firmware')
    version_file = os.path.join(home, 'version.info')
    parsed = _parse_file(version_files.parse_firmware_version_info, version_file)
    if parsed is None:
        return None
    if isinstance(parsed, _Damaged):
        return _damaged_entry('firmware', home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))
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
        if isinstance(parsed, _Damaged):
            # Fail closed: one damaged layout is not hidden by another that reads well.
            return _damaged_entry('toolkit', os.path.realpath(link), version_file, parsed)
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
        if isinstance(parsed, _Damaged):
            return _damaged_entry(component, home, version_file, parsed)
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
    if isinstance(parsed, _Damaged):
        return _damaged_entry('nnal', os.path.realpath(home), version_file, parsed)
    set_env = os.path.join(install_path, 'nnal', 'atb', 'set_env.sh')
    return _entry(parsed['version'], os.path.realpath(home), version_file, parsed,
                  os.path.join(home, 'script', 'uninstall.sh'), set_env=_existing(set_env))


def _read_docker_runtime(install_path):
    home = os.path.join(install_path, 'Ascend-Docker-Runtime')
    version_file = os.path.join(home, 'ascend_docker_runtime_install.info')
    parsed = _parse_file(version_files.parse_docker_runtime_install_info, version_file)
    if parsed is None:
        return None
    if isinstance(parsed, _Damaged):
        return _damaged_entry('docker_runtime', home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))
    return _entry(parsed['version'], home, version_file, parsed, os.path.join(home, 'script', 'uninstall.sh'))


def read_install_record(path=None):
    """Return /etc/ascend_install.info as a dict, or None when absent or unreadable.

    VersionFileError when it is there but not a small regular UTF-8 file."""
    text = _read_text(path or INSTALL_RECORD_PATH)
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
    """Return ``{version, path, version_file, uninstall_script, ...}`` or None for one component.

    A version file that is there but names no version gives ``version`` None and ``damaged``, the
    reason with the fix (docs/packages.md): never None, which would read as "not installed"."""
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
    if component == 'docker_runtime':
        return _read_docker_runtime(install_path)
    raise ValueError('no installed-version file is known for component %r (managed: %s)'
                     % (component, ', '.join(MANAGED_COMPONENTS)))


def read_all_installed(install_path=DEFAULT_INSTALL_PATH, arch=None, record=None):
    """Return the ``installed`` fact: one entry (or None) per managed component."""
    return dict((component, read_installed(component, install_path, arch, record))
                for component in MANAGED_COMPONENTS)


def installed_versions(entry):
    """Every version of a component on the node (``entry`` as read_installed returns it): the
    operator kernels of an older toolkit stay in its version directory, so kernels can have several.
    A damaged entry has none that can be told."""
    if not entry or entry.get('damaged'):
        return []
    return list(entry.get('all_versions') or [entry['version']])
