# -*- coding: utf-8 -*-
import itertools
import random

import pytest

from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import (
    AscendVersion,
    compare_versions,
    in_compat_range,
    parse_compat_ranges,
    parse_version,
    version_matches,
)

# (older, newer) pairs, each one a rule of the facts reference section 1 or a mixed case.
ORDERED_PAIRS = [
    ('24.1.rc1', '24.1.rc2'),
    ('24.1.rc2', '24.1.0'),
    ('24.1.0', '24.1.0.1'),
    ('24.1.rc1', '24.1.0'),
    ('24.1.RC3', '24.1.rc10'),
    ('8.0.RC1', '8.0.0'),
    ('8.0.RC3', '8.0.0'),
    ('8.0.0', '8.1.RC1'),
    ('8.1.RC1.alpha002', '8.1.RC1'),
    ('8.1.RC1.alpha001', '8.1.RC1.alpha002'),
    ('8.1.RC1.alpha002', '8.1.RC1.beta1'),
    ('8.1.RC1.beta1', '8.1.RC1.b033'),
    ('9.0.0-beta.2', '9.0.0'),
    ('9.0.0-beta.2', '9.0.0-beta.10'),
    ('25.0.rc1.b033', '25.0.rc1'),
    ('25.0.rc1.b033', '25.0.rc1.b100'),
    ('25.0.rc1', '25.0.rc1.1'),
    ('25.0.rc1.1', '25.0.rc2'),
    ('25.0.rc1.1', '25.0.0'),
    ('6.0.0', '6.0.0.SPC1'),
    ('6.0.0.SPC1', '6.0.0.SPC2'),
    ('6.0.0.SPC2', '6.0.1'),
    ('6.0.RC1.SPC1', '6.0.0'),
    ('24.1.rc3', '24.1.rc3.7'),
    ('24.1.rc3.7', '24.1.0'),
    ('24.1.rc2.2', '24.1.rc3'),
    ('23.0.rc3', '23.0.0'),
    ('23.0.7', '24.1.rc1'),
    ('7.1.0.11.220', '7.7.0.1.231'),
    ('7.3.0.1.231', '7.7.0.1.231'),
    ('7.9.0', '7.10.0'),
    ('24.1', '24.1.rc1'),
    ('24.1', '24.1.0'),
    ('v7.3.0', '7.10.0'),
]

EQUAL_PAIRS = [
    ('24.1.RC2', '24.1.rc2'),
    ('8.1.RC1.alpha002', '8.1.rc1.ALPHA2'),
    ('v7.3.0', '7.3.0'),
    ('V7.3.0', '7.3.0'),
    ('9.0.0-beta.2', '9.0.0.beta.2'),
    (' 24.1.0 ', '24.1.0'),
]


@pytest.mark.parametrize('older, newer', ORDERED_PAIRS)
def test_ordered_pairs(older, newer):
    assert AscendVersion(older) < AscendVersion(newer)
    assert AscendVersion(newer) > AscendVersion(older)
    assert AscendVersion(older) != AscendVersion(newer)
    assert compare_versions(older, newer) == -1
    assert compare_versions(newer, older) == 1
    assert version_matches(older, '<', newer)
    assert version_matches(newer, '>=', older)
    assert not version_matches(older, '==', newer)


@pytest.mark.parametrize('left, right', EQUAL_PAIRS)
def test_equal_spellings(left, right):
    assert AscendVersion(left) == AscendVersion(right)
    assert hash(AscendVersion(left)) == hash(AscendVersion(right))
    assert compare_versions(left, right) == 0
    assert version_matches(left, '<=', right) and version_matches(left, '>=', right)
    assert len({AscendVersion(left), AscendVersion(right)}) == 1


def test_str_keeps_original_spelling():
    assert str(AscendVersion('24.1.RC2')) == '24.1.RC2'
    assert str(parse_version('v7.3.0')) == 'v7.3.0'
    assert repr(AscendVersion('8.0.RC1')) == "AscendVersion('8.0.RC1')"


def test_shuffled_list_sorts_into_release_order():
    release_order = [
        '6.0.0', '6.0.0.SPC1', '7.7.0.1.231', '8.0.RC1', '8.0.RC3', '8.0.0', '8.1.RC1.alpha002', '8.1.RC1',
        '9.0.0-beta.2', '9.0.0', '23.0.rc3', '23.0.7', '24.1', '24.1.rc1', '24.1.rc2', '24.1.rc2.2',
        '24.1.rc3', '24.1.rc3.7', '24.1.0', '24.1.0.1', '25.0.rc1.b033', '25.0.rc1', '25.0.rc1.1', '25.5.2',
    ]
    generator = random.Random(20240601)
    for _attempt in range(50):
        shuffled = list(release_order)
        generator.shuffle(shuffled)
        assert [str(v) for v in sorted(AscendVersion(text) for text in shuffled)] == release_order
        assert sorted(shuffled, key=lambda text: parse_version(text).sort_key) == release_order


def test_ordering_is_a_consistent_total_order():
    texts = sorted(set(itertools.chain.from_iterable(ORDERED_PAIRS + EQUAL_PAIRS)))
    versions = [AscendVersion(text) for text in texts]
    for low, high in itertools.product(versions, repeat=2):
        assert compare_versions(low, high) == -compare_versions(high, low)
        assert (low < high) + (low == high) + (low > high) == 1
    for low, middle, high in itertools.product(versions, repeat=3):
        if low <= middle <= high:
            assert low <= high, (low, middle, high)
        if low < middle < high:
            assert low < high, (low, middle, high)


@pytest.mark.parametrize('junk', [
    '', '   ', 'latest', 'rc1', '.24.1', '24.1.', '24..1', '24.1.rc1 beta', '24.1+3', '8.0.RC1.gamma3', '7.5.T11.0',
])
def test_junk_raises_clear_value_error(junk):
    with pytest.raises(ValueError, match='Ascend version'):
        parse_version(junk)


def test_non_string_raises_value_error():
    with pytest.raises(ValueError, match='must be a string'):
        parse_version(24.1)


def test_comparison_with_other_types_is_not_supported():
    assert AscendVersion('1.0') != '1.0'
    with pytest.raises(TypeError):
        AscendVersion('1.0') < '2.0'  # pylint: disable=expression-not-assigned


@pytest.mark.parametrize('op, expected', [
    ('<', True), ('<=', True), ('==', False), ('!=', True), ('>=', False), ('>', False),
])
def test_version_matches_operators(op, expected):
    assert version_matches('24.1.rc1', op, '24.1.0') is expected


@pytest.mark.parametrize('op', ['lt', '=', '=>', '', None])
def test_version_matches_rejects_unknown_operator(op):
    with pytest.raises(ValueError, match='unknown version operator'):
        version_matches('1.0', op, '1.0')


def test_compare_accepts_mixed_argument_types():
    assert compare_versions(AscendVersion('24.1.0'), '24.1.rc1') == 1
    assert compare_versions('24.1.rc1', AscendVersion('24.1.rc1')) == 0


def test_parse_compat_ranges_driver_form():
    ranges = parse_compat_ranges('[7.0.0,7.2.99]')
    assert [(str(lo), str(hi), prefix) for lo, hi, prefix in ranges] == [('7.0.0', '7.2.99', False)]


def test_parse_compat_ranges_firmware_form():
    ranges = parse_compat_ranges('[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]')
    assert [(str(lo), str(hi), prefix) for lo, hi, prefix in ranges] == [
        ('23.0.0', '23.0.0', True), ('24.0', '24.0', True), ('24.1', '24.1', True), ('25.0', '25.0', True)]


@pytest.mark.parametrize('text', ['', '7.0.0,7.2.99', '[7.0.0]', '[7.0.0,7.2.99', '[7.0.0,7.2.99] junk', '[a,b]'])
def test_parse_compat_ranges_rejects_junk(text):
    with pytest.raises(ValueError):
        parse_compat_ranges(text)


@pytest.mark.parametrize('version, ranges, inside', [
    # Driver's compatible_version_fw (inclusive, no prefix).
    ('7.1.0.11.220', '[7.0.0,7.2.99]', True),
    ('7.0.0', '[7.0.0,7.2.99]', True),
    ('7.2.99', '[7.0.0,7.2.99]', True),
    ('7.2.99.1', '[7.0.0,7.2.99]', False),
    ('7.7.0.1.231', '[7.0.0,7.2.99]', False),
    ('7.7.0.1.231', '[7.0.0,7.7.99]', True),
    ('6.4.0.4.220', '[7.0.0,7.7.99]', False),
    # Firmware's compatible_version_drv (prefix upper bounds).
    ('23.0.rc3', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', True),
    ('23.0.rc3.2', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', True),
    ('23.0.0.1', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', True),
    ('23.0.7', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', False),
    ('23.0.rc2', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', False),
    ('23.0.rc31', '[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]', False),
    ('24.1.rc2', '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]', True),
    ('24.1.0.3', '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]', True),
    ('24.1.RC3', '[24.1,24.1.]', True),
    ('24.1.alpha1', '[24.1,24.1.]', True),
    ('25.0.rc1.1', '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]', True),
    ('24.2.rc1', '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]', False),
    ('25.2.0', '[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]', False),
    ('24.10.0', '[24.1,24.1.]', False),
    ('24.1.rc1', '[24.1.rc2,24.1.]', False),
])
def test_in_compat_range(version, ranges, inside):
    assert in_compat_range(version, ranges) is inside
    assert in_compat_range(AscendVersion(version), ranges) is inside
