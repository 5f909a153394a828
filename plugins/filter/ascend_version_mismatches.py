# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_version_mismatches``: installed Ascend components not at the wanted version.

Documentation is in the sidecar file ascend_version_mismatches.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_version_mismatches(installed, wanted):
    """The components of ``wanted`` that ``installed`` (ascend_facts' ``installed``) has at another version."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import version_mismatches
    if installed is not None and not isinstance(installed, dict):
        raise AnsibleFilterError('ascend_version_mismatches expects ascend_facts\' installed dict, got %s'
                                 % type(installed).__name__)
    if not isinstance(wanted, dict):
        raise AnsibleFilterError('ascend_version_mismatches: wanted must be a dict of component: version, got %s'
                                 % type(wanted).__name__)
    try:
        return version_mismatches(installed, wanted)
    except ValueError as error:
        raise AnsibleFilterError('ascend_version_mismatches: %s' % error)


class FilterModule(object):
    """Version checks of the installed Ascend stack."""

    def filters(self):
        return {'ascend_version_mismatches': ascend_version_mismatches}
