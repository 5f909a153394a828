# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An A3 SuperPoD member as its node reports it, and the addresses its dies have on the HCCS plane.
Pure, no Ansible imports (the hccn_info module reads it on the node, hccn_plan on the controller).

Facts (docs/huawei-sources.md, "Atlas A3"): ``npu-smi info -t spod-info -i N -c C`` prints four
tab-indented ``Key : Value`` lines, ``SDID``, ``Super Pod Size`` (NPUs: 384 on an Atlas 900 A3
SuperPoD of 48 servers), ``Super Pod ID`` and ``Server Index`` (a real A3 node's log); a product
without SuperPoD prints ``This device does not support querying spod-info.`` (Huawei's npu-smi
reference). The SDID is ``server_index << 22 | npu << 18 | die << 16 | device`` (Huawei's A3 DCMI
reference). The vNIC address rule is the catalogue's ``vnic_address_rule``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SPOD_UNSUPPORTED = re.compile(r'does\s+not\s+support\s+querying\s+spod[-_]info', re.IGNORECASE)
_KEY_VALUE = re.compile(r'^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*(\S*)\s*$')
_KEYS = {'sdid': 'sdid', 'super pod size': 'size', 'super pod id': 'id', 'server index': 'server_index'}


class SuperPodParseError(ValueError):
    """npu-smi's spod-info printed something the parser does not recognise."""


def parse_spod_info(text):
    """``npu-smi info -t spod-info -i N -c C`` as {'sdid', 'size', 'id', 'server_index'} (integers), or None
    when the product says it has no SuperPoD information. Anything else, a key missing or twice, a value that is
    not a non-negative decimal number, raises SuperPodParseError."""
    text = text or ''
    if SPOD_UNSUPPORTED.search(text):
        return None
    values = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _KEY_VALUE.match(line)
        key = _KEYS.get(match.group(1).strip().lower()) if match else None
        if key is None:
            continue
        if key in values:
            raise SuperPodParseError('spod-info gives %s twice' % match.group(1).strip())
        if not re.match(r'[0-9]+\Z', match.group(2)):
            raise SuperPodParseError('spod-info %s is %r, not a number' % (match.group(1).strip(), match.group(2)))
        values[key] = int(match.group(2))
    missing = [name for name, key in sorted(_KEYS.items()) if key not in values]
    if missing:
        raise SuperPodParseError('spod-info lacks %s in %r' % (', '.join(missing), text.strip()[:200]))
    return values


def decode_sdid(sdid):
    """(server index, NPU, die, device) of an SDID."""
    sdid = int(sdid)
    return sdid >> 22, (sdid >> 18) & 0xF, (sdid >> 16) & 0x3, sdid & 0xFFFF


def encode_sdid(server_index, npu, die, device):
    return (int(server_index) << 22) | (int(npu) << 18) | (int(die) << 16) | int(device)


def is_member(server_index, max_servers):
    """Whether a node with this ``Server Index`` is a SuperPoD member, as hccn_tool judges it (index below the
    family's ``super_pod_max_servers``)."""
    return server_index is not None and max_servers is not None and 0 <= int(server_index) < int(max_servers)


def vnic_address(rule, server_index, device, dies_per_npu=2):
    """The vNIC address of die ``device`` (its Phy-ID) of the server ``server_index`` by the catalogue's
    ``rule``; None for a rule we do not know or a node outside a SuperPoD (its vNIC rule is not public).

    ``super_pod_server`` (driver source, tool_cmd.c): ``192.<server index>.<2 + die>.<199 - device>``."""
    if rule != 'super_pod_server' or server_index is None:
        return None
    die = int(device) % int(dies_per_npu)
    return '192.%d.%d.%d' % (int(server_index), 2 + die, 199 - int(device))


def servers_in(size, npus_per_server):
    """How many servers a SuperPoD of ``size`` NPUs (npu-smi's ``Super Pod Size``) holds."""
    if not size or not npus_per_server:
        return None
    return int(size) // int(npus_per_server)
