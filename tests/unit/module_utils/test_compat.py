# -*- coding: utf-8 -*-
"""Tests of the compatibility matrix logic (compatibility.py) and its data (compat_matrix.py)."""

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.module_utils.packages.compat_matrix import COMPAT_MATRIX


def check(stack, extra_rows=None, replace_rows=False):
    return compatibility.check_stack(stack, COMPAT_MATRIX, extra_rows, replace_rows)


def pairs(report):
    return [conflict['pair'] for conflict in report['conflicts']]


def test_every_built_in_row_is_valid_and_names_its_source():
    assert compatibility.effective_rows(COMPAT_MATRIX) == COMPAT_MATRIX
    assert all(row['source'] for row in COMPAT_MATRIX)


@pytest.mark.parametrize('version, spec, expected', [
    ('25.3.rc1', '25.3.x', True),
    ('25.3', '25.3.x', True),
    ('25.30.0', '25.3.x', False),
    ('25.5.2', ['25.3.x', '25.5.x'], True),
    ('24.1.rc2.2', '24.1.rc2.x', True),
    ('24.1.rc2', '24.1.RC2', True),
    ('7.7.0.2.220', '>=7.7.0.1.231', True),
    ('7.3.0.1.231', '>=7.7.0.1.231', False),
    ('8.0.RC3', '>=8.0.RC1,<8.1', True),
    ('8.1.RC1', '>=8.0.RC1,<8.1', False),
])
def test_version_satisfies(version, spec, expected):
    assert compatibility.version_satisfies(version, spec) is expected


def test_python_style_versions():
    assert compatibility.version_satisfies('2.1.0.post3', '2.1.0.post3', 'torch_npu')
    assert not compatibility.version_satisfies('2.1.0', '2.1.0.post3', 'torch_npu')
    assert compatibility.version_satisfies('2.1.0.post3', '>2.1.0', 'torch_npu')
    assert compatibility.version_satisfies('2.4.0.post2+git1234', '2.4.0.post2', 'torch_npu')


def test_bad_constraints_are_rejected():
    for spec in ('', '>=25.x', '>=not a version'):
        with pytest.raises(ValueError):
            compatibility.validate_spec(spec, 'driver')


@pytest.mark.parametrize('os_text, spec, expected', [
    ('openEuler 24.03 (LTS-SP1)', 'openeuler 24.03 sp1', True),
    ('openEuler 24.03', 'openeuler 24.03 sp1', False),
    ('Ubuntu 22.04', ['ubuntu 22.04', 'openeuler 22.03'], True),
    ('Ubuntu 20.04', 'ubuntu 22.04', False),
])
def test_os_matches(os_text, spec, expected):
    assert compatibility.os_matches(os_text, spec) is expected


def test_download_table_pair_fits():
    report = check({'cann': '8.2.RC1', 'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231', 'chip_family': '910b'})
    assert report['ok'], report
    assert ['cann', 'driver'] in report['checked'] and ['cann', 'firmware'] in report['checked']


def test_the_other_pairing_for_the_same_cann_also_fits():
    # The download table says 25.0.rc1.1, release notes say 25.2.0: sources are a union.
    assert check({'cann': '8.2.RC1', 'driver': '25.2.0'})['ok']


def test_cann_driver_conflict_lists_what_would_fit():
    report = check({'cann': '8.2.RC1', 'driver': '24.1.rc2', 'chip_family': '910b'})
    assert not report['ok']
    conflict = report['conflicts'][0]
    assert conflict['pair'] == ['cann', 'driver']
    assert conflict['have'] == {'cann': '8.2.RC1', 'driver': '24.1.rc2'}
    assert conflict['fits'] == ['25.0.rc1.1.x', '25.2.0.x']
    assert 'download table' in conflict['source']


def test_prefix_pairings():
    assert check({'cann': '8.5.0', 'driver': '25.5.2'})['ok']
    assert check({'cann': '8.5.0', 'driver': '25.3.rc1'})['ok']
    assert pairs(check({'cann': '8.5.0', 'driver': '24.1.0'})) == [['cann', 'driver']]


@pytest.mark.parametrize('driver, fits', [
    # Huawei's table in the CANN 8.5.0 release notes: Ascend HDK 25.5.X, 25.3.X, 25.2.X, 25.0.X.
    ('25.5.0', True), ('25.3.rc1', True), ('25.2.0', True), ('25.0.rc1.1', True),
    ('24.1.rc2.2', False), ('25.1.0', False), ('26.0.0', False),
])
def test_cann_8_5_pairs_with_the_hdk_lines_of_its_release_notes(driver, fits):
    report = check({'cann': '8.5.0', 'driver': driver, 'chip_family': '910b'})
    assert report['ok'] is fits
    if not fits:
        conflict = report['conflicts'][0]
        assert conflict['pair'] == ['cann', 'driver']
        assert conflict['fits'] == ['25.5.x', '25.3.x', '25.2.x', '25.0.x']
        assert 'CANN 8.5.0 release notes' in conflict['source']


def test_driver_hotfix_of_the_paired_release_fits():
    assert check({'cann': '8.0.RC3', 'driver': '24.1.rc2.2', 'chip_family': '310p'})['ok']


def test_chip_specific_rows():
    # CANN 7.0.0 pairs with 23.0.3 on 910B but 23.0.1 on 310P.
    assert check({'cann': '7.0.0', 'driver': '23.0.1', 'chip_family': '310p'})['ok']
    assert pairs(check({'cann': '7.0.0', 'driver': '23.0.1', 'chip_family': '910b'})) == [['cann', 'driver']]


# Atlas A3: the versions the A3 scenario installs, and every way an A3 stack is refused.
A3_STACK = {'cann': '8.5.0', 'driver': '25.3.rc1', 'firmware': '7.8.0.2.212', 'chip_family': 'A3'}


@pytest.mark.parametrize('changes, conflicts, unknown', [
    # The recommended A3 stack, its hot fix and the other published pairings apply to A3.
    ({}, [], []),
    ({'driver': '25.3.rc1.2'}, [], []),
    ({'chip_family': 'a3'}, [], []),
    ({'cann': '8.1.RC1', 'driver': '25.0.rc1.3', 'firmware': None}, [], []),
    ({'cann': '8.2.RC1', 'driver': '25.2.0', 'firmware': None}, [], []),
    ({'cann': '9.0.0', 'driver': '26.0.rc1', 'firmware': None}, [], []),
    # The firmware shipped with 25.3.RC1 is its minimum.
    ({'firmware': '7.7.0.1.231'}, [['driver', 'firmware']], []),
    # No A3 CANN package before 8.1.RC1: 8.0.0 pairs with 24.1.rc3 elsewhere, not on an A3.
    ({'cann': '8.0.0', 'driver': '24.1.rc3', 'firmware': None}, [['chip_family', 'cann']], []),
    # A driver older than the A3's version_cap.map, with a CANN that pairs with it elsewhere.
    ({'cann': '8.0.RC1', 'driver': '23.0.3', 'firmware': None},
     [['chip_family', 'driver'], ['chip_family', 'cann']], [['cann', 'driver']]),
    # A CANN with A3 packages but no published HDK pairing stays unknown.
    ({'cann': '8.3.RC1'}, [], [['cann', 'driver']]),
    # The A3's floors do not apply to another family.
    ({'cann': '8.0.0', 'driver': '24.1.rc3', 'firmware': None, 'chip_family': '910b'}, [], []),
])
def test_a3_rows(changes, conflicts, unknown):
    stack = dict(A3_STACK)
    stack.update(changes)
    stack = dict((key, value) for key, value in stack.items() if value is not None)
    report = check(stack)
    assert pairs(report) == conflicts
    assert [entry['pair'] for entry in report['unknown']] == unknown
    assert report['ok'] is (not conflicts and not unknown)


def test_a3_floors_and_firmware_minimum_skip_a_stack_of_unknown_chip():
    # Without a chip family the A3's floors would refuse an A2 stack blindly; the pairings still speak.
    assert check({'cann': '8.0.0', 'driver': '24.1.rc3'})['ok']
    assert check({'driver': '25.3.rc1', 'firmware': '7.7.0.1.231'})['ok']
    assert pairs(check({'cann': '8.0.0', 'driver': '25.3.rc1'})) == [['cann', 'driver']]


def test_a3_os_minimum_applies_to_the_superpod_server_only():
    stack = dict(A3_STACK, driver='25.0.rc1.3', firmware='7.7.0.3.228', cann='8.1.RC1',
                 os='openEuler 24.03 (LTS-SP1)', product='Atlas 900 A3 SuperPoD')
    assert pairs(check(stack)) == [['os', 'driver']]
    stack['product'] = 'Atlas 800I A3'
    assert check(stack)['ok']


def test_unknown_pair_is_refused_not_a_conflict():
    report = check({'cann': '8.3.RC1', 'driver': '25.2.0'})
    assert not report['ok'] and report['conflicts'] == []
    assert [entry['pair'] for entry in report['unknown']] == [['cann', 'driver']]
    assert report['unchecked'] == ['cann', 'driver']


def _first_version(spec):
    """A version meeting the first alternative of ``spec`` (the prefix or the lower bound itself)."""
    alternative = compatibility._alternatives(spec)[0]
    clause = alternative.split(',')[0].strip().lstrip('>=')
    return clause[:-2] if clause.lower().endswith('.x') else clause


_DOCUMENTED = [row for row in COMPAT_MATRIX if row.get('cann') is not None and row.get('driver') is not None
               and compatibility.row_key(row) == ['cann']]


@pytest.mark.parametrize('row', _DOCUMENTED, ids=lambda row: '%s-%s' % (row['cann'], row['driver']))
def test_every_documented_cann_driver_pair_passes(row):
    stack = {'cann': _first_version(row['cann']), 'driver': _first_version(row['driver'])}
    if row.get('chip_families'):
        stack['chip_family'] = row['chip_families'][0]
    if row.get('firmware'):
        stack['firmware'] = _first_version(row['firmware'])
    report = check(stack)
    assert report['unknown'] == []
    assert report['ok'], report['conflicts']


# Table of the fault rows: the stack, what the gate decides, and words its message must hold.
@pytest.mark.parametrize('stack, conflicts, unknown, words', [
    # Unknown CANN release: no row at all.
    ({'cann': '9.9.0', 'driver': '25.0.rc1.1'}, [], [['cann', 'driver']],
     ['cann 9.9.0 with driver 25.0.rc1.1', 'the matrix has no row for cann 9.9.0']),
    # A CANN release documented for other chip families only: the rows that exist are named.
    ({'cann': '7.0.0', 'driver': '23.0.3', 'chip_family': '910'}, [], [['cann', 'driver']],
     ['chip_family 910', 'cann 7.0.0 or 7.0.1 with driver 23.0.3.x on chip families 910b',
      'with driver 23.0.1.x on chip families 310p']),
    # An unknown driver for a known CANN is not unknown: the rows speak, and it does not fit.
    ({'cann': '8.2.RC1', 'driver': '26.0.0', 'chip_family': '910b'}, [['cann', 'driver']], [], []),
    # Unknown framework versions with a known CANN.
    ({'torch_npu': '2.99.0', 'cann': '8.2.RC1'}, [], [['torch_npu', 'cann']], ['torch_npu 2.99.0 with cann 8.2.RC1']),
    ({'mindspore': '9.0.0', 'cann': '8.2.RC1'}, [], [['mindspore', 'cann']], ['the matrix has no row for mindspore 9.0.0']),
    ({'mindcluster': '1.0.0', 'cann': '8.5.0', 'driver': '25.5.0'}, [], [['mindcluster', 'cann']], ['mindcluster 1.0.0']),
    # Firmware is never a row's key: with the driver alone it is unchecked, not refused.
    ({'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'}, [], [], []),
    # ... and once the CANN/driver pair is known, the CANN row's firmware minimum applies.
    ({'cann': '8.2.RC1', 'driver': '25.0.rc1.1', 'firmware': '7.3.0.1.231', 'chip_family': '910b'},
     [['cann', 'firmware']], [], []),
    # A CANN without a driver, or a driver without a CANN, makes no pair.
    ({'cann': '9.9.0'}, [], [], []),
    ({'driver': '99.0.0'}, [], [], []),
])
def test_fail_closed_table(stack, conflicts, unknown, words):
    report = check(stack)
    assert pairs(report) == conflicts
    assert [entry['pair'] for entry in report['unknown']] == unknown
    assert report['ok'] is (not conflicts and not unknown)
    message = compatibility.describe_unknown(report['unknown'], 'my_extra_rows', 'my_allow_unknown')
    for word in words:
        assert word in message
    if unknown:
        assert 'my_extra_rows' in message and 'my_allow_unknown' in message
    else:
        assert message == ''
    # The opt-in accepts unknown pairs, never conflicts, and still reports them.
    allowed = compatibility.check_stack(stack, COMPAT_MATRIX, allow_unknown=True)
    assert allowed['ok'] is (not conflicts)
    assert allowed['unknown'] == report['unknown']


def test_firmware_without_a_row_is_listed_as_unchecked():
    report = check({'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'})
    assert report['ok'] and report['unchecked'] == ['driver', 'firmware']


def test_a_row_in_extra_rows_makes_an_unknown_pair_known():
    stack = {'cann': '9.9.0', 'driver': '27.0.1'}
    assert not check(stack)['ok']
    report = check(stack, [{'source': 'our lab, ticket 42', 'cann': '9.9.0', 'driver': '27.0.x'}])
    assert report['ok'] and report['unknown'] == []
    # A row for another chip family does not.
    report = check(dict(stack, chip_family='310p'),
                   [{'source': 'our lab', 'cann': '9.9.0', 'driver': '27.0.x', 'chip_families': ['910b']}])
    assert not report['ok']
    assert 'on chip families 910b (source: our lab)' in compatibility.describe_unknown(report['unknown'])


def test_torch_npu_needs_its_cann():
    assert check({'torch_npu': '2.6.0', 'cann': '8.2.RC1'})['ok']
    report = check({'torch_npu': '2.6.0', 'cann': '8.5.0'})
    assert pairs(report) == [['torch_npu', 'cann']]
    assert report['conflicts'][0]['fits'] == ['8.2.RC1']


def test_mindspore_row_constrains_the_whole_hdk():
    report = check({'mindspore': '2.3.1', 'cann': '8.0.RC2', 'driver': '24.1.rc2', 'firmware': '7.1.0.6.220'})
    assert pairs(report) == [['cann', 'driver'], ['mindspore', 'firmware']]


def test_os_minimums_apply_to_the_named_product_only():
    stack = {'driver': '24.1.rc2', 'firmware': '7.3.0.1.231', 'os': 'openEuler 24.03 (LTS-SP1)',
             'chip_family': '910b', 'product': 'Atlas 800I A2'}
    assert pairs(check(stack)) == [['os', 'driver'], ['os', 'firmware']]
    stack['product'] = 'Atlas 300T A2'
    assert check(stack)['ok']
    del stack['product']
    assert check(stack)['ok']


def test_a2_inference_floor():
    report = check({'cann': '7.0.RC1', 'driver': '23.0.rc3', 'chip_family': '910b', 'product': 'Atlas 800I A2'})
    assert ['product', 'cann'] in pairs(report) and ['product', 'driver'] in pairs(report)


def test_driver_and_firmware_declared_ranges(sample):
    stack = {'driver': '24.1.rc1', 'firmware': '7.7.0.1.231',
             'compatible_version_fw': '[7.0.0,7.2.99]',
             'compatible_version_drv': '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]'}
    report = check(stack)
    assert pairs(report) == [['driver', 'firmware']]
    assert report['conflicts'][0]['fits'] == ['[7.0.0,7.2.99]']
    assert 'compatible_version_fw' in report['conflicts'][0]['source']
    stack['driver'] = '25.0.rc1.1'
    stack['compatible_version_fw'] = '[7.0.0,7.7.99]'
    assert check(stack)['ok']
    stack['driver'] = '25.3.rc1'
    stack['compatible_version_fw'] = '[7.0.0,8.9.9]'
    report = check(stack)
    assert pairs(report) == [['driver', 'firmware']]
    assert 'compatible_version_drv' in report['conflicts'][0]['source']


def test_extra_rows_extend_and_replace_rows_replace():
    stack = {'cann': '8.3.RC1', 'driver': '25.2.1'}
    row = {'source': 'vendor ticket', 'cann': '8.3.RC1', 'driver': '25.3.x'}
    assert pairs(check(stack, [row])) == [['cann', 'driver']]
    row['driver'] = '25.2.x'
    assert check(stack, [row])['ok']
    # Replacing drops the built-in torch_npu rows, so this is no longer checked.
    report = check({'torch_npu': '2.6.0', 'cann': '8.5.0'}, [row], replace_rows=True)
    assert report['checked'] == [] and report['conflicts'] == []
    # ... and so the pair is unknown: refused unless accepted.
    assert not report['ok'] and [entry['pair'] for entry in report['unknown']] == [['torch_npu', 'cann']]


@pytest.mark.parametrize('row, words', [
    ({'cann': '8.3.RC1', 'driver': '25.2.x'}, 'source'),
    ({'source': 's', 'cann': '8.3.RC1'}, 'requires nothing'),
    ({'source': 's', 'cann': '8.3.RC1', 'drivr': '25.2.x'}, 'unknown fields'),
    ({'source': 's', 'cann': '8.3.RC1', 'driver': '>=x.y'}, 'driver'),
    ({'source': 's', 'key': 'os', 'driver': '25.2.x'}, 'no os constraint'),
])
def test_malformed_extra_rows_are_explained(row, words):
    with pytest.raises(ValueError, match=words):
        check({'cann': '8.3.RC1'}, [row])


def test_unreadable_stack_version_is_an_error():
    with pytest.raises(ValueError, match=r'stack\.driver is .latest., which is not a Huawei version'):
        check({'driver': 'latest'})


def test_describe_conflicts_is_one_sentence_per_conflict():
    report = check({'cann': '8.2.RC1', 'driver': '24.1.rc2', 'torch_npu': '2.5.1'})
    text = compatibility.describe_conflicts(report['conflicts'])
    assert 'cann 8.2.RC1, driver 24.1.rc2' in text and 'torch_npu 2.5.1, cann 8.2.RC1' in text
    assert '25.0.rc1.1.x or 25.2.0.x' in text


_NUMBER = st.integers(min_value=0, max_value=40)
# CANN releases from 10 on: no built-in row is keyed on them; any driver from 20 on.
_UNKNOWN_CANN = st.tuples(st.integers(min_value=10, max_value=99), _NUMBER, _NUMBER).map(
    lambda parts: '%d.%d.%d' % parts)
_DRIVER = st.tuples(st.integers(min_value=20, max_value=99), _NUMBER, _NUMBER).map(lambda parts: '%d.%d.%d' % parts)
_CHIP = st.sampled_from([None, '910b', '310p', '910', '310b'])


@settings(max_examples=150, deadline=None)
@given(cann=_UNKNOWN_CANN, driver=_DRIVER, chip=_CHIP)
def test_no_unknown_cann_driver_pair_ever_passes_silently(cann, driver, chip):
    stack = {'cann': cann, 'driver': driver, 'chip_family': chip}
    report = check(stack)
    assert not report['ok']
    assert [entry['pair'] for entry in report['unknown']] == [['cann', 'driver']]
    assert 'cann %s with driver %s' % (cann, driver) in compatibility.describe_unknown(report['unknown'])
    # The opt-in accepts it, and a row naming the pair makes it known.
    assert compatibility.check_stack(stack, COMPAT_MATRIX, allow_unknown=True)['ok']
    known = check(stack, [{'source': 'generated', 'cann': cann, 'driver': driver}])
    assert known['ok'] and known['unknown'] == []


@settings(max_examples=150, deadline=None)
@given(row=st.sampled_from(_DOCUMENTED), driver=_DRIVER)
def test_a_known_cann_with_any_driver_is_never_unknown(row, driver):
    stack = {'cann': _first_version(row['cann']), 'driver': driver}
    if row.get('chip_families'):
        stack['chip_family'] = row['chip_families'][0]
    report = check(stack)
    assert report['unknown'] == []
    # Either documented or a conflict: the gate decides, it does not shrug.
    assert report['ok'] is (report['conflicts'] == [])
