# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the hdk role: everything the role decides about one node, from its probe
(``ansible_facts.ascend``), its wanted stack and the role's options. The role's tasks read the
fields and act; ``roles/hdk/vars/main.yml`` keeps only names and constants. Pure functions, no
Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import version_mismatches
from ansible_collections.npu.ascend.plugins.plugin_utils import planner
from ansible_collections.npu.ascend.plugins.plugin_utils.hdk_checks import health_problem
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

# The chips' error when the probe found no npu-smi at all.
NO_NPU_SMI = 'npu-smi is not installed (the driver installs it in /usr/local/sbin). Fix: reinstall the driver'
# Kernel headers and the DKMS toolchain the driver's installer builds its modules with, per package
# manager; the kernels' own packages come first (``build_packages``).
BUILD_TOOLS = ('dkms', 'gcc', 'make', 'pciutils', 'net-tools')
# dnf 4 locks through its versionlock plugin, which a minimal install lacks (community.general's
# dnf_versionlock then fails); dnf5 has the command built in.
VERSIONLOCK_PACKAGES = {'dnf': ['python3-dnf-plugin-versionlock'], 'dnf5': []}


def next_kernel(probe, running):
    """The kernel the next boot takes (the newest installed one, from the probe), else the running one."""
    return _mapping(_mapping(probe.get('kernel_modules')).get('next')).get('release') or running


def next_kernel_build_due(probe):
    """DKMS built the driver's modules, but not for the kernel the next boot takes (its headers came later,
    or never)."""
    kernel_modules = probe.get('kernel_modules')
    if not isinstance(kernel_modules, Mapping):
        return False
    return bool(_mapping(kernel_modules.get('dkms')).get('used')) and \
        not bool(_mapping(kernel_modules.get('next')).get('present'))


def build_packages(running, upcoming):
    """The kernel headers (of the running kernel and the one the next boot takes) and the DKMS toolchain,
    per package manager, each name once; None when the running kernel is not known."""
    if not running:
        return None
    return {
        'apt': list(dict.fromkeys(['linux-headers-%s' % running, 'linux-headers-%s' % upcoming] + list(BUILD_TOOLS))),
        'dnf': list(dict.fromkeys(['kernel-devel-%s' % running, 'kernel-headers-%s' % running, 'kernel-devel-%s' % upcoming]
                                  + list(BUILD_TOOLS))),
    }


def kernel_package(running, architecture):
    """The package hdk_hold_kernel holds (apt) or locks (dnf): the one the running kernel came from.

    On EL ``uname -r`` ends in the architecture (5.10.0-60.18.0.50.oe2203.x86_64); dnf_versionlock's
    removal never matches such a spec against the lock entry (kernel-0:<version>-<release>.*), so the
    lock is named without it, as name-version-release. None when the running kernel is not known."""
    if not running:
        return None
    suffix = '.%s' % architecture if architecture else None
    release = running[:-len(suffix)] if suffix and running.endswith(suffix) else running
    return {'apt': 'linux-image-%s' % running, 'dnf': 'kernel-%s' % release}


def health(probe):
    """The chips and npu-smi's error, as the probe read them (it records the error rather than failing)."""
    npu_smi = probe.get('npu_smi')
    chips = _mapping(npu_smi).get('chips')
    return {'chips': chips if chips is not None else [],
            'error': probe.get('npu_smi_error') or (None if npu_smi else NO_NPU_SMI)}


def version_problem(probe, wanted, host, install_path):
    """The message for a node whose firmware or driver is not at the wanted version after the installers ran
    ('' when both are, or neither is wanted)."""
    wanted = dict((component, _mapping(wanted).get(component)) for component in ('firmware', 'driver'))
    installed = _mapping(_mapping(probe).get('installed'))
    if not version_mismatches(installed, wanted):
        return ''
    found = dict((component, _mapping(installed.get(component)).get('version') or 'none')
                 for component in ('firmware', 'driver'))
    return ('%s: after the installers the node reports driver %s and firmware %s, wanted %s and %s. Fix: read '
            '/var/log/ascend_seclog/ascend_install.log on the node, uninstall the half-installed component with '
            '%s/<driver|firmware>/script/uninstall.sh, reboot and run again.'
            % (host, found['driver'], found['firmware'], wanted['driver'], wanted['firmware'], install_path))


def hdk_state(probe, wanted, options):
    """Everything the hdk role decides about a node.

    ``probe``: ``ansible_facts.ascend`` (None before any probe); ``wanted``: component to version
    (``ascend_wanted_stack``); ``options``: ``host``, ``install_path``, ``allow_downgrade``,
    ``reboot_policy``, ``hold_kernel``, ``chip`` (in the driver and firmware package names),
    ``kernel`` and ``architecture`` (the running kernel's release and the node's architecture, from
    the gathered facts).

    Returns ``plan`` (the node's plan, ``planner.plan_node``), ``install`` (the firmware and driver
    installers in Huawei's order), ``refused`` and ``refusal`` (the message, '' when nothing is
    refused), ``packages`` (the packages role's ``packages_components`` for ``install``),
    ``install_due``, ``probe_current`` (the probe read this install path and npu-smi),
    ``next_kernel``, ``next_kernel_build_due``, ``converged`` (nothing to do but the health check),
    ``health_due``, ``health`` (``chips``, ``error``), ``health_problem`` ('' when every chip is
    healthy), ``version_problem`` (after the installers: the firmware or driver the probe finds at another
    version than wanted, '' when none), ``build_packages`` and ``kernel_package`` (per package manager) and
    ``versionlock_packages``. TypeError or ValueError names a wrong input."""
    if probe is not None and not isinstance(probe, Mapping):
        raise TypeError('the probe must be what npu.ascend.ascend_facts returned (a dict), got %s'
                        % type(probe).__name__)
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    hold_kernel = bool(options.get('hold_kernel'))
    plan = planner.plan_node(wanted, probe, allow_downgrade={'hdk': bool(options.get('allow_downgrade'))},
                             reboot_policy=options.get('reboot_policy') or 'auto')
    part = plan['roles']['hdk']
    probe = _mapping(probe)
    probe_current = planner.probe_is_current(probe, options.get('install_path'), npu_smi=True)
    build_due = next_kernel_build_due(probe)
    running = options.get('kernel') or None
    upcoming = next_kernel(probe, running)
    chips_health = health(probe)
    return {
        'plan': plan,
        'install': list(part['install']),
        'refused': list(part['refused']),
        'refusal': planner.refusal_message(plan, 'hdk', host),
        'packages': planner.packages_to_stage(plan, role='hdk', chip=options.get('chip') or None),
        'install_due': bool(part['due']),
        'probe_current': probe_current,
        'next_kernel': upcoming,
        'next_kernel_build_due': build_due,
        'converged': probe_current and not hold_kernel and not part['due'] and not build_due,
        # The health check runs once the driver is in and no reboot it asked for is pending.
        'health_due': bool(_mapping(probe.get('installed')).get('driver')) and not bool(probe.get('reboot_pending')),
        'health': chips_health,
        'health_problem': health_problem(chips_health, host),
        'version_problem': version_problem(probe, wanted, host, options.get('install_path')),
        'build_packages': build_packages(running, upcoming),
        'kernel_package': kernel_package(running, options.get('architecture')),
        'versionlock_packages': dict((name, list(packages)) for name, packages in VERSIONLOCK_PACKAGES.items()),
    }
