# -*- coding: utf-8 -*-
"""The fleet_report and fleet_report_render filters: what a playbook gets, and how bad input fails."""

import json
import xml.etree.ElementTree as ET

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.fleet_report import fleet_report, fleet_report_render

FACTS = {'chip_family': '310p', 'product': 'Atlas 300I Duo', 'arch': 'x86_64', 'npu_count': 2,
         'npu_smi_path': '/usr/local/sbin/npu-smi', 'k8s_resource_name': 'huawei.com/Ascend310P',
         'reboot_pending': False, 'installed': {'driver': {'version': '25.0.rc1.1'}, 'firmware': None}}
CHIPS = {'chips': [{'npu_id': 0, 'chip_id': 0, 'health': 'OK'}, {'npu_id': 0, 'chip_id': 1, 'health': 'OK'}]}


def _nodes():
    return [{'host': 'duo-01', 'gathered': {'facts': FACTS, 'npu_smi': CHIPS},
             'wanted': {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231'}, 'outcome': 'ok'}]


def test_fleet_report_builds_and_renders_every_format():
    report = fleet_report(_nodes(), run={'play': 'report'}, generated_at='2025-06-01T00:00:00Z')
    entry = report['nodes']['duo-01']
    assert entry['status'] == 'failed'
    assert 'firmware not installed (wanted 7.7.0.1.231)' in entry['checks'][1]['message']
    assert json.loads(fleet_report_render(report)) == json.loads(json.dumps(report))
    root = ET.fromstring(fleet_report_render(report, 'junit'))
    assert len(root.find('testsuite').findall('testcase')) == 5
    assert '### duo-01' in fleet_report_render(report, 'markdown')
    assert '<td>duo-01</td>' in fleet_report_render(report, 'html')
    again = fleet_report(_nodes(), previous=fleet_report_render(report))
    assert again['nodes']['duo-01']['changes'] == []


def test_fleet_report_bad_input():
    with pytest.raises(AnsibleFilterError, match='expects a list'):
        fleet_report({'host': 'a'})
    with pytest.raises(AnsibleFilterError, match='at least "host"'):
        fleet_report([{'gathered': {}}])
    with pytest.raises(AnsibleFilterError, match='unknown keys colour'):
        fleet_report([{'host': 'a', 'colour': 'red'}])
    with pytest.raises(AnsibleFilterError, match='appears twice'):
        fleet_report([{'host': 'a'}, {'host': 'a'}])
    with pytest.raises(AnsibleFilterError, match='expects a report'):
        fleet_report_render({'nodes': {}})
    with pytest.raises(AnsibleFilterError, match='unknown report format'):
        fleet_report_render(fleet_report([{'host': 'a'}]), 'pdf')
