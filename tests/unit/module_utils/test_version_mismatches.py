# -*- coding: utf-8 -*-
"""The one "installed version is not the wanted one" check behind the rollout plan, the health gate,
the CANN role's final check and the fleet report."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_version_mismatches import (
    FilterModule, ascend_version_mismatches)
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import same_version, version_mismatches

# ascend_facts' `installed` on a node with the old stack (records as the module returns them).
OLD_STACK = {
    'firmware': {'version': '7.3.0.1.231'},
    'driver': {'version': '24.1.rc2', 'install_path': '/usr/local/Ascend'},
    'toolkit': {'version': '8.0.RC3'},
    'kernels': {'version': '8.0.RC3'},
    'ops': None,
    'nnal': None,
    'docker_runtime': {'version': '7.3.0'},
}


def test_nothing_when_every_wanted_version_is_installed():
    wanted = {'firmware': '7.3.0.1.231', 'driver': '24.1.RC2', 'toolkit': '8.0.rc3', 'docker_runtime': 'v7.3.0'}
    assert version_mismatches(OLD_STACK, wanted) == []


def test_each_mismatch_in_stack_order_with_a_text_for_messages():
    wanted = {'toolkit': '8.2.RC1', 'driver': '25.0.rc1.1', 'nnal': '8.2.RC1', 'firmware': '7.3.0.1.231'}
    assert version_mismatches(OLD_STACK, wanted) == [
        {'component': 'driver', 'title': 'driver', 'installed': '24.1.rc2', 'wanted': '25.0.rc1.1',
         'text': 'driver 24.1.rc2 (wanted 25.0.rc1.1)'},
        {'component': 'toolkit', 'title': 'CANN toolkit', 'installed': '8.0.RC3', 'wanted': '8.2.RC1',
         'text': 'CANN toolkit 8.0.RC3 (wanted 8.2.RC1)'},
        {'component': 'nnal', 'title': 'NNAL', 'installed': None, 'wanted': '8.2.RC1',
         'text': 'NNAL not installed (wanted 8.2.RC1)'},
    ]


def test_a_newer_installed_version_is_a_mismatch_too():
    # The playbooks install exactly the declared stack; a downgrade is as much a change as an upgrade.
    assert [m['component'] for m in version_mismatches(OLD_STACK, {'driver': '24.1.rc1'})] == ['driver']


@pytest.mark.parametrize('unmanaged', [None, ''])
def test_a_component_without_a_wanted_version_is_not_checked(unmanaged):
    assert version_mismatches(OLD_STACK, {'nnal': unmanaged, 'ops': unmanaged}) == []


def test_bare_version_strings_as_the_fleet_report_keeps_them():
    installed = {'driver': '25.0.rc1.1', 'toolkit': None}
    assert [m['text'] for m in version_mismatches(installed, {'driver': '25.0.RC1.1', 'toolkit': '8.2.RC1'})] == [
        'CANN toolkit not installed (wanted 8.2.RC1)']


def test_a_node_with_nothing_installed():
    assert [m['installed'] for m in version_mismatches(None, {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'})] \
        == [None, None]


def test_a_damaged_version_file_is_a_mismatch_not_a_crash():
    installed = {'driver': {'version': '?? garbage ??'}}
    assert version_mismatches(installed, {'driver': '25.0.rc1.1'})[0]['installed'] == '?? garbage ??'


def test_unknown_component_is_named():
    with pytest.raises(ValueError, match='unknown component.*cann'):
        version_mismatches(OLD_STACK, {'cann': '8.2.RC1'})


@pytest.mark.parametrize('left, right, expected', [
    ('24.1.RC2', '24.1.rc2', True), ('24.1.rc2', '24.1.0', False), (None, None, True),
    (None, '24.1.0', False), ('n/a', 'n/a', True), ('n/a', '24.1.0', False),
])
def test_same_version(left, right, expected):
    assert same_version(left, right) is expected


def test_filter_is_registered_and_wraps_errors():
    assert FilterModule().filters() == {'ascend_version_mismatches': ascend_version_mismatches}
    assert ascend_version_mismatches(OLD_STACK, {'driver': '24.1.rc2'}) == []
    with pytest.raises(AnsibleFilterError, match='unknown component'):
        ascend_version_mismatches(OLD_STACK, {'cann': '8.2.RC1'})
    with pytest.raises(AnsibleFilterError, match='wanted must be a dict'):
        ascend_version_mismatches(OLD_STACK, ['driver'])
    with pytest.raises(AnsibleFilterError, match='installed dict'):
        ascend_version_mismatches('24.1.rc2', {'driver': '24.1.rc2'})
