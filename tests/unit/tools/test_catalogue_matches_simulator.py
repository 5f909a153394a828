# -*- coding: utf-8 -*-
"""The simulator keeps a hardware table of its own (sandbox/fleet.py PRODUCTS, written from the facts
and importing nothing of the product); the collection's is plugins/module_utils/hardware/hardware_catalogue.py.
This test holds the two to the same public facts for every product the simulator has: PCI vendor,
device and subsystem ids, npu-smi chip names, chips per NPU, NPUs per server and RoCE ports."""

import importlib.util
import os

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue as catalogue

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load_fleet():
    spec = importlib.util.spec_from_file_location('npu_ascend_sandbox_fleet_catalogue',
                                                  os.path.join(REPO_ROOT, 'sandbox', 'fleet.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLEET = _load_fleet()
SIMULATED = sorted(FLEET.PRODUCTS.items())


def _hex(value):
    return str(value).lower().replace('0x', '').rjust(4, '0')


def test_the_vendor_is_huaweis():
    assert _hex(FLEET.HUAWEI_PCI_VENDOR) == catalogue.HUAWEI_VENDOR_ID


@pytest.mark.parametrize('name, model', SIMULATED, ids=[name for name, _model in SIMULATED])
def test_simulated_product_has_the_catalogues_chip_facts(name, model):
    family = catalogue.chip_family_row(model['chip_family'])
    assert _hex(model['pci_device']) in family['pci_device_ids']
    assert model['default_chip_name'] in family['npu_smi_names']
    if model.get('roce'):
        assert model['default_chip_name'] in family['roce_chips'] or family['roce_per_die']


@pytest.mark.parametrize('name, model', SIMULATED, ids=[name for name, _model in SIMULATED])
def test_simulated_product_has_the_catalogues_product_facts(name, model):
    product = catalogue.product_row(name)
    identified = catalogue.pci_products().get((_hex(model['pci_device']), _hex(model['subsystem_device'])))
    if product is None:
        # A model no public source gives PCI ids for (Atlas 800T A2): the simulator's subsystem id is a
        # placeholder, which the catalogue must not take for another product.
        assert identified is None, '%s shows the PCI ids of %s' % (name, identified)
        return
    if product['subsystem_device_ids']:
        assert identified == name
    assert model['chips_per_npu'] == product['chips_per_npu']
    if not product['card']:
        assert len(model['bus_ids']) // model['chips_per_npu'] == product['npus']
