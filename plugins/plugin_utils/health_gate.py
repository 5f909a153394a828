# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the health_gate role: everything the gate decides about one node, from its
probe (``ansible_facts.ascend``), its wanted stack and, when Kubernetes is checked, the reads of
its Node. Each check is ``None`` (passed) or the message the role fails the host with. Pure
functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys
from ansible_collections.npu.ascend.plugins.plugin_utils import planner
from ansible_collections.npu.ascend.plugins.plugin_utils.kernel_judgement import kernel_problem
from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import expected_allocatable
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

# The k8s_info polls of the wait are this many seconds apart.
POLL_SECONDS = 3
_HUAWEI_ACCELERATOR = 'huawei-'


def _versions_problem(host, probe, wanted):
    reboot = bool(probe.get('reboot_pending'))
    outdated = planner.plan_node(wanted, probe)['outdated']
    if not reboot and not outdated:
        return None
    parts = ['%s: health gate:' % host]
    if reboot:
        parts.append('a reboot is still pending for the new firmware or driver (reboot the node, then run again);')
    if outdated:
        parts.append('; '.join(item['text'] for item in outdated) + ';')
    parts.append('Fix: read the installer log /var/log/ascend_seclog/ascend_install.log on the node, then run the '
                 'playbook again.')
    return ' '.join(parts)


def _kernel_problem(host, probe, install_path):
    problem = kernel_problem(probe, install_path)
    if problem is None:
        return None
    return '%s: health gate: %s. Fix: %s.' % (host, problem['detail'], problem['fix'])


def _chips_problem(host, probe, chips):
    error = probe.get('npu_smi_error')
    prefix = '%s: health gate: ' % host
    if error is not None:
        text = '%s.' % str(error).rstrip('.')
        if 'Fix' not in str(error):
            text += ' Fix: check the driver (`lsmod | grep drv_`, dmesg), reboot if the driver was just replaced.'
        return prefix + text
    if not probe.get('npu_smi_path'):
        return prefix + 'npu-smi is not installed. Fix: install the driver (npu.ascend.hdk).'
    if not chips:
        return prefix + 'npu-smi lists no chip. Fix: check the cards on PCI (lspci -d 19e5:) and the driver.'
    sick = [chip for chip in chips if not chip.get('healthy')]
    if not sick:
        return None
    return prefix + ''.join('NPU %s chip %s (bus %s) health is %s; ' % (chip.get('npu_id'), chip.get('chip_id'),
                                                                        chip.get('bus_id'), chip.get('health'))
                            for chip in sick) + \
        'Fix: see `npu-smi info -t health -i <npu> -c <chip>`, reboot or reseat the card, then run again.'


def _node_object(read):
    """The Node of one k8s_info read (its ``resources``), or None when the read found none or did not run."""
    resources = _mapping(read).get('resources') or []
    return resources[0] if len(resources) == 1 and isinstance(resources[0], Mapping) else None


def _count(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _kubernetes(host, chips, options, node_reads):
    """What Kubernetes should offer and whether it does, from the reads of the Node (oldest first; a
    read that did not run, a skipped task's result, is left out)."""
    keys = _mapping(options.get('label_keys')) or label_keys(None)
    node_name = options.get('node_name') or host
    timeout = _count(options.get('timeout_seconds'))
    reads = [read for read in (node_reads or []) if isinstance(read, Mapping) and not read.get('skipped')]
    first = _node_object(reads[0]) if reads else None
    labels = _mapping(_mapping(_mapping(first).get('metadata')).get('labels'))
    accelerator = str(labels.get('accelerator') or '')
    resource = options.get('resource_name') or (
        'huawei.com/' + accelerator[len(_HUAWEI_ACCELERATOR):] if accelerator.startswith(_HUAWEI_ACCELERATOR) else '')
    state = {'resource': resource, 'node_name': node_name, 'retries': -(-timeout // POLL_SECONDS),
             'delay': POLL_SECONDS, 'expected': {}, 'offered': {}, 'settled': False, 'problem': None}
    prefix = '%s: health gate: node %s ' % (host, node_name)
    if not resource:
        state['problem'] = prefix + ('has no Huawei accelerator label, so its NPU resource is unknown. Fix: run '
                                     'npu.ascend.k8s_node (playbooks/kubernetes.yml) or set health_gate_resource_name.')
        return state
    last = _node_object(reads[-1])
    last_labels = _mapping(_mapping(_mapping(last).get('metadata')).get('labels'))
    allocatable = _mapping(_mapping(_mapping(last).get('status')).get('allocatable'))
    # A node split into static vNPUs (npu.ascend.vnpu labels it) offers them besides its whole chips.
    expected = expected_allocatable(resource, len(chips), last_labels, keys['domain'])
    offered = dict((name, _count(allocatable.get(name, '0'))) for name in expected)
    state.update(expected=expected, offered=offered, settled=last is not None and offered == expected)
    # One read only: the wait did not run (a dry run), so there is no count to judge.
    if len(reads) < 2 or state['settled']:
        return state
    if len(expected) > 1:
        state['problem'] = prefix + (
            'offers %s after %s s, expected %s from its %d healthy chips and its vNPU layout (labels %s/vnpu-*). '
            'Fix: restart the device plugin on the node (it reads the vNPUs only when it starts) and check that it '
            'is not labelled %s=paused; if npu-smi info -t info-vnpu lists fewer vNPUs (a reboot without '
            'vnpu-cfg-recover loses them), run npu.ascend.vnpu again.'
            % (json.dumps(offered), timeout, json.dumps(expected), len(chips), keys['domain'], keys['device_plugin']))
    else:
        state['problem'] = prefix + (
            'offers %d %s after %s s, its npu-smi shows %d healthy chips. Fix: check the device plugin pod on the '
            'node and its log (/var/log/mindx-dl/devicePlugin/devicePlugin.log: "failed to get card list" means the '
            'driver is not usable from it), and that the node is not labelled %s=paused.'
            % (_count(allocatable.get(resource, '0')), resource, timeout, len(chips), keys['device_plugin']))
    return state


def gate_state(probe, wanted, options, node_reads=None):
    """Everything the gate decides about a node.

    ``probe``: ``ansible_facts.ascend`` (read with ``npu_smi: info``); ``wanted``: component to
    version (``ascend_wanted_stack``); ``options``: ``host``, ``install_path``, and for Kubernetes
    ``node_name``, ``resource_name``, ``label_keys`` (``k8s_label_keys``), ``timeout_seconds``; ``node_reads``: the
    k8s_info results of the node's Node, oldest first (None: Kubernetes is not checked).

    Returns ``versions``, ``kernel`` and ``chips`` (each None or the failure message, checked in
    that order), ``kubernetes`` (None, or ``resource``, ``expected``, ``offered``, ``settled``,
    ``retries``, ``delay``, ``problem``) and ``result`` (``chips``, ``versions``: what the role
    publishes). ValueError for a probe that is not a dict or a vNPU label that is not a count."""
    if not isinstance(probe, Mapping):
        raise ValueError('expects what npu.ascend.ascend_facts returned (a dict), got %s' % type(probe).__name__)
    options = _mapping(options)
    host = options.get('host') or 'localhost'
    chips = [chip for chip in _mapping(probe.get('npu_smi')).get('chips') or [] if isinstance(chip, Mapping)]
    installed = _mapping(probe.get('installed'))
    state = {
        'versions': _versions_problem(host, probe, _mapping(wanted)),
        'kernel': _kernel_problem(host, probe, options.get('install_path')),
        'chips': _chips_problem(host, probe, chips),
        'kubernetes': None if node_reads is None else _kubernetes(host, chips, options, node_reads),
        'result': {'chips': len(chips),
                   'versions': dict((component, record.get('version')) for component, record in installed.items()
                                    if isinstance(record, Mapping) and record)},
    }
    return state
