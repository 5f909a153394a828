# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running npu-smi on the node and judging what it printed. No Ansible imports.

Both the npu_smi_info module (which fails on an error) and ascend_facts' probe (which records it,
since a broken chip is the node's state, not the probe's failure) read npu-smi through here, so an
error code means the same thing, with the same fix, wherever it surfaces.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import socket
import time

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu
from ansible_collections.npu.ascend.plugins.module_utils.hardware import tool_runner
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import version_problem

NPU_SMI_DIRS = ['/usr/local/sbin', '/usr/local/bin']
DEFAULT_TIMEOUT_SECONDS = 120

# What npu-smi's DCMI error codes mean for the operator, where Huawei's documentation says (docs/huawei-sources.md).
_ERROR_MEANINGS = {
    -8005: ('the NPU device is not started or the NPU driver is not loaded',
            'reboot the node; if the error stays, reinstall the driver (and check the firmware)'),
}


class NpuSmiFailure(Exception):
    """npu-smi could not be read: the message says why and what to do."""


def explain_error(error, rc):
    meaning, fix = _ERROR_MEANINGS.get(error.code, (None, None))
    message = 'npu-smi failed (rc=%s): %s' % (rc, error.message)
    if error.code is not None:
        message += ' [error code %s]' % error.code
    if meaning:
        message += '. This means %s; %s.' % (meaning, fix)
    else:
        message += '. Check that the driver is installed and loaded (lsmod, /dev/davinci*) and see the npu-smi log.'
    return message


def _board_key(name):
    return re.sub(r'[^0-9a-z]+', '_', name.strip().lower()).strip('_')


def _normalize_board(npu_id, values):
    board = dict((_board_key(key), value) for key, value in values.items())
    board['npu_id'] = npu_id
    return board


def _npu_ids(info):
    seen = []
    for chip in info['chips']:
        if chip.get('npu_id') is not None and chip['npu_id'] not in seen:
            seen.append(chip['npu_id'])
    return seen


def reader_for(params, get_bin_path, run_command):
    """The reader that the binary_path and timeout options of the npu-smi modules ask for (npu_smi_info,
    npu_vnpu); ValueError with the message the module fails with."""
    if params['timeout'] <= 0:
        raise ValueError('timeout must be a positive number of seconds, got %s' % params['timeout'])
    binary = params['binary_path'] or get_bin_path('npu-smi', opt_dirs=NPU_SMI_DIRS)
    if not binary:
        raise ValueError('npu-smi not found in PATH, %s; is the NPU driver installed?' % ', '.join(NPU_SMI_DIRS))
    return NpuSmiReader(run_command, binary, params['timeout'])


class NpuSmiReader(tool_runner.ToolRunner):
    """npu-smi as a tool_runner.ToolRunner: ``run`` fails with NpuSmiFailure, explaining npu-smi's error codes."""

    def __init__(self, run_command, binary, timeout=DEFAULT_TIMEOUT_SECONDS, clock=time.time):
        super(NpuSmiReader, self).__init__(run_command, binary, timeout, clock)

    def _stopped(self, argv):
        return NpuSmiFailure(
            '%s did not answer within %s seconds and was stopped; the NPU driver may be hung. Fix: look at dmesg '
            'and /var/log/npu/slog for driver errors, reboot the node if npu-smi hangs again; if the node is only '
            'slow, raise the timeout (npu_smi_info timeout, hdk_npu_smi_timeout in the hdk role)'
            % (' '.join(argv), self.timeout))

    def run(self, *args):
        rc, out, err = self._run_tool(args)
        argv = self.commands[-1]
        error = npu_smi.detect_error(out + '\n' + err)
        if error is not None:
            raise NpuSmiFailure(explain_error(error, rc))
        if rc != 0:
            raise NpuSmiFailure('%s failed (rc=%s): %s' % (' '.join(argv), rc, (err or out).strip() or 'no output'))
        return out if out.strip() else err

    def _parse(self, parser, text, what):
        try:
            return parser(text)
        except npu_smi.NpuSmiError as error:
            raise NpuSmiFailure(explain_error(error, 0))
        except ValueError as error:
            raise NpuSmiFailure('cannot read the output of npu-smi %s: %s' % (what, error))

    def _refuse_non_version(self, what, value):
        # Versions reach comparisons, labels and messages; a value no Huawei tool prints is refused.
        problem = version_problem(value) if value is not None else ''
        if problem:
            raise NpuSmiFailure('npu-smi %s printed a %s that is not a version: %s. Fix: check that %s is Huawei\'s '
                                'npu-smi (reinstall the driver if it was replaced)'
                                % (' '.join(self.commands[-1][1:]), what, problem, self.binary))

    def read(self, board=False, list_npus=False, vnpus=False):
        """``npu-smi info`` (and, when asked, each NPU's board, ``info -l`` and the vNPUs) as one dict.

        ``board``: True reads the board of every NPU; ``'first'`` reads them NPU after NPU and stops
        at the first whose Board ID is a number (the one a node's labels take, npu_labels.node_labels:
        one call instead of one per NPU). Either also reads the SuperPoD membership of a node whose
        chips can have one (``super_pod``, read_super_pod).
        """
        info = self._parse(npu_smi.parse_info, self.run('info'), 'info')
        for key in ('tool_version', 'driver_version'):
            self._refuse_non_version(key.replace('_', ' '), info[key])
        result = {
            'binary': self.binary,
            'tool_version': info['tool_version'],
            'driver_version': info['driver_version'],
            'chips': info['chips'],
            'processes': info['processes'],
        }
        if board:
            result['boards'] = []
            for npu_id in _npu_ids(info):
                text = self.run('info', '-t', 'board', '-i', str(npu_id))
                values = _normalize_board(npu_id, self._parse(npu_smi.parse_key_values, text, 'board'))
                if values.get('firmware_version'):
                    self._refuse_non_version('firmware version', values['firmware_version'])
                result['boards'].append(values)
                if board == 'first' and npu_smi.parse_board_id(values.get('board_id')) is not None:
                    break
        if board:
            result['super_pod'] = self.read_super_pod(info['chips'])
        if list_npus:
            result['list'] = self._parse(npu_smi.parse_info_list, self.run('info', '-l'), 'info -l')
        if vnpus:
            result['vnpus'] = self.read_vnpus(info['chips'])
        return result

    def read_super_pod(self, chips):
        """The SuperPoD membership of a node whose chips can be members (A3), from ``npu-smi info -t
        spod-info`` of its first die (every die of a server names the same SuperPoD and server index):
        ``{super_pod_id, server_index, super_pod_size, sdid}``, or None (other chips, or not a member).

        One call per node. A refusal, or an npu-smi that fails for this query only, is no membership
        known: the node is labelled as a server, never refused for it."""
        names = set(hardware_catalogue.super_pod_chip_names())
        first = next((chip for chip in chips if chip.get('name') in names and chip.get('npu_id') is not None), None)
        if first is None:
            return None
        try:
            text = self.run('info', '-t', 'spod-info', '-i', str(first['npu_id']), '-c', str(first.get('chip_id') or 0))
        except NpuSmiFailure:
            return None
        return self._parse(npu_smi.parse_spod_info, text, 'info -t spod-info')

    def read_vnpus(self, chips):
        """The static vNPUs of every chip that can be split (npu_vnpu.chip_family: 310P, 910B, legacy
        910), one ``npu-smi info -t info-vnpu -i N -c C`` each: ``[{'npu_id', 'chip_id', 'name', 'vnpus':
        [parse_info_vnpu's vNPUs with their 'resource'], 'resources': {resource: count}, 'unavailable'}]``.
        A template without a resource name of the device plugin's (made by hand) has ``resource``
        None and is not counted. Chips of other families have no vNPUs and are left out. A chip where
        npu-smi answers with a sentence instead of the table (VM mode: it has no container vNPUs; SMP
        mode...) has no vNPUs and ``unavailable`` says that sentence and its cause, else None."""
        result = []
        for chip in chips:
            family = npu_vnpu.chip_family(chip.get('name'))
            if family is None:
                continue
            argv = ['info', '-t', 'info-vnpu', '-i', str(chip['npu_id']), '-c', str(chip['chip_id'])]
            text = self.run(*argv)
            entry = {'npu_id': chip['npu_id'], 'chip_id': chip['chip_id'], 'name': chip.get('name'),
                     'vnpus': [], 'resources': {}, 'unavailable': None}
            try:
                present = npu_vnpu.parse_info_vnpu(text)
            except npu_smi.NpuSmiError as error:
                raise NpuSmiFailure(explain_error(error, 0))
            except npu_vnpu.VnpuUnavailable as refusal:
                entry['unavailable'] = '%s: %s' % (refusal.line, refusal.cause)
                result.append(entry)
                continue
            except ValueError as error:
                raise NpuSmiFailure('node %s: NPU %s chip %s: cannot read the output of npu-smi %s (first line: %r): '
                                    '%s. Fix: report that output with the driver version; docs/huawei-sources.md lists '
                                    'the layouts this collection reads' % (socket.gethostname(), chip['npu_id'],
                                                                           chip['chip_id'], ' '.join(argv),
                                                                           npu_vnpu.first_line(text), error))
            entry['vnpus'] = npu_vnpu.with_resources(present['vnpus'], family)
            for vnpu in entry['vnpus']:
                if vnpu['resource'] is not None:
                    entry['resources'][vnpu['resource']] = entry['resources'].get(vnpu['resource'], 0) + 1
            result.append(entry)
        return result
