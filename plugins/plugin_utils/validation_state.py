# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the validate role: for one host, its Node among those read, whether it needs a
validation pod, what the pod requests and runs, and how the host's result reads once the play's
pods ran. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.k8s.npu_labels import label_keys, parse_taint, taints_with
from ansible_collections.npu.ascend.plugins.plugin_utils.vnpu_plan import expected_allocatable
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

_HUAWEI_ACCELERATOR = 'huawei-'
# A Pod name is a DNS label: at most 63 characters of a-z, 0-9 and '-'.
_POD_NAME_LENGTH = 63


def _node_objects(reads):
    """The Node objects of ``reads``: lists of Nodes, k8s_info results, or None (a read that did not run)."""
    for read in reads or []:
        if isinstance(read, list):
            objects = read
        elif isinstance(read, Mapping) and not read.get('skipped'):
            objects = read.get('resources') or []
        else:
            continue
        for item in objects:
            if isinstance(item, Mapping):
                yield item


def find_node(reads, name):
    """The Node named ``name`` among ``reads``, or None."""
    for item in _node_objects(reads):
        if _mapping(item.get('metadata')).get('name') == name:
            return item
    return None


def pod_name(node_name):
    """The validation pod's name for a Node: ``npu-validate-<node>`` as a DNS label."""
    name = ('npu-validate-' + re.sub('[^a-z0-9-]+', '-', str(node_name).lower()))[:_POD_NAME_LENGTH]
    return re.sub('-+$', '', name)


def _whole_request(chip_family):
    if chip_family in (None, ''):
        return 1, 1
    row = hardware_catalogue.chip_family_row(chip_family)
    return hardware_catalogue.whole_npu_request(row['family']), row['dies_per_npu']


def _count(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _request(options, profile, labels, keys):
    """``(resource, npu_count, dies_per_npu)`` of the pod."""
    # A node split into static vNPUs (npu.ascend.vnpu labels it) is validated through one vNPU.
    vnpus = expected_allocatable('', 0, labels, keys['domain'])
    accelerator = str(labels.get('accelerator') or '')
    resource = (options.get('resource_name') or profile.get('resource_name')
                or (sorted(vnpus)[0] if vnpus else '')
                or ('huawei.com/' + accelerator[len(_HUAWEI_ACCELERATOR):]
                    if accelerator.startswith(_HUAWEI_ACCELERATOR) else ''))
    # Else the smallest request that holds whole NPUs of the node's chip (2 on Atlas A3: both dies of
    # one NPU; 1 elsewhere), from the chip-family label k8s_node writes.
    whole_chips = not profile.get('resource_name') and not options.get('resource_name') and not vnpus
    npu_count, dies_per_npu = _whole_request(labels.get(keys['domain'] + '/chip-family')) if whole_chips else (1, 1)
    if _count(options.get('npu_count')) > 0:
        npu_count = _count(options.get('npu_count'))
    return resource, npu_count, dies_per_npu


def _refusal(host, node_name, node, run, resource, image, profile_name):
    prefix = '%s: validation: ' % host
    if node is None:
        return prefix + ('the cluster has no Node named %s. Fix: join the host first, or set npu_ascend_k8s_node_name '
                         'to its Node\'s name.' % node_name)
    if run and not resource:
        return prefix + ('no NPU resource is known for node %s (it has no Huawei accelerator label). Fix: run '
                         'npu.ascend.k8s_node first, or set validate_k8s_resource_name.' % node_name)
    if run and not image:
        return prefix + ('the %s profile has no default image. Fix: set validate_k8s_image (for Alibaba, the ResNet-50 '
                         'example image in your registry, with validate_k8s_registry for its credentials).'
                         % profile_name)
    return None


def _outcome(host, node_name, state, keys, fleet):
    """``(passed, message)`` of the host once the play's validation step ran (or did not)."""
    if not state['run']:
        if state['needed']:
            return True, '%s: would validate node %s with a pod (not in a dry run).' % (host, node_name)
        return True, ('%s: already validated (driver %s); set validate_k8s_force to validate again.'
                      % (host, state['validated_value']))
    outcome = _mapping(_mapping(_mapping(fleet).get('hosts')).get(host))
    if not outcome:
        return False, ('%s: validation: the one step of the pods of the play gave no result for this host. Fix: run '
                       'again.' % host)
    report = str(outcome.get('report') or '')
    if not outcome.get('failed'):
        return True, '%s: validation passed: %s' % (host, report)
    if outcome.get('msg'):
        return False, str(outcome['msg'])
    return False, (
        '%s: validation failed: %s. The taint %s is not lifted. Fix: for Insufficient %s, check that the device plugin '
        'runs on the node and advertises its NPUs (`kubectl describe node %s`); for a container without its '
        '/dev/davinciN or npu-smi, check that it ran through the Ascend Docker Runtime (validate_k8s_runtime_class, '
        'or the runtime as containerd\'s default; `ansible-playbook npu.ascend.doctor`); for a container that failed, '
        'read its log with validate_k8s_keep_pod set.'
        % (host, report.rstrip('.'), keys['unvalidated_taint'], state['resource'], node_name))


def validation_state(reads, options, fleet=None):
    """Everything the validate role decides about one host.

    ``reads``: what was read of the cluster's Nodes (lists of Node objects, k8s_info results; None
    or a skipped result for a read that did not run); ``options``: ``host``, ``node_name``,
    ``label_keys`` (``k8s_label_keys``), ``profile_name``, ``profile`` (``resource_name``, ``image``,
    ``command``, ``judge_output``), ``resource_name``, ``npu_count``, ``image``, ``command``,
    ``check_output``, ``force``, ``check_mode`` (the role's variables); ``fleet``: the result of the
    play's ``k8s_fleet_validate`` step (None before it ran).

    Returns ``node`` (None when no read has it), ``needed`` (not validated for the driver it runs,
    or still tainted, or forced), ``run`` (a pod is started: needed, found, not a dry run),
    ``validated_value``, ``pod_name``, ``resource``, ``npu_count``, ``dies_per_npu``, ``image``,
    ``command``, ``judge_output``, ``refusal`` (None, or the message for a node that is missing or
    whose pod lacks a resource or an image), ``passed`` and ``message`` (the host's result)."""
    options = _mapping(options)
    keys = _mapping(options.get('label_keys')) or label_keys(None)
    host = options.get('host') or 'localhost'
    node_name = options.get('node_name') or host
    profile = _mapping(options.get('profile'))
    node = find_node(reads, node_name)
    labels = _mapping(_mapping(_mapping(node).get('metadata')).get('labels'))
    taints = _mapping(_mapping(node).get('spec')).get('taints') or []
    # A node is validated for the driver it runs (the driver label of npu.ascend.k8s_node), or once
    # for good where no driver label exists (Alibaba's nodes).
    validated_value = labels.get(keys['driver']) or 'true'
    tainted = taints_with(taints, parse_taint(keys['unvalidated_taint']), present=False) != taints
    needed = bool(options.get('force')) or labels.get(keys['validated']) != validated_value or tainted
    resource, npu_count, dies_per_npu = _request(options, profile, labels, keys)
    command = list(options.get('command') or profile.get('command') or [])
    state = {
        'node': node, 'needed': needed, 'run': node is not None and needed and not options.get('check_mode'),
        'validated_value': validated_value, 'pod_name': pod_name(node_name),
        'resource': resource, 'npu_count': npu_count, 'dies_per_npu': dies_per_npu,
        'image': options.get('image') or profile.get('image') or '', 'command': command,
        # The output of the huawei profile's own command has a known form (module_utils/k8s/validation.py).
        'judge_output': bool(options.get('check_output')) and not options.get('command')
        and bool(profile.get('judge_output')),
    }
    state['refusal'] = _refusal(host, node_name, node, state['run'], resource, state['image'],
                                options.get('profile_name'))
    state['passed'], state['message'] = _outcome(host, node_name, state, keys, fleet)
    return state
