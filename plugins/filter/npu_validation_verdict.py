# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.npu_validation_verdict``; documentation in npu_validation_verdict.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def npu_validation_verdict(output, npu_count=1, dies_per_npu=1):
    """``{passed, problems, devices, chips}`` for a validation pod's output."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.k8s import validation
    if isinstance(output, list):
        output = '\n'.join(str(line) for line in output)
    if not isinstance(output, str):
        raise AnsibleFilterError('npu_validation_verdict expects the pod log as a string or a list of lines, got %s'
                                 % type(output).__name__)
    try:
        return validation.judge_output(output, int(npu_count), int(dies_per_npu))
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError('npu_validation_verdict: %s' % error)


class FilterModule(object):
    """Validation pod filters."""

    def filters(self):
        return {'npu_validation_verdict': npu_validation_verdict}
