# -*- coding: utf-8 -*-
"""Preflight's judgement of a node (what the role's Jinja did before): table-driven cases."""
import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import planner
from ansible_collections.npu.ascend.plugins.plugin_utils import preflight_checks as pc

SUPPORTED = [{'distribution': 'Ubuntu', 'versions': ['22.04', '24.04']}, {'distribution': 'openEuler', 'versions': ['22.03']},
             {'distribution': 'CTyunOS', 'versions': []}, {'distribution': 'Kylin', 'versions': ['V10', '10']}]
KERNEL = '6.1.0-18-amd64'
HEADERS = ['linux-headers-' + KERNEL]
TOOLCHAIN = ['dkms', 'gcc', 'make']
APT_POLICY = '''linux-headers-6.1.0-18-amd64:
  Installed: (none)
  Candidate: 6.1.76-1
  Version table:
dkms:
  Installed: 3.0.10-8
  Candidate: 3.0.10-8
gcc:
  Installed: (none)
  Candidate: (none)
make:
  Installed: 4.3-4.1
  Candidate: 4.3-4.1
'''
DNF_LIST = '''Installed Packages
dkms.noarch                 3.0.12-1.el9        @epel
kernel-devel.x86_64         5.14.0-362.el9      @baseos
Available Packages
gcc.x86_64                  11.4.1-2.el9        baseos
kernel-headers.x86_64       5.14.0-362.el9      baseos
'''
EL_KERNEL = '5.14.0-362.el9.x86_64'
EL_HEADERS = ['kernel-devel-' + EL_KERNEL, 'kernel-headers-' + EL_KERNEL]


@pytest.mark.parametrize('distribution, version, major, ok', [
    ('Ubuntu', '22.04', '22', True),
    ('Ubuntu', '20.04', '20', False),
    ('openEuler', '22.03.1', '22', True),       # a point release of a supported one
    ('CTyunOS', '3.0', '3', True),             # no versions listed: every version
    ('Kylin', 'V10', 'V10', True),
    ('Kylin Linux Advanced Server', 'V10', 'V10', True),
    ('Debian', '12.5', '12', False),
])
def test_operating_system(distribution, version, major, ok):
    checks = pc.system_checks({'distribution': distribution, 'distribution_version': version,
                               'distribution_major_version': major, 'architecture': 'x86_64', 'pkg_mgr': 'apt'},
                              SUPPORTED, ['x86_64', 'aarch64'])
    assert [c['name'] for c in checks] == ['operating system', 'architecture', 'package manager']
    assert checks[0]['ok'] is ok and checks[0]['detail'] == '%s %s' % (distribution, version)
    assert checks[1]['ok']


def test_architecture():
    check = pc.system_checks({'distribution': 'Ubuntu', 'distribution_version': '22.04', 'architecture': 'ppc64le'},
                             SUPPORTED, ['x86_64', 'aarch64'])[1]
    assert not check['ok'] and check['fix'] == 'Ascend packages exist for x86_64 and aarch64 only'


@pytest.mark.parametrize('pkg_mgr, ok', [('apt', True), ('dnf', True), ('dnf5', True), ('yum', False),
                                         ('unknown', False), (None, False)])
def test_package_manager(pkg_mgr, ok):
    # ansible-core 2.19 drives no yum: a yum-only system (CentOS 7.6, old EulerOS) is refused, not half-prepared.
    check = pc.system_checks({'distribution': 'openEuler', 'distribution_version': '22.03', 'architecture': 'x86_64',
                              'pkg_mgr': pkg_mgr}, SUPPORTED, ['x86_64'])[2]
    assert check['name'] == 'package manager' and check['ok'] is ok
    assert check['detail'] == '%s on openEuler 22.03' % (pkg_mgr or '')
    assert ok or 'yum-only system' in check['fix']


@pytest.mark.parametrize('pkg_mgr, kernel, headers, query, tree, headers_ok, tools_ok, missing', [
    # apt: headers available to install, gcc nowhere.
    ('apt', KERNEL, HEADERS, APT_POLICY, False, True, False, 'gcc'),
    # headers missing from every repository, but the build tree is there.
    ('apt', KERNEL, HEADERS, APT_POLICY.replace('Candidate: 6.1.76-1', 'Candidate: (none)'), True, True, False, 'gcc'),
    ('apt', KERNEL, HEADERS, APT_POLICY.replace('Candidate: 6.1.76-1', 'Candidate: (none)'), False, False, False, 'gcc'),
    # dnf: installed or available, by name or by name-version.
    ('dnf', EL_KERNEL, EL_HEADERS, DNF_LIST, False, True, False, 'make'),
    ('dnf5', EL_KERNEL, EL_HEADERS, DNF_LIST + 'make.x86_64   4.3-7.el9   baseos\n', False, True, True, ''),
])
def test_build_packages(pkg_mgr, kernel, headers, query, tree, headers_ok, tools_ok, missing):
    header_check, tool_check = pc.build_checks(pkg_mgr, kernel, headers, TOOLCHAIN, query, tree)
    assert header_check['ok'] is headers_ok, header_check
    assert tool_check['ok'] is tools_ok, tool_check
    assert tool_check['fix'] == 'make %s installable from the configured repositories' % missing


@pytest.mark.parametrize('pkg_mgr', ['zypper', 'yum', ''])
def test_an_unsupported_package_manager_fails_once(pkg_mgr):
    # The package manager check names the cause; the build checks would only repeat it with a wrong fix.
    assert pc.build_checks(pkg_mgr, KERNEL, HEADERS, TOOLCHAIN, '', False) == []
    facts = {'distribution': 'CentOS', 'distribution_version': '7.6', 'distribution_major_version': '7',
             'architecture': 'x86_64', 'pkg_mgr': pkg_mgr}
    failed = [c['name'] for c in pc.system_checks(facts, [{'distribution': 'CentOS'}], ['x86_64']) if not c['ok']]
    assert failed == ['package manager']


def test_missing_headers_name_the_package_and_the_kernel():
    policy = APT_POLICY.replace('Candidate: 6.1.76-1', 'Candidate: (none)')
    check = pc.build_checks('apt', KERNEL, HEADERS, TOOLCHAIN, policy, False)[0]
    assert check['detail'] == 'running kernel %s: linux-headers-%s missing' % (KERNEL, KERNEL)
    assert check['fix'].startswith('make linux-headers-%s installable for kernel %s' % (KERNEL, KERNEL))


@pytest.mark.parametrize('free_kb, needed, ok, detail', [
    (10 * 1048576, 10, True, '10.0 GB free on /, 10 GB needed'),
    (9.94 * 1048576, 10, False, '9.9 GB free on /, 10 GB needed'),
    (None, 10, False, '0.0 GB free on /, 10 GB needed'),
])
def test_free_disk(free_kb, needed, ok, detail):
    check = pc.disk_check(free_kb, needed)
    assert check['ok'] is ok and check['detail'] == detail


LEFTOVERS = [{'path': '/usr/local/Ascend/driver', 'component': 'driver'},
             {'path': '/usr/local/Ascend/ascend-toolkit', 'component': 'toolkit'},
             {'path': '/etc/ascend_install.info', 'component': 'install record'}]


@pytest.mark.parametrize('present, installed, ok, found', [
    ([], {}, True, ''),
    (['/usr/local/Ascend/driver'], {'driver': {'version': '25.0.rc1.1'}}, True, ''),
    (['/usr/local/Ascend/driver'], {}, False, '/usr/local/Ascend/driver exists without an installed driver version file'),
    (['/etc/ascend_install.info'], {}, False, '/etc/ascend_install.info records an install but no driver or firmware'),
    (['/etc/ascend_install.info'], {'firmware': {'version': '7.7.0.1.231'}}, True, ''),
    (['/usr/local/Ascend/ascend-toolkit'], {'toolkit': None}, False, 'ascend-toolkit exists without an installed toolkit'),
])
def test_leftovers(present, installed, ok, found):
    check = pc.leftover_check({'paths_present': present, 'installed': installed}, LEFTOVERS)
    assert check['ok'] is ok
    assert found in check['detail']
    if 'driver exists' in found:
        assert check['fix'].startswith('run /usr/local/Ascend/driver/script/uninstall.sh')


@pytest.mark.parametrize('count, chip, expected, names, oks', [
    (8, '910b', 8, ['NPUs on PCI', 'NPU count'], [True, True]),
    (7, '910b', 8, ['NPUs on PCI', 'NPU count'], [True, False]),
    (0, None, 0, ['NPUs on PCI'], [False]),
    (2, None, 0, ['NPUs on PCI'], [False]),            # an unknown device id: no chip family
])
def test_hardware(count, chip, expected, names, oks):
    checks = pc.hardware_checks({'npu_count': count, 'chip_family': chip, 'product': None}, expected)
    assert [c['name'] for c in checks] == names and [c['ok'] for c in checks] == oks
    if count == 7:
        assert checks[1]['detail'] == 'found 7, expected 8'


@pytest.mark.parametrize('detected, declared, failed', [
    ('910b', '910B', False), ('910b', None, False), (None, '910b', False), ('310p', '910b', True),
])
def test_a_declared_chip_must_be_the_one_pci_shows(detected, declared, failed):
    checks = pc.hardware_checks({'npu_count': 8, 'chip_family': detected, 'product': None}, 0, declared)
    mismatch = [check for check in checks if check['name'] == 'declared chip']
    assert bool(mismatch) is failed
    if failed:
        assert mismatch[0]['detail'] == 'the inventory declares npu_ascend_chip 910b, PCI shows chip 310p'


def test_packages():
    wanted = [{'component': 'driver', 'version': '25.0.rc1.1'}]
    assert pc.package_checks([], False, None, None) == []
    assert pc.package_checks(wanted, False, '910b', None)[0]['name'] == 'package source'
    assert pc.package_checks(wanted, True, None, None)[0]['name'] == 'packages'
    resolved = [{'component': 'driver', 'file_name': 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run',
                 'problem': '', 'fix': '', 'package_arch': 'x86_64', 'sha256': 'ab' * 32},
                {'component': 'firmware', 'file_name': 'f.run', 'problem': 'sha256 mismatch', 'fix': 'download f.run again'}]
    checks = pc.package_checks(wanted, True, '910b', resolved)
    assert checks[0]['ok'] and checks[0]['detail'].endswith('(x86_64, sha256 abababababab...)')
    assert not checks[1]['ok'] and checks[1]['detail'] == 'f.run: sha256 mismatch'


PROBE = {'installed': {'driver': None}, 'chip_family': '910b', 'product': 'Atlas 800I A2', 'os': 'Ubuntu 22.04'}


@pytest.mark.parametrize('wanted, allow_unknown, ok, detail', [
    ({'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231', 'toolkit': '8.2.RC1'}, False, True, 'fits the matrix'),
    ({'driver': '24.1.rc2', 'toolkit': '8.2.RC1'}, False, False, 'cann 8.2.RC1 with driver 24.1.rc2 do not fit'),
    ({'driver': '25.0.rc1.1', 'toolkit': '8.3.RC1'}, False, False,
     'cann 8.3.RC1 with driver 25.0.rc1.1 (chip_family 910b, product Atlas 800I A2) is not in the compatibility matrix; '
     'the matrix has no row for cann 8.3.RC1'),
    ({'driver': '25.0.rc1.1', 'toolkit': '8.3.RC1'}, True, True, 'accepted by preflight_compat_allow_unknown'),
])
def test_compatibility(wanted, allow_unknown, ok, detail):
    plan = planner.plan_node(wanted, PROBE)
    report = pc.compat_report(pc.compat_stack(plan, PROBE), allow_unknown=allow_unknown)
    check = pc.compat_check(report, allow_unknown)
    assert check['ok'] is ok, check
    assert detail in check['detail']


def test_the_installed_driver_stands_in_when_no_driver_is_wanted():
    probe = dict(PROBE, installed={'driver': {'version': '24.1.rc2'}})
    plan = planner.plan_node({'toolkit': '8.2.RC1'}, probe)
    stack = pc.compat_stack(plan, probe)
    assert stack['driver'] == '24.1.rc2' and stack['cann'] == '8.2.RC1' and stack['os'] == 'Ubuntu 22.04'


def _inputs(**changes):
    inputs = {
        'probe': dict(PROBE, npu_count=8, free_kb=50 * 1048576, paths_present=['/lib/modules/%s/build' % KERNEL]),
        'plan': planner.plan_node({'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'}, PROBE),
        'facts': {'distribution': 'Ubuntu', 'distribution_version': '22.04', 'distribution_major_version': '22',
                  'architecture': 'x86_64', 'kernel': KERNEL, 'pkg_mgr': 'apt'},
        'build': {'headers': HEADERS, 'toolchain': TOOLCHAIN, 'tree': '/lib/modules/%s/build' % KERNEL,
                  'query': APT_POLICY.replace('Candidate: (none)', 'Candidate: 1')},
        'packages': {'wanted': [], 'source': True, 'resolved': []},
        'leftover_paths': LEFTOVERS, 'supported_os': SUPPORTED, 'supported_arches': ['x86_64'],
        'expected_npu_count': 8, 'min_free_gb': 10, 'compat': {},
    }
    inputs.update(changes)
    return inputs


def test_node_report():
    report = pc.node_report('n1', _inputs())
    assert [c['name'] for c in report['checks']] == [
        'NPUs on PCI', 'NPU count', 'operating system', 'architecture', 'package manager', 'kernel headers', 'DKMS toolchain',
        'NPU kernel modules', 'free disk', 'leftovers', 'readable installs', 'no downgrade', 'compatibility']
    assert report['failed'] == [] and report['lines'][0] == 'Preflight of n1: 0 of 13 checks failed'
    assert report['lines'][-len(report['plan']) - 1:] == ['Plan for n1:'] + ['  ' + line for line in report['plan']]
    refused = pc.node_report('n1', _inputs(plan=planner.plan_node({'driver': '24.1.rc2'},
                                                                  {'installed': {'driver': {'version': '25.0.rc1.1'}}})))
    assert 'no downgrade' in refused['failed']
    assert 'FAIL no downgrade: driver 25.0.rc1.1 installed, 24.1.rc2 wanted -- fix: raise the wanted versions' in \
        '\n'.join(refused['lines'])
    assert refused['message'].startswith('n1: preflight failed: ')


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.sampled_from(['Installed: (none)', 'Candidate: 1.0', 'Candidate: (none)', 'Installed: 1.0',
                                       'dkms:', 'gcc:', 'make:', 'Version table:', '']), max_size=30))
def test_apt_parser_never_crashes_and_only_names_asked_packages(lines):
    header_check, tool_check = pc.build_checks('apt', KERNEL, HEADERS, TOOLCHAIN, '\n'.join(lines))
    assert isinstance(header_check['ok'], bool) and isinstance(tool_check['ok'], bool)
    for name in TOOLCHAIN:
        assert name in tool_check['detail']


def test_without_a_chip_on_pci_the_declared_one_still_checks_the_packages():
    """Both problems at once: the PCI check fails, and the package source is judged for the declared chip."""
    wanted = [{'component': 'driver', 'version': '25.0.rc1.1', 'chip': '910b'}]
    resolved = [{'component': 'driver', 'file_name': 'Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run',
                 'problem': 'not found in /srv/ascend', 'fix': 'download it'}]
    probe = dict(PROBE, npu_count=0, chip_family=None, free_kb=50 * 1048576,
                 paths_present=['/lib/modules/%s/build' % KERNEL])
    report = pc.node_report('n1', _inputs(probe=probe, declared_chip='910b',
                                          packages={'wanted': wanted, 'source': True, 'resolved': resolved}))
    assert report['failed'][:1] == ['NPUs on PCI'] and 'package driver' in report['failed']
    undeclared = pc.node_report('n1', _inputs(probe=probe, packages={'wanted': wanted, 'source': True, 'resolved': []}))
    packages = [check for check in undeclared['checks'] if check['name'] == 'packages'][0]
    assert 'declare the chip family in npu_ascend_chip' in packages['fix']
