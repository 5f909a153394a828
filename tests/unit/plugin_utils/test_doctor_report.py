# -*- coding: utf-8 -*-
"""What the doctor role decides for each host (plugin_utils/doctor_report.py) and the filter that exposes it."""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.doctor_state import FilterModule, doctor_state
from ansible_collections.npu.ascend.plugins.plugin_utils import doctor_report

from test_doctor import A2, DUO, ERROR_8005, node_evidence

OFF = {'available': False, 'note': 'the cluster was not checked: doctor_kubernetes is false'}


def options(**changes):
    value = {'host': 'host-a2', 'node_name': A2, 'first_host': True, 'undiagnosed': []}
    value.update(changes)
    return value


def test_a_healthy_play_prints_nothing_wrong_and_fails_no_host():
    state = doctor_report.role_state([node_evidence(), node_evidence(DUO)], OFF, options())
    assert state['findings'] == [] and state['failure'] is None
    assert state['lines'] == ['doctor: 0 finding(s) on 2 node(s): nothing wrong found',
                              'note: the cluster was not checked: doctor_kubernetes is false']


def test_each_host_answers_for_its_own_node_and_the_summary_names_every_finding():
    sick = node_evidence(npu_smi={'ok': False, 'error': ERROR_8005})
    evidences = [sick, node_evidence(DUO)]
    state = doctor_report.role_state(evidences, OFF, options(undiagnosed=['host-x', 'host-y']))
    assert [item['node'] for item in state['node_findings']] == [A2] and state['other_findings'] == []
    finding = state['node_findings'][0]
    assert state['failure'] == 'host-a2: doctor: 1 problem(s): [%s] %s (evidence: %s). Fix: %s.' % (
        finding['component'], finding['problem'], finding['evidence'], finding['fix'])
    assert state['lines'][0] == 'doctor: 1 finding(s) on 2 node(s)'
    assert state['lines'][1:4] == ['%s [%s] %s' % (A2, finding['component'], finding['problem']),
                                   '    evidence: ' + finding['evidence'], '    fix: ' + finding['fix']]
    assert state['lines'][-1] == ("not diagnosed (unreachable, or failed before their evidence was read; the run's "
                                  "summary at the end names each): host-x, host-y")
    duo = doctor_report.role_state(evidences, OFF, options(host='host-duo', node_name=DUO, first_host=False))
    assert duo['node_findings'] == [] and duo['failure'] is None and duo['findings'] == state['findings']


def test_findings_about_no_node_of_the_play_go_with_the_first_host():
    stray = {'node': '', 'component': 'scheduling', 'problem': 'p', 'evidence': 'e', 'fix': 'f'}
    other = {'node': 'not-in-play', 'component': 'health', 'problem': 'q', 'evidence': 'g', 'fix': 'h'}
    assert doctor_report.failure_message('h', [stray, other]) == \
        'h: doctor: 2 problem(s): [scheduling] p (evidence: e). Fix: f; [health] q (evidence: g). Fix: h.'
    assert doctor_report.summary_lines([stray], 1, {'available': True}, [])[1] == '(no node) [scheduling] p'


def test_the_filter_refuses_what_is_not_evidence():
    assert FilterModule().filters()['doctor_state'] is doctor_state
    with pytest.raises(AnsibleFilterError, match='expects the list of node evidence'):
        doctor_state({})
    with pytest.raises(AnsibleFilterError, match='cluster must be a dict'):
        doctor_state([], [])


_finding = st.fixed_dictionaries({'node': st.sampled_from(['', 'a', 'b', 'c']), 'component': st.sampled_from(
    ['driver', 'health']), 'problem': st.text(max_size=10), 'evidence': st.text(max_size=10),
    'fix': st.text(max_size=10)})


@settings(max_examples=200, deadline=None)
@given(st.lists(_finding, max_size=6), st.sampled_from(['a', 'b']), st.booleans())
def test_every_finding_is_answered_for_by_exactly_its_host(findings, node, first):
    evidences = [{'node': 'a'}, {'node': 'b'}]
    original = doctor_report.diagnose
    doctor_report.diagnose = lambda *args: list(findings)
    try:
        state = doctor_report.role_state(evidences, OFF, options(node_name=node, first_host=first))
    finally:
        doctor_report.diagnose = original
    mine = [item for item in findings if item['node'] == node]
    stray = [item for item in findings if item['node'] not in ('a', 'b')] if first else []
    assert state['node_findings'] == mine and state['other_findings'] == stray
    assert (state['failure'] is None) == (not mine and not stray)
    assert len(state['lines']) == 1 + 3 * len(findings) + 1
