# -*- coding: utf-8 -*-
"""The hardware catalogue: its rows hold together, and every place that knows a chip reads them
(PCI classification, package names, labels, resources, RoCE, vNPU). The A3 rows are the A3 fact
sheet's (docs/huawei-sources.md, "The hardware catalogue")."""

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue as catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu, pci
from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import package_file_name, parse_package_name
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import accelerator_type, node_labels, resource_name
from ansible_collections.npu.ascend.plugins.plugin_utils import hccn_plan

FAMILY_FIELDS = set(catalogue.CHIP_FAMILIES[0])


@pytest.mark.parametrize('row', catalogue.CHIP_FAMILIES, ids=lambda row: row['family'])
def test_every_family_row_has_every_field(row):
    assert set(row) == FAMILY_FIELDS


def test_pci_device_ids_and_chip_names_belong_to_one_family_each():
    device_ids = [device for row in catalogue.CHIP_FAMILIES for device in row['pci_device_ids']]
    names = [name for row in catalogue.CHIP_FAMILIES for name in row['npu_smi_names']]
    assert len(device_ids) == len(set(device_ids))
    assert len(names) == len(set(names))


@pytest.mark.parametrize('row', catalogue.PRODUCTS, ids=lambda row: row['name'])
def test_every_product_is_on_its_familys_device_id(row):
    assert row['device_id'] in catalogue.chip_family_row(row['family'])['pci_device_ids']
    if row['accelerator_type']:
        family = catalogue.chip_family_row(row['family'])
        assert row['accelerator_type'] in set(family['accelerator_types'].values()) | set(
            family['super_pod_accelerator_types'])


def test_roce_chips_are_the_familys_chips():
    for row in catalogue.CHIP_FAMILIES:
        assert set(row['roce_chips']) <= set(row['npu_smi_names'])
        assert bool(row['roce_chips']) == bool(row['roce_subnet_rule'])


# --- A3 and the other new rows, where each is used -------------------------------------------------

@pytest.mark.parametrize('device, subsystem, family, product', [
    ('0xd803', '0x3000', 'A3', 'Atlas 900 A3 SuperPoD'),
    ('0xd803', '0x3002', 'A3', 'Atlas 900 A3 SuperPoD'),
    ('0xd803', '0x3003', 'A3', 'Atlas 800I A3'),
    ('0xd803', '0x0100', 'A3', 'Atlas 800I A3'),
    ('0xd802', '0x4000', '910b', 'Atlas 300I A2'),
    ('0xd500', '0x0100', '310p', 'Atlas 300I Pro'),
])
def test_pci_classifies_the_new_products(device, subsystem, family, product):
    found = pci.parse_sysfs_device('0000:9d:00.0', {
        'vendor': '0x19e5', 'device': device, 'subsystem_vendor': '0x19e5', 'subsystem_device': subsystem,
        'class': '0x120000', 'revision': '0x20'})
    assert (found['chip_family'], found['product']) == (family, product)


def test_a3_is_eight_npus_of_two_dies():
    family = catalogue.chip_family_row('a3')
    for name in ('Atlas 800I A3', 'Atlas 800T A3', 'Atlas 900 A3 SuperPoD'):
        assert catalogue.product_row(name)['npus'] * catalogue.product_row(name)['chips_per_npu'] == 16
        assert catalogue.product_row(name)['chips_per_npu'] == family['dies_per_npu']
    assert family['request_sizes'][-1] == 16
    assert family['roce_per_die'] and family['vnic']


@pytest.mark.parametrize('component, version, arch, name', [
    ('driver', '25.3.rc1', 'aarch64', 'Atlas-A3-hdk-npu-driver_25.3.rc1_linux-aarch64.run'),
    ('driver', '25.3.rc1', 'x86_64', 'Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run'),
    ('firmware', '7.8.0.2.212', 'aarch64', 'Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run'),
    ('kernels', '8.3.RC1', 'aarch64', 'Atlas-A3-cann-kernels_8.3.RC1_linux-aarch64.run'),
    ('ops', '8.5.0', 'x86_64', 'Ascend-cann-A3-ops_8.5.0_linux-x86_64.run'),
])
def test_a3_package_names(component, version, arch, name):
    assert package_file_name(component, 'A3', version, arch) == name
    assert parse_package_name(name)['chip'] == 'A3'


def test_a3_node_labels_and_resource():
    facts = {'chip_family': 'A3', 'npu_count': 16, 'product': 'Atlas 800I A3', 'arch': 'aarch64', 'installed': {}}
    chips = [{'npu_id': npu, 'chip_id': die, 'name': 'Ascend910'} for npu in range(8) for die in range(2)]
    labels, notes = node_labels(facts, boards=[{'npu_id': 0, 'board_id': '0xb3'}], chips=chips)
    assert labels['accelerator'] == 'huawei-Ascend910'
    assert labels['accelerator-type'] == 'module-a3-16'
    assert labels['server-usage'] == 'infer'
    assert labels['npu.ascend/npu-count'] == '16'
    assert notes == []
    assert resource_name('A3') == 'huawei.com/Ascend910'


@pytest.mark.parametrize('family, product, count, expected', [
    ('A3', 'Atlas 900 A3 SuperPoD', 16, 'module-a3-16-super-pod'),
    ('A3', 'Atlas 900 A3 SuperPoD', 8, None),
    ('A3', 'Atlas 800T A3', 16, 'module-a3-16'),
    ('A3', None, 16, 'module-a3-16'),
    ('910b', 'Atlas 300I A2', 1, 'card-910b-2'),
])
def test_accelerator_types_of_the_new_products(family, product, count, expected):
    assert accelerator_type(family, count, None, product) == expected


@pytest.mark.parametrize('name', ['Ascend910', '910C1'])
def test_a3_dies_each_carry_a_roce_port_and_have_the_a3_vnpu_family(name):
    chips = [{'name': name, 'npu_id': npu, 'chip_id': die, 'phy_id': 2 * npu + die} for npu in range(8) for die in range(2)]
    model = hccn_plan.roce_model(chips)
    assert model['roce'] is True and 'A3' in model['reason'] and model['per_die'] is True
    assert model['ids'] == list(range(16)) and model['subnet_rule'] == 'per_die'
    assert model['vnic_address_rule'] == 'super_pod_server' and model['hccs_ping'] is True
    # Without the Phy-IDs the dies cannot be told to hccn_tool: no configuration, and the note says why.
    assert hccn_plan.roce_model([{'name': name}])['roce'] is False
    assert npu_vnpu.chip_family(name) == 'A3'


def test_a3_vnpu_templates_are_the_training_and_inference_ones():
    row = catalogue.VNPU_FAMILIES['A3']
    assert sorted(row['templates']) == ['vir05_1c_16g', 'vir06_1c_16g', 'vir10_3c_32g', 'vir12_3c_32g']
    assert row['chip_names'] == catalogue.chip_names_of('A3')
    # Each template's numbers are the ones its name spells (Huawei's naming rule).
    for name, (cores, memory, cpus) in row['templates'].items():
        assert name == 'vir%02d_%dc_%dg' % (cores, cpus, memory)


def test_the_a3_address_refusals_are_catalogue_rows():
    row = catalogue.chip_family_row('A3')
    assert row['roce_refused_subnets'] == ('192.168.0.0/21',)
    assert row['roce_refused_subnets_super_pod'] == ('192.0.0.0/8',)
    assert row['super_pod_max_servers'] == 48
    assert catalogue.roce_row(['910B3'])['family'] == '910b'
    assert catalogue.roce_row(['910B3', 'Ascend910']) is None
    assert catalogue.roce_row(['910B4']) is None


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match='unknown Ascend chip family'):
        catalogue.chip_family_row('910c')


def test_only_the_310b_has_soc_packages_and_only_310p_vnpus_use_vgroups():
    assert catalogue.soc_package_chips() == ('310b',)
    assert [family for family, row in catalogue.VNPU_FAMILIES.items() if row['vgroups']] == ['310P']
