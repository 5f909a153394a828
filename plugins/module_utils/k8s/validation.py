# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on a validation pod's own output (the ``validate`` role's huawei check).

The pod runs ``ls -l /dev/davinci* && npu-smi info`` in a container that asked for N NPUs. It
passed when the container saw exactly N ``/dev/davinciN`` (the ones the device plugin allocated,
which the Ascend Docker Runtime mounts), the management device ``/dev/davinci_manager``, and
``npu-smi info`` answered with a chip table in which every chip is healthy. On a chip whose NPU is
several devices (an Atlas A3: two dies), a request of whole NPUs must also get whole NPUs: every NPU
``npu-smi info`` lists in the container with all of its dies. The pod's phase alone
proves none of this: a container that saw every NPU of the node, or none, still ends Succeeded
when its command does. Pure, no Ansible imports: the filter npu.ascend.npu_validation_verdict and the
module npu.ascend.k8s_fleet_validate (which judges every node's pod in one step) use it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi

# The last field of an `ls -l` line (or a bare `ls` name).
_DEVICE = re.compile(r'(?:^|\s)/dev/davinci([0-9]+)$')
_MANAGER = re.compile(r'(?:^|\s)/dev/davinci_manager$')


def judge_output(text, npu_count, dies_per_npu=1):
    """``{passed, problems, devices, chips}`` for the pod's output ``text`` and its ``npu_count``.

    ``dies_per_npu`` (the hardware catalogue's, 2 on A3): when above 1 and ``npu_count`` a multiple of
    it, the chips listed must be whole NPUs (each NPU id with ``dies_per_npu`` distinct chip ids).

    ``devices`` lists the logical ids of the ``/dev/davinciN`` the container saw; ``chips`` the
    chips ``npu-smi info`` listed (``npu_id``, ``chip_id``, ``health``); ``problems`` says what
    is wrong, one sentence each.
    """
    if not isinstance(npu_count, int) or isinstance(npu_count, bool) or npu_count < 1:
        raise ValueError('npu_count must be a positive integer, got %r' % (npu_count,))
    if not isinstance(dies_per_npu, int) or isinstance(dies_per_npu, bool) or dies_per_npu < 1:
        raise ValueError('dies_per_npu must be a positive integer, got %r' % (dies_per_npu,))
    lines = [line.rstrip() for line in (text or '').splitlines()]
    devices = sorted(set(int(match.group(1)) for match in (_DEVICE.search(line) for line in lines) if match))
    problems = []
    if len(devices) != npu_count:
        problems.append('the container saw %d NPU device(s) (%s), not the %d it was allocated'
                        % (len(devices), ', '.join('/dev/davinci%d' % device for device in devices) or 'none',
                           npu_count))
    if not any(_MANAGER.search(line) for line in lines):
        problems.append('the container has no /dev/davinci_manager')
    chips = []
    try:
        chips = [{'npu_id': chip['npu_id'], 'chip_id': chip['chip_id'], 'health': chip['health'],
                  'healthy': chip['healthy']}
                 for chip in npu_smi.parse_info('\n'.join(lines))['chips']]
    except npu_smi.NpuSmiError as error:
        problems.append('npu-smi info failed in the container: %s' % error)
    except ValueError:
        problems.append('npu-smi info printed no chip table in the container')
    else:
        if not chips:
            problems.append('npu-smi info listed no chip in the container')
        sick = ['NPU %s chip %s: %s' % (chip['npu_id'], chip['chip_id'], chip['health'])
                for chip in chips if not chip['healthy']]
        if sick:
            problems.append('npu-smi info in the container lists unhealthy chips (%s)' % '; '.join(sick))
        if chips and dies_per_npu > 1 and npu_count % dies_per_npu == 0:
            problems.extend(_split_npus(chips, dies_per_npu))
    return {'passed': not problems, 'problems': problems, 'devices': devices, 'chips': chips}


def _split_npus(chips, dies_per_npu):
    """The problem of a container that got part of an NPU: the NPUs whose dies it did not all get."""
    dies = {}
    for chip in chips:
        dies.setdefault(chip['npu_id'], set()).add(chip['chip_id'])
    split = ['NPU %s (chip %s)' % (npu, ', '.join(str(die) for die in sorted(found, key=str)))
             for npu, found in sorted(dies.items(), key=lambda item: str(item[0])) if len(found) != dies_per_npu]
    if not split:
        return []
    return ['the container got part of an NPU: %s of %d dies each; a request of whole NPUs must get every die of '
            'each NPU together' % ('; '.join(split), dies_per_npu)]
