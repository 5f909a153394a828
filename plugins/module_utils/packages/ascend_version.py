# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ordering of Huawei Ascend version strings.

Huawei mixes several spellings in one product line (``24.1.rc2``, ``24.1.RC2``,
``24.1.0``, ``25.0.rc1.1``, ``8.1.RC1.alpha002``, ``6.0.0.SPC1``, ``25.0.rc1.b033``,
``v7.3.0``), which neither plain string comparison nor LooseVersion orders correctly.

A version is split into fields at ``.``, ``-`` and ``_`` and at every change between
letters and digits; every field gets a rank, and a terminator field is appended so
that plain tuple comparison gives the whole ordering. At one position the ranks are:

    alpha < beta < b(build) < END < rc < number < spc

which yields, for example::

    8.1.RC1.alpha002 < 8.1.RC1.beta1 < 8.1.RC1.b033 < 8.1.RC1 < 8.1.RC1.1
    24.1 < 24.1.rc1 < 24.1.rc2 < 24.1.0 < 24.1.0.1 < 24.1.0.SPC1

``24.1`` sorts before ``24.1.rc1`` on purpose: the compatibility ranges Huawei writes
into version.info use the bare prefix as a lower bound (``[24.1,24.1.]``) and mean the
whole 24.1 line by it. Where a service pack lands against a numeric hotfix of the
same base (``6.0.0.SPC1`` vs ``6.0.0.1``) is not documented by Huawei; we place the
service pack after, because it supersedes the hotfixes of its base.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import re

_RANK_ALPHA = 0
_RANK_BETA = 1
_RANK_BUILD = 2
_RANK_END = 3
_RANK_RC = 4
_RANK_NUMBER = 5
_RANK_SERVICE_PACK = 6

_WORD_RANKS = {
    'alpha': _RANK_ALPHA,
    'beta': _RANK_BETA,
    'b': _RANK_BUILD,
    'rc': _RANK_RC,
    'spc': _RANK_SERVICE_PACK,
}

_END_FIELD = (_RANK_END, 0)
_PIECE_SEPARATOR = re.compile(r'[._-]')
_FIELD = re.compile(r'[0-9]+|[a-z]+')
_ALNUM_PIECE = re.compile(r'^[0-9a-z]+$')
_LEADING_V = re.compile(r'^v(?=[0-9])', re.IGNORECASE)

_OPERATORS = {
    '<': lambda order: order < 0,
    '<=': lambda order: order <= 0,
    '==': lambda order: order == 0,
    '!=': lambda order: order != 0,
    '>=': lambda order: order >= 0,
    '>': lambda order: order > 0,
}


def _fields_of(text):
    """Return the ranked fields of ``text`` (without terminator) or raise ValueError."""
    if not isinstance(text, str):
        raise ValueError('an Ascend version must be a string, got %s: %r' % (type(text).__name__, text))
    stripped = text.strip()
    if not stripped:
        raise ValueError('an Ascend version cannot be empty')
    lowered = _LEADING_V.sub('', stripped).lower()
    fields = []
    for piece in _PIECE_SEPARATOR.split(lowered):
        if not piece:
            raise ValueError(
                "invalid Ascend version %r: empty field (doubled, leading or trailing separator; "
                "a trailing dot is only meaningful as the upper bound of a compatibility range)" % text)
        if not _ALNUM_PIECE.match(piece):
            raise ValueError("invalid Ascend version %r: field %r holds characters other than letters and digits"
                             % (text, piece))
        for field in _FIELD.findall(piece):
            if field.isdigit():
                fields.append((_RANK_NUMBER, int(field)))
            elif field in _WORD_RANKS:
                fields.append((_WORD_RANKS[field], 0))
            else:
                raise ValueError("invalid Ascend version %r: unknown qualifier %r (known: %s)"
                                 % (text, field, ', '.join(sorted(_WORD_RANKS))))
    if fields[0][0] != _RANK_NUMBER:
        raise ValueError('invalid Ascend version %r: it must start with a number' % text)
    return tuple(fields)


@functools.total_ordering
class AscendVersion(object):
    """One Huawei version string, ordered as described in the module docstring.

    ``str()`` returns the text as given (stripped of surrounding blanks); equality and
    hashing use the ordering key, so ``24.1.RC2 == 24.1.rc2`` and ``v7.3.0 == 7.3.0``.
    """

    __slots__ = ('_text', '_fields')

    def __init__(self, text):
        self._fields = _fields_of(text)
        self._text = text.strip()

    @property
    def fields(self):
        """The ranked fields, usable for prefix checks (see in_compat_range)."""
        return self._fields

    @property
    def sort_key(self):
        """A tuple that sorts like the version (plain tuples, usable as ``sorted(key=...)``)."""
        return self._fields + (_END_FIELD,)

    def startswith(self, prefix):
        """True when every field of ``prefix`` (a version) begins this version."""
        prefix_fields = _coerce(prefix).fields
        return self._fields[:len(prefix_fields)] == prefix_fields

    def __str__(self):
        return self._text

    def __repr__(self):
        return 'AscendVersion(%r)' % self._text

    def __hash__(self):
        return hash(self._fields)

    def __eq__(self, other):
        if not isinstance(other, AscendVersion):
            return NotImplemented
        return self._fields == other._fields

    def __lt__(self, other):
        if not isinstance(other, AscendVersion):
            return NotImplemented
        return self.sort_key < other.sort_key


def parse_version(text):
    """Return an AscendVersion for ``text``; ValueError with the reason on junk."""
    return AscendVersion(text)


# What a version looks like, for every message that refuses one (docs/huawei-sources.md has the forms).
VERSION_SHAPE = ('a Huawei version is numbers and the qualifiers rc, alpha, beta, b or spc separated by dots, '
                 'starting with a number, for example 25.0.rc1.1, 8.2.RC1, 7.7.0.1.231 or 6.0.0.SPC1')


class InvalidVersion(ValueError):
    """A version a user set that is not a Huawei version; the message names the variable and the fix."""

    def __init__(self, variable, value, reason):
        self.variable = variable
        self.value = value
        self.reason = reason
        super(InvalidVersion, self).__init__(
            '%s is %r, which is not a Huawei version: %s. Fix: set %s to the version exactly as Huawei publishes '
            'it; %s' % (variable, value, reason, variable, VERSION_SHAPE))


def checked_version(value, variable):
    """The AscendVersion of ``value``, the one parser of every version a user sets (the plan, the
    compatibility gate and the sort filter all read versions through it); ``InvalidVersion`` naming
    ``variable`` when ``value`` is not one. Blanks inside a version (``25.0 rc1.1``) are refused like any
    other character that is not a letter, a digit or a separator: Huawei's file names never hold them."""
    if isinstance(value, AscendVersion):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidVersion(variable, value, 'a %s, not a string' % type(value).__name__)
    try:
        return AscendVersion(str(value))
    except ValueError as error:
        reason = str(error)
        # The parser's own text repeats the value; keep only why it is refused.
        prefix = 'invalid Ascend version %r: ' % (str(value),)
        raise InvalidVersion(variable, str(value), reason[len(prefix):] if reason.startswith(prefix) else reason)


def _coerce(value):
    if isinstance(value, AscendVersion):
        return value
    return AscendVersion(value)


def compare_versions(a, b):
    """Return -1, 0 or 1 as ``a`` sorts before, equal to or after ``b`` (str or AscendVersion)."""
    key_a = _coerce(a).sort_key
    key_b = _coerce(b).sort_key
    return (key_a > key_b) - (key_a < key_b)


def version_matches(a, op, b):
    """Evaluate ``a <op> b`` with op one of ``<``, ``<=``, ``==``, ``!=``, ``>=``, ``>``."""
    try:
        predicate = _OPERATORS[op]
    except (KeyError, TypeError):
        raise ValueError('unknown version operator %r (expected one of %s)' % (op, ', '.join(_OPERATORS)))
    return predicate(compare_versions(a, b))


_RANGE = re.compile(r'\[\s*([^\[\],]+?)\s*,\s*([^\[\],]+?)\s*\]')
_RANGE_LIST_REST = re.compile(r'^[\s,]*$')


def parse_compat_ranges(text):
    """Parse ``[lo,hi],[lo,hi]...`` into a list of ``(lo, hi, hi_is_prefix)``.

    ``lo`` and ``hi`` are AscendVersion objects. A trailing dot on the upper bound
    (``23.0.rc3.``) is how Huawei writes "this version and everything under it";
    it is stripped from ``hi`` and reported as ``hi_is_prefix``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError('compatibility range list is empty: %r' % (text,))
    ranges = []
    for match in _RANGE.finditer(text):
        low_text, high_text = match.group(1), match.group(2)
        high_is_prefix = high_text.endswith('.')
        if high_is_prefix:
            high_text = high_text[:-1]
        try:
            low = AscendVersion(low_text)
            high = AscendVersion(high_text)
        except ValueError as error:
            raise ValueError('invalid compatibility range %r in %r: %s' % (match.group(0), text, error))
        ranges.append((low, high, high_is_prefix))
    leftover = _RANGE.sub('', text)
    if not ranges or not _RANGE_LIST_REST.match(leftover):
        raise ValueError('cannot read compatibility ranges from %r (expected [low,high],[low,high]...)' % (text,))
    return ranges


def in_compat_range(version, ranges_text):
    """True when ``version`` falls inside any inclusive range of ``ranges_text``.

    A version that begins with the lower bound counts as reaching it, so builds of the
    lower bound itself (``24.1.alpha1`` against ``[24.1,...]``) are not left out.
    """
    candidate = _coerce(version)
    for low, high, high_is_prefix in parse_compat_ranges(ranges_text):
        reaches_low = candidate >= low or candidate.startswith(low)
        within_high = candidate <= high or (high_is_prefix and candidate.startswith(high))
        if reaches_low and within_high:
            return True
    return False


# Installed components as ascend_facts names them, in the order Huawei stacks them.
COMPONENTS = ('firmware', 'driver', 'toolkit', 'kernels', 'ops', 'nnal', 'docker_runtime')
COMPONENT_TITLES = {
    'firmware': 'firmware', 'driver': 'driver', 'toolkit': 'CANN toolkit', 'kernels': 'CANN kernels',
    'ops': 'CANN ops', 'nnal': 'NNAL', 'docker_runtime': 'Ascend Docker Runtime',
}


def same_version(left, right):
    """True when both are the same version in Huawei order, or both None; text that is not a version
    (a damaged version file) only equals the same text."""
    if left is None or right is None:
        return left is None and right is None
    try:
        return compare_versions(str(left), str(right)) == 0
    except ValueError:
        return str(left).strip() == str(right).strip()


def _installed_version(record):
    # ascend_facts gives {'version': ...} per component (None when absent); reports keep the bare string.
    if isinstance(record, dict):
        record = record.get('version')
    return str(record) if record not in (None, '') else None


def version_mismatches(installed, wanted):
    """The components of ``wanted`` ({component: version}) installed at another version, or not at all.

    ``installed`` maps components to their version or to ascend_facts' record of it. A wanted version
    that is None or empty is not checked (the component is not managed). Returns, in stack order, one
    dict per mismatch: component, title, installed (None when absent), wanted and a text such as
    ``CANN toolkit 8.0.RC3 (wanted 8.2.RC1)``. ValueError names an unknown component.
    """
    installed = installed or {}
    unknown = sorted(set(wanted) - set(COMPONENTS))
    if unknown:
        raise ValueError('unknown component(s) %s; use %s' % (', '.join(unknown), ', '.join(COMPONENTS)))
    mismatches = []
    for component in COMPONENTS:
        target = wanted.get(component)
        if target in (None, ''):
            continue
        target = str(target)
        found = _installed_version(installed.get(component))
        if same_version(found, target):
            continue
        title = COMPONENT_TITLES[component]
        record = installed.get(component)
        absent = 'damaged (its version file names no version)' if isinstance(record, dict) and record.get('damaged') \
            else 'not installed'
        mismatches.append({
            'component': component, 'title': title, 'installed': found, 'wanted': target,
            'text': '%s %s (wanted %s)' % (title, found or absent, target),
        })
    return mismatches
