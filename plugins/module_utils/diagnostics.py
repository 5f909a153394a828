# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node's diagnostics bundle holds, and how each piece is cut down and cleaned; no Ansible imports.

The bundle follows what Huawei's own collection script and GPU Operator's must-gather gather for
a support case (docs/collect.md): npu-smi's views, the driver's kernel lines and modules, the
version files, the installer logs, the container engines' configs, our records and the
Kubernetes agents' logs. Every piece is capped (logs keep their end, the newest lines), and every
config-like file passes through config_redaction before it leaves the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_redaction
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_vnpu

# The kernel lines of the NPU driver stack: davinci devices, devdrv/drv_* modules, the DCMI and
# SVM layers, hccn (RoCE) and Huawei's PCI functions.
_KERNEL_LINE = re.compile(r'davinci|devdrv|drv_|\bnpu|hisi|ascend|hccn|dcmi|\bsvm|19e5', re.I)
# /proc/modules: the driver's modules are drv_* (drv_pcie_host, drv_devmng_host, ...) and ascend_*.
_DRIVER_MODULE = re.compile(r'^(drv_|ascend|davinci|hisi)', re.I)
STATUSES = ('collected', 'truncated', 'absent', 'failed', 'refused')


def kernel_lines(text):
    """The lines of ``dmesg`` that concern the NPU driver stack."""
    return '\n'.join(line for line in (text or '').splitlines() if _KERNEL_LINE.search(line))


def driver_modules(proc_modules):
    """The lines of /proc/modules (what lsmod shows) of the NPU driver's modules."""
    return '\n'.join(line for line in (proc_modules or '').splitlines() if _DRIVER_MODULE.match(line))


def cap(data, limit):
    """(data, truncated): at most ``limit`` bytes, the end kept (a log's newest lines)."""
    if len(data) <= limit:
        return data, False
    return data[-limit:], True


def config_kind(path):
    """'json' or 'toml' from the file name; None for anything else."""
    lowered = path.lower()
    for suffix, kind in (('.json', 'json'), ('.toml', 'toml')):
        if lowered.endswith(suffix) or suffix + '.' in lowered:
            return kind
    return None


def redact(path, data):
    """The bytes of a config-like file with its credentials hidden (config_redaction), by structure when
    it parses as JSON or TOML, line by line otherwise. Undecodable bytes are replaced, never passed on."""
    text = data.decode('utf-8', 'replace')
    return (config_redaction.redact_config_text(text, config_kind(path)) or '').encode('utf-8')


def member_for_file(path):
    """Where a node file goes in the bundle: ``files/`` and its absolute path."""
    return 'files/' + path.lstrip('/')


def index_entry(member, source, status, size=0, detail='', redacted=False):
    if status not in STATUSES:
        raise ValueError('status %r is not one of %s' % (status, ', '.join(STATUSES)))
    return {'member': member, 'source': source, 'status': status, 'bytes': size, 'detail': detail,
            'redacted': redacted}


def summary(index):
    """Count of the index's entries per status, every status present."""
    counts = dict((status, 0) for status in STATUSES)
    for entry in index:
        counts[entry['status']] += 1
    return counts


# The verbatim record of every read the collection makes on a node (docs/collect.md, "Replaying a
# bundle"): ``commands/<tool> <arg> <arg>...`` plus ``.txt`` (stdout as printed), ``.rc`` (the exit
# status) and ``.stderr.txt`` (only when something was printed there). The tool is named by its
# base name; in an argument a space, ``%``, ``/``, the characters Windows refuses in a file name
# (``\\:<>"|?*``) and anything unprintable are written %XX, so that one argv gives one member name and
# back, and a bundle unpacks anywhere. sandbox/packages/payload/ascend_sim.py maps an argv the
# same way (the sandbox may not import this file; tests/unit/sandbox checks that both agree).
COMMANDS_DIR = 'commands/'
_UNSAFE = re.compile(r'[^\x21-\x7e]|[%/\\:<>"|?*]')
NPU_SMI_READS = (('info',), ('info', '-l'), ('info', '-m'))
NPU_SMI_VNPU_READS = (('info', '-t', 'template-info'), ('info', '-t', 'vnpu-mode'), ('info', '-t', 'vnpu-cfg-recover'))
# What hccn_tool_runner reads of each NPU (every READS entry), in its argv.
HCCN_READ_OPTIONS = ('-ip', '-gateway', '-netdetect', '-link', '-net_health', '-lldp')
LSPCI_READS = (('-nn', '-d', '19e5:'), ('-vmm', '-nn', '-D', '-d', '19e5:'))


def _quote(token):
    return _UNSAFE.sub(lambda match: ''.join('%%%02X' % byte for byte in match.group(0).encode('utf-8')), token)


def command_member(argv):
    """The member name (without suffix) of the verbatim record of ``argv``; ValueError for an empty argv."""
    if not argv or not argv[0]:
        raise ValueError('an empty command has no member name')
    return COMMANDS_DIR + ' '.join(_quote(str(token)) for token in [str(argv[0]).rsplit('/', 1)[-1]] + list(argv[1:]))


def npu_smi_chip_reads(chips):
    """npu-smi's reads that depend on the chips ``npu-smi info`` lists (npu_smi.parse_info's ``chips``): the
    board of every NPU, and where a chip can be split into vNPUs (npu_vnpu.chip_family), its ``info-vnpu``
    and, once, the template list, the vNPU mode and its recovery setting."""
    reads, npus, splittable = [], [], False
    for chip in chips:
        if chip.get('npu_id') is None:
            continue
        if chip['npu_id'] not in npus:
            npus.append(chip['npu_id'])
            reads.append(('info', '-t', 'board', '-i', str(chip['npu_id'])))
    for chip in chips:
        if chip.get('npu_id') is not None and chip.get('chip_id') is not None and npu_vnpu.chip_family(chip.get('name')):
            splittable = True
            reads.append(('info', '-t', 'info-vnpu', '-i', str(chip['npu_id']), '-c', str(chip['chip_id'])))
    return reads + (list(NPU_SMI_VNPU_READS) if splittable else [])


def hccn_reads(npu_ids):
    """hccn_tool's reads of each NPU, as hccn_tool_runner runs them (``-i N <option> -g``)."""
    return [('-i', str(npu), option, '-g') for npu in npu_ids for option in HCCN_READ_OPTIONS]
