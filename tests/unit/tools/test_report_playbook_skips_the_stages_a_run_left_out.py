# -*- coding: utf-8 -*-
"""npu.ascend.report run by ansible-playbook with --skip-tags kubernetes, over two local hosts and a cluster that
was never set up: the report play hands the run's tags to the report, which skips the kubernetes stage's checks
(validated, schedulable) instead of failing every node on "the cluster has no Node", notes the stage and says so
in its last message."""

import json
import sys

from conftest import run_playbook

INVENTORY = '''
all:
  children:
    npu_nodes:
      hosts:
        node-1:
        node-2:
      vars:
        ansible_connection: local
        ansible_python_interpreter: {python}
        k8s_kubeconfig: {kubeconfig}
'''


def test_a_run_without_the_kubernetes_stage_does_not_judge_it(tmp_path):
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(INVENTORY.format(python=sys.executable, kubeconfig=tmp_path / 'no-such-kubeconfig'))
    reports = tmp_path / 'reports'
    rc, output = run_playbook(['-i', str(inventory), 'npu.ascend.report', '--skip-tags', 'kubernetes',
                               '-e', 'fleet_report_dir=%s' % reports, '-e', '{"fleet_report_formats": ["junit"]}'])
    assert rc == 0, output
    report = json.loads((reports / 'fleet-report.json').read_text())
    assert report['run']['skip_tags'] == ['kubernetes'] and report['run']['stages_left_out'] == ['kubernetes']
    for host in ('node-1', 'node-2'):
        checks = dict((check['name'], check) for check in report['nodes'][host]['checks'])
        assert checks['validated']['status'] == checks['schedulable']['status'] == 'skipped', checks
        assert checks['validated']['message'].startswith('not judged: the run left out the kubernetes stage')
    assert 'the run left out kubernetes, whose checks are skipped' in output
