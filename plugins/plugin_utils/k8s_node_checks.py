# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the k8s_node role labels a host's Node at all, kept free of Ansible.

The role labels a Node from the probe of its host (``ascend_facts``): a host without Ascend NPUs on
the PCI bus, or whose npu-smi fails, is refused with a message naming the host, the cause and the fix.
The refused host's Node is left out of the play's one write of the Nodes, and the host stops with this
message where the others' write results are judged.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def node_refusal(probe, npu_smi_error, host):
    """The message refusing ``host`` ('' when it is labelled).

    ``probe`` is the host's ``ansible_facts['ascend']``; ``npu_smi_error`` is npu-smi's error as the role
    reads it (none while a reboot is pending, when the chips still show the old driver).
    """
    probe = probe if isinstance(probe, dict) else {}
    if not probe.get('chip_family'):
        return ('%s: no Ascend NPU on the PCI bus (vendor 19e5, class 0x12), so there is nothing to label. Fix: '
                "remove the host from the play's group, or check `lspci -d 19e5:` on it." % host)
    if npu_smi_error:
        return '%s: %s' % (host, npu_smi_error)
    return ''
