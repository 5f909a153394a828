# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernels that move on: whether an installed NPU driver has its kernel modules for the kernel
running now and for the kernel the next boot takes, judged from the probe's ``kernel_modules``
(``ascend_facts``). Preflight, the plan, the doctor, health_gate and the fleet report share it.

Huawei's driver installer builds its modules through DKMS only when dkms, gcc and the running
kernel's headers are installed; otherwise it copies prebuilt modules for the running kernel only
(docs/kernel-upgrades.md). A kernel installed after that has no NPU modules, and the NPUs are gone
after the reboot into it. Controller side only, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

HEADERS = 'the headers of %s (linux-headers-%s, or kernel-devel-%s)'


def _driver_version(probe):
    driver = ((probe or {}).get('installed') or {}).get('driver')
    if isinstance(driver, Mapping):
        return driver.get('version')
    return None


def _how(kernel_modules):
    dkms = kernel_modules.get('dkms') or {}
    if dkms.get('used'):
        kernels = ', '.join(dkms.get('kernels') or []) or 'no kernel'
        return 'built through DKMS (module %s) for %s only' % (dkms.get('module'), kernels)
    running = (kernel_modules.get('running') or {}).get('release')
    return 'installed without DKMS: prebuilt modules for %s only' % running


def _fix(kernel_modules, release, install_path):
    dkms = kernel_modules.get('dkms') or {}
    running = (kernel_modules.get('running') or {}).get('release')
    if dkms.get('used'):
        return ('install %s, then run `dkms autoinstall -k %s` (the hdk role does both: run it, npu.ascend.site or '
                'tags hdk)' % (HEADERS % (release, release, release), release))
    kernels = sorted(set([running, release]) - set([None]))
    return ('reinstall the driver so that it builds through DKMS: run %s/driver/script/uninstall.sh, reboot, then run '
            'the hdk role (npu.ascend.site), which installs dkms, gcc and the headers of %s first and builds the '
            'modules for %s; or, to stay on %s, remove kernel %s and set hdk_hold_kernel: true'
            % (install_path or '/usr/local/Ascend', ' and '.join(kernels), release, running, release))


def kernel_problem(probe, install_path=None):
    """None, or ``{kind, release, detail, fix}`` for a node whose installed driver lacks its modules for
    the running kernel (``kind`` ``running``: the kernel changed and the NPUs are gone) or for the
    kernel the next boot takes (``kind`` ``next``: they go at the next reboot)."""
    probe = probe or {}
    kernel_modules = probe.get('kernel_modules')
    version = _driver_version(probe)
    if not isinstance(kernel_modules, Mapping) or not version:
        return None
    running = kernel_modules.get('running') or {}
    upcoming = kernel_modules.get('next') or {}
    install_path = install_path or probe.get('install_path')
    if running.get('release') and not running.get('present'):
        return {'kind': 'running', 'release': running['release'],
                'detail': 'kernel changed, driver modules missing: driver %s is installed but the running kernel %s '
                          'has no NPU modules (%s), so the NPUs are gone' % (version, running['release'],
                                                                             _how(kernel_modules)),
                'fix': _fix(kernel_modules, running['release'], install_path)}
    if upcoming.get('release') and upcoming['release'] != running.get('release') and not upcoming.get('present'):
        return {'kind': 'next', 'release': upcoming['release'],
                'detail': 'kernel %s, which the next boot takes, has no NPU modules of driver %s (%s): after that '
                          'reboot the NPUs are gone' % (upcoming['release'], version, _how(kernel_modules)),
                'fix': _fix(kernel_modules, upcoming['release'], install_path)}
    return None


def plan_line(plan, probe):
    """The plan's line for a reboot that boots a kernel without NPU modules, or None."""
    problem = kernel_problem(probe)
    if not problem or problem['kind'] != 'next' or not (plan.get('reboot') or {}).get('needed'):
        return None
    driver = [item for item in plan.get('components') or [] if item.get('component') == 'driver']
    if driver and driver[0].get('action') in ('install', 'upgrade', 'downgrade'):
        return None
    return 'the reboot boots kernel %s, which has no NPU modules (see the kernel modules check)' % problem['release']


def preflight_check(probe, plan, enabled=True):
    """Preflight's ``NPU kernel modules`` check ``{name, ok, detail, fix}``; ``enabled`` false is the
    operator's opt-out (``preflight_kernel_modules_check``) for a driver that keeps its modules elsewhere."""
    if not enabled:
        return {'name': 'NPU kernel modules', 'ok': True, 'fix': '',
                'detail': 'not checked (preflight_kernel_modules_check is false)'}
    kernel_modules = (probe or {}).get('kernel_modules')
    if not isinstance(kernel_modules, Mapping):
        return {'name': 'NPU kernel modules', 'ok': True, 'detail': 'not probed', 'fix': ''}
    driver = [item for item in (plan or {}).get('components') or [] if item.get('component') == 'driver']
    running = (kernel_modules.get('running') or {}).get('release')
    upcoming = (kernel_modules.get('next') or {}).get('release')
    kernels = running if upcoming in (None, running) else '%s and %s (the next boot)' % (running, upcoming)
    if driver and driver[0].get('action') in ('install', 'upgrade', 'downgrade'):
        return {'name': 'NPU kernel modules', 'ok': True, 'fix': '',
                'detail': 'driver %s will be built through DKMS for %s (hdk installs dkms, gcc and the headers first)'
                          % (driver[0].get('want'), kernels)}
    problem = kernel_problem(probe)
    if problem:
        return {'name': 'NPU kernel modules', 'ok': False, 'detail': problem['detail'], 'fix': problem['fix']}
    if not _driver_version(probe):
        return {'name': 'NPU kernel modules', 'ok': True, 'detail': 'no driver installed', 'fix': ''}
    return {'name': 'NPU kernel modules', 'ok': True, 'fix': '',
            'detail': 'driver %s has its modules for %s (%s)' % (
                _driver_version(probe), kernels,
                'DKMS' if (kernel_modules.get('dkms') or {}).get('used') else 'prebuilt, no DKMS')}
