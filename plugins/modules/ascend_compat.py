#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ascend_compat
short_description: Check that an Ascend driver, firmware and CANN stack fit together
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Checks the desired stack (from the controller) together with what the node has against the
    collection's compatibility matrix, a list of rows from public Huawei, torch_npu, MindSpore and
    MindCluster sources (see C(plugins/module_utils/packages/compatibility.py) for what a row means).
  - Also checks the ranges the driver and the firmware declare for each other (C(compatible_version_fw)
    and C(compatible_version_drv) in their version.info) when they are known.
  - Fails naming the conflicting pair, the versions it has, and the versions that would fit. Changes
    nothing; runs in check mode.
  - Fails closed on pairs the matrix does not know. A stack with a CANN release and a driver that no
    applicable row relates (a CANN release without rows, or with rows for other chip families or
    products only), or a C(torch_npu), C(mindspore) or C(mindcluster) version without a row for its
    CANN, is refused naming the pair and the rows that exist for that release, unless
    O(allow_unknown) is set. A firmware no row or declared range speaks about is reported in
    RV(unchecked) but not refused (see C(plugins/module_utils/packages/compatibility.py) for why).
options:
  stack:
    description:
      - The desired versions. Keys C(cann), C(driver), C(firmware), C(torch_npu), C(mindspore),
        C(mindcluster), C(os), C(chip_family), C(product), C(compatible_version_fw),
        C(compatible_version_drv); missing or null keys are not checked (or come from the node, see
        O(use_installed)).
    type: dict
    default: {}
  use_installed:
    description:
      - Fill the keys the stack leaves out from the node. C(cann) from the installed toolkit, C(driver) and
        C(firmware) from their version files, C(chip_family) and C(product) from the PCI devices, C(os) from
        C(/etc/os-release).
      - The driver's C(compatible_version_fw) and the firmware's C(compatible_version_drv) are taken from the
        node only when the installed version is the one the stack asks for.
    type: bool
    default: true
  install_path:
    description:
      - Install path of the Ascend packages on the node.
    type: path
    default: /usr/local/Ascend
  extra_rows:
    description:
      - More matrix rows, in the same shape as the built-in ones (C(source), C(chip_families), C(cann),
        C(driver), C(firmware) and so on).
    type: list
    elements: dict
    default: []
  replace_rows:
    description:
      - Use only O(extra_rows) and ignore the built-in matrix.
    type: bool
    default: false
  allow_unknown:
    description:
      - Accept pairs no row of the matrix speaks about (they are still returned in RV(unknown)).
      - Prefer adding a row to O(extra_rows) naming the source that validated the pair.
    type: bool
    default: false
  fail_on_conflict:
    description:
      - Fail when there is a conflict or a refused unknown pair. With V(false) they are only returned.
    type: bool
    default: true
notes:
  - Supports check mode.
seealso:
  - module: npu.ascend.ascend_facts
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.read_only
'''

EXAMPLES = r'''
- name: Preflight, the versions the play will install must fit the node
  npu.ascend.ascend_compat:
    stack:
      cann: 8.2.RC1
      driver: 25.0.rc1.1
      firmware: 7.7.0.1.231

- name: Allow a pairing a vendor confirmed for us
  npu.ascend.ascend_compat:
    stack:
      cann: 8.3.RC1
      driver: 25.2.1
    extra_rows:
      - source: vendor support ticket 12345
        cann: 8.3.RC1
        driver: 25.2.x
'''

RETURN = r'''
ok:
  description: True when no conflict was found and no unknown pair was refused.
  returned: always
  type: bool
stack:
  description: The stack that was checked (the desired one plus what came from the node).
  returned: always
  type: dict
  sample: {cann: 8.2.RC1, driver: 25.0.rc1.1, firmware: 7.7.0.1.231, chip_family: 910b}
conflicts:
  description: One entry per conflict.
  returned: always
  type: list
  elements: dict
  sample:
    - pair: [cann, driver]
      have: {cann: 8.2.RC1, driver: 24.1.rc2}
      fits: [25.0.rc1.1.x, 25.2.0.x]
      source: "Ascend documentation: CANN and HDK download table (Atlas A2 910B, Atlas 310P)"
unknown:
  description:
    - One entry per pair the matrix has no applicable row for, with the rows that exist for the
      keyed component's version (whatever their chip family or product).
    - Refused (RV(ok) false) unless O(allow_unknown).
  returned: always
  type: list
  elements: dict
  sample:
    - pair: [cann, driver]
      have: {cann: 8.3.RC1, driver: 25.2.0}
      rows: []
      chip_family: 910b
      product: null
message:
  description: The sentences describing the conflicts and the refused unknown pairs; empty when RV(ok).
  returned: always
  type: str
checked:
  description: The pairs some row or declared range spoke about.
  returned: always
  type: list
  elements: list
unchecked:
  description: Stack components no applicable row or range speaks about (neither fit nor conflict is known).
  returned: always
  type: list
  elements: str
'''

import os
import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read
from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.module_utils.hardware import pci
from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state
from ansible_collections.npu.ascend.plugins.module_utils.packages import runfile
from ansible_collections.npu.ascend.plugins.module_utils.packages import version_files
from ansible_collections.npu.ascend.plugins.module_utils.packages.compat_matrix import COMPAT_MATRIX

SYSFS_PCI_DEVICES = '/sys/bus/pci/devices'
OS_RELEASE = '/etc/os-release'


def _read(path):
    # A FIFO or a device in place of a small file must not hang the module (bounded_read).
    return bounded_read.read_bytes(path).decode('utf-8')


def read_os_release(path=OS_RELEASE):
    try:
        return compatibility.parse_os_release(_read(path))
    except (IOError, OSError, ValueError):
        return None


def read_pci_identity():
    try:
        addresses = sorted(os.listdir(SYSFS_PCI_DEVICES))
    except OSError:
        return None, None
    devices = []
    for address in addresses:
        files = {}
        for name in ('vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'class'):
            try:
                files[name] = _read(os.path.join(SYSFS_PCI_DEVICES, address, name))
            except (IOError, OSError, ValueError):
                files[name] = None
        try:
            devices.append(pci.parse_sysfs_device(address, files))
        except ValueError:
            continue
    npus = pci.npu_devices(devices)
    families = sorted(set(device['chip_family'] for device in npus if device.get('chip_family')))
    products = sorted(set(device['product'] for device in npus if device.get('product')))
    return (families[0] if families else None), (products[0] if products else None)


def node_stack(desired, install_path):
    """Fill what ``desired`` leaves out from the node."""
    installed = install_state.read_all_installed(install_path, platform.machine(), install_state.read_install_record())
    damaged = [entry['damaged'] for entry in installed.values() if entry and entry.get('damaged')]
    if damaged:
        # Judging the stack without that component would pass a node whose versions cannot be told.
        raise version_files.VersionFileError('; '.join(damaged))
    family = product = None
    if 'chip_family' not in desired or 'product' not in desired:
        family, product = read_pci_identity()
    return compatibility.probe_stack(desired, installed, family, product, None if 'os' in desired else read_os_release())


def main():
    module = AnsibleModule(
        argument_spec=dict(
            stack=dict(type='dict', default={}),
            use_installed=dict(type='bool', default=True),
            install_path=dict(type='path', default=runfile.DEFAULT_INSTALL_PATH),
            extra_rows=dict(type='list', elements='dict', default=[]),
            replace_rows=dict(type='bool', default=False),
            allow_unknown=dict(type='bool', default=False),
            fail_on_conflict=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )
    params = module.params
    unknown = sorted(set(params['stack']) - set(compatibility.STACK_FIELDS))
    if unknown:
        module.fail_json(msg='unknown stack keys %s (known: %s)' % (', '.join(unknown), ', '.join(compatibility.STACK_FIELDS)))
    desired = dict((key, str(value) if value is not None else None) for key, value in params['stack'].items())
    try:
        stack = node_stack(desired, params['install_path']) if params['use_installed'] else dict(
            (key, value) for key, value in desired.items() if value not in (None, ''))
    except version_files.VersionFileError as error:
        module.fail_json(msg='cannot read the installed Ascend stack: %s' % error)
    try:
        report = compatibility.check_stack(stack, COMPAT_MATRIX, params['extra_rows'], params['replace_rows'],
                                           params['allow_unknown'])
    except ValueError as error:
        module.fail_json(msg='cannot check the stack: %s' % error, stack=stack)
    sentences = []
    if report['conflicts']:
        sentences.append('incompatible Ascend stack: %s' % compatibility.describe_conflicts(report['conflicts']))
    if report['unknown'] and not params['allow_unknown']:
        sentences.append('unknown Ascend stack: %s' % compatibility.describe_unknown(report['unknown']))
    result = dict(changed=False, stack=stack, message='; '.join(sentences), **report)
    if not report['ok'] and params['fail_on_conflict']:
        module.fail_json(msg=result['message'], **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
