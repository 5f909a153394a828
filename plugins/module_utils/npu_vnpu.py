# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Static vNPUs: parsing what ``npu-smi`` prints about them, the template catalogue, whether a
wanted layout fits a chip, and the difference between the wanted and the present vNPUs.
Pure functions, no I/O, no Ansible imports (docs/vnpu.md has the facts and their sources).

The text layout of ``info -t info-vnpu`` and ``info -t template-info`` is not in Huawei's
reference pages (they show the commands only); the layout parsed here is the one a public user
report shows (docs/vnpu.md, "Output layout"). So the parsers read it defensively: they look for
the header names (``Vnpu ID``, ``Template Name``, ``AICORE``, ``Memory``) rather than columns at
fixed offsets, accept ``|`` borders or none, and refuse (ValueError) what they cannot place
instead of guessing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.npu_smi import detect_error

# Template name -> (AI cores, memory GB, AI CPUs). Huawei's rules: the number after "vir" is the
# AI cores, the number before "c" the AI CPUs, the number before "g" the memory (MindCluster,
# "Virtualization Rules"); the 310P templates' memory is from Huawei Cloud CCE's template table
# (vir01's 3 GB is half of vir02's: one core of the 2-core vGroup it shares).
TEMPLATES = {
    '310P': {
        'vir01': (1, 3, 1), 'vir02': (2, 6, 2), 'vir02_1c': (2, 6, 1), 'vir04': (4, 12, 4),
        'vir04_3c': (4, 12, 3), 'vir04_3c_ndvpp': (4, 12, 3), 'vir04_4c_dvpp': (4, 12, 4),
    },
    '910B-training': {'vir06_1c_16g': (6, 16, 1), 'vir12_3c_32g': (12, 32, 3)},
    '910B-inference': {
        'vir05_1c_8g': (5, 8, 1), 'vir05_1c_16g': (5, 16, 1), 'vir10_3c_16g': (10, 16, 3),
        'vir10_3c_16g_nm': (10, 16, 3), 'vir10_4c_16g_m': (10, 16, 4), 'vir10_3c_32g': (10, 32, 3),
    },
}
# AI cores of a whole chip per family (MindCluster "Virtualization Rules").
FAMILY_AICORES = {'310P': 8, '910B-training': 24, '910B-inference': 20}

# vNPU ids: phy_id*16+100 .. +107 on Atlas inference products (310P), .. +115 on training ones
# (MindCluster "Creating vNPUs"; phy_id is N of /dev/davinciN).
VNPU_ID_BASE = 100
VNPU_IDS_PER_CHIP = 16
VNPU_ID_COUNT = {'310P': 8, '910B-training': 16, '910B-inference': 16}
# vGroups (0-3) exist only on Atlas inference products; a vGroup has at least 2 AI cores, and
# one or two vir01 share one 2-core vGroup (Atlas 300V user guide, "vNPU").
VGROUPS = (0, 1, 2, 3)
MIN_VGROUP_AICORES = 2
VIR01 = 'vir01'
NO_CONTAINER = re.compile(r'^0+$')

_TEMPLATE_NAME = re.compile(r'^vir(\d+)(?:_(\d+)c)?(?:_(\d+)g)?(?:_(ndvpp|dvpp|nm|m))?$')
_FREE_TOTAL = re.compile(r'^(\d+|NA)\s*/\s*(\d+|NA)$', re.IGNORECASE)
_HEADER_SPLIT = re.compile(r'\s{2,}')


def chip_family(chip_name):
    """The vNPU family of a chip name as npu-smi prints it (310P3, 910B4...), or None when the
    chip has no static vNPU templates we know (310, 310B, legacy 910, A3)."""
    name = (chip_name or '').strip().upper().replace('ASCEND', '').strip()
    if name.startswith('310P'):
        return '310P'
    if re.match(r'^910B[1-4]', name):
        # 910B3/910B4 are the 20-core inference chips, 910B1/910B2(C) the 24-core training ones
        # (MindCluster device plugin's template lists per chip).
        return '910B-inference' if name[4] in '34' else '910B-training'
    return None


def resource_name(template, family):
    """The Kubernetes resource Huawei's device plugin publishes for a template in static mode,
    without the ``huawei.com/`` prefix: vir02 on a 310P -> Ascend310P-2c, vir10_3c_16g_nm ->
    Ascend910-10c.3cpu.16g.ndvpp (MindCluster "Static virtualization", template table)."""
    match = _TEMPLATE_NAME.match(template or '')
    if not match:
        raise ValueError('%r is not a vNPU template name (vir<cores>[_<cpus>c][_<mem>g][_dvpp|_ndvpp|_m|_nm])'
                         % (template,))
    cores, cpus, memory, media = match.groups()
    name = '%s-%dc' % ('Ascend310P' if family == '310P' else 'Ascend910', int(cores))
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


def _number(text, what):
    text = text.strip()
    if text.upper() == 'NA':
        return None
    if not text.isdigit():
        raise ValueError('%s is not a number: %r' % (what, text))
    return int(text)


def _raise_on_error(text):
    if text is None or not text.strip():
        raise ValueError('npu-smi printed nothing')
    error = detect_error(text)
    if error is not None:
        raise error


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
            'aicpu': _number(values['aicpu'], 'AICPU of ' + values['name']) if 'aicpu' in values else None,
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
            vnpus.append({
                'vnpu_id': _number(values['vnpu id'], 'Vnpu ID'),
                'vgroup_id': _number(values['vgroup id'], 'Vgroup ID') if values.get('vgroup id') else None,
                'container_id': container,
                'status': status,
                'template': values['template name'],
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
    if vnpu_columns is None:
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
    """``set -t create-vnpu`` -> the message; ValueError unless ``Status : OK``."""
    ok, message = parse_set_result(text)
    if not ok or 'success' not in message.lower():
        raise ValueError(message or 'no Status in the answer')
    return message


def parse_destroyed(text, vnpu_id):
    """``set -t destroy-vnpu`` -> the message; ValueError unless it says vNPU ``vnpu_id`` was destroyed."""
    ok, message = parse_set_result(text)
    if not ok or not re.search(r'destroy vnpu %d success' % int(vnpu_id), message, re.IGNORECASE):
        raise ValueError(message or 'no Status in the answer')
    return message


def parse_mode(text):
    """``npu-smi info -t vnpu-mode`` (``vnpu-mode : docker``) -> the value in lower case, or None."""
    for line in (text or '').splitlines():
        match = re.match(r'^\s*vnpu[- ]mode\s*:\s*(\S+)', line, re.IGNORECASE)
        if match:
            return match.group(1).lower()
    return None


def parse_recover(text):
    """``npu-smi info -t vnpu-cfg-recover`` (``VNPU config recover mode : Enable``) -> True/False/None."""
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
    cores = sum(max(templates[entry['template']]['aicore'], MIN_VGROUP_AICORES) for entry in others)
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
        problems.append('the chip has no static vNPU support known to this collection (310P, 910B1-B4)')
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
    if vgroups and family != '310P':
        problems.append('vgroup is for Atlas inference products (310P) only; remove it from the layout')
    elif any(vgroup not in VGROUPS for vgroup in vgroups):
        problems.append('vgroup must be 0-3, got %s' % ', '.join(str(v) for v in vgroups if v not in VGROUPS))
    if unknown:
        return problems
    total_cores = resources.get('aicore', {}).get('total') or FAMILY_AICORES[family]
    total_memory = resources.get('memory_gb', {}).get('total')
    if family == '310P':
        used_vgroups, cores = _vgroups_and_cores(wanted, templates)
        if used_vgroups > len(VGROUPS):
            problems.append('the layout needs %d vGroups, a 310P chip has %d (every vNPU but vir01 takes one, '
                            'two vir01 share one)' % (used_vgroups, len(VGROUPS)))
    else:
        cores = sum(templates[entry['template']]['aicore'] for entry in wanted)
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
    text = vnpu['template']
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
