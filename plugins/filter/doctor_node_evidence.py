# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.doctor_node_evidence`` and ``npu.ascend.doctor_torch_npu_version``; documentation in
doctor_node_evidence.yml and doctor_torch_npu_version.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def _evidence_module():
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import doctor_evidence
    return doctor_evidence


def doctor_node_evidence(results, options):
    """The doctor's evidence of one node from its read-only tasks' results (plugin_utils/doctor_evidence.py)."""
    if not isinstance(results, dict) or not all(isinstance(value, dict) for value in results.values()):
        raise AnsibleFilterError('doctor_node_evidence expects a dict of the registered task results, got %s'
                                 % type(results).__name__)
    if not isinstance(options, dict):
        raise AnsibleFilterError('doctor_node_evidence: options must be a dict, got %s' % type(options).__name__)
    try:
        return _evidence_module().node_evidence(results, options)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as error:
        raise AnsibleFilterError('doctor_node_evidence: %s' % error)


def doctor_torch_npu_version(pip_show):
    """The torch_npu version a registered `pip show torch_npu` printed, '' when none."""
    if not isinstance(pip_show, dict):
        raise AnsibleFilterError('doctor_torch_npu_version expects the registered result of pip show, got %s'
                                 % type(pip_show).__name__)
    return _evidence_module().torch_npu_version(pip_show)


class FilterModule(object):
    """The doctor role's evidence of a node."""

    def filters(self):
        return {'doctor_node_evidence': doctor_node_evidence, 'doctor_torch_npu_version': doctor_torch_npu_version}
