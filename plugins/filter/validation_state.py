# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.validation_state``; documentation in validation_state.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def validation_state(reads, options=None, fleet=None):
    """Everything the validate role decides about one host (plugin_utils/validation_state.validation_state)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import validation_state as state
    if not isinstance(reads, list):
        raise AnsibleFilterError('validation_state expects a list of Node reads, got %s' % type(reads).__name__)
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('validation_state: options must be a dict, got %s' % type(options).__name__)
    if fleet is not None and not isinstance(fleet, dict):
        raise AnsibleFilterError('validation_state: fleet must be the result of npu.ascend.k8s_fleet_validate, got %s'
                                 % type(fleet).__name__)
    try:
        return state.validation_state(reads, options or {}, fleet)
    except ValueError as exc:
        raise AnsibleFilterError('validation_state: %s. Fix: run npu.ascend.k8s_node and npu.ascend.vnpu again, which '
                                 'write the labels read here' % exc)


class FilterModule(object):
    """The validation of a node."""

    def filters(self):
        return {'validation_state': validation_state}
