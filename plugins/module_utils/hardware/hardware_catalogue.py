# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one catalogue of Ascend chips and products: everything the collection knows of a chip.

Every row comes from a public source named in docs/huawei-sources.md ("The hardware catalogue").
A chip or product that is not a row here is unknown, and the collection refuses it as before
(docs/development.md, "Supporting a new chip"). Plain data and small lookups; no I/O, nothing
from Ansible (it runs on the nodes: pci.py, ascend_package.py and npu_vnpu.py read it).

``CHIP_FAMILIES`` has one row per chip family, keyed as ``npu.ascend.ascend_facts`` reports it
(``chip_family``):

- ``pci_device_ids``: PCI device ids (vendor ``HUAWEI_VENDOR_ID``), one PCI function per die;
- ``package_chip``: the chip as package file names spell it (None: no package we know);
- ``hdk_prefix``: the start of its driver and firmware file names; ``soc_packages``: whether its
  driver and firmware also come as ``-soc`` variants;
- ``npu_smi_names``: the chip names ``npu-smi info`` prints for it;
- ``dies_per_npu``: PCI functions (npu-smi chips, ``/dev/davinciN``) per NPU of its module servers
  (a product's own ``chips_per_npu`` may differ: the Atlas 300I Duo card holds two 310P chips);
- ``k8s_resource``, ``request_sizes``: the extended resource Huawei's device plugin advertises and
  the request sizes it takes (None: any count up to the node's);
- ``accelerator``, ``device_plugin_suffix``: the ``accelerator`` node label and the name suffix of
  our device plugin DaemonSet for it (None: no label documented);
- ``form_factor_scheduled``: whether Huawei's scheduler needs an ``accelerator-type`` for its nodes;
  ``accelerator_types``: NPU devices per node -> ``accelerator-type`` of a module server;
  ``card_accelerator_type``, ``card_board_ids``: the same for its PCIe cards;
  ``inference_board_ids``: board ids the device plugin treats as inference hardware
  (``server-usage=infer``); ``super_pod_accelerator_types``: the SuperPoD values (set by the admin,
  or derived from a SuperPoD product);
- ``roce_chips``, ``roce_subnet_rule``: the npu-smi chip names with a RoCE port the hccn role
  configures, and how their addresses are laid out (``one_subnet``: consecutive, one subnet per node;
  ``smp``: Huawei's 910A board expansion; ``per_die``: consecutive, one address per die, subnets as
  the site plans them); ``roce_per_die``: each die (not each NPU) has its RoCE port, ``hccn_tool -i``
  takes the die's Phy-ID; ``roce_refused_subnets``: subnets ``hccn_tool`` refuses for a RoCE address
  (``roce_refused_subnets_super_pod`` instead on a SuperPoD member, whose server index is below
  ``super_pod_max_servers``; ``roce_refusal`` names the rule in messages);
- ``vnic``: each die has a vNIC on the SuperPoD's HCCS plane (``hccn_tool -vnic -g``), its address laid
  out by ``vnic_address_rule`` (``super_pod_server``: 192.<server index>.<2 + die>.<199 - Phy-ID>);
  ``hccs_ping``: ``hccn_tool -hccs_ping`` exists for the family (each product may still refuse it);
- ``exporter_metrics``: the npu-exporter metrics only this family has.

``PRODUCTS`` has one row per product: its PCI ids (device and subsystem device), its family, its
NPUs and whether it is a PCIe card. ``VNPU_FAMILIES`` holds the static vNPU templates per family
of chips (npu_vnpu.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

HUAWEI_VENDOR_ID = '19e5'
# PCI base class 0x12: processing accelerators.
ACCELERATOR_CLASS_PREFIX = '12'
RESOURCE_PREFIX = 'huawei.com/'

_A3_REQUEST_SIZES = (1, 2, 4, 6, 8, 10, 12, 14, 16)
# npu-smi's names of an A3 die: Ascend910 in every capture, 910C1 on one 24.1.rc3 driver.
_A3_CHIPS = ('Ascend910', '910C1')
# Subnets hccn_tool refuses for an NPU address on A1/A2 servers (is_ipaddr_conflict: the host-NPU virtual NIC is
# 192.168.1.199), and in the SMP mode of the Atlas 800-9000 also these (driver source, docs/hccn.md).
_A2_REFUSED = ('192.168.1.0/24', '192.168.2.0/24')
_SMP_REFUSED = ('192.168.3.0/24', '192.168.4.0/24', '192.168.5.0/24')
# npu-smi's names of the first-generation 910; "910B" alone is this chip, not the A2 910B1-B4.
_LEGACY_910_CHIPS = ('910A', '910B', '910ProA', '910ProB', '910PremiumA')

CHIP_FAMILIES = (
    {
        # First-generation training chips (Atlas 800 training servers, Atlas 300T cards).
        'family': '910', 'pci_device_ids': ('d801',), 'package_chip': '910', 'hdk_prefix': 'Ascend-hdk-910',
        'npu_smi_names': _LEGACY_910_CHIPS, 'dies_per_npu': 1, 'soc_packages': False,
        'k8s_resource': 'huawei.com/Ascend910', 'request_sizes': None,
        'accelerator': 'huawei-Ascend910', 'device_plugin_suffix': '910', 'form_factor_scheduled': True,
        # An Atlas 800 module server and an Atlas 300T card look alike on the PCI bus: no derived value.
        'accelerator_types': {}, 'card_accelerator_type': None, 'card_board_ids': (),
        'inference_board_ids': (), 'super_pod_accelerator_types': (),
        'roce_chips': _LEGACY_910_CHIPS, 'roce_subnet_rule': 'smp',
        'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        # hccn_tool's is_ipaddr_conflict: the host-NPU virtual NIC's 192.168.1.0/24, 192.168.2.0/24, and
        # 192.168.3.0/24-192.168.5.0/24 in SMP mode.
        'roce_refused_subnets': _A2_REFUSED + _SMP_REFUSED, 'roce_refused_subnets_super_pod': (),
        'roce_refusal': 'the host-NPU virtual NIC ranges of SMP servers',
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
    {
        # Atlas A2: 800T/800I A2, 900 A2 PoD, 300T/300I A2 cards.
        'family': '910b', 'pci_device_ids': ('d802',), 'package_chip': '910b', 'hdk_prefix': 'Ascend-hdk-910b',
        'npu_smi_names': ('910B1', '910B2', '910B3', '910B4', '910B4-1'), 'dies_per_npu': 1, 'soc_packages': False,
        'k8s_resource': 'huawei.com/Ascend910', 'request_sizes': None,
        'accelerator': 'huawei-Ascend910', 'device_plugin_suffix': '910', 'form_factor_scheduled': True,
        'accelerator_types': {8: 'module-910b-8', 16: 'module-910b-16'},
        'card_accelerator_type': 'card-910b-2',
        # Atlas 300I A2 (0x28, 0x29 for the 64 GB card); Atlas 800I A2 without HCCS (0x33, renumbered 0x3c).
        'card_board_ids': (0x28, 0x29), 'inference_board_ids': (0x28, 0x29, 0x33, 0x3c),
        'super_pod_accelerator_types': (),
        # 910B4 (Atlas 800I A2, 300I A2) is an inference chip without a RoCE port of its own.
        'roce_chips': ('910B1', '910B2', '910B3'), 'roce_subnet_rule': 'one_subnet',
        'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        'roce_refused_subnets': _A2_REFUSED, 'roce_refused_subnets_super_pod': (),
        'roce_refusal': 'the host-NPU virtual NIC ranges',
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
    {
        # Atlas A3 (Ascend 910C, "910_93"): 8 NPUs x 2 dies, each die its own PCI function and device.
        'family': 'A3', 'pci_device_ids': ('d803',), 'package_chip': 'A3', 'hdk_prefix': 'Atlas-A3-hdk',
        'npu_smi_names': _A3_CHIPS, 'dies_per_npu': 2, 'soc_packages': False,
        'k8s_resource': 'huawei.com/Ascend910', 'request_sizes': _A3_REQUEST_SIZES,
        'accelerator': 'huawei-Ascend910', 'device_plugin_suffix': '910', 'form_factor_scheduled': True,
        'accelerator_types': {16: 'module-a3-16'}, 'card_accelerator_type': None, 'card_board_ids': (),
        # Atlas 800I A3 (0xb4: its additional SKU).
        'inference_board_ids': (0xb3, 0xb4),
        'super_pod_accelerator_types': ('module-a3-16-super-pod', 'module-a3-8-super-pod'),
        # Each die has its own RoCE NIC (hccn_tool -i 0..15) and a vNIC on the SuperPoD's HCCS plane. The
        # dies' subnets are the site's (a real cluster put the two dies of an NPU in two /24s, a public
        # hccn.conf all 16 in one /17): no subnet rule beyond one address per die.
        'roce_chips': _A3_CHIPS, 'roce_subnet_rule': 'per_die', 'roce_per_die': True, 'vnic': True,
        'exporter_metrics': ('npu_chip_info_sio_crc_tx_err_cnt', 'npu_chip_info_sio_crc_rx_err_cnt'),
        # hccn_tool's tool_a3_ipaddr_conflict_extend ("A3 product get same network address."): a SuperPoD
        # member (server index < 48, A3_SUPERPOD_MAX_NUMS) refuses 192.0.0.0/8, its vNICs' range; any
        # other A3 192.168.0.0/21.
        'roce_refused_subnets': ('192.168.0.0/21',), 'roce_refused_subnets_super_pod': ('192.0.0.0/8',),
        'roce_refusal': 'A3 product get same network address',
        'vnic_address_rule': 'super_pod_server', 'hccs_ping': True, 'super_pod_max_servers': 48,
    },
    {
        'family': '310', 'pci_device_ids': ('d100',), 'package_chip': None, 'hdk_prefix': None,
        'npu_smi_names': (), 'dies_per_npu': 1, 'soc_packages': False,
        'k8s_resource': 'huawei.com/Ascend310', 'request_sizes': None,
        'accelerator': 'huawei-Ascend310', 'device_plugin_suffix': '310', 'form_factor_scheduled': False,
        'accelerator_types': {}, 'card_accelerator_type': None, 'card_board_ids': (), 'inference_board_ids': (),
        'super_pod_accelerator_types': (),
        'roce_chips': (), 'roce_subnet_rule': None, 'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        'roce_refused_subnets': (), 'roce_refused_subnets_super_pod': (), 'roce_refusal': None,
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
    {
        # Atlas inference series: 300I Pro, 300V Pro, 300I Duo cards.
        'family': '310p', 'pci_device_ids': ('d500',), 'package_chip': '310p', 'hdk_prefix': 'Ascend-hdk-310p',
        'npu_smi_names': ('310P3',), 'dies_per_npu': 1, 'soc_packages': False,
        'k8s_resource': 'huawei.com/Ascend310P', 'request_sizes': None,
        'accelerator': 'huawei-Ascend310P', 'device_plugin_suffix': '310p', 'form_factor_scheduled': False,
        'accelerator_types': {}, 'card_accelerator_type': None, 'card_board_ids': (), 'inference_board_ids': (),
        'super_pod_accelerator_types': (),
        'roce_chips': (), 'roce_subnet_rule': None, 'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        'roce_refused_subnets': (), 'roce_refused_subnets_super_pod': (), 'roce_refusal': None,
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
    {
        # Atlas 200I A2 / 500 A2 (SoC packages, "-soc" file names).
        'family': '310b', 'pci_device_ids': ('d105', 'd107'), 'package_chip': '310b',
        'hdk_prefix': 'Ascend-hdk-310b', 'npu_smi_names': ('310B4',), 'dies_per_npu': 1, 'soc_packages': True,
        'k8s_resource': None, 'request_sizes': None, 'accelerator': None, 'device_plugin_suffix': None,
        'form_factor_scheduled': False,
        'accelerator_types': {}, 'card_accelerator_type': None, 'card_board_ids': (), 'inference_board_ids': (),
        'super_pod_accelerator_types': (),
        'roce_chips': (), 'roce_subnet_rule': None, 'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        'roce_refused_subnets': (), 'roce_refused_subnets_super_pod': (), 'roce_refusal': None,
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
    {
        # The 950 generation: known on the PCI bus only.
        'family': 'A5', 'pci_device_ids': ('d806',), 'package_chip': None, 'hdk_prefix': None,
        'npu_smi_names': (), 'dies_per_npu': 1, 'soc_packages': False,
        'k8s_resource': 'huawei.com/npu', 'request_sizes': None, 'accelerator': None, 'device_plugin_suffix': None,
        'form_factor_scheduled': False,
        'accelerator_types': {}, 'card_accelerator_type': None, 'card_board_ids': (), 'inference_board_ids': (),
        'super_pod_accelerator_types': (),
        'roce_chips': (), 'roce_subnet_rule': None, 'roce_per_die': False, 'vnic': False, 'exporter_metrics': (),
        'roce_refused_subnets': (), 'roce_refused_subnets_super_pod': (), 'roce_refusal': None,
        'vnic_address_rule': None, 'hccs_ping': False, 'super_pod_max_servers': None,
    },
)

# Products Huawei documents by (device id, subsystem device id). The subsystem *vendor* is left out
# on purpose: it differs by family (0x19e5 on d802/d803, 0x0200 on d500 cards in Huawei's deployer's
# table), so keying on it would lose products (docs/development.md, "PCI ids"). ``npus`` is NPUs per
# server (per card for cards), ``chips_per_npu`` the PCI functions (npu-smi chips, dies) under one NPU
# id; a product without subsystem ids is known by name only, never from the PCI bus.
PRODUCTS = (
    {'name': 'Atlas 800I A2', 'family': '910b', 'device_id': 'd802', 'subsystem_device_ids': ('3002', '3004', '3005'),
     'chips_per_npu': 1, 'npus': 8, 'card': False, 'accelerator_type': None},
    {'name': 'Atlas 300T A2', 'family': '910b', 'device_id': 'd802', 'subsystem_device_ids': ('6000',),
     'chips_per_npu': 1, 'npus': 1, 'card': True, 'accelerator_type': None},
    {'name': 'Atlas 300I A2', 'family': '910b', 'device_id': 'd802', 'subsystem_device_ids': ('4000',),
     'chips_per_npu': 1, 'npus': 1, 'card': True, 'accelerator_type': None},
    {'name': 'Atlas 300I Pro', 'family': '310p', 'device_id': 'd500', 'subsystem_device_ids': ('0100',),
     'chips_per_npu': 1, 'npus': 1, 'card': True, 'accelerator_type': None},
    {'name': 'Atlas 300I Duo', 'family': '310p', 'device_id': 'd500', 'subsystem_device_ids': ('0110',),
     'chips_per_npu': 2, 'npus': 1, 'card': True, 'accelerator_type': None},
    # The Atlas 300V Pro shares the 300I Pro's ids (0x0100): npu-smi's product type tells them apart.
    {'name': 'Atlas 300V Pro', 'family': '310p', 'device_id': 'd500', 'subsystem_device_ids': (),
     'chips_per_npu': 1, 'npus': 1, 'card': True, 'accelerator_type': None},
    {'name': 'Atlas 800I A3', 'family': 'A3', 'device_id': 'd803', 'subsystem_device_ids': ('0100', '3003'),
     'chips_per_npu': 2, 'npus': 8, 'card': False, 'accelerator_type': 'module-a3-16'},
    # No public subsystem id for the Atlas 800T A3.
    {'name': 'Atlas 800T A3', 'family': 'A3', 'device_id': 'd803', 'subsystem_device_ids': (),
     'chips_per_npu': 2, 'npus': 8, 'card': False, 'accelerator_type': 'module-a3-16'},
    # Huawei's deployer calls it "Atlas 900 A3 Pod".
    {'name': 'Atlas 900 A3 SuperPoD', 'family': 'A3', 'device_id': 'd803',
     'subsystem_device_ids': ('3000', '3001', '3002'),
     'chips_per_npu': 2, 'npus': 8, 'card': False, 'accelerator_type': 'module-a3-16-super-pod'},
)

# Static vNPU templates per vNPU family: template -> (AI cores, memory GB, AI CPUs). Huawei's rules:
# the number after "vir" is the AI cores, "_Nc" the AI CPUs, "_Ng" the memory (MindCluster
# "Virtualization Rules"); the 310P templates' memory is from Huawei Cloud CCE's template table
# (docs/huawei-sources.md, "Static vNPUs"). ``aicores``: a whole chip's AI cores when info-vnpu does not
# say (the legacy 910 has 30 or 32, so the smaller); ``vnpu_ids``: vNPU ids per chip (phy_id*16+100
# .. +107 on Atlas inference products, .. +115 on training ones); ``resource``: the start of the
# device plugin's static vNPU resource names; ``vgroups``: whether vNPUs are placed in vGroups (Atlas
# inference products); ``chip_names``: the npu-smi chip names of the family when the name alone says
# it (the other families follow the name rules of vnpu_family).
VNPU_FAMILIES = {
    '310P': {'templates': {
        'vir01': (1, 3, 1), 'vir02': (2, 6, 2), 'vir02_1c': (2, 6, 1), 'vir04': (4, 12, 4),
        'vir04_3c': (4, 12, 3), 'vir04_3c_ndvpp': (4, 12, 3), 'vir04_4c_dvpp': (4, 12, 4)},
        'aicores': 8, 'vnpu_ids': 8, 'resource': 'Ascend310P', 'vgroups': True, 'chip_names': ()},
    '910B-training': {'templates': {'vir06_1c_16g': (6, 16, 1), 'vir12_3c_32g': (12, 32, 3)},
                      'aicores': 24, 'vnpu_ids': 16, 'resource': 'Ascend910', 'vgroups': False, 'chip_names': ()},
    '910B-inference': {'templates': {
        'vir05_1c_8g': (5, 8, 1), 'vir05_1c_16g': (5, 16, 1), 'vir10_3c_16g': (10, 16, 3),
        'vir10_3c_16g_nm': (10, 16, 3), 'vir10_3c_32g': (10, 32, 3), 'vir10_4c_16g_m': (10, 16, 4)},
        'aicores': 20, 'vnpu_ids': 16, 'resource': 'Ascend910', 'vgroups': False, 'chip_names': ()},
    # Legacy 910 (Atlas training series, 30 or 32 AI cores): the name gives the AI cores only; the
    # memory and AI CPUs are what template-info prints (MindCluster "Virtualization Templates").
    '910': {'templates': {'vir02': (2, None, None), 'vir04': (4, None, None), 'vir08': (8, None, None),
                          'vir16': (16, None, None)},
            'aicores': 30, 'vnpu_ids': 16, 'resource': 'Ascend910', 'vgroups': False, 'chip_names': ()},
    # Atlas A3, per die: the training servers' vir06_1c_16g and vir12_3c_32g ("Atlas A3 training, 48
    # AICores" per NPU), the inference servers' vir05_1c_16g and vir10_3c_32g (40 per NPU), resources
    # huawei.com/Ascend910-6c.1cpu.16g ... (MindCluster "Virtualization Templates" and "Mounting vNPUs");
    # Huawei's device plugin accepts all four on an A3 (devmanager/common/utils.go templateNameLists),
    # and npu-smi's template-info says which a die offers. npu-smi names both kinds Ascend910, so
    # ``aicores`` is the smaller. The vNPU ids of a die (phy id x 16 + 100, 16 of them) follow the A2's
    # rule: no public capture shows them on an A3 (docs/huawei-sources.md, "Outputs no public capture
    # confirms").
    'A3': {'templates': {'vir06_1c_16g': (6, 16, 1), 'vir12_3c_32g': (12, 32, 3),
                         'vir05_1c_16g': (5, 16, 1), 'vir10_3c_32g': (10, 32, 3)},
           'aicores': 20, 'vnpu_ids': 16, 'resource': 'Ascend910', 'vgroups': False, 'chip_names': _A3_CHIPS},
}

_FAMILIES = dict((row['family'], row) for row in CHIP_FAMILIES)
_FAMILY_BY_LOWER = dict((row['family'].lower(), row['family']) for row in CHIP_FAMILIES)


def chip_family_row(family):
    """The row of a chip family (any case: ``910B``, ``a3``); ValueError for a family not in the catalogue."""
    try:
        return _FAMILIES[_FAMILY_BY_LOWER[str(family).strip().lower()]]
    except KeyError:
        raise ValueError('unknown Ascend chip family %r (expected one of %s)'
                         % (family, ', '.join(sorted(_FAMILIES))))


def device_families():
    """PCI device id -> chip family."""
    return dict((device_id, row['family']) for row in CHIP_FAMILIES for device_id in row['pci_device_ids'])


def pci_products():
    """(device id, subsystem device id) -> product name, for the products the PCI bus identifies."""
    return dict(((row['device_id'], subsystem), row['name'])
                for row in PRODUCTS for subsystem in row['subsystem_device_ids'])


def product_row(name):
    """The row of a product by its name, or None."""
    return next((row for row in PRODUCTS if row['name'] == name), None)


def family_values(field):
    """Chip family -> ``field`` of its row, for the families where it is set."""
    return dict((row['family'], row[field]) for row in CHIP_FAMILIES if row[field] is not None)


def package_chips():
    """The chips package file names know, in the catalogue's order (``910``, ``910b``, ``A3``...)."""
    return tuple(row['package_chip'] for row in CHIP_FAMILIES if row['package_chip'])


def soc_package_chips():
    """The chips whose driver and firmware also come as ``-soc`` packages (``310b``)."""
    return tuple(row['package_chip'] for row in CHIP_FAMILIES if row['soc_packages'])


def hdk_prefix(package_chip):
    """The start of a chip's driver and firmware file names (``Ascend-hdk-910b``, ``Atlas-A3-hdk``)."""
    return next(row['hdk_prefix'] for row in CHIP_FAMILIES if row['package_chip'] == package_chip)


def roce_chips(subnet_rule):
    """npu-smi chip names whose NPUs carry a RoCE port the hccn role configures, for a subnet rule."""
    return tuple(name for row in CHIP_FAMILIES if row['roce_subnet_rule'] == subnet_rule
                 for name in row['roce_chips'])


def roce_row(chip_names):
    """The catalogue row whose ``roce_chips`` hold every one of ``chip_names`` (npu-smi's names of a node's
    chips), or None: a node of mixed or unknown chips has no RoCE model."""
    names = set(chip_names)
    for row in CHIP_FAMILIES:
        if names and names <= set(row['roce_chips']):
            return row
    return None


def vgroup_families():
    """The vNPU families whose chips split their AI cores into vGroups."""
    return tuple(family for family, row in VNPU_FAMILIES.items() if row['vgroups'])


def chip_names_of(family):
    """The chip names npu-smi prints for a family."""
    return chip_family_row(family)['npu_smi_names']


def super_pod_chip_names():
    """The npu-smi chip names of the families whose servers can be SuperPoD members (A3), whose
    ``npu-smi info -t spod-info`` says the SuperPoD and server index."""
    return tuple(name for row in CHIP_FAMILIES if row['super_pod_accelerator_types'] for name in row['npu_smi_names'])


def super_pod_accelerator_type(family, devices):
    """The ``accelerator-type`` of a SuperPoD member of ``family`` with ``devices`` NPU devices (dies):
    its server type with ``-super-pod`` (``module-a3-16`` -> ``module-a3-16-super-pod``) when the
    family documents that value, else None."""
    row = chip_family_row(family)
    server_type = row['accelerator_types'].get(devices)
    wanted = '%s-super-pod' % server_type if server_type else None
    return wanted if wanted in row['super_pod_accelerator_types'] else None


def whole_npu_request(family):
    """The smallest request of a family's resource above one device that holds whole NPUs (2 on A3: a
    die pair), from its dies per NPU and request sizes; 1 where an NPU is one device."""
    row = chip_family_row(family)
    dies = row['dies_per_npu']
    if dies <= 1:
        return 1
    sizes = row['request_sizes'] or range(dies, dies * 64 + 1, dies)
    return min(size for size in sizes if size > 1 and size % dies == 0)


def families_with_accelerator_type():
    """Chip families whose ``accelerator-type`` is scheduled by form factor (and must be set or derived)."""
    return tuple(row['family'] for row in CHIP_FAMILIES if row['form_factor_scheduled'])


def _squeezed(name):
    return ''.join(str(name or '').split()).upper()


def vnpu_family(chip_name):
    """The vNPU family of a chip name as npu-smi prints it (310P3, 910B4, 910B, Ascend910...), or None
    when the chip has no static vNPU templates we know (310, 310B). Give the name as printed: an A3
    die is ``Ascend910``, which without its ``Ascend`` would read as no chip at all."""
    squeezed = _squeezed(chip_name)
    for family, row in VNPU_FAMILIES.items():
        if squeezed and squeezed in [_squeezed(name) for name in row['chip_names']]:
            return family
    name = (chip_name or '').strip().upper().replace('ASCEND', '').strip()
    if name.startswith('310P'):
        return '310P'
    if name in [legacy.upper() for legacy in _LEGACY_910_CHIPS]:
        return '910'
    if re.match(r'^910B[1-4]', name):
        # 910B3/910B4 are the 20-core inference chips, 910B1/910B2(C) the 24-core training ones
        # (MindCluster device plugin's template lists per chip).
        return '910B-inference' if name[4] in '34' else '910B-training'
    return None


def device_plugin_families():
    """``accelerator`` label -> ``{suffix, resource}`` of our device plugin DaemonSet for it, one per label."""
    return dict((row['accelerator'], {'suffix': row['device_plugin_suffix'], 'resource': row['k8s_resource']})
                for row in CHIP_FAMILIES if row['accelerator'])


def accelerator_labels():
    """The ``accelerator`` label values the device plugin documents, each once, in the catalogue's order."""
    labels = []
    for row in CHIP_FAMILIES:
        if row['accelerator'] and row['accelerator'] not in labels:
            labels.append(row['accelerator'])
    return labels
