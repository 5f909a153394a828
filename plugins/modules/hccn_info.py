#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: hccn_info
short_description: Read the RoCE port of every Huawei Ascend NPU with hccn_tool
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs C(hccn_tool -i N ... -g) for every NPU of a training server and returns its address, netmask, gateway,
    detect address, link status and net health, read from the strings Huawei's tool prints (C(docs/hccn.md)).
  - Optionally reads the switch port each NPU is cabled to (C(-lldp -g)) and pings addresses from given NPUs
    (C(-ping -g address A)), returning the loss and the round-trip times.
  - On an A3 (Atlas A3 SuperPoD servers), O(npus) are the dies (C(hccn_tool -i 0..15)); it reads each die's vNIC
    on the HCCS plane (O(read) C(vnic), C(-vnic -g)), runs HCCS pings (O(hccs_ping), C(-hccs_ping -g address A)),
    which a product without them refuses (returned as not supported, not as a failure), and reads the node's
    SuperPoD membership with C(npu-smi info -t spod-info) (O(super_pod)).
  - Also reads C(/etc/hccn.conf), the file the driver restores at boot (C(hccn_tool -cfg recovery)), and says
    where it does not hold what is live.
  - Fails with an explanation when C(hccn_tool) is missing, fails, does not answer within O(timeout), or prints
    something the parsers do not know (naming the command, the node, the NPU and the first line it printed). A failed
    ping is a result, not a failure.
  - A value never set (a new server's NPUs) reads as null, whichever way C(hccn_tool) says so - its C(no ip was
    preset there) or C(no gateway was preset there) error with a non-zero exit, C(0.0.0.0), or nothing.
  - Refuses an NPU listed twice in O(npus) and a ping address two tools would read differently (leading zeros,
    whitespace around it).
  - Read-only; runs in check mode too.
options:
  binary_path:
    description:
      - Path of C(hccn_tool).
      - By default C(<install_path>/driver/tools/hccn_tool), then C(/usr/local/bin/hccn_tool).
    type: path
  install_path:
    description: The driver's install path.
    type: path
    default: /usr/local/Ascend
  npus:
    description:
      - The NPU ids to read (the ids C(hccn_tool -i) takes, those of C(npu-smi info)).
      - By default the logical ids of the C(/dev/davinciN) device nodes.
    type: list
    elements: int
  read:
    description:
      - What to read of each NPU. C(address) is the address and netmask (C(-ip -g)); C(lldp) the switch port;
        C(vnic) an A3 die's vNIC link, address and netmask (C(-vnic -g)).
    type: list
    elements: str
    choices: [address, gateway, netdetect, link, net_health, lldp, vnic]
    default: [address, gateway, netdetect, link, net_health]
  ping:
    description: Pings to run, each from NPU C(npu) to C(address); C(peer) is a free label returned as is.
    type: list
    elements: dict
    default: []
    suboptions:
      npu:
        description: The NPU that pings.
        type: int
        required: true
      address:
        description: The address to ping.
        type: str
        required: true
      peer:
        description: A label for the messages, such as the peer node and NPU.
        type: str
  hccs_ping:
    description:
      - HCCS pings to run (A3 SuperPoD members), each from die C(npu) to the vNIC C(address) of a die of another
        server of the SuperPoD; C(peer) is a free label returned as is.
    type: list
    elements: dict
    default: []
    suboptions:
      npu:
        description: The die that pings.
        type: int
        required: true
      address:
        description: The vNIC address to ping.
        type: str
        required: true
      peer:
        description: A label for the messages, such as the peer node and die.
        type: str
  super_pod:
    description:
      - Read the node's SuperPoD membership with C(npu-smi info -t spod-info -i O(super_pod.npu_id) -c
        O(super_pod.chip_id)) (RV(hccn.super_pod)).
    type: dict
    suboptions:
      npu_id:
        description: The NPU id, as npu-smi numbers them.
        type: int
        required: true
      chip_id:
        description: The chip (die) of that NPU.
        type: int
        default: 0
      npu_smi_path:
        description: Path of C(npu-smi); by default found in PATH, C(/usr/local/sbin), C(/usr/local/bin).
        type: path
  wait_timeout:
    description:
      - Seconds to keep reading until every link is C(UP) and every net health C(Success) (they take seconds to
        settle after a change); 0 reads once. The result says whether they settled (RV(hccn.settled)); not
        settling is not a failure of the module.
    type: int
    default: 0
  wait_interval:
    description: Seconds between two readings while waiting.
    type: int
    default: 5
  timeout:
    description:
      - Seconds each C(hccn_tool) run may take before it is stopped (through C(timeout)) and the module fails.
      - Must be a positive number of seconds.
    type: int
    default: 30
notes:
  - Supports check mode.
  - C(/etc/hccn.conf) is readable by root only; without privileges RV(hccn.conf_readable) is false.
seealso:
  - module: npu.ascend.hccn
  - module: npu.ascend.npu_smi_info
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.read_only
'''

EXAMPLES = r'''
- name: Read every NPU's RoCE port
  npu.ascend.hccn_info:
  register: fabric

- name: Every link must be up and every net health Success
  ansible.builtin.assert:
    that:
      - fabric.hccn.npus | rejectattr('link', 'equalto', 'UP') | list | length == 0
      - fabric.hccn.npus | rejectattr('net_health', 'equalto', 'Success') | list | length == 0

- name: Ping an NPU of another node from NPU 0
  npu.ascend.hccn_info:
    read: [link]
    ping:
      - npu: 0
        address: 10.0.0.20
        peer: node2 NPU 0
  register: pings
'''

RETURN = r'''
hccn:
  description: What hccn_tool reported.
  returned: success
  type: dict
  contains:
    binary:
      description: The hccn_tool that was run.
      type: str
      sample: /usr/local/Ascend/driver/tools/hccn_tool
    npus:
      description:
        - One entry per NPU with what O(read) asked for - C(address), C(netmask), C(gateway), C(netdetect) (null when
          unset), C(link) (C(UP) or C(DOWN)), C(net_health) (C(Success), C(Socket fail), C(Socket failed),
          C(Receive timeout), C(Unreachable), C(Time exceeded), C(Fault), C(Init), C(Thread error), C(Detect ip set),
          C(Unknown)), C(lldp_port).
      type: list
      elements: dict
      sample:
        - npu: 0
          address: 10.0.0.10
          netmask: 255.255.255.0
          gateway: 10.0.0.1
          netdetect: 10.0.0.1
          link: UP
          net_health: Success
    pings:
      description:
        - One entry per O(ping) - C(npu), C(target), C(peer), C(transmitted), C(received), C(loss_pct), C(times_ms),
          C(avg_ms), C(max_ms), C(error) (why the ping could not run, else null) and C(summary) (one line).
      type: list
      elements: dict
    hccs_pings:
      description:
        - One entry per O(hccs_ping) - C(npu), C(target), C(peer), C(supported) (false when the product refuses
          C(-hccs_ping)), C(transmitted), C(received), C(loss_pct), C(times_us), C(avg_us), C(max_us), C(error)
          and C(summary).
      type: list
      elements: dict
    super_pod:
      description:
        - With O(super_pod), the node's SuperPoD as C(npu-smi info -t spod-info) printed it - C(id), C(server_index),
          C(size) (NPUs), C(sdid) - or null when the product has no SuperPoD information.
      type: dict
    settled:
      description: Whether every link read C(UP) and every net health C(Success) (at the last reading).
      type: bool
    waited:
      description: Seconds spent waiting for them (O(wait_timeout)).
      type: float
    conf:
      description: C(/etc/hccn.conf) as a dict of NPU id to its keys and values, or null when absent or unreadable.
      type: dict
    conf_readable:
      description: Whether C(/etc/hccn.conf) could be read.
      type: bool
    conf_problems:
      description:
        - Why C(/etc/hccn.conf) is not one clear answer for the next boot (a key given twice, one address on two
          NPUs, an ambiguous value), or why it could not be read (a FIFO there, too large); empty when it is absent
          or clear.
      type: list
      elements: str
    conf_differences:
      description: Per NPU id, the keys whose value in C(/etc/hccn.conf) is not the live one (the next boot would restore another value).
      type: dict
commands:
  description: The argv of every hccn_tool run.
  returned: always
  type: list
  elements: list
'''

import os
import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner
from ansible_collections.npu.ascend.plugins.module_utils.hardware import super_pod


def default_npus():
    try:
        return hccn_tool_runner.npu_ids_from_devices(os.listdir('/dev'))
    except OSError:
        return []


def read_super_pod(module, reader):
    """The node's SuperPoD from npu-smi's spod-info (None: the product has none); fails the module, naming the
    node, the command and the fix, when npu-smi cannot be run or read."""
    wanted = module.params['super_pod']
    try:
        npu_smi = npu_smi_runner.reader_for({'binary_path': wanted.get('npu_smi_path'), 'timeout': module.params['timeout']},
                                            module.get_bin_path, module.run_command)
        argv = ['info', '-t', 'spod-info', '-i', str(wanted['npu_id']), '-c', str(wanted['chip_id'])]
        try:
            text = npu_smi.run(*argv)
        except npu_smi_runner.NpuSmiFailure as failure:
            reader.commands.extend(npu_smi.commands)
            # The unsupported sentence may come with a non-zero status; it is an answer, not a failure.
            if super_pod.SPOD_UNSUPPORTED.search(str(failure)):
                return None
            raise
        reader.commands.extend(npu_smi.commands)
        return super_pod.parse_spod_info(text)
    except (ValueError, npu_smi_runner.NpuSmiFailure) as error:
        module.fail_json(msg='cannot read the SuperPoD membership of %s (npu-smi info -t spod-info -i %s -c %s): %s; '
                             'fix: check that the driver is loaded (npu-smi info) and report this output with the '
                             'driver version' % (reader.node, wanted['npu_id'], wanted['chip_id'], error),
                         commands=reader.commands)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            binary_path=dict(type='path'),
            install_path=dict(type='path', default='/usr/local/Ascend'),
            npus=dict(type='list', elements='int'),
            read=dict(type='list', elements='str', choices=list(hccn_tool_runner.READS),
                      default=list(hccn_tool_runner.DEFAULT_READS)),
            ping=dict(type='list', elements='dict', default=[], options=dict(
                npu=dict(type='int', required=True),
                address=dict(type='str', required=True),
                peer=dict(type='str'),
            )),
            hccs_ping=dict(type='list', elements='dict', default=[], options=dict(
                npu=dict(type='int', required=True),
                address=dict(type='str', required=True),
                peer=dict(type='str'),
            )),
            super_pod=dict(type='dict', options=dict(
                npu_id=dict(type='int', required=True),
                chip_id=dict(type='int', default=0),
                npu_smi_path=dict(type='path'),
            )),
            timeout=dict(type='int', default=hccn_tool_runner.DEFAULT_TIMEOUT_SECONDS),
            wait_timeout=dict(type='int', default=0),
            wait_interval=dict(type='int', default=5),
        ),
        supports_check_mode=True,
    )
    if module.params['wait_timeout'] < 0 or module.params['wait_interval'] <= 0:
        module.fail_json(msg='wait_timeout must be 0 or more and wait_interval positive, got %s and %s'
                         % (module.params['wait_timeout'], module.params['wait_interval']), commands=[])
    if module.params['timeout'] <= 0:
        module.fail_json(msg='timeout must be a positive number of seconds, got %s' % module.params['timeout'],
                         commands=[])
    binary = hccn_tool_runner.find_hccn_tool(module.params['binary_path'], module.params['install_path'])
    if not binary:
        module.fail_json(msg=hccn_tool_runner.missing_tool_message(module.params['binary_path']), commands=[])
    npus = module.params['npus'] if module.params['npus'] is not None else default_npus()
    problems = hccn_tool_runner.wanted_problems([{'npu': npu} for npu in npus], keys=(), where='npus') + \
        hccn_tool_runner.wanted_problems(module.params['ping'], keys=('address',), where='ping', once=False) + \
        hccn_tool_runner.wanted_problems(module.params['hccs_ping'], keys=('address',), where='hccs_ping', once=False)
    if problems:
        module.fail_json(msg='npu.ascend.hccn_info on %s refused its options before any hccn_tool run: %s; fix: list '
                             'each NPU once and write every ping address as four numbers without leading zeros'
                             % (platform.node(), '; '.join(problems)), commands=[])
    if not npus:
        module.fail_json(msg='no NPU to read: no /dev/davinciN device node; fix: check that the driver is loaded '
                             '(npu-smi info), or pass npus', commands=[])
    reader = hccn_tool_runner.HccnReader(module.run_command, binary, module.params['timeout'])
    try:
        states, settled, waited = reader.read_until_settled(npus, module.params['read'], module.params['wait_timeout'],
                                                            module.params['wait_interval'])
    except hccn_tool_runner.HccnFailure as failure:
        module.fail_json(msg=str(failure), commands=reader.commands)
    pings = []
    for wanted in module.params['ping']:
        result = reader.ping(wanted['npu'], wanted['address'])
        result['peer'] = wanted.get('peer')
        pings.append(result)
    hccs_pings = []
    for wanted in module.params['hccs_ping']:
        result = reader.hccs_ping(wanted['npu'], wanted['address'])
        result['peer'] = wanted.get('peer')
        hccs_pings.append(result)
    membership = read_super_pod(module, reader) if module.params['super_pod'] else None
    conf_state = hccn_tool_runner.read_conf_state()
    conf = conf_state['conf']
    live = dict((state['npu'], state) for state in states if 'address' in state)
    result = {
        'binary': binary,
        'npus': states,
        'settled': settled,
        'waited': waited,
        'pings': pings,
        'hccs_pings': hccs_pings,
        'super_pod': membership,
        'conf': conf,
        'conf_readable': conf is not None,
        'conf_problems': conf_state['problems'],
        'conf_differences': hccn_tool.conf_differences(conf or {}, live) if conf is not None else {},
    }
    module.exit_json(changed=False, hccn=result, commands=reader.commands)


if __name__ == '__main__':
    main()
