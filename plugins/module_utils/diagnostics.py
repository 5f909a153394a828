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

from ansible_collections.npu.ascend.plugins.module_utils import config_redaction

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
