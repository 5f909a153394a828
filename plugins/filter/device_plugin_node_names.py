# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.device_plugin_node_names``: the Nodes the device plugin's DaemonSets select.

Documentation is in the sidecar file device_plugin_node_names.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def device_plugin_node_names(nodes, wanted, node_selector=None):
    """plugin_utils.device_plugin_nodes.selected_node_names."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.device_plugin_nodes import selected_node_names
    return selected_node_names(nodes, wanted, node_selector)


class FilterModule(object):
    """The device plugin role's choice of Nodes."""

    def filters(self):
        return {'device_plugin_node_names': device_plugin_node_names}
