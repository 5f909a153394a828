# -*- coding: utf-8 -*-
"""The fleet_report_write action: the run's variables in, the report files and the published result out."""

import json
import os
from unittest import mock

import pytest

from ansible_collections.npu.ascend.plugins.action.fleet_report_write import ActionModule
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as fr

STACK_VARS = {'hdk_driver_version': '25.0.rc1.1', 'hdk_firmware_version': '7.7.0.1.231', 'cann_version': '8.2.RC1',
              'container_runtime_version': '7.3.0'}


def _gathered(driver='25.0.rc1.1', health='OK'):
    facts = {'chip_family': '910b', 'product': 'Atlas 800I A2', 'arch': 'aarch64', 'npu_count': 1,
             'npu_smi_path': '/usr/local/sbin/npu-smi', 'reboot_pending': False, 'reboot_reasons': [],
             'installed': {'driver': {'version': driver}, 'firmware': {'version': '7.7.0.1.231'},
                           'toolkit': {'version': '8.2.RC1'}, 'kernels': {'version': '8.2.RC1'}, 'ops': None,
                           'nnal': None, 'docker_runtime': {'version': '7.3.0'}}}
    chips = [{'npu_id': 0, 'chip_id': 0, 'name': '910B4', 'health': health, 'bus_id': '0000:C1:00.0'}]
    return {'facts': facts, 'facts_error': None, 'unreachable': False,
            'npu_smi': {'driver_version': driver, 'chips': chips, 'processes': []}, 'npu_smi_error': None}


def _run(tmp_path, hostvars, play_hosts, **args):
    task = mock.MagicMock()
    task.async_val = 0
    task.check_mode = False
    task.action = 'npu.ascend.fleet_report_write'
    task.args = dict({'dir': str(tmp_path / 'reports'), 'hosts': sorted(hostvars)}, **args)
    connection = mock.MagicMock()
    connection._shell.tmpdir = str(tmp_path)
    action = ActionModule(task, connection, mock.MagicMock(), mock.MagicMock(), mock.MagicMock(), mock.MagicMock())
    return action.run(task_vars={'hostvars': hostvars, 'ansible_play_hosts': play_hosts})


def _hostvars():
    return {
        'node-a': dict(STACK_VARS, __fleet_report_gathered=_gathered()),
        'node-b': dict(STACK_VARS, __fleet_report_gathered=_gathered(health='Critical'),
                       npu_ascend_k8s_node_name='b.example'),
    }


def test_the_files_are_written_and_the_result_published(tmp_path):
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], set_stats=True, kubernetes=True,
                  k8s_nodes={'resources': [{'metadata': {'name': 'b.example', 'labels': {}}}]})
    assert not result.get('failed'), result
    reports = tmp_path / 'reports'
    assert sorted(os.listdir(str(reports))) == ['fleet-report.html', 'fleet-report.json', 'fleet-report.junit.xml',
                                                'fleet-report.md']
    published = result['fleet_report']
    assert published['files'][0] == str(reports / 'fleet-report.json')
    # node-a has no Node object in the cluster: only the Kubernetes checks fail for it.
    assert published['nodes']['node-a']['status'] == 'failed'
    assert {problem.split(':')[0] for problem in published['nodes']['node-a']['problems']} == {'validated', 'schedulable'}
    assert any(problem.startswith('chips healthy: ') and 'Critical' in problem
               for problem in published['nodes']['node-b']['problems'])
    assert result['ansible_stats'] == {'data': {'fleet_report': published}, 'per_host': False, 'aggregate': True}
    document = json.loads((reports / 'fleet-report.json').read_text())
    assert document['nodes']['node-b']['kubernetes']['node_name'] == 'b.example'
    assert document['nodes']['node-b']['kubernetes']['found'] and not document['nodes']['node-a']['kubernetes']['found']
    assert result['changed'] is False


def test_the_previous_report_is_kept_and_compared(tmp_path):
    _run(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=[])
    first = (tmp_path / 'reports' / 'fleet-report.json').read_text()
    hostvars = _hostvars()
    hostvars['node-a']['__fleet_report_gathered'] = _gathered(driver='25.0.rc1')
    result = _run(tmp_path, hostvars, ['node-a', 'node-b'], formats=[])
    assert (tmp_path / 'reports' / 'fleet-report.previous.json').read_text() == first
    assert result['fleet_report']['nodes']['node-a']['changes'], result['fleet_report']['nodes']['node-a']
    assert 'ansible_stats' not in result
    assert sorted(os.listdir(str(tmp_path / 'reports'))) == ['fleet-report.json', 'fleet-report.previous.json']


def test_a_cluster_that_did_not_answer_is_in_the_report(tmp_path):
    _run(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=[], kubernetes=True,
         k8s_nodes={'failed': True, 'msg': 'connection refused'})
    document = json.loads((tmp_path / 'reports' / 'fleet-report.json').read_text())
    assert document['nodes']['node-a']['kubernetes']['error'] == 'connection refused'


def test_a_host_that_failed_earlier_is_reported_as_such(tmp_path):
    result = _run(tmp_path, _hostvars(), ['node-a'], formats=[])
    assert result['fleet_report']['nodes']['node-a'] == {'status': 'passed', 'problems': [], 'changes': []}
    assert result['fleet_report']['nodes']['node-b']['status'] == 'failed'
    assert any(problem.startswith('run: ') for problem in result['fleet_report']['nodes']['node-b']['problems'])


@pytest.mark.parametrize('args, words', [
    ({'formats': ['pdf']}, ['pdf', 'Fix: choose formats among junit, markdown, html']),
    ({'dir': ''}, ['fleet_report_dir is empty', 'Fix:']),
])
def test_bad_arguments_are_messages(tmp_path, args, words):
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], **args)
    assert result['failed'] and all(word in result['msg'] for word in words)
    assert not (tmp_path / 'reports').exists()


def test_a_directory_that_cannot_be_written_is_a_message(tmp_path):
    (tmp_path / 'reports').write_text('a file, not a directory')
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'])
    assert result['failed'] and 'cannot write the fleet report' in result['msg'] and 'Fix:' in result['msg']


def test_a_template_that_does_not_render_names_the_fix(tmp_path):
    templates = tmp_path / 'templates'
    templates.mkdir()
    (templates / 'fleet-report.md.j2').write_text('{{ report.nodes | no_such_filter }}')
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], template_dir=str(templates))
    assert result['failed'] and 'fleet_report_template_dir' in result['msg']
    # Nothing half written: the JSON of this run is not there either.
    assert not (tmp_path / 'reports' / 'fleet-report.json').exists()


def test_run_inputs_take_names_findings_and_published_data_from_each_host():
    variables = {
        'a': {'npu_ascend_k8s_node_name': 'node-a', 'preflight_report': {'failed': []}, 'fleet_report_extra': {'rack': 1},
              'doctor_findings': [{'node': 'node-a', 'id': 'x'}, {'node': 'b', 'id': 'y'}]},
        # The per-role names of before issue 31 are no longer read: one variable names the Node.
        'b': {'npu_ascend_k8s_node_name': 'b', 'k8s_node_name': 'ignored', 'fleet_report_k8s_node_name': 'ignored',
              'doctor_findings': [{'node': 'b', 'id': 'y'}]},
        'c': {},
    }
    nodes = fr.run_inputs(['a', 'b', 'c'], variables.__getitem__, ['a', 'c'], lambda v: {'driver': '1'},
                          kubernetes=True, k8s_nodes=[{'metadata': {'name': 'node-a'}}], k8s_error=None)
    by_host = dict((node['host'], node) for node in nodes)
    assert by_host['a']['k8s'] == {'configured': True, 'node_name': 'node-a', 'node': {'metadata': {'name': 'node-a'}},
                                   'error': None}
    assert by_host['a']['published'] == {'extra': {'rack': 1}, 'preflight_report': {'failed': []},
                                         'doctor_findings': [{'node': 'node-a', 'id': 'x'}]}
    # The same finding published by two hosts counts once.
    assert by_host['b']['published']['doctor_findings'] == [{'node': 'b', 'id': 'y'}]
    assert by_host['b']['k8s']['node_name'] == 'b' and by_host['b']['k8s']['node'] is None
    assert by_host['c']['published'] == {'extra': {}, 'doctor_findings': []}
    assert [by_host[h]['outcome'] for h in 'abc'] == ['ok', 'failed', 'ok']
    assert by_host['c']['gathered'] is None and by_host['c']['wanted'] == {'driver': '1'}


def test_without_doctor_findings_the_report_has_no_doctor_check():
    nodes = fr.run_inputs(['a'], {'a': {}}.__getitem__, ['a'], lambda v: {})
    assert 'doctor_findings' not in nodes[0]['published'] and nodes[0]['k8s']['configured'] is False


def test_the_files_follow_the_formats_given_once_each(tmp_path):
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=['html', 'junit', 'html'])
    assert [os.path.basename(path) for path in result['fleet_report']['files']] == [
        'fleet-report.json', 'fleet-report.html', 'fleet-report.junit.xml']


def test_a_damaged_previous_report_is_a_note_not_a_failure(tmp_path):
    reports = tmp_path / 'reports'
    reports.mkdir()
    (reports / 'fleet-report.json').write_bytes(b'{"format": \xff\xfe not json')
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=[])
    assert not result.get('failed'), result
    document = json.loads((reports / 'fleet-report.json').read_text())
    assert document['notes'] and document['previous_generated_at'] is None
    # Kept as it was, byte for byte.
    assert (reports / 'fleet-report.previous.json').read_bytes() == b'{"format": \xff\xfe not json'


def test_a_host_of_the_play_is_reported_from_its_own_read_or_its_probe(tmp_path):
    probe = dict(_gathered()['facts'], npu_smi=_gathered()['npu_smi'], npu_smi_error=None)
    stale = _gathered(driver='24.1.rc2')
    hostvars = {
        # The report's read was skipped: the probe of the run is current (a gathered fact of an
        # earlier report play in the same run is not).
        'node-a': dict(STACK_VARS, ansible_facts={'ascend': probe}, __fleet_report_facts={'skipped': True},
                       __fleet_report_gathered=stale),
        # The report read the node itself and could not reach it.
        'node-b': dict(STACK_VARS, ansible_facts={'ascend': probe},
                       __fleet_report_facts={'unreachable': True, 'msg': 'ssh: connection refused'}),
        # Failed earlier in the run: read on its behalf, kept as its own fact.
        'node-c': dict(STACK_VARS, __fleet_report_gathered=_gathered(health='Critical')),
    }
    result = _run(tmp_path, hostvars, ['node-a', 'node-b'], formats=[])
    assert not result.get('failed'), result
    nodes = result['fleet_report']['nodes']
    assert nodes['node-a']['status'] == 'passed', nodes['node-a']
    assert nodes['node-b']['status'] != 'passed'
    assert any('ssh: connection refused' in problem or 'unreachable' in problem for problem in nodes['node-b']['problems'])
    assert any('Critical' in problem for problem in nodes['node-c']['problems'])
    document = json.loads((tmp_path / 'reports' / 'fleet-report.json').read_text())
    assert '25.0.rc1.1' in json.dumps(document['nodes']['node-a']) and '24.1.rc2' not in json.dumps(document['nodes']['node-a'])


def test_slices_write_their_parts_and_one_merge_makes_the_fleet_report(tmp_path):
    # A first fleet report, for the changes the merge computes.
    before = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=[])
    assert not before.get('failed'), before
    slices = {'s1': {'node-a': dict(STACK_VARS, __fleet_report_gathered=_gathered(driver='25.0.rc2'))},
              's2': {'node-b': _hostvars()['node-b']},
              's3': {'node-c': dict(STACK_VARS, __fleet_report_gathered=_gathered())},
              's4': {'node-d': dict(STACK_VARS, __fleet_report_gathered=_gathered())}}
    for name, hostvars in slices.items():
        written = _run(tmp_path, hostvars, sorted(hostvars), part=name, formats=[])
        assert not written.get('failed'), written
        assert written['fleet_report']['files'] == [str(tmp_path / 'reports' / 'parts' / (name + '.json'))]
    # A part is not the fleet report: the fleet's JSON is still the first one.
    reports = tmp_path / 'reports'
    assert sorted(json.loads((reports / 'fleet-report.json').read_text())['nodes']) == ['node-a', 'node-b']
    merged = _run(tmp_path, {}, [], hosts=[], merge_parts=True, run={'play': 'merge'})
    assert not merged.get('failed'), merged
    document = json.loads((reports / 'fleet-report.json').read_text())
    assert sorted(document['nodes']) == ['node-a', 'node-b', 'node-c', 'node-d']
    assert document['run']['parts'] == ['s1', 's2', 's3', 's4']
    # The changes are against the fleet report before the slices: node-a's driver moved.
    assert any('driver' in change['text'] for change in document['nodes']['node-a']['changes'])
    assert document['nodes']['node-b']['changes'] == []
    assert [change['text'] for change in document['nodes']['node-c']['changes']] == ['new in the report']
    # The parts taken are kept aside, out of the next slices' way.
    assert sorted(os.listdir(str(reports / 'parts'))) == ['merged']
    aside = reports / 'parts' / 'merged' / os.listdir(str(reports / 'parts' / 'merged'))[0]
    assert sorted(os.listdir(str(aside))) == ['s1.json', 's2.json', 's3.json', 's4.json']


def test_a_host_in_two_parts_comes_from_the_later_part_with_a_note(tmp_path):
    first = fr.report_from_inputs([{'host': 'node-a', 'gathered': _gathered(driver='24.1.rc3')}],
                                  generated_at='2026-12-05T09:00:00Z')
    second = fr.report_from_inputs([{'host': 'node-a', 'gathered': _gathered()}], generated_at='2026-12-05T10:00:00Z')
    report = fr.merge_parts({'z-old': fr.part_document(first, 'z-old'), 'a-new': fr.part_document(second, 'a-new')})
    assert report['nodes']['node-a']['versions']['driver'] == '25.0.rc1.1'
    assert report['notes'] == ['node-a is in parts z-old and a-new; the later one, a-new, is reported']


@pytest.mark.parametrize('parts, message', [
    ({}, 'no parts to merge'),
    ({'p': '{not json'}, 'part p is not JSON'),
    ({'p': {'format': 'npu.ascend/fleet-report', 'nodes': {}}}, 'p is not a part of an npu.ascend fleet report'),
    ({'p': {'format': 'npu.ascend/fleet-report', 'kind': 'part', 'format_version': 9, 'nodes': {}}},
     'part p has format_version 9'),
    ({'p': {'format': 'npu.ascend/fleet-report', 'kind': 'part', 'format_version': 1, 'nodes': {'a': {'host': 'b'}}}},
     'part p: node a is not a report entry'),
])
def test_what_is_not_a_part_is_refused_by_name(parts, message):
    with pytest.raises(ValueError, match=message):
        fr.merge_parts(parts)


@pytest.mark.parametrize('name', ['../escape', 'a/b', '.hidden', 'x' * 129, 'two..dots', 'sp ace'])
def test_a_part_name_cannot_leave_the_parts_directory(tmp_path, name):
    result = _run(tmp_path, _hostvars(), ['node-a', 'node-b'], part=name)
    assert result['failed'] and 'fleet_report_part is' in result['msg'] and 'Fix:' in result['msg']
    assert not (tmp_path / 'reports' / 'parts').exists() or os.listdir(str(tmp_path / 'reports' / 'parts')) == []


def test_a_merge_without_parts_and_part_with_merge_are_refused(tmp_path):
    result = _run(tmp_path, {}, [], hosts=[], merge_parts=True)
    assert result['failed'] and 'no parts in %s' % (tmp_path / 'reports' / 'parts') in result['msg']
    both = _run(tmp_path, {}, [], hosts=[], merge_parts=True, part='s1')
    assert both['failed'] and both['msg'].startswith('fleet_report_part and fleet_report_merge_parts are both set')


def test_a_merge_names_every_host_of_the_fleet_once_those_in_no_part_as_errors(tmp_path):
    # Four slices of a fleet of six: node-e was left out of every slice (the job's limit), node-f's
    # slice stopped before its report; node-d was unreachable in its slice and says so.
    unreachable = {'facts': None, 'facts_error': 'ssh: connect to host node-d port 22: No route to host',
                   'unreachable': True, 'npu_smi': None, 'npu_smi_error': None}
    slices = {'s1': {'node-a': dict(STACK_VARS, __fleet_report_gathered=_gathered())},
              's2': {'node-b': dict(STACK_VARS, __fleet_report_gathered=_gathered())},
              's3': {'node-c': dict(STACK_VARS, __fleet_report_gathered=_gathered())},
              's4': {'node-d': dict(STACK_VARS, __fleet_report_gathered=unreachable)}}
    for name, hostvars in slices.items():
        assert not _run(tmp_path, hostvars, sorted(hostvars), part=name, formats=[]).get('failed')
    fleet = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f']
    merged = _run(tmp_path, dict((host, {}) for host in fleet), [], hosts=fleet, merge_parts=True, formats=['markdown'])
    assert not merged.get('failed'), merged
    reports = tmp_path / 'reports'
    document = json.loads((reports / 'fleet-report.json').read_text())
    assert sorted(document['nodes']) == fleet
    assert document['summary']['nodes'] == 6
    assert [document['nodes'][host]['status'] for host in fleet] == ['passed', 'passed', 'passed', 'error', 'error',
                                                                     'error']
    assert 'unreachable' in ' '.join(document['nodes']['node-d']['errors'])
    for host in ('node-e', 'node-f'):
        message = document['nodes'][host]['checks'][0]['message']
        assert message.startswith('in none of the 4 merged part(s) (s1, s2, s3, s4)'), message
        assert 'left it out of every slice' in message and '--limit %s' % host in message and 'Fix:' in message
    assert any(note.startswith('2 node(s) of the fleet are in no part: ') for note in document['notes'])
    markdown = (reports / 'fleet-report.md').read_text()
    assert 'node-e' in markdown and 'node-f' in markdown and 'in none of the 4 merged part(s)' in markdown


def test_a_merge_of_parts_that_hold_every_host_adds_nothing(tmp_path):
    for name, host in (('s1', 'node-a'), ('s2', 'node-b')):
        hostvars = {host: dict(STACK_VARS, __fleet_report_gathered=_gathered())}
        assert not _run(tmp_path, hostvars, [host], part=name, formats=[]).get('failed')
    merged = _run(tmp_path, {'node-a': {}, 'node-b': {}}, [], hosts=['node-a', 'node-b'], merge_parts=True, formats=[])
    assert not merged.get('failed'), merged
    document = json.loads((tmp_path / 'reports' / 'fleet-report.json').read_text())
    assert [document['nodes'][host]['status'] for host in ('node-a', 'node-b')] == ['passed', 'passed']
    assert not any('in no part' in note for note in document['notes'])
