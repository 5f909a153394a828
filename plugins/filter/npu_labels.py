# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.npu_labels``: the Kubernetes labels of an NPU node, from its facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def npu_labels(facts, boards=None, chips=None, domain=None, accelerator_type='',
               worker_selector=True, noded=False, runtime_handler='ascend', vnpus=None, super_pod=None):
    """``{labels, notes, resource_name, sources}`` for ``ansible_facts.ascend`` of one node (``domain``: empty for the default)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
        DEFAULT_DOMAIN, label_sources, node_labels, resource_name)
    if not isinstance(facts, dict):
        raise AnsibleFilterError('npu_labels expects ansible_facts.ascend (a dict from '
                                 'npu.ascend.ascend_facts), got %s' % type(facts).__name__)
    try:
        labels, notes = node_labels(facts, boards=boards, chips=chips, domain=domain or DEFAULT_DOMAIN,
                                    accelerator_type_override=accelerator_type or '',
                                    worker_selector=bool(worker_selector), noded=bool(noded),
                                    runtime_handler=runtime_handler or '', super_pod=super_pod)
        sources = label_sources(labels, domain or DEFAULT_DOMAIN)
        if vnpus is not None:
            from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import offered_labels
            offered = offered_labels(domain or DEFAULT_DOMAIN, vnpus)
            labels.update(offered)
            sources.update((key, 'ansible_facts.ascend.npu_smi.vnpus') for key in offered)
    except ValueError as exc:
        raise AnsibleFilterError('npu_labels: %s' % exc)
    return {'labels': labels, 'notes': notes, 'resource_name': resource_name(facts.get('chip_family')),
            'sources': sources}


class FilterModule(object):
    """Kubernetes labels for Ascend NPU nodes."""

    def filters(self):
        return {'npu_labels': npu_labels}
