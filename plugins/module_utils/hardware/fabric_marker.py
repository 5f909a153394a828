# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric marker: the verdict of the hccn role's gate, kept on the node so that
``npu.ascend.ascend_facts`` can report it and ``npu.ascend.k8s_node`` label the Node with it.

The gate's verdict holds only for what the gate checked: each NPU's address, netmask, gateway and
detect address, and ``/etc/hccn.conf``, which the driver restores at boot (``hccn_tool -cfg
recovery``). So the marker carries them, and the marker counts as ``passed`` only while the live
``/etc/hccn.conf`` has the same SHA-256 and holds the same values per NPU. A hand-edited
``/etc/hccn.conf`` or a failed later gate (which replaces the marker with a ``failed`` one) takes
the verdict away. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import hashlib
import json

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool

FABRIC_MARKER_PATH = '/var/lib/npu_ascend/hccn-fabric.json'
HCCN_CONF_PATH = '/etc/hccn.conf'
MARKER_FORMAT = 1
VERDICTS = ('passed', 'failed')
# What the probe reports (ascend_facts ``fabric.state``); only ``passed`` earns the Node label.
STATES = ('passed', 'failed', 'changed', 'absent', 'damaged')
NPU_KEYS = ('address', 'netmask', 'gateway', 'netdetect')
_REGATE = 'run site.yml --tags hccn (the npu.ascend.hccn role) to gate the fabric again'


def conf_sha256(data):
    """The SHA-256 (hex) of /etc/hccn.conf's bytes, None when there is no such file."""
    if data is None:
        return None
    return hashlib.sha256(data).hexdigest()


def _npu_entry(state):
    entry = {'npu': int(state['npu'])}
    for key in NPU_KEYS:
        value = state.get(key)
        entry[key] = None if value in (None, '') else str(value)
    return entry


def build_marker(passed, npus, conf_digest, problems=None):
    """The marker for a gate that ``passed`` (or not) on NPUs ``npus`` (each with ``npu`` and the
    NPU_KEYS, as the hccn module reads them back) while /etc/hccn.conf had SHA-256 ``conf_digest``.

    No time stamp: a rerun that finds the same verdict on the same configuration writes the same
    bytes, so it changes nothing."""
    if not isinstance(npus, (list, tuple)):
        raise ValueError('npus must be a list of the NPUs the gate checked, got %s' % type(npus).__name__)
    entries = sorted((_npu_entry(state) for state in npus), key=lambda entry: entry['npu'])
    return {
        'format': MARKER_FORMAT,
        'verdict': 'passed' if passed else 'failed',
        'conf_sha256': conf_digest or None,
        'npus': entries,
        'problems': [str(problem) for problem in (problems or [])] if not passed else [],
    }


def marker_text(marker):
    """The bytes written to the node, as text: stable key order, so equal markers are equal files."""
    return json.dumps(marker, sort_keys=True, indent=2, separators=(',', ': ')) + '\n'


def _shape_problem(marker):
    """'' when ``marker`` has the shape build_marker gives, else what is wrong with it."""
    if not isinstance(marker, dict):
        return 'not a JSON object'
    if marker.get('format') != MARKER_FORMAT:
        return 'format %r, not %d' % (marker.get('format'), MARKER_FORMAT)
    if marker.get('verdict') not in VERDICTS:
        return 'verdict %r is neither passed nor failed' % (marker.get('verdict'),)
    digest = marker.get('conf_sha256')
    if digest is not None and (not isinstance(digest, str) or len(digest) != 64
                               or any(char not in '0123456789abcdef' for char in digest)):
        return 'conf_sha256 %r is not a SHA-256' % (digest,)
    npus = marker.get('npus')
    if not isinstance(npus, list) or not all(isinstance(entry, dict) and isinstance(entry.get('npu'), int)
                                             and not isinstance(entry.get('npu'), bool) for entry in npus):
        return 'npus is not a list of NPUs with their ids'
    for entry in npus:
        for key in NPU_KEYS:
            value = entry.get(key)
            if value is not None and hccn_tool.ipv4_problem(value):
                return 'NPU %s %s: %s' % (entry['npu'], key, hccn_tool.ipv4_problem(value))
    if not isinstance(marker.get('problems', []), list):
        return 'problems is not a list'
    return ''


def parse_marker(text):
    """The marker in ``text``; ValueError saying what is wrong when it is not one build_marker writes."""
    try:
        marker = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError('not JSON (%s)' % error)
    problem = _shape_problem(marker)
    if problem:
        raise ValueError(problem)
    return marker


def _read_small_file(path, what, follow):
    """``(bytes, None)``, ``(None, None)`` when absent, ``(None, why)`` when it cannot be read."""
    try:
        return bounded_read.read_bytes(path, follow=follow), None
    except bounded_read.RefusedFile as error:
        return None, '%s %s' % (what, error.cause)
    except (IOError, OSError) as error:
        if error.errno == errno.ENOENT:
            return None, None
        return None, 'cannot read %s %s: %s' % (what, path, error.strerror or error)


def _read_marker(path=None):
    """``(marker, problem)`` of the marker file: ``(None, None)`` when there is none, ``(None, why)``
    when it is there but cannot be read or is not what the hccn role writes."""
    path = path or FABRIC_MARKER_PATH
    # Our own file: a link there is not ours to follow.
    data, problem = _read_small_file(path, 'the fabric marker', follow=False)
    if data is None:
        return None, problem
    try:
        return parse_marker(data.decode('utf-8')), None
    except UnicodeDecodeError as error:
        return None, 'the fabric marker %s is not UTF-8 text (byte %d)' % (path, error.start)
    except ValueError as error:
        return None, 'the fabric marker %s is damaged: %s' % (path, error)


def read_conf(path=None):
    """``(bytes, None)`` of /etc/hccn.conf, ``(None, None)`` when absent, ``(None, why)`` otherwise.
    Read as the hccn module reads it for the marker (hccn_tool_runner.read_conf_state, which reads it through this function): links followed."""
    return _read_small_file(path or HCCN_CONF_PATH, '/etc/hccn.conf', follow=True)


def _conf_mismatches(marker_npus, conf):
    """'NPU n key' for every value the marker holds that /etc/hccn.conf does not."""
    found = []
    for entry in marker_npus:
        saved = conf.get(entry['npu'], {})
        for key in NPU_KEYS:
            if entry.get(key) is not None and saved.get(key) != entry[key]:
                found.append('NPU %d %s' % (entry['npu'], key))
    return found


def judge(marker, marker_problem, conf_data, conf_problem, path=None):
    """The ``fabric`` fact: ``{state, verdict, reason, marker, npus}`` (STATES; reason null when passed).

    ``passed`` only for a ``passed`` marker whose /etc/hccn.conf SHA-256 is the live one's and whose
    NPU values the live file holds; a marker of an earlier configuration is ``changed``."""
    path = path or FABRIC_MARKER_PATH
    fact = {'state': None, 'verdict': None, 'reason': None, 'marker': path, 'npus': []}
    if marker_problem:
        fact.update(state='damaged', reason='%s. Fix: remove it and %s' % (marker_problem, _REGATE))
        return fact
    if marker is None:
        fact.update(state='absent', reason='no fabric gate is recorded on this node (the npu.ascend.hccn role records '
                                           'one on training nodes it configures)')
        return fact
    fact.update(verdict=marker['verdict'], npus=[entry['npu'] for entry in marker['npus']])
    if marker['verdict'] == 'failed':
        fact.update(state='failed', reason='the last fabric gate failed: %s. Fix: see docs/hccn.md for the cause, '
                                           'then %s' % (' | '.join(marker.get('problems') or ['no cause recorded']),
                                                        _REGATE))
        return fact
    live = conf_sha256(conf_data)
    if conf_problem or live is None or live != marker['conf_sha256']:
        why = conf_problem or ('/etc/hccn.conf is gone' if live is None
                               else '/etc/hccn.conf is not the one the gate checked (SHA-256 %s, the gate saw %s)'
                               % (live[:12], (marker['conf_sha256'] or 'none')[:12]))
        fact.update(state='changed', reason='%s, so the gate\'s verdict no longer holds. Fix: %s'
                                            % (why, _REGATE))
        return fact
    mismatches = _conf_mismatches(marker['npus'], hccn_tool.parse_hccn_conf(conf_data.decode('utf-8', 'replace')))
    if mismatches:
        fact.update(state='changed', reason='/etc/hccn.conf does not hold what the gate checked (%s), so the next boot '
                                            'restores other values. Fix: %s' % (', '.join(mismatches), _REGATE))
        return fact
    fact['state'] = 'passed'
    return fact


def read_fabric(marker_path=None, conf_path=None):
    """The ``fabric`` fact of this node (judge), from its files."""
    marker, marker_problem = _read_marker(marker_path)
    conf_data, conf_problem = read_conf(conf_path) if marker is not None else (None, None)
    return judge(marker, marker_problem, conf_data, conf_problem, marker_path)
