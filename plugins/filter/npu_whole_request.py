# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.npu_whole_request``; documentation in npu_whole_request.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def npu_whole_request(chip_family):
    """``{npu_count, dies_per_npu}``: the smallest request of whole NPUs of a chip family's resource."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
    if chip_family in (None, ''):
        return {'npu_count': 1, 'dies_per_npu': 1}
    try:
        row = hardware_catalogue.chip_family_row(chip_family)
        return {'npu_count': hardware_catalogue.whole_npu_request(row['family']), 'dies_per_npu': row['dies_per_npu']}
    except ValueError as error:
        raise AnsibleFilterError('npu_whole_request: %s' % error)


class FilterModule(object):
    """Request sizes of whole NPUs."""

    def filters(self):
        return {'npu_whole_request': npu_whole_request}
