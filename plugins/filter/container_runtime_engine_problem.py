# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.container_runtime_engine_problem``: why the runtime cannot be registered on a node.

Documentation is in the sidecar file container_runtime_engine_problem.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def container_runtime_engine_problem(engines, known, drop_in_mergeable, containerd_release, containerd_config, host):
    """plugin_utils.container_runtime_checks.engine_problem."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.container_runtime_checks import engine_problem
    return engine_problem(engines, known, bool(drop_in_mergeable), containerd_release, containerd_config, str(host))


class FilterModule(object):
    """The container engines' check."""

    def filters(self):
        return {'container_runtime_engine_problem': container_runtime_engine_problem}
