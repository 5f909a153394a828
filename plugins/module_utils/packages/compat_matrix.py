# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compatibility matrix: which Ascend versions public sources say work together.

Data only; the meaning of a row is documented in compat.py. One row per published
statement, each naming the public source it comes from (docs/huawei-sources.md). Where
sources disagree both rows stay: compat.py treats rows with the same key as
alternatives.

Reading choices made when writing the rows down:

* A driver named in a pairing (``24.1.rc2``) is written as its line (``24.1.rc2.x``) so
  hot-fix builds of that release (``24.1.rc2.2``) fit as well.
* Firmware in the CANN download table is the version shipped with that HDK; it is
  written as a minimum, because between driver and firmware the authority is the
  driver's own ``compatible_version_fw`` range, which compat.py checks separately.
* "8.5.0 with 25.3.x or 25.5.x" style statements are prefix alternatives.

Users add rows with the ``extra_rows`` option of ``npu.ascend.ascend_compat`` (or
replace all of them with ``replace_rows``), in the same shape.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOWNLOAD_TABLE = 'Ascend documentation: CANN and HDK download table (Atlas A2 910B, Atlas 310P)'
RELEASE_PAIRINGS = 'Ascend CANN and HDK release notes: version pairings'
A2_INFERENCE = 'Ascend documentation: Atlas A2 inference products, minimum CANN and HDK'
TORCH_NPU = 'Ascend/pytorch (torch_npu) README: version table'
MINDSPORE = 'MindSpore installation guide: version dependencies'
MINDCLUSTER = 'MindCluster documentation: version compatibility'
# https://www.hiascend.com/document/detail/en/canncommercial/850/releasenote/releasenote_0000.html
CANN_850_RELEASE_NOTES = 'Ascend CANN 8.5.0 release notes: mapping between CANN and driver versions'
DUO_OS = 'Ascend documentation: Atlas 300I Duo OS support (Ubuntu 22.04, openEuler 22.03)'
A2_OS = 'Ascend documentation: Atlas 800I A2 OS support (openEuler 24.03 SP1)'
# Atlas A3 (docs/huawei-sources.md, "Atlas A3"): gitcode cann/driver,
# scripts/package/custom/driver/ascend910_93/scripts/version_cap.map (235,24.0.rc2 and 236,24.1.rc3).
A3_DRIVER_FLOOR = "Huawei's open-source NPU driver: the A3 driver's version_cap.map (the oldest driver an A3 takes)"
# https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/Ascend%20HDK/Ascend%20HDK%2025.3.RC1/
A3_HDK_25_3_RC1 = ('Ascend HDK 25.3.RC1 download directory: Atlas-A3-hdk-npu-driver_25.3.rc1 '
                   'with Atlas-A3-hdk-npu-firmware_7.8.0.2.212')
A3_CANN_PACKAGES = 'Ascend CANN downloads: the first Atlas A3 CANN package is Atlas-A3-cann-kernels 8.1.RC1'
A3_OS = 'ascend-deployer: minimum HDK per OS (Atlas 900 A3 Pod, openEuler 24.03 SP1)'

COMPAT_MATRIX = [
    # CANN -> HDK driver / firmware, from the download table.
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b', '310p'],
     'cann': '8.2.RC1', 'driver': '25.0.rc1.1.x', 'firmware': '>=7.7.0.1.231'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b', '310p'],
     'cann': '8.0.RC3', 'driver': '24.1.rc2.x', 'firmware': '>=7.3.0.1.231'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b', '310p'],
     'cann': ['8.0.RC2', '8.0.RC1'], 'driver': '24.1.rc1.x', 'firmware': '>=7.1.0.6.220'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b'],
     'cann': ['7.0.0', '7.0.1'], 'driver': '23.0.3.x', 'firmware': '>=7.1.0.5.220'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['310p'],
     'cann': ['7.0.0', '7.0.1'], 'driver': '23.0.1.x', 'firmware': '>=7.1.0.4.220'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b'],
     'cann': '7.0.RC1', 'driver': '23.0.rc3.x', 'firmware': '>=6.4.0.4.220'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['310p'],
     'cann': '7.0.RC1', 'driver': '23.0.rc3.x', 'firmware': '>=7.0.0.5.242'},
    {'source': DOWNLOAD_TABLE, 'chip_families': ['910b', '310p'],
     'cann': '6.3.RC1', 'driver': '23.0.rc1.x', 'firmware': '>=6.3.0.1.241'},

    # CANN 8.5.0 -> Ascend HDK, Huawei's own table in the 8.5.0 release notes.
    {'source': CANN_850_RELEASE_NOTES, 'cann': '8.5.0.x', 'driver': ['25.5.x', '25.3.x', '25.2.x', '25.0.x']},

    # Other CANN -> driver pairings.
    {'source': RELEASE_PAIRINGS, 'cann': '8.0.0', 'driver': ['24.1.0.x', '24.1.rc3.x']},
    {'source': RELEASE_PAIRINGS, 'cann': '8.1.RC1', 'driver': '25.0.rc1.x'},
    {'source': RELEASE_PAIRINGS, 'cann': '8.2.RC1', 'driver': '25.2.0.x'},
    {'source': RELEASE_PAIRINGS, 'cann': '9.0.0.x', 'driver': ['25.5.x', '26.0.x']},
    {'source': RELEASE_PAIRINGS, 'cann': '9.1.0.x', 'driver': '26.1.0.x'},

    # A floor for the A2 inference servers, whatever else is installed.
    {'source': A2_INFERENCE, 'key': [], 'chip_families': ['910b'], 'products': ['Atlas 800I A2'],
     'cann': '>=8.0.RC1', 'driver': '>=24.1.rc1'},

    # torch_npu -> CANN.
    {'source': TORCH_NPU, 'torch_npu': '2.1.0.post3', 'cann': '8.0.RC1'},
    {'source': TORCH_NPU, 'torch_npu': '2.3.1', 'cann': '8.0.RC2'},
    {'source': TORCH_NPU, 'torch_npu': '2.4.0', 'cann': '8.0.RC3'},
    {'source': TORCH_NPU, 'torch_npu': '2.4.0.post2', 'cann': '8.0.0'},
    {'source': TORCH_NPU, 'torch_npu': '2.5.1', 'cann': '8.1.RC1'},
    {'source': TORCH_NPU, 'torch_npu': '2.6.0', 'cann': '8.2.RC1'},
    {'source': TORCH_NPU, 'torch_npu': '2.7.1', 'cann': '8.3.RC1'},
    {'source': TORCH_NPU, 'torch_npu': ['2.8.0.post2', '2.9.0'], 'cann': '8.5.0'},
    {'source': TORCH_NPU, 'torch_npu': '2.10.0', 'cann': '9.0.0'},

    # MindSpore -> CANN (and HDK where the guide names it).
    {'source': MINDSPORE, 'mindspore': ['2.3.0', '2.3.1'],
     'cann': '8.0.RC2', 'driver': '24.1.rc2.x', 'firmware': '>=7.3.0.1.231'},
    {'source': MINDSPORE, 'mindspore': '2.6.0', 'cann': '8.2.RC1'},
    {'source': MINDSPORE, 'mindspore': '2.7.2', 'cann': '8.5.0'},

    # MindCluster -> CANN and HDK.
    {'source': MINDCLUSTER, 'mindcluster': '7.3.0.x', 'cann': '8.5.x', 'driver': '25.5.x'},
    {'source': MINDCLUSTER, 'mindcluster': '26.0.0.x', 'cann': ['8.5.x', '9.0.x'], 'driver': ['25.5.x', '26.0.x']},

    # Atlas A3 floors: whatever else a row allows, an A3 takes no driver older than its driver's
    # version_cap.map names and no CANN older than the first one published for it (8.0.x has no A3
    # kernels package). The CANN -> driver pairings above without chip families apply to A3 as well
    # (8.1.RC1, 8.2.RC1, 8.5.0, 9.0.0, 9.1.0); 8.3.RC1 has no published pairing and stays unknown.
    {'source': A3_DRIVER_FLOOR, 'key': [], 'chip_families': ['A3'], 'driver': '>=24.0.rc2'},
    {'source': A3_CANN_PACKAGES, 'key': [], 'chip_families': ['A3'], 'cann': '>=8.1.RC1'},
    # The firmware Huawei ships with an A3 driver, as a minimum (as the download table rows above).
    {'source': A3_HDK_25_3_RC1, 'chip_families': ['A3'], 'driver': '25.3.rc1.x', 'firmware': '>=7.8.0.2.212'},

    # Minimum HDK per operating system and product.
    {'source': DUO_OS, 'chip_families': ['310p'], 'products': ['Atlas 300I Duo'],
     'os': ['ubuntu 22.04', 'openeuler 22.03'], 'driver': '>=24.1.rc2', 'firmware': '>=7.3.0.1.231'},
    {'source': A2_OS, 'chip_families': ['910b'], 'products': ['Atlas 800I A2'],
     'os': 'openeuler 24.03 sp1', 'driver': '>=25.2.0', 'firmware': '>=7.7.0.2.220'},
    {'source': A3_OS, 'chip_families': ['A3'], 'products': ['Atlas 900 A3 SuperPoD'],
     'os': 'openeuler 24.03 sp1', 'driver': '>=25.2.0', 'firmware': '>=7.7.0.2.220'},
]
