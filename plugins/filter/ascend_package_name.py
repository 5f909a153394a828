# -*- coding: utf-8 -*-
# Copyright: npu.ascend contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_package_name``: the exact Huawei file name of a package."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


# Kernels packages up to and including 8.0.RC2 were published without an
# architecture in their name (``..._linux.run``); later ones carry it.
def ascend_package_name(component, chip=None, version=None, arch=None, soc=False):
    """Return the file name Huawei publishes for this component, chip, version and arch."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.package_resolution import package_name
    try:
        return package_name(component, chip, version, arch, soc)
    except ValueError as exc:
        raise AnsibleFilterError('ascend_package_name: cannot name a %s package for chip=%r version=%r arch=%r: %s'
                                 % (component, chip, version, arch, exc))


class FilterModule(object):
    """Ascend package naming filters."""

    def filters(self):
        return {'ascend_package_name': ascend_package_name}
