# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_kernel_problem``: an installed driver without its modules for a kernel.

Documentation is in the sidecar file ascend_kernel_problem.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_kernel_problem(probe, install_path=None):
    """None, or {kind, release, detail, fix} (plugin_utils/kernel_judgement.py)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.kernel_judgement import kernel_problem
    if probe is not None and not isinstance(probe, dict):
        raise AnsibleFilterError('ascend_kernel_problem expects what npu.ascend.ascend_facts returned (a dict), got %s'
                                 % type(probe).__name__)
    return kernel_problem(probe, install_path)


class FilterModule(object):
    """Kernel modules of the NPU driver."""

    def filters(self):
        return {'ascend_kernel_problem': ascend_kernel_problem}
