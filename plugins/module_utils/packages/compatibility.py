# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checking an Ascend software stack against the compatibility matrix.

A *stack* is a dict of what a node has or will have::

    {'cann': '8.2.RC1', 'driver': '25.0.rc1.1', 'firmware': '7.7.0.1.231',
     'torch_npu': '2.6.0', 'mindspore': None, 'mindcluster': None,
     'os': 'openEuler 24.03 SP1', 'chip_family': '910b', 'product': 'Atlas 800I A2',
     'compatible_version_fw': '[7.0.0,7.7.99]',     # from the driver's version.info
     'compatible_version_drv': '[25.0,25.0.]'}      # from the firmware's version.info

Missing or None entries are simply not checked.

A *row* (see compat_matrix.py) is one statement from one public source::

    {'source': 'where it was published', 'chip_families': ['910b', '310p'],
     'cann': '8.2.RC1', 'driver': '25.0.rc1.x', 'firmware': '>=7.7.0.1.231'}

Row semantics:

* The row's *key* is the component the source is about; the other version fields are
  what that component requires. Unless the row names it in ``key``, the key is the first
  of ``torch_npu``, ``mindspore``, ``mindcluster``, ``os``, ``cann``, ``driver`` present
  in the row. ``key: []`` makes a floor that applies to every stack of the row's chips
  and products (for example "Atlas A2 inference needs CANN >= 8.0.RC1").
* A row applies to a stack when the stack has every key component and each matches,
  when the stack's ``chip_family`` is in ``chip_families`` (rows without the field, or
  stacks without a chip family, always pass this test, except that a stack without a chip
  family skips the rows of some families that are not keyed on ``cann``: their floors and
  driver/firmware minima) and, if the row lists
  ``products``, when the stack's ``product`` is one of them (a stack with no known product
  skips product rows: they are too specific to apply blindly).
* Sources disagree, so rows are a union: for one key component and one required
  component, the stack conflicts only when rows apply and *none* of them is satisfied.
* A pair no row speaks about is *unknown*. The gate fails closed on the pairs the matrix
  is made of (``ANCHORED_PAIRS``): a stack holding both components of such a pair with no
  applicable row relating them is refused, unless the caller allows unknown pairs
  (``allow_unknown``). What "unknown" means follows the shape of the matrix:

  - ``cann``/``driver``: every CANN release the matrix knows has rows keyed on ``cann``
    requiring a ``driver``, per chip family. A CANN release with no row, or with rows for
    other chip families or products only, leaves the pair unknown. A known CANN with a
    driver none of its rows accepts is not unknown but a conflict.
  - ``torch_npu``/``mindspore``/``mindcluster`` with ``cann``: the framework rows are
    keyed on the framework and require a CANN; a framework version no row is keyed on
    leaves the pair unknown.
  - ``firmware`` is never the key of a row: it appears only as the minimum a CANN row
    puts on the firmware shipped with its HDK, and between driver and firmware the
    authority is the driver's ``compatible_version_fw`` (checked below), which can be read
    only once that driver is on the node. A firmware nothing speaks about is therefore
    reported in ``unchecked`` but not refused: refusing it would refuse every first
    install of an HDK without CANN. Its pairing is covered as soon as the CANN/driver
    pair is known (the CANN rows carry the firmware minimum) or the driver is installed.
  - ``os``, ``chip_family`` and ``product`` rows are floors for specific products; their
    absence means no constraint is published, not an unknown pair.

  Components no row speaks about are also listed in ``unchecked``.
* Constraints are written as a string or a list of strings (alternatives, any may
  match). One alternative is a comma-separated list of clauses that must all hold:
  ``8.2.RC1`` (the same version, ``8.2.rc1`` included), ``25.3.x`` (the 25.3 line:
  ``25.3``, ``25.3.rc1``, ``25.3.0.1``...), ``>=7.7.0.2.220``, ``<9``, ``!=8.0.RC2``.
  Ascend versions order as in ascend_version; torch_npu/MindSpore versions such as
  ``2.1.0.post3`` order by their numbers, ``post`` releases after the release.
* ``os`` constraints compare words, case-insensitively and ignoring punctuation and
  ``LTS``: ``openeuler 24.03 sp1`` matches ``openEuler 24.03 (LTS-SP1)``; the row's words
  must start the stack's words.

Independently of the rows, the driver and the firmware each declare the other's
accepted versions (``compatible_version_fw`` / ``compatible_version_drv`` in their
version.info). When those ranges are known they are checked as the pair
``driver``/``firmware``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import (
    AscendVersion, checked_version, compare_versions, in_compat_range)

VERSION_FIELDS = ('cann', 'driver', 'firmware', 'torch_npu', 'mindspore', 'mindcluster')
# The pairs a stack must find a row for (first: the component the rows are keyed on).
ANCHORED_PAIRS = (('cann', 'driver'), ('torch_npu', 'cann'), ('mindspore', 'cann'), ('mindcluster', 'cann'))
KEY_PRECEDENCE = ('torch_npu', 'mindspore', 'mindcluster', 'os', 'cann', 'driver')
ROW_FIELDS = VERSION_FIELDS + ('os', 'source', 'chip_families', 'products', 'key', 'note')
STACK_FIELDS = VERSION_FIELDS + ('os', 'chip_family', 'product', 'compatible_version_fw', 'compatible_version_drv')

_CLAUSE = re.compile(r'^(>=|<=|==|!=|>|<)?\s*(\S+)$')
_PYTHON_STYLE_FIELD = re.compile(r'[0-9]+|[a-z]+')
_WORD = re.compile(r'[a-z0-9.]+')
_NON_ASCEND_RANKS = {'dev': 0, 'a': 1, 'alpha': 1, 'b': 2, 'beta': 2, 'rc': 3, 'post': 6}


# --------------------------------------------------------------------------------------
# Versions and constraints
# --------------------------------------------------------------------------------------

class _LooseVersion(object):
    """Ordering for torch_npu/MindSpore style versions (``2.1.0.post3``, ``2.4.0rc1``).

    Those are not Huawei HDK/CANN versions and ascend_version rejects ``post``; only the
    order matters here: pre-releases < release < post releases.
    """

    __slots__ = ('fields',)

    def __init__(self, text):
        cleaned = str(text).strip().lower().split('+', 1)[0]
        if cleaned[:1] == 'v' and cleaned[1:2].isdigit():
            cleaned = cleaned[1:]
        fields = []
        for field in _PYTHON_STYLE_FIELD.findall(cleaned):
            if field.isdigit():
                fields.append((5, int(field)))
            elif field in _NON_ASCEND_RANKS:
                fields.append((_NON_ASCEND_RANKS[field], 0))
            else:
                raise ValueError('cannot read version %r' % (text,))
        if not fields or fields[0][0] != 5:
            raise ValueError('cannot read version %r' % (text,))
        self.fields = tuple(fields)

    @property
    def sort_key(self):
        return self.fields + ((4, 0),)

    def startswith(self, prefix):
        return self.fields[:len(prefix.fields)] == prefix.fields


def _version(text, loose=False):
    # Huawei's versions (CANN, HDK, MindCluster) are read by ascend_version alone, the parser of the
    # plan and the sort filter: a fallback to the loose reading let '25.0 rc1.1' through the gate.
    if loose:
        return _LooseVersion(text)
    return AscendVersion(str(text))


def _order(a, b):
    key_a, key_b = a.sort_key, b.sort_key
    return (key_a > key_b) - (key_a < key_b)


_OPERATORS = {
    '==': lambda order: order == 0,
    '!=': lambda order: order != 0,
    '>=': lambda order: order >= 0,
    '<=': lambda order: order <= 0,
    '>': lambda order: order > 0,
    '<': lambda order: order < 0,
}


def _alternatives(spec):
    if spec is None:
        return []
    if isinstance(spec, (list, tuple)):
        items = [str(item) for item in spec]
    else:
        items = [str(spec)]
    return [item.strip() for item in items if item.strip()]


def _parse_clause(text):
    match = _CLAUSE.match(text.strip())
    if not match:
        raise ValueError('cannot read version constraint %r' % (text,))
    operator, operand = match.group(1), match.group(2)
    prefix = False
    if operand.lower().endswith(('.x', '.*')):
        if operator:
            raise ValueError('version constraint %r mixes an operator with a .x prefix' % (text,))
        operand, prefix = operand[:-2], True
    return operator or '==', operand, prefix


def _loose_field(field):
    return field in ('torch_npu', 'mindspore')


def _clause_holds(version, clause, loose):
    operator, operand, prefix = clause
    bound = _version(operand, loose or isinstance(version, _LooseVersion))
    if prefix:
        return version.startswith(bound)
    return _OPERATORS[operator](_order(version, bound))


def validate_spec(spec, field='version'):
    """Raise ValueError when ``spec`` cannot be read; return the list of alternatives."""
    alternatives = _alternatives(spec)
    if not alternatives:
        raise ValueError('empty %s constraint' % field)
    loose = _loose_field(field)
    for alternative in alternatives:
        for clause_text in alternative.split(','):
            operand = _parse_clause(clause_text)[1]
            _version(operand, loose)
    return alternatives


def version_satisfies(version, spec, field='version'):
    """True when ``version`` meets any alternative of ``spec`` (see the module docstring)."""
    loose = _loose_field(field)
    candidate = _version(version, loose)
    for alternative in validate_spec(spec, field):
        clauses = [_parse_clause(text) for text in alternative.split(',')]
        if all(_clause_holds(candidate, clause, loose) for clause in clauses):
            return True
    return False


def _os_words(text):
    words = _WORD.findall(str(text).lower().replace('-', ' ').replace('_', ' '))
    return [word for word in words if word != 'lts']


def os_matches(os_text, spec):
    """True when the words of one alternative of ``spec`` start the words of ``os_text``."""
    have = _os_words(os_text)
    for alternative in _alternatives(spec):
        want = _os_words(alternative)
        if want and have[:len(want)] == want:
            return True
    return False


def _matches(field, value, spec):
    if field == 'os':
        return os_matches(value, spec)
    return version_satisfies(value, spec, field)


# --------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------

def row_key(row):
    """The list of key components of ``row`` (see the module docstring)."""
    if 'key' in row:
        key = row['key']
        if key is None:
            return []
        return [key] if isinstance(key, str) else list(key)
    for field in KEY_PRECEDENCE:
        if row.get(field) is not None:
            return [field]
    return []


def _row_requirements(row):
    key = row_key(row)
    return [field for field in VERSION_FIELDS if row.get(field) is not None and field not in key]


def _validate_row(row, index=None):
    """Raise ValueError naming the row when it is malformed; return the row."""
    where = 'compatibility row %s' % (index if index is not None else '')
    if not isinstance(row, dict):
        raise ValueError('%s is not a dict: %r' % (where, row))
    unknown = sorted(set(row) - set(ROW_FIELDS))
    if unknown:
        raise ValueError('%s has unknown fields %s (known: %s)' % (where, ', '.join(unknown), ', '.join(ROW_FIELDS)))
    if not row.get('source'):
        raise ValueError('%s needs a source (where the pairing was published)' % where)
    key = row_key(row)
    for field in key:
        if field not in VERSION_FIELDS + ('os',):
            raise ValueError('%s has key %r, which is not a component' % (where, field))
        if row.get(field) is None:
            raise ValueError('%s has key %r but no %s constraint' % (where, field, field))
    if not _row_requirements(row):
        raise ValueError('%s requires nothing: it needs at least one version field besides its key' % where)
    for field in VERSION_FIELDS:
        if row.get(field) is not None:
            try:
                validate_spec(row[field], field)
            except ValueError as error:
                raise ValueError('%s, field %s: %s' % (where, field, error))
    for field in ('chip_families', 'products'):
        if row.get(field) is not None and not isinstance(row[field], (list, tuple)):
            raise ValueError('%s: %s must be a list' % (where, field))
    return row


def effective_rows(rows, extra_rows=None, replace_rows=False):
    """The rows to check with: the built-in ones plus ``extra_rows``, or only those when replacing."""
    chosen = list(extra_rows or []) if replace_rows else list(rows or []) + list(extra_rows or [])
    for index, row in enumerate(chosen):
        _validate_row(row, index)
    return chosen


def _lower_list(values):
    return [' '.join(str(value).lower().split()) for value in values]


def _row_applies(row, stack):
    chip_family = stack.get('chip_family')
    if row.get('chip_families'):
        if not chip_family:
            # Only the CANN pairings of some families speak for a stack of unknown chip (they make its
            # CANN/driver pair known); their floors and firmware minima would refuse it blindly.
            if row_key(row) != ['cann']:
                return False
        elif str(chip_family).lower() not in _lower_list(row['chip_families']):
            return False
    if row.get('products'):
        product = stack.get('product')
        if not product or ' '.join(str(product).lower().split()) not in _lower_list(row['products']):
            return False
    for field in row_key(row):
        value = stack.get(field)
        if value is None or not _matches(field, value, row[field]):
            return False
    return True


# --------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------

def _clean_stack(stack):
    cleaned = {}
    for field, value in (stack or {}).items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        cleaned[field] = value.strip() if isinstance(value, str) else value
    for field in VERSION_FIELDS:
        if field not in cleaned:
            continue
        if not _loose_field(field):
            checked_version(cleaned[field], 'stack.%s' % field)
            continue
        try:
            _version(cleaned[field], True)
        except ValueError as error:
            raise ValueError('stack %s: %s' % (field, error))
    return cleaned


def _unique(items):
    seen = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _check_rows(stack, rows):
    groups = {}
    order = []
    for row in rows:
        if not _row_applies(row, stack):
            continue
        # A floor row is keyed by what selects it: the product when it names one.
        key = tuple(row_key(row)) or (('product',) if row.get('products') else ('chip_family',))
        for field in _row_requirements(row):
            if stack.get(field) is None:
                continue
            group = (key, field)
            if group not in groups:
                groups[group] = []
                order.append(group)
            groups[group].append(row)
    conflicts = []
    checked = []
    for key, field in order:
        group_rows = groups[(key, field)]
        pair = list(key) + [field]
        checked.append(pair)
        if any(version_satisfies(stack[field], row[field], field) for row in group_rows):
            continue
        have = dict((name, stack.get(name)) for name in pair)
        conflicts.append({
            'pair': pair,
            'have': have,
            'fits': _unique(alt for row in group_rows for alt in _alternatives(row[field])),
            'source': '; '.join(_unique(row['source'] for row in group_rows)),
        })
    return conflicts, checked


def _check_driver_firmware(stack):
    conflicts = []
    checked = []
    driver, firmware = stack.get('driver'), stack.get('firmware')
    if not driver or not firmware:
        return conflicts, checked
    declared = (
        ('compatible_version_fw', firmware, 'the driver %s declares compatible_version_fw' % driver),
        ('compatible_version_drv', driver, 'the firmware %s declares compatible_version_drv' % firmware),
    )
    for range_field, version, source in declared:
        ranges = stack.get(range_field)
        if not ranges:
            continue
        checked.append(['driver', 'firmware'])
        try:
            fits = in_compat_range(version, ranges)
        except ValueError as error:
            raise ValueError('stack %s: %s' % (range_field, error))
        if not fits:
            conflicts.append({
                'pair': ['driver', 'firmware'],
                'have': {'driver': driver, 'firmware': firmware},
                'fits': [ranges],
                'source': '%s (in its version.info)' % source,
            })
    return conflicts, checked


def _describe_row(row, keyed, required):
    where = []
    if row.get('chip_families'):
        where.append('chip families ' + ', '.join(str(family) for family in row['chip_families']))
    if row.get('products'):
        where.append('products ' + ', '.join(str(product) for product in row['products']))
    return '%s %s with %s %s%s (source: %s)' % (
        keyed, ' or '.join(_alternatives(row[keyed])), required, ' or '.join(_alternatives(row[required])),
        (' on ' + '; '.join(where)) if where else '', row['source'])


def _rows_for(rows, keyed, required, version):
    """The rows keyed on ``keyed`` at ``version`` that require ``required``, whatever chip or product."""
    found = []
    for row in rows:
        if keyed not in row_key(row) or row.get(required) is None:
            continue
        try:
            if not _matches(keyed, version, row[keyed]):
                continue
        except ValueError:
            continue
        found.append(_describe_row(row, keyed, required))
    return _unique(found)


def _unknown_pairs(stack, rows, checked):
    unknown = []
    for keyed, required in ANCHORED_PAIRS:
        if keyed not in stack or required not in stack:
            continue
        if [keyed, required] in checked or [required, keyed] in checked:
            continue
        unknown.append({
            'pair': [keyed, required],
            'have': {keyed: stack[keyed], required: stack[required]},
            'rows': _rows_for(rows, keyed, required, stack[keyed]),
            'chip_family': stack.get('chip_family'),
            'product': stack.get('product'),
        })
    return unknown


def check_stack(stack, rows, extra_rows=None, replace_rows=False, allow_unknown=False):
    """Check ``stack`` against ``rows`` (plus ``extra_rows``) and the driver/firmware ranges.

    Returns ``{'ok', 'conflicts': [{pair, have, fits, source}], 'unknown': [{pair, have,
    rows, chip_family, product}], 'checked': [pairs], 'unchecked': [stack components that
    no applicable row or range speaks about]}``. ``ok`` is false when there is a conflict
    and, unless ``allow_unknown``, when an anchored pair is unknown (see the module
    docstring); ``unknown`` is returned either way.
    """
    cleaned = _clean_stack(stack)
    chosen = effective_rows(rows, extra_rows, replace_rows)
    conflicts, checked = _check_rows(cleaned, chosen)
    hdk_conflicts, hdk_checked = _check_driver_firmware(cleaned)
    conflicts.extend(hdk_conflicts)
    checked.extend(pair for pair in hdk_checked if pair not in checked)
    present = [field for field in VERSION_FIELDS if field in cleaned]
    covered = set(field for pair in checked for field in pair)
    unchecked = [field for field in present if field not in covered]
    unknown = _unknown_pairs(cleaned, chosen, checked)
    return {'ok': not conflicts and (allow_unknown or not unknown), 'conflicts': conflicts,
            'unknown': unknown, 'checked': checked, 'unchecked': unchecked}


def _same_version(a, b):
    try:
        return compare_versions(a, b) == 0
    except ValueError:
        return False


def parse_os_release(text):
    """``NAME VERSION_ID`` of an os-release text (what a row's ``os`` matches), or None."""
    values = {}
    for line in text.splitlines():
        if '=' in line:
            key, value = line.strip().split('=', 1)
            values[key] = value.strip().strip('"\'')
    name = values.get('NAME') or values.get('ID')
    if not name:
        return None
    return ' '.join(part for part in (name, values.get('VERSION_ID') or values.get('VERSION')) if part)


def probe_stack(desired, installed, chip_family=None, product=None, os_name=None):
    """The stack to check: ``desired`` with what it leaves out taken from one probe of the node.

    ``installed``: ascend_facts' ``installed``; the installed CANN, driver and firmware stand in
    for a version not given, and the ranges the installed driver and firmware declare
    (``compatible_version_fw``/``_drv``) apply when the stack keeps that version (a planned
    upgrade has other ranges). ``chip_family``, ``product`` and ``os_name`` (the os-release
    name and version) fill the fields ``desired`` does not set.
    """
    stack = dict((key, value) for key, value in desired.items() if value not in (None, ''))
    installed = installed or {}
    sources = {'cann': installed.get('toolkit'), 'driver': installed.get('driver'),
               'firmware': installed.get('firmware')}
    for key, entry in sources.items():
        # A damaged install (version None) has no version to stand in; the planner refuses it.
        if key not in stack and entry and entry.get('version'):
            stack[key] = entry['version']
    for component, range_key in (('driver', 'compatible_version_fw'), ('firmware', 'compatible_version_drv')):
        entry = installed.get(component)
        if range_key in stack or not entry or not entry.get(range_key):
            continue
        if component in stack and _same_version(stack[component], entry['version']):
            stack[range_key] = entry[range_key]
    for key, value in (('chip_family', chip_family), ('product', product), ('os', os_name)):
        if key not in stack and value:
            stack[key] = value
    return stack


def describe_conflicts(conflicts):
    """One human sentence per conflict, for a failure message."""
    sentences = []
    for conflict in conflicts:
        have = ', '.join('%s %s' % (name, conflict['have'].get(name)) for name in conflict['pair'])
        sentences.append('%s do not fit together: %s would fit (source: %s)' % (
            have, ' or '.join(conflict['fits']), conflict['source']))
    return '; '.join(sentences)


def describe_unknown(unknown, extra_rows_option='extra_rows', allow_option='allow_unknown'):
    """One human sentence per unknown pair, naming the rows that exist and how to proceed."""
    sentences = []
    for entry in unknown:
        keyed, required = entry['pair']
        have = '%s %s with %s %s' % (keyed, entry['have'][keyed], required, entry['have'][required])
        where = ', '.join('%s %s' % (name, entry[name]) for name in ('chip_family', 'product') if entry.get(name))
        if entry['rows']:
            rows = 'the rows for %s %s are: %s' % (keyed, entry['have'][keyed], '; '.join(entry['rows']))
        else:
            rows = 'the matrix has no row for %s %s' % (keyed, entry['have'][keyed])
        sentences.append(
            '%s%s is not in the compatibility matrix (%s). Fix: choose a documented pair, add a row for this '
            'pair to %s (with the source that validates it), or set %s to true to accept unknown pairs' % (
                have, (' (%s)' % where) if where else '', rows, extra_rows_option, allow_option))
    return '; '.join(sentences)
