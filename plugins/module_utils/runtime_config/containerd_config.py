# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Register (and unregister) an OCI runtime in a containerd ``config.toml``, kept free of Ansible.

The edit is made on a ``tomlkit`` document, so every byte the edit does not own (comments, key
order, blank lines, quoting, indentation) is written back as it was read.

The parts: ``toml_editor`` edits the document without touching what it does not own,
``containerd_layout`` says where the runtime goes (by the config's ``version``) and what Huawei's installer
writes there, and ``undo_record`` keeps what each edit changed. This module puts them together:
``add_runtime`` / ``remove_runtime`` for a runtime, ``add_import`` / ``remove_import`` for a drop-in file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import fnmatch
import functools
import re

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_layout
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import toml_editor
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import undo_record

# One error for every refusal, whichever part finds it.
ContainerdConfigError = toml_editor.TomlEditError


def _clean_errors(function):
    """Turn what tomlkit raises on a document it cannot edit into a ContainerdConfigError."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ContainerdConfigError:
            raise
        except (toml_editor.TomlkitError, ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as error:
            raise ContainerdConfigError('cannot edit the file safely (%s: %s); Fix: write the tables along '
                                        'plugins.<cri plugin>.containerd.runtimes as [table] sections'
                                        % (type(error).__name__, error))
    return wrapper


def _steps_of(template, indent_step):
    """``(key_step, table_step)``: how far the template runtime indents its keys and its options table."""
    header = toml_editor.header_indent_of(template)
    key_step = table_step = indent_step
    key_indent = toml_editor.value_indent_of(template)
    if key_indent is not None and key_indent.startswith(header):
        key_step = key_indent[len(header):]
    options = template.get('options')
    if toml_editor.is_table(options) and toml_editor.header_indent_of(options).startswith(header):
        table_step = toml_editor.header_indent_of(options)[len(header):]
    return key_step, table_step


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
        existing['options'] = toml_editor.tomlkit.table()
        options = existing['options']
        indents.append((options, toml_editor.header_indent_of(existing) + indent_step, None))
        if ['options'] not in takeover['tables']:
            takeover['tables'].append(['options'])
    elif not toml_editor.is_table(options):
        raise ContainerdConfigError('options of the runtime is a %s, not a table' % type(toml_editor.plain(options)).__name__)
    key = containerd_layout.option_key(options, containerd_layout.BINARY_NAME_OPTION)
    if toml_editor.plain(options.get(key)) != binary_name:
        undo_record.remember(takeover, ['options', key], options, key)
        toml_editor.set_value(options, key, binary_name, toml_editor.value_indent_of(options) or toml_editor.header_indent_of(options) + indent_step)
    if 'runtime_type' not in existing:
        undo_record.remember(takeover, ['runtime_type'], existing, 'runtime_type')
        toml_editor.set_value(existing, 'runtime_type', containerd_layout.DEFAULT_RUNTIME_TYPE,
                              toml_editor.value_indent_of(existing) or toml_editor.header_indent_of(existing) + indent_step)
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
    record = undo_record.copy_record(record)
    if first_change:
        record['original_text'] = text
    elif record.get('written_sha256') != undo_record.sha256(text):
        # Someone else wrote the file since this runtime's last change: the text before the first
        # change is stale, and putting it back on absent would throw away what they wrote.
        record.pop('original_text', None)
    if record.get('file_sha256') not in (None, undo_record.sha256(text)):
        # Not the bytes this collection left: whether the file's last line break is ours is decided anew.
        record['newline_added'] = False
    crlf = toml_editor.uses_crlf(text)
    if crlf:
        # Edited with LF line breaks, and every line break written back as the file has them.
        text = text.replace('\r\n', '\n')
    if text and not text.endswith('\n'):
        # A new table must start on a line of its own; the removal takes the line break away again.
        text += '\n'
        record['newline_added'] = True
    document = toml_editor.parse_for_edit(text)
    version, plugin, containerd_path = containerd_layout.runtimes_path(document)
    runtimes_path = containerd_path + ['runtimes']
    indent_step = toml_editor.indent_step_of(document, runtimes_path + [containerd_layout.TEMPLATE_RUNTIME])
    # tomlkit may add line breaks to the indentation of tables that follow a key it inserts, so
    # the indentation of everything new is (re)applied once all edits are done.
    indents = []

    created = []
    containerd_existed_headless = (toml_editor.table_at(document, containerd_path) is not None
                                   and toml_editor.is_super_table(toml_editor.table_at(document, containerd_path)))
    containerd = toml_editor.ensure_table(document, containerd_path, created, indent_step, indents,
                                          headed=(len(containerd_path) - 1,) if make_default else ())
    current_default = toml_editor.plain(containerd.get('default_runtime_name'))
    if make_default and current_default != name:
        if not record['default_changed']:
            # The default before the module's *first* change is the one undo puts back.
            record['default_changed'] = True
            record['previous_default'] = (toml_editor.toml_spelling(containerd['default_runtime_name'])
                                          if 'default_runtime_name' in containerd else None)
            # Whether that default named a runtime containerd had: one gone by the time it would
            # come back is not put back (a default containerd's CRI refuses); one that never was is.
            existing_runtimes = containerd.get('runtimes') if 'runtimes' in containerd else None
            record['previous_default_existed'] = (current_default == containerd_layout.FALLBACK_DEFAULT_RUNTIME or (
                isinstance(current_default, str) and toml_editor.is_table(existing_runtimes) and current_default in existing_runtimes))
        if containerd_existed_headless and containerd_path not in record['headed_tables']:
            # The key gives the table a header line of its own, to be taken out with the key.
            record['headed_tables'].append(containerd_path)
        key_indent = toml_editor.value_indent_of(containerd)
        if key_indent is None:
            key_indent = toml_editor.header_indent_of(containerd) + indent_step
        toml_editor.set_value(containerd, 'default_runtime_name', name, key_indent)
        record['default_set_to'] = name
    elif not make_default and current_default == name:
        if record['default_changed']:
            undo_record.restore_default(containerd, record)
        else:
            # Someone else made it the default (a manual install): remember that for the undo.
            record['default_changed'] = True
            record['previous_default'] = toml_editor.toml_spelling(containerd['default_runtime_name'])
            containerd['default_runtime_name'] = containerd_layout.FALLBACK_DEFAULT_RUNTIME
            record['default_set_to'] = containerd_layout.FALLBACK_DEFAULT_RUNTIME

    runtimes = toml_editor.ensure_table(document, runtimes_path, created, indent_step, indents)
    existing = runtimes.get(name)
    if existing is not None and not toml_editor.is_table(existing):
        raise ContainerdConfigError('%s is a %s, not a table' % (toml_editor.dotted_path(runtimes_path + [name]),
                                                                 type(toml_editor.plain(existing)).__name__))
    if existing is None:
        record.pop('runtime_edited', None)
    elif record.get('runtime_written') is not None and undo_record.json_safe(toml_editor.plain(existing)) != record['runtime_written']:
        # Someone changed the table since this module wrote it: it stays theirs, whatever present does now.
        record['runtime_edited'] = True

    if existing is None:
        if template is None:
            template = runtimes.get(containerd_layout.TEMPLATE_RUNTIME)
            if template is not None and not toml_editor.is_table(template):
                template = None
        else:
            template = toml_editor.tomlkit.item(copy.deepcopy(template))
        if template is not None:
            header_indent = toml_editor.header_indent_of(template)
            blank_line_after = toml_editor.ends_with_blank_line(template)
            steps = _steps_of(template, indent_step)
        else:
            header_indent = indent_step * (len(runtimes_path))
            blank_line_after = False
            steps = (indent_step, indent_step)
        runtimes[name] = toml_editor.build_table(containerd_layout.runtime_values(template, binary_name), blank_line_after)
        indents.append((runtimes[name], header_indent, steps))
        record['runtime_created'] = True
        record.pop('runtime_previous', None)
    elif record['runtime_created']:
        # Our own table (an earlier run made it): correct the binary, nothing to remember.
        scratch = {'values': [], 'tables': []}
        _take_over(existing, {'runtime_previous': scratch}, binary_name, indent_step, indents)
    else:
        headless = toml_editor.is_super_table(existing)
        _take_over(existing, record, binary_name, indent_step, indents)
        if headless and 'runtime_type' in existing and runtimes_path + [name] not in record['headed_tables']:
            # A table written only as `[...runtimes.<name>.options]` gets a header line of its own
            # with the runtime_type put in it; the line goes again with the key.
            record['headed_tables'].append(runtimes_path + [name])

    for item, indent, steps in indents:
        if steps:
            toml_editor.set_indents(item, indent, steps[0], steps[1])
        else:
            toml_editor.set_indent(item, indent)
    for path in created:
        if path not in record['created_tables']:
            record['created_tables'].append(path)
    new_text = toml_editor.written_back(document)
    if crlf:
        new_text = new_text.replace('\n', '\r\n')
    record['written_sha256'] = record['file_sha256'] = undo_record.sha256(new_text)
    # The runtime table as this module left it: absent deletes (or gives back) only what nobody changed since.
    record['runtime_written'] = undo_record.json_safe(toml_editor.plain(runtimes[name]))
    return new_text, record, {'config_version': version, 'cri_plugin': plugin}


@_clean_errors
def remove_runtime(text, name, record=None):
    """Unregister runtime ``name``; returns ``(new_text, info)`` like ``add_runtime``.

    ``info['runtime_kept']`` is True when, without a record, the runtime table was left in place
    because it holds settings of its own (see the module docstring).
    """
    document = toml_editor.parse_for_edit(text)
    version, plugin, containerd_path = containerd_layout.runtimes_path(document)
    has_record = bool(record)
    record = undo_record.copy_record(record)
    kept = False
    info = {'config_version': version, 'cri_plugin': plugin, 'runtime_kept': False, 'runtime_edited': False}
    if has_record and record.get('original_text') is not None and record.get('written_sha256') == undo_record.sha256(text):
        # Untouched since this module wrote it: the exact text before the first change comes back.
        return record['original_text'], info
    in_sync = record.get('file_sha256') in (None, undo_record.sha256(text))
    written = record.get('runtime_written') if has_record else None
    crlf = toml_editor.uses_crlf(text)
    if crlf:
        text = text.replace('\r\n', '\n')
        document = toml_editor.parse_for_edit(text)

    runtimes = toml_editor.table_at(document, containerd_path + ['runtimes'])
    if runtimes is not None and name in runtimes:
        takeover = record.get('runtime_previous')
        edited = bool(record.get('runtime_edited')) or (written is not None and undo_record.json_safe(toml_editor.plain(runtimes[name])) != written)
        if record['runtime_created'] and edited:
            # Someone changed the table since the module wrote it (a key of their own): it is theirs now.
            kept = None
            info['runtime_edited'] = True
        elif record['runtime_created']:
            del runtimes[name]
        elif isinstance(takeover, dict) and toml_editor.is_table(runtimes[name]):
            undo_record.give_back(runtimes[name], takeover, written)
            kept = None  # the operator's own entry, back as it was
        elif name != containerd_layout.TEMPLATE_RUNTIME and containerd_layout.huawei_copy(runtimes[name], runtimes):
            del runtimes[name]
        else:
            kept = True

    containerd = toml_editor.table_at(document, containerd_path)
    current_default = toml_editor.plain(containerd.get('default_runtime_name')) if containerd is not None else None
    if (containerd is not None and record.get('default_changed') and current_default is not None
            and current_default == record.get('default_set_to')):
        # The default this module wrote (the runtime, or runc in its place) is still there.
        undo_record.restore_default(containerd, record)
    elif containerd is not None and current_default == name:
        if record.get('default_changed'):
            undo_record.restore_default(containerd, record)
        elif kept is False and not has_record and name != containerd_layout.TEMPLATE_RUNTIME:
            # Huawei's uninstall: the table went, and a default naming it would leave containerd without
            # its default runtime. With a record the default was there before the module (it is left).
            undo_record.restore_default(containerd, record)

    # Deepest first, so a parent emptied by pruning its child is pruned too.
    for path in sorted(record.get('created_tables') or [], key=len, reverse=True):
        table = toml_editor.table_at(document, path)
        if table is not None and len(table) == 0:
            parent = toml_editor.table_at(document, path[:-1]) if len(path) > 1 else document
            del parent[path[-1]]
    headerless = [path for path in record.get('headed_tables') or []
                  if toml_editor.table_at(document, path) is not None
                  and all(toml_editor.is_table(value) for value in toml_editor.table_at(document, path).values())]
    text = toml_editor.tomlkit.dumps(document)
    for path in headerless:
        text = toml_editor.drop_header_line(text, path)
    if record.get('newline_added') and in_sync and text.endswith('\n'):
        text = text[:-1]
    if crlf:
        text = text.replace('\n', '\r\n')
    info['runtime_kept'] = kept is True
    return text, info


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
    document = toml_editor.parse_for_edit(text)
    version = containerd_layout.config_version(document)
    if version < 2:
        raise ContainerdConfigError('config version %d has no imports (containerd reads them from version 2 on); '
                                    'migrate the file with `containerd config migrate` first' % version)
    record = {'imports_created': False, 'entry_added': False}
    if containerd_layout.IMPORTS_KEY in document:
        imports = document[containerd_layout.IMPORTS_KEY]
        if not isinstance(toml_editor.plain(imports), list):
            raise ContainerdConfigError('imports is a %s, not an array' % type(toml_editor.plain(imports)).__name__)
        if _covered_by(import_path, toml_editor.plain(imports)):
            return text, record
        imports.append(import_path)
        record['entry_added'] = True
        return toml_editor.tomlkit.dumps(document), record
    # tomlkit would add blank lines around a key it inserts before a table; a line of our own
    # after `version` is exactly one line, which removal takes out again.
    match = _version_line(text)
    line = '%s = [%s]\n' % (containerd_layout.IMPORTS_KEY, toml_editor.tomlkit.string(import_path).as_string())
    end = match.end()
    record['imports_created'] = True
    record['newline_added'] = end == len(text)
    if record['newline_added']:
        new_text = text + '\n' + line[:-1]
    else:
        new_text = text[:end + 1] + line + text[end + 1:]
    if toml_editor.plain(toml_editor.parse_config(new_text).get(containerd_layout.IMPORTS_KEY)) != [import_path]:
        raise ContainerdConfigError('could not add an imports line after the version line')
    return new_text, record


@_clean_errors
def remove_import(text, import_path, record=None):
    """Undo ``add_import``: drop the entry, and the line when ``add_import`` created it."""
    document = toml_editor.parse_for_edit(text)
    if containerd_layout.IMPORTS_KEY not in document or not isinstance(toml_editor.plain(document[containerd_layout.IMPORTS_KEY]), list):
        return text
    imports = toml_editor.plain(document[containerd_layout.IMPORTS_KEY])
    if import_path not in imports:
        return text
    if record and record.get('imports_created') and imports == [import_path]:
        line = '%s = [%s]' % (containerd_layout.IMPORTS_KEY, toml_editor.tomlkit.string(import_path).as_string())
        if record.get('newline_added') and text.endswith('\n' + line):
            return text[:-len('\n' + line)]
        if ('\n' + line + '\n') in text:
            return text.replace('\n' + line + '\n', '\n', 1)
    array = document[containerd_layout.IMPORTS_KEY]
    del array[imports.index(import_path)]
    return toml_editor.tomlkit.dumps(document)
