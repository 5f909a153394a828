# -*- coding: utf-8 -*-
"""One control plane for the whole `pytest tests/k8s` session.

Nodes: the sandbox inventory's hosts (the NPU capacity their device plugin would publish), plus
one node that publishes Alibaba's `aliyun.com/npu` through a command-line style override.
"""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import controlplane  # noqa: E402  pylint: disable=wrong-import-position

SANDBOX_INVENTORY = HERE.parent.parent / 'inventories' / 'sandbox'
ALIBABA_NODE_OVERRIDE = 'ack-npu-01:aliyun.com/npu=4'


@pytest.fixture(scope='session')
def control_plane(request, tmp_path_factory):
    nodes = controlplane.apply_node_overrides(
        controlplane.nodes_from_inventory(SANDBOX_INVENTORY), [ALIBABA_NODE_OVERRIDE])
    plane = controlplane.ControlPlane(tmp_path_factory.mktemp('controlplane'), nodes)
    plane.up()
    try:
        yield plane
    finally:
        failed = request.session.testsfailed > 0
        plane.down(keep_logs=failed)
        if failed:
            print('\ncontrol plane logs kept in %s' % plane.logs_dir)
