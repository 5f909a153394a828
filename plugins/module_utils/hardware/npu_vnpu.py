# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static vNPUs: parsing what ``npu-smi`` prints about them, the template catalogue, whether a
wanted layout fits a chip, and the difference between the wanted and the present vNPUs.
Pure functions, no I/O, no Ansible imports (docs/vnpu.md has the facts and their sources).

The text layout of ``info -t info-vnpu`` and ``info -t template-info`` is not in Huawei's
reference pages (they show the commands only); the layouts parsed here are those of public user
reports and of Huawei's open npu-smi source (docs/huawei-sources.md, "Outputs no public capture
confirms"). So the parsers read them defensively: they look for the header names (``Vnpu ID``,
``Template Name``, ``AICORE``, ``Memory``) rather than columns at fixed offsets, accept ``|``
borders or none and ``NA`` in any cell, and refuse (ValueError) what they cannot place instead of
guessing. The sentences npu-smi prints, with exit status 0, instead of an answer (VM mode, SMP
mode, a chip without vNPUs...) raise VnpuUnavailable, which says the cause and the fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.hardware.npu_smi import detect_error

# Template name -> (AI cores, memory GB, AI CPUs) per vNPU family, a whole chip's AI cores and its vNPU
# ids: the hardware catalogue's VNPU_FAMILIES (its sources there).
TEMPLATES = dict((family, row['templates']) for family, row in hardware_catalogue.VNPU_FAMILIES.items())
FAMILY_AICORES = dict((family, row['aicores']) for family, row in hardware_catalogue.VNPU_FAMILIES.items())
# vNPU ids: phy_id*16+100 .. +VNPU_ID_COUNT-1 (MindCluster "Creating vNPUs"; phy_id is N of /dev/davinciN).
VNPU_ID_BASE = 100
VNPU_IDS_PER_CHIP = 16
VNPU_ID_COUNT = dict((family, row['vnpu_ids']) for family, row in hardware_catalogue.VNPU_FAMILIES.items())
# vGroups (0-3) exist only on Atlas inference products; a vGroup has at least 2 AI cores, and
# one or two vir01 share one 2-core vGroup (Atlas 300V user guide, "vNPU").
VGROUPS = (0, 1, 2, 3)
MIN_VGROUP_AICORES = 2
VIR01 = 'vir01'
NO_CONTAINER = re.compile(r'^0+$')

_TEMPLATE_NAME = re.compile(r'^vir(\d+)(?:_(\d+)c)?(?:_(\d+)g)?(?:_(ndvpp|dvpp|nm|m))?$')
_FREE_TOTAL = re.compile(r'^(\d+|NA)\s*/\s*(\d+|NA)$', re.IGNORECASE)
_HEADER_SPLIT = re.compile(r'\s{2,}')
_DECIMAL = re.compile(r'^\d+(?:\.\d+)?$')
_MIXED_CARDS = re.compile(r'there are different types of cards on the server', re.IGNORECASE)

# Sentences Huawei's npu-smi source prints, with exit status 0, where the vNPU commands cannot run
# (docs/huawei-sources.md, "Static vNPUs"): (pattern, cause, fix).
_REFUSALS = (
    (r'vnpu is not in docker mode',
     'the vNPU mode is VM mode (npu-smi set -t vnpu-mode -d 1), in which container vNPUs can be neither read nor made',
     'destroy the VM vNPUs and set container mode (npu-smi set -t vnpu-mode -d 0; npu.ascend.npu_vnpu does it for a '
     'chip with a declared layout), or declare no layout for this node'),
    (r'failed to get vnpu mode',
     'npu-smi could not read the vNPU mode',
     'run npu-smi info -t vnpu-mode on the node and look at the npu-smi log (/var/log/npu/slog)'),
    (r'working in smp mode',
     'the NPU works in SMP mode, which has no vNPUs',
     'switch the NPUs to AMP mode (npu-smi set -t work-mode) or declare no layout for this node'),
    (r'failed to get npu work mode',
     'npu-smi could not read the NPU work mode',
     'run npu-smi info -t work-mode -i N on the node and look at the npu-smi log (/var/log/npu/slog)'),
    (r'cannot be executed on a vm or container',
     'npu-smi runs in a VM or a container, where vNPUs cannot be read or made',
     'run the vNPU commands on the physical server'),
    (r'device does not support (querying|setting)',
     'npu-smi says this chip has no vNPU support',
     'declare no layout for this chip (docs/vnpu.md lists the chips with static vNPUs)'),
    (r'failed to get template info',
     'npu-smi could not read the templates',
     'run npu-smi info -t template-info on the node and look at the npu-smi log (/var/log/npu/slog)'),
    (r'^(create|destroy) vnpu( \d+)? failed',
     'npu-smi refused the change and prints no reason (it logs it)',
     'look at the npu-smi log (/var/log/npu/slog) for the reason, and at npu-smi info -t info-vnpu'),
)


class VnpuUnavailable(ValueError):
    """npu-smi answered a vNPU command with a sentence saying it cannot be done here (``line``),
    with exit status 0; ``cause`` and ``fix`` say what that means and what to do."""

    def __init__(self, line, cause, fix):
        ValueError.__init__(self, '%s (%s)' % (cause, line))
        self.line = line
        self.cause = cause
        self.fix = fix


def first_line(text):
    """The first line of ``text`` that is not blank, stripped, for messages."""
    for line in (text or '').splitlines():
        if line.strip():
            return line.strip()
    return '(no output)'


def _raise_on_refusal(text):
    for line in (text or '').splitlines():
        for pattern, cause, fix in _REFUSALS:
            if re.search(pattern, line, re.IGNORECASE):
                raise VnpuUnavailable(line.strip(), cause, fix)


def template_info_is_mixed(text):
    """Whether ``info -t template-info`` says the server has cards of different kinds, in which case
    the table shown is the first card's and ``-i <npu>`` asks for one card's."""
    return any(_MIXED_CARDS.search(line) for line in (text or '').splitlines())


def chip_family(chip_name):
    """The vNPU family of a chip name as npu-smi prints it (310P3, 910B4, 910B...), or None when the
    chip has no static vNPU templates we know (310, 310B): the hardware catalogue's. Give the name as
    npu-smi prints it (an A3 die is ``Ascend910``)."""
    return hardware_catalogue.vnpu_family(chip_name)


def resource_name(template, family):
    """The Kubernetes resource Huawei's device plugin publishes for a template in static mode,
    without the ``huawei.com/`` prefix: vir02 on a 310P -> Ascend310P-2c, vir10_3c_16g_nm ->
    Ascend910-10c.3cpu.16g.ndvpp (MindCluster "Static virtualization", template table)."""
    match = _TEMPLATE_NAME.match(template or '')
    if not match:
        raise ValueError('%r is not a vNPU template name (vir<cores>[_<cpus>c][_<mem>g][_dvpp|_ndvpp|_m|_nm])'
                         % (template,))
    cores, cpus, memory, media = match.groups()
    name = '%s-%dc' % (hardware_catalogue.VNPU_FAMILIES[family]['resource'], int(cores))
    if cpus:
        name += '.%scpu' % int(cpus)
    if memory:
        name += '.%sg' % int(memory)
    if media:
        name += '.ndvpp' if media in ('ndvpp', 'nm') else '.dvpp'
    return name


def vnpu_id_range(family, phy_id):
    """The vNPU ids a chip accepts, as a range."""
    start = VNPU_ID_BASE + VNPU_IDS_PER_CHIP * int(phy_id)
    return range(start, start + VNPU_ID_COUNT[family])


def _cells(line):
    stripped = line.strip()
    if stripped.startswith('|'):
        stripped = stripped[1:]
    if stripped.endswith('|'):
        stripped = stripped[:-1]
    return stripped


def _is_rule(line):
    stripped = line.strip()
    return bool(stripped) and set(stripped) <= set('+-=|')


def _number(text, what, decimal=False):
    text = text.strip()
    if text.upper() == 'NA':
        return None
    if decimal and _DECIMAL.match(text) and '.' in text:
        # npu-smi prints AI CPUs with %g (its source), so a share of one is possible.
        return float(text)
    if not text.isdigit():
        raise ValueError('%s is not a number: %r' % (what, text))
    return int(text)


def _raise_on_error(text):
    if text is None or not text.strip():
        raise ValueError('npu-smi printed nothing')
    error = detect_error(text)
    if error is not None:
        raise error
    _raise_on_refusal(text)


def _template_aicores(name, values):
    """The AI cores of template ``name``: what template-info printed, else the number after ``vir``
    in its name (Huawei's naming rule), when template-info printed NA."""
    if values.get('aicore') is not None:
        return values['aicore']
    match = _TEMPLATE_NAME.match(name)
    return int(match.group(1)) if match else None


def parse_template_info(text):
    """``npu-smi info -t template-info`` -> ``{name: {'aicore': n, 'memory_gb': n, 'aicpu': n}}``.

    A template row starts with its name (``vir...``) followed by the AI cores, memory (GB) and AI
    CPUs in the order of the header row that names them; the continuation rows (media engines)
    start with a blank and are skipped."""
    _raise_on_error(text)
    columns = None
    templates = {}
    for line in text.splitlines():
        if _is_rule(line):
            continue
        body = _cells(line).strip()
        names = [name.lower() for name in _HEADER_SPLIT.split(body)]
        if columns is None:
            if names and names[0] == 'name' and 'aicore' in names and 'memory' in names:
                columns = names
            continue
        if not body.startswith('vir'):
            continue
        fields = body.split()
        if len(fields) < len(columns):
            raise ValueError('template row has %d fields, the header %d: %r' % (len(fields), len(columns), body))
        values = dict(zip(columns, fields))
        if not _TEMPLATE_NAME.match(values['name']):
            raise ValueError('%r is not a vNPU template name' % values['name'])
        templates[values['name']] = {
            'aicore': _number(values['aicore'], 'AICORE of ' + values['name']),
            'memory_gb': _number(values['memory'], 'Memory of ' + values['name']),
            'aicpu': _number(values['aicpu'], 'AICPU of ' + values['name'], True) if 'aicpu' in values else None,
        }
    if columns is None:
        raise ValueError('no "Name  AICORE  Memory" header in npu-smi info -t template-info output')
    return templates


def _resource_key(name):
    return {'aicore': 'aicore', 'memory': 'memory_gb', 'aicpu': 'aicpu'}.get(name.lower(), name.lower())


def parse_info_vnpu(text):
    """``npu-smi info -t info-vnpu -i N -c C`` -> ``{'resources': {'aicore': {'free', 'total'},
    'memory_gb': {...}, ...}, 'vnpus': [{'vnpu_id', 'vgroup_id', 'container_id', 'status',
    'template', 'in_use'}]}``.

    The resources are the ``Free/Total`` row under the header naming AICORE and Memory; the vNPUs
    are the rows under the ``Vnpu ID | ... | Template Name`` header, located by name. ``Total
    number of vnpu: N`` is checked against the rows found, so a row this parser could not read
    fails instead of being missed. A vNPU is in use when its container id is not all zeros or
    its status is not 0 (the public report shows ``ffffffffffff``/``1`` for one in use)."""
    _raise_on_error(text)
    resource_names = None
    resources = {}
    vnpu_columns = None
    vnpus = []
    declared = None
    for line in text.splitlines():
        if _is_rule(line) or not line.strip():
            continue
        body = _cells(line)
        stripped = body.strip()
        total = re.match(r'^total number of vnpu\s*:\s*(\d+)$', stripped, re.IGNORECASE)
        if total:
            declared = int(total.group(1))
            continue
        if vnpu_columns is None and '|' in body and 'vnpu id' in body.lower():
            vnpu_columns = [cell.strip().lower() for cell in body.split('|')]
            continue
        if vnpu_columns is not None:
            cells = [cell.strip() for cell in body.split('|')]
            if len(cells) != len(vnpu_columns):
                raise ValueError('vNPU row has %d cells, the header %d: %r' % (len(cells), len(vnpu_columns), stripped))
            values = dict(zip(vnpu_columns, cells))
            if 'template name' not in values:
                raise ValueError('no "Template Name" column in the vNPU table')
            container = values.get('container id', '')
            status = values.get('status', '0')
            template = values['template name']
            vnpus.append({
                'vnpu_id': _number(values['vnpu id'], 'Vnpu ID'),
                'vgroup_id': _number(values['vgroup id'], 'Vgroup ID') if values.get('vgroup id') else None,
                'container_id': container,
                'status': status,
                # NA: npu-smi could not read it.
                'template': None if template.upper() in ('NA', '') else template,
                # A container or status npu-smi could not read (NA) is not known to be free.
                'in_use': not (NO_CONTAINER.match(container or '0') and status in ('0', '')),
            })
            continue
        names = _HEADER_SPLIT.split(stripped)
        if resource_names is None and 'AICORE' in [name.upper() for name in names]:
            resource_names = [_resource_key(name) for name in names]
            continue
        if resource_names is not None and not resources and _FREE_TOTAL.match(names[0]):
            fields = stripped.split()
            if len(fields) != len(resource_names):
                raise ValueError('resource row has %d fields, the header %d: %r'
                                 % (len(fields), len(resource_names), stripped))
            for name, field in zip(resource_names, fields):
                match = _FREE_TOTAL.match(field)
                if not match:
                    raise ValueError('%s is not Free/Total: %r' % (name, field))
                resources[name] = {'free': _number(match.group(1), name), 'total': _number(match.group(2), name)}
    if 'aicore' not in resources or 'memory_gb' not in resources:
        raise ValueError('no AICORE and Memory Free/Total row in npu-smi info -t info-vnpu output')
    if vnpu_columns is None and declared != 0:
        # npu-smi 26.0.rc1 prints no table header on a chip without vNPUs (docs/huawei-sources.md).
        if declared is not None:
            raise ValueError('npu-smi says %d vNPUs but lists none (no "Vnpu ID ... Template Name" header)' % declared)
        raise ValueError('no "Vnpu ID ... Template Name" header in npu-smi info -t info-vnpu output')
    if declared is not None and declared != len(vnpus):
        raise ValueError('npu-smi says %d vNPUs but lists %d' % (declared, len(vnpus)))
    return {'resources': resources, 'vnpus': vnpus}


def _status_message(text):
    values = {}
    for line in (text or '').splitlines():
        match = re.match(r'^\s*(Status|Message)\s*:\s*(.*?)\s*$', line, re.IGNORECASE)
        if match:
            values[match.group(1).lower()] = match.group(2)
    return values


def parse_set_result(text):
    """The ``Status : OK`` / ``Message : ...`` answer of an ``npu-smi set`` command ->
    ``(ok, message)``; ok is False when Status is anything but OK or missing."""
    values = _status_message(text)
    message = values.get('message') or (text or '').strip()
    return values.get('status', '').upper() == 'OK', message


def parse_created(text):
    """``set -t create-vnpu`` -> the message; VnpuUnavailable for a refusal printed with success,
    ValueError unless ``Status : OK``."""
    _raise_on_refusal(text)
    ok, message = parse_set_result(text)
    if not ok or 'success' not in message.lower():
        raise ValueError(message or 'no Status in the answer')
    return message


def parse_destroyed(text, vnpu_id):
    """``set -t destroy-vnpu`` -> the message; VnpuUnavailable for a refusal printed with success,
    ValueError unless it says vNPU ``vnpu_id`` was destroyed."""
    _raise_on_refusal(text)
    ok, message = parse_set_result(text)
    if not ok or not re.search(r'destroy vnpu %d success' % int(vnpu_id), message, re.IGNORECASE):
        raise ValueError(message or 'no Status in the answer')
    return message


def parse_mode(text):
    """``npu-smi info -t vnpu-mode`` (``vnpu-mode : docker`` or ``VM``) -> the value in lower case, or
    None; VnpuUnavailable for a refusal printed with success."""
    _raise_on_refusal(text)
    for line in (text or '').splitlines():
        match = re.match(r'^\s*vnpu[- ]mode\s*:\s*(\S+)', line, re.IGNORECASE)
        if match:
            return match.group(1).lower()
    return None


def parse_recover(text):
    """``npu-smi info -t vnpu-cfg-recover`` (``VNPU config recover mode : Enable``) -> True/False/None;
    VnpuUnavailable for a refusal printed with success (SMP mode, a VM or container)."""
    _raise_on_refusal(text)
    for line in (text or '').splitlines():
        match = re.match(r'^\s*vnpu config recover mode\s*:\s*(\S+)', line, re.IGNORECASE)
        if match:
            return {'enable': True, 'disable': False}.get(match.group(1).lower())
    return None


def normalize_layout(layout):
    """The wanted vNPUs as ``[{'template', 'vnpu_id', 'vgroup_id'}]`` (ids None when not given);
    ValueError for an entry that is neither a template name nor a dict with ``template``."""
    wanted = []
    for index, entry in enumerate(layout or []):
        if isinstance(entry, str):
            entry = {'template': entry}
        if not isinstance(entry, dict) or not isinstance(entry.get('template'), str):
            raise ValueError('layout entry %d must be a template name or a dict with template, got %r' % (index, entry))
        unknown = set(entry) - set(('template', 'id', 'vnpu_id', 'vgroup', 'vgroup_id'))
        if unknown:
            raise ValueError('layout entry %d has unknown keys %s (known: template, id, vgroup)'
                             % (index, ', '.join(sorted(unknown))))
        vnpu_id = entry.get('id', entry.get('vnpu_id'))
        vgroup_id = entry.get('vgroup', entry.get('vgroup_id'))
        for what, value in (('id', vnpu_id), ('vgroup', vgroup_id)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError('layout entry %d: %s must be a whole number, got %r' % (index, what, value))
        wanted.append({'template': entry['template'], 'vnpu_id': vnpu_id, 'vgroup_id': vgroup_id})
    return wanted


def _vgroups_and_cores(wanted, templates):
    """vGroups and AI cores a 310P layout takes: every vNPU but vir01 its own vGroup of its
    cores, vir01s two to a 2-core vGroup."""
    vir01 = len([entry for entry in wanted if entry['template'] == VIR01])
    others = [entry for entry in wanted if entry['template'] != VIR01]
    shared = (vir01 + 1) // 2
    cores = sum(max(_template_aicores(entry['template'], templates[entry['template']]), MIN_VGROUP_AICORES)
                for entry in others)
    return len(others) + shared, cores + MIN_VGROUP_AICORES * shared


def layout_problems(wanted, family, phy_id, templates, resources):
    """Why ``wanted`` cannot be the layout of this chip, as sentences (empty when it fits).

    ``templates`` are what the chip lists (parse_template_info), ``resources`` its totals
    (parse_info_vnpu); the whole wanted layout must fit the chip's totals, since what is not
    wanted is destroyed first."""
    problems = []
    unknown = sorted(set(entry['template'] for entry in wanted if entry['template'] not in templates))
    if unknown:
        problems.append('template %s is not one this chip lists in npu-smi info -t template-info (it lists %s)'
                        % (', '.join(unknown), ', '.join(sorted(templates)) or 'none'))
    if family is None:
        problems.append('the chip has no static vNPU support known to this collection (its vNPU families: %s)'
                        % ', '.join(sorted(hardware_catalogue.VNPU_FAMILIES)))
        return problems
    ids = [entry['vnpu_id'] for entry in wanted if entry['vnpu_id'] is not None]
    allowed = vnpu_id_range(family, phy_id)
    bad_ids = sorted(set(vnpu_id for vnpu_id in ids if vnpu_id not in allowed))
    if bad_ids:
        problems.append('vNPU id %s is outside %d-%d, the ids of this chip (phy id %s)'
                        % (', '.join(str(i) for i in bad_ids), allowed[0], allowed[-1], phy_id))
    repeated = sorted(set(vnpu_id for vnpu_id in ids if ids.count(vnpu_id) > 1))
    if repeated:
        problems.append('vNPU id %s is given more than once' % ', '.join(str(i) for i in repeated))
    if len(wanted) > len(allowed):
        problems.append('%d vNPUs wanted, a chip has at most %d' % (len(wanted), len(allowed)))
    vgroups = [entry['vgroup_id'] for entry in wanted if entry['vgroup_id'] is not None]
    if vgroups and not hardware_catalogue.VNPU_FAMILIES[family]['vgroups']:
        problems.append('vgroup is for Atlas inference products (%s) only; remove it from the layout'
                        % ', '.join(hardware_catalogue.vgroup_families()))
    elif any(vgroup not in VGROUPS for vgroup in vgroups):
        problems.append('vgroup must be 0-3, got %s' % ', '.join(str(v) for v in vgroups if v not in VGROUPS))
    if unknown:
        return problems
    total_cores = resources.get('aicore', {}).get('total') or FAMILY_AICORES[family]
    total_memory = resources.get('memory_gb', {}).get('total')
    if hardware_catalogue.VNPU_FAMILIES[family]['vgroups']:
        used_vgroups, cores = _vgroups_and_cores(wanted, templates)
        if used_vgroups > len(VGROUPS):
            problems.append('the layout needs %d vGroups, a %s chip has %d (every vNPU but vir01 takes one, '
                            'two vir01 share one)' % (used_vgroups, family, len(VGROUPS)))
    else:
        cores = sum(_template_aicores(entry['template'], templates[entry['template']]) for entry in wanted)
    if cores > total_cores:
        problems.append('the layout needs %d AI cores, the chip has %d' % (cores, total_cores))
    memory = sum(templates[entry['template']]['memory_gb'] or 0 for entry in wanted)
    if total_memory is not None and memory > total_memory:
        problems.append('the layout needs %d GB of memory, the chip has %d GB' % (memory, total_memory))
    return problems


def _matches(entry, vnpu):
    return (entry['template'] == vnpu['template']
            and entry['vnpu_id'] in (None, vnpu['vnpu_id'])
            and entry['vgroup_id'] in (None, vnpu['vgroup_id']))


def layout_diff(wanted, present):
    """``(keep, destroy, create)``: the present vNPUs that serve a wanted entry, those that do
    not, and the wanted entries none serves. Entries with an id are matched first, so an id the
    operator pinned is never taken by an entry without one."""
    remaining = list(present)
    keep = []
    create = []
    pinned = set(entry['vnpu_id'] for entry in wanted if entry['vnpu_id'] is not None)
    ordered = sorted(wanted, key=lambda entry: (entry['vnpu_id'] is None, entry['vgroup_id'] is None))
    for entry in ordered:
        found = next((vnpu for vnpu in remaining if _matches(entry, vnpu)
                      and (entry['vnpu_id'] is not None or vnpu['vnpu_id'] not in pinned)), None)
        if found is None:
            create.append(entry)
        else:
            keep.append(found)
            remaining.remove(found)
    # An id pinned by an entry and held by a vNPU that goes is free only once that one is
    # destroyed: callers destroy first, then create.
    return keep, remaining, create


def describe(vnpu):
    """One line for plans and diffs: ``vir02 id 100 vgroup 1``."""
    text = vnpu['template'] or 'template NA'
    if vnpu.get('vnpu_id') is not None:
        text += ' id %s' % vnpu['vnpu_id']
    if vnpu.get('vgroup_id') is not None:
        text += ' vgroup %s' % vnpu['vgroup_id']
    if vnpu.get('in_use'):
        text += ' (in use by container %s)' % vnpu.get('container_id')
    return text


def with_resources(vnpus, family):
    """``vnpus`` (parse_info_vnpu's) each with its ``resource``: the device plugin's resource name
    for its template (``resource_name``), or None for a template it does not publish."""
    result = []
    for vnpu in vnpus:
        entry = dict(vnpu)
        try:
            entry['resource'] = resource_name(vnpu['template'], family)
        except ValueError:
            entry['resource'] = None
        result.append(entry)
    return result
