# -*- coding: utf-8 -*-
"""The fleet report: node entries and checks, change detection, JSON, JUnit, Markdown and HTML.

Node data is made from the real samples (npu-smi output, Huawei's version files) through the
collection's own parsers, as ascend_facts and npu_smi_info would return it.
"""

import copy
import json
import re
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as fr
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.packages import version_files
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates as templates
from ansible_collections.npu.ascend.plugins.plugin_utils.wanted_stack import wanted_versions

STACK = {'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231', 'cann': '8.2.RC1', 'kernels': True, 'nnal': True,
         'nnal_version': '', 'docker_runtime': '7.3.0'}
WANTED = wanted_versions(STACK)
HOSTILE = '<script>alert("x")</script> & | `code` *b*\nsecond line'


@pytest.fixture
def node_data(sample):
    """Return a function making (gathered, k8s) for a node from the samples."""

    def make(driver_file='driver_version.info_25.0.rc1.1.txt', firmware_file='firmware_version.info_7.7.0.1.231.txt',
             smi_file='npu-smi/910B4_25.0.rc1.1_info.txt', validated='25.0.rc1.1', name='node-a'):
        driver = version_files.parse_driver_version_info(sample('files/' + driver_file))
        firmware = version_files.parse_firmware_version_info(sample('files/' + firmware_file))
        toolkit = version_files.parse_toolkit_version_info(sample('files/toolkit_version.info_8.2.RC1.txt'))
        kernels = version_files.parse_opp_kernel_version_info(sample('files/opp_kernel_version.info_8.2.RC1.txt'))
        nnal = version_files.parse_nnal_version_info(sample('files/nnal_atb_version.info_8.2.RC1.txt'))
        facts = {
            'chip_family': '910b', 'product': 'Atlas 800I A2', 'arch': 'aarch64', 'npu_count': 8,
            'k8s_resource_name': 'huawei.com/Ascend910', 'npu_smi_path': '/usr/local/sbin/npu-smi',
            'reboot_pending': False, 'reboot_reasons': [],
            'installed': {'driver': driver, 'firmware': firmware, 'toolkit': toolkit, 'kernels': kernels,
                          'ops': None, 'nnal': nnal, 'docker_runtime': {'version': '7.3.0'}},
        }
        gathered = {'facts': facts, 'facts_error': None, 'unreachable': False,
                    'npu_smi': npu_smi.parse_info(sample(smi_file)), 'npu_smi_error': None}
        labels = {'accelerator': 'huawei-Ascend910', 'npu.ascend/driver': driver['version'],
                  'kubernetes.io/hostname': name}
        if validated:
            labels['npu.ascend/validated'] = validated
        node = {'metadata': {'name': name, 'labels': labels},
                'spec': {},
                'status': {'capacity': {'cpu': '64', 'huawei.com/Ascend910': '8'},
                           'allocatable': {'cpu': '64', 'huawei.com/Ascend910': '8'}}}
        k8s = {'configured': True, 'node_name': name, 'node': node, 'error': None}
        return gathered, k8s

    return make


def _checks(entry):
    return dict((check['name'], check) for check in entry['checks'])


def test_healthy_node_passes_every_check(node_data):
    gathered, k8s = node_data()
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, outcome='ok')
    checks = _checks(entry)
    names = [check['name'] for check in entry['checks']]
    assert names == ['chips healthy', 'versions as wanted', 'validated', 'schedulable', 'run']
    assert all(check['status'] == 'passed' for check in entry['checks']), entry['checks']
    assert checks['chips healthy']['message'] == 'all 8 chips OK'
    assert checks['schedulable']['message'] == 'schedulable, allocatable huawei.com/Ascend910: 8'
    assert entry['versions']['driver'] == '25.0.rc1.1'
    assert entry['versions']['kernels'] == '8.2.RC1'
    assert entry['kubernetes']['capacity'] == {'huawei.com/Ascend910': '8'}
    assert entry['status'] == 'passed'


def test_unhealthy_chip_npu_smi_error_and_pending_reboot(node_data, synthetic):
    gathered, k8s = node_data()
    gathered['npu_smi']['chips'][3]['health'] = 'Warning'
    checks = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))
    assert checks['chips healthy']['status'] == 'failed'
    assert '1 of 8 chips not OK: NPU 3 chip 0: Warning' in checks['chips healthy']['message']

    with pytest.raises(npu_smi.NpuSmiError) as error:
        npu_smi.parse_info(synthetic('npu_smi_synthetic/error_dcmi_-8005.txt'))
    gathered, k8s = node_data()
    gathered['npu_smi'] = None
    gathered['npu_smi_error'] = 'npu-smi failed (rc=1): %s' % error.value
    entry = fr.node_entry('node-a', gathered, k8s, WANTED)
    assert _checks(entry)['chips healthy']['status'] == 'failed'
    assert '-8005' in _checks(entry)['chips healthy']['message']
    assert entry['status'] == 'failed'

    gathered, k8s = node_data()
    gathered['facts']['reboot_pending'] = True
    gathered['facts']['reboot_reasons'] = [{'component': 'driver', 'version': '25.0.rc1.1'}]
    message = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))['chips healthy']['message']
    assert 'driver 25.0.rc1.1 is pending' in message and 'reboot the node' in message

    gathered, k8s = node_data()
    gathered['facts']['npu_smi_path'] = None
    gathered['npu_smi'] = None
    message = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))['chips healthy']['message']
    assert 'npu-smi is not installed' in message


def test_versions_not_as_wanted_name_each_component(node_data):
    gathered, k8s = node_data(driver_file='driver_version.info_24.1.rc2.2.txt',
                              firmware_file='firmware_version.info_7.1.0.11.220.txt', validated='24.1.rc2.2')
    gathered['facts']['installed']['nnal'] = None
    check = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))['versions as wanted']
    assert check['status'] == 'failed'
    assert 'firmware 7.1.0.11.220 (wanted 7.7.0.1.231)' in check['message']
    assert 'driver 24.1.rc2.2 (wanted 25.0.rc1.1)' in check['message']
    assert 'NNAL not installed (wanted 8.2.RC1)' in check['message']
    assert 'CANN toolkit' not in check['message']
    # Huawei's versions compare case-insensitively, and with or without a leading v.
    gathered, k8s = node_data()
    gathered['facts']['installed']['docker_runtime']['version'] = 'v7.3.0'
    wanted = wanted_versions(dict(STACK, cann='8.2.rc1'))
    assert _checks(fr.node_entry('node-a', gathered, k8s, wanted))['versions as wanted']['status'] == 'passed'
    assert _checks(fr.node_entry('node-a', gathered, k8s, {}))['versions as wanted']['status'] == 'skipped'


def test_validated_and_schedulable_from_the_node_object(node_data):
    gathered, k8s = node_data(validated='24.1.rc2.2')
    checks = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))
    assert checks['validated']['status'] == 'failed'
    assert 'validated with driver 24.1.rc2.2 but the node runs 25.0.rc1.1' in checks['validated']['message']

    gathered, k8s = node_data(validated=None)
    k8s['node']['spec'] = {'unschedulable': True,
                           'taints': [{'key': 'npu.ascend/unvalidated', 'value': 'true', 'effect': 'NoSchedule'},
                                      {'key': 'soft', 'effect': 'PreferNoSchedule'}]}
    k8s['node']['status']['allocatable']['huawei.com/Ascend910'] = '0'
    k8s['node']['metadata']['labels']['npu.ascend/upgrade-state'] = 'draining'
    entry = fr.node_entry('node-a', gathered, k8s, WANTED)
    checks = _checks(entry)
    assert checks['validated']['status'] == 'failed'
    assert 'no npu.ascend/validated label' in checks['validated']['message']
    message = checks['schedulable']['message']
    assert checks['schedulable']['status'] == 'failed'
    assert 'cordoned' in message and 'npu.ascend/unvalidated=true:NoSchedule' in message
    assert 'soft' not in message
    assert 'allocatable huawei.com/Ascend910 is 0' in message
    assert entry['kubernetes']['upgrade_state'] == 'draining'

    gathered, k8s = node_data()
    k8s['node'] = None
    checks = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))
    assert checks['validated']['status'] == checks['schedulable']['status'] == 'failed'
    assert 'no Node named node-a' in checks['schedulable']['message']

    k8s = {'configured': True, 'node_name': 'node-a', 'node': None, 'error': 'connection refused'}
    checks = _checks(fr.node_entry('node-a', gathered, k8s, WANTED))
    assert checks['validated']['status'] == 'error'
    checks = _checks(fr.node_entry('node-a', gathered, None, WANTED))
    assert checks['validated']['status'] == checks['schedulable']['status'] == 'skipped'


def test_unreachable_and_failed_earlier_nodes(node_data):
    gathered = {'facts': None, 'facts_error': 'ssh: connect to host timed out', 'unreachable': True}
    k8s = node_data()[1]
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, outcome='failed')
    checks = _checks(entry)
    assert checks['chips healthy']['status'] == checks['versions as wanted']['status'] == 'error'
    assert 'unreachable: ssh: connect to host timed out' == checks['chips healthy']['message']
    # A Node that still says validated and schedulable does not make a node nobody could read good.
    assert checks['validated']['status'] == checks['schedulable']['status'] == 'skipped'
    assert checks['schedulable']['message'].startswith('not judged, since nothing was read from the node '
                                                       '(unreachable: ssh: connect to host timed out)')
    # What the cluster says against the node stands.
    node = copy.deepcopy(k8s)
    node['node']['spec']['unschedulable'] = True
    assert _checks(fr.node_entry('node-a', gathered, node, WANTED))['schedulable']['status'] == 'failed'
    assert checks['run']['status'] == 'failed'
    assert entry['status'] == 'error'


def test_the_stage_a_node_stopped_at_is_its_run_check_and_stopped_nodes_come_first(node_data):
    gathered, k8s = node_data()
    stopped = {'stage': 'hdk', 'task': 'Install the driver', 'message': 'n: driver: exit 2. Fix: ...',
               'unreachable': False}
    entry = fr.node_entry('node-b', gathered, k8s, WANTED, published={'outcome_stopped': stopped}, outcome='failed')
    assert entry['stopped'] == stopped
    assert _checks(entry)['run'] == {'name': 'run', 'status': 'failed',
                                     'message': 'stopped at hdk (task "Install the driver"): n: driver: exit 2. Fix: ...'}
    gone = dict(stopped, stage='connect', task='', message='ssh: no route to host', unreachable=True)
    unreachable = fr.node_entry('node-c', gathered, k8s, WANTED, published={'outcome_stopped': gone}, outcome='failed')
    assert _checks(unreachable)['run']['status'] == 'error'
    assert _checks(unreachable)['run']['message'] == 'unreachable at connect: ssh: no route to host'
    # A record of a node that finished the run is not a stop.
    done = fr.node_entry('node-d', gathered, k8s, WANTED, published={'outcome_stopped': stopped}, outcome='ok')
    assert done['stopped'] is None and _checks(done)['run']['status'] == 'passed'
    # A node that finished the run but is not validated fails too, and comes after the stops.
    sick = fr.node_entry('node-a', *node_data(validated=None, name='node-a'), wanted=WANTED, outcome='ok')
    assert sick['status'] == 'failed'
    view = fr.report_view(fr.build_report([entry, unreachable, done, sick]))
    assert [row['host'] for row in view['failing']] == ['node-c', 'node-b', 'node-a']


def test_run_inputs_carry_the_stop_a_stage_recorded():
    stopped = {'stage': 'preflight', 'task': 't', 'message': 'm', 'unreachable': False}
    variables = {'n1': {}, 'n2': {'outcome_stopped': stopped}}
    nodes = fr.run_inputs(['n1', 'n2'], variables.get, ['n1'], lambda own: {})
    assert 'outcome_stopped' not in nodes[0]['published'] and nodes[0]['outcome'] == 'ok'
    assert nodes[1]['published']['outcome_stopped'] == stopped and nodes[1]['outcome'] == 'failed'
    # A node its stage found unreachable is not read again: its record says why nothing was read.
    gone = dict(stopped, stage='connect', message='ssh: no route to host', unreachable=True)
    nodes = fr.run_inputs(['n3'], {'n3': {'outcome_stopped': gone}}.get, [], lambda own: {})
    assert nodes[0]['gathered'] == {'facts': None, 'facts_error': 'ssh: no route to host', 'unreachable': True,
                                    'npu_smi': None, 'npu_smi_error': None}
    entry = fr.node_entry('n3', nodes[0]['gathered'], published=nodes[0]['published'], outcome='failed')
    assert entry['reachable'] is False and entry['errors'] == ['unreachable: ssh: no route to host']


def test_published_results_become_checks(node_data):
    gathered, k8s = node_data()
    published = {
        'preflight_report': {'checks': [{'name': 'free disk', 'ok': False, 'detail': '2 GB free', 'fix': 'free space'},
                                        {'name': 'architecture', 'ok': True, 'detail': 'x86_64', 'fix': ''}],
                             'plan': [], 'failed': ['free disk']},
        'doctor_findings': [{'node': 'node-a', 'component': 'driver', 'problem': 'device nodes missing',
                             'evidence': 'no /dev/davinci0', 'fix': 'reboot'}],
        'extra': {'ticket': 'OPS-1'},
    }
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, published=published)
    checks = _checks(entry)
    assert checks['preflight']['status'] == 'failed'
    assert 'free disk: 2 GB free (fix: free space)' in checks['preflight']['message']
    assert checks['doctor']['status'] == 'failed'
    assert 'driver: device nodes missing (evidence: no /dev/davinci0; fix: reboot)' == checks['doctor']['message']
    assert entry['extra'] == {'ticket': 'OPS-1'}
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, published={'doctor_findings': []})
    assert _checks(entry)['doctor']['status'] == 'passed'
    assert 'preflight' not in _checks(entry)


def _report(node_data, previous=None, **kwargs):
    gathered, k8s = node_data(**kwargs)
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, outcome='ok')
    return fr.build_report([entry], previous=previous, run={'play': 'site'}, generated_at='2025-06-01T10:00:00Z')


def test_json_round_trip_and_no_changes_against_itself(node_data):
    report = _report(node_data)
    text = fr.to_json(report)
    assert json.loads(text) == json.loads(json.dumps(report))
    again = _report(node_data, previous=text)
    assert again['nodes']['node-a']['changes'] == []
    assert again['summary']['changes'] == 0
    assert again['previous_generated_at'] == '2025-06-01T10:00:00Z'
    assert fr.render(again, 'json') == fr.to_json(again)


def test_changes_after_an_upgrade(node_data):
    before = _report(node_data, driver_file='driver_version.info_24.1.rc2.2.txt',
                     firmware_file='firmware_version.info_7.1.0.11.220.txt', validated='24.1.rc2.2')
    before_text = fr.to_json(before)
    after = _report(node_data, previous=before_text)
    texts = [change['text'] for change in after['nodes']['node-a']['changes']]
    assert 'driver 24.1.rc2.2 -> 25.0.rc1.1' in texts
    assert 'firmware 7.1.0.11.220 -> 7.7.0.1.231' in texts
    assert 'label npu.ascend/driver 24.1.rc2.2 -> 25.0.rc1.1' in texts
    assert 'label npu.ascend/validated 24.1.rc2.2 -> 25.0.rc1.1' in texts
    assert 'check versions as wanted: failed -> passed' in texts
    assert 'CANN toolkit' not in ' '.join(texts)
    assert after['summary']['changes'] == len(texts)


def test_changes_in_health_labels_taints_and_nodes(node_data):
    previous = json.loads(fr.to_json(_report(node_data)))
    previous['nodes']['gone-node'] = copy.deepcopy(previous['nodes']['node-a'])
    gathered, k8s = node_data()
    gathered['npu_smi']['chips'][0]['health'] = 'Alarm'
    gathered['facts']['installed']['nnal'] = None
    del k8s['node']['metadata']['labels']['accelerator']
    k8s['node']['metadata']['labels']['extra'] = 'x'
    k8s['node']['spec'] = {'unschedulable': True, 'taints': [{'key': 't', 'effect': 'NoExecute'}]}
    new_gathered, new_k8s = node_data(name='node-b')
    report = fr.build_report([fr.node_entry('node-a', gathered, k8s, WANTED),
                              fr.node_entry('node-b', new_gathered, new_k8s, WANTED)], previous=previous)
    texts = [change['text'] for change in report['nodes']['node-a']['changes']]
    assert 'NNAL 8.2.RC1 -> not installed' in texts
    assert 'chips OK 8/8 -> 7/8 (NPU 0 chip 0: Alarm)' in texts
    assert 'label accelerator removed (was huawei-Ascend910)' in texts
    assert 'label extra added (x)' in texts
    assert 'cordoned false -> true' in texts
    assert 'taint t:NoExecute added' in texts
    assert 'check chips healthy: passed -> failed' in texts
    assert [change['text'] for change in report['nodes']['node-b']['changes']] == ['new in the report']
    assert report['removed_nodes'] == ['gone-node']


def test_an_unreachable_node_does_not_seem_to_lose_its_software(node_data):
    previous = fr.to_json(_report(node_data))
    k8s = node_data()[1]
    entry = fr.node_entry('node-a', {'unreachable': True, 'facts_error': 'timeout'}, k8s, WANTED, outcome='ok')
    texts = [change['text'] for change in fr.build_report([entry], previous=previous)['nodes']['node-a']['changes']]
    assert not [text for text in texts if 'not installed' in text or text.startswith('chips')]
    assert 'check chips healthy: passed -> error' in texts


def test_unusable_previous_reports_are_noted(node_data):
    gathered, k8s = node_data()
    entry = fr.node_entry('node-a', gathered, k8s, WANTED)
    for previous, note in (('{not json', 'not valid JSON'), ('{"format": "other"}', 'not a npu.ascend/fleet-report'),
                           ({'format': fr.FORMAT, 'format_version': 99, 'nodes': {}}, 'format version 99')):
        report = fr.build_report([copy.deepcopy(entry)], previous=previous)
        assert note in report['notes'][0]
        assert report['nodes']['node-a']['changes'] == []
    with pytest.raises(ValueError, match='appears twice'):
        fr.build_report([copy.deepcopy(entry), copy.deepcopy(entry)])


def test_junit_has_a_testcase_per_node_and_check(node_data):
    healthy_gathered, healthy_k8s = node_data()
    bad_gathered, bad_k8s = node_data(validated=None, name='node-b')
    bad_gathered['npu_smi']['chips'][1]['health'] = 'Critical \x01 <&>'
    report = fr.build_report([fr.node_entry('node-a', healthy_gathered, healthy_k8s, WANTED, outcome='ok'),
                              fr.node_entry('node-b', bad_gathered, bad_k8s, WANTED, outcome='ok'),
                              fr.node_entry('node-c', {'unreachable': True}, None, {}, outcome='failed')],
                             run={'play': 'site', 'hosts': ['node-a', 'node-b']}, generated_at='2025-06-01T10:00:00Z')
    root = ET.fromstring(fr.render_junit(report).encode('utf-8'))
    assert root.tag == 'testsuites'
    suites = root.findall('testsuite')
    assert len(suites) == 1
    cases = suites[0].findall('testcase')
    assert len(cases) == 15
    assert set(case.get('classname') for case in cases) == {'node-a', 'node-b', 'node-c'}
    assert int(suites[0].get('tests')) == 15
    assert int(suites[0].get('failures')) == 3  # node-b chips and validated, node-c run
    assert int(suites[0].get('errors')) == 2  # node-c, unreachable: chips and versions
    assert int(suites[0].get('skipped')) == 2  # node-c, no cluster: validated and schedulable
    by_id = dict(((case.get('classname'), case.get('name')), case) for case in cases)
    failure = by_id[('node-b', 'chips healthy')].find('failure')
    assert failure is not None
    assert 'NPU 1 chip 0: Critical \ufffd <&>' in failure.get('message')
    assert by_id[('node-b', 'validated')].find('failure') is not None
    assert by_id[('node-a', 'chips healthy')].find('failure') is None
    assert by_id[('node-c', 'chips healthy')].find('error') is not None
    assert by_id[('node-c', 'validated')].find('skipped') is not None
    properties = dict((item.get('name'), item.get('value')) for item in suites[0].iter('property'))
    assert properties['hosts'] == 'node-a, node-b'


def _tables(text):
    """Each Markdown table of the text as its list of lines."""
    tables, current = [], []
    for line in text.splitlines() + ['']:
        if line.startswith('|'):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_names_every_node_and_escapes(node_data):
    gathered, k8s = node_data(name='node-a')
    k8s['node']['spec'] = {'taints': [{'key': 'x', 'value': 'a|b', 'effect': 'NoSchedule'}]}
    published = {'doctor_findings': [{'node': 'node-a', 'component': 'driver', 'problem': HOSTILE,
                                      'evidence': '', 'fix': ''}]}
    other_gathered, other_k8s = node_data(name='node-b')
    report = fr.build_report([fr.node_entry('node-a', gathered, k8s, WANTED, published=published),
                              fr.node_entry('node-b', other_gathered, other_k8s, WANTED)],
                             run={'play': 'site', 'check_mode': True}, generated_at='2025-06-01T10:00:00Z')
    text = templates.render(report, 'markdown')
    # The failing node gets its section; the passing one a row of the compact table.
    assert '### node-a' in text and '### node-b' not in text
    assert '| node-a | **FAIL** |' in text and '| node-b | Atlas 800I A2 910b |' in text
    assert not re.search(r'(?<!\\)<', text), 'an unescaped < in the Markdown'
    assert '\\<script>' in text and '&amp;' in text and 'a\\|b' in text
    assert 'second line' in text and '\nsecond line' not in text
    assert 'dry run' in text
    # Every table row keeps its header's number of cells.
    for table in _tables(text):
        width = table[0].count(' | ')
        assert all(row.replace('\\|', '').count(' | ') == width for row in table[2:]), table


def test_html_escapes_everything_from_nodes(node_data):
    gathered, k8s = node_data()
    gathered['npu_smi']['chips'][0]['health'] = HOSTILE
    report = fr.build_report([fr.node_entry('<b>host</b>', gathered, k8s, WANTED)], generated_at='now')
    page = templates.render(report, 'html')
    # The page's one script is its own (the filters), the one its Content-Security-Policy allows.
    assert page.count('<script>') == 1 and '<b>host</b>' not in page
    script = page[page.index('<script>') + len('<script>'):page.index('</script>')]
    assert "script-src %s;" % templates.csp_hash(script) in page
    assert '&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp;' in page
    assert '<td>&lt;b&gt;host&lt;/b&gt;</td>' in page
    assert page.startswith('<!DOCTYPE html>')


def test_render_rejects_unknown_formats(node_data):
    with pytest.raises(ValueError, match='unknown report format'):
        fr.render(_report(node_data), 'pdf')
    # Markdown and HTML are the templates' (plugin_utils), not module_utils'.
    with pytest.raises(ValueError, match='unknown report format'):
        fr.render(_report(node_data), 'markdown')


def test_another_label_domain_is_read_for_validation_and_the_upgrade_state(node_data):
    # Issue 31: the report reads the labels under the domain the roles wrote them with.
    gathered, k8s = node_data()
    labels = k8s['node']['metadata']['labels']
    for key in [key for key in labels if key.startswith('npu.ascend/')]:
        labels[key.replace('npu.ascend/', 'npu.example.com/')] = labels.pop(key)
    labels['npu.example.com/validated'] = labels['npu.example.com/driver']
    labels['npu.example.com/upgrade-state'] = 'done'
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, domain='npu.example.com')
    assert _checks(entry)['validated']['status'] == 'passed'
    assert entry['kubernetes']['upgrade_state'] == 'done'
    # Read under the default domain, the node has no validated label.
    assert 'no npu.ascend/validated label' in _checks(fr.node_entry('node-a', gathered, k8s, WANTED))['validated']['message']


def test_the_node_name_rule():
    assert fr.k8s_node_name({'npu_ascend_k8s_node_name': 'a2.example.internal'}, 'a2') == 'a2.example.internal'
    assert fr.k8s_node_name({}, 'a2') == 'a2'
    assert fr.k8s_node_name({'npu_ascend_k8s_node_name': ''}, 'a2') == 'a2'


def test_the_vnpu_layout_of_a_node_is_shown(node_data):
    gathered, k8s = node_data()
    labels = k8s['node']['metadata']['labels']
    labels.update({'npu.ascend/vnpu-Ascend910-5c.1cpu.8g': '2', 'npu.ascend/vnpu-Ascend910-10c.3cpu.16g': '1',
                   'npu.ascend/vnpu-chips': '2'})
    entry = fr.node_entry('node-a', gathered, k8s, WANTED, outcome='ok')
    assert entry['kubernetes']['vnpus'] == {'Ascend910-10c.3cpu.16g': '1', 'Ascend910-5c.1cpu.8g': '2'}
    report = fr.build_report([entry])
    markdown = templates.render(report, 'markdown')
    assert 'Ascend910-10c.3cpu.16g x1, Ascend910-5c.1cpu.8g x2' in markdown
    assert 'Ascend910-10c.3cpu.16g x1, Ascend910-5c.1cpu.8g x2' in templates.render(report, 'html')
    whole = fr.node_entry('node-b', *node_data(name='node-b'), wanted=WANTED, outcome='ok')
    assert whole['kubernetes']['vnpus'] == {}
    assert fr.report_view(fr.build_report([whole]))['passing'][0]['vnpus'] == '-'
