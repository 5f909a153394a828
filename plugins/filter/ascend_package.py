# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.ascend_package`` and ``npu.ascend.ascend_version_sort``.

Documentation is in the sidecar files ascend_package.yml and ascend_version_sort.yml.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def ascend_package(filename):
    """Describe a Huawei package from its file name or path."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import parse_package_name
    if isinstance(filename, Mapping) and 'path' in filename:
        # Lets `find` results be mapped through the filter directly.
        filename = filename['path']
    if not isinstance(filename, str):
        raise AnsibleFilterError('ascend_package: expected a file name, got %s %r'
                                 % (type(filename).__name__, filename))
    try:
        return parse_package_name(filename)
    except ValueError as error:
        raise AnsibleFilterError('ascend_package: %s' % error)


def ascend_version_sort(versions, reverse=False):
    """Sort version strings in Huawei release order, oldest first (newest first with reverse)."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import VERSION_SHAPE, parse_version
    if isinstance(versions, (str, Mapping)) or not hasattr(versions, '__iter__'):
        raise AnsibleFilterError('ascend_version_sort: expected a list of version strings, got %s'
                                 % type(versions).__name__)
    keyed = []
    for item in versions:
        if not isinstance(item, str):
            raise AnsibleFilterError('ascend_version_sort: %r is not a version string' % (item,))
        try:
            keyed.append((parse_version(item).sort_key, item))
        except ValueError as error:
            raise AnsibleFilterError('ascend_version_sort: %s; %s' % (error, VERSION_SHAPE))
    keyed.sort(key=lambda pair: pair[0], reverse=bool(reverse))
    return [item for _key, item in keyed]


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {
            'ascend_package': ascend_package,
            'ascend_version_sort': ascend_version_sort,
        }
