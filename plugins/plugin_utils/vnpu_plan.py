# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the vnpu role: which layout every chip of a node gets, and the Node labels
that say which vNPU resources the node offers. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

LABEL_PREFIX = 'vnpu-'
# Resource names start with "Ascend", so this one cannot be a resource's.
CHIPS_LABEL = 'chips'
_LABEL_NAME = re.compile(r'^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$')


def _whole(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError('%s must be a whole number, got %r' % (what, value))
    return value


def chip_layouts(chips, layout=None, per_chip=None):
    """``[{'npu_id', 'chip_id', 'name', 'vnpus'}]``: the wanted vNPUs of every chip npu-smi lists.

    ``layout`` (a list, or None) is every chip's; an entry of ``per_chip`` (``{npu, chip, vnpus}``)
    replaces it for its chip. A chip with neither is left out (left as it is). A template may be
    given as a plain string. ValueError names a per-chip entry for a chip the node does not have."""
    if layout is not None and not isinstance(layout, list):
        raise ValueError('vnpu_layout must be a list of vNPUs (template, optional id and vgroup), got %s'
                         % type(layout).__name__)
    present = [(chip.get('npu_id'), chip.get('chip_id')) for chip in chips or []]
    specific = {}
    for index, entry in enumerate(per_chip or []):
        if not isinstance(entry, dict) or set(entry) != set(('npu', 'chip', 'vnpus')):
            raise ValueError('vnpu_layout_per_chip entry %d must have exactly npu, chip and vnpus, got %r'
                             % (index, entry))
        key = (_whole(entry['npu'], 'vnpu_layout_per_chip npu'), _whole(entry['chip'], 'vnpu_layout_per_chip chip'))
        if key not in present:
            raise ValueError('vnpu_layout_per_chip names NPU %s chip %s, which npu-smi does not list on this node '
                             '(it lists %s)' % (key[0], key[1], ', '.join('%s/%s' % item for item in present) or
                                                'no chip'))
        if key in specific:
            raise ValueError('vnpu_layout_per_chip names NPU %s chip %s twice' % key)
        if not isinstance(entry['vnpus'], list):
            raise ValueError('vnpu_layout_per_chip NPU %s chip %s: vnpus must be a list' % key)
        specific[key] = entry['vnpus']
    result = []
    for chip in chips or []:
        key = (chip.get('npu_id'), chip.get('chip_id'))
        wanted = specific.get(key, layout)
        if wanted is None:
            continue
        vnpus = [{'template': entry} if isinstance(entry, str) else entry for entry in wanted]
        result.append({'npu_id': key[0], 'chip_id': key[1], 'name': chip.get('name'), 'vnpus': vnpus})
    return result


def resource_labels(domain, resources, current_labels, split_chips=0):
    """The label patch for a Node: ``<domain>/vnpu-<resource>: "<count>"`` for every vNPU resource
    the node offers (``resources``: name to count, or a list of such dicts, one per chip, summed),
    and None (remove) for such labels it no longer offers; ``<domain>/vnpu-chips`` counts the
    chips split (``split_chips``), which the health gate needs. Only the changes."""
    prefix = '%s/%s' % (domain, LABEL_PREFIX)
    if isinstance(resources, list):
        total = {}
        for part in resources:
            for name, count in (part or {}).items():
                total[name] = total.get(name, 0) + int(count)
        resources = total
    wanted = {}
    for name, count in sorted((resources or {}).items()):
        if not _LABEL_NAME.fullmatch(LABEL_PREFIX + name):
            raise ValueError('vNPU resource %r cannot be a label name' % name)
        wanted[prefix + name] = str(int(count))
    if wanted and int(split_chips or 0) > 0:
        wanted[prefix + CHIPS_LABEL] = str(int(split_chips))
    changes = {}
    for key, value in (current_labels or {}).items():
        if key.startswith(prefix) and key not in wanted:
            changes[key] = None
    for key, value in wanted.items():
        if (current_labels or {}).get(key) != value:
            changes[key] = value
    return changes


def offered_labels(domain, chips):
    """The vNPU labels for the vNPUs a node's chips hold now (``chips``: ascend_facts'
    ``npu_smi.vnpus``, each with ``vnpus`` and ``resources``): what ``resource_labels`` gives a
    Node that carries none of them yet. Only labels to set: the vnpu role, which changes the
    layout, removes those a node no longer offers."""
    chips = chips or []
    split = len([chip for chip in chips if chip.get('vnpus')])
    return resource_labels(domain, [chip.get('resources') or {} for chip in chips], {}, split_chips=split)


def expected_allocatable(whole_resource, healthy_chips, labels, domain):
    """What a node's kubelet should offer once its device plugin runs: ``{resource: count}``.

    Without vNPU labels (``resource_labels``), every healthy chip as ``whole_resource``; with
    them, the chips not split as ``whole_resource`` and every vNPU resource its count."""
    prefix = '%s/%s' % (domain, LABEL_PREFIX)
    expected = {}
    split = 0
    for key, value in (labels or {}).items():
        if not key.startswith(prefix):
            continue
        name = key[len(prefix):]
        try:
            count = int(value)
        except (TypeError, ValueError):
            raise ValueError('label %s=%r is not a count' % (key, value))
        if name == CHIPS_LABEL:
            split = count
        else:
            expected['huawei.com/' + name] = count
    if whole_resource:
        expected[whole_resource] = max(int(healthy_chips) - split, 0)
    return expected


def _plan_line(result):
    chip, plan = result.get('chip') or {}, result.get('plan') or {}
    where = 'NPU %s chip %s (%s)' % (chip.get('npu_id'), chip.get('chip_id'), chip.get('name'))
    if plan.get('change'):
        return '%s: destroy [%s], create [%s]%s%s' % (
            where, ', '.join(plan.get('destroy') or []), ', '.join(plan.get('create') or []),
            ', set container mode' if plan.get('mode') else '', ', set config recovery' if plan.get('recover') else '')
    templates = ', '.join(str((vnpu or {}).get('template')) for vnpu in result.get('vnpus') or [])
    return '%s: as declared (%s)' % (where, templates or 'whole chip')


def role_state(chips, options, plan_results=None):
    """Everything the vnpu role decides about a node.

    ``chips``: what npu-smi lists (``npu_smi_info``'s ``npu_smi.chips``); ``options``: ``host``,
    ``layout``, ``per_chip``, ``force``, ``kubernetes``, ``drain`` (the role's variables);
    ``plan_results``: the results of the role's check-mode ``npu_vnpu`` run over ``layouts`` (None
    before it ran). Returns ``layouts`` (``chip_layouts``), ``split_chips`` (how many chips the
    layout splits), and once planned ``changing`` (the layouts of the chips whose vNPUs differ),
    ``changed`` (those chips as npu_vnpu names them), ``in_use`` (the vNPUs in use that would go),
    ``resources`` (one dict per chip), ``lines`` (the plan, one line per chip), ``drain`` (whether the
    node is drained first), ``force`` (whether npu_vnpu may destroy vNPUs it saw in use) and
    ``refusal`` (None, or the message the role fails with before anything changes)."""
    options = options or {}
    layouts = chip_layouts(chips, options.get('layout'), options.get('per_chip'))
    state = {'layouts': layouts, 'split_chips': len([chip for chip in layouts if chip['vnpus']])}
    if plan_results is None:
        return state
    results = [result for result in plan_results if isinstance(result, dict)]
    changing = [result for result in results if (result.get('plan') or {}).get('change')]
    in_use = [vnpu for result in results for vnpu in (result.get('plan') or {}).get('in_use') or []]
    drainable = bool(options.get('kubernetes')) and bool(options.get('drain'))
    state.update({
        'changing': [result.get('item') for result in changing],
        'changed': [result.get('chip') for result in changing],
        'in_use': in_use,
        'resources': [result.get('resources') or {} for result in results],
        'lines': [_plan_line(result) for result in results],
        'drain': bool(changing) and bool(in_use) and drainable,
        # Once drained, what npu-smi still listed in use is free (the drain waited for the pods).
        'force': bool(options.get('force')) or drainable,
        'refusal': None,
    })
    if in_use and not state['force']:
        busy = ['NPU %s chip %s (%s): %s' % ((result.get('chip') or {}).get('npu_id'),
                                             (result.get('chip') or {}).get('chip_id'),
                                             (result.get('chip') or {}).get('name'),
                                             ', '.join(result['plan']['in_use']))
                for result in results if (result.get('plan') or {}).get('in_use')]
        state['refusal'] = (
            '%s: the declared vNPU layout destroys vNPUs a container is using: %s. Nothing was changed. Fix: stop the '
            'containers that use them, or let the role drain the node (vnpu_kubernetes and vnpu_drain true), then run '
            'again; set vnpu_force to true only once nothing runs on them.' % (options.get('host'), '; '.join(busy)))
    return state
