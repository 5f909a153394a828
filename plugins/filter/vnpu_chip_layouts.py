# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.vnpu_state``, ``npu.ascend.vnpu_chip_layouts``, ``npu.ascend.vnpu_resource_labels`` and
``npu.ascend.vnpu_allocatable``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def vnpu_chip_layouts(chips, layout=None, per_chip=None):
    """The wanted vNPUs of every chip of a node (plugin_utils/vnpu_plan.chip_layouts)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import chip_layouts
    try:
        return chip_layouts(chips, layout, per_chip)
    except ValueError as exc:
        raise AnsibleFilterError('%s. Fix: correct vnpu_layout / vnpu_layout_per_chip (docs/vnpu.md)' % exc)


def vnpu_state(chips, options=None, plan_results=None):
    """Everything the vnpu role decides about a node (plugin_utils/vnpu_plan.role_state)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import role_state
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('vnpu_state: options must be a dict, got %s' % type(options).__name__)
    if plan_results is not None and not isinstance(plan_results, list):
        raise AnsibleFilterError('vnpu_state: plan_results must be the list of npu_vnpu results, got %s'
                                 % type(plan_results).__name__)
    try:
        return role_state(chips, options or {}, plan_results)
    except ValueError as exc:
        raise AnsibleFilterError('%s. Fix: correct vnpu_layout / vnpu_layout_per_chip (docs/vnpu.md)' % exc)


def vnpu_resource_labels(resources, domain, current_labels=None, split_chips=0):
    """The Node label patch for the vNPU resources a node offers (plugin_utils/vnpu_plan.resource_labels)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import resource_labels
    try:
        return resource_labels(domain, resources, current_labels, split_chips)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


def vnpu_allocatable(labels, whole_resource, healthy_chips, domain):
    """What the kubelet of a node should offer (plugin_utils/vnpu_plan.expected_allocatable)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import expected_allocatable
    try:
        return expected_allocatable(whole_resource, healthy_chips, labels, domain)
    except ValueError as exc:
        raise AnsibleFilterError('%s. Fix: run the npu.ascend.vnpu role again, which writes these labels' % exc)


class FilterModule(object):
    """vNPU layout helpers."""

    def filters(self):
        return {'vnpu_state': vnpu_state, 'vnpu_chip_layouts': vnpu_chip_layouts, 'vnpu_resource_labels': vnpu_resource_labels,
                'vnpu_allocatable': vnpu_allocatable}
