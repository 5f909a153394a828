# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.k8s_node_refusal``: why the k8s_node role does not label a host's Node, if it does not.

Documentation is in the sidecar file k8s_node_refusal.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def k8s_node_refusal(probe, npu_smi_error, host):
    """plugin_utils.k8s_node_checks.node_refusal."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_checks import node_refusal
    return node_refusal(probe, npu_smi_error, str(host))


class FilterModule(object):
    """The k8s_node role's refusal of a host."""

    def filters(self):
        return {'k8s_node_refusal': k8s_node_refusal}
