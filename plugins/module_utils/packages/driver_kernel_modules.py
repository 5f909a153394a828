# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the NPU driver's kernel modules exist for the running kernel and for the kernel the
next boot takes, and whether the driver built them through DKMS. No Ansible imports.

Huawei's driver installer (``scripts/package/driver/common/scripts/run_driver_install.sh`` of the
driver's public source, https://github.com/verylucky01/driver) builds its
modules through DKMS only when ``dkms``, ``gcc`` and the headers of the running kernel are
installed; otherwise it copies its prebuilt modules (``drv_pcie_hdc_host.ko`` among them) to
``/lib/modules/$(uname -r)/updates`` for that kernel only, and a kernel installed later has no NPU
modules (docs/kernel-upgrades.md). DKMS keeps what it built under
``/var/lib/dkms/<module>/<version>/<kernel>/<arch>/module/`` (dkms(8)), whatever name Huawei's
``dkms.conf`` gives the module.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The driver's host modules the probe looks for: the one Huawei's installer checks the vermagic of,
# the one it finds a DKMS build by, the PCIe host module lsmod shows.
NPU_MODULES = ('drv_pcie_hdc_host', 'drv_seclib_host', 'drv_pcie_host')
MODULE_SUFFIXES = ('.ko', '.ko.xz', '.ko.zst', '.ko.gz')
# Under /lib/modules/<release>/: where the installer copies its prebuilt modules (updates), where
# Debian's DKMS installs (updates/dkms), where DKMS installs by default elsewhere (extra).
MODULE_DIRS = ('updates', 'extra')
MODULES_ROOT = '/lib/modules'
BOOT_DIR = '/boot'
DKMS_TREE = '/var/lib/dkms'
# How deep below MODULE_DIRS the probe looks (updates/dkms/<file> is depth 2).
MAX_DEPTH = 3
# `dkms status` lines: "name/version, kernel, arch: state" (dkms 3) or "name, version, kernel, arch: state" (dkms 2);
# a source that is only added or built lacks kernel and arch ("name/version: added").
_STATUS_V3 = re.compile(r'^(?P<module>[^\s/,:]+)/(?P<version>[^\s,:]+)'
                        r'(?:, (?P<kernel>[^\s,:]+)(?:, (?P<arch>[^\s,:]+))?)?: (?P<state>.+)$')
_STATUS_V2 = re.compile(r'^(?P<module>[^\s/,:]+), (?P<version>[^\s,:]+)'
                        r'(?:, (?P<kernel>[^\s,:]+)(?:, (?P<arch>[^\s,:]+))?)?: (?P<state>.+)$')
_VMLINUZ = re.compile(r'^vmlinuz-(?P<release>\S+)$')
_RELEASE_CHUNK = re.compile(r'(\d+)|(\D+)')
STATUS_MAX_LINES = 200


def is_npu_module(name):
    """Whether a file name is one of the driver's host modules (compressed or not)."""
    for suffix in MODULE_SUFFIXES:
        if name.endswith(suffix) and name[:-len(suffix)] in NPU_MODULES:
            return True
    return False


def _release_key(release):
    """Sort key of a kernel release in the order `sort -V` and Debian's `linux-version sort` give:
    digit runs by value, other runs as text (5.15.0-91-generic < 5.15.0-101-generic)."""
    key = []
    for number, text in _RELEASE_CHUNK.findall(str(release)):
        key.append((0, int(number), '') if number else (1, 0, text))
    return tuple(key)


def newest_release(releases):
    """The newest of ``releases`` (the one a boot loader sorting by version boots), or None."""
    releases = [release for release in releases if release]
    return max(releases, key=_release_key) if releases else None


def boot_releases(names):
    """The kernel releases of the ``vmlinuz-<release>`` images among the names of ``/boot``."""
    releases = []
    for name in names:
        match = _VMLINUZ.match(name)
        if match and not name.endswith('.old'):
            releases.append(match.group('release'))
    return sorted(set(releases), key=_release_key)


def parse_dkms_status(text):
    """The entries of ``dkms status``: ``{module, version, kernel, arch, state}`` (kernel and arch None
    for a source only added). Lines that are not entries (warnings) are skipped; never raises."""
    entries = []
    for line in str(text or '').splitlines()[:STATUS_MAX_LINES]:
        line = line.strip()
        match = _STATUS_V3.match(line) or _STATUS_V2.match(line)
        if not match:
            continue
        entry = match.groupdict()
        entry['state'] = entry['state'].strip()
        entries.append(entry)
    return entries


def dkms_builds(paths, arch=None, tree=None):
    """(module, version, kernel) DKMS built an NPU module for, from the paths of
    ``<tree>/<module>/<version>/<kernel>/<arch>/module/<file>`` found on the node (``tree``:
    ``/var/lib/dkms``)."""
    prefix = (tree or DKMS_TREE).rstrip('/').strip('/').split('/')
    builds = []
    for path in paths:
        parts = str(path).strip('/').split('/')
        if parts[:len(prefix)] != prefix:
            continue
        parts = parts[len(prefix):]
        if len(parts) != 6 or parts[4] != 'module':
            continue
        module, version, kernel, build_arch = parts[0], parts[1], parts[2], parts[3]
        if not is_npu_module(parts[5]) or (arch and build_arch != arch):
            continue
        if (module, version, kernel) not in builds:
            builds.append((module, version, kernel))
    return builds


def judge(running, boot_names, modules, dkms_paths, arch=None, dkms_status=None, tree=None):
    """The ``kernel_modules`` fact.

    ``running``: the running kernel's release; ``boot_names``: the names in ``/boot``; ``modules``:
    release -> the path of an NPU module found under ``/lib/modules/<release>`` (None when none);
    ``dkms_paths``: the DKMS tree's module paths found; ``dkms_status``: what ``dkms status`` printed
    for the driver's DKMS module, or None when it was not asked.
    """
    installed = boot_releases(boot_names)
    next_release = newest_release(installed + [running]) if running else newest_release(installed)
    builds = dkms_builds(dkms_paths, arch, tree)
    module = builds[0][0] if builds else None
    version = builds[0][1] if builds else None

    def state(release):
        path = modules.get(release) if release else None
        built = any(build[2] == release for build in builds)
        # A DKMS build counts even where the module went outside updates/ and extra/ (DEST_MODULE_LOCATION).
        return {'release': release, 'present': bool(path) or built, 'path': path, 'dkms': built}

    return {
        'running': state(running),
        'next': state(next_release),
        'installed': installed,
        'dkms': {
            'used': bool(builds),
            'module': module,
            'version': version,
            'kernels': sorted(set(build[2] for build in builds if build[0] == module), key=_release_key),
            'status': dkms_status,
            'entries': parse_dkms_status(dkms_status) if dkms_status is not None else [],
        },
    }


def dkms_status_argv(dkms, module):
    """``dkms status`` for the driver's own DKMS module only."""
    return [dkms, 'status', '-m', module]
