# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet-wide summary preflight prints once, before each node's own report.

Input is what the preflight role published per host (``preflight_report``: ``checks`` with
``name``, ``ok``, ``detail``, ``fix``; ``plan``, the plan's lines) for every host of the play;
a host without one did not get that far (unreachable, or failed before its checks ended).
The summary says how many nodes are ready, which are not and why, and what will change where,
with equal failures and equal plan steps grouped so that a few hundred nodes stay readable.
Controller side only, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Plan lines that say nothing will change; the summary lists only the changes.
_NO_CHANGE_PREFIXES = ('keep ', 'no reboot', 'no service restart', 'nothing to do')
# Host names shown per line before the rest is counted ("and 190 more").
HOSTS_SHOWN = 10


def hosts_text(hosts, limit=HOSTS_SHOWN):
    """Host names joined by commas, the ones past ``limit`` counted ("a, b and 190 more")."""
    hosts = list(hosts)
    if limit and len(hosts) > limit:
        return '%s and %d more' % (', '.join(hosts[:limit]), len(hosts) - limit)
    return ', '.join(hosts)


def nodes_text(count):
    """``1 node``, ``2 nodes``."""
    return '%d node%s' % (count, '' if count == 1 else 's')


def _group(pairs):
    """[(key, host)] -> [(key, [hosts])], keys in first-seen order, hosts in the given order."""
    order = []
    groups = {}
    for key, host in pairs:
        if key not in groups:
            groups[key] = []
            order.append(key)
        if host not in groups[key]:
            groups[key].append(host)
    return [(key, groups[key]) for key in order]


def _stop_reason(stop):
    if not isinstance(stop, dict):
        return 'no answer before the checks (unreachable, or failed before them: see its error above)'
    # The first line of Ansible's message: an unreachable host's is several lines of SSH output.
    message = (str(stop.get('message') or '').strip().splitlines() or [''])[0]
    return '%s at %s: %s' % ('unreachable' if stop.get('unreachable') else 'failed', stop.get('stage') or '?', message)


def _unknown_line(item, limit):
    hosts = hosts_text(item.get('hosts') or [], limit)
    if item.get('suggestion'):
        return 'Unknown variable %s on %s: did you mean %s?' % (item.get('variable'), hosts, item['suggestion'])
    return 'Unknown variable %s on %s: near no variable of npu.ascend (ignored; fine if it is your own)' % (
        item.get('variable'), hosts)


def fleet_summary(reports, hosts=None, missing_variables=None, limit=HOSTS_SHOWN, stops=None, unknown_variables=None):
    """The summary's lines.

    ``reports``: host -> its ``preflight_report`` (or None). ``hosts``: every host of the play,
    in inventory order (default: the keys of ``reports``, sorted). ``missing_variables``: what
    ``role_requirements.missing_variables`` found, if anything. ``stops``: host -> where it stopped
    (``outcome_stopped``: stage, message, unreachable), to say why a host was not checked.
    ``unknown_variables``: what ``role_requirements.unknown_variables`` found (misspelt variables).
    """
    stops = dict(stops or {})
    reports = dict(reports or {})
    hosts = [str(host) for host in (hosts if hosts is not None else sorted(reports))]
    unchecked = [host for host in hosts if not isinstance(reports.get(host), dict)]
    checked = [host for host in hosts if host not in unchecked]
    not_ready = [host for host in checked
                 if any(not check.get('ok', True) for check in reports[host].get('checks') or [])]
    ready = [host for host in checked if host not in not_ready]
    missing_variables = list(missing_variables or [])
    unknown_variables = list(unknown_variables or [])
    lines = ['Preflight of %s: %d ready, %d not ready%s%s%s' % (
        nodes_text(len(hosts)), len(ready), len(not_ready),
        (', %d not checked (unreachable or failed before the checks)' % len(unchecked)) if unchecked else '',
        ('; %d required variable(s) missing' % len(missing_variables)) if missing_variables else '',
        ('; %d unknown variable(s)' % len(unknown_variables)) if unknown_variables else '')]
    if not_ready:
        lines.append('Not ready:')
        for host in not_ready:
            failed = [check.get('name', '?') for check in reports[host].get('checks') or [] if not check.get('ok', True)]
            lines.append('  %s: %s' % (host, ', '.join(failed)))
        lines.append('Why:')
        failures = _group((check.get('name', '?'), host) for host in not_ready
                          for check in reports[host].get('checks') or [] if not check.get('ok', True))
        for name, failed_hosts in failures:
            fixes = _group((check.get('fix') or '', host) for host in failed_hosts
                           for check in reports[host].get('checks') or []
                           if check.get('name', '?') == name and not check.get('ok', True))
            for fix, fix_hosts in fixes:
                lines.append('  %s on %s (%s)%s' % (name, nodes_text(len(fix_hosts)), hosts_text(fix_hosts, limit),
                                                    (' -- fix: ' + fix) if fix else ''))
    if unchecked:
        lines.append('Not checked: %s' % hosts_text(unchecked, limit))
        reasons = _group((_stop_reason(stops.get(host)), host) for host in unchecked)
        for reason, reason_hosts in reasons:
            lines.append('  %s (%s): %s' % (nodes_text(len(reason_hosts)), hosts_text(reason_hosts, limit), reason))
    for item in missing_variables:
        lines.append('Missing variable %s (role %s) on %s%s' % (
            item.get('variable'), item.get('role'), hosts_text(item.get('hosts') or [], limit),
            ('; for example %s: %s' % (item.get('variable'), item['example'])) if item.get('example') else ''))
    for item in unknown_variables:
        lines.append(_unknown_line(item, limit))
    steps = _group((str(step), host) for host in checked for step in reports[host].get('plan') or []
                   if not str(step).startswith(_NO_CHANGE_PREFIXES))
    unchanged = [host for host in checked
                 if not any(not str(step).startswith(_NO_CHANGE_PREFIXES) for step in reports[host].get('plan') or [])]
    lines.append('Changes planned:' if steps else 'Changes planned: none')
    for step, step_hosts in steps:
        lines.append('  %s: %s (%s)' % (step, nodes_text(len(step_hosts)), hosts_text(step_hosts, limit)))
    if steps and unchanged:
        lines.append('  no change: %s (%s)' % (nodes_text(len(unchanged)), hosts_text(unchanged, limit)))
    return lines
