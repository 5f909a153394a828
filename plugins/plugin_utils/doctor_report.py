# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the doctor role: the findings of the play (``doctor.diagnose``), which of them
each host answers for, the summary the role prints once, and the message a host fails with. Pure
functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.plugin_utils.doctor import diagnose

# The keys of doctor.diagnose's options; the role's state options carry more.
_DIAGNOSE_OPTIONS = ('runtime_name', 'runtime_class', 'label_domain', 'install_path', 'device_plugin_namespace')


def summary_lines(findings, nodes, cluster, undiagnosed):
    """What the role prints once for the play: a count, then each finding with its evidence and fix, then
    why the cluster was not checked and which hosts were not diagnosed."""
    lines = ['doctor: %d finding(s) on %d node(s)%s' % (len(findings), nodes, '' if findings else ': nothing wrong found')]
    for item in findings:
        lines.extend(['%s [%s] %s' % (item.get('node') or '(no node)', item.get('component'), item.get('problem')),
                      '    evidence: %s' % item.get('evidence'), '    fix: %s' % item.get('fix')])
    if not cluster.get('available'):
        lines.append('note: %s' % cluster.get('note'))
    if undiagnosed:
        lines.append("not diagnosed (unreachable, or failed before their evidence was read; the run's summary at the "
                     'end names each): %s' % ', '.join(undiagnosed))
    return lines


def failure_message(host, findings):
    """None, or the message a host with ``findings`` fails with."""
    if not findings:
        return None
    parts = ['[%s] %s (evidence: %s). Fix: %s' % (item.get('component'), item.get('problem'), item.get('evidence'),
                                                  item.get('fix')) for item in findings]
    return '%s: doctor: %d problem(s): %s.' % (host, len(findings), '; '.join(parts))


def role_state(evidences, cluster, options):
    """Everything the doctor role decides for one host of the play.

    ``evidences``: the node evidence of every host of the play (``doctor.diagnose``); ``cluster``: the
    cluster evidence; ``options``: ``doctor.diagnose``'s options and ``host`` (the inventory name),
    ``node_name`` (its Node), ``first_host`` (whether it answers for the findings about no node of the
    play, such as a pod no node can take), ``undiagnosed`` (hosts of the play that gave no evidence).

    Returns ``findings`` (all of them), ``node_findings`` (this host's Node's), ``other_findings``
    (about no node of the play; only for the first host), ``lines`` (the summary) and ``failure``
    (None, or the message the host fails with)."""
    options = options if isinstance(options, Mapping) else {}
    cluster = cluster if isinstance(cluster, Mapping) else {}
    evidences = [evidence for evidence in evidences or [] if isinstance(evidence, Mapping)]
    findings = diagnose(evidences, dict(cluster), dict((key, options[key]) for key in _DIAGNOSE_OPTIONS if key in options))
    play_nodes = set(evidence.get('node') for evidence in evidences)
    node_findings = [item for item in findings if item.get('node') == options.get('node_name')]
    other_findings = [item for item in findings if item.get('node') not in play_nodes] if options.get('first_host') else []
    return {
        'findings': findings,
        'node_findings': node_findings,
        'other_findings': other_findings,
        'lines': summary_lines(findings, len(evidences), cluster, list(options.get('undiagnosed') or [])),
        'failure': failure_message(options.get('host'), node_findings + other_findings),
    }
