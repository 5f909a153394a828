# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.fleet_report`` and ``npu.ascend.fleet_report_render``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def fleet_report(nodes, previous=None, run=None, generated_at=None, domain=None):
    """The report document from one input dict per node (see fleet_report.yml)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as report_lib
    try:
        return report_lib.report_from_inputs(nodes, previous=previous, run=run, generated_at=generated_at, domain=domain)
    except ValueError as error:
        raise AnsibleFilterError('fleet_report: %s' % error)


def fleet_report_render(report, fmt='json', template_dir=None):
    """The report as JSON, JUnit XML, or Markdown or HTML from their templates (the operator's first)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report as report_lib
    from ansible_collections.npu.ascend.plugins.plugin_utils import fleet_report_templates
    if not isinstance(report, dict) or report.get('format') != report_lib.FORMAT:
        raise AnsibleFilterError('fleet_report_render expects a report made by npu.ascend.fleet_report')
    try:
        return fleet_report_templates.render_format(report, fmt, template_dir=template_dir)
    except ValueError as error:
        raise AnsibleFilterError('fleet_report_render: %s' % error)


class FilterModule(object):
    """The fleet report."""

    def filters(self):
        return {'fleet_report': fleet_report, 'fleet_report_render': fleet_report_render}
