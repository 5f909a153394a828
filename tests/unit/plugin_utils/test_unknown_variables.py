# -*- coding: utf-8 -*-
"""Variables that look like the collection's but are none of its variables: named, with "did you mean"
(issue 34: hdk_driver_verison was reported as "missing hdk_driver_version" and never named)."""

import os

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.preflight import preflight_fleet_summary, role_required_vars_message
from ansible_collections.npu.ascend.plugins.filter.preflight import role_unknown_vars
from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements as rr

KNOWN = rr.known_variables()
OPTIONS = sorted(KNOWN['options'])


def test_the_prefixes_are_the_roles_and_the_collections():
    roles = sorted(name for name in os.listdir(rr.ROLES_DIR) if os.path.isdir(os.path.join(rr.ROLES_DIR, name)))
    assert set(rr.prefixes()) == set(name + '_' for name in roles) | set(['npu_ascend_', 'k8s_'])
    for expected in ('hdk_', 'cann_', 'container_runtime_', 'preflight_', 'packages_', 'k8s_node_', 'device_plugin_',
                     'exporter_', 'validate_', 'fleet_report_', 'health_gate_', 'doctor_', 'npu_ascend_'):
        assert expected in rr.prefixes()


def test_every_option_default_and_published_fact_is_known():
    assert not rr.unknown_variables({'n1': OPTIONS})
    # Entry points other than main, a role's defaults, facts the roles publish, the playbooks' own variables.
    assert all(name.startswith(rr.prefixes()) for name in OPTIONS)
    for name in ('packages_source_dir', 'preflight_summary_hosts_shown', 'preflight_plan', 'preflight_report',
                 'packages_resolved', 'outcome_stopped', 'npu_ascend_max_fail_percentage'):
        assert name in KNOWN['known'], name


def test_the_issues_typo_is_named_with_the_option_it_means():
    [item] = rr.unknown_variables({'n1': ['hdk_driver_verison', 'ansible_host'], 'n2': ['hdk_driver_verison']})
    assert item == {'variable': 'hdk_driver_verison', 'hosts': ['n1', 'n2'], 'suggestion': 'hdk_driver_version',
                    'suggestion_required': True, 'replaced': False, 'severity': 'error'}
    assert rr.unknown_variable_text(item, ['n1', 'n2']) == (
        'hdk_driver_verison (set on every host) is not a variable of npu.ascend; did you mean hdk_driver_version? '
        'Fix: rename it to hdk_driver_version, or its value is ignored')


def test_a_near_miss_of_an_optional_variable_also_stops():
    [item] = rr.unknown_variables({'n1': ['hdk_reboot_polcy']})
    assert item['suggestion'] == 'hdk_reboot_policy' and not item['suggestion_required']
    assert item['severity'] == 'error'


def test_a_name_near_nothing_is_a_warning_only():
    [item] = rr.unknown_variables({'n1': ['cann_mirror_host_of_our_site']})
    assert item['suggestion'] is None and item['severity'] == 'warning'
    assert rr.unknown_variables_message([item]) == ''
    assert 'if it is your own' in rr.unknown_variable_text(item)


def test_names_without_our_prefixes_are_not_looked_at():
    assert rr.unknown_variables({'n1': ['driver_version', 'ansible_user', 'hdkdriver_version', '__hdk_internal',
                                        'my_hdk_driver_version']}) == []


def test_the_missing_variable_names_the_misspelling_set_instead():
    hostvars = {'n1': {'hdk_driver_verison': '25.0.rc1.1', 'hdk_firmware_version': '7.7.0.1.231'}}
    missing = rr.missing_variables(dict((host, list(names)) for host, names in hostvars.items()), ['hdk'])
    unknown = role_unknown_vars(hostvars, ['n1'])
    message = role_required_vars_message(missing, ['n1'], unknown)
    assert '- hdk_driver_version (role npu.ascend.hdk) missing on n1 (hdk_driver_verison is set instead: rename it)' \
        in message
    assert 'did you mean hdk_driver_version?' in message
    # Only misspelt variables, nothing missing: still a stop.
    assert role_required_vars_message([], ['n1'], rr.unknown_variables({'n1': ['hdk_reboot_polcy']})).startswith(
        '1 variable(s) look like npu.ascend\'s')
    assert role_required_vars_message([], ['n1'], rr.unknown_variables({'n1': ['hdk_far_away_name_x']})) == ''


def test_the_fleet_summary_lists_them():
    unknown = rr.unknown_variables({'n1': ['hdk_driver_verison', 'cann_mirror_host_of_our_site'], 'n2': []})
    lines = preflight_fleet_summary({'n1': None, 'n2': None}, ['n1', 'n2'], [], None, None, unknown)
    assert lines[0].endswith('; 2 unknown variable(s)')
    assert 'Unknown variable hdk_driver_verison on n1: did you mean hdk_driver_version?' in lines
    assert any(line.startswith('Unknown variable cann_mirror_host_of_our_site on n1: near no variable') for line in lines)


def test_edit_distance_counts_a_swap_as_one():
    assert rr.edit_distance('hdk_driver_verison', 'hdk_driver_version') == 1
    assert rr.edit_distance('abc', 'abc') == 0 and rr.edit_distance('', 'abc') == 3
    assert rr.edit_distance('kitten', 'sitting') == 3


_EDIT_ALPHABET = 'abcdefghijklmnopqrstuvwxyz_'


def _one_edit(name, data):
    kind = data.draw(st.sampled_from(['insert', 'delete', 'replace', 'swap']))
    # After the role's prefix: an edit there makes a name that is not ours to look at.
    prefix = [prefix for prefix in rr.prefixes() if name.startswith(prefix)][0]
    index = data.draw(st.integers(len(prefix), len(name) - 2))
    letter = data.draw(st.sampled_from(_EDIT_ALPHABET))
    if kind == 'insert':
        return name[:index] + letter + name[index:]
    if kind == 'delete':
        return name[:index] + name[index + 1:]
    if kind == 'replace':
        return name[:index] + letter + name[index + 1:]
    return name[:index] + name[index + 1] + name[index] + name[index + 2:]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([name for name in OPTIONS if len(name) >= 10 and not name.startswith('npu_ascend_')]),
       st.data())
def test_one_edit_of_an_option_is_caught_and_points_at_an_option_as_near(option, data):
    typo = _one_edit(option, data)
    found = rr.unknown_variables({'n1': [typo]})
    if typo in KNOWN['known']:
        # The edit made another name of ours (or none at all).
        assert found == []
        return
    [item] = found
    assert item['severity'] == 'error'
    # The option edited, or one at least as near (a swap can land next to a shorter option).
    assert rr.edit_distance(typo, item['suggestion']) <= rr.edit_distance(typo, option) <= 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=_EDIT_ALPHABET, min_size=1, max_size=12), st.text(alphabet=_EDIT_ALPHABET, max_size=12))
def test_edit_distance_is_a_distance(one, other):
    assert rr.edit_distance(one, other) == rr.edit_distance(other, one)
    assert (rr.edit_distance(one, other) == 0) == (one == other)
    assert abs(len(one) - len(other)) <= rr.edit_distance(one, other) <= max(len(one), len(other))


@pytest.mark.parametrize('old, new', [('k8s_node_label_domain', 'npu_ascend_label_domain'),
                                      ('device_plugin_unvalidated_taint_key', 'npu_ascend_label_domain'),
                                      ('health_gate_node_name', 'npu_ascend_k8s_node_name')])
def test_a_variable_a_shared_one_replaced_stops_the_run_naming_its_replacement(old, new):
    found = rr.unknown_variables({'h1': [old]})
    assert found == [{'variable': old, 'hosts': ['h1'], 'suggestion': new, 'suggestion_required': False,
                      'replaced': True, 'severity': 'error'}]
    text = rr.unknown_variable_text(found[0])
    assert text.startswith('%s (set on h1) is no longer read: %s replaced it' % (old, new))
    assert 'Fix: set %s instead' % new in text
