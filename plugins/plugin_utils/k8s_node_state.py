# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the k8s_node role: what the host's Node should carry, or why it is not labelled,
from the host's probe (``ansible_facts.ascend``) and the role's options; then how the play's one write
of the Nodes ended for the host. The role's tasks read the fields and act; ``roles/k8s_node/vars/main.yml``
keeps only names and constants. Pure functions, no Ansible imports.

The huawei profile labels a Node from the probe: a host without Ascend NPUs on the PCI bus, or whose
npu-smi fails, is refused with a message naming the host, the cause and the fix, left out of the play's
one write and stopped where the others' results are judged. Alibaba's nodes (the alibaba profile) are
labelled by ACK's own components: they get the taint only, and their probe is not read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import (
    label_sources, node_labels, resource_name)
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping
from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import offered_labels

PROFILES = ('huawei', 'alibaba')
# The resource Alibaba's device plugin advertises (docs/kubernetes.md, the alibaba profile).
ALIBABA_RESOURCE = 'aliyun.com/npu'
# Huawei's labels the role computes (npu_labels); uninstall removes them.
HUAWEI_LABELS = ('accelerator', 'host-arch', 'accelerator-type', 'server-usage', 'workerselector', 'nodeDEnable',
                 'huawei.com/topotree.superpodid')
EXTRA_LABELS_SOURCE = 'k8s_node_extra_labels'
# The label keys the state reads (module_utils/k8s/npu_labels.label_keys spells them).
_KEYS_READ = ('domain', 'validated', 'driver', 'unvalidated_taint')


def node_refusal(probe, npu_smi_error, host):
    """The message refusing ``host`` ('' when it is labelled).

    ``probe`` is the host's ``ansible_facts['ascend']``; ``npu_smi_error`` is npu-smi's error as the role
    reads it (none while a reboot is pending, when the chips still show the old driver).
    """
    probe = probe if isinstance(probe, Mapping) else {}
    if not probe.get('chip_family'):
        return ('%s: no Ascend NPU on the PCI bus (vendor 19e5, class 0x12), so there is nothing to label. Fix: '
                "remove the host from the play's group, or check `lspci -d 19e5:` on it." % host)
    if npu_smi_error:
        return '%s: %s' % (host, npu_smi_error)
    return ''


def _huawei_labels(probe, npu_smi, keys, options):
    """``{labels, notes, resource_name, sources}`` of a huawei node (the npu_labels filter's answer)."""
    domain = keys['domain']
    labels, notes = node_labels(
        probe, boards=npu_smi.get('boards') or [], chips=npu_smi.get('chips') or [], domain=domain,
        accelerator_type_override=options.get('accelerator_type') or '',
        worker_selector=bool(options.get('worker_selector', True)), noded=bool(options.get('noded')),
        runtime_handler=options.get('runtime_handler') or '', super_pod=npu_smi.get('super_pod'))
    sources = label_sources(labels, domain)
    if npu_smi.get('vnpus') is not None:
        offered = offered_labels(domain, npu_smi['vnpus'])
        labels.update(offered)
        sources.update((key, 'ansible_facts.ascend.npu_smi.vnpus') for key in offered)
    return {'labels': labels, 'notes': notes, 'resource_name': resource_name(probe.get('chip_family')),
            'sources': sources}


def k8s_node_state(probe, options):
    """What the k8s_node role decides about a host's Node.

    ``probe``: the host's ``ansible_facts.ascend`` (not read for the alibaba profile; None there). ``options``:
    ``host`` (the inventory name), ``profile`` (huawei or alibaba), ``node_name`` (the Node's name, the host's by
    default), ``label_keys`` (the collection's label and taint keys under the one label domain, as
    ``k8s_label_keys`` gives them), ``accelerator_type``, ``worker_selector``, ``noded``,
    ``runtime_handler`` ('' when the role creates no RuntimeClass), ``extra_labels``, ``taint_until_validated``,
    ``wait_seconds``, ``kubeconfig`` and ``context``.

    Returns ``name``, ``refusal`` (the
    message refusing the host, '' when its Node is labelled), ``labels`` (computed and extra), ``notes`` (why a
    label could not be computed), ``resource_name``, ``label_sources`` and ``wanted`` (the host's entry for
    ``k8s_fleet_nodes``, None when refused). TypeError or ValueError names a wrong input."""
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    profile = options.get('profile') or 'huawei'
    if profile not in PROFILES:
        raise ValueError('the profile must be one of %s, got %r' % (', '.join(PROFILES), profile))
    extra_labels = options.get('extra_labels') or {}
    if not isinstance(extra_labels, Mapping):
        raise TypeError('k8s_node_extra_labels must be a dict of label to value, got %s' % type(extra_labels).__name__)
    keys = options.get('label_keys')
    if not isinstance(keys, Mapping) or not all(keys.get(key) for key in _KEYS_READ):
        raise TypeError('label_keys must be what npu.ascend.k8s_label_keys returns (%s), got %r'
                        % (', '.join(_KEYS_READ), keys))
    refusal, computed = '', {'labels': {}, 'notes': [], 'resource_name': ALIBABA_RESOURCE, 'sources': {}}
    if profile == 'huawei':
        if probe is not None and not isinstance(probe, Mapping):
            raise TypeError('the probe must be what npu.ascend.ascend_facts returned (a dict), got %s'
                            % type(probe).__name__)
        probe = _mapping(probe)
        # While a reboot is pending the chips still show the old driver: npu-smi is not read then.
        reboot_pending = bool(probe.get('reboot_pending'))
        npu_smi = {} if reboot_pending else _mapping(probe.get('npu_smi'))
        refusal = node_refusal(probe, None if reboot_pending else probe.get('npu_smi_error'), host)
        if not refusal:
            computed = _huawei_labels(probe, npu_smi, keys, options)
    labels = dict(computed['labels'], **dict(extra_labels))
    label_sources_ = dict(computed['sources'], **dict((key, EXTRA_LABELS_SOURCE) for key in extra_labels))
    name = options.get('node_name') or host
    return {
        'name': name,
        'refusal': refusal,
        'labels': labels,
        'notes': list(computed['notes']),
        'resource_name': computed['resource_name'],
        'label_sources': label_sources_,
        'wanted': None if refusal else {
            'host': host, 'name': name, 'labels': labels, 'label_sources': label_sources_,
            'taint': keys['unvalidated_taint'], 'manage_taint': bool(options.get('taint_until_validated', True)),
            'validated_label': keys['validated'],
            # A node is validated only for the driver it runs: a driver upgrade brings the taint back.
            'validated_value': computed['labels'].get(keys['driver']) or 'true',
            'wait_seconds': int(options.get('wait_seconds', 60)),
            'kubeconfig': options.get('kubeconfig'), 'context': options.get('context')},
    }


def k8s_node_outcome(fleet_result, host, refusal=''):
    """The host's own result of the play's one write of the Nodes (k8s_fleet_nodes' ``hosts`` entry: ``name``,
    ``failed``, ``msg``, ``validated``, ``changed``), its refusal when refused, or a failure naming the host
    when the write gave it no result."""
    if refusal:
        return {'failed': True, 'validated': False, 'msg': refusal}
    found = _mapping(_mapping(fleet_result).get('hosts')).get(host)
    if isinstance(found, Mapping):
        return dict(found)
    return {'failed': True, 'validated': False,
            'msg': '%s: k8s_node: the one write of the Nodes of the play gave no result for this host. Fix: run again.'
                   % host}


def labels_to_remove(labels, domain, extra_labels=None):
    """The keys of ``labels`` (a Node's) that the role set, sorted: those under the collection's label
    ``domain``, Huawei's labels it computes (HUAWEI_LABELS) and the keys of ``extra_labels``."""
    if not isinstance(labels, Mapping):
        raise TypeError("the Node's labels must be a dict, got %s" % type(labels).__name__)
    if not isinstance(domain, str) or not domain:
        raise TypeError('the label domain must be a non-empty string, got %r' % (domain,))
    ours = set(HUAWEI_LABELS) | set(_mapping(extra_labels))
    return sorted(key for key in labels if key.startswith(domain + '/') or key in ours)
