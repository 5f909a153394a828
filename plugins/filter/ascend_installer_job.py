# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_installer_job``: the background job that installs a role's staged packages.

Documentation is in the sidecar file ascend_installer_job.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_installer_job(staged, components, timeouts, poll_interval, lock_timeout=600):
    """plugin_utils.installer_job.installer_job, with its errors as filter errors."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.installer_job import installer_job
    try:
        return installer_job(staged, list(components or []), dict(timeouts or {}), poll_interval, lock_timeout)
    except ValueError as error:
        raise AnsibleFilterError('ascend_installer_job: %s' % error)


class FilterModule(object):
    """The installers' background job."""

    def filters(self):
        return {'ascend_installer_job': ascend_installer_job}
