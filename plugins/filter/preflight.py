# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the preflight role: ``npu.ascend.role_required_vars_missing``,
``npu.ascend.role_required_vars_message``, ``npu.ascend.role_unknown_vars``, ``npu.ascend.preflight_fleet_summary`` and
``npu.ascend.preflight_node_report``.

Documentation is in the sidecar files of the same names; the logic is in plugin_utils.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def _names(variables):
    # hostvars[host] is a mapping whose values are templated when read: take the names only.
    if isinstance(variables, Mapping):
        return list(variables.keys())
    if isinstance(variables, (list, tuple, set)):
        return list(variables)
    raise AnsibleFilterError('role_required_vars_missing: the variables of a host must be a mapping or a list of '
                             'names, got %s' % type(variables).__name__)


def _defined_names(hostvars, hosts, filter_name):
    """Host -> the names of its variables, for each of ``hosts``."""
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError('%s expects hostvars, got %s' % (filter_name, type(hostvars).__name__))
    if isinstance(hosts, str):
        hosts = [hosts]
    defined = {}
    for host in hosts:
        try:
            defined[str(host)] = _names(hostvars[host])
        except KeyError:
            raise AnsibleFilterError('%s: %s is not a host of the inventory' % (filter_name, host))
    return defined


def role_required_vars_missing(hostvars, hosts, roles):
    """The required variables of ``roles`` that some of ``hosts`` lack (see role_requirements.missing_variables)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements
    defined = _defined_names(hostvars, hosts, 'role_required_vars_missing')
    try:
        return role_requirements.missing_variables(defined, roles)
    except role_requirements.RoleSpecError as error:
        raise AnsibleFilterError('role_required_vars_missing: %s. Fix: name roles of the npu.ascend collection '
                                 '(preflight_required_roles)' % error)


def role_unknown_vars(hostvars, hosts):
    """The variables of ``hosts`` that look like the collection's but are none of its variables
    (see role_requirements.unknown_variables)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements
    defined = _defined_names(hostvars, hosts, 'role_unknown_vars')
    try:
        return role_requirements.unknown_variables(defined)
    except role_requirements.RoleSpecError as error:
        raise AnsibleFilterError('role_unknown_vars: %s' % error)


def role_required_vars_message(missing, hosts=None, unknown=None):
    """One message naming each missing variable, its role, the hosts and an example value, and each
    misspelt variable (``unknown``, from role_unknown_vars) with the one it probably means."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements
    if not isinstance(missing, list):
        raise AnsibleFilterError('role_required_vars_message expects what role_required_vars_missing returned')
    if unknown is not None and not isinstance(unknown, list):
        raise AnsibleFilterError('role_required_vars_message: unknown must be what role_unknown_vars returned')
    return role_requirements.missing_variables_message(missing, every_host=list(hosts) if hosts else None,
                                                       unknown=unknown)


def preflight_fleet_summary(reports, hosts=None, missing=None, limit=None, stops=None, unknown=None):
    """The fleet-wide summary's lines, from each host's preflight_report (``limit``: hosts named per line;
    ``stops``: host -> outcome_stopped, why a host was not checked; ``unknown``: misspelt variables)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import preflight_summary
    if not isinstance(reports, Mapping):
        raise AnsibleFilterError('preflight_fleet_summary expects a mapping of host to its preflight_report, got %s'
                                 % type(reports).__name__)
    try:
        shown = preflight_summary.HOSTS_SHOWN if limit is None else int(limit)
        return preflight_summary.fleet_summary(reports, hosts=hosts, missing_variables=missing, limit=shown,
                                               stops=stops if isinstance(stops, Mapping) else None,
                                               unknown_variables=unknown if isinstance(unknown, list) else None)
    except (TypeError, ValueError, AttributeError) as error:
        raise AnsibleFilterError('preflight_fleet_summary: %s' % error)


def preflight_node_report(inputs, host):
    """One node's preflight_report (checks, plan, failed, lines, message) from what preflight read."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import InvalidVersion
    from ansible_collections.npu.ascend.plugins.plugin_utils import preflight_checks
    if not isinstance(inputs, Mapping):
        raise AnsibleFilterError('preflight_node_report expects the inputs preflight gathered, got %s'
                                 % type(inputs).__name__)
    try:
        return preflight_checks.node_report(str(host), inputs)
    except InvalidVersion as error:
        # A version, not the rows: its message names the variable and the fix.
        raise AnsibleFilterError('preflight_node_report: %s: %s' % (host, error))
    except KeyError as error:
        raise AnsibleFilterError('preflight_node_report: the inputs lack %s' % error)
    except (TypeError, ValueError, AttributeError) as error:
        raise AnsibleFilterError('preflight_node_report: %s. Fix: correct preflight_compat_extra_rows and '
                                 'preflight_supported_os_extra' % error)


class FilterModule(object):
    """Preflight: required variables and the fleet summary."""

    def filters(self):
        return {
            'role_required_vars_missing': role_required_vars_missing,
            'role_required_vars_message': role_required_vars_message,
            'role_unknown_vars': role_unknown_vars,
            'preflight_fleet_summary': preflight_fleet_summary,
            'preflight_node_report': preflight_node_report,
        }
