# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.ascend_packages_plan``, ``_resolution``, ``_judgement``, ``_staged``, ``_bundle``, ``_refusal``,
``_file_name_refusal`` and ``_download_failure``.

The packages role's decisions (plugins/plugin_utils/package_resolution.py); the judgement looks at
the controller's package directory itself. Documentation is in the sidecar files of the same names.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleFilterError


def ascend_packages_plan(components, chip=None, arch=None):
    """The exact file names of the wanted components for a node of this chip and architecture."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import plan_packages
    try:
        return plan_packages(components, chip, arch)
    except (ValueError, KeyError) as error:
        raise AnsibleFilterError('ascend_packages_plan: %s' % error)


def ascend_packages_resolution(components, options=None):
    """The packages a node needs and whether they may come from their source (plugin_utils/packages_state)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.packages_state import packages_resolution
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('ascend_packages_resolution: options must be a dict, got %s' % type(options).__name__)
    try:
        return packages_resolution(components, options or {})
    except (TypeError, ValueError, KeyError) as error:
        raise AnsibleFilterError('ascend_packages_resolution: %s' % error)


def _directory_state(path):
    if os.path.isdir(path):
        return 'directory'
    return 'other' if os.path.lexists(path) else 'missing'


def ascend_packages_judgement(plan, checksums, sums_file='SHA256SUMS', source_dir='', source_files=None,
                              mirror_url='', mirror_heads=None):
    """The plan with sha256, problem and fix per package, from the controller's directory or the mirror."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import (
        directory_source, judge_packages, mirror_source)
    if bool(source_dir) == bool(mirror_url):
        raise AnsibleFilterError('ascend_packages_judgement needs exactly one of source_dir and mirror_url')
    if source_dir:
        others = [package['other_arch_file_name'] for package in plan if package['other_arch_file_name']
                  and os.path.isfile(os.path.join(source_dir, package['other_arch_file_name']))]
        source = directory_source(source_dir, _directory_state(source_dir), source_files or {}, others)
    else:
        source = mirror_source(mirror_heads or [])
    return judge_packages(plan, source_dir or mirror_url, source, checksums, sums_file)


def ascend_packages_staged(resolved, copy_results, staging_dir, check_mode=False, previous=None):
    """Component -> file_name, version, path on the node, sha256 and whether it is really there."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import staged_packages
    return staged_packages(previous, resolved, copy_results or [], staging_dir, bool(check_mode))


def ascend_packages_bundle(resolved_by_host):
    """The distinct package files a fleet needs, problems first, each with the hosts that need it."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import fleet_bundle
    if not isinstance(resolved_by_host, dict):
        raise AnsibleFilterError('ascend_packages_bundle expects host -> packages_resolved (npu.ascend.host_values), '
                                 'got %s' % type(resolved_by_host).__name__)
    return fleet_bundle(resolved_by_host)


def ascend_packages_refusal(resolved, host):
    """The message for the resolved packages that cannot be used ('' when all can)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import refusal_message
    if not isinstance(resolved, list):
        raise AnsibleFilterError('ascend_packages_refusal expects packages_resolved (a list)')
    return refusal_message(resolved, str(host))


def ascend_packages_file_name_refusal(plan, host):
    """The message for the planned packages whose file name is not a plain file name ('' when none)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import file_name_refusal
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import file_name_problem
    if not isinstance(plan, list):
        raise AnsibleFilterError('ascend_packages_file_name_refusal expects the packages plan (a list)')
    return file_name_refusal(plan, str(host), file_name_problem)


def ascend_packages_download_failure(results, host):
    """The message for the packages the mirror download failed to fetch."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import download_failure_message
    if not isinstance(results, list):
        raise AnsibleFilterError('ascend_packages_download_failure expects the results of the download loop (a list)')
    return download_failure_message(results, str(host))


class FilterModule(object):
    """The packages role's decisions."""

    def filters(self):
        return {
            'ascend_packages_bundle': ascend_packages_bundle,
            'ascend_packages_plan': ascend_packages_plan,
            'ascend_packages_resolution': ascend_packages_resolution,
            'ascend_packages_judgement': ascend_packages_judgement,
            'ascend_packages_staged': ascend_packages_staged,
            'ascend_packages_refusal': ascend_packages_refusal,
            'ascend_packages_file_name_refusal': ascend_packages_file_name_refusal,
            'ascend_packages_download_failure': ascend_packages_download_failure,
        }
