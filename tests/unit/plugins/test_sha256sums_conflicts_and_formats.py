# -*- coding: utf-8 -*-
"""Issue 40, class 5: the checksum file is read as ``sha256sum --check`` reads it, and no file it fails is trusted.

Before: a SHA256SUMS naming one package twice with two sha256 passed (the last line won: whoever appends
a line to the mirror's list chooses what runs as root, while ``sha256sum --check`` fails that list), and
the BSD tag format (``SHA256 (name) = ...``, what ``sha256sum --tag`` writes) was not read, so every
package of such a list had "no sha256 known".
"""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.ascend_package_trust import ascend_sha256sums
from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import ChecksumFileError, parse_sha256sums

TOOLKIT = 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
DRIVER = 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
HUAWEI = 'a' * 64
FORGED = 'f' * 64


@pytest.mark.parametrize('text', [
    # A line appended after Huawei's.
    '%s  %s\n%s  %s\n' % (HUAWEI, TOOLKIT, FORGED, TOOLKIT),
    # Two paths ending in the same file name.
    '%s  huawei/%s\n%s *mirror/%s\n' % (HUAWEI, TOOLKIT, FORGED, TOOLKIT),
    # One line in each format.
    '%s  %s\nSHA256 (%s) = %s\n' % (HUAWEI, TOOLKIT, TOOLKIT, FORGED),
])
def test_a_file_given_two_sha256_is_refused_naming_the_list_the_file_and_both_lines(text):
    with pytest.raises(ChecksumFileError) as raised:
        parse_sha256sums(text, 'https://mirror.example/ascend/SHA256SUMS')
    message = str(raised.value)
    assert message.startswith('https://mirror.example/ascend/SHA256SUMS gives %r two different sha256' % TOOLKIT)
    assert 'line 1 has %s, line 2 has %s' % (HUAWEI, FORGED) in message and 'Fix:' in message
    with pytest.raises(AnsibleFilterError, match='SHA256SUMS gives .* two different sha256'):
        ascend_sha256sums(text, source='/srv/ascend/SHA256SUMS')


def test_the_same_sha256_twice_is_accepted_as_sha256sum_check_accepts_it():
    text = '%s  %s\n%s  dir/%s\nSHA256 (%s) = %s\n' % (HUAWEI, TOOLKIT, HUAWEI.upper(), TOOLKIT, TOOLKIT, HUAWEI)
    assert parse_sha256sums(text) == {TOOLKIT: HUAWEI}


def test_the_bsd_tag_format_is_read():
    text = 'SHA256 (%s) = %s\r\nSHA256 (dir/%s) = %s\nMD5 (%s) = %s\n' % (
        TOOLKIT, HUAWEI, DRIVER, FORGED.upper(), TOOLKIT, 'c' * 32)
    assert parse_sha256sums(text) == {TOOLKIT: HUAWEI, DRIVER: FORGED}
    assert ascend_sha256sums(text.encode()) == {TOOLKIT: HUAWEI, DRIVER: FORGED}


def test_a_byte_order_mark_does_not_hide_the_first_line():
    assert parse_sha256sums('\ufeff%s  %s\n' % (HUAWEI, TOOLKIT)) == {TOOLKIT: HUAWEI}


_NAMES = st.sampled_from([TOOLKIT, DRIVER, 'Ascend-docker-runtime_6.0.0_linux-x86_64.run'])
_DIGESTS = st.sampled_from([HUAWEI, FORGED, '0123456789abcdef' * 4])
_FORMATS = st.sampled_from(['%(digest)s  %(name)s', '%(digest)s *%(name)s', '%(upper)s  some/dir/%(name)s',
                            'SHA256 (%(name)s) = %(digest)s', 'SHA256 (/abs/%(name)s) = %(upper)s'])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAMES, _DIGESTS, _FORMATS), max_size=6))
def test_the_reader_agrees_with_sha256sum_check(entries):
    """Whatever the formats and the order: one sha256 per file is read as it is, two different ones refuse the list."""
    text = '\n'.join(line % {'name': name, 'digest': digest, 'upper': digest.upper()}
                     for name, digest, line in entries) + '\n'
    wanted = {}
    for name, digest, _line in entries:
        wanted.setdefault(name, set()).add(digest)
    if any(len(digests) > 1 for digests in wanted.values()):
        with pytest.raises(ChecksumFileError):
            parse_sha256sums(text)
    else:
        assert parse_sha256sums(text) == dict((name, digests.pop()) for name, digests in wanted.items())
