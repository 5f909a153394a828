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
    that: npu.npu_smi.chips | rejectattr('health', 'equalto', 'OK') | list | length == 0

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
      description: One entry per chip.
      type: list
      elements: dict
      sample:
        - npu_id: 0
          chip_id: 0
          phy_id: null
          name: 910B4
          health: OK
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

import re
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils import npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.version_files import version_problem

NPU_SMI_DIRS = ['/usr/local/sbin', '/usr/local/bin']
ENVIRONMENT = {'LC_ALL': 'C', 'LANG': 'C'}
# timeout(1) exits 124 when it stopped npu-smi with SIGTERM; when SIGKILL was needed it reports
# 137, or is itself killed with its process group (-9).
TIMEOUT_RCS = (124, 137, -9)
KILL_AFTER_SECONDS = 10

# What npu-smi's DCMI error codes mean for the operator, where the facts reference says.
ERROR_MEANINGS = {
    -8005: ('the NPU device is not started or the NPU driver is not loaded',
            'reboot the node; if the error stays, reinstall the driver (and check the firmware)'),
}


def explain_error(error, rc):
    meaning, fix = ERROR_MEANINGS.get(error.code, (None, None))
    message = 'npu-smi failed (rc=%s): %s' % (rc, error.message)
    if error.code is not None:
        message += ' [error code %s]' % error.code
    if meaning:
        message += '. This means %s; %s.' % (meaning, fix)
    else:
        message += '. Check that the driver is installed and loaded (lsmod, /dev/davinci*) and see the npu-smi log.'
    return message


def board_key(name):
    return re.sub(r'[^0-9a-z]+', '_', name.strip().lower()).strip('_')


def normalize_board(npu_id, values):
    board = dict((board_key(key), value) for key, value in values.items())
    board['npu_id'] = npu_id
    return board


def npu_ids(info):
    seen = []
    for chip in info['chips']:
        if chip.get('npu_id') is not None and chip['npu_id'] not in seen:
            seen.append(chip['npu_id'])
    return seen


class NpuSmi(object):
    def __init__(self, module, binary, timeout):
        self.module = module
        self.binary = binary
        self.timeout = timeout
        self.commands = []

    def run(self, *args):
        argv = [self.binary] + list(args)
        self.commands.append(argv)
        command = ['timeout', '--kill-after=%d' % KILL_AFTER_SECONDS, str(self.timeout)] + argv
        started = time.time()
        rc, out, err = self.module.run_command(command, environ_update=ENVIRONMENT)
        if rc in TIMEOUT_RCS and time.time() - started >= self.timeout:
            self.fail('%s did not answer within %s seconds and was stopped; the NPU driver may be hung. Fix: look '
                      'at dmesg and /var/log/npu/slog for driver errors, reboot the node if npu-smi hangs again; if '
                      'the node is only slow, raise the timeout (npu_smi_info timeout, hdk_npu_smi_timeout in the '
                      'hdk role)' % (' '.join(argv), self.timeout))
        text = out if out.strip() else err
        error = npu_smi.detect_error(out + '\n' + err)
        if error is not None:
            self.fail(explain_error(error, rc))
        if rc != 0:
            self.fail('%s failed (rc=%s): %s' % (' '.join(argv), rc, (err or out).strip() or 'no output'))
        return text

    def fail(self, msg):
        self.module.fail_json(msg=msg, commands=self.commands)

    def parse(self, parser, text, what):
        try:
            return parser(text)
        except npu_smi.NpuSmiError as error:
            self.fail(explain_error(error, 0))
        except ValueError as error:
            self.fail('cannot read the output of npu-smi %s: %s' % (what, error))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            binary_path=dict(type='path'),
            board=dict(type='bool', default=False),
            list=dict(type='bool', default=False),
            timeout=dict(type='int', default=120),
        ),
        supports_check_mode=True,
    )
    if module.params['timeout'] <= 0:
        module.fail_json(msg='timeout must be a positive number of seconds, got %s' % module.params['timeout'],
                         commands=[])
    binary = module.params['binary_path'] or module.get_bin_path('npu-smi', opt_dirs=NPU_SMI_DIRS)
    if not binary:
        module.fail_json(msg='npu-smi not found in PATH, %s; is the NPU driver installed?' % ', '.join(NPU_SMI_DIRS),
                         commands=[])
    tool = NpuSmi(module, binary, module.params['timeout'])
    info = tool.parse(npu_smi.parse_info, tool.run('info'), 'info')
    for key in ('tool_version', 'driver_version'):
        # These versions reach comparisons, labels and messages; a value no Huawei tool prints is refused.
        problem = version_problem(info[key]) if info[key] is not None else ''
        if problem:
            tool.fail('npu-smi info printed a %s that is not a version: %s. Fix: check that %s is Huawei\'s '
                      'npu-smi (reinstall the driver if it was replaced)' % (key.replace('_', ' '), problem, binary))
    result = {
        'binary': binary,
        'tool_version': info['tool_version'],
        'driver_version': info['driver_version'],
        'chips': info['chips'],
        'processes': info['processes'],
    }
    if module.params['board']:
        result['boards'] = []
        for npu_id in npu_ids(info):
            text = tool.run('info', '-t', 'board', '-i', str(npu_id))
            board = normalize_board(npu_id, tool.parse(npu_smi.parse_key_values, text, 'board'))
            problem = version_problem(board['firmware_version']) if board.get('firmware_version') else ''
            if problem:
                tool.fail('npu-smi info -t board -i %s printed a firmware version that is not a version: %s. Fix: check '
                          'that %s is Huawei\'s npu-smi (reinstall the driver if it was replaced)' % (npu_id, problem, binary))
            result['boards'].append(board)
    if module.params['list']:
        result['list'] = tool.parse(npu_smi.parse_info_list, tool.run('info', '-l'), 'info -l')
    module.exit_json(changed=False, npu_smi=result, commands=tool.commands)


if __name__ == '__main__':
    main()
