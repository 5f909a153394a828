# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which Nodes the device plugin role's DaemonSets select, kept free of Ansible.

A DaemonSet of the role runs on a Node whose ``accelerator`` label is one of the wanted chip families
and whose labels hold every pair of ``device_plugin_node_selector``, its values compared as strings (a
label value is always one).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def selected_node_names(nodes, wanted, node_selector):
    """The sorted, distinct names of the ``nodes`` (Node objects as the API returns them) the DaemonSets
    of the ``wanted`` accelerators select under ``node_selector`` (a dict, possibly empty)."""
    wanted = set(wanted or [])
    selector = dict((key, str(value)) for key, value in (node_selector or {}).items())
    names = set()
    for node in nodes or []:
        metadata = node.get('metadata') or {}
        labels = metadata.get('labels') or {}
        if labels.get('accelerator') in wanted and all(labels.get(key) == value for key, value in selector.items()):
            names.add(metadata.get('name'))
    return sorted(name for name in names if name)
