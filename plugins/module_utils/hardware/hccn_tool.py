# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading what Huawei's ``hccn_tool`` prints, and ``/etc/hccn.conf``. No Ansible imports.

The strings are Huawei's (docs/hccn.md lists where each one was seen): ``ipaddr:`` and
``netmask:`` from ``-ip -g``, ``netdetect addr:`` from ``-netdetect -g`` (the driver source prints
``addr``, a public deployment guide shows ``address``), ``link status:``, ``net health status:``,
``default gateway:<G>, Iface:eth<N>`` (the driver source's format; a guide shows it), the
``-ping`` transcript and the ``Ifname:`` line of ``-lldp -g``. Every parser raises ``HccnParseError`` on text it does not
recognise: a value the collection cannot read is never taken as a good one.

A value never set reads as None in every form we know of (docs/huawei-sources.md, "Outputs no
public capture confirms"): the tool's own error (``Get ipconf failed, because no ip was preset
there!``, ``Get gateway failed, because no gateway was preset there!``, which a fresh server
prints with a non-zero exit), ``0.0.0.0``, or an empty answer.

Addresses are refused unless written the one way every tool reads alike: four decimal numbers
0-255 without leading zeros (``010`` is 8 to inet_aton, 10 to others) and nothing around them
(``$`` in a pattern accepts a trailing newline; these patterns end in ``\\Z``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue

# Every status `hccn_tool -net_health -g` is known to print; only Success means a healthy port.
# The driver source's status table (0 Success ... 8 Detect ip set, anything else Unknown); MindCluster's
# fault diagnosis looks for `Socket failed`, outside that table (docs/hccn.md).
NET_HEALTH_STATUSES = ('Success', 'Socket fail', 'Socket failed', 'Receive timeout', 'Unreachable', 'Time exceeded',
                       'Fault', 'Init', 'Thread error', 'Detect ip set', 'Unknown')
NET_HEALTH_OK = 'Success'
LINK_STATUSES = ('UP', 'DOWN')
# Chips whose NPUs carry their own RoCE port, as npu-smi names them (the hardware catalogue's roce_chips:
# Atlas 800T A2 / 900 A2 PoD, one subnet per node; the legacy 910 of the Atlas 800-9000 training
# servers, SMP layout). A3 dies have one port per die (roce_chips('per_die')); inference chips have none.
A2_TRAINING_CHIPS = hardware_catalogue.roce_chips('one_subnet')
A1_TRAINING_CHIPS = hardware_catalogue.roce_chips('smp')
UNSET_ADDRESS = '0.0.0.0'
# The tool's error for a value never set (module docstring), and which read each may answer by the word after
# `no` (the 950 generation's tool says `Get ip failed`); no capture shows a detect address never set, so any
# such error answers that read.
_NOT_PRESET = re.compile(r'\s*Get \w+(?: \w+)? failed, because no (\w+)(?: \w+)? was preset there!?\s*\Z', re.IGNORECASE)
_NOT_PRESET_WORDS = {'address': ('ip', 'ipconf'), 'gateway': ('gateway',), 'netdetect': None}
# /etc/hccn.conf keys the collection sets (one line `<key>_<npu>=<value>` each); others are kept as read.
CONF_KEYS = ('address', 'netmask', 'gateway', 'netdetect')

_IPV4 = r'([0-9]+(?:\.[0-9]+){3})'
_IP_LINE = re.compile(r'^\s*ipaddr\s*:\s*' + _IPV4 + r'\s*$', re.MULTILINE)
_NETMASK_LINE = re.compile(r'^\s*netmask\s*:\s*' + _IPV4 + r'\s*$', re.MULTILINE)
_NETDETECT_LINE = re.compile(r'^\s*netdetect\s+addr(?:ess)?\s*:\s*' + _IPV4 + r'\s*$', re.MULTILINE)
_GATEWAY_LINE = re.compile(r'^\s*default\s+gateway\s*:\s*' + _IPV4 + r'\s*(?:,\s*Iface\s*:\s*\S+)?\s*$',
                           re.MULTILINE)
_LINK_LINE = re.compile(r'^\s*link\s+status\s*:\s*(\S+)\s*$', re.MULTILINE)
_HEALTH_LINE = re.compile(r'^\s*net\s+health\s+status\s*:\s*(.*?)\s*$', re.MULTILINE)
# [0-9], not \d: \d also takes other scripts' digits, which int() reads. The summary's `packet loss` is `packets
# loss` in the source's -hccs_ping (hccn_product_ext/tool_cmd.c): both are read.
_PING_HEADER = re.compile(r'^\s*device\s+([0-9]+)\s+PING\s+' + _IPV4 + r'\s*$', re.MULTILINE)
_PING_REPLY = re.compile(r'^\s*recv\s+seq=([0-9]+)\s*,\s*time=([0-9]+(?:\.[0-9]+)?)\s*ms\s*$', re.MULTILINE)
_PING_SUMMARY = re.compile(r'^\s*([0-9]+)\s+packets?\s+transmitted\s*,\s*([0-9]+)\s+received\s*,\s*'
                           r'([0-9]+(?:\.[0-9]+)?)%\s+packets?\s+loss\s*$', re.MULTILINE)
_LLDP_IFNAME = re.compile(r'^\s*Ifname\s*:\s*(\S+)\s*$', re.MULTILINE)
_CONF_LINE = re.compile(r'^([A-Za-z][A-Za-z0-9_]*?)_([0-9]+)\s*=\s*(.*?)\s*$')


class HccnParseError(ValueError):
    """hccn_tool printed something the parser does not recognise."""


def ipv4_problem(text):
    """'' when ``text`` is a dotted-quad IPv4 address written the one unambiguous way, else why not."""
    if not isinstance(text, str) or not re.match(_IPV4 + r'\Z', text):
        return '%r is not an IPv4 address (four numbers 0-255 with dots, nothing around them)' % (text,)
    parts = text.split('.')
    if any(len(part) > 1 and part.startswith('0') for part in parts):
        return ('%r has a part with a leading zero, which tools read differently (inet_aton takes 010 as 8, '
                'others as 10); write it without leading zeros' % (text,))
    if any(int(part) > 255 for part in parts):
        return '%r is not an IPv4 address (a part is above 255)' % (text,)
    return ''


def says_not_preset(what, text):
    """Whether ``text`` is hccn_tool's error for a ``what`` (address, gateway, netdetect) never set."""
    if what not in _NOT_PRESET_WORDS:
        return False
    lines = [line for line in (text or '').splitlines() if line.strip()]
    match = _NOT_PRESET.match(lines[0]) if len(lines) == 1 else None
    if not match:
        return False
    words = _NOT_PRESET_WORDS[what]
    return words is None or match.group(1).lower() in words


def _unset_answer(what, text):
    """Whether ``text`` says ``what`` was never set: the tool's error for it, or an empty answer."""
    return not (text or '').strip() or says_not_preset(what, text)


def _address(text, what):
    problem = ipv4_problem(text)
    if problem:
        raise HccnParseError('%s: %s' % (what, problem))
    return None if text == UNSET_ADDRESS else text


def _one(pattern, text, what):
    found = pattern.findall(text or '')
    if len(found) != 1:
        raise HccnParseError('expected one %s line, found %d in %r' % (what, len(found), _excerpt(text)))
    return found[0]


def _excerpt(text, limit=200):
    text = (text or '').strip()
    return text if len(text) <= limit else text[:limit] + '...'


def parse_ip(text):
    """``hccn_tool -i N -ip -g``: {'address', 'netmask'}; both None for an address never set."""
    if _unset_answer('address', text):
        return {'address': None, 'netmask': None}
    address = _address(_one(_IP_LINE, text, 'ipaddr:'), 'ipaddr')
    netmask = _address(_one(_NETMASK_LINE, text, 'netmask:'), 'netmask')
    if netmask is not None and netmask_prefix(netmask) is None:
        raise HccnParseError('netmask %s is not a contiguous netmask' % netmask)
    return {'address': address, 'netmask': netmask}


def parse_netdetect(text):
    """``-netdetect -g``: the detect address, None when unset."""
    if _unset_answer('netdetect', text):
        return None
    return _address(_one(_NETDETECT_LINE, text, 'netdetect addr:'), 'netdetect addr')


def parse_gateway(text):
    """``-gateway -g``: the gateway, None when unset."""
    if _unset_answer('gateway', text):
        return None
    return _address(_one(_GATEWAY_LINE, text, 'default gateway:'), 'default gateway')


def parse_link(text):
    """``-link -g``: 'UP' or 'DOWN'."""
    status = _one(_LINK_LINE, text, 'link status:')
    if status not in LINK_STATUSES:
        raise HccnParseError('link status %r is neither UP nor DOWN' % status)
    return status


def parse_net_health(text):
    """``-net_health -g``: one of NET_HEALTH_STATUSES."""
    status = _one(_HEALTH_LINE, text, 'net health status:')
    if status not in NET_HEALTH_STATUSES:
        raise HccnParseError('net health status %r is not one hccn_tool is known to print (%s)'
                             % (status, ', '.join(NET_HEALTH_STATUSES)))
    return status


def _ping_transcript(text, npu, target, command, reply_pattern, unit):
    """The transcript of ``-ping`` or ``-hccs_ping`` (same header and summary lines; ``reply_pattern`` reads
    the reply times, in ``unit``): npu, target, transmitted, received, loss_pct, times_<unit>, avg_<unit>,
    max_<unit>."""
    headers = _PING_HEADER.findall(text or '')
    if len(headers) > 1:
        raise HccnParseError('expected at most one device N PING line, found %d in %r' % (len(headers), _excerpt(text)))
    header = headers[0] if headers else (npu, target)
    summary = _one(_PING_SUMMARY, text, 'packets transmitted')
    transmitted, received = int(summary[0]), int(summary[1])
    if received > transmitted:
        raise HccnParseError('%s summary says %d received of %d transmitted' % (command, received, transmitted))
    times = [float(reply[1]) for reply in reply_pattern.findall(text)]
    return {
        'npu': None if header[0] is None else int(header[0]),
        'target': None if header[1] is None else _address(header[1], '%s target' % command),
        'transmitted': transmitted,
        'received': received,
        'loss_pct': float(summary[2]),
        'times_' + unit: times,
        'avg_' + unit: round(sum(times) / len(times), 3) if times else None,
        'max_' + unit: max(times) if times else None,
    }


def parse_ping(text, npu=None, target=None):
    """``-ping -g address A``: npu, target, transmitted, received, loss_pct, times_ms, avg_ms, max_ms.

    Transcripts are published without their first line ``device N PING A`` too; ``npu`` and ``target``
    (what was asked) stand for it then. The count comes from the summary line either way.
    """
    return _ping_transcript(text, npu, target, 'ping', _PING_REPLY, 'ms')


# -vnic -g (driver source tool_ops.c, tool_vnic_cmd_execute; a public example of `hccn_tool -g -vnic -i 0`): three
# lines, `vnic link status: UP|DOWN`, `vnic ipaddr: <A>`, `vnic netmask: <M>`.
_VNIC_LINK = re.compile(r'^\s*vnic\s+link\s+status\s*:\s*(\S+)\s*$', re.MULTILINE)
_VNIC_IP = re.compile(r'^\s*vnic\s+ipaddr\s*:\s*' + _IPV4 + r'\s*$', re.MULTILINE)
_VNIC_NETMASK = re.compile(r'^\s*vnic\s+netmask\s*:\s*' + _IPV4 + r'\s*$', re.MULTILINE)
# -hccs_ping (driver source hccn_product_ext/tool_cmd.c, tool_ping_printf; no public capture): per packet
# `recv seq 0, time = 12.345us, L1 plane check result = 0x0`, then the summary with `packets loss`.
_HCCS_REPLY = re.compile(r'^\s*recv\s+seq\s*=?\s*([0-9]+)\s*,\s*time\s*=\s*([0-9]+(?:\.[0-9]+)?)\s*us\b.*$',
                         re.MULTILINE)
# What hccn_tool prints for a command the product does not have (driver source cmd.c's error table): -hccs_ping
# outside the Atlas 900/9000 A3 SuperPoD and the A+K, A+X main boards.
NOT_SUPPORTED = 'The command is not supported on this product.'
_NOT_SUPPORTED = re.compile(r'^\s*The command is not supported on this product\.?\s*$', re.MULTILINE | re.IGNORECASE)


def says_not_supported(text):
    """Whether hccn_tool's answer is its sentence for a command this product does not have."""
    return bool(_NOT_SUPPORTED.search(text or ''))


def parse_vnic(text):
    """``hccn_tool -i N -vnic -g``: {'vnic_link': 'UP'|'DOWN', 'vnic_address', 'vnic_netmask'}."""
    status = _one(_VNIC_LINK, text, 'vnic link status:')
    if status not in LINK_STATUSES:
        raise HccnParseError('vnic link status %r is neither UP nor DOWN' % status)
    address = _address(_one(_VNIC_IP, text, 'vnic ipaddr:'), 'vnic ipaddr')
    netmask = _address(_one(_VNIC_NETMASK, text, 'vnic netmask:'), 'vnic netmask')
    if netmask is not None and netmask_prefix(netmask) is None:
        raise HccnParseError('vnic netmask %s is not a contiguous netmask' % netmask)
    return {'vnic_link': status, 'vnic_address': address, 'vnic_netmask': netmask}


def parse_hccs_ping(text, npu=None, target=None):
    """``hccn_tool -i N -hccs_ping -g address A``: as parse_ping, the times in microseconds (``times_us``,
    ``avg_us``, ``max_us``). The header line and the summary are those of ``-ping`` (``packets loss``)."""
    return _ping_transcript(text, npu, target, 'hccs_ping', _HCCS_REPLY, 'us')


def parse_lldp_ifname(text):
    """``-lldp -g``: the switch port (``Ifname``) the NPU is cabled to, None when LLDP shows none."""
    found = _LLDP_IFNAME.findall(text or '')
    return found[0] if found else None


def parse_hccn_conf(text):
    """``/etc/hccn.conf`` as {npu_id: {key: value}}; lines that are not ``key_N=value`` are ignored."""
    npus = {}
    for line in (text or '').splitlines():
        match = _CONF_LINE.match(line.strip())
        if match:
            npus.setdefault(int(match.group(2)), {})[match.group(1)] = match.group(3)
    return npus


def conf_problems(text):
    """Why ``/etc/hccn.conf`` does not say one thing for the next boot's ``-cfg recovery``: a key given twice
    for one NPU (which line wins is not documented), one address given to two NPUs (hccn_tool refuses the
    second), an address or netmask two tools would read differently. [] when there is none."""
    problems = []
    seen = {}
    holders = {}
    for number, line in enumerate((text or '').splitlines(), 1):
        match = _CONF_LINE.match(line.strip())
        if not match:
            continue
        key, npu, value = match.group(1), int(match.group(2)), match.group(3)
        name = '%s_%d' % (key, npu)
        if name in seen:
            first_number, first_value = seen[name]
            problems.append('%s is given twice (lines %d and %d: %s, %s): which one the next boot restores is '
                            'not documented' % (name, first_number, number, first_value, value))
            continue
        seen[name] = (number, value)
        if key in CONF_KEYS:
            problem = ipv4_problem(value)
            if problem:
                problems.append('%s (line %d): %s' % (name, number, problem))
                continue
        if key == 'address' and value != UNSET_ADDRESS:
            holders.setdefault(ip_to_int(value), []).append(npu)
    for address, npus in sorted(holders.items()):
        if len(npus) > 1:
            problems.append('address %s is given to %s: hccn_tool refuses one address on two NPUs of a node'
                            % (int_to_ip(address), ' and '.join('NPU %d' % npu for npu in npus)))
    return problems


# --- addresses (pure integer arithmetic, no ipaddress module: the nodes may run Python 2.7) -------

def ip_to_int(text):
    problem = ipv4_problem(text)
    if problem:
        raise ValueError(problem)
    value = 0
    for part in text.split('.'):
        value = value * 256 + int(part)
    return value


def int_to_ip(value):
    return '.'.join(str((value >> shift) & 255) for shift in (24, 16, 8, 0))


def netmask_prefix(netmask):
    """Prefix length of a contiguous netmask, None when it is not one."""
    try:
        value = ip_to_int(netmask)
    except ValueError:
        return None
    prefix = bin(value).count('1')
    if value != ((0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF):
        return None
    return prefix


def same_subnet(first, second, netmask):
    mask = ip_to_int(netmask)
    return ip_to_int(first) & mask == ip_to_int(second) & mask


def subnet_of(address, netmask):
    """'a.b.c.d/p' of the network ``address`` is in."""
    return '%s/%d' % (int_to_ip(ip_to_int(address) & ip_to_int(netmask)), netmask_prefix(netmask))


def npu_state_differences(live, wanted):
    """Keys of ``wanted`` (address, netmask, gateway, netdetect) whose value differs from ``live``.

    The address and netmask are set together (one hccn_tool call), so a difference in either
    names both.
    """
    changed = [key for key in ('gateway', 'netdetect') if wanted.get(key) and wanted[key] != live.get(key)]
    if (wanted.get('address') and wanted['address'] != live.get('address')) or \
            (wanted.get('netmask') and wanted['netmask'] != live.get('netmask')):
        changed.insert(0, 'address')
    return changed


def conf_differences(conf, live):
    """{npu_id: [key...]} where /etc/hccn.conf does not hold what is live (the next boot's
    ``-cfg recovery`` would restore something else). ``live``: {npu_id: {address, netmask, gateway, netdetect}}."""
    differences = {}
    for npu_id, values in live.items():
        saved = conf.get(int(npu_id), {})
        keys = [key for key in CONF_KEYS if values.get(key) and saved.get(key) != values[key]]
        if keys:
            differences[int(npu_id)] = keys
    return differences
