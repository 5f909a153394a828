# -*- coding: utf-8 -*-
"""Which hosts the k8s_node role refuses to label, and with what message (plugin_utils/k8s_node_checks.py)."""

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils.k8s_node_checks import node_refusal


def test_a_host_with_npus_and_a_working_npu_smi_is_labelled():
    assert node_refusal({'chip_family': '910b'}, None, 'a2-01') == ''


@pytest.mark.parametrize('probe', [{}, {'chip_family': None}, {'chip_family': ''}, None])
def test_a_host_without_npus_is_refused_with_the_fix(probe):
    message = node_refusal(probe, 'ignored while there is no chip', 'cpu-01')
    assert message == ("cpu-01: no Ascend NPU on the PCI bus (vendor 19e5, class 0x12), so there is nothing to label. "
                       "Fix: remove the host from the play's group, or check `lspci -d 19e5:` on it.")


def test_a_failing_npu_smi_is_the_refusal_with_its_own_message():
    assert node_refusal({'chip_family': '910b'}, 'npu-smi: dcmi module initialize failed. Fix: reload the driver',
                        'a2-01') == 'a2-01: npu-smi: dcmi module initialize failed. Fix: reload the driver'
