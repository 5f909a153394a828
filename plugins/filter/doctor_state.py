# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.doctor_state``; documentation in doctor_state.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def doctor_state(evidences, cluster=None, options=None):
    """Everything the doctor role decides for one host (plugin_utils/doctor_report.role_state)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import doctor_report
    if not isinstance(evidences, list):
        raise AnsibleFilterError('doctor_state expects the list of node evidence dicts of the play, got %s'
                                 % type(evidences).__name__)
    if cluster is not None and not isinstance(cluster, dict):
        raise AnsibleFilterError('doctor_state: cluster must be a dict, got %s' % type(cluster).__name__)
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('doctor_state: options must be a dict, got %s' % type(options).__name__)
    try:
        return doctor_report.role_state(evidences, cluster or {}, options or {})
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError('doctor_state: %s' % error)


class FilterModule(object):
    """The doctor role's decisions for one host."""

    def filters(self):
        return {'doctor_state': doctor_state}
