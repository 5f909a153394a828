# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Finding Ascend NPUs on the PCI bus (ascend-deployer's and MindCluster's ids;
docs/huawei-sources.md).

pci.ids has no names for Huawei's NPU device ids, so every source (sysfs, ``lspci``,
``lspci -vmm -nn``) is reduced to the numeric ids, lower-case four-digit hex without
``0x``, and the chip family is looked up from the device id. Pure functions, no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue

HUAWEI_VENDOR_ID = hardware_catalogue.HUAWEI_VENDOR_ID
ACCELERATOR_CLASS_PREFIX = hardware_catalogue.ACCELERATOR_CLASS_PREFIX

# PCI device id -> chip family, and (device id, subsystem device id) -> product: the hardware catalogue's.
DEVICE_FAMILIES = hardware_catalogue.device_families()
PRODUCTS = hardware_catalogue.pci_products()

_RESOURCE_NAMES = hardware_catalogue.family_values('k8s_resource')
_ACCELERATOR_LABELS = hardware_catalogue.family_values('accelerator')

_HEX_ID = re.compile(r'^(?:0x)?([0-9a-f]+)$')


def _hex_id(value, digits):
    """``'0xD802\\n'`` -> ``'d802'``; the class file's 6 digits are cut to the first ``digits``."""
    if value is None:
        return None
    match = _HEX_ID.match(value.strip().lower())
    if not match:
        raise ValueError('not a hexadecimal PCI id: %r' % (value,))
    number = match.group(1)
    if len(number) < digits:
        number = number.rjust(digits, '0')
    return number[:digits]


def _normalize_address(address):
    """Lower-case PCI address with domain: ``01:00.0`` -> ``0000:01:00.0``."""
    address = address.strip().lower()
    if address.count(':') == 1:
        address = '0000:' + address
    return address


def _device(address, vendor_id, device_id, subsystem_vendor_id, subsystem_device_id, class_id, revision):
    is_huawei = vendor_id == HUAWEI_VENDOR_ID
    return {
        'address': _normalize_address(address),
        'vendor_id': vendor_id,
        'device_id': device_id,
        'subsystem_vendor_id': subsystem_vendor_id,
        'subsystem_device_id': subsystem_device_id,
        'class_id': class_id,
        'revision': revision,
        'chip_family': DEVICE_FAMILIES.get(device_id) if is_huawei else None,
        'product': PRODUCTS.get((device_id, subsystem_device_id)) if is_huawei else None,
    }


def parse_sysfs_device(address, files):
    """One ``/sys/bus/pci/devices/<address>/`` directory -> device dict.

    ``files`` maps file names (``vendor``, ``device``, ``subsystem_vendor``,
    ``subsystem_device``, ``class``, ``revision``) to their text; missing optional ones
    give None, a missing vendor or device is an error.
    """
    for required in ('vendor', 'device'):
        if files.get(required) is None:
            raise ValueError('PCI device %s: no %s file' % (address, required))
    return _device(
        address,
        _hex_id(files.get('vendor'), 4),
        _hex_id(files.get('device'), 4),
        _hex_id(files.get('subsystem_vendor'), 4),
        _hex_id(files.get('subsystem_device'), 4),
        _hex_id(files.get('class'), 6)[:4] if files.get('class') is not None else None,
        _hex_id(files.get('revision'), 2),
    )


_VMM_FIELD = re.compile(r'^(\w+):\s*(.*?)\s*$')
_BRACKETED_ID = re.compile(r'\[([0-9a-fA-F]{2,6})\]\s*$')


def _bracketed(value):
    """``'Device [d802]'`` -> ``'d802'``; plain ``'20'`` (Rev) is returned as is."""
    if value is None:
        return None
    match = _BRACKETED_ID.search(value)
    return match.group(1).lower() if match else value.strip().lower()


def parse_lspci_vmm(text):
    """``lspci -vmm -nn`` (optionally ``-D``) -> device dicts of Huawei (vendor 19e5) devices."""
    devices = []
    for record in re.split(r'\n\s*\n', text or ''):
        fields = {}
        for line in record.splitlines():
            match = _VMM_FIELD.match(line.strip())
            if match:
                fields[match.group(1)] = match.group(2)
        if 'Slot' not in fields or 'Vendor' not in fields:
            continue
        vendor_id = _bracketed(fields.get('Vendor'))
        if vendor_id != HUAWEI_VENDOR_ID:
            continue
        devices.append(_device(
            fields['Slot'],
            vendor_id,
            _bracketed(fields.get('Device')),
            _bracketed(fields.get('SVendor')),
            _bracketed(fields.get('SDevice')),
            _bracketed(fields.get('Class')),
            _bracketed(fields.get('Rev')),
        ))
    return devices


_LSPCI_NAMED = re.compile(
    r'^(?P<address>(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\s+(?P<class>[^:]+):\s+'
    r'Huawei Technologies Co\., Ltd\.\s+Device\s+(?P<device>[0-9a-f]{4})(?:\s+\(rev\s+(?P<rev>[0-9a-f]+)\))?',
    re.IGNORECASE)
_LSPCI_NUMERIC = re.compile(
    r'^(?P<address>(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\s+(?P<class>[0-9a-f]{4}):\s+'
    r'(?P<vendor>[0-9a-f]{4}):(?P<device>[0-9a-f]{4})(?:\s+\(rev\s+(?P<rev>[0-9a-f]+)\))?',
    re.IGNORECASE)


def parse_lspci(text):
    """Plain ``lspci`` (or ``lspci -n``) lines -> Huawei devices ``{address, device_id, revision, ...}``.

    Only lines naming Huawei with a bare device id are kept (that is how lspci prints
    devices pci.ids does not know). ``class_id`` is ``1200`` for lines in the
    "Processing accelerators" class and None for other named classes.
    """
    devices = []
    for line in (text or '').splitlines():
        line = line.strip()
        numeric = _LSPCI_NUMERIC.match(line)
        if numeric:
            if numeric.group('vendor').lower() != HUAWEI_VENDOR_ID:
                continue
            class_id = numeric.group('class').lower()
            match = numeric
        else:
            match = _LSPCI_NAMED.match(line)
            if not match:
                continue
            class_id = '1200' if match.group('class').strip().lower() == 'processing accelerators' else None
        device_id = match.group('device').lower()
        revision = match.group('rev').lower() if match.group('rev') else None
        devices.append({
            'address': _normalize_address(match.group('address')),
            'vendor_id': HUAWEI_VENDOR_ID,
            'device_id': device_id,
            'class_id': class_id,
            'revision': revision,
            'chip_family': DEVICE_FAMILIES.get(device_id),
        })
    return devices


def npu_devices(devices):
    """Keep the Huawei processing accelerators (vendor 19e5, class 0x12xx) of ``devices``."""
    return [device for device in devices
            if device.get('vendor_id') == HUAWEI_VENDOR_ID
            and (device.get('class_id') or '').startswith(ACCELERATOR_CLASS_PREFIX)]


def _normalize_chip_family(chip_family):
    """``'910B'`` -> ``'910b'``, ``'a3'`` -> ``'A3'``; ValueError for unknown families."""
    return hardware_catalogue.chip_family_row(chip_family)['family']


def k8s_resource_name(chip_family):
    """Extended resource Huawei's device plugin advertises for a family (``huawei.com/Ascend910``).

    None for a known family without a documented resource name (310b).
    """
    return _RESOURCE_NAMES.get(_normalize_chip_family(chip_family))


def accelerator_label(chip_family):
    """Value of the ``accelerator`` node label (``huawei-Ascend910``...).

    None for known families the device plugin documents no label for (310b, A5).
    """
    return _ACCELERATOR_LABELS.get(_normalize_chip_family(chip_family))
