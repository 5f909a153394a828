# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.hdk_health_problem``: the hdk role's health check of the NPU chips.

Documentation is in the sidecar file hdk_health_problem.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def hdk_health_problem(health, host):
    """plugin_utils.hdk_checks.health_problem."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.hdk_checks import health_problem
    if not isinstance(health, dict):
        raise AnsibleFilterError('hdk_health_problem expects {chips, error}, got %s' % type(health).__name__)
    return health_problem(health, str(host))


class FilterModule(object):
    """The NPU chips' health check."""

    def filters(self):
        return {'hdk_health_problem': hdk_health_problem}
