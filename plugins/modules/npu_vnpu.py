#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: npu_vnpu
short_description: Split one Huawei Ascend NPU chip into static vNPUs with npu-smi
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Makes the static vNPUs of one chip what O(vnpus) lists, with C(npu-smi set -t create-vnpu) and
    C(npu-smi set -t destroy-vnpu), after comparing with C(npu-smi info -t info-vnpu). vNPUs that
    already serve a wanted entry are kept; only the difference is created or destroyed.
  - Sets the virtualization mode to containers (C(npu-smi set -t vnpu-mode -d 0)) and the vNPU
    configuration recovery (C(npu-smi set -t vnpu-cfg-recover)) so that the layout survives a device
    restart, when they differ.
  - A chip in VM mode (C(npu-smi info -t vnpu-mode) prints C(VM)) has no container vNPUs to read; it is planned
    as empty and switched to containers first. npu-smi itself refuses the switch while VM vNPUs exist.
  - Chips with static vNPU templates - Atlas inference (310P), Atlas A2 (910B1-910B4) and the legacy
    910 (910A, 910B, 910ProA, 910ProB, 910PremiumA; C(vir02), C(vir04), C(vir08), C(vir16)).
  - When npu-smi answers with a sentence instead of the table (VM or SMP mode, a VM or container, a chip without
    vNPU support), the failure names the node, the chip, the command, that sentence, its cause and the fix.
  - Refuses, naming the chip and the fix, before changing anything - a template the chip does not
    list in C(npu-smi info -t template-info); a layout that needs more AI cores, memory, vNPU ids or
    vGroups than the chip has; an id outside the chip's range; a vGroup on a chip without vGroups;
    destroying a vNPU a container is using, unless O(force=true).
  - Huawei's device plugin reads the vNPUs only when it starts; restart it after a change
    (the npu.ascend.vnpu role does).
  - See the collection's docs/vnpu.md for the templates, ids and resources.
options:
  npu_id:
    description: The NPU id, as C(npu-smi info -l) prints it.
    type: int
    required: true
  chip_id:
    description: The chip id within the NPU, as C(npu-smi info -m) prints it.
    type: int
    required: true
  vnpus:
    description:
      - The vNPUs the chip should have. An empty list destroys every vNPU of the chip.
    type: list
    elements: dict
    required: true
    suboptions:
      template:
        description: A template the chip lists in C(npu-smi info -t template-info), for example C(vir02) or C(vir10_3c_16g).
        type: str
        required: true
      id:
        description:
          - The vNPU id; by default npu-smi chooses one. The ids of a chip are phy_id*16+100 and up
            (8 on a 310P, 16 on a 910B), phy_id being N of its C(/dev/davinciN).
        type: int
      vgroup:
        description: The vGroup (0-3), on Atlas inference products (310P) only; by default npu-smi chooses.
        type: int
  force:
    description:
      - Destroy vNPUs that a container is using. npu-smi itself refuses while the container runs;
        drain the node first (npu.ascend.k8s_maintenance).
    type: bool
    default: false
  recover:
    description:
      - Whether npu-smi restores the vNPUs after a device restart (C(npu-smi set -t vnpu-cfg-recover)).
        Huawei's default is on; with it off, a reboot loses the layout.
    type: bool
    default: true
  binary_path:
    description:
      - Path of the C(npu-smi) binary.
      - By default it is searched in E(PATH), C(/usr/local/sbin) and C(/usr/local/bin).
    type: path
  timeout:
    description:
      - Seconds each C(npu-smi) run may take before it is stopped (through C(timeout)) and the module fails.
      - Must be a positive number of seconds.
    type: int
    default: 120
  lock_timeout:
    description:
      - Seconds to wait for the collection's node lock, which a real run holds from its first read to its last
        change, so that no installer or other run changes the node meanwhile. Check mode takes no lock.
    type: int
    default: 600
notes:
  - Supports check mode and diff mode; check mode reads npu-smi only.
seealso:
  - module: npu.ascend.npu_smi_info
extends_documentation_fragment:
  - npu.ascend.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The chip's vNPUs (template, id, vGroup) before and after.
  idempotent:
    support: full
'''

EXAMPLES = r'''
- name: Split chip 0 of NPU 1 (a 310P3) into four 2-core vNPUs
  npu.ascend.npu_vnpu:
    npu_id: 1
    chip_id: 0
    vnpus:
      - template: vir02
      - template: vir02
      - template: vir02
      - template: vir02

- name: Two half chips on an Atlas 800I A2 (910B4), with fixed ids
  npu.ascend.npu_vnpu:
    npu_id: 0
    chip_id: 0
    vnpus:
      - {template: vir10_3c_16g, id: 100}
      - {template: vir10_3c_16g, id: 101}

- name: Give the chip back whole
  npu.ascend.npu_vnpu:
    npu_id: 0
    chip_id: 0
    vnpus: []
'''

RETURN = r'''
chip:
  description: The chip.
  returned: success
  type: dict
  sample: {npu_id: 1, chip_id: 0, name: 310P3, family: 310P, phy_id: 0}
vnpus:
  description:
    - The chip's vNPUs after the run (in check mode, as they are now), with the Kubernetes resource
      Huawei's device plugin publishes each as (without C(huawei.com/)).
  returned: success
  type: list
  elements: dict
  sample:
    - {vnpu_id: 100, vgroup_id: 0, template: vir02, in_use: false, container_id: "000000000000", status: "0",
       resource: Ascend310P-2c}
plan:
  description:
    - What was (in check mode, would be) destroyed and created, whether the mode and the configuration recovery
      were set, whether anything changed (C(change)), and the destroyed vNPUs a container was using (C(in_use)).
  returned: success
  type: dict
  sample: {destroy: ["vir04 id 101 vgroup 1"], create: ["vir02", "vir02"], mode: false, recover: false, change: true,
           in_use: []}
resources:
  description: Resource name to the number of vNPUs the wanted layout offers.
  returned: success
  type: dict
  sample: {Ascend310P-2c: 4}
commands:
  description: The argv of every npu-smi run.
  returned: always
  type: list
  elements: list
'''

import socket

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu

CONTAINER_MODE = 'docker'
VM_MODE = 'vm'


class VnpuFailure(Exception):
    pass


def _parse(parser, text, what, where, *args):
    """``parser(text, *args)``; every way it can fail is a VnpuFailure naming ``where`` (the node and
    chip), the npu-smi command ``what``, what npu-smi printed and the fix."""
    try:
        return parser(text, *args)
    except npu_smi.NpuSmiError as error:
        raise VnpuFailure('%s: %s' % (where, npu_smi_runner.explain_error(error, 0)))
    except npu_vnpu.VnpuUnavailable as refusal:
        raise VnpuFailure('%s: npu-smi %s answered %r: %s. Fix: %s'
                          % (where, what, refusal.line, refusal.cause, refusal.fix))
    except ValueError as error:
        raise VnpuFailure('%s: cannot read the output of npu-smi %s (first line: %r): %s. Fix: report that output '
                          'with the driver version (npu-smi info); docs/huawei-sources.md lists the layouts this '
                          'collection reads' % (where, what, npu_vnpu.first_line(text), error))


def _chip(reader, npu_id, chip_id, node):
    rows = _parse(npu_smi.parse_info_mapping, reader.run('info', '-m'), 'info -m', 'node %s' % node)
    for row in rows:
        if row['npu_id'] == npu_id and row['chip_id'] == chip_id and row['chip_logic_id'] is not None:
            # "Ascend 310P3" is the 310P3; an A3 die's "Ascend910" is no chip without its "Ascend", so
            # the family comes from the name as printed.
            name = row['chip_name'][len('Ascend '):].strip() if row['chip_name'].startswith('Ascend ') \
                else row['chip_name'].strip()
            return {'npu_id': npu_id, 'chip_id': chip_id, 'name': name,
                    'family': npu_vnpu.chip_family(row['chip_name']),
                    'phy_id': row['chip_logic_id']}
    raise VnpuFailure('node %s: npu-smi info -m lists no chip %s of NPU %s. Fix: use an NPU id from npu-smi info -l '
                      'and a chip id from npu-smi info -m' % (node, chip_id, npu_id))


def _lines(vnpus):
    return ''.join(npu_vnpu.describe(dict(vnpu, in_use=False)) + '\n' for vnpu in
                   sorted(vnpus, key=lambda item: (item['template'] or '', item.get('vnpu_id') or 0)))


def _templates(reader, npu_id, where):
    """``info -t template-info``; on a server with cards of different kinds npu-smi shows the first
    card's and says so, and ``-i <npu>`` then asks for this one's."""
    text = reader.run('info', '-t', 'template-info')
    if npu_vnpu.template_info_is_mixed(text):
        return _parse(npu_vnpu.parse_template_info, reader.run('info', '-t', 'template-info', '-i', str(npu_id)),
                      'info -t template-info -i %s' % npu_id, where)
    return _parse(npu_vnpu.parse_template_info, text, 'info -t template-info', where)


def _present(reader, ids, where):
    what = 'info -t info-vnpu %s' % ' '.join(ids)
    present = _parse(npu_vnpu.parse_info_vnpu, reader.run('info', '-t', 'info-vnpu', *ids), what, where)
    unread = [str(vnpu['vnpu_id']) for vnpu in present['vnpus'] if vnpu['template'] is None]
    if unread:
        raise VnpuFailure('%s: npu-smi %s prints NA as the template of vNPU %s, so this module cannot tell whether it '
                          'serves the layout. Fix: look at the npu-smi log (/var/log/npu/slog); destroy that vNPU by hand '
                          '(npu-smi set -t destroy-vnpu) if nothing uses it, and run again' % (where, what, ', '.join(unread)))
    return present


def run(module, reader):
    params = module.params
    node = socket.gethostname()
    chip = _chip(reader, params['npu_id'], params['chip_id'], node)
    where = 'node %s: NPU %s chip %s (%s)' % (node, params['npu_id'], params['chip_id'], chip['name'])
    try:
        wanted = npu_vnpu.normalize_layout(params['vnpus'])
    except ValueError as error:
        raise VnpuFailure('%s: %s' % (where, error))
    ids = ['-i', str(params['npu_id']), '-c', str(params['chip_id'])]
    if chip['family'] is None:
        if not wanted:
            return False, chip, [], {'destroy': [], 'create': [], 'mode': False, 'recover': False, 'change': False,
                                     'in_use': []}, {}, None
        templates, present, mode, recover = {}, {'resources': {}, 'vnpus': []}, None, None
    else:
        templates = _templates(reader, params['npu_id'], where)
        mode = _parse(npu_vnpu.parse_mode, reader.run('info', '-t', 'vnpu-mode'), 'info -t vnpu-mode', where)
        recover = _parse(npu_vnpu.parse_recover, reader.run('info', '-t', 'vnpu-cfg-recover'),
                         'info -t vnpu-cfg-recover', where)
        if mode == VM_MODE:
            # npu-smi reads no container vNPU in VM mode (it says so, with exit status 0): there are none,
            # and the mode is set to containers before any is made.
            present = {'resources': {}, 'vnpus': []}
        else:
            present = _present(reader, ids, where)
    problems = npu_vnpu.layout_problems(wanted, chip['family'], chip['phy_id'], templates, present['resources'])
    if problems:
        raise VnpuFailure('%s: the vNPU layout %s cannot be made: %s. Fix: change vnpu_layout for this chip '
                          '(docs/vnpu.md lists the templates, their AI cores and memory per chip)'
                          % (where, [entry['template'] for entry in wanted], '; '.join(problems)))
    keep, destroy, create = npu_vnpu.layout_diff(wanted, present['vnpus'])
    in_use = [vnpu for vnpu in destroy if vnpu['in_use']]
    if in_use and not params['force']:
        raise VnpuFailure('%s: the new layout destroys %s, in use by a container. Fix: drain the node first '
                          '(npu.ascend.k8s_maintenance; the npu.ascend.vnpu role does it), or set force=true once '
                          'nothing runs on it' % (where, ', '.join(npu_vnpu.describe(vnpu) for vnpu in in_use)))
    plan = {
        'destroy': [npu_vnpu.describe(vnpu) for vnpu in destroy],
        'create': [npu_vnpu.describe(entry) for entry in create],
        'mode': mode != CONTAINER_MODE,
        'recover': recover is not params['recover'],
    }
    changed = bool(destroy or create or plan['mode'] or plan['recover'])
    plan['change'] = changed
    plan['in_use'] = [npu_vnpu.describe(vnpu) for vnpu in in_use]
    resources = {}
    for entry in wanted:
        name = npu_vnpu.resource_name(entry['template'], chip['family'])
        resources[name] = resources.get(name, 0) + 1
    diff = {'before': _lines(present['vnpus']), 'after': _lines(keep + create),
            'before_header': '%s vNPUs' % where, 'after_header': '%s vNPUs' % where}
    if module.check_mode or not changed:
        return changed, chip, npu_vnpu.with_resources(present['vnpus'], chip['family']), plan, resources, diff
    if plan['mode']:
        _set(reader, where, 'set the vNPU mode to containers', 'set', '-t', 'vnpu-mode', '-d', '0')
    if plan['recover']:
        _set(reader, where, 'set vNPU configuration recovery', 'set', '-t', 'vnpu-cfg-recover',
             '-d', '1' if params['recover'] else '0')
    for vnpu in destroy:
        argv = ['set', '-t', 'destroy-vnpu'] + ids + ['-v', str(vnpu['vnpu_id'])]
        text = _run_set(reader, where, 'destroy vNPU %s' % npu_vnpu.describe(vnpu), *argv)
        _parse(npu_vnpu.parse_destroyed, text, ' '.join(argv), where, vnpu['vnpu_id'])
    for entry in create:
        argv = ['set', '-t', 'create-vnpu'] + ids + ['-f', entry['template']]
        if entry['vnpu_id'] is not None:
            argv += ['-v', str(entry['vnpu_id'])]
        if entry['vgroup_id'] is not None:
            argv += ['-g', str(entry['vgroup_id'])]
        _parse(npu_vnpu.parse_created, _run_set(reader, where, 'create vNPU %s' % npu_vnpu.describe(entry), *argv),
               ' '.join(argv), where)
    after = _present(reader, ids, where)
    _kept, extra, missing = npu_vnpu.layout_diff(wanted, after['vnpus'])
    if extra or missing:
        raise VnpuFailure('%s: npu-smi accepted every change but lists %s. Fix: look at the npu-smi log '
                          '(/var/log/npu/slog) and run again' % (where, _lines(after['vnpus']).strip() or 'no vNPU'))
    return changed, chip, npu_vnpu.with_resources(after['vnpus'], chip['family']), plan, resources, diff


def _run_set(reader, where, what, *argv):
    try:
        return reader.run(*argv)
    except npu_smi_runner.NpuSmiFailure as failure:
        raise VnpuFailure('%s: could not %s: %s' % (where, what, failure))


def _set(reader, where, what, *argv):
    ok, message = npu_vnpu.parse_set_result(_run_set(reader, where, what, *argv))
    if not ok:
        raise VnpuFailure('%s: could not %s: %s' % (where, what, message))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            npu_id=dict(type='int', required=True),
            chip_id=dict(type='int', required=True),
            vnpus=dict(type='list', elements='dict', required=True, options=dict(
                template=dict(type='str', required=True),
                id=dict(type='int'),
                vgroup=dict(type='int'),
            )),
            force=dict(type='bool', default=False),
            recover=dict(type='bool', default=True),
            binary_path=dict(type='path'),
            timeout=dict(type='int', default=npu_smi_runner.DEFAULT_TIMEOUT_SECONDS),
            lock_timeout=dict(type='int', default=node_lock.DEFAULT_TIMEOUT),
        ),
        supports_check_mode=True,
    )
    try:
        reader = npu_smi_runner.reader_for(module.params, module.get_bin_path, module.run_command)
    except ValueError as problem:
        module.fail_json(msg=str(problem), commands=[])
    if not module.check_mode:
        # Held until this process exits (the kernel releases it then, also when the run is killed).
        try:
            node_lock.NodeLock(timeout=module.params['lock_timeout'], holder={
                'module': 'npu.ascend.npu_vnpu',
                'target': 'NPU %s chip %s' % (module.params['npu_id'], module.params['chip_id'])}).acquire()
        except (node_lock.NodeLockTimeout, node_lock.NodeLockError, ValueError) as error:
            module.fail_json(msg='NPU %s chip %s: vNPUs not changed: %s' % (
                module.params['npu_id'], module.params['chip_id'], error), commands=[])
    try:
        changed, chip, vnpus, plan, resources, diff = run(module, reader)
    except (VnpuFailure, npu_smi_runner.NpuSmiFailure) as failure:
        module.fail_json(msg=str(failure), commands=reader.commands)
    result = dict(changed=changed, chip=chip, vnpus=vnpus, plan=plan, resources=resources, commands=reader.commands)
    if diff is not None and module._diff:
        result['diff'] = diff
    module.exit_json(**result)


if __name__ == '__main__':
    main()
