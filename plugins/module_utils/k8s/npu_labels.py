# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes node labels and taints for an Ascend NPU node (MindCluster's labels; docs/huawei-sources.md).

Two kinds of labels come out of the node's facts:

- the ones Huawei's device plugin and scheduler read (``accelerator``, ``host-arch``,
  ``accelerator-type``, ``server-usage``, ``workerselector``, ``nodeDEnable``);
- our own, under a domain prefix, which say what the node holds (chip, NPU count, product,
  driver, firmware, CANN and Ascend Docker Runtime versions) so that workloads and operators
  can select on them.

Labels the node should *not* carry (a component that was uninstalled, an unknown accelerator
type) come out as ``None``: in a JSON merge patch that removes the key, so a label never
outlives what it describes. Pure functions, no I/O, nothing from Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware import pci
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import parse_board_id

# The label domain of every role, filter and report of the collection when the inventory sets no
# npu_ascend_label_domain: the one default (docs/kubernetes.md, "One label domain, one Node name").
DEFAULT_DOMAIN = 'npu.ascend'

LABEL_VALUE_MAX = 63
DNS_SUBDOMAIN_MAX = 253
# Kubernetes' own rules (apimachinery validation: IsValidLabelValue, IsQualifiedName, IsDNS1123Subdomain),
# always matched whole with fullmatch: `$` would also match before a final newline.
_LABEL_VALUE = re.compile(r'(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?')
_LABEL_NAME = _LABEL_VALUE
_DNS_LABEL = re.compile(r'[a-z0-9](?:[-a-z0-9]*[a-z0-9])?')
_LABEL_TEXT = 'alphanumeric at both ends, with only "-", "_" and "." inside'
TAINT_EFFECTS = ('NoSchedule', 'PreferNoSchedule', 'NoExecute')
_NOT_LABEL_CHARACTER = re.compile(r'[^-A-Za-z0-9_.]+')

# Chip family (as npu.ascend.ascend_facts reports it) -> the value of Huawei's `accelerator`
# label (the hardware catalogue's).
ACCELERATORS = hardware_catalogue.family_values('accelerator')
HOST_ARCHES = {
    'x86_64': 'huawei-x86',
    'amd64': 'huawei-x86',
    'aarch64': 'huawei-arm',
    'arm64': 'huawei-arm',
}

# Board ids (`npu-smi info -t board`, "Board ID") that Huawei's device plugin treats as inference
# hardware, per chip family (the hardware catalogue's). It labels nothing
# itself: an Atlas 800I A2 node needs `server-usage=infer` to be told apart from a training Atlas 800T A2.
_INFERENCE_BOARD_IDS = dict((family, frozenset(ids)) for family, ids
                            in hardware_catalogue.family_values('inference_board_ids').items())
# Products known from their PCI subsystem id (npu.ascend.ascend_facts) that are cards, not modules.
CARD_PRODUCTS = frozenset(row['name'] for row in hardware_catalogue.PRODUCTS if row['card'])

WORKER_SELECTOR = 'dls-worker-node'
# Chip families whose servers can be SuperPoD members (the hardware catalogue's A3).
_SUPER_POD_FAMILIES = frozenset(family for family, types
                                in hardware_catalogue.family_values('super_pod_accelerator_types').items() if types)
# The SuperPoD id label MindCluster's device plugin writes on an Atlas A3 node that is a SuperPoD member
# and Volcano's topology-aware scheduling reads (docs/huawei-sources.md, "Atlas A3 in Kubernetes"). The
# server index has no label of Huawei's on A3 (an annotation, serverIndex): it is ours, under the domain.
SUPER_POD_ID_LABEL = 'huawei.com/topotree.superpodid'

# Where node_labels takes each label from (its name, without the domain of our own), for a message
# naming a label Kubernetes would refuse: the probe's fact or the role variable.
LABEL_SOURCES = {
    'accelerator': 'ansible_facts.ascend.chip_family',
    'host-arch': 'ansible_facts.ascend.arch',
    'accelerator-type': 'k8s_node_accelerator_type, else ansible_facts.ascend (chip_family, npu_count, product), '
                        'the npu-smi board id and SuperPoD membership (npu-smi info -t spod-info)',
    SUPER_POD_ID_LABEL: 'ansible_facts.ascend.npu_smi.super_pod.super_pod_id (npu-smi info -t spod-info)',
    'super-pod-server-index': 'ansible_facts.ascend.npu_smi.super_pod.server_index (npu-smi info -t spod-info)',
    'server-usage': 'the npu-smi board id (ansible_facts.ascend.npu_smi.boards)',
    'workerselector': 'k8s_node_worker_selector',
    'nodeDEnable': 'k8s_node_noded',
    'chip-family': 'ansible_facts.ascend.chip_family',
    'chip': 'ansible_facts.ascend.npu_smi.chips[].name',
    'npu-count': 'ansible_facts.ascend.npu_smi.chips, else ansible_facts.ascend.npu_count',
    'product': 'ansible_facts.ascend.product',
    'driver': 'ansible_facts.ascend.installed.driver.version',
    'firmware': 'ansible_facts.ascend.installed.firmware.version',
    'cann': 'ansible_facts.ascend.installed.toolkit.version',
    'ascend-docker-runtime': 'ansible_facts.ascend.installed.docker_runtime.version',
    'runtime-handler': 'k8s_node_runtime_handler',
    'fabric': 'ansible_facts.ascend.fabric',
}


def label_sources(labels, domain=DEFAULT_DOMAIN):
    """Label -> where node_labels took it from (LABEL_SOURCES), for the labels of ``labels`` it knows."""
    prefix = '%s/' % domain
    sources = {}
    for key in labels or {}:
        name = key[len(prefix):] if key.startswith(prefix) else key
        if name in LABEL_SOURCES:
            sources[key] = LABEL_SOURCES[name]
    return sources


def label_value(text):
    """A valid Kubernetes label value made from ``text``, or None when nothing is left.

    Characters a label value cannot hold become ``-`` (``Atlas 800I A2`` -> ``Atlas-800I-A2``),
    the ends are trimmed to alphanumerics and the result is cut to 63 characters.
    """
    if text is None:
        return None
    value = _NOT_LABEL_CHARACTER.sub('-', str(text).strip())
    value = value[:LABEL_VALUE_MAX]
    value = re.sub(r'^[^A-Za-z0-9]+', '', value)
    value = re.sub(r'[^A-Za-z0-9]+$', '', value)
    return value or None


def is_label_value(text):
    return isinstance(text, str) and _value_problem(text) is None


def _check_domain(domain):
    """The domain prefix of our labels must be a DNS subdomain (lower case, at most 253)."""
    domain = str(domain or '')
    parts = domain.split('.')
    if not domain or len(domain) > DNS_SUBDOMAIN_MAX or not all(_DNS_LABEL.fullmatch(part) for part in parts):
        raise ValueError('label domain %r is not a DNS subdomain (lower-case letters, digits, '
                         '"-" and ".", for example npu.ascend or npu.example.com)' % (domain,))
    return domain


def label_keys(domain=None):
    """The keys of the collection's own labels and taint under ``domain`` (None or empty: DEFAULT_DOMAIN).

    The one place that spells them: k8s_node writes them, validate lifts the taint, the DaemonSets
    tolerate it and leave a paused node, k8s_maintenance and the upgrade playbook write and read
    the upgrade state, doctor and the fleet report read them. Built from one domain, they cannot
    disagree. ValueError for a domain that is not a DNS subdomain.
    """
    domain = _check_domain(domain or DEFAULT_DOMAIN)
    keys = dict((name, '%s/%s' % (domain, suffix)) for name, suffix in (
        ('validated', 'validated'), ('driver', 'driver'), ('runtime_handler', 'runtime-handler'),
        ('upgrade_state', 'upgrade-state'), ('device_plugin', 'device-plugin'), ('unvalidated', 'unvalidated'),
        ('fabric', 'fabric')))
    keys['domain'] = domain
    # The until-validated taint, as npu.ascend.k8s_taints takes it.
    keys['unvalidated_taint'] = '%s=true:NoSchedule' % keys['unvalidated']
    return keys


def _check_label_key(key):
    """``[prefix/]name`` as Kubernetes accepts it; ValueError otherwise."""
    problem = _key_problem(key)
    if problem:
        raise ValueError('label key %r: %s' % (key, problem))
    return key


def _key_problem(key):
    if not isinstance(key, str):
        return 'a key must be a string, not %s' % type(key).__name__
    prefix, separator, name = key.rpartition('/')
    if separator:
        try:
            _check_domain(prefix)
        except ValueError:
            return ('the prefix before "/" must be a DNS subdomain of at most %d characters (lower-case letters, '
                    'digits, "-" and ".")' % DNS_SUBDOMAIN_MAX)
    if not name or len(name) > LABEL_VALUE_MAX or not _LABEL_NAME.fullmatch(name):
        return 'the name part must be 1-%d characters, %s' % (LABEL_VALUE_MAX, _LABEL_TEXT)
    return None


def label_text(value):
    """``value`` as the string a label holds: an integer from the inventory (``rack: 12``) is the string
    Kubernetes stores (``"12"``), so that the next run compares equal; anything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def label_problem(key, value):
    """Why the API server would refuse the label ``key=value`` (None removes it), or None when it takes it.

    Kubernetes' rules, as ``kubectl label`` checks them before sending: the key is an optional DNS
    subdomain prefix (at most 253 characters) and ``/``, then a name of 1 to 63 characters; the value is
    empty or up to 63 characters; names and values are alphanumeric at both ends with ``-``, ``_`` and
    ``.`` inside (no space, ``/``, newline)."""
    problem = _key_problem(key)
    if problem:
        return 'key: ' + problem
    value = label_text(value)
    if value is None:
        return None
    if not isinstance(value, str):
        return 'the value must be a string, not %s (quote it)' % type(value).__name__
    return _value_problem(value)


def _value_problem(value):
    if len(value) > LABEL_VALUE_MAX:
        return 'the value has %d characters, at most %d are allowed' % (len(value), LABEL_VALUE_MAX)
    if not _LABEL_VALUE.fullmatch(value):
        return 'the value must be empty or %s' % _LABEL_TEXT
    return None


def split_labels(labels, sources=None, default_source='its labels'):
    """``(good, refused)``: the labels the API server takes (integers as their strings), and one
    ``{key, value, source, reason}`` for each it would refuse, ``source`` from ``sources`` (key -> where it
    came from: the inventory variable or the probe's fact) or ``default_source``."""
    good, refused = {}, []
    for key, value in (labels or {}).items():
        problem = label_problem(key, value)
        if problem:
            refused.append({'key': key, 'value': value, 'source': (sources or {}).get(key) or default_source,
                            'reason': problem})
        else:
            good[key] = label_text(value)
    return good, sorted(refused, key=lambda item: str(item['key']))


def refused_labels_text(refused):
    """One clause per refused label: ``key='value' (from source): reason``."""
    return '; '.join('%s=%r (from %s): %s' % (item['key'], item['value'], item['source'], item['reason'])
                     for item in refused)


def accelerator_type(chip_family, npu_count, board_id=None, product=None):
    """Huawei's ``accelerator-type`` for a node, or None when the facts do not settle it.

    Only the 910 families are scheduled by form factor (the hardware catalogue's values). A card
    (Atlas 300T/300I A2, from the product or the card board ids) is its family's card type
    (``card-910b-2``); a product the catalogue gives a type has it (Atlas 900 A3 SuperPoD:
    ``module-a3-16-super-pod``) when the node holds that product's NPU devices; other module
    servers go by NPU device count (``module-910b-8``, ``module-910b-16``, ``module-a3-16``). The
    first-generation 910 cannot be told apart from its PCI ids or board ids (an Atlas 800 module
    server and an Atlas 300T card look alike), so it needs an explicit value.
    """
    try:
        row = hardware_catalogue.chip_family_row(chip_family)
    except ValueError:
        return None
    if row['family'] != chip_family:
        return None
    board = parse_board_id(board_id)
    if row['card_accelerator_type'] and (product in CARD_PRODUCTS or board in row['card_board_ids']):
        return row['card_accelerator_type']
    product_row = hardware_catalogue.product_row(product)
    if (product_row and product_row['family'] == chip_family and product_row['accelerator_type']
            and npu_count == product_row['npus'] * product_row['chips_per_npu']):
        return product_row['accelerator_type']
    return row['accelerator_types'].get(npu_count)


def fabric_label(fabric, chips):
    """``(value, note)`` of the ``<domain>/fabric`` label: ``passed`` while the node's NPUs have RoCE ports
    (npu-smi names chips of one catalogue row with RoCE: A2 training chips, the legacy 910, A3 dies) and the
    probe found the hccn role's gate passed for the configuration that is live (ascend_facts ``fabric.state``);
    else None (the label is removed) and, for a training node whose verdict does not hold, why.

    Nodes whose chips cannot be told (npu-smi not read) or are no training chips get no label: the
    label says a job can span this node over RoCE, which only a gated training node can."""
    names = set(str(chip.get('name')) for chip in chips or [] if chip.get('name'))
    if hardware_catalogue.roce_row(names) is None:
        return None, None
    state = (fabric or {}).get('state')
    if state == 'passed':
        return 'passed', None
    if state in (None, 'absent'):
        return None, None
    return None, 'fabric label not set: %s' % ((fabric or {}).get('reason') or state)


def _version(installed, component):
    entry = (installed or {}).get(component) or {}
    return label_value(entry.get('version'))


def super_pod_member(super_pod):
    """``(super pod id, server index)`` of npu_smi_info's ``super_pod`` reading, or None when the node is no member."""
    if not isinstance(super_pod, dict):
        return None
    pod, index = super_pod.get('super_pod_id'), super_pod.get('server_index')
    if not all(isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in (pod, index)):
        return None
    return pod, index


def node_labels(facts, boards=None, chips=None, domain=DEFAULT_DOMAIN, accelerator_type_override='',
                worker_selector=True, noded=False, runtime_handler='ascend', super_pod=None):
    """The labels an NPU node should carry, from its facts.

    ``facts`` is ``ansible_facts.ascend`` (npu.ascend.ascend_facts): ``chip_family``,
    ``npu_count``, ``product``, ``arch``, ``installed``. ``boards`` and ``chips`` are the
    ``boards`` and ``chips`` of npu.ascend.npu_smi_info (optional: without them the chip name
    and the board id are unknown). ``super_pod`` is npu_smi_info's SuperPoD reading of an A3 node
    (``super_pod_id``, ``server_index``): a member is ``module-a3-16-super-pod`` and carries its SuperPoD
    id and server index; an A3 without it is a server (``module-a3-16``) and carries neither. Returns ``(labels, notes)``: ``labels`` maps every key this
    function manages to its value, or to None when the node must not carry it; ``notes`` says
    why a label could not be computed.
    """
    domain = _check_domain(domain)
    facts = facts or {}
    chip_family = facts.get('chip_family')
    if not chip_family:
        raise ValueError('the node shows no Ascend NPU on the PCI bus (ascend_facts chip_family is empty)')
    chips = chips or []
    boards = boards or []
    notes = []
    # The device plugin advertises one resource per chip; npu-smi counts chips, the PCI bus
    # one function per chip as well, so either serves when the other is missing.
    npu_count = len(chips) or int(facts.get('npu_count') or 0)
    board_id = next((board.get('board_id') for board in boards if parse_board_id(board.get('board_id')) is not None),
                    None)
    chip_name = next((chip.get('name') for chip in chips if chip.get('name')), None)
    installed = facts.get('installed') or {}
    arch = facts.get('arch')

    labels = {
        'accelerator': ACCELERATORS.get(chip_family),
        'host-arch': HOST_ARCHES.get(arch),
        'workerselector': WORKER_SELECTOR if worker_selector else None,
        'nodeDEnable': 'on' if noded else None,
    }
    if labels['accelerator'] is None:
        notes.append('chip family %s has no accelerator label documented by Huawei; '
                     'its device plugin selects nodes another way' % chip_family)
    if labels['host-arch'] is None:
        notes.append('architecture %r has no host-arch label' % (arch,))

    member = super_pod_member(super_pod)
    can_be_member = chip_family in _SUPER_POD_FAMILIES
    if accelerator_type_override:
        labels['accelerator-type'] = label_value(accelerator_type_override)
    else:
        labels['accelerator-type'] = ((hardware_catalogue.super_pod_accelerator_type(chip_family, npu_count) if member else None)
                                      or accelerator_type(chip_family, npu_count, board_id, facts.get('product')))
        if labels['accelerator-type'] is None and chip_family in hardware_catalogue.families_with_accelerator_type():
            notes.append('accelerator-type cannot be derived for a %s node with %d NPUs (board id %s, '
                         'product %s): set it explicitly'
                         % (chip_family, npu_count, board_id or 'unknown', facts.get('product') or 'unknown'))
    board = parse_board_id(board_id)
    labels['server-usage'] = 'infer' if board in _INFERENCE_BOARD_IDS.get(chip_family, ()) else None

    own = {
        'chip-family': label_value(chip_family),
        'chip': label_value(chip_name),
        'npu-count': str(npu_count) if npu_count else None,
        'product': label_value(facts.get('product')),
        'driver': _version(installed, 'driver'),
        'firmware': _version(installed, 'firmware'),
        'cann': _version(installed, 'toolkit'),
        'ascend-docker-runtime': _version(installed, 'docker_runtime'),
        # The RuntimeClass selects on this: only nodes whose engines know the handler.
        'runtime-handler': label_value(runtime_handler) if installed.get('docker_runtime') and runtime_handler else None,
    }
    if can_be_member:
        # Only where a SuperPoD is possible: elsewhere the keys are not ours to remove.
        labels[SUPER_POD_ID_LABEL] = str(member[0]) if member else None
        own['super-pod-server-index'] = str(member[1]) if member else None
    own['fabric'], fabric_note = fabric_label(facts.get('fabric'), chips)
    if fabric_note:
        notes.append(fabric_note)
    for name, value in own.items():
        labels['%s/%s' % (domain, name)] = value

    for key, value in labels.items():
        _check_label_key(key)
        if value is not None and not is_label_value(value):
            raise ValueError('label %s=%r is not a valid label value' % (key, value))
    return labels, notes


def resource_name(chip_family):
    """The extended resource Huawei's device plugin advertises for a chip family, or None."""
    try:
        return pci.k8s_resource_name(chip_family)
    except ValueError:
        return None


def _same_taint(left, right):
    return left.get('key') == right.get('key') and left.get('effect') == right.get('effect')


def taints_with(current, taint, present=True):
    """The node's taint list with ``taint`` added (``present``) or removed.

    A Node's ``spec.taints`` is replaced as a whole by a patch, so the other taints on the node
    (the node controller's, an operator's) are kept as they are. A taint is identified by key
    and effect, as Kubernetes does; one with the same key and effect but another value is
    replaced. Returns the new list, equal to ``current`` when nothing needs to change.
    """
    current = list(current or [])
    for item in current:
        if not isinstance(item, dict) or not isinstance(item.get('key'), str):
            raise ValueError('the taint list holds %r, which is no taint (key, value, effect)' % (item,))
    _check_taint(taint)
    wanted = {'key': taint['key'], 'effect': taint['effect']}
    if taint.get('value') not in (None, ''):
        wanted['value'] = str(taint['value'])
    kept = [item for item in current if not _same_taint(item, wanted)]
    if not present:
        return kept
    existing = [item for item in current if _same_taint(item, wanted)]
    if len(existing) == 1 and existing[0].get('value', '') == wanted.get('value', ''):
        return current
    return kept + [wanted]


def _check_taint(taint):
    """``taint`` (``{key, value?, effect}``) as the API server takes it; ValueError naming what is wrong."""
    if not isinstance(taint, dict):
        raise ValueError('a taint is key[=value]:Effect or {key, value, effect}, not %r' % (taint,))
    if taint.get('effect') not in TAINT_EFFECTS:
        raise ValueError('taint %r: the effect must be NoSchedule, PreferNoSchedule or NoExecute' % (taint,))
    problem = label_problem(taint.get('key'), taint.get('value') if taint.get('value') is not None else '')
    if problem:
        raise ValueError('taint %r: %s' % (taint, problem.replace('key: ', 'the key: ', 1)))


def parse_taint(text):
    """``key[=value]:Effect`` -> ``{'key', 'value'?, 'effect'}``, as kubectl writes taints."""
    text = str(text).strip()
    body, separator, effect = text.rpartition(':')
    if not separator or effect not in TAINT_EFFECTS:
        raise ValueError('taint %r: expected key[=value]:Effect with Effect NoSchedule, '
                         'PreferNoSchedule or NoExecute' % (text,))
    key, has_value, value = body.partition('=')
    _check_label_key(key)
    taint = {'key': key, 'effect': effect}
    if has_value:
        if not is_label_value(value):
            raise ValueError('taint %r: value %r is not a valid label value' % (text, value))
        taint['value'] = value
    return taint


def label_changes(current, wanted):
    """The part of ``wanted`` (label to value, None to remove) that ``current`` does not have yet.

    Empty when the node already carries exactly the wanted values: then no patch is needed, and a
    run that sends none cannot be mistaken for a change by a status update racing with it.
    """
    current = current or {}
    return dict((key, value) for key, value in (wanted or {}).items() if current.get(key) != value)
