# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_installer_failure``: what a role says when an installer task failed.

Documentation is in the sidecar file ascend_installer_failure.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_installer_failure(result, host, part, task_name=None):
    """ascend_runfile's own message, or one saying that the node went away under the installer."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.installer_output import installer_failure_message
    if not isinstance(result, dict):
        raise AnsibleFilterError('ascend_installer_failure expects a task result (a dict), got %s'
                                 % type(result).__name__)
    return installer_failure_message(result, str(host), str(part), task_name)


class FilterModule(object):
    """Installer failure messages."""

    def filters(self):
        return {'ascend_installer_failure': ascend_installer_failure}
