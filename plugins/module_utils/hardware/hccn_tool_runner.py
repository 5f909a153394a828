# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running hccn_tool on the node, reading and setting each NPU's RoCE port. No Ansible imports.

Shared by the hccn_info and hccn modules, so that a timeout, a failure or an output the parsers
do not know means the same thing, with the same fix, in both.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import platform
import re
import time

from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool
from ansible_collections.npu.ascend.plugins.module_utils.hardware import tool_runner

# Where Huawei's driver puts hccn_tool, and the PATH directory many installs link it from (docs/hccn.md).
HCCN_TOOL_PATHS = ['/usr/local/Ascend/driver/tools/hccn_tool', '/usr/local/bin/hccn_tool']
HCCN_CONF = '/etc/hccn.conf'
# A read answers in well under a second; a ping sends three packets a second apart.
DEFAULT_TIMEOUT_SECONDS = 30
READS = ('address', 'gateway', 'netdetect', 'link', 'net_health', 'lldp', 'vnic')
DEFAULT_READS = ('address', 'gateway', 'netdetect', 'link', 'net_health')

_READ_COMMANDS = {
    'address': ('-ip', hccn_tool.parse_ip),
    'gateway': ('-gateway', hccn_tool.parse_gateway),
    'netdetect': ('-netdetect', hccn_tool.parse_netdetect),
    'link': ('-link', hccn_tool.parse_link),
    'net_health': ('-net_health', hccn_tool.parse_net_health),
    'lldp': ('-lldp', hccn_tool.parse_lldp_ifname),
    # A3: the die's vNIC on the SuperPoD's HCCS plane (its link, address and netmask).
    'vnic': ('-vnic', hccn_tool.parse_vnic),
}
# Reads whose output for some state no public capture shows (docs/huawei-sources.md, "Outputs no public capture
# confirms"): a message about an output they cannot read says so.
_UNVERIFIED = {
    'netdetect': 'what -netdetect -g prints for a detect address never set is not confirmed by a public source',
    'lldp': 'what -lldp -g prints without LLDP frames is not confirmed by a public source',
    'vnic': 'no public capture shows what -vnic -g prints (its format is the driver source\'s)',
}


class HccnFailure(Exception):
    """hccn_tool could not be run or read: the message says why and what to do."""


def find_hccn_tool(explicit=None, install_path=None, exists=os.path.exists):
    """The hccn_tool to run: ``explicit``, else the driver's, else the PATH link; None when absent."""
    if explicit:
        return explicit if exists(explicit) else None
    candidates = list(HCCN_TOOL_PATHS)
    if install_path:
        candidates.insert(0, os.path.join(install_path, 'driver', 'tools', 'hccn_tool'))
    for path in candidates:
        if exists(path):
            return path
    return None


def missing_tool_message(explicit=None):
    if explicit:
        return ('hccn_tool not found at %s (binary_path); fix: point binary_path at the driver\'s hccn_tool or '
                'leave it unset' % explicit)
    return ('hccn_tool not found at %s; it comes with the NPU driver of training servers: install the driver '
            '(npu.ascend.hdk), or set binary_path' % ', '.join(HCCN_TOOL_PATHS))


def wanted_problems(entries, keys=('address', 'netmask', 'gateway', 'netdetect'), where='npus', once=True):
    """Why the wanted ``entries`` ({npu, address, ...}) cannot go to hccn_tool as they are: an NPU listed twice
    (when each may appear ``once``), an address two tools would read differently. Each names the NPU, the value
    and ``where`` it came from."""
    problems = []
    first = {}
    for entry in entries:
        npu = entry.get('npu')
        if once and npu in first:
            problems.append('NPU %s is listed twice in %s (%s and %s); fix: list each NPU once'
                            % (npu, where, _describe(first[npu], keys), _describe(entry, keys)))
            continue
        first[npu] = entry
        for key in keys:
            value = entry.get(key)
            if value is not None and value != '' and hccn_tool.ipv4_problem(value):
                problems.append('NPU %s %s (from %s): %s' % (npu, key, where, hccn_tool.ipv4_problem(value)))
        netmask = entry.get('netmask')
        if netmask and not hccn_tool.ipv4_problem(netmask) and hccn_tool.netmask_prefix(netmask) is None:
            problems.append('NPU %s netmask %s (from %s) is not a contiguous netmask' % (npu, netmask, where))
    return problems


def _describe(entry, keys):
    values = ', '.join('%s %s' % (key, entry[key]) for key in keys if entry.get(key))
    return values or 'no values'


def npu_ids_from_devices(names):
    """NPU ids from the names under /dev: davinci<N> are the NPUs' logical ids (ASCII digits and nothing after
    them: ``$`` would take a name ending in a newline as a second davinci0)."""
    ids = sorted(int(match.group(1)) for match in (re.match(r'davinci([0-9]+)\Z', name) for name in names) if match)
    return ids


class HccnReader(tool_runner.ToolRunner):
    """hccn_tool as a tool_runner.ToolRunner on ``node``: its runs fail with HccnFailure, naming the node."""

    def __init__(self, run_command, binary, timeout=DEFAULT_TIMEOUT_SECONDS, clock=time.time, node=None):
        super(HccnReader, self).__init__(run_command, binary, timeout, clock)
        self.node = node or platform.node() or 'this node'

    def _stopped(self, argv):
        return HccnFailure('%s did not answer within %s seconds on %s and was stopped; fix: check the NPU driver '
                           '(dmesg, npu-smi info); if the node is only slow, raise the timeout (hccn_timeout in the '
                           'hccn role)' % (' '.join(argv), self.timeout, self.node))

    def _failed(self, args, rc, out, err):
        lines = [line for line in (out + err).splitlines() if line.strip()]
        npu = ', NPU %s' % args[1] if len(args) > 1 and args[0] == '-i' else ''
        return HccnFailure('%s failed on %s%s (rc=%s), printing %s; fix: check that the driver is loaded (npu-smi '
                           'info) and that the NPU id and values are right'
                           % (' '.join([self.binary] + [str(arg) for arg in args]), self.node, npu, rc,
                              ' | '.join(repr(line.strip()) for line in lines[:5]) or 'nothing'))

    def run(self, *args):
        rc, out, err = self._run_tool(args)
        if rc != 0:
            raise self._failed(args, rc, out, err)
        return out

    def read(self, npu, what):
        """One value of one NPU. A value never set is None however the tool says so (its "no ... was preset
        there!" error with a non-zero exit, 0.0.0.0, nothing); any other failure, and any output the parser does
        not know, fails naming the command, the node, the NPU and what the tool printed first."""
        option, parser = _READ_COMMANDS[what]
        args = ('-i', npu, option, '-g')
        rc, out, err = self._run_tool(args)
        if rc != 0 and not hccn_tool.says_not_preset(what, out + err):
            raise self._failed(args, rc, out, err)
        try:
            return parser(out)
        except hccn_tool.HccnParseError as error:
            lines = [line for line in (out + err).splitlines() if line.strip()]
            unverified = _UNVERIFIED.get(what)
            raise HccnFailure('cannot read hccn_tool -i %s %s -g on %s, NPU %s: it printed %r first (rc=%s, %d line(s)): '
                              '%s%s; fix: check that %s is Huawei\'s hccn_tool and report this output with the driver '
                              'version (cat /usr/local/Ascend/driver/version.info)'
                              % (npu, option, self.node, npu, lines[0] if lines else '', rc, len(lines), error,
                                 ' (%s: docs/huawei-sources.md)' % unverified if unverified else '', self.binary))

    def read_npu(self, npu, reads=DEFAULT_READS):
        state = {'npu': int(npu)}
        for what in reads:
            if what == 'lldp':
                # LLDP only helps to find a cabling fault; a switch that sends none is no failure.
                try:
                    state['lldp_port'] = self.read(npu, what)
                except HccnFailure:
                    state['lldp_port'] = None
                continue
            value = self.read(npu, what)
            if what in ('address', 'vnic'):
                state.update(value)
            else:
                state[what] = value
        return state

    def read_until_settled(self, npus, reads, wait_timeout, interval, sleep=time.sleep):
        """Reads every NPU until each link is UP and each net health Success, or ``wait_timeout`` seconds
        passed; returns (states, settled, seconds waited)."""
        started = self._clock()
        while True:
            states = [self.read_npu(npu, reads) for npu in npus]
            settled = all(state.get('link', 'UP') == 'UP' and state.get('net_health', hccn_tool.NET_HEALTH_OK)
                          == hccn_tool.NET_HEALTH_OK for state in states)
            waited = self._clock() - started
            if settled or waited + interval > wait_timeout:
                return states, settled, round(waited, 1)
            sleep(interval)

    def ping(self, npu, address):
        """One ping from ``npu`` to ``address``: the parsed transcript, or an ``error`` when it failed."""
        try:
            text = self.run('-i', npu, '-ping', '-g', 'address', address)
            result = hccn_tool.parse_ping(text, npu=npu, target=address)
            result['error'] = None
        except (HccnFailure, hccn_tool.HccnParseError) as error:
            result = {'npu': int(npu), 'target': address, 'transmitted': None, 'received': 0, 'loss_pct': 100.0,
                      'times_ms': [], 'avg_ms': None, 'max_ms': None, 'error': str(error)}
        result['summary'] = 'NPU %s -> %s: %s' % (
            npu, address, result['error'] or '%s of %s received, %s%% loss, avg %s ms, max %s ms'
            % (result['received'], result['transmitted'], result['loss_pct'], result['avg_ms'], result['max_ms']))
        return result

    def hccs_ping(self, npu, address):
        """One HCCS ping from die ``npu`` to the vNIC ``address`` (A3 SuperPoD). A product without the command
        answers with hccn_tool's "not supported" sentence: ``supported`` false, no error, since that is the
        product, not a fault."""
        args = ('-i', npu, '-hccs_ping', '-g', 'address', address)
        result = {'npu': int(npu), 'target': address, 'transmitted': None, 'received': 0, 'loss_pct': 100.0,
                  'times_us': [], 'avg_us': None, 'max_us': None, 'supported': True, 'error': None}
        try:
            rc, out, err = self._run_tool(args)
            if hccn_tool.says_not_supported(out + err):
                result.update({'supported': False, 'loss_pct': None})
            elif rc != 0:
                raise self._failed(args, rc, out, err)
            else:
                result.update(hccn_tool.parse_hccs_ping(out, npu=npu, target=address))
        except (HccnFailure, hccn_tool.HccnParseError) as error:
            result['error'] = str(error)
        result['summary'] = 'NPU %s -> %s (HCCS): %s' % (
            npu, address, result['error'] or ('not supported on this product' if not result['supported'] else
                                              '%s of %s received, %s%% loss, avg %s us, max %s us'
                                              % (result['received'], result['transmitted'], result['loss_pct'],
                                                 result['avg_us'], result['max_us'])))
        return result

    def set_address(self, npu, address, netmask):
        return self.run('-i', npu, '-ip', '-s', 'address', address, 'netmask', netmask)

    def set_gateway(self, npu, gateway):
        return self.run('-i', npu, '-gateway', '-s', 'gateway', gateway)

    def set_netdetect(self, npu, address):
        return self.run('-i', npu, '-netdetect', '-s', 'address', address)


def read_conf_state(path=None):
    """/etc/hccn.conf as the modules report it: {'conf': parsed or None, 'sha256': or None, 'problems': [why it
    is not one clear answer for the next boot, or why it could not be read]}. Read with the bounded reader (a
    FIFO or a huge file there is not read); absent is no problem. The SHA-256 is what the hccn role's fabric
    marker records (fabric_marker.py)."""
    path = path or HCCN_CONF
    data, problem = fabric_marker.read_conf(path)
    if data is None:
        return {'conf': None, 'sha256': None, 'problems': [problem] if problem else []}
    text = data.decode('utf-8', 'replace')
    problems = ['%s: %s' % (path, found) for found in hccn_tool.conf_problems(text)]
    return {'conf': hccn_tool.parse_hccn_conf(text), 'sha256': fabric_marker.conf_sha256(data), 'problems': problems}
