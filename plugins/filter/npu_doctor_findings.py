# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.npu_doctor_findings``; documentation in npu_doctor_findings.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def npu_doctor_findings(nodes, cluster=None, options=None):
    """Findings ``{node, component, problem, evidence, fix}`` for the node evidence ``nodes`` and ``cluster``."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import doctor
    if isinstance(nodes, dict):
        nodes = [nodes]
    if not isinstance(nodes, list):
        raise AnsibleFilterError('npu_doctor_findings expects a list of node evidence dicts, got %s'
                                 % type(nodes).__name__)
    if cluster is not None and not isinstance(cluster, dict):
        raise AnsibleFilterError('npu_doctor_findings: cluster must be a dict, got %s' % type(cluster).__name__)
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('npu_doctor_findings: options must be a dict, got %s' % type(options).__name__)
    try:
        return doctor.diagnose(list(nodes), cluster or {}, options or {})
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError('npu_doctor_findings: %s' % error)


class FilterModule(object):
    """NPU doctor filters."""

    def filters(self):
        return {'npu_doctor_findings': npu_doctor_findings}
