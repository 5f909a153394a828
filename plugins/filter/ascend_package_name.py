# -*- coding: utf-8 -*-
# Copyright: npu.ascend contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_package_name``: the exact Huawei file name of a package."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Kernels packages up to and including 8.0.RC2 were published without an
# architecture in their name (``..._linux.run``); later ones carry it.
LAST_KERNELS_WITHOUT_ARCH = '8.0.RC2'
ARCHLESS_COMPONENTS = ('firmware',)
# Callers pass the node's chip for every component; these names carry none.
CHIPLESS_COMPONENTS = ('toolkit', 'nnae', 'nnrt', 'nnal', 'docker-runtime')


def ascend_package_name(component, chip=None, version=None, arch=None, soc=False):
    """Return the file name Huawei publishes for this component, chip, version and arch."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.ascend_package import package_file_name
    from ansible_collections.npu.ascend.plugins.module_utils.ascend_version import compare_versions
    if not component or not version:
        raise AnsibleFilterError(
            'ascend_package_name needs a component and a version, got component=%r version=%r'
            % (component, version))
    component = str(component)
    version = str(version)
    effective_arch = arch or None
    effective_chip = None if component in CHIPLESS_COMPONENTS else (chip or None)
    if component in ARCHLESS_COMPONENTS:
        effective_arch = None
    elif component == 'kernels':
        try:
            if compare_versions(version, LAST_KERNELS_WITHOUT_ARCH) <= 0:
                effective_arch = None
        except ValueError as exc:
            raise AnsibleFilterError('ascend_package_name: bad version %r: %s' % (version, exc))
    try:
        return package_file_name(component, effective_chip, version, effective_arch, soc=bool(soc))
    except (ValueError, KeyError, TypeError) as exc:
        raise AnsibleFilterError(
            'ascend_package_name: cannot name a %s package for chip=%r version=%r arch=%r: %s'
            % (component, chip, version, arch, exc))


class FilterModule(object):
    """Ascend package naming filters."""

    def filters(self):
        return {'ascend_package_name': ascend_package_name}
