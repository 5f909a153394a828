# -*- coding: utf-8 -*-
"""The openEuler node recipe's naming: the RPM versions it derives from Debian's and from the
simulated kernel release must be versions rpm and dnf accept, and the kernel's NEVRA must spell
`uname -r` back, which is what the hdk role asks dnf for (`kernel-devel-<uname -r>`)."""

import importlib.util
import os
import re
import subprocess

import pytest
from hypothesis import given, strategies as st

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RECIPE = os.path.join(REPO_ROOT, 'sandbox', 'image-openeuler', 'build_rpms.py')


@pytest.fixture(scope='module')
def build_rpms():
    spec = importlib.util.spec_from_file_location('build_rpms', RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# rpm's version and release may not hold '-' (it separates them in a NEVRA), nor be empty.
RPM_FIELD = re.compile(r'^[A-Za-z0-9._+~^]+$')


def test_openeuler_kernel_release_splits_into_its_nevra(build_rpms):
    assert build_rpms.kernel_version_release('5.10.0-60.18.0.50.oe2203.x86_64') == ('5.10.0', '60.18.0.50.oe2203')
    assert build_rpms.kernel_version_release('5.10.0-60.18.0.50.oe2203.aarch64') == ('5.10.0', '60.18.0.50.oe2203')


def test_a_release_that_is_not_openeulers_stops_the_build(build_rpms):
    with pytest.raises(SystemExit, match='not an openEuler kernel release'):
        build_rpms.kernel_version_release('6.1.0-28-amd64')


@pytest.mark.parametrize('debian, rpm', [
    ('12.2.0-14', ('12.2.0', '14.oe2203')),
    ('4.3-4.1', ('4.3', '4.1.oe2203')),
    ('1:2.3.0-1+deb12u1', ('2.3.0', '1+deb12u1.oe2203')),
    ('3.0.10-8+deb12u1', ('3.0.10', '8+deb12u1.oe2203')),
    ('2.10-3', ('2.10', '3.oe2203')),
    ('0.11.7', ('0.11.7', '0.oe2203')),
])
def test_debian_versions_become_rpm_version_and_release(build_rpms, monkeypatch, debian, rpm):
    monkeypatch.setattr(build_rpms, 'run', lambda argv, **kwargs: debian)
    assert build_rpms.deb_version('any') == rpm


@st.composite
def debian_versions(draw):
    """Versions as Debian policy allows them: a colon in the upstream part only after an epoch,
    a hyphen only before a revision."""
    epoch = draw(st.one_of(st.none(), st.integers(0, 9)))
    revision = draw(st.one_of(st.none(), st.from_regex(r'[A-Za-z0-9.+~]{1,8}', fullmatch=True)))
    extra = ('' if epoch is None else ':') + ('' if revision is None else '-')
    upstream = draw(st.from_regex(r'[0-9][A-Za-z0-9.+~%s]{0,12}' % extra, fullmatch=True))
    return ('%d:' % epoch if epoch is not None else '') + upstream + ('-' + revision if revision else '')


@given(debian=debian_versions())
def test_any_debian_version_gives_fields_rpm_accepts(build_rpms, debian):
    original_run = build_rpms.run
    build_rpms.run = lambda argv, **kwargs: debian
    try:
        version, release = build_rpms.deb_version('any')
    finally:
        build_rpms.run = original_run
    assert RPM_FIELD.match(version) and RPM_FIELD.match(release)
    assert release.endswith('.' + build_rpms.DIST_TAG)


def test_spec_lists_every_file_and_marks_configuration(build_rpms):
    package = {'name': 'python3-dnf-plugin-versionlock', 'summary': 'Version lock plugin for dnf', 'noarch': True,
               'config': ['/etc/dnf/plugins/versionlock.conf'], 'requires': ['gcc']}
    files = ['/etc/dnf/plugins/versionlock.conf', '/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py']
    spec = build_rpms.spec_text(package, '4.3.1', '3.oe2203', files, '/', '/tmp/list')
    assert 'BuildArch: noarch' in spec
    assert 'AutoReqProv: no' in spec
    assert 'Requires: gcc' in spec
    assert '%config(noreplace) "/etc/dnf/plugins/versionlock.conf"' in spec.splitlines()
    assert '"/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py"' in spec.splitlines()


def test_the_preload_library_compiles(tmp_path):
    source = os.path.join(REPO_ROOT, 'sandbox', 'image-openeuler', 'kernel_release.c')
    library = tmp_path / 'libkernelrelease.so'
    result = subprocess.run(['cc', '-O2', '-Wall', '-Werror', '-shared', '-fPIC',
                             '-DKERNEL_RELEASE_PREFIX="5.10.0-60.18.0.50.oe2203"', '-o', str(library), source, '-ldl'],
                            check=False, capture_output=True, text=True)
    if result.returncode == 127 or 'No such file' in result.stderr and not os.path.exists('/usr/bin/cc'):
        pytest.skip('no C compiler on the controller')
    assert result.returncode == 0, result.stderr
    uname = subprocess.run(['uname', '-r'], env=dict(os.environ, LD_PRELOAD=str(library)),
                           check=True, capture_output=True, text=True).stdout.strip()
    assert uname == '5.10.0-60.18.0.50.oe2203.' + os.uname().machine
