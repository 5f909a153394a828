# -*- coding: utf-8 -*-
"""The sandbox's NPU fabric as fleet.py describes it: which models may join one, the switch ports of
the cabling plan, and the file the nodes read."""

import importlib.util
import json
import os

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope='module')
def fleet():
    spec = importlib.util.spec_from_file_location('npu_ascend_sandbox_fleet_fabric', os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_a_training_model_joins_a_fabric(fleet):
    with pytest.raises(fleet.SandboxError, match='no NPU RoCE ports'):
        fleet.NodeSpec('n1', 'Atlas 800I A2', fabric='f')
    spec = fleet.NodeSpec('n1', 'Atlas 800T A2', fabric='f')
    assert spec.hardware()['roce'] is True and spec.hardware()['chip_name'] == '910B3'
    assert 'roce' not in fleet.NodeSpec('n2', 'Atlas 800I A2').hardware()


def test_fabric_changes_the_fingerprint(fleet):
    assert fleet.NodeSpec('n1', 'Atlas 800T A2', fabric='f').hardware_fingerprint() != \
        fleet.NodeSpec('n1', 'Atlas 800T A2').hardware_fingerprint()


def test_fabric_file(fleet, tmp_path, monkeypatch):
    monkeypatch.setattr(fleet, 'FABRICS_DIR', tmp_path)
    specs = [fleet.NodeSpec(name, 'Atlas 800T A2', fabric='f') for name in ('b', 'a')]
    fleet.write_fabrics(specs, {'b': {'sandbox_fabric_answering': ['10.0.0.1']}})
    described = json.loads((tmp_path / 'f' / 'fabric.json').read_text())
    assert described['answering'] == ['10.0.0.1']
    ports = [port for node in ('a', 'b') for port in described['ports'][node].values()]
    assert len(set(ports)) == 16
    assert described['ports']['a']['0'] == '400GE1/1/1:1' and described['ports']['b']['7'] == '400GE1/1/8:2'
    assert (tmp_path / 'f' / 'state').is_dir() and (tmp_path / 'f' / 'faults').is_dir()


def test_a_limited_up_keeps_the_other_nodes_ports(fleet, tmp_path, monkeypatch):
    monkeypatch.setattr(fleet, 'FABRICS_DIR', tmp_path)
    both = [fleet.NodeSpec(name, 'Atlas 800T A2', fabric='f') for name in ('a', 'b')]
    fleet.write_fabrics(both, {})
    fleet.write_fabrics(both[1:], {'b': {'sandbox_fabric_answering': ['10.0.0.1']}})
    described = json.loads((tmp_path / 'f' / 'fabric.json').read_text())
    assert sorted(described['ports']) == ['a', 'b'] and described['answering'] == ['10.0.0.1']
    assert described['ports']['a']['0'] == '400GE1/1/1:1' and described['ports']['b']['0'] == '400GE1/1/5:1'
