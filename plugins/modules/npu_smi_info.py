#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: npu_smi_info
short_description: Read the state of Huawei Ascend NPUs with npu-smi
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs C(npu-smi info) and returns the tool and driver versions, one entry per chip (health, power,
    temperature, memory) and the processes using the NPUs.
  - Further subcommands run only when asked for (O(board), O(list)).
  - Fails with an explanation when npu-smi reports an error, for example C(-8005) (the device is not
    started or the driver is not loaded), when it does not answer within O(timeout), or when the versions
    it prints are not Huawei version strings (shell characters, blanks, control characters).
  - Read-only; runs in check mode too.
options:
  binary_path:
    description:
      - Path of the C(npu-smi) binary.
      - By default it is searched in E(PATH), C(/usr/local/sbin) and C(/usr/local/bin).
    type: path
  board:
    description:
      - Also run C(npu-smi info -t board -i N) for every NPU and return the results in RV(npu_smi.boards).
      - On a node whose chips can be SuperPoD members (Atlas A3), also run C(npu-smi info -t spod-info) on its first
        die and return the result in RV(npu_smi.super_pod).
    type: bool
    default: false
  list:
    description:
      - Also run C(npu-smi info -l) and return the result in RV(npu_smi.list).
    type: bool
    default: false
  timeout:
    description:
      - Seconds each C(npu-smi) run may take before it is stopped (through C(timeout)) and the module fails.
        C(npu-smi) answers in seconds on a healthy node; a hung driver can make it wait forever.
      - Must be a positive number of seconds.
    type: int
    default: 120
notes:
  - Supports check mode.
seealso:
  - module: npu.ascend.ascend_facts
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.read_only
'''

EXAMPLES = r'''
- name: Read the NPU table
  npu.ascend.npu_smi_info:
  register: npu

- name: Every chip must be healthy
  ansible.builtin.assert:
    that: npu.npu_smi.chips | rejectattr('healthy') | list | length == 0

- name: Read the running firmware of every board as well
  npu.ascend.npu_smi_info:
    board: true
  register: npu_boards
'''

RETURN = r'''
npu_smi:
  description: What npu-smi reported.
  returned: success
  type: dict
  contains:
    binary:
      description: The npu-smi binary that was run.
      type: str
      sample: /usr/local/sbin/npu-smi
    tool_version:
      description: Version of npu-smi itself.
      type: str
      sample: 25.0.rc1.1
    driver_version:
      description: Driver version npu-smi reports.
      type: str
      sample: 25.0.rc1.1
    chips:
      description:
        - One entry per chip. C(health) is npu-smi's Health column (V(OK), V(Warning), V(Alarm), V(Critical) or
          V(UNKNOWN)); C(healthy) is true when it says V(OK), the one judgement of health every role uses.
      type: list
      elements: dict
      sample:
        - npu_id: 0
          chip_id: 0
          phy_id: null
          name: 910B4
          health: OK
          healthy: true
          power_w: 87.2
          temp_c: 33
          bus_id: "0000:C1:00.0"
          aicore_pct: 0
          memory_used_mb: 0
          memory_total_mb: 0
          hbm_used_mb: 3383
          hbm_total_mb: 32768
          hugepages_used: 0
          hugepages_total: 0
    processes:
      description: Processes using the NPUs (npu_id, chip_id, pid, name, memory_mb).
      type: list
      elements: dict
    boards:
      description:
        - With O(board=true), one dict per NPU from C(npu-smi info -t board -i N); keys are the printed
          keys in lower case with C(_) for blanks (C(firmware_version), C(board_id), C(pcie_bus_info)...)
          plus C(npu_id).
      type: list
      elements: dict
      returned: when O(board=true)
    super_pod:
      description:
        - With O(board=true), the SuperPoD membership of an Atlas A3 node from C(npu-smi info -t spod-info) of its
          first die (C(super_pod_id), C(server_index), C(super_pod_size), C(sdid)), or null for other chips and for a
          node that is no member (npu-smi refuses the query).
      type: dict
      returned: when O(board=true)
      sample: {super_pod_id: 0, server_index: 1, super_pod_size: 384, sdid: 4194304}
    list:
      description: With O(list=true), C(npu-smi info -l) as C(total_count) and C(npus) (npu_id, chip_count).
      type: dict
      returned: when O(list=true)
commands:
  description: The argv of every npu-smi run.
  returned: always
  type: list
  elements: list
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner


def main():
    module = AnsibleModule(
        argument_spec=dict(
            binary_path=dict(type='path'),
            board=dict(type='bool', default=False),
            list=dict(type='bool', default=False),
            timeout=dict(type='int', default=npu_smi_runner.DEFAULT_TIMEOUT_SECONDS),
        ),
        supports_check_mode=True,
    )
    try:
        reader = npu_smi_runner.reader_for(module.params, module.get_bin_path, module.run_command)
    except ValueError as problem:
        module.fail_json(msg=str(problem), commands=[])
    try:
        result = reader.read(board=module.params['board'], list_npus=module.params['list'])
    except npu_smi_runner.NpuSmiFailure as failure:
        module.fail_json(msg=str(failure), commands=reader.commands)
    module.exit_json(changed=False, npu_smi=result, commands=reader.commands)


if __name__ == '__main__':
    main()
