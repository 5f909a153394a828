# -*- coding: utf-8 -*-
import re

from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils.preflight_summary import fleet_summary


def _report(failed=(), plan=('keep driver 25.0.rc1.1 (no change)', 'no reboot', 'no service restart')):
    checks = [{'name': 'NPUs on PCI', 'ok': True, 'detail': '8 NPUs', 'fix': 'seat them'}]
    checks += [{'name': name, 'ok': False, 'detail': detail, 'fix': fix} for name, detail, fix in failed]
    return {'checks': checks, 'plan': list(plan), 'failed': [name for name, _d, _f in failed]}


def test_ready_fleet_with_nothing_to_change():
    lines = fleet_summary({'b': _report(), 'a': _report()}, hosts=['b', 'a'])
    assert lines == ['Preflight of 2 nodes: 2 ready, 0 not ready', 'Changes planned: none']


def test_failures_come_first_grouped_by_check_and_fix_then_changes_per_step():
    headers = ('kernel headers', 'linux-headers-6.8 missing', 'enable the repository')
    reports = {
        'n1': _report(failed=[headers], plan=['install driver 25.0.rc1.1', 'reboot when the installer asks for it']),
        'n2': _report(plan=['install driver 25.0.rc1.1', 'no service restart']),
        'n3': _report(failed=[headers, ('free disk', '3 GB free', 'free 10 GB')]),
        'n4': None,
    }
    lines = fleet_summary(reports, hosts=['n1', 'n2', 'n3', 'n4'])
    assert lines[0] == ('Preflight of 4 nodes: 1 ready, 2 not ready, 1 not checked '
                        '(unreachable or failed before the checks)')
    assert lines[1:4] == ['Not ready:', '  n1: kernel headers', '  n3: kernel headers, free disk']
    assert '  kernel headers on 2 nodes (n1, n3) -- fix: enable the repository' in lines
    assert '  free disk on 1 node (n3) -- fix: free 10 GB' in lines
    assert 'Not checked: n4' in lines
    changes = lines[lines.index('Changes planned:') + 1:]
    assert changes == ['  install driver 25.0.rc1.1: 2 nodes (n1, n2)',
                       '  reboot when the installer asks for it: 1 node (n1)',
                       '  no change: 1 node (n3)']


def test_different_fixes_of_one_check_stay_apart():
    reports = {'n1': _report(failed=[('packages', 'x', 'fix one')]), 'n2': _report(failed=[('packages', 'y', 'fix two')])}
    lines = fleet_summary(reports)
    assert '  packages on 1 node (n1) -- fix: fix one' in lines
    assert '  packages on 1 node (n2) -- fix: fix two' in lines


def test_missing_variables_are_counted_and_listed_with_an_example():
    missing = [{'role': 'npu.ascend.container_runtime', 'variable': 'container_runtime_version', 'example': '7.3.0',
                'hosts': ['n1', 'n2']}]
    lines = fleet_summary({'n1': _report(), 'n2': _report()}, missing_variables=missing)
    assert lines[0] == 'Preflight of 2 nodes: 2 ready, 0 not ready; 1 required variable(s) missing'
    assert ('Missing variable container_runtime_version (role npu.ascend.container_runtime) on n1, n2; '
            'for example container_runtime_version: 7.3.0') in lines


def test_long_host_lists_are_cut_with_a_count():
    hosts = ['node-%03d' % number for number in range(250)]
    reports = dict((host, _report(plan=['upgrade driver 24.1.rc2 -> 25.0.rc1.1'])) for host in hosts)
    lines = fleet_summary(reports, hosts=hosts, limit=3)
    assert lines[-1] == '  upgrade driver 24.1.rc2 -> 25.0.rc1.1: 250 nodes (node-000, node-001, node-002 and 247 more)'
    assert fleet_summary(reports, hosts=hosts, limit=0)[-1].count('node-') == 250


_HOST = st.text(alphabet='abcdefgh0123456789-', min_size=1, max_size=6)
_REPORT = st.one_of(st.none(), st.builds(
    _report,
    failed=st.lists(st.tuples(st.sampled_from(['free disk', 'kernel headers', 'leftovers']), st.text(max_size=5),
                              st.text(max_size=5)), max_size=3),
    plan=st.lists(st.sampled_from(['install driver 1', 'upgrade cann 1 -> 2', 'keep driver 1 (no change)',
                                   'no reboot', 'reboot when the installer asks for it']), max_size=4)))


@settings(deadline=None)
@given(st.dictionaries(_HOST, _REPORT, max_size=12))
def test_every_host_is_counted_once_and_every_failing_host_is_named(reports):
    lines = fleet_summary(reports, limit=0)
    counts = re.match(r'Preflight of \d+ nodes?: (\d+) ready, (\d+) not ready', lines[0]).groups()
    ready, not_ready = (int(number) for number in counts)
    unchecked = [host for host, report in reports.items() if report is None]
    assert ready + not_ready + len(unchecked) == len(reports)
    failing = [host for host, report in reports.items() if report and report['failed']]
    assert not_ready == len(failing)
    for host in failing:
        assert '  %s: %s' % (host, ', '.join(reports[host]['failed'])) in lines
    # Nothing that changes nothing is listed as a change.
    assert not any(line.startswith(('  keep ', '  no reboot')) for line in lines)
