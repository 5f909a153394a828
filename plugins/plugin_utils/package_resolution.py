# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which Huawei package files a node needs, whether each one can be used, and where it was staged.

The packages role asks three questions, in this order:

1. ``plan_packages``: from the wanted components (component, version, optional chip, arch,
   soc, file_name) and the node's chip and architecture, the exact file names Huawei publishes,
   and the name the other architecture's package has (to say "only the aarch64 one is there").
2. ``judge_packages``: with what the controller's directory or the mirror holds and the
   checksums known, one problem and its fix per package, or none.
3. ``staged_packages``: once copied or downloaded, where each package is on the node.

Pure Python: the filters in plugins/filter/ascend_packages.py look at the controller's files.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import (
    package_file_name, parse_package_name)
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import compare_versions

# The kernels package carries an architecture in its name from 8.0.RC2 on (docs/huawei-sources.md).
LAST_KERNELS_WITHOUT_ARCH = '8.0.RC2'
ARCHLESS_COMPONENTS = ('firmware',)
CHIPLESS_COMPONENTS = component_catalogue.chipless_components()
ARCHITECTURES = ('x86_64', 'aarch64')


def package_name(component, chip=None, version=None, arch=None, soc=False):
    """The file name Huawei publishes for this component, chip, version and arch; ValueError otherwise."""
    if not component or not version:
        raise ValueError('a package name needs a component and a version, got component=%r version=%r'
                         % (component, version))
    component = str(component)
    version = str(version)
    effective_arch = arch or None
    effective_chip = None if component in CHIPLESS_COMPONENTS else (chip or None)
    if component in ARCHLESS_COMPONENTS:
        effective_arch = None
    elif component == 'kernels' and compare_versions(version, LAST_KERNELS_WITHOUT_ARCH) <= 0:
        effective_arch = None
    try:
        return package_file_name(component, effective_chip, version, effective_arch, soc=bool(soc))
    except (KeyError, TypeError) as error:
        raise ValueError(str(error))


def _other_arch(arch):
    return ARCHITECTURES[1] if arch == ARCHITECTURES[0] else ARCHITECTURES[0]


def plan_packages(components, chip=None, arch=None):
    """One entry per wanted component: component, version, chip, arch, file_name, other_arch_file_name."""
    plan = []
    for wanted in components:
        component = wanted['component']
        version = str(wanted['version'])
        package_chip = wanted.get('chip') or chip or None
        package_arch = wanted.get('arch') or arch
        soc = bool(wanted.get('soc', False))
        derived = package_name(component, package_chip, version, package_arch, soc)
        other = package_name(component, package_chip, version, _other_arch(package_arch), soc)
        file_name = wanted.get('file_name') or derived
        plan.append({'component': component, 'version': version, 'chip': package_chip, 'arch': package_arch,
                     'file_name': file_name, 'other_arch_file_name': other if other != file_name else ''})
    return plan


def _source_dir_problem(source_dir, source_dir_state):
    if source_dir_state == 'directory':
        return ''
    what = ' is not a directory' if source_dir_state == 'other' else ' does not exist'
    return ('packages_source_dir %s%s on the controller (relative paths start in the directory '
            'ansible-playbook runs in)' % (source_dir, what))


def _judge_one(package, where, source, checksums, sums_file):
    """(problem, fix) for one planned package; ('', '') when it can be used."""
    parsed = parse_package_name(package['file_name'])
    expected = checksums.get(package['file_name'], '')
    file_name, version = package['file_name'], package['version']
    if parsed['arch'] and parsed['arch'] != package['arch']:
        return ('the package is built for %s but the node is %s' % (parsed['arch'], package['arch']),
                'use the %s package of version %s' % (package['arch'], version))
    if parsed['chip'] and package['chip'] and parsed['chip'].lower() != str(package['chip']).lower():
        return ('the package is for chip %s but the node has %s' % (parsed['chip'], package['chip']),
                'use the %s package of version %s' % (package['chip'], version))
    if source['dir_problem']:
        return (source['dir_problem'],
                'create the directory %s on the controller and download %s from Huawei into it with its sha256 in '
                '%s, or set packages_source_dir to the directory that holds the packages'
                % (where, file_name, sums_file))
    found = source['files'].get(file_name)
    if not found:
        problem = 'not found in %s' % where
        if package['other_arch_file_name'] in source['other_arch_present']:
            problem += '; only %s, built for the other architecture, is there (the node is %s)' % (
                package['other_arch_file_name'], package['arch'])
        return (problem, 'download %s from Huawei into %s and add its sha256 to %s, or change the wanted %s version'
                % (file_name, where, sums_file, package['component']))
    if not expected:
        return ('no sha256 is known for it (neither in %s beside the packages nor in packages_sha256sums)' % sums_file,
                'add the line "<sha256>  %s" to %s/%s with the checksum Huawei publishes' % (file_name, where, sums_file))
    actual = found.get('checksum')
    if actual is not None and actual.lower() != expected.lower():
        return ('sha256 mismatch: expected %s, the file has %s (corrupt or replaced download)' % (expected, actual),
                'download %s again and check it against the sha256 Huawei publishes' % file_name)
    return '', ''


def judge_packages(plan, where, source, checksums, sums_file):
    """The plan with sha256, problem, fix, package_arch and source (URL or path) added to each package.

    ``source`` describes what holds the packages: ``dir_problem`` (why the controller's directory
    cannot be read, or ''), ``files`` (file name -> {'checksum': sha256 or None when only its
    presence is known, as on a mirror}) and ``other_arch_present`` (the other-architecture
    names that are there).
    """
    judged = []
    for package in plan:
        problem, fix = _judge_one(package, where, source, checksums, sums_file)
        judged.append(dict(package, sha256=checksums.get(package['file_name'], '').lower(), problem=problem, fix=fix,
                           package_arch=parse_package_name(package['file_name'])['arch'],
                           source='%s/%s' % (where, package['file_name'])))
    return judged


def directory_source(source_dir, source_dir_state, checksums_by_file, other_arch_present):
    """``source`` for judge_packages from the controller's directory (checksums of the files there)."""
    return {'dir_problem': _source_dir_problem(source_dir, source_dir_state),
            'files': {name: {'checksum': stat.get('checksum') or '?'}
                      for name, stat in checksums_by_file.items() if stat.get('exists')},
            'other_arch_present': set(other_arch_present)}


def mirror_source(head_results):
    """``source`` for judge_packages from the HEAD requests sent to the mirror (200 = there)."""
    return {'dir_problem': '',
            'files': {result['item']['file_name']: {'checksum': None}
                      for result in head_results if result.get('status') == 200},
            'other_arch_present': set()}


def staged_packages(previous, resolved, copy_results, staging_dir, check_mode):
    """Component -> where its package is on the node, and whether it is really there.

    A package is present unless its copy or download was skipped, or a dry run only would have
    made it.
    """
    results = {result.get('item', {}).get('file_name'): result for result in copy_results}
    staged = dict(previous or {})
    for package in resolved:
        result = results.get(package['file_name'], {'skipped': True})
        present = not result.get('skipped', False) and not (check_mode and result.get('changed', False))
        staged[package['component']] = {'file_name': package['file_name'], 'version': package['version'],
                                        'path': '%s/%s' % (staging_dir, package['file_name']),
                                        'sha256': package['sha256'], 'present': present}
    return staged


# Hosts a bundle line names before it counts the rest: a fleet of 1,000 nodes shares a few files.
BUNDLE_HOSTS_SHOWN = 5


def _bundle_line(entry):
    hosts = entry['hosts']
    named = ', '.join(hosts[:BUNDLE_HOSTS_SHOWN]) + (' and %d more' % (len(hosts) - BUNDLE_HOSTS_SHOWN)
                                                     if len(hosts) > BUNDLE_HOSTS_SHOWN else '')
    if entry['problem']:
        return 'FAIL %s (%s %s, for %s): %s -- fix: %s' % (
            entry['file_name'], entry['component'], entry['version'], named, entry['problem'], entry['fix'])
    return 'OK   %s (%s %s, sha256 %s, for %s)' % (entry['file_name'], entry['component'], entry['version'],
                                                   entry['sha256'][:16], named)


def fleet_bundle(resolved_by_host):
    """The distinct package files a fleet needs, each once, problems first: its component, version,
    source, sha256, problem, fix, the hosts that need it (sorted) and the line that says all that.
    ``resolved_by_host``: host -> what judge_packages returned for it, or None for a host that did
    not get that far."""
    files = {}
    for host in sorted(resolved_by_host):
        for package in resolved_by_host[host] or []:
            entry = files.setdefault(package['source'], dict(
                (key, package[key]) for key in ('file_name', 'component', 'version', 'source', 'sha256', 'problem', 'fix')))
            entry.setdefault('hosts', []).append(host)
    entries = sorted(files.values(), key=lambda entry: (not entry['problem'], entry['file_name'], entry['source']))
    for entry in entries:
        entry['line'] = _bundle_line(entry)
    return entries


# ---------------------------------------------------------------- the messages the role stops with

FILE_NAME_FIX = ('give the file name exactly as Huawei publishes it (packages_components[].file_name), '
                 'without directories')


def refusal_message(resolved, host):
    """The message for every resolved package that cannot be used ('' when all can): each one's cause and fix."""
    return ' '.join('%s: %s package %s: %s. Fix: %s.' % (host, package['component'], package['file_name'],
                                                         package['problem'], package['fix'])
                    for package in resolved or [] if package.get('problem'))


def file_name_refusal(plan, host, problem_of):
    """The message for every planned package whose file name is not a plain file name ('' when none).

    ``problem_of`` is package_trust.file_name_problem (the name's problem, '' for a plain one).
    """
    lines = []
    for package in plan or []:
        problem = problem_of(package.get('file_name'))
        if problem:
            lines.append('%s: %s package: %s. Fix: %s.' % (host, package.get('component'), problem, FILE_NAME_FIX))
    return ' '.join(lines)


def download_failure_message(results, host):
    """The message for the packages a download from the mirror failed to fetch (``get_url``'s loop results)."""
    return ' '.join(
        '%s: %s package %s could not be fetched from %s: %s. Fix: make the mirror serve the file with sha256 %s '
        '(re-download it from Huawei if the checksum differs).'
        % (host, result['item']['component'], result['item']['file_name'], result['item']['source'],
           result.get('msg') or 'unknown error', result['item']['sha256'])
        for result in results or [] if result.get('failed'))
