# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for the text ``npu-smi`` prints (docs/huawei-sources.md).

The ``npu-smi info`` table changed width and columns between driver lines (21.x 310,
23.x-25.x 910/910B/A3/310P/310B, 26.x), so columns are located by the names in the
two header rows of the table, never by character offsets: the table is split at its
``|`` borders, and inside a border-delimited cell the header names are separated by
two or more blanks. Pure functions, no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re


class NpuSmiError(Exception):
    """npu-smi reported a failure (for example ``dcmi module initialize failed. ret is -8005``).

    ``code`` is the negative DCMI error code as an int when npu-smi printed one, else None.
    """

    def __init__(self, message, code=None):
        super(NpuSmiError, self).__init__(message)
        self.message = message
        self.code = code

    def __str__(self):
        if self.code is None:
            return self.message
        return '%s (error code %d)' % (self.message, self.code)


# DCMI error codes are negative decimals; positive or hex codes in `info -t health`
# output ("Error Code : NA", "80E18402") are device alarms, i.e. data, not a failure.
_ERROR_CODE = re.compile(r'(?:\bret\b|\berror\s*code\b|\berr\s*code\b|\berrorcode\b)\s*(?:is\b|=|:)?\s*(-[0-9]+)\b',
                         re.IGNORECASE)
_ERROR_LINE = re.compile(r'^\s*(?:\[error\]|error\s*[:!]|failed\s*[:!])|\bdcmi\b.*\bfailed\b', re.IGNORECASE)

_NOT_AVAILABLE = ('', 'NA', 'N/A', '-', '--')
_SLASH = re.compile(r'\s*/\s*')
_HEADER_SPLIT = re.compile(r'\s{2,}')
_VERSION_ROW = re.compile(r'npu-smi\s+(\S+)\s+Version:\s*(\S+)', re.IGNORECASE)
_NO_PROCESSES = re.compile(r'No running processes found', re.IGNORECASE)
_KEY_VALUE = re.compile(r'^\s*(\S[^:]*?)\s+:\s?(.*?)\s*$')


def detect_error(text):
    """Return an NpuSmiError when ``text`` is npu-smi failure output, else None."""
    if not text:
        return None
    for line in text.splitlines():
        match = _ERROR_CODE.search(line)
        if match:
            return NpuSmiError(line.strip(), int(match.group(1)))
    for line in text.splitlines():
        if _ERROR_LINE.search(line):
            return NpuSmiError(line.strip())
    return None


def _raise_on_error(text):
    if text is None:
        raise ValueError('no npu-smi output to parse')
    error = detect_error(text)
    if error is not None:
        raise error


def _is_missing(value):
    return value is None or value.strip().upper() in _NOT_AVAILABLE


def _number(value, what):
    """int or float for a printed number, None for NA/- and for nan/inf; ValueError naming the field otherwise."""
    if _is_missing(value):
        return None
    value = value.strip()
    try:
        return int(value)
    except ValueError:
        pass
    try:
        number = float(value)
    except ValueError:
        raise ValueError('npu-smi %s value %r is not a number' % (what, value))
    # float() accepts nan, inf and 1e999; a reading that is not a finite number is no reading, and
    # NaN/Infinity would reach the JSON the modules print, which strict consumers reject.
    return number if math.isfinite(number) else None


def _float(value, what):
    number = _number(value, what)
    return None if number is None else float(number)


def _integer(value, what):
    number = _number(value, what)
    if number is not None and not isinstance(number, int):
        raise ValueError('npu-smi %s value %r is not an integer' % (what, value))
    return number


def _used_total(value, what):
    """``'1797/3513'`` -> (1797, 3513); missing -> (None, None)."""
    if _is_missing(value):
        return None, None
    parts = value.split('/')
    if len(parts) != 2:
        raise ValueError('npu-smi %s value %r is not "used / total"' % (what, value))
    return _number(parts[0], what), _number(parts[1], what)


def _column_key(name):
    """Map a printed column name to the key the parser uses for it."""
    lowered = ' '.join(name.lower().split())
    exact = {
        'npu': 'npu', 'name': 'name', 'health': 'health', 'chip': 'chip',
        'phy-id': 'phy_id', 'device': 'phy_id', 'bus-id': 'bus_id',
        'process id': 'pid', 'process id in container': 'container_pid', 'process name': 'process_name',
    }
    if lowered in exact:
        return exact[lowered]
    prefixes = (
        ('power', 'power'), ('temp', 'temp'), ('hugepages', 'hugepages'), ('aicore', 'aicore'),
        ('memory-usage', 'memory'), ('hbm-usage', 'hbm'), ('process memory', 'process_memory'),
    )
    for prefix, key in prefixes:
        if lowered.startswith(prefix):
            return key
    # Unknown columns still occupy a position; keeping them by name lets later
    # npu-smi releases add columns without breaking the ones we read.
    return 'other:' + lowered


def _split_cells(row):
    inner = row.strip()[1:]
    if inner.endswith('|'):
        inner = inner[:-1]
    return inner.split('|')


def _header_layout(cells):
    return [[_column_key(name) for name in _HEADER_SPLIT.split(cell.strip()) if name] for cell in cells]


def _row_values(layout, cells, row):
    """Map one data row onto the column keys of its header row."""
    if len(cells) != len(layout):
        raise ValueError('npu-smi table row has %d cells where its header has %d: %r'
                         % (len(cells), len(layout), row.strip()))
    values = {}
    for columns, cell in zip(layout, cells):
        if len(columns) == 1:
            # A cell holding one column is taken whole: process names may be empty.
            values[columns[0]] = cell.strip()
            continue
        tokens = _SLASH.sub('/', cell.strip()).split()
        if len(tokens) > len(columns):
            tokens = tokens[:len(columns) - 1] + [' '.join(tokens[len(columns) - 1:])]
        for index, key in enumerate(columns):
            values[key] = tokens[index] if index < len(tokens) else None
    return values


def _blocks(text):
    """Split table text into blocks of ``|`` rows, one block between two ``+---`` rules."""
    blocks = []
    current = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith('+'):
            if current:
                blocks.append(current)
            current = []
        elif stripped.startswith('|'):
            current.append(stripped)
    if current:
        blocks.append(current)
    return blocks


def _is_chip_header(block):
    keys = set(key for cell in _header_layout(_split_cells(block[0])) for key in cell)
    return 'npu' in keys and 'health' in keys


def _is_process_header(block):
    keys = set(key for cell in _header_layout(_split_cells(block[0])) for key in cell)
    return 'pid' in keys and 'npu' in keys


# npu-smi's Health column: OK, Warning, Alarm, Critical or UNKNOWN; only OK is healthy (a Warning
# is an alarm the operator has to look at). Every judgement of a chip's health goes through here.
HEALTHY = 'OK'


def chip_is_healthy(chip):
    """Whether npu-smi's Health column says the chip is healthy (spaces and case aside)."""
    return str(chip.get('health') or '').strip().upper() == HEALTHY


def _chip_from(values):
    hugepages_used, hugepages_total = _used_total(values.get('hugepages'), 'Hugepages-Usage')
    memory_used, memory_total = _used_total(values.get('memory'), 'Memory-Usage')
    hbm_used, hbm_total = _used_total(values.get('hbm'), 'HBM-Usage')
    bus_id = values.get('bus_id')
    return {
        'npu_id': _integer(values.get('npu'), 'NPU'),
        'chip_id': _integer(values.get('chip'), 'Chip'),
        'phy_id': _integer(values.get('phy_id'), 'Phy-ID/Device'),
        'name': values.get('name'),
        'health': values.get('health'),
        'healthy': chip_is_healthy(values),
        'power_w': _float(values.get('power'), 'Power(W)'),
        'temp_c': _number(values.get('temp'), 'Temp(C)'),
        'bus_id': None if _is_missing(bus_id) else bus_id,
        'aicore_pct': _number(values.get('aicore'), 'AICore(%)'),
        'memory_used_mb': memory_used,
        'memory_total_mb': memory_total,
        'hbm_used_mb': hbm_used,
        'hbm_total_mb': hbm_total,
        'hugepages_used': hugepages_used,
        'hugepages_total': hugepages_total,
    }


def _process_from(values, has_container_pid):
    process = {
        'npu_id': _integer(values.get('npu'), 'NPU'),
        'chip_id': _integer(values.get('chip'), 'Chip'),
        'pid': _integer(values.get('pid'), 'Process id'),
        'name': values.get('process_name') or '',
        'memory_mb': _number(values.get('process_memory'), 'Process memory(MB)'),
    }
    if has_container_pid:
        process['container_pid'] = _integer(values.get('container_pid'), 'Process id in container')
    return process


def parse_info(text):
    """Parse ``npu-smi info`` into ``{tool_version, driver_version, chips, processes}``.

    Raises NpuSmiError when the text is an npu-smi failure, ValueError when it is not
    an ``npu-smi info`` table.
    """
    _raise_on_error(text)
    result = {'tool_version': None, 'driver_version': None, 'chips': [], 'processes': []}
    section = None
    chip_layout = process_layout = None
    for block in _blocks(text):
        version = _VERSION_ROW.search(' '.join(block))
        if version:
            result['tool_version'], result['driver_version'] = version.group(1), version.group(2)
            block = [row for row in block if not _VERSION_ROW.search(row)]
            if not block:
                continue
        if _is_chip_header(block):
            section = 'chips'
            chip_layout = [_header_layout(_split_cells(row)) for row in block]
            continue
        if _is_process_header(block):
            section = 'processes'
            process_layout = _header_layout(_split_cells(block[0]))
            continue
        if section == 'chips':
            rows_per_chip = len(chip_layout)
            if len(block) % rows_per_chip:
                raise ValueError('npu-smi chip block has %d rows, expected a multiple of %d: %r'
                                 % (len(block), rows_per_chip, block))
            for start in range(0, len(block), rows_per_chip):
                values = {}
                for layout, row in zip(chip_layout, block[start:start + rows_per_chip]):
                    values.update(_row_values(layout, _split_cells(row), row))
                result['chips'].append(_chip_from(values))
        elif section == 'processes':
            has_container_pid = any('container_pid' in cell for cell in process_layout)
            for row in block:
                if _NO_PROCESSES.search(row):
                    continue
                values = _row_values(process_layout, _split_cells(row), row)
                result['processes'].append(_process_from(values, has_container_pid))
        else:
            raise ValueError('npu-smi table row before any header: %r' % block[0])
    if chip_layout is None:
        raise ValueError('no npu-smi info table found in the text')
    return result


# `npu-smi info -t board` prints the Board ID as hex (0x33) or NA; the labels and the probe read it.
def parse_board_id(text):
    """``'0x33'`` -> 51; None for ``NA``, empty or anything that is not a number."""
    if text is None:
        return None
    if isinstance(text, int):
        return text
    text = str(text).strip().lower()
    try:
        return int(text, 16) if text.startswith('0x') else int(text)
    except ValueError:
        return None


def parse_key_value_records(text):
    """All ``Key : Value`` lines of npu-smi output as an ordered list of (key, value)."""
    _raise_on_error(text)
    records = []
    for line in text.splitlines():
        match = _KEY_VALUE.match(line)
        if match:
            records.append((match.group(1).strip(), match.group(2).strip()))
    return records


def parse_key_values(text):
    """``npu-smi info -t board/health/usages/common/ecc`` (and ``upgrade``) output as a dict.

    Keys are as printed; when a key repeats (``Status`` in ``upgrade -t``), the last
    value wins, which is the final state npu-smi reports.
    """
    return dict(parse_key_value_records(text))


# `npu-smi info -t spod-info` on a product without SuperPoD data (Huawei's npu-smi references for the
# Atlas 200I A2 and Atlas 350); docs/huawei-sources.md, "Atlas A3".
SPOD_UNSUPPORTED = re.compile(r'does not support querying spod[-_]info', re.IGNORECASE)
_SPOD_KEYS = (('SDID', 'sdid'), ('Super Pod Size', 'super_pod_size'), ('Super Pod ID', 'super_pod_id'),
              ('Server Index', 'server_index'))


def parse_spod_info(text):
    """``npu-smi info -t spod-info -i N -c C`` -> ``{sdid, super_pod_size, super_pod_id, server_index}``
    (integers), or None when npu-smi says the device has no SuperPoD data.

    The four tab-indented ``Key : Value`` lines of a real A3 log (docs/huawei-sources.md). ValueError
    for output with neither the four keys nor the refusal, or a value that is not a whole number."""
    _raise_on_error(text)
    if SPOD_UNSUPPORTED.search(text):
        return None
    values = parse_key_values(text)
    missing = [pair[0] for pair in _SPOD_KEYS if pair[0] not in values]
    if missing:
        raise ValueError('spod-info lacks %s' % ', '.join(missing))
    result = {}
    for key, name in _SPOD_KEYS:
        if not re.match(r'^[0-9]+$', values[key]):
            raise ValueError('spod-info %s is %r, not a whole number' % (key, values[key]))
        result[name] = int(values[key])
    return result


def parse_info_list(text):
    """``npu-smi info -l`` -> ``{total_count, npus: [{npu_id, chip_count}]}``."""
    total_count = None
    npus = []
    for key, value in parse_key_value_records(text):
        lowered = key.lower()
        if lowered == 'total count':
            total_count = _integer(value, key)
        elif lowered == 'npu id':
            npus.append({'npu_id': _integer(value, key), 'chip_count': None})
        elif lowered == 'chip count' and npus:
            npus[-1]['chip_count'] = _integer(value, key)
    if total_count is None:
        raise ValueError('no "Total Count" in npu-smi info -l output')
    return {'total_count': total_count, 'npus': npus}


_MAPPING_KEYS = {
    'npu id': 'npu_id', 'chip id': 'chip_id', 'chip logic id': 'chip_logic_id',
    'chip phy-id': 'chip_phy_id', 'chip name': 'chip_name',
}


def parse_info_mapping(text):
    """``npu-smi info -m`` -> list of ``{npu_id, chip_id, chip_logic_id, chip_name}``.

    ``chip_logic_id`` is None for the MCU rows (printed ``-``). Lines other than the
    header and the numbered rows (a ``Version`` line in some releases) are skipped.
    """
    _raise_on_error(text)
    columns = None
    rows = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if columns is None:
            names = _HEADER_SPLIT.split(stripped)
            if 'npu id' in [name.lower() for name in names] and 'chip name' in [name.lower() for name in names]:
                columns = [_MAPPING_KEYS.get(name.lower(), 'other:' + name.lower()) for name in names]
            continue
        if not stripped[0].isdigit():
            continue
        cells = stripped.split(None, len(columns) - 1)
        if len(cells) != len(columns):
            raise ValueError('npu-smi info -m row has %d fields, expected %d: %r' % (len(cells), len(columns), stripped))
        values = dict(zip(columns, cells))
        row = {
            'npu_id': _integer(values.get('npu_id'), 'NPU ID'),
            'chip_id': _integer(values.get('chip_id'), 'Chip ID'),
            'chip_logic_id': _integer(values.get('chip_logic_id'), 'Chip Logic ID'),
            'chip_name': values.get('chip_name', '').strip(),
        }
        if 'chip_phy_id' in values:
            row['chip_phy_id'] = _integer(values['chip_phy_id'], 'Chip Phy-ID')
        rows.append(row)
    if columns is None:
        raise ValueError('no "NPU ID ... Chip Name" header in npu-smi info -m output')
    return rows
