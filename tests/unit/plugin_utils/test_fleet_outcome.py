# -*- coding: utf-8 -*-
"""The run's outcome per node, the failure budget and the retry command (plugin_utils/fleet_outcome.py)."""

import shlex

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_outcome as outcome
from ansible_collections.npu.ascend.plugins.plugin_utils.preflight_summary import fleet_summary

UNREACHABLE = {'unreachable': True, 'changed': False,
               'msg': 'Failed to connect to the host via ssh: ssh: connect to host 192.0.2.13 port 22: No route to host'}


def test_a_stop_record_keeps_the_message_and_whether_the_node_was_reachable():
    assert outcome.stop_record('connect', 'Read the facts', UNREACHABLE) == {
        'stage': 'connect', 'play': '', 'task': 'Read the facts', 'message': UNREACHABLE['msg'], 'unreachable': True,
        'state': outcome.STAGE_STATE['connect'], 'fix': outcome.FIX_UNREACHABLE}
    failed = outcome.stop_record('hdk', 'Install the driver', {'failed': True, 'msg': 'n1: driver: exit 2. Fix: ...'})
    assert failed['unreachable'] is False and failed['message'] == 'n1: driver: exit 2. Fix: ...'


def test_a_stop_record_finds_the_message_of_a_command_or_a_loop_and_never_returns_an_empty_one():
    assert outcome.stop_record('cann', 't', {'failed': True, 'stderr': 'no space left'})['message'] == 'no space left'
    loop = {'failed': True, 'results': [{'failed': False, 'msg': 'fine'}, {'failed': True, 'msg': 'item 2 broke'}]}
    assert outcome.stop_record('cann', 't', loop)['message'] == 'item 2 broke'
    assert outcome.stop_record('cann', 't', {})['message'] == 'no message (see the task output above)'
    assert outcome.stop_record('', None, 'a plain message') == {
        'stage': 'unknown', 'play': '', 'task': '', 'message': 'a plain message', 'unreachable': False,
        'state': outcome.UNKNOWN_STATE, 'fix': outcome.FIX_UNKNOWN}


@pytest.mark.parametrize('message, fix', [
    ('n1: driver: exit 2. Fix: free space in /usr/local', ''),
    ('Timed out waiting for last boot time check (timeout=90)', outcome.FIX_REBOOT),
    ('Timed out waiting for post-reboot test command (timeout=600)', outcome.FIX_REBOOT),
    ('something nobody explained', outcome.FIX_UNKNOWN),
])
def test_a_stop_record_names_a_fix_only_where_the_message_has_none(message, fix):
    record = outcome.stop_record('hdk', 'Reboot', {'failed': True, 'msg': message})
    assert record['fix'] == fix
    assert record['state'] == (outcome.REBOOT_STATE if fix == outcome.FIX_REBOOT else outcome.STAGE_STATE['hdk'])
    rows = outcome.host_rows({'n1': outcome.stop_record('hdk', 'Reboot', message)}, ['n1'], [])
    assert rows[0]['fix'] == (fix or outcome.FIX_FAILED) and rows[0]['state'] == record['state']


def test_rows_put_unreachable_then_failed_then_left_out_nodes_first_each_with_state_and_fix():
    records = {
        'n2': outcome.stop_record('preflight', 'Stop the node when one of its checks failed',
                                  {'msg': 'n2: NPU count (found 8, expected 16; fix: reseat the cards)'}),
        'n3': outcome.stop_record('connect', 'Read the facts', UNREACHABLE),
    }
    rows = outcome.host_rows(records, ['n1', 'n2', 'n3', 'n4'], ['n1', 'n4'], ['n1', 'n2', 'n3', 'n4', 'n5'])
    assert [(row['host'], row['status']) for row in rows] == [
        ('n3', 'unreachable'), ('n2', 'failed'), ('n5', 'not_run'), ('n1', 'ok'), ('n4', 'ok')]
    assert rows[0]['state'] == outcome.STAGE_STATE['connect'] and rows[0]['fix'] == outcome.FIX_UNREACHABLE
    assert rows[1]['state'].startswith('untouched') and rows[1]['fix'] == outcome.FIX_FAILED
    assert rows[1]['task'] == 'Stop the node when one of its checks failed'


def test_a_node_taken_out_without_a_record_is_counted_unreachable_at_an_unknown_stage():
    rows = outcome.host_rows({'n2': None}, ['n1', 'n2'], ['n1'])
    assert rows[0]['host'] == 'n2' and rows[0]['status'] == 'unreachable' and rows[0]['stage'] == 'unknown'
    assert rows[0]['state'] == outcome.UNKNOWN_STATE


def test_the_record_of_a_node_still_in_the_play_does_not_make_it_stopped():
    # A record from an earlier stage of a node that then went on cannot exist (a stop fails the node);
    # if a play sets one anyway, the node's presence in the play is what counts.
    rows = outcome.host_rows({'n1': outcome.stop_record('hdk', 't', 'm')}, ['n1'], ['n1'])
    assert rows[0]['status'] == 'ok'


@pytest.mark.parametrize('failed, budget, exceeded', [
    (0, 0, False), (1, 0, True), (1, 25, False), (2, 25, True), (2, 50, False), (3, 50, True), (4, 100, False),
])
def test_the_budget_is_exceeded_only_above_the_percentage(failed, budget, exceeded):
    hosts = ['n1', 'n2', 'n3', 'n4']
    verdict = outcome.failure_budget(hosts, hosts[failed:], budget)
    assert verdict['exceeded'] is exceeded
    assert verdict['failed'] == hosts[:failed] and verdict['total'] == 4
    assert verdict['percentage'] == 25.0 * failed


def test_the_budget_messages_name_the_nodes_the_share_and_the_variable():
    hosts = ['n1', 'n2', 'n3', 'n4']
    over = outcome.failure_budget(hosts, ['n4'], 50)
    assert over['message'].startswith('Stopped before any change: 3 of 4 nodes failed preflight (75%)')
    assert 'npu_ascend_max_fail_percentage=50%' in over['message'] and 'n1, n2, n3' in over['message']
    assert 'No node was changed' in over['message'] and 'Fix:' in over['message']
    within = outcome.failure_budget(hosts, ['n1', 'n2', 'n4'], 50)
    assert within['message'] == ('1 of 4 nodes failed preflight (25%, within the budget '
                                 'npu_ascend_max_fail_percentage=50%): n3; the others go on')
    assert outcome.failure_budget(hosts, hosts, 10)['message'] == 'All 4 nodes passed preflight'
    assert outcome.failure_budget([], [], 10)['exceeded'] is False


@pytest.mark.parametrize('value', ['ten', None, -1, 101, '150', [10]])
def test_a_budget_that_is_not_a_percentage_is_refused_naming_the_variable(value):
    with pytest.raises(outcome.OutcomeError, match='npu_ascend_max_fail_percentage .*Fix: set it to a percentage'):
        outcome.failure_budget(['n1'], ['n1'], value)


@given(total=st.integers(min_value=1, max_value=300), failed=st.integers(min_value=0, max_value=300),
       budget=st.integers(min_value=0, max_value=100))
def test_the_budget_verdict_agrees_with_the_arithmetic(total, failed, budget):
    failed = min(failed, total)
    hosts = ['n%d' % index for index in range(total)]
    verdict = outcome.failure_budget(hosts, hosts[failed:], budget)
    assert verdict['exceeded'] == (failed * 100 > budget * total)


def test_the_retry_command_limits_to_the_stopped_nodes_with_the_run_s_inventories_tags_and_check_mode():
    command = outcome.retry_command(['n2', 'n3'], 'npu.ascend.site', ['/srv/inv/hosts.yml', '/srv/my inv'],
                                    ['all'], [], False)
    assert command == "ansible-playbook -i /srv/inv/hosts.yml -i '/srv/my inv' npu.ascend.site --limit n2,n3"
    tagged = outcome.retry_command(['n2'], 'npu.ascend.site', [], ['hdk', 'cann'], ['report'], True)
    assert shlex.split(tagged) == ['ansible-playbook', 'npu.ascend.site', '--limit', 'n2', '--tags', 'hdk,cann',
                                   '--skip-tags', 'report', '--check']
    assert outcome.retry_command([], 'npu.ascend.site') is None


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=5))
def test_the_retry_command_splits_back_into_the_same_hosts_whatever_their_names(hosts):
    argv = shlex.split(outcome.retry_command(hosts, 'npu.ascend.site', ['inv']))
    assert argv[argv.index('--limit') + 1] == ','.join(hosts)


def test_the_summary_names_each_stopped_node_where_it_stopped_what_it_is_left_with_and_the_retry():
    records = {'n3': outcome.stop_record('connect', 'Read the facts', UNREACHABLE),
               'n2': outcome.stop_record('hdk', 'Install the driver', {'msg': 'n2: driver: exit 2.\nFix: reinstall'})}
    rows = outcome.host_rows(records, ['n1', 'n2', 'n3'], ['n1'], ['n1', 'n2', 'n3', 'n9'])
    retry = outcome.retry_command(['n3', 'n2'], 'npu.ascend.site', ['inv'])
    lines = outcome.summary_lines(rows, retry)
    assert lines[0] == 'Run of 3 nodes: 1 done, 1 failed, 1 unreachable; 1 not in this run (--limit): n9'
    assert lines[1] == 'Unreachable:'
    assert lines[2] == '  n3 (at connect, task "Read the facts"): %s' % UNREACHABLE['msg']
    assert lines[3] == '    left: untouched: the node was not reached; fix: %s' % outcome.FIX_UNREACHABLE
    assert lines[4:6] == ['Failed:', '  n2 (at hdk, task "Install the driver"): n2: driver: exit 2. Fix: reinstall']
    assert lines[-1] == 'Retry only these nodes: ansible-playbook -i inv npu.ascend.site --limit n3,n2'


def test_the_summary_of_a_clean_run_is_one_line_and_long_messages_are_cut():
    rows = outcome.host_rows({}, ['n1', 'n2'], ['n1', 'n2'])
    assert outcome.summary_lines(rows) == ['Run of 2 nodes: 2 done, 0 failed, 0 unreachable']
    rows = outcome.host_rows({'n1': outcome.stop_record('cann', 't', 'x' * 1000)}, ['n1'], [])
    line = outcome.summary_lines(rows)[2]
    assert len(line) < outcome.MESSAGE_SHOWN + 40 and line.endswith('...')


def test_a_fleet_of_a_thousand_is_summarised_in_one_pass():
    hosts = ['n%04d' % index for index in range(1000)]
    records = dict((host, outcome.stop_record('hdk', 't', 'm')) for host in hosts[:30])
    rows = outcome.host_rows(records, hosts, hosts[30:], hosts)
    assert sum(1 for row in rows if row['status'] == 'failed') == 30
    assert outcome.summary_lines(rows)[0] == 'Run of 1000 nodes: 970 done, 30 failed, 0 unreachable'


def test_the_preflight_summary_says_why_each_unchecked_node_stopped():
    report = {'checks': [{'name': 'NPUs on PCI', 'ok': True}], 'plan': []}
    stops = {'n3': outcome.stop_record('connect', 'Read the facts', UNREACHABLE)}
    lines = fleet_summary({'n1': report, 'n2': None, 'n3': None}, hosts=['n1', 'n2', 'n3'], stops=stops)
    assert 'Not checked: n2, n3' in lines
    assert '  1 node (n3): unreachable at connect: %s' % UNREACHABLE['msg'] in lines
    assert any(line.startswith('  1 node (n2): no answer before the checks') for line in lines)


def test_the_report_reads_the_stopped_hosts_except_the_unreachable_ones():
    from ansible_collections.npu.ascend.plugins.filter.fleet_outcome import fleet_hosts_to_read
    hostvars = {'n1': {}, 'n2': {'outcome_stopped': {'stage': 'hdk', 'unreachable': False}},
                'n3': {'outcome_stopped': {'stage': 'connect', 'unreachable': True}}, 'n4': {}}
    assert fleet_hosts_to_read(hostvars, ['n1', 'n2', 'n3', 'n4', 'gone'], ['n1']) == ['n2', 'n4', 'gone']


def test_a_later_gate_judges_only_the_nodes_that_reached_it():
    """npu.ascend.provision: 3 of 10 nodes stopped in the host stack; one more fails labelling, 1 of 7."""
    hosts = ['n%d' % number for number in range(10)]
    stops = dict((host, {'stage': 'hdk', 'play': 'Install the NPU firmware and driver'}) for host in hosts[:3])
    stops['n3'] = {'stage': 'labelling', 'play': 'Label the NPU nodes'}
    verdict = outcome.failure_budget(hosts, hosts[4:], 20, stops=stops, play='Label the NPU nodes', stage='labelling')
    assert (verdict['total'], verdict['failed'], verdict['earlier'], verdict['exceeded']) == (7, ['n3'], hosts[:3], False)
    assert verdict['message'].endswith('(3 nodes that stopped earlier in the run not counted)')
    # Without the records every stop counts: 4 of 10 exceed the same budget.
    assert outcome.failure_budget(hosts, hosts[4:], 20, stage='labelling')['exceeded'] is True
