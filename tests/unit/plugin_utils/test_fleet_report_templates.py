# -*- coding: utf-8 -*-
"""The Markdown and HTML fleet report: failing nodes first, passing ones collapsed, groups by model
and stack, and the operator's own templates."""

import os
import re

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as fr
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates as templates

A2 = {'chip_family': '910b', 'product': 'Atlas 800I A2', 'npu_count': 8}
DUO = {'chip_family': '310p', 'product': 'Atlas 300I Duo', 'npu_count': 2}
WANTED = {'driver': '25.0.rc1.1'}


def _node(host, hardware, driver='25.0.rc1.1', health='OK', unreachable=False):
    facts = dict(hardware, npu_smi_path='/usr/local/sbin/npu-smi', reboot_pending=False,
                 installed={'driver': {'version': driver} if driver else None})
    gathered = {'unreachable': True} if unreachable else {
        'facts': facts, 'npu_smi': {'chips': [{'npu_id': 0, 'chip_id': 0, 'health': health}]}}
    return fr.node_entry(host, gathered, wanted=WANTED)


def _report(*entries):
    return fr.build_report(list(entries), generated_at='2025-06-01T00:00:00Z')


FLEET = _report(_node('a2-01', A2), _node('a2-02', A2, health='Critical'), _node('a2-03', A2, driver='24.1.rc2'),
                _node('duo-01', DUO), _node('duo-02', DUO, unreachable=True), _node('duo-03', DUO))


def test_view_orders_failing_nodes_first_worst_first():
    view = fr.report_view(FLEET)
    assert [(node['host'], node['status']) for node in view['failing']] == [
        ('duo-02', 'error'), ('a2-02', 'failed'), ('a2-03', 'failed')]
    assert [node['host'] for node in view['passing']] == ['a2-01', 'duo-01', 'duo-03']
    # A node's failed checks come before its passed ones.
    statuses = [check['status'] for check in view['failing'][1]['checks']]
    assert statuses.index('failed') < statuses.index('passed')


def test_view_groups_by_model_and_installed_stack():
    groups = [(group['model'], group['stack'], group['hosts'], group['failing']) for group in fr.report_view(FLEET)['groups']]
    assert groups == [
        ('Atlas 300I Duo', 'firmware none, driver 25.0.rc1.1, CANN none, Docker runtime none', ['duo-01', 'duo-03'], []),
        ('Atlas 800I A2', 'firmware none, driver 24.1.rc2, CANN none, Docker runtime none', ['a2-03'], ['a2-03']),
        ('Atlas 800I A2', 'firmware none, driver 25.0.rc1.1, CANN none, Docker runtime none', ['a2-01', 'a2-02'],
         ['a2-02']),
        ('unknown hardware', 'firmware none, driver none, CANN none, Docker runtime none', ['duo-02'], ['duo-02']),
    ]


def test_markdown_leads_with_failures_and_collapses_passing_nodes():
    text = templates.render(FLEET, 'markdown')
    failing, groups, passing = (text.index('## Failing nodes (3)'), text.index('## By server model and stack'),
                                text.index('## Passing nodes (3)'))
    assert failing < groups < passing
    assert [line.split(' | ')[0] for line in text[failing:groups].splitlines() if line.startswith('| ') and
            ' | **' in line] == ['| duo-02', '| a2-02', '| a2-03']
    # Passing nodes: one compact row each, no section of their own.
    assert '| a2-01 | Atlas 800I A2 910b | 1/1 OK | 25.0.rc1.1 | - | - |' in text
    assert '### a2-01' not in text and '### a2-02' in text


def test_html_colours_status_cells_and_lists_failing_then_passing_nodes_in_scroll_boxes():
    page = templates.render(FLEET, 'html')
    assert '<td class="status error">ERROR</td>' in page and '<td class="status failed">FAIL</td>' in page
    assert re.search(r'\.failed\{background:#[0-9a-f]+', page)
    failing = page[page.index('<table id="failing-nodes">'):page.index('</table>', page.index('<table id="failing-nodes">'))]
    passing = page[page.index('<table id="passing-nodes">'):page.index('</table>', page.index('<table id="passing-nodes">'))]
    assert re.findall(r'<tr data-state="[^"]*"[^>]*><td>([^<]+)</td>', failing) == ['duo-02', 'a2-02', 'a2-03']
    assert re.findall(r'<tr data-state="[^"]*"[^>]*><td>([^<]+)</td>', passing) == ['a2-01', 'duo-01', 'duo-03']
    assert '<td class="status passed">PASS</td>' in passing
    # Each table scrolls in a box of its own: the page stays a few screens tall whatever the fleet.
    assert page.index('<div class="scroll"><table id="failing-nodes">') < page.index(
        '<div class="scroll short"><table id="passing-nodes">') < page.index('<h2>By server model and stack</h2>')


def test_an_all_passing_fleet_has_no_failing_section():
    text = templates.render(_report(_node('a2-01', A2)), 'markdown')
    assert 'Failing nodes' not in text and '## Passing nodes (1)' in text


def test_the_operators_template_comes_first_and_can_extend_the_builtin_one(tmp_path):
    (tmp_path / 'fleet-report.md.j2').write_text(u'{{ view.failing | length }} failing: '
                                                 u'{{ view.failing | map(attribute="host") | map("md") | join(",") }}\n')
    (tmp_path / 'fleet-report.html.j2').write_text(u'{% extends "builtin/fleet-report.html.j2" %}'
                                                   u'{% block groups %}<p>no groups</p>{% endblock %}')
    assert templates.render(FLEET, 'markdown', template_dir=str(tmp_path)) == '3 failing: duo-02,a2-02,a2-03\n'
    page = templates.render(FLEET, 'html', template_dir=str(tmp_path))
    assert '<p>no groups</p>' in page and 'By server model' not in page and '<details>' in page


def test_a_directory_without_the_template_falls_back_to_the_builtin_one(tmp_path):
    assert templates.render(FLEET, 'markdown', template_dir=str(tmp_path)) == templates.render(FLEET, 'markdown')


def test_operator_templates_escape_html_too(tmp_path):
    (tmp_path / 'fleet-report.html.j2').write_text(u'{% for node in view.failing %}{{ node.host }}{% endfor %}')
    report = _report(_node('<b>x</b>', A2, health='Critical'))
    assert templates.render(report, 'html', template_dir=str(tmp_path)) == '&lt;b&gt;x&lt;/b&gt;'


@pytest.mark.parametrize('content, match', [
    (u'{{ view.no_such_thing.x }}', r'template fleet-report.md.j2.*UndefinedError'),
    (u'{% if %}', r'fleet-report.md.j2 line 1: TemplateSyntaxError'),
])
def test_a_broken_template_is_named_with_its_line(tmp_path, content, match):
    (tmp_path / 'fleet-report.md.j2').write_text(content)
    with pytest.raises(templates.ReportTemplateError, match=match):
        templates.render(FLEET, 'markdown', template_dir=str(tmp_path))


def test_a_missing_directory_and_unknown_formats_are_refused(tmp_path):
    with pytest.raises(templates.ReportTemplateError, match='does not exist on the controller'):
        templates.render(FLEET, 'markdown', template_dir=str(tmp_path / 'absent'))
    with pytest.raises(templates.ReportTemplateError, match='no template for the format'):
        templates.render(FLEET, 'junit')


def test_the_builtin_templates_are_the_roles():
    assert os.path.isfile(os.path.join(templates.TEMPLATES_DIR, 'fleet-report.md.j2'))
    assert templates.TEMPLATES_DIR.endswith(os.path.join('roles', 'fleet_report', 'templates'))


_HOSTS = st.lists(st.tuples(st.text(alphabet='abc-01', min_size=1, max_size=5), st.sampled_from([A2, DUO]),
                            st.sampled_from(['OK', 'Critical']), st.sampled_from(['25.0.rc1.1', '24.1.rc2', None])),
                  max_size=8, unique_by=lambda item: item[0])


@settings(deadline=None, max_examples=50)
@given(_HOSTS)
def test_every_node_is_listed_once_and_failing_before_passing(hosts):
    report = _report(*[_node(host, hardware, driver, health) for host, hardware, health, driver in hosts])
    view = fr.report_view(report)
    listed = [node['host'] for node in view['failing'] + view['passing']]
    assert sorted(listed) == sorted(report['nodes'])
    assert all(node['status'] != 'passed' for node in view['failing'])
    assert all(node['status'] == 'passed' for node in view['passing'])
    assert sorted(host for group in view['groups'] for host in group['hosts']) == sorted(report['nodes'])
    text = templates.render(report, 'markdown')
    for node in view['failing']:
        assert '### %s' % fr.markdown_text(node['host']) in text


def _unreadable_chips(host, npu_smi_error=None, npu_smi_path='/usr/local/sbin/npu-smi'):
    facts = dict(A2, npu_smi_path=npu_smi_path, reboot_pending=False, installed={'driver': {'version': '25.0.rc1.1'}})
    return fr.node_entry(host, {'facts': facts, 'npu_smi': None, 'npu_smi_error': npu_smi_error}, wanted=WANTED)


def test_chips_that_could_not_be_counted_never_read_as_healthy():
    error = 'npu-smi info failed on a2-09: dcmi module initialize failed. ret is -8005'
    view = fr.report_view(_report(_unreadable_chips('a2-09', error), _unreadable_chips('a2-10'),
                                  _unreadable_chips('a2-11', npu_smi_path=None), _node('duo-02', DUO, unreachable=True)))
    cells = dict((row['host'], row['chips']) for row in view['failing'])
    assert cells == {'a2-09': 'unknown: npu-smi failed', 'a2-10': 'none listed by npu-smi',
                     'a2-11': 'unknown: no npu-smi', 'duo-02': 'not read'}
    page = templates.render(_report(_unreadable_chips('a2-09', error)), 'html')
    assert '0/0 OK' not in page and '<td>unknown: npu-smi failed</td>' in page


def test_a_group_of_hundreds_of_nodes_is_one_short_cell():
    hosts = ['npu-%04d' % number for number in range(1, 481)] + ['npu-%04d' % number for number in range(500, 521)]
    report = _report(*[_node(host, A2) for host in hosts + ['gpu-box']])
    group = fr.report_view(report)['groups'][0]
    assert len(group['hosts']) == 502
    assert group['hosts_text'] == 'gpu-box, npu-[0001-0480], npu-[0500-0520]'
    # Names without a run of numbers: the first ten, and the rest counted.
    scattered = fr.report_view(_report(*[_node('node-%s' % letter, A2) for letter in 'abcdefghijklmnop']))
    assert scattered['groups'][0]['hosts_text'] == ', '.join('node-%s' % letter for letter in 'abcdefghij') + ' and 6 more'
    html = templates.render(report, 'html')
    assert '<td>gpu-box, npu-[0001-0480], npu-[0500-0520]</td>' in html[html.index('By server model and stack'):]
    markdown = templates.render(report, 'markdown')
    groups = markdown[markdown.index('## By server model and stack'):markdown.index('## Passing nodes')]
    assert 'npu-0002' not in groups and 'npu-\\[0001-0480\\]' in groups


def test_host_ranges_keep_number_widths_and_single_numbers_apart():
    assert fr.host_ranges(['n9', 'n10', 'n11', 'n-01', 'n-02', 'n-04', 'x', 'n-02']) == [
        'n-04', 'n-[01-02]', 'n9', 'n[10-11]', 'x']
