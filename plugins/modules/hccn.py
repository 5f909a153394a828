#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: hccn
short_description: Set the RoCE address, gateway and detect address of Huawei Ascend NPUs with hccn_tool
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Reads each given NPU's address, netmask, gateway and detect address with C(hccn_tool -g), sets only what
    differs (C(-ip -s address A netmask M), C(-gateway -s gateway G), C(-netdetect -s address D), in that order,
    since the gateway and detect address belong to the NPU's subnet), then reads them back and fails when the NPU
    does not hold what was set.
  - C(hccn_tool) saves what it sets in C(/etc/hccn.conf), which the driver restores at boot
    (C(hccn_tool -cfg recovery)); the module reports whether that file now holds what is live
    (RV(conf_saved)) and warns when it does not, or when it cannot say (RV(conf_problems)).
  - An NPU never configured answers C(-ip -g) and C(-gateway -g) with C(hccn_tool)'s error (C(Get ipconf failed,
    because no ip was preset there!)); that reads as unset, so the first address of a new server is planned and set
    like any other (C(docs/hccn.md)).
  - Refuses, before any C(hccn_tool) run, an NPU listed twice and a value two tools would read differently (leading
    zeros such as C(010.0.0.1), whitespace or a newline around it).
  - C(hccn_tool) refuses an address another NPU of the node holds, or one in 192.168.1.0/24 or 192.168.2.0/24;
    the module then fails with its output, naming the node and the NPU. Plan the addresses of the whole fleet first (the C(npu.ascend.hccn)
    role checks them with P(npu.ascend.hccn_fleet_plan#filter)).
options:
  npus:
    description: The wanted state of each NPU to configure.
    type: list
    elements: dict
    required: true
    suboptions:
      npu:
        description: The NPU id (C(hccn_tool -i)).
        type: int
        required: true
      address:
        description: The NPU's address.
        type: str
        required: true
      netmask:
        description: Its netmask, such as C(255.255.255.0).
        type: str
        required: true
      gateway:
        description: Its gateway; left as it is when unset.
        type: str
      netdetect:
        description: The address the NPU probes to judge its net health; left as it is when unset.
        type: str
  binary_path:
    description:
      - Path of C(hccn_tool).
      - By default C(<install_path>/driver/tools/hccn_tool), then C(/usr/local/bin/hccn_tool).
    type: path
  install_path:
    description: The driver's install path.
    type: path
    default: /usr/local/Ascend
  timeout:
    description: Seconds each C(hccn_tool) run may take before it is stopped and the module fails.
    type: int
    default: 30
notes:
  - Needs root (C(become)).
seealso:
  - module: npu.ascend.hccn_info
extends_documentation_fragment:
  - npu.ascend.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - Each NPU's settings before and after, one C(key_N=value) line each as in C(/etc/hccn.conf).
  idempotent:
    support: full
'''

EXAMPLES = r'''
- name: Give NPU 0 and 1 their addresses
  npu.ascend.hccn:
    npus:
      - npu: 0
        address: 10.0.0.10
        netmask: 255.255.255.0
        gateway: 10.0.0.1
        netdetect: 10.0.0.1
      - npu: 1
        address: 10.0.0.11
        netmask: 255.255.255.0
        gateway: 10.0.0.1
        netdetect: 10.0.0.1
  become: true
'''

RETURN = r'''
changes:
  description: Per NPU, what was set (or would be, in check mode) - C(npu) and the keys C(address), C(gateway), C(netdetect).
  returned: always
  type: list
  elements: dict
  sample:
    - npu: 0
      set: [address, netdetect]
npus:
  description: Each NPU's settings read back after the change (before it, in check mode).
  returned: success
  type: list
  elements: dict
conf_saved:
  description:
    - Whether C(/etc/hccn.conf) holds the live settings of every NPU, and nothing else for them (false when it gives
      a key twice, one address to two NPUs or an ambiguous value, RV(conf_problems)); null when it is absent or
      cannot be read.
  returned: success
  type: bool
conf_problems:
  description:
    - Why C(/etc/hccn.conf) is not one clear answer for the next boot (a key given twice, one address on two NPUs,
      an address with leading zeros), or why it could not be read (a FIFO or a directory there, too large); each
      names the file. The module warns with them.
  returned: success
  type: list
  elements: str
conf_differences:
  description: Per NPU id, the keys C(/etc/hccn.conf) does not hold as live.
  returned: success
  type: dict
conf_sha256:
  description:
    - The SHA-256 of C(/etc/hccn.conf) after the change (null when it cannot be read); the C(npu.ascend.hccn) role
      records it with the gate's verdict, so that a later change of the file takes the verdict away.
  returned: success
  type: str
commands:
  description: The argv of every hccn_tool run.
  returned: always
  type: list
  elements: list
'''

import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool

SETTING_READS = ('address', 'gateway', 'netdetect')


def _conf_lines(state):
    return ''.join('%s_%d=%s\n' % (key, state['npu'], state.get(key) or '')
                   for key in ('address', 'netmask', 'gateway', 'netdetect'))


def _check_wanted(module, wanted):
    problems = hccn_tool_runner.wanted_problems(wanted)
    if problems:
        module.fail_json(msg='npu.ascend.hccn on %s refused its npus before any hccn_tool run: %s; fix: correct those '
                             'values (the npu.ascend.hccn role plans them from hccn_addresses or hccn_base_address, '
                             'hccn_netmask, hccn_gateway and hccn_detect_address)'
                             % (platform.node(), '; '.join(problems)), commands=[])


def main():
    module = AnsibleModule(
        argument_spec=dict(
            npus=dict(type='list', elements='dict', required=True, options=dict(
                npu=dict(type='int', required=True),
                address=dict(type='str', required=True),
                netmask=dict(type='str', required=True),
                gateway=dict(type='str'),
                netdetect=dict(type='str'),
            )),
            binary_path=dict(type='path'),
            install_path=dict(type='path', default='/usr/local/Ascend'),
            timeout=dict(type='int', default=hccn_tool_runner.DEFAULT_TIMEOUT_SECONDS),
        ),
        supports_check_mode=True,
    )
    if module.params['timeout'] <= 0:
        module.fail_json(msg='timeout must be a positive number of seconds, got %s' % module.params['timeout'],
                         commands=[])
    wanted = module.params['npus']
    _check_wanted(module, wanted)
    binary = hccn_tool_runner.find_hccn_tool(module.params['binary_path'], module.params['install_path'])
    if not binary:
        module.fail_json(msg=hccn_tool_runner.missing_tool_message(module.params['binary_path']), commands=[])
    reader = hccn_tool_runner.HccnReader(module.run_command, binary, module.params['timeout'])
    try:
        before = [reader.read_npu(entry['npu'], SETTING_READS) for entry in wanted]
    except hccn_tool_runner.HccnFailure as failure:
        module.fail_json(msg=str(failure), commands=reader.commands)
    changes = []
    for entry, live in zip(wanted, before):
        keys = hccn_tool.npu_state_differences(live, entry)
        if keys:
            changes.append({'npu': entry['npu'], 'set': keys})
    diff = {'before': ''.join(_conf_lines(state) for state in before)}
    after = before
    if changes and not module.check_mode:
        by_npu = dict((entry['npu'], entry) for entry in wanted)
        for change in changes:
            entry = by_npu[change['npu']]
            try:
                if 'address' in change['set']:
                    reader.set_address(entry['npu'], entry['address'], entry['netmask'])
                if 'gateway' in change['set']:
                    reader.set_gateway(entry['npu'], entry['gateway'])
                if 'netdetect' in change['set']:
                    reader.set_netdetect(entry['npu'], entry['netdetect'])
            except hccn_tool_runner.HccnFailure as failure:
                module.fail_json(msg='setting NPU %s (%s) was refused: %s' % (entry['npu'], ', '.join(change['set']), failure),
                                 changes=changes, commands=reader.commands)
        try:
            after = [reader.read_npu(entry['npu'], SETTING_READS) for entry in wanted]
        except hccn_tool_runner.HccnFailure as failure:
            module.fail_json(msg=str(failure), changes=changes, commands=reader.commands)
        for entry, live in zip(wanted, after):
            left = hccn_tool.npu_state_differences(live, entry)
            if left:
                module.fail_json(msg='NPU %s does not hold its %s after hccn_tool set it (it reads %s); fix: look at the '
                                     'driver log (/var/log/npu/slog) and run hccn_tool -i %s -ip -g by hand'
                                 % (entry['npu'], ', '.join(left), dict((key, live.get(key)) for key in left), entry['npu']),
                                 changes=changes, npus=after, commands=reader.commands)
    elif changes:
        after = []
        for entry, live in zip(wanted, before):
            planned = dict(live)
            planned.update(dict((key, entry[key]) for key in ('address', 'netmask', 'gateway', 'netdetect') if entry.get(key)))
            after.append(planned)
    diff['after'] = ''.join(_conf_lines(state) for state in after)
    conf_state = hccn_tool_runner.read_conf_state()
    conf, conf_sha256, conf_problems = conf_state['conf'], conf_state['sha256'], conf_state['problems']
    differences = hccn_tool.conf_differences(conf or {}, dict((state['npu'], state) for state in after)) \
        if conf is not None else {}
    conf_saved = None if conf is None else not differences and not conf_problems
    if conf_problems:
        module.warn('%s does not say one thing for the next boot (hccn_tool -cfg recovery): %s; fix: put back the '
                    'file hccn_tool writes (one key_N=value line per key and NPU), then run the hccn role again'
                    % (hccn_tool_runner.HCCN_CONF, '; '.join(conf_problems)))
    if differences and not module.check_mode:
        module.warn('/etc/hccn.conf does not hold the live %s: the next boot (hccn_tool -cfg recovery) would restore '
                    'other ones; fix: set them again with hccn_tool -i N -ip|-gateway|-netdetect -s ..., which saves '
                    'what it sets, and check that /etc/hccn.conf is writable'
                    % '; '.join('NPU %s %s' % (npu, ', '.join(keys)) for npu, keys in sorted(differences.items())))
    result = dict(changed=bool(changes), changes=changes, npus=after, conf_saved=conf_saved,
                  conf_differences=differences, conf_problems=conf_problems, conf_sha256=conf_sha256,
                  commands=reader.commands)
    if module._diff:
        result['diff'] = diff
    module.exit_json(**result)


if __name__ == '__main__':
    main()
