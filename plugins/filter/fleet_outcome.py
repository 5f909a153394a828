# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the run's outcome: ``npu.ascend.host_values``, ``npu.ascend.fleet_stop_record``,
``npu.ascend.fleet_outcome``, ``npu.ascend.fleet_failure_budget`` and ``npu.ascend.fleet_hosts_to_read``.

Documentation is in the sidecar files of the same names; the logic is in plugin_utils/fleet_outcome.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def _host_list(hosts, what):
    if hosts is None:
        return []
    if isinstance(hosts, str):
        return [hosts]
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError('%s expects a list of hosts, got %s' % (what, type(hosts).__name__))
    return [str(host) for host in hosts]


def host_values(hostvars, hosts, name):
    """Host -> the value of variable ``name`` for each of ``hosts``; None for a host that never set it."""
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError('host_values expects hostvars, got %s' % type(hostvars).__name__)
    values = {}
    for host in _host_list(hosts, 'host_values'):
        # hostvars of a host that is not in the inventory, or that never set the variable (it failed or
        # was unreachable before it got there), give None: the caller reports such a host, never crashes.
        variables = hostvars.get(host) if hasattr(hostvars, 'get') else None
        values[host] = variables[name] if isinstance(variables, Mapping) and name in variables else None
    return values


def fleet_stop_record(result, stage, task=None, play=None):
    """The record a stage's rescue keeps for its host: stage, play, task, message, unreachable."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_outcome as outcome
    if not isinstance(result, (Mapping, str)):
        raise AnsibleFilterError('fleet_stop_record expects the failed task\'s result or a message, got %s'
                                 % type(result).__name__)
    return outcome.stop_record(stage, task, dict(result) if isinstance(result, Mapping) else result, play=play)


def fleet_outcome(records, hosts_all, hosts_active, group_hosts=None, playbook=None, inventories=None,
                  tags=None, skip_tags=None, check_mode=False, limit=None):
    """Rows per node, the hosts to retry, the retry command and the summary's lines."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_outcome as outcome
    if not isinstance(records, Mapping):
        raise AnsibleFilterError('fleet_outcome expects host -> outcome_stopped (npu.ascend.host_values), got %s'
                                 % type(records).__name__)
    rows = outcome.host_rows(records, _host_list(hosts_all, 'fleet_outcome'),
                             _host_list(hosts_active, 'fleet_outcome'), _host_list(group_hosts, 'fleet_outcome'))
    retry_hosts = [row['host'] for row in rows if row['status'] in ('failed', 'unreachable')]
    retry = outcome.retry_command(retry_hosts, playbook, _host_list(inventories, 'fleet_outcome'),
                                  _host_list(tags, 'fleet_outcome'), _host_list(skip_tags, 'fleet_outcome'),
                                  bool(check_mode))
    shown = outcome.HOSTS_SHOWN if limit is None else int(limit)
    return {'rows': rows, 'retry_hosts': retry_hosts, 'retry_command': retry,
            'lines': outcome.summary_lines(rows, retry, shown)}


def fleet_failure_budget(hosts_all, hosts_active, budget, name='npu_ascend_max_fail_percentage', stage='preflight',
                         stops=None, play=None):
    """Whether the nodes that failed this gate stay within the failure budget, with the message."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_outcome as outcome
    if stops is not None and not isinstance(stops, Mapping):
        raise AnsibleFilterError('fleet_failure_budget: stops must be host -> outcome_stopped (npu.ascend.host_values)')
    try:
        return outcome.failure_budget(_host_list(hosts_all, 'fleet_failure_budget'),
                                      _host_list(hosts_active, 'fleet_failure_budget'), budget, name, stage,
                                      stops=dict(stops or {}), play=play)
    except outcome.OutcomeError as error:
        raise AnsibleFilterError(str(error))


def fleet_hosts_to_read(hostvars, hosts, hosts_active):
    """The hosts that stopped earlier in the run and were not recorded unreachable, to be read on their behalf."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_outcome as outcome
    hosts = _host_list(hosts, 'fleet_hosts_to_read')
    return outcome.hosts_to_read(hosts, _host_list(hosts_active, 'fleet_hosts_to_read'),
                                 host_values(hostvars, hosts, 'outcome_stopped'))


class FilterModule(object):
    """The run's outcome per node, the failure budget and the retry command."""

    def filters(self):
        return {
            'host_values': host_values,
            'fleet_stop_record': fleet_stop_record,
            'fleet_outcome': fleet_outcome,
            'fleet_failure_budget': fleet_failure_budget,
            'fleet_hosts_to_read': fleet_hosts_to_read,
        }
