# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading and writing Huawei Ascend package file names (docs/huawei-sources.md).

The spelling rules are irregular and each one matters when a playbook has to find the
right file in a download directory: driver names spell x86 as ``x86-64`` while CANN
and the docker runtime spell it ``x86_64``, firmware names carry no architecture at
all, CANN kernels up to 8.0.RC2 end in ``_linux.run``, and the A3 driver, firmware and kernels
packages have their own ``Atlas-A3-`` prefix. The chips and their spellings are the hardware
catalogue's (``package_chip``, ``hdk_prefix``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import parse_version

COMPONENTS = component_catalogue.component_ids()
CHIPS = hardware_catalogue.package_chips()

# Components whose file names name a chip, and those that never do.
_CHIP_COMPONENTS = component_catalogue.chip_components()
_SOC_COMPONENTS = ('driver', 'firmware')
_SOC_CHIPS = hardware_catalogue.soc_package_chips()
# Chips whose driver and firmware names start with their own prefix (``Atlas-A3-hdk``) and whose
# kernels are ``Atlas-<chip>-cann-kernels``: every chip whose hdk prefix is not Ascend-hdk-<chip>.
_ATLAS_CHIPS = tuple(chip for chip in CHIPS if hardware_catalogue.hdk_prefix(chip) != 'Ascend-hdk-' + chip)

_CHIP_BY_LOWER = dict((chip.lower(), chip) for chip in CHIPS)
_ARCH_ALIASES = {
    'x86_64': 'x86_64', 'x86-64': 'x86_64', 'amd64': 'x86_64',
    'aarch64': 'aarch64', 'arm64': 'aarch64',
}

_CHIP = r'(?P<chip>%s)' % '|'.join(re.escape(chip) for chip in sorted(CHIPS, key=len, reverse=True))
_ATLAS_CHIP = r'(?P<chip>%s)' % '|'.join(re.escape(chip) for chip in _ATLAS_CHIPS)
_VERSION = r'(?P<version>[0-9][0-9A-Za-z.-]*)'
_ARCH = r'(?P<arch>x86_64|x86-64|aarch64)'

_PATTERNS = (
    ('driver-hotpatch', re.compile(
        r'^Ascend-hdk-' + _CHIP + r'-npu-driver_' + _VERSION + r'_(?P<patch>sph[0-9]+)_linux\.run$', re.I)),
    ('driver', re.compile(
        r'^Atlas-' + _ATLAS_CHIP + r'-hdk-npu-driver_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('firmware', re.compile(
        r'^Atlas-' + _ATLAS_CHIP + r'-hdk-npu-firmware_' + _VERSION + r'\.run$', re.I)),
    # Also read: Ascend-hdk-A3-npu-driver_..., a spelling one third-party page shows for A3 (Huawei's
    # download site and guides spell it Atlas-A3-hdk-npu-driver_..., which is what we write).
    ('driver', re.compile(
        r'^Ascend-hdk-' + _CHIP + r'-npu-driver(?P<soc>-soc)?_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('firmware', re.compile(
        r'^Ascend-hdk-' + _CHIP + r'-npu-firmware(?P<soc>-soc)?_' + _VERSION + r'\.run$', re.I)),
    ('kernels', re.compile(
        r'^Atlas-' + _ATLAS_CHIP + r'-cann-kernels_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('kernels', re.compile(
        r'^Ascend-cann-kernels-' + _CHIP + r'_' + _VERSION + r'_linux(?:-' + _ARCH + r')?\.run$', re.I)),
    ('ops', re.compile(
        r'^Ascend-cann-' + _CHIP + r'-ops_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('toolkit', re.compile(r'^Ascend-cann-toolkit_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('nnae', re.compile(r'^Ascend-cann-nnae_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('nnrt', re.compile(r'^Ascend-cann-nnrt_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('nnal', re.compile(r'^Ascend-cann-nnal_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
    ('docker_runtime', re.compile(r'^Ascend-docker-runtime_' + _VERSION + r'_linux-' + _ARCH + r'\.run$', re.I)),
)


def normalize_arch(arch):
    """Return ``x86_64`` or ``aarch64`` for any spelling Huawei or Debian uses; ValueError otherwise."""
    try:
        return _ARCH_ALIASES[str(arch).strip().lower()]
    except KeyError:
        raise ValueError('unsupported architecture %r (expected x86_64 or aarch64)' % (arch,))


def _normalize_chip(chip):
    """Return the chip as it is spelled in file names (``910b``, ``A3``...); ValueError otherwise."""
    try:
        return _CHIP_BY_LOWER[str(chip).strip().lower()]
    except KeyError:
        raise ValueError('unknown Ascend chip %r (expected one of %s)' % (chip, ', '.join(CHIPS)))


def parse_package_name(filename):
    """Describe a Huawei ``.run`` package from its file name (a path is accepted).

    Returns ``{component, chip, version, arch, soc, filename, patch}``; ``patch`` is
    the hot-patch id (``sph001``) for driver hot patches and None otherwise.
    """
    if not isinstance(filename, str) or not filename.strip():
        raise ValueError('not a Huawei package file name: %r' % (filename,))
    basename = os.path.basename(filename.strip())
    if not basename.lower().endswith('.run'):
        raise ValueError('%s is not a Huawei Ascend package: the name does not end in .run' % basename)
    for component, pattern in _PATTERNS:
        match = pattern.match(basename)
        if not match:
            continue
        fields = match.groupdict()
        version = fields['version']
        try:
            parse_version(version)
        except ValueError as error:
            raise ValueError('%s has an unreadable version: %s' % (basename, error))
        chip = _normalize_chip(fields['chip']) if fields.get('chip') else None
        soc = bool(fields.get('soc'))
        if soc and chip not in _SOC_CHIPS:
            raise ValueError('%s is not a Huawei Ascend package: only %s packages come as -soc variants'
                             % (basename, ', '.join(_SOC_CHIPS)))
        return {
            'component': component,
            'chip': chip,
            'version': version,
            'arch': normalize_arch(fields['arch']) if fields.get('arch') else None,
            'soc': soc,
            'filename': basename,
            'patch': fields.get('patch'),
        }
    raise ValueError('%s is not a Huawei Ascend package name this collection knows '
                     '(the names Huawei publishes are listed in the collection\'s docs/huawei-sources.md)' % basename)


def package_file_name(component, chip, version, arch, soc=False, patch=None):
    """Return the exact file name Huawei gives a package; inverse of parse_package_name.

    ``arch`` may be written ``x86_64``, ``x86-64``, ``amd64``, ``aarch64`` or ``arm64``;
    it is ignored for firmware and driver hot patches, whose names carry none. For
    kernels, ``arch=None`` gives the pre-8.0.RC2 ``_linux.run`` name. ``patch`` (e.g.
    ``sph001``) is required for ``driver-hotpatch``.
    """
    if component not in COMPONENTS:
        raise ValueError('unknown package component %r (expected one of %s)' % (component, ', '.join(COMPONENTS)))
    version = str(version).strip()
    parse_version(version)

    if component in _CHIP_COMPONENTS:
        if chip is None:
            raise ValueError('a %s package name needs a chip' % component)
        chip = _normalize_chip(chip)
    elif chip is not None:
        raise ValueError('%s package names carry no chip, got %r' % (component, chip))

    if soc and (component not in _SOC_COMPONENTS or chip not in _SOC_CHIPS):
        raise ValueError('only %s driver and firmware packages come as -soc variants' % ', '.join(_SOC_CHIPS))
    soc_suffix = '-soc' if soc else ''

    hdk = hardware_catalogue.hdk_prefix(chip) if chip else None
    if component == 'firmware':
        return '%s-npu-firmware%s_%s.run' % (hdk, soc_suffix, version)
    if component == 'driver-hotpatch':
        if not patch or not re.match(r'^sph[0-9]+$', str(patch), re.I):
            raise ValueError('a driver hot patch name needs patch like sph001, got %r' % (patch,))
        # No public A3 hot patch name: every chip's is written as Huawei names the 910b's.
        return 'Ascend-hdk-%s-npu-driver_%s_%s_linux.run' % (chip, version, patch)

    if arch is None:
        if component == 'kernels' and chip not in _ATLAS_CHIPS:
            return 'Ascend-cann-kernels-%s_%s_linux.run' % (chip, version)
        raise ValueError('a %s package name needs an architecture' % component)
    arch = normalize_arch(arch)

    if component == 'driver':
        return '%s-npu-driver%s_%s_linux-%s.run' % (
            hdk, soc_suffix, version, 'x86-64' if arch == 'x86_64' else arch)
    if component == 'kernels':
        if chip in _ATLAS_CHIPS:
            return 'Atlas-%s-cann-kernels_%s_linux-%s.run' % (chip, version, arch)
        return 'Ascend-cann-kernels-%s_%s_linux-%s.run' % (chip, version, arch)
    if component == 'ops':
        return 'Ascend-cann-%s-ops_%s_linux-%s.run' % (chip, version, arch)
    if component == 'docker_runtime':
        return 'Ascend-docker-runtime_%s_linux-%s.run' % (version, arch)
    return 'Ascend-cann-%s_%s_linux-%s.run' % (component, version, arch)
