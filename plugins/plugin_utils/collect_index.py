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


def fleet_index(bundles_by_host, stops_by_host, left_out=()):
    """``bundles_by_host``: host -> {member, counts, index} of its bundle, or None; ``stops_by_host``:
    host -> its outcome_stopped record or None; ``left_out``: hosts of the group the run did not
    include (--limit). Returns {nodes: {host: ...}, collected, missing, left_out}."""
    nodes = {}
    for host in sorted(set(bundles_by_host) | set(stops_by_host)):
        bundle = bundles_by_host.get(host)
        if bundle:
            nodes[host] = {
                'status': 'collected', 'archive': bundle['member'], 'counts': bundle['counts'],
                'not_collected': [dict((key, entry[key]) for key in ('member', 'source', 'status', 'detail'))
                                  for entry in bundle['index'] if entry['status'] in NOT_COLLECTED],
            }
            continue
        stop = stops_by_host.get(host) or {}
        nodes[host] = {
            'status': 'unreachable' if stop.get('unreachable') or not stop else 'failed',
            'stage': stop.get('stage', ''),
            'message': stop.get('message') or 'no answer: the node was unreachable, or failed before it was asked',
        }
    collected = sorted(host for host, node in nodes.items() if node['status'] == 'collected')
    return {'nodes': nodes, 'collected': collected,
            'missing': sorted(host for host in nodes if host not in collected), 'left_out': sorted(left_out)}
