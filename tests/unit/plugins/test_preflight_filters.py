# -*- coding: utf-8 -*-
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.preflight import (
    FilterModule, preflight_fleet_summary, preflight_node_report, role_required_vars_message, role_required_vars_missing)


class _LazyVars(dict):
    """Like hostvars[host]: reading a value would template it, so the filter must take the names only."""

    def __getitem__(self, key):
        raise AssertionError('value of %s read' % key)

    def values(self):
        raise AssertionError('values read')

    def items(self):
        raise AssertionError('values read')


def test_registered_names():
    assert sorted(FilterModule().filters()) == ['preflight_fleet_summary', 'preflight_node_report',
                                                'role_required_vars_message', 'role_required_vars_missing',
                                                'role_unknown_vars']


def test_node_report_names_what_the_inputs_lack():
    with pytest.raises(AnsibleFilterError, match='the inputs lack'):
        preflight_node_report({'probe': {}}, 'n1')
    with pytest.raises(AnsibleFilterError, match='expects the inputs'):
        preflight_node_report([], 'n1')


def test_missing_from_hostvars_without_reading_values():
    hostvars = {'n1': _LazyVars(hdk_driver_version=1, hdk_firmware_version=1, cann_version=1),
                'n2': _LazyVars(hdk_driver_version=1, hdk_firmware_version=1, cann_version=1,
                                container_runtime_version=1),
                'other': {}}
    missing = role_required_vars_missing(hostvars, ['n1', 'n2'], ['npu.ascend.hdk', 'npu.ascend.container_runtime'])
    assert [(item['variable'], item['hosts']) for item in missing] == [('container_runtime_version', ['n1'])]
    assert role_required_vars_message(missing, ['n1', 'n2']).startswith('1 variable(s)')


def test_errors_are_filter_errors_with_a_fix():
    with pytest.raises(AnsibleFilterError, match='not one of the npu.ascend collection.*preflight_required_roles'):
        role_required_vars_missing({'n1': {}}, ['n1'], ['community.general.x'])
    with pytest.raises(AnsibleFilterError, match='n9 is not a host of the inventory'):
        role_required_vars_missing({'n1': {}}, ['n9'], ['hdk'])
    with pytest.raises(AnsibleFilterError, match='expects hostvars'):
        role_required_vars_missing(['n1'], ['n1'], ['hdk'])
    with pytest.raises(AnsibleFilterError, match='expects what role_required_vars_missing returned'):
        role_required_vars_message('x')
    with pytest.raises(AnsibleFilterError, match='expects a mapping'):
        preflight_fleet_summary(['n1'])


def test_summary_filter():
    assert preflight_fleet_summary({'n1': None}, ['n1'])[0].startswith('Preflight of 1 node: 0 ready, 0 not ready, 1 not checked')
