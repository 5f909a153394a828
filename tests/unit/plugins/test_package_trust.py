# -*- coding: utf-8 -*-
"""The mirror trust rule, the plain-file-name rule and the SHA256SUMS reader of roles/packages."""
import os.path

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.filter.ascend_package_trust import (
    FilterModule, ascend_file_name_problem, ascend_mirror_trust, ascend_sha256sums)
from ansible_collections.npu.ascend.plugins.plugin_utils.package_trust import (
    file_name_problem, mirror_trust, parse_sha256sums, redact_url)

TOOLKIT = 'Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run'
DRIVER = 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run'
SUM_A = 'a' * 64
SUM_B = 'B' * 64


def test_registered_names():
    assert sorted(FilterModule().filters()) == ['ascend_file_name_problem', 'ascend_mirror_trust', 'ascend_sha256sums']


def test_plain_http_without_pins_is_refused_naming_the_packages_and_the_opt_out():
    trust = mirror_trust('http://mirror.example/ascend', [TOOLKIT, DRIVER])
    assert trust['refused']
    assert 'plain http://' in trust['cause'] and TOOLKIT in trust['cause'] and DRIVER in trust['cause']
    assert 'packages_sha256sums' in trust['fix'] and 'packages_mirror_allow_insecure=true' in trust['fix']
    assert 'https' in trust['fix']


def test_plain_http_with_some_packages_pinned_is_still_refused_for_the_rest():
    trust = mirror_trust('http://mirror.example/', [TOOLKIT, DRIVER], {TOOLKIT: SUM_A})
    assert trust['refused'] and trust['unpinned'] == [DRIVER]
    assert DRIVER in trust['cause'] and TOOLKIT not in trust['cause']


def test_plain_http_with_every_package_pinned_is_used_without_its_sha256sums():
    trust = mirror_trust('http://mirror.example/', [TOOLKIT, DRIVER], {TOOLKIT: SUM_A, DRIVER: SUM_B})
    assert not trust['refused'] and trust['warning'] == '' and trust['fetch_sums'] is False


def test_plain_http_with_the_opt_in_is_used_with_a_warning():
    trust = mirror_trust('http://mirror.example/', [TOOLKIT], allow_insecure=True)
    assert not trust['refused'] and trust['fetch_sums']
    assert 'anyone on the network path' in trust['warning'] and 'packages_sha256sums' in trust['warning']


def test_https_without_certificate_checks_counts_as_insecure():
    trust = mirror_trust('https://mirror.example/', [TOOLKIT], validate_certs=False)
    assert trust['refused'] and 'packages_mirror_validate_certs=false' in trust['cause']


def test_https_with_checksums_from_the_mirror_alone_warns():
    trust = mirror_trust('https://mirror.example/', [TOOLKIT, DRIVER], {DRIVER: SUM_A})
    assert not trust['refused']
    assert TOOLKIT in trust['warning'] and DRIVER not in trust['warning'] and 'same mirror' in trust['warning']


def test_https_fully_pinned_neither_warns_nor_fetches_sums():
    trust = mirror_trust('https://mirror.example/', [TOOLKIT], {TOOLKIT: SUM_A})
    assert trust == {'refused': False, 'cause': '', 'fix': '', 'warning': '', 'display_url': 'https://mirror.example/',
                     'fetch_sums': False, 'unpinned': []}


@pytest.mark.parametrize('url', [
    'https://alice:s3cr3t-pw@mirror.example/ascend',
    'http://alice:s3cr3t-pw@mirror.example/ascend',
    'https://s3cr3t-pw@mirror.example/',
])
def test_credentials_in_the_url_are_refused_without_showing_them(url):
    trust = mirror_trust(url, [TOOLKIT], {TOOLKIT: SUM_A}, allow_insecure=True)
    assert trust['refused'] and 'packages_mirror_username' in trust['fix']
    for value in trust.values():
        assert 's3cr3t-pw' not in str(value) and 'alice' not in str(value)


def test_credentials_over_plain_http_are_refused_unless_accepted():
    pinned = {TOOLKIT: SUM_A}
    refused = mirror_trust('http://mirror.example/', [TOOLKIT], pinned, username='u', password='p')
    assert refused['refused'] and 'password would cross the network' in refused['cause']
    assert not mirror_trust('http://mirror.example/', [TOOLKIT], pinned, True, username='u', password='p')['refused']
    assert not mirror_trust('https://mirror.example/', [TOOLKIT], pinned, username='u', password='p')['refused']


@pytest.mark.parametrize('username, password', [('u', ''), ('', 'p')])
def test_half_credentials_are_refused(username, password):
    assert mirror_trust('https://mirror.example/', [TOOLKIT], username=username, password=password)['refused']


@pytest.mark.parametrize('url', ['', 'ftp://mirror.example/', 'mirror.example/ascend', 'file:///srv/ascend',
                                 'http://mirror.example:99999999/', 'https:///path'])
def test_urls_that_are_not_http_mirrors_are_refused(url):
    assert mirror_trust(url, [TOOLKIT], allow_insecure=True)['refused']


def test_a_pin_that_is_not_a_sha256_is_refused():
    trust = mirror_trust('http://mirror.example/', [TOOLKIT], {TOOLKIT: 'sha256:abc'})
    assert trust['refused'] and TOOLKIT in trust['cause']


def test_filter_rejects_wrong_types():
    with pytest.raises(AnsibleFilterError):
        ascend_mirror_trust('http://m/', [TOOLKIT], pinned=['x'])
    with pytest.raises(AnsibleFilterError):
        ascend_mirror_trust('http://m/', TOOLKIT)
    with pytest.raises(AnsibleFilterError):
        ascend_sha256sums(42)


def test_redact_url_keeps_host_and_path():
    assert redact_url('https://a:b@m.example:8443/x?y') == 'https://<credentials removed>@m.example:8443/x?y'
    assert redact_url('https://m.example/x') == 'https://m.example/x'


@pytest.mark.parametrize('name', [
    '', '/', '..', '.', '../Ascend.run', '/etc/passwd', 'sub/dir.run', 'a\x00b.run', '-rf', '--check.run',
    'a b.run', 'a;b.run', '$(id).run', 'a`id`.run', 'a\nb.run', 'Ascend.run\n', 'x\\y.run', 'é.run', 'a' * 256, None, 3,
])
def test_names_that_are_not_plain_file_names_are_refused(name):
    assert file_name_problem(name)
    assert ascend_file_name_problem(name)


@pytest.mark.parametrize('name', [TOOLKIT, DRIVER, 'Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run',
                                  'Ascend-docker-runtime_7.3.0_linux-x86_64.run'])
def test_huawei_names_are_plain_file_names(name):
    assert file_name_problem(name) == ''


@given(st.text(max_size=80))
def test_an_accepted_name_never_leaves_the_staging_directory(name):
    if file_name_problem(name) == '':
        staging = '/var/cache/npu_ascend/packages'
        joined = os.path.normpath(os.path.join(staging, name))
        assert os.path.dirname(joined) == staging and not name.startswith('-')


@given(st.text(max_size=80))
def test_a_refusal_shows_the_name_escaped(name):
    problem = file_name_problem(name)
    assert '\x00' not in problem and '\n' not in problem


def test_sha256sums_reader():
    text = ('%s  %s\n%s *dir/%s\n# comment\nnot a line\n%s\n' % (SUM_A, TOOLKIT, SUM_B, DRIVER, SUM_A))
    assert parse_sha256sums(text) == {TOOLKIT: SUM_A, DRIVER: SUM_B.lower()}
    assert ascend_sha256sums(None) == {} and ascend_sha256sums('') == {}
    assert parse_sha256sums(text.encode()) == parse_sha256sums(text)


@given(st.binary(max_size=300))
def test_sha256sums_reader_takes_any_bytes(data):
    for name, value in parse_sha256sums(data).items():
        assert len(value) == 64 and '/' not in name
