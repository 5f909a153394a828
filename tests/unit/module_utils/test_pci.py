# -*- coding: utf-8 -*-
import pytest

from ansible_collections.npu.ascend.plugins.module_utils.hardware.pci import (
    DEVICE_FAMILIES,
    HUAWEI_VENDOR_ID,
    accelerator_label,
    k8s_resource_name,
    npu_devices,
    parse_lspci,
    parse_lspci_vmm,
    parse_sysfs_device,
)

SYSFS_910B = {
    'vendor': '0x19e5\n', 'device': '0xd802\n', 'subsystem_vendor': '0x19e5\n', 'subsystem_device': '0x3002\n',
    'class': '0x120000\n', 'revision': '0x20\n',
}


def test_constants():
    assert HUAWEI_VENDOR_ID == '19e5'
    assert DEVICE_FAMILIES['d802'] == '910b'
    assert DEVICE_FAMILIES['d107'] == DEVICE_FAMILIES['d105'] == '310b'


def test_sysfs_device_atlas_800i_a2():
    assert parse_sysfs_device('0000:C1:00.0', SYSFS_910B) == {
        'address': '0000:c1:00.0', 'vendor_id': '19e5', 'device_id': 'd802', 'subsystem_vendor_id': '19e5',
        'subsystem_device_id': '3002', 'class_id': '1200', 'revision': '20', 'chip_family': '910b',
        'product': 'Atlas 800I A2',
    }


@pytest.mark.parametrize('device, subsystem, family, product', [
    ('0xd802', '0x6000', '910b', 'Atlas 300T A2'),
    ('0xD500', '0x0110', '310p', 'Atlas 300I Duo'),
    ('0xd803', '0x0000', 'A3', None),
    ('0xd100', '0x0100', '310', None),
])
def test_sysfs_products(device, subsystem, family, product):
    files = dict(SYSFS_910B, device=device, subsystem_device=subsystem)
    parsed = parse_sysfs_device('0000:01:00.0', files)
    assert (parsed['chip_family'], parsed['product']) == (family, product)


# Atlas 300I Pro and Duo as Huawei's deployer identifies them (ascend-deployer
# packages/resources/npu_info.py): vendor 0x19e5, device 0xd500, subsystem vendor 0x0200.
@pytest.mark.parametrize('subsystem_device, product', [('0x0100', 'Atlas 300I Pro'), ('0x0110', 'Atlas 300I Duo')])
def test_sysfs_310p_cards_with_their_real_subsystem_vendor(subsystem_device, product):
    files = {'vendor': '0x19e5\n', 'device': '0xd500\n', 'subsystem_vendor': '0x0200\n',
             'subsystem_device': subsystem_device + '\n', 'class': '0x120000\n', 'revision': '0x23\n'}
    parsed = parse_sysfs_device('0000:01:00.0', files)
    assert (parsed['subsystem_vendor_id'], parsed['chip_family'], parsed['product']) == ('0200', '310p', product)
    assert npu_devices([parsed]) == [parsed]
    assert (k8s_resource_name(parsed['chip_family']), accelerator_label(parsed['chip_family'])) == (
        'huawei.com/Ascend310P', 'huawei-Ascend310P')


@pytest.mark.parametrize('subsystem_vendor', ['0x19e5', '0x0200', '0x0000', None])
def test_nothing_depends_on_the_subsystem_vendor(subsystem_vendor):
    files = {'vendor': '0x19e5', 'device': '0xd500', 'subsystem_device': '0x0110', 'class': '0x120000',
             'subsystem_vendor': subsystem_vendor}
    parsed = parse_sysfs_device('0000:06:00.0', files)
    assert (parsed['chip_family'], parsed['product']) == ('310p', 'Atlas 300I Duo')
    assert npu_devices([parsed]) == [parsed]


def test_lspci_vmm_duo_with_subsystem_vendor_0200():
    text = ('Slot:\t0000:01:00.0\nClass:\tProcessing accelerators [1200]\n'
            'Vendor:\tHuawei Technologies Co., Ltd. [19e5]\nDevice:\tDevice [d500]\n'
            'SVendor:\tDevice [0200]\nSDevice:\tDevice [0110]\nRev:\t23\n')
    [device] = parse_lspci_vmm(text)
    assert (device['subsystem_vendor_id'], device['product']) == ('0200', 'Atlas 300I Duo')
    assert npu_devices([device]) == [device]


def test_sysfs_non_huawei_device_has_no_family():
    files = {'vendor': '0x8086', 'device': '0xd802', 'class': '0x060400'}
    parsed = parse_sysfs_device('0000:00:01.0', files)
    assert parsed['chip_family'] is None and parsed['product'] is None
    assert parsed['class_id'] == '0604'
    assert parsed['subsystem_device_id'] is None


def test_sysfs_requires_vendor_and_device():
    with pytest.raises(ValueError, match='no device file'):
        parse_sysfs_device('0000:01:00.0', {'vendor': '0x19e5'})
    with pytest.raises(ValueError, match='hexadecimal'):
        parse_sysfs_device('0000:01:00.0', {'vendor': '0x19e5', 'device': 'zz'})


LSPCI_VMM = """Slot:\t00:00.0
Class:\tHost bridge [0600]
Vendor:\tIntel Corporation [8086]
Device:\t440FX - 82441FX PMC [Natoma] [1237]
Rev:\t02

Slot:\t01:00.0
Class:\tProcessing accelerators [1200]
Vendor:\tHuawei Technologies Co., Ltd. [19e5]
Device:\tDevice [d802]
SVendor:\tHuawei Technologies Co., Ltd. [19e5]
SDevice:\tDevice [3002]
Rev:\t20

Slot:\t0000:3d:00.0
Class:\tEthernet controller [0200]
Vendor:\tHuawei Technologies Co., Ltd. [19e5]
Device:\tHi1822 Family (2*100GE) [0200]
SVendor:\tHuawei Technologies Co., Ltd. [19e5]
SDevice:\tDevice [d139]
Rev:\t45
"""


def test_lspci_vmm_keeps_huawei_and_npu_devices_filters_class():
    devices = parse_lspci_vmm(LSPCI_VMM)
    assert [device['address'] for device in devices] == ['0000:01:00.0', '0000:3d:00.0']
    assert devices[0] == {
        'address': '0000:01:00.0', 'vendor_id': '19e5', 'device_id': 'd802', 'subsystem_vendor_id': '19e5',
        'subsystem_device_id': '3002', 'class_id': '1200', 'revision': '20', 'chip_family': '910b',
        'product': 'Atlas 800I A2',
    }
    assert devices[1]['class_id'] == '0200'
    assert [device['address'] for device in npu_devices(devices)] == ['0000:01:00.0']


def test_lspci_910b4_sample(sample):
    devices = parse_lspci(sample('installer/lspci_910b4_atlas800IA2.txt'))
    assert len(devices) == 8
    assert devices[0] == {'address': '0000:01:00.0', 'vendor_id': '19e5', 'device_id': 'd802', 'class_id': '1200',
                          'revision': '20', 'chip_family': '910b'}
    assert devices[-1]['address'] == '0000:c2:00.0'
    assert len(npu_devices(devices)) == 8


def test_lspci_310p_sample(sample):
    devices = parse_lspci(sample('installer/lspci_310p_duo-or-pro.txt'))
    assert [(d['address'], d['device_id'], d['revision'], d['chip_family']) for d in devices] == [
        ('0000:01:00.0', 'd500', '23', '310p'), ('0000:06:00.0', 'd500', '23', '310p')]


def test_lspci_numeric_form_and_other_vendors():
    text = ('00:00.0 0600: 8086:1237 (rev 02)\n'
            '0000:81:00.0 1200: 19e5:d803 (rev 20)\n'
            '00:02.0 VGA compatible controller: Device 1234:1111 (rev 02)\n')
    assert parse_lspci(text) == [{'address': '0000:81:00.0', 'vendor_id': '19e5', 'device_id': 'd803',
                                  'class_id': '1200', 'revision': '20', 'chip_family': 'A3'}]


@pytest.mark.parametrize('family, resource, label', [
    ('910', 'huawei.com/Ascend910', 'huawei-Ascend910'),
    ('910b', 'huawei.com/Ascend910', 'huawei-Ascend910'),
    ('910B', 'huawei.com/Ascend910', 'huawei-Ascend910'),
    ('A3', 'huawei.com/Ascend910', 'huawei-Ascend910'),
    ('310', 'huawei.com/Ascend310', 'huawei-Ascend310'),
    ('310p', 'huawei.com/Ascend310P', 'huawei-Ascend310P'),
    ('A5', 'huawei.com/npu', None),
    ('310b', None, None),
])
def test_kubernetes_names(family, resource, label):
    assert k8s_resource_name(family) == resource
    assert accelerator_label(family) == label


def test_kubernetes_names_reject_unknown_family():
    with pytest.raises(ValueError, match='unknown Ascend chip family'):
        k8s_resource_name('920')
    with pytest.raises(ValueError, match='unknown Ascend chip family'):
        accelerator_label(None)
