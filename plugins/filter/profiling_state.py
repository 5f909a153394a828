# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.profiling_state``; documentation in profiling_state.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def profiling_state(probe, options=None, evidence=None):
    """Everything the profiling role decides about a node (plugin_utils/profiling_state.role_state)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.profiling_state import role_state
    if not isinstance(probe, dict):
        raise AnsibleFilterError('profiling_state expects what npu.ascend.ascend_facts returned (a dict), got %s'
                                 % type(probe).__name__)
    for name, value in (('options', options), ('evidence', evidence)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError('profiling_state: %s must be a dict, got %s' % (name, type(value).__name__))
    return role_state(probe, options or {}, evidence or {})


class FilterModule(object):
    """The profiling role's decisions."""

    def filters(self):
        return {'profiling_state': profiling_state}
