# -*- coding: utf-8 -*-
"""A stage the run left out (--skip-tags kubernetes, --tags host_stack) is not a failure: the report says which
stages were left out and skips their checks, so eight healthy nodes provisioned without Kubernetes pass."""

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as fr

FACTS = {'chip_family': '910b', 'product': 'Atlas 800I A2', 'arch': 'x86_64', 'npu_count': 1,
         'npu_smi_path': '/usr/local/sbin/npu-smi', 'reboot_pending': False,
         'installed': {'driver': {'version': '25.0.rc1.1'}}}
CHIPS = {'chips': [{'npu_id': 0, 'chip_id': 0, 'health': 'OK'}]}


def _nodes(driver='25.0.rc1.1'):
    facts = dict(FACTS, installed={'driver': {'version': driver}})
    # A cluster is configured (k8s_kubeconfig) but has no Node of these hosts: the kubernetes stage never ran.
    return [{'host': 'node-%d' % number, 'gathered': {'facts': facts, 'npu_smi': CHIPS},
             'k8s': {'configured': True, 'node_name': 'node-%d' % number, 'node': None, 'error': None},
             'wanted': {'driver': '25.0.rc1.1'}, 'outcome': 'ok'} for number in range(1, 9)]


@pytest.mark.parametrize('run_tags, skip_tags, left_out', [
    (['all'], [], []),
    ([], [], []),
    (['all'], ['kubernetes'], ['kubernetes']),
    (['all'], ['host_stack', 'kubernetes'], ['host_stack', 'kubernetes']),
    (['host_stack', 'report'], [], ['kubernetes']),
    (['hdk', 'report'], [], ['kubernetes']),
    (['validate', 'report'], [], ['host_stack']),
    # The report alone judges the fleet as it is: it picked no stage to leave the others out.
    (['report'], [], []),
    (['all'], ['hdk'], []),
])
def test_the_stages_a_run_left_out(run_tags, skip_tags, left_out):
    assert fr.stages_left_out(run_tags, skip_tags) == left_out


def test_healthy_nodes_provisioned_without_kubernetes_pass():
    report = fr.report_from_inputs(_nodes(), run={'run_tags': ['all'], 'skip_tags': ['kubernetes']})
    assert report['summary']['nodes_failed'] == 0 and report['summary']['nodes_passed'] == 8
    assert report['run']['stages_left_out'] == ['kubernetes']
    checks = dict((check['name'], check) for check in report['nodes']['node-1']['checks'])
    assert checks['validated']['status'] == checks['schedulable']['status'] == 'skipped'
    assert checks['validated']['message'].startswith('not judged: the run left out the kubernetes stage')
    assert checks['versions as wanted']['status'] == 'passed'
    assert any('left out the stage kubernetes' in note and 'validated, schedulable are skipped' in note
               for note in report['notes'])
    # The same nodes in a run that did the kubernetes stage: no Node is a failure.
    whole = fr.report_from_inputs(_nodes(), run={'run_tags': ['all'], 'skip_tags': []})
    assert whole['summary']['nodes_failed'] == 8 and whole['run']['stages_left_out'] == []
    assert not any('left out' in note for note in whole['notes'])


def test_a_run_without_the_host_stack_does_not_judge_the_versions():
    report = fr.report_from_inputs(_nodes(driver='24.1.rc2'), run={'run_tags': ['kubernetes', 'report']})
    checks = dict((check['name'], check['status']) for check in report['nodes']['node-1']['checks'])
    assert checks['versions as wanted'] == 'skipped'
    # Kubernetes ran: its checks are judged, and a missing Node fails.
    assert checks['validated'] == checks['schedulable'] == 'failed'
    assert report['run']['stages_left_out'] == ['host_stack']


def test_the_html_and_markdown_say_which_stages_were_left_out():
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates as templates
    report = fr.report_from_inputs(_nodes(), run={'run_tags': ['all'], 'skip_tags': ['kubernetes']})
    for fmt in ('html', 'markdown'):
        assert 'This run left out the stage kubernetes' in templates.render(report, fmt)
