# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Register (and unregister) an OCI runtime in a containerd ``config.toml``, kept free of Ansible.

The edit is made on a ``tomlkit`` document, so every byte the edit does not own (comments, key
order, blank lines, quoting, indentation) is written back as it was read.

Where the runtime goes depends on the config's top-level ``version`` (as the Ascend Docker Runtime's
installer in MindCluster does; docs/huawei-sources.md):

* 1 -> ``plugins.cri``, 2 -> ``plugins."io.containerd.grpc.v1.cri"``,
  3 and 4 (containerd 2.x; ``config default`` of 2.4 writes 4) -> ``plugins."io.containerd.cri.v1.runtime"``;
* a file *without* ``version`` is read by containerd as version 1 (checked against the real
  containerd 1.6, 1.7 and 2.x: tables under ``io.containerd.grpc.v1.cri`` in such a file are
  ignored), so it is edited as version 1. Huawei's installer writes the version 2 table there,
  which containerd never reads.

The runtime table ``<cri>.containerd.runtimes.<name>`` is a copy of the ``runc`` runtime table
(so ``runtime_type``, ``options.SystemdCgroup`` and the rest follow the node's own settings), with
``options.BinaryName`` pointing at the wrapper binary. Without a ``runc`` table Huawei's defaults
apply: ``runtime_type = "io.containerd.runc.v2"`` and ``options.SystemdCgroup = true``.

A version 2 file can also hold the tables of containerd 2.x (``io.containerd.cri.v1.runtime``):
containerd 2.x reads such a file, migrates its ``io.containerd.grpc.v1.cri`` part and keeps the 2.x
tables as they are, so the runtime goes where the file's runtimes live (``cri_plugin_of``).

The options of a runtime are decoded by containerd into the runc shim's options struct, which
matches keys case-insensitively (``binaryName`` is ``BinaryName``): an option is edited in the
spelling the file has, never added in a second one.

``add_runtime`` returns, beside the new text, a *record* of what it changed (JSON-serialisable):
whether it created the runtime table, which parent tables it created, the previous value of
``default_runtime_name`` in its original TOML spelling and, for a runtime table that existed
before (a manual Huawei install's ``ascend``), the previous spelling of every key it changed in
that table (``runtime_previous``). ``remove_runtime`` uses the record to undo exactly that: the
previous default comes back with its quoting and comment, a table taken over gets its old values
back and stays, and only tables the record says were created (and that are empty again) are
pruned. Without a record it does what Huawei's uninstall does (delete the runtime table and reset
a default naming it to ``runc``), but only for a table that holds nothing beyond what Huawei's
installer writes (a copy of ``runc`` with its own ``BinaryName``): a table with settings of its
own is kept, with the default naming it (``info['runtime_kept']`` says so), since nothing proves
it was ours to delete; and ``runc`` itself is never deleted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import fnmatch
import functools
import hashlib
import json
import os
import re
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

CRI_PLUGIN_BY_VERSION = {
    1: 'cri',
    2: 'io.containerd.grpc.v1.cri',
    3: 'io.containerd.cri.v1.runtime',
    # containerd 2.2 and later write version 4; the CRI runtime table did not move.
    4: 'io.containerd.cri.v1.runtime',
}
# The CRI plugin tables containerd reads runtimes from, per config version. containerd 2.x reads a
# version 2 file and migrates its io.containerd.grpc.v1.cri part; 2.x tables there stay as they are
# (checked with containerd 2.4: a runtime under grpc.v1.cri next to a cri.v1.runtime table is lost).
CRI_PLUGINS_READ_BY_VERSION = {
    1: ('cri',),
    2: ('io.containerd.grpc.v1.cri', 'io.containerd.cri.v1.runtime'),
    3: ('io.containerd.cri.v1.runtime',),
    4: ('io.containerd.cri.v1.runtime',),
}
# Options containerd decodes case-insensitively into the runc shim's options (facts in docs/container-runtime.md).
BINARY_NAME_OPTION = 'BinaryName'
SYSTEMD_CGROUP_OPTION = 'SystemdCgroup'
# containerd treats a config without `version` as version 1.
VERSION_WHEN_MISSING = 1
DEFAULT_RUNTIME_TYPE = 'io.containerd.runc.v2'
# What Huawei's uninstall sets `default_runtime_name` back to when nothing better is known.
FALLBACK_DEFAULT_RUNTIME = 'runc'
TEMPLATE_RUNTIME = 'runc'
DEFAULT_INDENT_STEP = '  '
STATE_FILE_SUFFIX = '.npu_ascend.json'


class TomlkitMissingError(ImportError):
    """tomlkit is not importable on this node."""


class ContainerdConfigError(ValueError):
    """The config cannot be edited safely: not TOML, unknown version, or a key of the wrong type."""


def _unsupported_version(version):
    known = ', '.join(str(known_version) for known_version in sorted(CRI_PLUGIN_BY_VERSION))
    return ContainerdConfigError('unsupported containerd config version %r (known: %s)' % (version, known))


def _require_tomlkit():
    if tomlkit is None:
        raise TomlkitMissingError('the Python library tomlkit is required to edit containerd configs')


def state_file_path(config_path):
    """Where the records of one config live: a hidden file beside it.

    The name does not end in ``.toml``, so an ``imports = ["conf.d/*.toml"]`` glob never loads it.
    """
    directory, base = os.path.split(config_path)
    return os.path.join(directory, '.' + base + STATE_FILE_SUFFIX)


def minimal_config(version):
    """Text of a config holding nothing but its version, the start of a drop-in file."""
    if version not in CRI_PLUGIN_BY_VERSION:
        raise _unsupported_version(version)
    return 'version = %d\n\n' % version


def holds_only_version(text):
    """Whether a config says nothing but its version: what is left of a drop-in file once its runtime
    is removed (tomlkit releases differ in the blank lines they leave, so bytes cannot tell)."""
    return set(parse_config(text).keys()) <= {'version'}


def parse_config(text):
    _require_tomlkit()
    if not isinstance(text, str):
        raise ContainerdConfigError('not text (%s)' % type(text).__name__)
    try:
        return tomlkit.parse(text)
    except TomlParseError as error:
        # tomlkit's message already ends with "at line L col C".
        raise ContainerdConfigError('not valid TOML: %s' % error)
    except (TomlkitError, ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
        # tomlkit reports some malformed documents (a key defined twice, deep nesting, stray
        # control characters) with other exceptions than ParseError.
        raise ContainerdConfigError('not valid TOML: %s' % (error or type(error).__name__))


ROUND_TRIP_REFUSAL = 'would not write the parts of the file the module does not own back byte for byte'


def _parse_for_edit(text):
    """Parse a config about to be edited; refuse one tomlkit would not write back as it was read.

    tomlkit re-indents some layouts on its own (sibling table headers indented below a parent that
    has no header of its own); an edit would then change lines the module does not own.
    """
    document = parse_config(text)
    if tomlkit.dumps(document) != text:
        raise ContainerdConfigError('tomlkit %s %s (typically table headers indented below a table that has no '
                                    'header of its own); Fix: indent those headers as their parent table is '
                                    'indented, or not at all, then run again' % (tomlkit.__version__, ROUND_TRIP_REFUSAL))
    return document


def _written_back(document):
    """The text of an edited document, refused when tomlkit would not read it back as written.

    Adding a sibling below an indented header whose parent has no header gives such a layout; the
    next run would then change lines the module does not own, so nothing is written.
    """
    text = tomlkit.dumps(document)
    if tomlkit.dumps(tomlkit.parse(text)) != text:
        raise ContainerdConfigError('tomlkit %s %s once the runtime is added (table headers indented below a '
                                    'table that has no header of its own); Fix: indent those headers as their '
                                    'parent table is indented, or not at all, then run again'
                                    % (tomlkit.__version__, ROUND_TRIP_REFUSAL))
    return text


def config_version(document):
    """The version containerd will read the document as: 1, 2, 3 or 4."""
    if 'version' not in document:
        return VERSION_WHEN_MISSING
    version = _plain(document['version'])
    if isinstance(version, float) and version in CRI_PLUGIN_BY_VERSION:
        # containerd decodes `version` into an integer and refuses to start on a float.
        raise ContainerdConfigError('version = %s is a float; containerd reads the version as an integer and '
                                    'refuses this file. Fix: write it as version = %d'
                                    % (document['version'].as_string().strip(), int(version)))
    if isinstance(version, bool) or not isinstance(version, int) or version not in CRI_PLUGIN_BY_VERSION:
        raise _unsupported_version(version)
    return version


def cri_plugin(version):
    return CRI_PLUGIN_BY_VERSION[version]


def cri_plugin_of(document, version):
    """The CRI plugin table the runtimes of ``document`` live in, for the containerd reading ``version``.

    A version 2 file written for containerd 2.x holds ``io.containerd.cri.v1.runtime`` tables under
    its ``version = 2`` header; containerd 2.x honours them there, so that is where runtimes go.
    A file holding a ``containerd`` table under two of them is refused: which one wins depends on
    containerd's migration, and either choice could register a runtime containerd never reads.
    """
    candidates = CRI_PLUGINS_READ_BY_VERSION[version]
    plugins = document.get('plugins') if 'plugins' in document else None
    if len(candidates) == 1 or not _is_table(plugins):
        return cri_plugin(version)
    present = [name for name in candidates if _is_table(plugins.get(name))]
    holding = [name for name in present if 'containerd' in plugins[name]]
    if len(holding) > 1:
        raise ContainerdConfigError(
            'the file says version %d but holds containerd runtime tables under both %s; containerd 2.x migrates '
            'one over the other, so a runtime in either may be lost. Fix: run `containerd config migrate` and keep '
            'one of them' % (version, ' and '.join('plugins."%s".containerd' % name for name in holding)))
    if holding:
        return holding[0]
    # No runtimes yet: a file with containerd 2.x tables is a containerd 2.x file.
    return candidates[-1] if candidates[-1] in present else cri_plugin(version)


def describe(text):
    """Version and CRI plugin table of a config text, as ``(version, plugin)``."""
    document = parse_config(text)
    version = config_version(document)
    return version, cri_plugin_of(document, version)


def _plain(value):
    unwrap = getattr(value, 'unwrap', None)
    return unwrap() if unwrap is not None else value


def _is_table(value):
    return isinstance(value, MutableMapping)


def _dotted(path):
    return '.'.join(path)


def _table_at(document, path):
    """The table at ``path``, or None when some part is missing; a non-table on the way is an error."""
    current = document
    for depth, key in enumerate(path):
        if key not in current:
            return None
        current = current[key]
        if not _is_table(current):
            raise ContainerdConfigError('%s is a %s, not a table' % (_dotted(path[:depth + 1]), type(_plain(current)).__name__))
    return current


def _header_indent(table):
    trivia = getattr(table, 'trivia', None)
    return trivia.indent if trivia is not None else ''


def _value_indent(table):
    """Indentation of the first plain key of a table, None when it has none."""
    for key in list(table.keys()):
        item = table[key]
        if not _is_table(item) and hasattr(item, 'trivia'):
            return item.trivia.indent
    return None


def _indent_step(document, path):
    """The document's indentation per table level, read off the deepest header along ``path``.

    ``containerd config default`` indents a header by two spaces per level below ``[plugins]``;
    hand-written configs usually indent nothing. New tables follow whichever the document does;
    a document with no header along the path (a new drop-in file) gets no indentation.
    """
    deepest = None
    for depth in range(1, len(path) + 1):
        table = _table_at(document, path[:depth])
        if table is None:
            break
        if not _is_super_table(table):
            deepest = (depth, _header_indent(table))
    if deepest is None or deepest[0] < 2 or not deepest[1].strip(' \t') == '':
        return ''
    depth, indent = deepest
    step_width = len(indent) // (depth - 1)
    step = indent[:step_width]
    return step if step * (depth - 1) == indent else ''


def _is_super_table(table):
    """True for a table that has no header of its own in the text (only its sub-tables do)."""
    is_super = getattr(table, 'is_super_table', None)
    if is_super is None:
        # An out-of-order table (split across the file) always has headers of its own.
        return False
    return is_super() if callable(is_super) else bool(is_super)


def _ends_with_blank_line(table):
    body = getattr(getattr(table, 'value', None), 'body', None) or []
    if not body:
        return False
    last = body[-1][1]
    if _is_table(last):
        return _ends_with_blank_line(last)
    return TomlWhitespace is not None and isinstance(last, TomlWhitespace) and '\n' in last.as_string()


def _is_inline(value):
    return tomlkit is not None and isinstance(value, tomlkit.items.InlineTable)


def _clean_errors(function):
    """Turn what tomlkit raises on a document it cannot edit into a ContainerdConfigError."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ContainerdConfigError:
            raise
        except (TomlkitError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as error:
            raise ContainerdConfigError('cannot edit the file safely (%s: %s); Fix: write the tables along '
                                        'plugins.<cri plugin>.containerd.runtimes as [table] sections'
                                        % (type(error).__name__, error))
    return wrapper


def _ensure_table(document, path, created, indent_step, indents, headed=()):
    """Return the table at ``path``, creating missing ones; created paths are appended to ``created``.

    A created table prints no header of its own (it only holds the tables below it) unless its
    depth is in ``headed``: the ``containerd`` table gets one when a plain key goes into it.
    """
    current = document
    for depth, key in enumerate(path):
        if key in current:
            current = current[key]
            if not _is_table(current):
                raise ContainerdConfigError('%s is a %s, not a table' % (_dotted(path[:depth + 1]), type(_plain(current)).__name__))
            if _is_inline(current):
                dotted = _dotted(path[:depth + 1])
                raise ContainerdConfigError('%s is an inline table ({...}), which cannot hold the runtime table; '
                                            'Fix: write it as [%s] sections' % (dotted, dotted))
            continue
        # Intermediate tables only exist to hold the leaf, so they print no header of their own.
        current[key] = tomlkit.table(is_super_table=depth not in headed)
        current = current[key]
        indents.append((current, indent_step * depth, None))
        created.append(list(path[:depth + 1]))
    return current


def _build_table(values, blank_line_after):
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
        table.add(key, _build_table(value, blank_line_after))
    return table


def _set_indent(item, indent):
    """Give an attached item exactly ``indent``.

    tomlkit puts a line break in front of a new table whose predecessor has no blank line after
    it. Once written and read back, that line break belongs to the *preceding* table, so removing
    our table later would leave it behind. New tables are therefore written without it: a file
    that separates its tables by nothing gets ours the same way (``add_runtime`` makes sure the
    text ends with a line break first).
    """
    item.trivia.indent = indent


def _set_indents(table, header_indent, key_step, table_step):
    _set_indent(table, header_indent)
    for key, item in table.value.body:
        if key is None or not hasattr(item, 'trivia'):
            continue
        if _is_table(item):
            _set_indents(item, header_indent + table_step, key_step, table_step)
        else:
            _set_indent(item, header_indent + key_step)


def _steps_of(template, indent_step):
    """``(key_step, table_step)``: how far the template runtime indents its keys and its options table."""
    header = _header_indent(template)
    key_step = table_step = indent_step
    key_indent = _value_indent(template)
    if key_indent is not None and key_indent.startswith(header):
        key_step = key_indent[len(header):]
    options = template.get('options')
    if _is_table(options) and _header_indent(options).startswith(header):
        table_step = _header_indent(options)[len(header):]
    return key_step, table_step


def _set_value(table, key, value, indent):
    """Set a plain key, keeping the old item's indentation and comment when it exists.

    A new key goes before the table's sub-tables, and tomlkit puts a line break in front of the
    first of them; that line break would outlive the key's removal, so the sub-tables keep the
    indentation they had.
    """
    if key in table:
        table[key] = value
        return
    body = getattr(getattr(table, 'value', None), 'body', None) or []
    sub_indents = [(item, item.trivia.indent) for _key, item in body if _is_table(item) and hasattr(item, 'trivia')]
    table[key] = value
    _set_indent(table[key], indent)
    for item, sub_indent in sub_indents:
        item.trivia.indent = sub_indent


def _raw(item):
    return item.as_string() if hasattr(item, 'as_string') else tomlkit.item(item).as_string()


def _restore_raw(table, key, raw):
    """Put back a value from its recorded TOML spelling (e.g. ``'runc'`` in single quotes)."""
    table[key] = tomlkit.parse('value = ' + raw)['value']


def _option_key(options, option):
    """The spelling ``options`` has for ``option`` (containerd matches option keys case-insensitively).

    Returns ``option`` itself when the table has no spelling of it; a table with two spellings of
    one option is refused, since which one containerd uses depends on its decoder's key order.
    """
    spellings = [key for key in options.keys() if isinstance(key, str) and key.lower() == option.lower()]
    if len(spellings) > 1:
        raise ContainerdConfigError('the options %s are one option to containerd (it matches option keys '
                                    'case-insensitively); Fix: keep one of them' % ' and '.join(sorted(spellings)))
    return spellings[0] if spellings else option


def option_value(options, option):
    """The value of ``option`` in a plain or tomlkit options table, whatever its letter case; None when unset."""
    if not isinstance(options, MutableMapping) and not isinstance(options, dict):
        return None
    key = _option_key(options, option)
    return _plain(options.get(key))


def _runtime_values(template, binary_name):
    values = copy.deepcopy(_plain(template)) if template is not None else {}
    if not isinstance(values, dict):
        values = {}
    values.setdefault('runtime_type', DEFAULT_RUNTIME_TYPE)
    options = values.get('options')
    if not isinstance(options, dict):
        options = {}
        values['options'] = options
    if template is None:
        options.setdefault(SYSTEMD_CGROUP_OPTION, True)
    # A template spelling it `binaryName` (kubespray) gets its own spelling set, not a second key.
    options[_option_key(options, BINARY_NAME_OPTION)] = binary_name
    # The options table comes last, as in containerd's own output.
    values['options'] = values.pop('options')
    return values


def new_record():
    return {
        'runtime_created': False,
        'created_tables': [],
        'default_changed': False,
        'previous_default': None,
        'newline_added': False,
        'headed_tables': [],
    }


def _copy_record(record):
    merged = new_record()
    if record:
        merged.update(copy.deepcopy(record))
    return merged


def _runtimes_path(document):
    version = config_version(document)
    plugin = cri_plugin_of(document, version)
    return version, plugin, ['plugins', plugin, 'containerd']


def template_runtime(text):
    """The ``runc`` runtime table of config ``text`` as plain values, or None when it has none."""
    document = parse_config(text)
    _version, _plugin, containerd_path = _runtimes_path(document)
    runtimes = _table_at(document, containerd_path + ['runtimes'])
    template = runtimes.get(TEMPLATE_RUNTIME) if runtimes is not None else None
    return _plain(template) if _is_table(template) else None


def _remember(takeover, path, table, key):
    """Record, once, the TOML spelling ``key`` of a taken-over table had before its first change (None: absent)."""
    if any(recorded == path for recorded, _raw_value in takeover['values']):
        return
    takeover['values'].append([list(path), _raw(table[key]) if key in table else None])


def _take_over(existing, record, binary_name, indent_step, indents):
    """Correct ``BinaryName`` (and a missing ``runtime_type``) of a runtime table that was there before.

    What each changed key held before the module's first change goes to ``record['runtime_previous']``,
    so that undoing puts the operator's entry back instead of deleting it.
    """
    takeover = record.get('runtime_previous')
    if not isinstance(takeover, dict):
        takeover = {'values': [], 'tables': []}
    options = existing.get('options')
    if options is None:
        existing['options'] = tomlkit.table()
        options = existing['options']
        indents.append((options, _header_indent(existing) + indent_step, None))
        if ['options'] not in takeover['tables']:
            takeover['tables'].append(['options'])
    elif not _is_table(options):
        raise ContainerdConfigError('options of the runtime is a %s, not a table' % type(_plain(options)).__name__)
    key = _option_key(options, BINARY_NAME_OPTION)
    if _plain(options.get(key)) != binary_name:
        _remember(takeover, ['options', key], options, key)
        _set_value(options, key, binary_name, _value_indent(options) or _header_indent(options) + indent_step)
    if 'runtime_type' not in existing:
        _remember(takeover, ['runtime_type'], existing, 'runtime_type')
        _set_value(existing, 'runtime_type', DEFAULT_RUNTIME_TYPE,
                   _value_indent(existing) or _header_indent(existing) + indent_step)
    record['runtime_previous'] = takeover


@_clean_errors
def add_runtime(text, name, binary_name, make_default, record=None, template=None):
    """Register runtime ``name`` in config ``text``.

    Returns ``(new_text, new_record, info)``: ``new_record`` is ``record`` (the one an earlier run
    returned, or None) updated with what this call changed; ``info`` holds ``config_version`` and
    ``cri_plugin``. ``make_default`` False makes sure ``name`` is *not* the default runtime, putting
    back the recorded previous default (or ``runc``) when it is. ``template`` (plain values, see
    ``template_runtime``) replaces the ``runc`` table of ``text`` as the model of a new runtime, for
    a drop-in file whose ``runc`` lives in the main config.

    A runtime table that exists and that no record says this module created is taken over: only
    ``options.BinaryName`` (in the spelling the file has) and a missing ``runtime_type`` are set, and
    their previous values go into the record (``runtime_previous``), even when nothing changes, so
    that ``remove_runtime`` gives the entry back instead of deleting it.
    """
    first_change = record is None
    record = _copy_record(record)
    if first_change:
        record['original_text'] = text
    elif record.get('written_sha256') != _sha256(text):
        # Someone else wrote the file since this runtime's last change: the text before the first
        # change is stale, and putting it back on absent would throw away what they wrote.
        record.pop('original_text', None)
    if record.get('file_sha256') not in (None, _sha256(text)):
        # Not the bytes this collection left: whether the file's last line break is ours is decided anew.
        record['newline_added'] = False
    crlf = _uses_crlf(text)
    if crlf:
        # Edited with LF line breaks, and every line break written back as the file has them.
        text = text.replace('\r\n', '\n')
    if text and not text.endswith('\n'):
        # A new table must start on a line of its own; the removal takes the line break away again.
        text += '\n'
        record['newline_added'] = True
    document = _parse_for_edit(text)
    version, plugin, containerd_path = _runtimes_path(document)
    runtimes_path = containerd_path + ['runtimes']
    indent_step = _indent_step(document, runtimes_path + [TEMPLATE_RUNTIME])
    # tomlkit may add line breaks to the indentation of tables that follow a key it inserts, so
    # the indentation of everything new is (re)applied once all edits are done.
    indents = []

    created = []
    containerd_existed_headless = (_table_at(document, containerd_path) is not None
                                   and _is_super_table(_table_at(document, containerd_path)))
    containerd = _ensure_table(document, containerd_path, created, indent_step, indents,
                               headed=(len(containerd_path) - 1,) if make_default else ())
    current_default = _plain(containerd.get('default_runtime_name'))
    if make_default and current_default != name:
        if not record['default_changed']:
            # The default before the module's *first* change is the one undo puts back.
            record['default_changed'] = True
            record['previous_default'] = (_raw(containerd['default_runtime_name'])
                                          if 'default_runtime_name' in containerd else None)
            # Whether that default named a runtime containerd had: one gone by the time it would
            # come back is not put back (a default containerd's CRI refuses); one that never was is.
            existing_runtimes = containerd.get('runtimes') if 'runtimes' in containerd else None
            record['previous_default_existed'] = (current_default == FALLBACK_DEFAULT_RUNTIME or (
                isinstance(current_default, str) and _is_table(existing_runtimes) and current_default in existing_runtimes))
        if containerd_existed_headless and containerd_path not in record['headed_tables']:
            # The key gives the table a header line of its own, to be taken out with the key.
            record['headed_tables'].append(containerd_path)
        key_indent = _value_indent(containerd)
        if key_indent is None:
            key_indent = _header_indent(containerd) + indent_step
        _set_value(containerd, 'default_runtime_name', name, key_indent)
        record['default_set_to'] = name
    elif not make_default and current_default == name:
        if record['default_changed']:
            _restore_default(containerd, record)
        else:
            # Someone else made it the default (a manual install): remember that for the undo.
            record['default_changed'] = True
            record['previous_default'] = _raw(containerd['default_runtime_name'])
            containerd['default_runtime_name'] = FALLBACK_DEFAULT_RUNTIME
            record['default_set_to'] = FALLBACK_DEFAULT_RUNTIME

    runtimes = _ensure_table(document, runtimes_path, created, indent_step, indents)
    existing = runtimes.get(name)
    if existing is not None and not _is_table(existing):
        raise ContainerdConfigError('%s is a %s, not a table' % (_dotted(runtimes_path + [name]), type(_plain(existing)).__name__))
    if existing is None:
        record.pop('runtime_edited', None)
    elif record.get('runtime_written') is not None and _json_safe(_plain(existing)) != record['runtime_written']:
        # Someone changed the table since this module wrote it: it stays theirs, whatever present does now.
        record['runtime_edited'] = True

    if existing is None:
        if template is None:
            template = runtimes.get(TEMPLATE_RUNTIME)
            if template is not None and not _is_table(template):
                template = None
        else:
            template = tomlkit.item(copy.deepcopy(template))
        if template is not None:
            header_indent = _header_indent(template)
            blank_line_after = _ends_with_blank_line(template)
            steps = _steps_of(template, indent_step)
        else:
            header_indent = indent_step * (len(runtimes_path))
            blank_line_after = False
            steps = (indent_step, indent_step)
        runtimes[name] = _build_table(_runtime_values(template, binary_name), blank_line_after)
        indents.append((runtimes[name], header_indent, steps))
        record['runtime_created'] = True
        record.pop('runtime_previous', None)
    elif record['runtime_created']:
        # Our own table (an earlier run made it): correct the binary, nothing to remember.
        scratch = {'values': [], 'tables': []}
        _take_over(existing, {'runtime_previous': scratch}, binary_name, indent_step, indents)
    else:
        headless = _is_super_table(existing)
        _take_over(existing, record, binary_name, indent_step, indents)
        if headless and 'runtime_type' in existing and runtimes_path + [name] not in record['headed_tables']:
            # A table written only as `[...runtimes.<name>.options]` gets a header line of its own
            # with the runtime_type put in it; the line goes again with the key.
            record['headed_tables'].append(runtimes_path + [name])

    for item, indent, steps in indents:
        if steps:
            _set_indents(item, indent, steps[0], steps[1])
        else:
            _set_indent(item, indent)
    for path in created:
        if path not in record['created_tables']:
            record['created_tables'].append(path)
    new_text = _written_back(document)
    if crlf:
        new_text = new_text.replace('\n', '\r\n')
    record['written_sha256'] = record['file_sha256'] = _sha256(new_text)
    # The runtime table as this module left it: absent deletes (or gives back) only what nobody changed since.
    record['runtime_written'] = _json_safe(_plain(runtimes[name]))
    return new_text, record, {'config_version': version, 'cri_plugin': plugin}


def _sha256(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _uses_crlf(text):
    """Whether every line break of ``text`` is CRLF (a file written on Windows, or by a tool that keeps it)."""
    return '\r\n' in text and text.count('\r\n') == text.count('\n')


def _json_safe(value):
    """``value`` as it reads back from the JSON record (dates become text, tuples lists)."""
    return json.loads(json.dumps(value, default=str))


def _restore_default(containerd, record):
    if record.get('default_changed'):
        previous = record.get('previous_default')
        if previous is not None and record.get('previous_default_existed', True):
            runtimes = containerd.get('runtimes') if 'runtimes' in containerd else None
            named = _plain(tomlkit.parse('value = ' + previous)['value'])
            if named != FALLBACK_DEFAULT_RUNTIME and not (isinstance(named, str) and _is_table(runtimes) and named in runtimes):
                # It named a runtime that is gone now (another of ours, removed first): containerd's
                # CRI refuses a default it has no runtime for, so its own default applies instead.
                previous = None
        if previous is None:
            if 'default_runtime_name' in containerd:
                del containerd['default_runtime_name']
        else:
            _restore_raw(containerd, 'default_runtime_name', previous)
    else:
        containerd['default_runtime_name'] = FALLBACK_DEFAULT_RUNTIME
    record['default_changed'] = False
    record['previous_default'] = None
    record.pop('default_set_to', None)


def _value_at(plain, path):
    for key in path:
        if not isinstance(plain, dict) or key not in plain:
            return None
        plain = plain[key]
    return plain


def _give_back(table, takeover, written=None):
    """Put the recorded values of a taken-over runtime table back, newest change first.

    With ``written`` (the table as the module left it), a value someone changed since stays theirs.
    """
    current = _json_safe(_plain(table))
    for path, raw in reversed(takeover.get('values') or []):
        parent = _table_at(table, path[:-1]) if len(path) > 1 else table
        if parent is None:
            continue
        if written is not None and _value_at(current, path) != _value_at(written, path):
            continue
        if raw is None:
            if path[-1] in parent:
                del parent[path[-1]]
        else:
            _restore_raw(parent, path[-1], raw)
    for path in sorted(takeover.get('tables') or [], key=len, reverse=True):
        sub = _table_at(table, path)
        if sub is not None and len(sub) == 0:
            parent = _table_at(table, path[:-1]) if len(path) > 1 else table
            del parent[path[-1]]


def _huawei_copy(runtime, runtimes):
    """Whether a runtime table holds nothing beyond what Huawei's installer writes: a copy of ``runc``
    (or, without one, the installer's defaults) with a ``BinaryName`` of its own."""
    values = _plain(runtime)
    if not isinstance(values, dict):
        return False
    model = _runtime_values(runtimes.get(TEMPLATE_RUNTIME) if _is_table(runtimes.get(TEMPLATE_RUNTIME)) else None, '')

    def without_binary(plain):
        plain = copy.deepcopy(plain)
        options = plain.get('options')
        if isinstance(options, dict):
            for key in [key for key in options if key.lower() == BINARY_NAME_OPTION.lower()]:
                del options[key]
        return plain
    return without_binary(values) == without_binary(model)


@_clean_errors
def remove_runtime(text, name, record=None):
    """Unregister runtime ``name``; returns ``(new_text, info)`` like ``add_runtime``.

    ``info['runtime_kept']`` is True when, without a record, the runtime table was left in place
    because it holds settings of its own (see the module docstring).
    """
    document = _parse_for_edit(text)
    version, plugin, containerd_path = _runtimes_path(document)
    has_record = bool(record)
    record = _copy_record(record)
    kept = False
    info = {'config_version': version, 'cri_plugin': plugin, 'runtime_kept': False, 'runtime_edited': False}
    if has_record and record.get('original_text') is not None and record.get('written_sha256') == _sha256(text):
        # Untouched since this module wrote it: the exact text before the first change comes back.
        return record['original_text'], info
    in_sync = record.get('file_sha256') in (None, _sha256(text))
    written = record.get('runtime_written') if has_record else None
    crlf = _uses_crlf(text)
    if crlf:
        text = text.replace('\r\n', '\n')
        document = _parse_for_edit(text)

    runtimes = _table_at(document, containerd_path + ['runtimes'])
    if runtimes is not None and name in runtimes:
        takeover = record.get('runtime_previous')
        edited = bool(record.get('runtime_edited')) or (written is not None and _json_safe(_plain(runtimes[name])) != written)
        if record['runtime_created'] and edited:
            # Someone changed the table since the module wrote it (a key of their own): it is theirs now.
            kept = None
            info['runtime_edited'] = True
        elif record['runtime_created']:
            del runtimes[name]
        elif isinstance(takeover, dict) and _is_table(runtimes[name]):
            _give_back(runtimes[name], takeover, written)
            kept = None  # the operator's own entry, back as it was
        elif name != TEMPLATE_RUNTIME and _huawei_copy(runtimes[name], runtimes):
            del runtimes[name]
        else:
            kept = True

    containerd = _table_at(document, containerd_path)
    current_default = _plain(containerd.get('default_runtime_name')) if containerd is not None else None
    if (containerd is not None and record.get('default_changed') and current_default is not None
            and current_default == record.get('default_set_to')):
        # The default this module wrote (the runtime, or runc in its place) is still there.
        _restore_default(containerd, record)
    elif containerd is not None and current_default == name:
        if record.get('default_changed'):
            _restore_default(containerd, record)
        elif kept is False and not has_record and name != TEMPLATE_RUNTIME:
            # Huawei's uninstall: the table went, and a default naming it would leave containerd without
            # its default runtime. With a record the default was there before the module (it is left).
            _restore_default(containerd, record)

    # Deepest first, so a parent emptied by pruning its child is pruned too.
    for path in sorted(record.get('created_tables') or [], key=len, reverse=True):
        table = _table_at(document, path)
        if table is not None and len(table) == 0:
            parent = _table_at(document, path[:-1]) if len(path) > 1 else document
            del parent[path[-1]]
    headerless = [path for path in record.get('headed_tables') or []
                  if _table_at(document, path) is not None
                  and all(_is_table(value) for value in _table_at(document, path).values())]
    text = tomlkit.dumps(document)
    for path in headerless:
        text = _drop_header_line(text, path)
    if record.get('newline_added') and in_sync and text.endswith('\n'):
        text = text[:-1]
    if crlf:
        text = text.replace('\n', '\r\n')
    info['runtime_kept'] = kept is True
    return text, info


def hand_over(name, record, others):
    """The records of the other runtimes in the same file, once ``name`` is undone with ``record``.

    What the file held before any of this module's runtimes (tables it created, header lines, a
    missing last line break, a file it created) is put back by whichever runtime goes last, so
    those duties pass to the ones that stay; a runtime whose previous default was ``name`` gets
    ``name``'s previous default, so that the last undo names a runtime that exists.
    """
    others = copy.deepcopy(others)
    if not record:
        return others
    for other in others.values():
        previous = other.get('previous_default')
        if other.get('default_changed') and previous is not None and _plain(tomlkit.parse('value = ' + previous)['value']) == name:
            other['previous_default'] = record.get('previous_default') if record.get('default_changed') else None
            other['previous_default_existed'] = record.get('previous_default_existed', True)
        for key in ('created_tables', 'headed_tables'):
            merged = other.setdefault(key, [])
            merged.extend(path for path in record.get(key) or [] if path not in merged)
        if record.get('newline_added'):
            other['newline_added'] = True
        if record.get('created_file_sha256') is not None:
            other.setdefault('created_file_sha256', record['created_file_sha256'])
    if record.get('newline_added'):
        # The runtime that goes last takes the line break away, not this one.
        record['newline_added'] = False
    return others


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
    while len(table) == 1 and _is_table(list(table.values())[0]):
        key = list(table.keys())[0]
        path.append(key)
        table = table[key]
    return path


def _drop_header_line(text, path):
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


def effective_runtime(text, name):
    """What containerd would read for runtime ``name``: ``(default_runtime_name, runtime dict or None)``."""
    document = parse_config(text)
    containerd = _table_at(document, _runtimes_path(document)[2])
    if containerd is None:
        return None, None
    runtimes = containerd.get('runtimes')
    runtime = _plain(runtimes.get(name)) if _is_table(runtimes) else None
    return _plain(containerd.get('default_runtime_name')), runtime


IMPORTS_KEY = 'imports'
# The top-level `version` key as TOML allows it: indented, bare or quoted; its line ends the match.
_VERSION_LINE = re.compile(r'^[ \t]*(?:version|"version"|\'version\')[ \t]*=[^\n]*$', re.M)
_TABLE_HEADER = re.compile(r'^[ \t]*\[', re.M)


def _version_line(text):
    """The match of the top-level ``version`` line: the one before the first table header."""
    header = _TABLE_HEADER.search(text)
    match = _VERSION_LINE.search(text, 0, header.start() if header else len(text))
    if match is None:
        raise ContainerdConfigError('cannot find the line of the top-level version key (it is not written as '
                                    '`version = N` on a line of its own); Fix: write it so, then run again')
    return match


def _covered_by(import_path, entries):
    return any(entry == import_path or fnmatch.fnmatchcase(import_path, entry) for entry in entries)


@_clean_errors
def add_import(text, import_path):
    """Make config ``text`` import ``import_path``; returns ``(new_text, record)``.

    The entry is appended to an existing ``imports`` array (its formatting kept); without one, a
    line ``imports = [...]`` goes right after the ``version`` line. An entry (or glob) that already
    covers ``import_path`` leaves the text alone. ``record`` says what was done, so that
    ``remove_import`` restores the bytes. containerd reads ``imports`` from version 2 on.
    """
    document = _parse_for_edit(text)
    version = config_version(document)
    if version < 2:
        raise ContainerdConfigError('config version %d has no imports (containerd reads them from version 2 on); '
                                    'migrate the file with `containerd config migrate` first' % version)
    record = {'imports_created': False, 'entry_added': False}
    if IMPORTS_KEY in document:
        imports = document[IMPORTS_KEY]
        if not isinstance(_plain(imports), list):
            raise ContainerdConfigError('imports is a %s, not an array' % type(_plain(imports)).__name__)
        if _covered_by(import_path, _plain(imports)):
            return text, record
        imports.append(import_path)
        record['entry_added'] = True
        return tomlkit.dumps(document), record
    # tomlkit would add blank lines around a key it inserts before a table; a line of our own
    # after `version` is exactly one line, which removal takes out again.
    match = _version_line(text)
    line = '%s = [%s]\n' % (IMPORTS_KEY, tomlkit.string(import_path).as_string())
    end = match.end()
    record['imports_created'] = True
    record['newline_added'] = end == len(text)
    if record['newline_added']:
        new_text = text + '\n' + line[:-1]
    else:
        new_text = text[:end + 1] + line + text[end + 1:]
    if _plain(parse_config(new_text).get(IMPORTS_KEY)) != [import_path]:
        raise ContainerdConfigError('could not add an imports line after the version line')
    return new_text, record


@_clean_errors
def remove_import(text, import_path, record=None):
    """Undo ``add_import``: drop the entry, and the line when ``add_import`` created it."""
    document = _parse_for_edit(text)
    if IMPORTS_KEY not in document or not isinstance(_plain(document[IMPORTS_KEY]), list):
        return text
    imports = _plain(document[IMPORTS_KEY])
    if import_path not in imports:
        return text
    if record and record.get('imports_created') and imports == [import_path]:
        line = '%s = [%s]' % (IMPORTS_KEY, tomlkit.string(import_path).as_string())
        if record.get('newline_added') and text.endswith('\n' + line):
            return text[:-len('\n' + line)]
        if ('\n' + line + '\n') in text:
            return text.replace('\n' + line + '\n', '\n', 1)
    array = document[IMPORTS_KEY]
    del array[imports.index(import_path)]
    return tomlkit.dumps(document)


def imports_of(text):
    """The files config ``text`` imports, as written (containerd resolves relative ones from its directory)."""
    document = parse_config(text)
    imports = _plain(document.get(IMPORTS_KEY)) if IMPORTS_KEY in document else []
    return list(imports) if isinstance(imports, list) else []
