# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.fleet_report`` and ``npu.ascend.fleet_report_render``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as report_lib
from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates

_NODE_KEYS = ('host', 'gathered', 'k8s', 'wanted', 'published', 'outcome')


def fleet_report(nodes, previous=None, run=None, generated_at=None, domain='npu.ascend'):
    """The report document from one input dict per node (see fleet_report.yml)."""
    if not isinstance(nodes, list):
        raise AnsibleFilterError('fleet_report expects a list of nodes, got %s' % type(nodes).__name__)
    entries = []
    for node in nodes:
        if not isinstance(node, dict) or not node.get('host'):
            raise AnsibleFilterError('fleet_report: each node must be a dict with at least "host", got %r' % (node,))
        unknown = sorted(set(node) - set(_NODE_KEYS))
        if unknown:
            raise AnsibleFilterError('fleet_report: node %s has unknown keys %s (known: %s)'
                                     % (node['host'], ', '.join(unknown), ', '.join(_NODE_KEYS)))
        try:
            entries.append(report_lib.node_entry(
                str(node['host']), gathered=node.get('gathered'), k8s=node.get('k8s'), wanted=node.get('wanted'),
                published=node.get('published'), outcome=node.get('outcome'), domain=domain))
        except (TypeError, ValueError, AttributeError) as error:
            raise AnsibleFilterError('fleet_report: node %s: %s' % (node['host'], error))
    try:
        return report_lib.build_report(entries, previous=previous, run=run, generated_at=generated_at)
    except ValueError as error:
        raise AnsibleFilterError('fleet_report: %s' % error)


def fleet_report_render(report, fmt='json', template_dir=None):
    """The report as JSON, JUnit XML, or Markdown or HTML from their templates (the operator's first)."""
    if not isinstance(report, dict) or report.get('format') != report_lib.FORMAT:
        raise AnsibleFilterError('fleet_report_render expects a report made by npu.ascend.fleet_report')
    try:
        if fmt in fleet_report_templates.TEMPLATES:
            return fleet_report_templates.render(report, fmt, template_dir=template_dir or None)
        return report_lib.render(report, fmt)
    except fleet_report_templates.ReportTemplateError as error:
        raise AnsibleFilterError('fleet_report_render: %s. Fix: correct the template in fleet_report_template_dir '
                                 '(%s), or leave fleet_report_template_dir empty for the built-in templates'
                                 % (error, template_dir or 'not set'))
    except ValueError as error:
        raise AnsibleFilterError('fleet_report_render: %s' % error)


class FilterModule(object):
    """The fleet report."""

    def filters(self):
        return {'fleet_report': fleet_report, 'fleet_report_render': fleet_report_render}
