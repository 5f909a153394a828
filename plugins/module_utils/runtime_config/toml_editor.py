# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Format-preserving edits of a TOML file on a ``tomlkit`` document, kept free of Ansible.

Every byte an edit does not own (comments, key order, blank lines, quoting, indentation) is written back as
it was read: a file tomlkit would not write back byte for byte is refused before the edit
(``parse_for_edit``) and after it (``written_back``), and new tables and keys take the indentation the
file uses. What goes where in a containerd config is containerd_layout's; what an edit changed, for its
undo, undo_record's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

try:
    from collections.abc import MutableMapping
except ImportError:  # pragma: no cover - Python 2 only, which modules here do not support
    MutableMapping = dict

try:
    import tomlkit
    from tomlkit.exceptions import ParseError as TomlParseError
    from tomlkit.exceptions import TOMLKitError as TomlkitError
    from tomlkit.items import Whitespace as TomlWhitespace
    TOMLKIT_IMPORT_ERROR = None
except ImportError:  # the module reports it with missing_required_lib
    tomlkit = None
    TomlParseError = None
    TomlkitError = None
    TomlWhitespace = None
    TOMLKIT_IMPORT_ERROR = traceback.format_exc()


class TomlkitMissingError(ImportError):
    """tomlkit is not importable on this node."""


class TomlEditError(ValueError):
    """The config cannot be edited safely: not TOML, unknown version, or a key of the wrong type."""


def _require_tomlkit():
    if tomlkit is None:
        raise TomlkitMissingError('the Python library tomlkit is required to edit containerd configs')


def parse_config(text):
    _require_tomlkit()
    if not isinstance(text, str):
        raise TomlEditError('not text (%s)' % type(text).__name__)
    try:
        return tomlkit.parse(text)
    except TomlParseError as error:
        # tomlkit's message already ends with "at line L col C".
        raise TomlEditError('not valid TOML: %s' % error)
    except (TomlkitError, ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
        # tomlkit reports some malformed documents (a key defined twice, deep nesting, stray
        # control characters) with other exceptions than ParseError.
        raise TomlEditError('not valid TOML: %s' % (error or type(error).__name__))


ROUND_TRIP_REFUSAL = 'would not write the parts of the file the module does not own back byte for byte'


def parse_for_edit(text):
    """Parse a config about to be edited; refuse one tomlkit would not write back as it was read.

    tomlkit re-indents some layouts on its own (sibling table headers indented below a parent that
    has no header of its own); an edit would then change lines the module does not own.
    """
    document = parse_config(text)
    if tomlkit.dumps(document) != text:
        raise TomlEditError('tomlkit %s %s (typically table headers indented below a table that has no '
                            'header of its own); Fix: indent those headers as their parent table is '
                            'indented, or not at all, then run again' % (tomlkit.__version__, ROUND_TRIP_REFUSAL))
    return document


def written_back(document):
    """The text of an edited document, refused when tomlkit would not read it back as written.

    Adding a sibling below an indented header whose parent has no header gives such a layout; the
    next run would then change lines the module does not own, so nothing is written.
    """
    text = tomlkit.dumps(document)
    if tomlkit.dumps(tomlkit.parse(text)) != text:
        raise TomlEditError('tomlkit %s %s once the runtime is added (table headers indented below a '
                            'table that has no header of its own); Fix: indent those headers as their '
                            'parent table is indented, or not at all, then run again'
                            % (tomlkit.__version__, ROUND_TRIP_REFUSAL))
    return text


def plain(value):
    unwrap = getattr(value, 'unwrap', None)
    return unwrap() if unwrap is not None else value


def is_table(value):
    return isinstance(value, MutableMapping)


def dotted_path(path):
    return '.'.join(path)


def table_at(document, path):
    """The table at ``path``, or None when some part is missing; a non-table on the way is an error."""
    current = document
    for depth, key in enumerate(path):
        if key not in current:
            return None
        current = current[key]
        if not is_table(current):
            raise TomlEditError('%s is a %s, not a table' % (dotted_path(path[:depth + 1]), type(plain(current)).__name__))
    return current


def header_indent_of(table):
    trivia = getattr(table, 'trivia', None)
    return trivia.indent if trivia is not None else ''


def value_indent_of(table):
    """Indentation of the first plain key of a table, None when it has none."""
    for key in list(table.keys()):
        item = table[key]
        if not is_table(item) and hasattr(item, 'trivia'):
            return item.trivia.indent
    return None


def indent_step_of(document, path):
    """The document's indentation per table level, read off the deepest header along ``path``.

    ``containerd config default`` indents a header by two spaces per level below ``[plugins]``;
    hand-written configs usually indent nothing. New tables follow whichever the document does;
    a document with no header along the path (a new drop-in file) gets no indentation.
    """
    deepest = None
    for depth in range(1, len(path) + 1):
        table = table_at(document, path[:depth])
        if table is None:
            break
        if not is_super_table(table):
            deepest = (depth, header_indent_of(table))
    if deepest is None or deepest[0] < 2 or not deepest[1].strip(' \t') == '':
        return ''
    depth, indent = deepest
    step_width = len(indent) // (depth - 1)
    step = indent[:step_width]
    return step if step * (depth - 1) == indent else ''


def is_super_table(table):
    """True for a table that has no header of its own in the text (only its sub-tables do)."""
    is_super = getattr(table, 'is_super_table', None)
    if is_super is None:
        # An out-of-order table (split across the file) always has headers of its own.
        return False
    return is_super() if callable(is_super) else bool(is_super)


def ends_with_blank_line(table):
    body = getattr(getattr(table, 'value', None), 'body', None) or []
    if not body:
        return False
    last = body[-1][1]
    if is_table(last):
        return ends_with_blank_line(last)
    return TomlWhitespace is not None and isinstance(last, TomlWhitespace) and '\n' in last.as_string()


def _is_inline(value):
    return tomlkit is not None and isinstance(value, tomlkit.items.InlineTable)


def ensure_table(document, path, created, indent_step, indents, headed=()):
    """Return the table at ``path``, creating missing ones; created paths are appended to ``created``.

    A created table prints no header of its own (it only holds the tables below it) unless its
    depth is in ``headed``: the ``containerd`` table gets one when a plain key goes into it.
    """
    current = document
    for depth, key in enumerate(path):
        if key in current:
            current = current[key]
            if not is_table(current):
                raise TomlEditError('%s is a %s, not a table' % (dotted_path(path[:depth + 1]), type(plain(current)).__name__))
            if _is_inline(current):
                dotted = dotted_path(path[:depth + 1])
                raise TomlEditError('%s is an inline table ({...}), which cannot hold the runtime table; '
                                    'Fix: write it as [%s] sections' % (dotted, dotted))
            continue
        # Intermediate tables only exist to hold the leaf, so they print no header of their own.
        current[key] = tomlkit.table(is_super_table=depth not in headed)
        current = current[key]
        indents.append((current, indent_step * depth, None))
        created.append(list(path[:depth + 1]))
    return current


def build_table(values, blank_line_after):
    """A new tomlkit table holding ``values`` (plain Python), nested tables after plain keys.

    Indentation is set afterwards by ``_set_indents``: tomlkit adds a parent's indentation to
    whatever a child is given when it is attached.
    """
    table = tomlkit.table()
    scalars = [(k, v) for k, v in values.items() if not isinstance(v, dict)]
    tables = [(k, v) for k, v in values.items() if isinstance(v, dict)]
    for key, value in scalars:
        table.add(key, tomlkit.item(value))
    if blank_line_after and scalars:
        table.add(tomlkit.nl())
    for key, value in tables:
        table.add(key, build_table(value, blank_line_after))
    return table


def set_indent(item, indent):
    """Give an attached item exactly ``indent``.

    tomlkit puts a line break in front of a new table whose predecessor has no blank line after
    it. Once written and read back, that line break belongs to the *preceding* table, so removing
    our table later would leave it behind. New tables are therefore written without it: a file
    that separates its tables by nothing gets ours the same way (``add_runtime`` makes sure the
    text ends with a line break first).
    """
    item.trivia.indent = indent


def set_indents(table, header_indent, key_step, table_step):
    set_indent(table, header_indent)
    for key, item in table.value.body:
        if key is None or not hasattr(item, 'trivia'):
            continue
        if is_table(item):
            set_indents(item, header_indent + table_step, key_step, table_step)
        else:
            set_indent(item, header_indent + key_step)


def set_value(table, key, value, indent):
    """Set a plain key, keeping the old item's indentation and comment when it exists.

    A new key goes before the table's sub-tables, and tomlkit puts a line break in front of the
    first of them; that line break would outlive the key's removal, so the sub-tables keep the
    indentation they had.
    """
    if key in table:
        table[key] = value
        return
    body = getattr(getattr(table, 'value', None), 'body', None) or []
    sub_indents = [(item, item.trivia.indent) for _key, item in body if is_table(item) and hasattr(item, 'trivia')]
    table[key] = value
    set_indent(table[key], indent)
    for item, sub_indent in sub_indents:
        item.trivia.indent = sub_indent


def toml_spelling(item):
    return item.as_string() if hasattr(item, 'as_string') else tomlkit.item(item).as_string()


def value_of_spelling(raw):
    """The tomlkit item a recorded TOML spelling stands for (``'runc'`` in single quotes: the string runc)."""
    return tomlkit.parse('value = ' + raw)['value']


def restore_spelling(table, key, raw):
    """Put back a value from its recorded TOML spelling (e.g. ``'runc'`` in single quotes)."""
    table[key] = value_of_spelling(raw)


def _header_path(line):
    """The key path a ``[table]`` header line names, None for any other line."""
    stripped = line.strip()
    if not stripped.startswith('[') or stripped.startswith('[['):
        return None
    try:
        table = tomlkit.parse(stripped)
    except TomlParseError:
        return None
    path = []
    while len(table) == 1 and is_table(list(table.values())[0]):
        key = list(table.keys())[0]
        path.append(key)
        table = table[key]
    return path


def drop_header_line(text, path):
    """Text without the header of table ``path`` and the blank lines after it.

    Used for a table that only had a header because this module put a key in it: once the key is
    gone, so is the header, leaving the text as it was before.
    """
    lines = text.splitlines(True)
    for index, line in enumerate(lines):
        if _header_path(line) == list(path):
            end = index + 1
            while end < len(lines) and not lines[end].strip():
                end += 1
            return ''.join(lines[:index] + lines[end:])
    return text


def uses_crlf(text):
    """Whether every line break of ``text`` is CRLF (a file written on Windows, or by a tool that keeps it)."""
    return '\r\n' in text and text.count('\r\n') == text.count('\n')
