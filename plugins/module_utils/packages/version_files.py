# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for the files Huawei's installers leave on disk (docs/huawei-sources.md).

Version values keep Huawei's spelling (``24.1.rc1`` stays lower case, ``8.2.RC1``
upper case); compare them with ascend_version. Key names differ in case between
packages (``Version=`` in driver files, ``version=`` in toolkit files), so lookups of
known keys are case-insensitive. Pure functions, no I/O.

These files are read as root and their versions flow into installer command lines,
comparisons, messages and facts. A version that is not one Huawei writes (shell
characters, blanks, control characters) or a file that is not UTF-8 text is refused
with VersionFileError, which names what was found, escaped; it is never passed on.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


class VersionFileError(ValueError):
    """A version file exists but cannot be trusted: not UTF-8, or a value no Huawei installer writes.

    Unlike a plain ValueError (a file without the expected line, read as "not installed"), this
    must stop the caller: the file is there, and guessing would install over it or pass the value on.
    """


# Huawei versions: 25.0.rc1.1, 8.2.RC1, 7.7.0.1.231, v7.3.0, 8.2.RC1.B150, V100R001C23SPC002B212.
_SAFE_VERSION = re.compile(r'\A[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z')
# Keys whose values are version strings (compatibility lists like "[V100R001C15],[...]" are not).
_VERSION_KEYS = ('version', 'package_version', 'inner_version', 'ops_version', 'full_version')


def _shown(value, limit=80):
    """``value`` escaped (so a newline or escape sequence cannot hide in a message) and shortened."""
    text = ascii(value)
    return text if len(text) <= limit else text[:limit] + '...'


def version_problem(value):
    """'' when ``value`` reads like a Huawei version string, else what is wrong with it."""
    if not isinstance(value, str):
        return 'expected a version string, found %s' % type(value).__name__
    if not _SAFE_VERSION.match(value):
        return ('found %s, which is not a Huawei version (only letters, digits, ".", "_", "-" and "+", '
                'at most 64 characters)' % _shown(value))
    return ''


def decode_version_file(data, path):
    """The text of a version file read as bytes; VersionFileError when it is not UTF-8."""
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise VersionFileError(
            '%s is not UTF-8 text (byte %s at offset %d, near %s), so it is not a file a Huawei installer wrote. '
            'Fix: look at the file; if it is damaged, reinstall the component that owns it'
            % (path, ascii(data[error.start:error.start + 1]), error.start,
               _shown(data[max(0, error.start - 16):error.start + 16])))


def _checked(parsed, what):
    for key in _VERSION_KEYS:
        value = parsed.get(key)
        if value is None or value == '':
            continue
        problem = version_problem(value)
        if problem:
            raise VersionFileError('%s %s=: %s' % (what, key, problem))
    return parsed


def _strip_quotes(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ('"', "'"):
        return value[1:-1]
    return value


def parse_key_value_file(text):
    """Generic ``key=value`` file -> dict; comments (``#``) and blank lines are ignored.

    Keys keep their case; surrounding quotes of a value are removed.
    """
    values = {}
    for line in (text or '').splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith('#') or '=' not in stripped:
            continue
        key, value = stripped.split('=', 1)
        values[key.strip()] = _strip_quotes(value.strip())
    return values


def _lookup(values, key):
    """Case-insensitive lookup of ``key``; None when absent."""
    wanted = key.lower()
    for name, value in values.items():
        if name.lower() == wanted:
            return value
    return None


def _require(values, key, what):
    value = _lookup(values, key)
    if value is None:
        raise ValueError('%s has no %s= line' % (what, key))
    if value == '':
        raise ValueError('%s has %s= with no value' % (what, key))
    return value


def parse_driver_version_info(text):
    """``<ip>/driver/version.info`` -> ``{version, package_version, inner_version, compatible_version_fw}``.

    ``package_version`` exists only in 24.1.rc2 and later files (None before).
    """
    values = parse_key_value_file(text)
    return _checked({
        'version': _require(values, 'Version', 'driver version.info'),
        'package_version': _lookup(values, 'package_version'),
        'inner_version': _lookup(values, 'Innerversion'),
        'compatible_version_fw': _lookup(values, 'compatible_version_fw'),
    }, 'driver version.info')


def parse_firmware_version_info(text):
    """``<ip>/firmware/version.info`` -> ``{version, package_version, compatible_version_drv}``."""
    values = parse_key_value_file(text)
    return _checked({
        'version': _require(values, 'Version', 'firmware version.info'),
        'package_version': _lookup(values, 'package_version'),
        'compatible_version_drv': _lookup(values, 'compatible_version_drv'),
    }, 'firmware version.info')


def parse_install_info(text):
    """``/etc/ascend_install.info`` -> dict of its keys as written (``Driver_Install_Type``...)."""
    return parse_key_value_file(text)


def parse_toolkit_install_info(text):
    """``<arch>-linux/ascend_toolkit_install.info`` -> ``{version, arch, path, inner_version}``."""
    values = parse_key_value_file(text)
    return _checked({
        'version': _require(values, 'version', 'ascend_toolkit_install.info'),
        'arch': _lookup(values, 'arch'),
        'path': _lookup(values, 'path'),
        'inner_version': _lookup(values, 'innerversion'),
    }, 'ascend_toolkit_install.info')


_COLON_LINE = re.compile(r'^\s*(\S[^:]*?)\s*:\s*(.*?)\s*$')


def parse_nnal_version_info(text):
    """``nnal/atb/latest/version.info`` (``Ascend-cann-atb : 8.2.RC1``) -> ``{version, full_version, platform}``.

    ``full_version`` is the build (``8.2.RC1.B150``), ``platform`` the architecture.
    """
    values = {}
    for line in (text or '').splitlines():
        match = _COLON_LINE.match(line)
        if match:
            values[match.group(1).lower()] = match.group(2)
    version = values.get('ascend-cann-atb')
    if not version:
        raise ValueError('nnal version.info has no "Ascend-cann-atb : <version>" line')
    return _checked({
        'version': version,
        'full_version': values.get('ascend-cann-atb version'),
        'platform': values.get('platform'),
    }, 'nnal version.info')


def parse_docker_runtime_install_info(text):
    """``ascend_docker_runtime_install.info`` -> ``{version, arch, install_scene}``.

    The file writes ``version=v7.3.0``; the ``v`` is dropped so the value reads like the
    package file name's version.
    """
    values = parse_key_value_file(text)
    version = _require(values, 'version', 'ascend_docker_runtime_install.info')
    if len(version) > 1 and version[0] in 'vV' and version[1].isdigit():
        version = version[1:]
    return _checked({
        'version': version,
        'arch': _lookup(values, 'arch'),
        'install_scene': _lookup(values, 'install-scene'),
    }, 'ascend_docker_runtime_install.info')


def parse_opp_kernel_version_info(text):
    """``opp_kernel/version.info`` -> ``{version: version_dir, ops_version}``.

    ``version_dir`` is the marketing version (``8.2.RC1``) the package was named with;
    ``Version=``/``ops_version=`` hold the internal number (``8.2.0.0.201``).
    """
    values = parse_key_value_file(text)
    return _checked({
        'version': _require(values, 'version_dir', 'opp_kernel version.info'),
        'ops_version': _lookup(values, 'ops_version'),
    }, 'opp_kernel version.info')


def parse_toolkit_version_info(text):
    """Toolkit ``version.info`` -> ``{version: version_dir, inner_version: Version}``."""
    values = parse_key_value_file(text)
    return _checked({
        'version': _require(values, 'version_dir', 'toolkit version.info'),
        'inner_version': _lookup(values, 'Version'),
    }, 'toolkit version.info')


_VERSION_CFG_PAIR = re.compile(r'\[([^\]:]*):([^\]]*)\]')


def parse_toolkit_version_cfg(text):
    """Toolkit ``latest/version.cfg`` -> dict key -> list of ``{inner_version, version}``.

    Each value is a run of ``[inner:version]`` pairs; ``*_installed_version`` lists every
    version that was ever installed side by side, the others one pair.
    """
    result = {}
    for key, value in parse_key_value_file(text).items():
        result[key] = [{'inner_version': inner, 'version': version}
                       for inner, version in _VERSION_CFG_PAIR.findall(value)]
    return result


_UPGRADE_TOOL_RECORD = re.compile(
    r'"device_id"\s*:\s*(?P<device>-?[0-9]+)\s*,\s*"component"\s*:\s*"?(?P<component>[^",}]+?)"?\s*,'
    r'\s*"version"\s*:\s*"?(?P<version>[^",}]+?)"?\s*}')


def parse_upgrade_tool_versions(text):
    """``upgrade-tool --device_index -1 --component -1 --version`` -> list of {device_id, component, version}.

    The tool prints JSON-looking records with unquoted values
    (``{"device_id":0, "component":nve, "version":7.1.0.7.220}``), so they are read with
    a pattern rather than a JSON parser.
    """
    records = []
    for match in _UPGRADE_TOOL_RECORD.finditer(text or ''):
        records.append({
            'device_id': int(match.group('device')),
            'component': match.group('component').strip(),
            'version': match.group('version').strip(),
        })
    return records
