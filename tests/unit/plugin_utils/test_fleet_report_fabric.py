# -*- coding: utf-8 -*-
"""The fleet report's fabric check and column: the hccn role's gate as it published it (hccn_fabric)."""

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report


def entry(fabric):
    published = {} if fabric is None else {'hccn_fabric': fabric}
    return fleet_report.node_entry('t1', published=published)


def fabric_check(node):
    return [check for check in node['checks'] if check['name'] == fleet_report.CHECK_FABRIC]


def test_a_passed_fabric_is_a_passed_check_and_column():
    node = entry({'passed': True, 'npus': [{}] * 8, 'pings': ['a'] * 8, 'problems': []})
    assert fabric_check(node) == [{'name': 'fabric', 'status': 'passed',
                                   'message': '8 NPU(s) up and healthy, 8 ping(s) to peer NPUs answered'}]
    assert fleet_report._node_view(node)['fabric_status'] == 'passed'


def test_a_failed_fabric_names_its_problems_and_fails_the_node():
    problem = 't1 NPU 3: link DOWN; likely cause: cable; fix: check the cable'
    node = entry({'passed': False, 'npus': [], 'pings': [], 'problems': [problem]})
    assert fabric_check(node)[0]['status'] == 'failed' and fabric_check(node)[0]['message'] == problem
    assert 'fabric: ' + problem in [p['name'] + ': ' + p['message'] for p in fleet_report._node_view(node)['problems']]


def test_no_fabric_no_check():
    node = entry(None)
    assert fabric_check(node) == [] and fleet_report._node_view(node)['fabric'] == ''


def test_run_inputs_take_the_published_fabric():
    fabric = {'passed': True, 'npus': [], 'pings': [], 'problems': []}
    nodes = fleet_report.run_inputs(['t1'], lambda host: {'hccn_fabric': fabric}, ['t1'], lambda variables: {})
    assert nodes[0]['published']['hccn_fabric'] == fabric
