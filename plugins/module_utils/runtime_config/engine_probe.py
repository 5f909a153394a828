# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the container engines of a node are, read in one probe: the units systemd knows and
the containerd release. Pure functions over the commands' output; no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# The engines the Ascend Docker Runtime registers with, and the kubelet restarted after them.
UNITS = ('containerd', 'docker', 'kubelet')
ENGINES = ('containerd', 'docker')
SHOW_PROPERTIES = ('Id', 'LoadState', 'ActiveState')
_RELEASE = re.compile(r'^v?(\d+)\.(\d+)')


def systemctl_show_argv(systemctl, units=UNITS):
    """One ``systemctl show`` for every unit: it prints one block per unit asked, in that order."""
    return [systemctl, 'show', '--property=%s' % ','.join(SHOW_PROPERTIES)] + ['%s.service' % unit for unit in units]


def parse_systemctl_show(text, units=UNITS):
    """unit -> ``{load_state, active_state}`` from the output of ``systemctl_show_argv``.

    A unit systemd has no file for still gets a block, with ``LoadState=not-found``. ValueError
    when the output has not one block per unit asked.
    """
    blocks = [block for block in re.split(r'\n\s*\n', text.strip()) if block.strip()] if text.strip() else []
    if len(blocks) != len(units):
        raise ValueError('systemctl show printed %d block(s) for %d unit(s): %r' % (len(blocks), len(units), text[:400]))
    states = {}
    for unit, block in zip(units, blocks):
        properties = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        states[unit] = {'load_state': properties.get('LoadState', ''), 'active_state': properties.get('ActiveState', '')}
    return states


def present_engines(states):
    """The container engines of the node, from ``parse_systemctl_show``: those whose unit systemd has
    loaded (a unit only referenced, or absent, shows as ``not-found``)."""
    return [engine for engine in ENGINES
            if (states.get(engine) or {}).get('load_state', '') not in ('', 'not-found')]


def parse_containerd_version(text):
    """``{version, major, minor, output}`` from ``containerd --version``, or None for output that names no release.

    ``containerd github.com/containerd/containerd/v2 v2.4.2 <commit>`` (upstream) or Debian's
    ``containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1``.
    """
    fields = text.split()
    if len(fields) < 3 or fields[0] != 'containerd':
        return None
    match = _RELEASE.match(fields[2])
    if not match:
        return None
    return {'version': fields[2][1:] if fields[2].startswith('v') else fields[2],
            'major': int(match.group(1)), 'minor': int(match.group(2)), 'output': text.strip()}
