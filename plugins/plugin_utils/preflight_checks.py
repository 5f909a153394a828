# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight's judgement of one node: every check, from one probe and the plan.

``node_checks`` takes what preflight read from the node (``ascend_facts`` with its paths and
free space, Ansible's min facts, the package manager's answer about the kernel headers and the
DKMS toolchain, the resolved packages) with the plan (``planner.plan_node``) and returns the
checks in the order the report prints them, each ``{name, ok, detail, fix}``. The compatibility
check runs the matrix (``compatibility.check_stack``) on the controller over the same probe.
Controller side only, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.module_utils.packages.compat_matrix import COMPAT_MATRIX
from ansible_collections.npu.ascend.plugins.plugin_utils import kernel_judgement

_APT_POLICY = re.compile(r'^(\S+):\n\s+Installed: (\S+)\n\s+Candidate: (\S+)', re.M)
# The leftover an install record is, against the components whose version files it records.
INSTALL_RECORD = 'install record'


def _check(name, ok, detail, fix):
    return {'name': name, 'ok': bool(ok), 'detail': detail, 'fix': fix}


def hardware_checks(probe, expected_count=0, declared_chip=None):
    """NPUs on PCI (with a chip family), when ``expected_count`` is set their count, and when the
    inventory declares the chip family (npu_ascend_chip) that PCI shows the same."""
    count = int(probe.get('npu_count') or 0)
    chip, product = probe.get('chip_family'), probe.get('product')
    where = ((', chip %s' % chip) if chip else '') + ((', %s' % product) if product else '')
    what = '%d NPU PCI function(s) of vendor 19e5%s' % (count, where)
    checks = [_check('NPUs on PCI', count > 0 and bool(chip),
                     what if count > 0 else 'no Huawei (vendor 19e5) accelerator on PCI',
                     'check that the NPU cards are seated and enabled in the BIOS; `lspci -d 19e5:` must list them')]
    expected = int(expected_count or 0)
    if expected > 0:
        checks.append(_check('NPU count', count == expected, 'found %d, expected %d' % (count, expected),
                             'the physical link is not set up for every NPU: reseat the cards or risers and check the '
                             'BIOS, or correct preflight_expected_npu_count'))
    if declared_chip and chip and str(declared_chip).lower() != str(chip).lower():
        checks.append(_check('declared chip', False, 'the inventory declares npu_ascend_chip %s, PCI shows chip %s'
                             % (declared_chip, chip),
                             'correct npu_ascend_chip for this host or its group (it names the packages the node '
                             'needs before the node is reached)'))
    return checks


def _os_supported(distribution, version, major, supported):
    dist = distribution.lower()
    for entry in supported:
        name = str(entry.get('distribution', '')).lower()
        if not name or not (name in dist or dist in name):
            continue
        versions = [str(v) for v in entry.get('versions') or []]
        if not versions:
            return True
        if any(version == v or version.startswith(v + '.') or major == v for v in versions):
            return True
    return False


# What the hdk role installs packages and holds the kernel with (ansible_facts pkg_mgr).
PACKAGE_MANAGERS = ('apt', 'dnf', 'dnf5')


def system_checks(facts, supported_os, supported_arches):
    """Operating system (a Huawei-supported one or one added by the operator) and architecture."""
    distribution = str(facts.get('distribution') or '')
    version = str(facts.get('distribution_version') or '')
    major = str(facts.get('distribution_major_version') or '')
    arch = str(facts.get('architecture') or '')
    pkg_mgr = str(facts.get('pkg_mgr') or '')
    return [
        _check('operating system', _os_supported(distribution, version, major, supported_os),
               '%s %s' % (distribution, version),
               'use a system Huawei supports (the list of ascend-deployer, docs/huawei-sources.md), or add it to preflight_supported_os_extra '
               'once you have validated it'),
        _check('architecture', arch in supported_arches, arch,
               'Ascend packages exist for %s only' % ' and '.join(supported_arches)),
        _check('package manager', pkg_mgr in PACKAGE_MANAGERS, '%s on %s %s' % (pkg_mgr, distribution, version),
               'the hdk role installs the kernel headers and the DKMS toolchain and holds the kernel with %s only, '
               'and ansible-core 2.19 drives no yum: a yum-only system (CentOS 7.6, an EulerOS release without dnf) '
               'cannot be prepared by it; move the node to a release with dnf (openEuler 20.03 or later) or apt '
               '(docs/platforms.md)' % ' or '.join(PACKAGE_MANAGERS)),
    ]


def _apt_states(stdout):
    return dict((name, 'installed' if installed != '(none)' else ('available' if candidate != '(none)' else 'missing'))
                for name, installed, candidate in _APT_POLICY.findall(stdout or ''))


def _dnf_states(stdout, wanted):
    states = {}
    section = ''
    for line in (stdout or '').splitlines():
        if line.startswith('Installed'):
            section = 'installed'
        elif line.startswith('Available'):
            section = 'available'
        elif section and line.split():
            fields = line.split()
            package, _dot, arch = fields[0].rpartition('.') if '.' in fields[0] else (fields[0], '', '')
            version = fields[1].split(':')[-1] if len(fields) > 1 else ''
            # dnf prints name.arch and version apart; `uname -r` on EL ends in the arch
            # (kernel-devel-5.14.0-362.el9.x86_64), Debian-style names do not.
            spellings = ('%s-%s' % (package, version), '%s-%s.%s' % (package, version, arch))
            for name in wanted:
                if (name == package or any(spelling.startswith(name) for spelling in spellings)) \
                        and states.get(name) != 'installed':
                    states[name] = section
    return states


def build_checks(pkg_mgr, kernel, headers, toolchain, package_query, build_tree=False):
    """Kernel headers for the running kernel (or its build tree) and the DKMS toolchain, from what
    ``apt-cache policy`` or ``dnf list --showduplicates`` printed (``package_query``).

    None for a package manager the hdk role does not drive: the ``package manager`` check already
    fails with the cause and the fix, and nothing was asked that these two checks could judge."""
    if pkg_mgr == 'apt':
        states = _apt_states(package_query)
    elif pkg_mgr in ('dnf', 'dnf5'):
        states = _dnf_states(package_query, list(headers) + list(toolchain))
    else:
        return []
    usable = [name for name, state in states.items() if state in ('installed', 'available')]
    headers_missing = [name for name in headers if name not in usable]
    tools_missing = [name for name in toolchain if name not in usable]
    header_states = ', '.join('%s %s' % (name, states.get(name, 'missing')) for name in headers)
    return [
        _check('kernel headers', build_tree or not headers_missing,
               'running kernel %s: %s%s' % (kernel, header_states, ', build tree present' if build_tree else ''),
               'make %s installable for kernel %s (enable the repository that carries them and refresh the package '
               'index), or boot a kernel whose headers exist; the driver is built with DKMS against them'
               % (' and '.join(headers_missing), kernel)),
        _check('DKMS toolchain', not tools_missing,
               ', '.join('%s %s' % (name, states.get(name, 'missing')) for name in toolchain),
               'make %s installable from the configured repositories' % ', '.join(tools_missing)),
    ]


def disk_check(free_kb, min_free_gb):
    free_gb = round((free_kb or 0) / 1048576.0, 1)
    return _check('free disk', free_gb >= float(min_free_gb), '%s GB free on /, %s GB needed' % (free_gb, min_free_gb),
                  'free at least %s GB on / (CANN installs refuse to start below 10 GB)' % min_free_gb)


def leftover_check(probe, leftover_paths):
    """A directory without its version file is what an interrupted or failed installer leaves
    (Huawei's installers refuse to go over it); an install record without driver or firmware is stale."""
    installed = probe.get('installed') or {}
    present = set(probe.get('paths_present') or [])
    found, fixes = [], []
    for leftover in leftover_paths:
        path, component = leftover['path'], leftover['component']
        if path not in present:
            continue
        if component == INSTALL_RECORD:
            if not installed.get('driver') and not installed.get('firmware'):
                found.append('%s records an install but no driver or firmware is installed' % path)
                fixes.append('remove the stale %s' % path)
        elif not installed.get(component):
            found.append('%s exists without an installed %s version file' % (path, component))
            if component in ('driver', 'firmware'):
                fixes.append('run %s/script/uninstall.sh (remove %s if the script is missing) and reboot' % (path, path))
            else:
                fixes.append('uninstall or remove %s' % path)
    return _check('leftovers', not found, '; '.join(found) if found else 'no half-installed component or stale install record',
                  '; '.join(fixes) + ', then run again')


def package_checks(wanted_packages, source_set, chip, resolved):
    """The package source and each package the plan installs (present, known sha256, right arch)."""
    if not wanted_packages:
        return []
    if not source_set:
        return [_check('package source', False, 'neither packages_source_dir nor packages_mirror_url is set',
                       'set packages_source_dir (a directory on the controller) or packages_mirror_url (an HTTP(S) '
                       'mirror) holding the .run files and SHA256SUMS')]
    if not chip:
        return [_check('packages', False, 'cannot pick packages without a known NPU chip',
                       'fix the PCI check first, or declare the chip family in npu_ascend_chip (for example 910b) so '
                       'that the package source is checked meanwhile')]
    checks = []
    for package in resolved or []:
        problem = package.get('problem')
        detail = package['file_name'] + (': ' + problem if problem else ' (%s, sha256 %s...)' % (
            package.get('package_arch') or 'no arch', (package.get('sha256') or '')[:12]))
        checks.append(_check('package ' + package['component'], not problem, detail, package.get('fix')))
    return checks


def damaged_check(plan):
    """Components whose version file is there but names no version: refused, never installed over."""
    damaged = [item for item in plan['refused'] if item.get('damaged')]
    return _check('readable installs', not damaged,
                  '; '.join(item['reason'] for item in damaged) or 'every installed component names its version',
                  'restore each named version file as the installer wrote it, or reinstall that component over it '
                  'by hand with its installer (--upgrade; kernels and ops: --uninstall then --install), then run '
                  'preflight again')


def downgrade_check(plan):
    refused = [item for item in plan['refused'] if not item.get('damaged')]
    return _check('no downgrade', not refused,
                  '; '.join('%s %s installed, %s wanted' % (item['component'], item['have'], item['want'])
                            for item in refused) or 'no component goes to a lower version',
                  'raise the wanted versions, or set hdk_allow_downgrade (and cann_allow_downgrade) to true if the '
                  'downgrade is intended')


def compat_stack(plan, probe):
    """The stack the matrix judges: the wanted driver, firmware and CANN, the rest from the probe."""
    wanted = dict((item['component'], item['want']) for item in plan['components'])
    keys = (('driver', 'driver'), ('firmware', 'firmware'), ('cann', 'toolkit'))
    desired = dict((key, wanted[component]) for key, component in keys if component in wanted)
    return compatibility.probe_stack(desired, probe.get('installed'), probe.get('chip_family'), probe.get('product'),
                                     probe.get('os'))


def compat_report(stack, extra_rows=None, replace_rows=False, allow_unknown=False):
    """What ascend_compat returns for ``stack``: the matrix's verdict and the stack it judged."""
    report = compatibility.check_stack(stack, COMPAT_MATRIX, extra_rows or [], replace_rows, allow_unknown)
    report['stack'] = stack
    return report


def compat_check(report, allow_unknown=False):
    sentences = ['%s do not fit; %s would fit (source: %s)' % (
        ' with '.join('%s %s' % (name, conflict['have'][name]) for name in conflict['pair']),
        ' or '.join(conflict['fits']), conflict['source']) for conflict in report['conflicts']]
    unknown = []
    for entry in report['unknown']:
        keyed, required = entry['pair']
        where = ', '.join('%s %s' % (name, entry[name]) for name in ('chip_family', 'product') if entry.get(name))
        unknown.append('%s %s with %s %s%s is not in the compatibility matrix; %s' % (
            keyed, entry['have'][keyed], required, entry['have'][required], (' (%s)' % where) if where else '',
            ('rows for %s %s: %s' % (keyed, entry['have'][keyed], '; '.join(entry['rows']))) if entry['rows']
            else 'the matrix has no row for %s %s' % (keyed, entry['have'][keyed])))
    stack = ', '.join('%s %s' % (key, report['stack'][key]) for key in sorted(report['stack']))
    refused_unknown = [] if allow_unknown else unknown
    if sentences or refused_unknown:
        detail = '; '.join(sentences + refused_unknown)
    elif unknown:
        detail = 'accepted by preflight_compat_allow_unknown: %s (%s)' % ('; '.join(unknown), stack)
    else:
        detail = 'fits the matrix and the installed components (%s)%s' % (
            stack, (', not covered by any row: ' + ', '.join(report['unchecked'])) if report['unchecked'] else '')
    fix = ('choose versions that fit, or add a row to preflight_compat_extra_rows if you have validated this combination'
           if sentences else
           'choose a documented pair, add a row for this pair to preflight_compat_extra_rows (with the source that '
           'validates it), or set preflight_compat_allow_unknown: true to accept pairs the matrix does not know')
    return _check('compatibility', not report['conflicts'] and not refused_unknown, detail, fix)


def node_checks(inputs):
    """Every check of one node, in the report's order (see the module docstring for ``inputs``)."""
    probe, plan, facts = inputs['probe'], inputs['plan'], inputs['facts']
    build = inputs['build']
    packages = inputs['packages']
    compat_options = inputs.get('compat') or {}
    allow_unknown = bool(compat_options.get('allow_unknown'))
    report = compat_report(compat_stack(plan, probe), compat_options.get('extra_rows'),
                           bool(compat_options.get('replace_rows')), allow_unknown)
    declared_chip = inputs.get('declared_chip')
    return (hardware_checks(probe, inputs.get('expected_npu_count'), declared_chip)
            + system_checks(facts, inputs['supported_os'], inputs['supported_arches'])
            + build_checks(facts.get('pkg_mgr'), facts.get('kernel'), build['headers'], build['toolchain'],
                           build.get('query'), build['tree'] in (probe.get('paths_present') or []))
            + [kernel_judgement.preflight_check(probe, plan, inputs.get('kernel_modules_check', True))]
            + [disk_check(probe.get('free_kb'), inputs['min_free_gb']),
               leftover_check(probe, inputs['leftover_paths'])]
            + package_checks(packages['wanted'], packages['source'], probe.get('chip_family') or declared_chip,
                             packages.get('resolved'))
            + [damaged_check(plan), downgrade_check(plan), compat_check(report, allow_unknown)])


def node_report(host, inputs):
    """``preflight_report`` of one node: its checks, the plan's lines, the failed checks' names, and
    the lines preflight prints for it."""
    checks = node_checks(inputs)
    plan_lines = list(inputs['plan']['lines'])
    failed = [check for check in checks if not check['ok']]
    lines = ['Preflight of %s: %d of %d checks failed' % (host, len(failed), len(checks))]
    lines.extend('%s %s: %s%s' % ('PASS' if check['ok'] else 'FAIL', check['name'], check['detail'],
                                  '' if check['ok'] else ' -- fix: %s' % check['fix']) for check in checks)
    lines.append('Plan for %s:' % host)
    lines.extend('  ' + line for line in plan_lines)
    return {'checks': checks, 'plan': plan_lines, 'failed': [check['name'] for check in failed], 'lines': lines,
            'message': '%s: preflight failed: %s' % (host, '; '.join(
                '%s (%s; fix: %s)' % (check['name'], check['detail'], check['fix']) for check in failed))}
