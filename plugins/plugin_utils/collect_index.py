# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The index of a fleet's diagnostics archive: per node what was collected and what could not be.

Controller side only, no Ansible imports. A node whose bundle arrived lists the pieces that are not
in it (absent, refused, failed; ascend_collect's index names each); a node without one says why:
where it stopped (npu.ascend.outcome's record) or that it did not answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

NOT_COLLECTED = ('absent', 'refused', 'failed')
ENTRY_KEYS = ('member', 'source', 'status', 'detail')


def _bundle_problem(bundle):
    """Why a node's bundle record is not what npu.ascend.ascend_collect and the collect role make, or None."""
    if not isinstance(bundle, dict):
        return 'is a %s, not a mapping of member, counts and index' % type(bundle).__name__
    if not isinstance(bundle.get('member'), str) or not bundle['member']:
        return 'names no archive member'
    if not isinstance(bundle.get('counts'), dict):
        return 'has counts that are not a mapping'
    if not isinstance(bundle.get('index'), list):
        return 'has an index that is a %s, not a list' % type(bundle.get('index')).__name__
    for position, entry in enumerate(bundle['index']):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(key), str) for key in ENTRY_KEYS):
            return 'has index entry %d that is not a mapping of %s as text' % (position, ', '.join(ENTRY_KEYS))
    return None


def _stopped(host, stop):
    """The row of a node without a bundle, from its stop record of whatever shape."""
    if stop and not isinstance(stop, dict):
        stop = {'message': str(stop)}
    stop = stop or {}
    message = stop.get('message')
    return {
        'status': 'unreachable' if stop.get('unreachable') or not stop else 'failed',
        'stage': stop.get('stage') if isinstance(stop.get('stage'), str) else '',
        'message': (message if isinstance(message, str) else str(message or '')) or
        'no answer: the node was unreachable, or failed before it was asked',
    }


def fleet_index(bundles_by_host, stops_by_host, left_out=()):
    """``bundles_by_host``: host -> {member, counts, index} of its bundle, or None; ``stops_by_host``:
    host -> its outcome_stopped record or None; ``left_out``: hosts of the group the run did not
    include (--limit). Returns {nodes: {host: ...}, collected, missing, left_out}.

    A node whose bundle record has another shape is a failed row naming the cause and the fix: one
    node never breaks the index of the others."""
    nodes = {}
    for host in sorted(set(bundles_by_host) | set(stops_by_host)):
        bundle = bundles_by_host.get(host)
        if bundle:
            problem = _bundle_problem(bundle)
            if problem:
                archive = bundle.get('member') if isinstance(bundle, dict) and isinstance(bundle.get('member'), str) else ''
                nodes[host] = {
                    'status': 'failed', 'stage': 'collect',
                    'message': '%s: the record of its diagnostics bundle %s%s, so the index cannot list what it lacks. '
                               'Fix: run npu.ascend.collect again for this node (--limit %s); leave the fact '
                               'collect_bundle to the collect role' % (
                                   host, problem, ' (its archive %s is in the fleet\'s archive)' % archive if archive else '',
                                   host),
                }
                continue
            nodes[host] = {
                'status': 'collected', 'archive': bundle['member'], 'counts': bundle['counts'],
                'not_collected': [dict((key, entry[key]) for key in ENTRY_KEYS)
                                  for entry in bundle['index'] if entry['status'] in NOT_COLLECTED],
            }
            continue
        nodes[host] = _stopped(host, stops_by_host.get(host))
    collected = sorted(host for host, node in nodes.items() if node['status'] == 'collected')
    return {'nodes': nodes, 'collected': collected,
            'missing': sorted(host for host in nodes if host not in collected), 'left_out': sorted(left_out)}
