# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Register (and unregister) an OCI runtime in Docker's ``daemon.json``, kept free of Ansible.

Docker reads ``runtimes.<name> = {"path": ..., "runtimeArgs": [...]}`` and ``default-runtime``
(docs/huawei-sources.md for what Huawei's installer writes there).

The file is edited as *text*: the members this module owns are inserted, replaced or cut out at
their exact place and everything else keeps its bytes (key order, indentation, line breaks,
how nested objects are laid out). Re-serialising the whole document would reflow objects an
operator wrote on one line. The JSON is still parsed in full first, so invalid input is refused
with its line and column before anything is touched.

New members follow the file's own layout: the whitespace before an existing member and the
text between a key and its value are reused; an empty object gets one level more than the line
it is on, the level being the file's indentation unit (four spaces when the file shows none:
the layout ``nvidia-ctk`` and Huawei's installer leave behind).

``add_runtime`` returns a *record* of what it changed; ``remove_runtime`` uses it to cut exactly
that out again (a ``runtimes`` object it created, the previous ``default-runtime`` in its
original spelling, the inside of an object that was empty), so an add followed by a remove gives
back the original bytes. Without a record it does what Huawei's uninstall does: remove
``runtimes.<name>`` and a ``default-runtime`` naming it, for an entry that holds nothing beyond
what that installer writes (``path``, ``runtimeArgs``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import os
import re
from collections import OrderedDict

DEFAULT_INDENT_UNIT = '    '
STATE_FILE_SUFFIX = '.npu_ascend.json'
# The members of the entry Huawei's installer writes (what absent without a record may delete).
HUAWEI_RUNTIME_MEMBERS = ('path', 'runtimeArgs')
# Runtimes dockerd knows without a "runtimes" entry: a default-runtime may name them.
BUILTIN_RUNTIMES = ('runc', 'io.containerd.runc.v2')
_WHITESPACE = ' \t\n\r'
_SCALAR = re.compile(r'-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null')
# Far deeper than any daemon.json; bounds the recursion of the parsers (no RecursionError).
MAX_DEPTH = 200


class DockerConfigError(ValueError):
    """The file cannot be edited safely: not JSON, or a member of the wrong type."""


def state_file_path(config_path):
    """Where the records of one daemon.json live: a hidden file beside it."""
    directory, base = os.path.split(config_path)
    return os.path.join(directory, '.' + base + STATE_FILE_SUFFIX)


def _refuse_constant(name):
    # Python's json reads NaN and Infinity; JSON (and dockerd) does not.
    raise DockerConfigError('not valid JSON: %s is not a JSON value (dockerd refuses it too)' % name)


def _nesting_depth(text):
    """The deepest nesting of objects and arrays, counted without recursion (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for character in text:
        if in_string:
            if escaped:
                escaped = False
            elif character == '\\':
                escaped = True
            elif character == '"':
                in_string = False
        elif character == '"':
            in_string = True
        elif character in '[{':
            depth += 1
            deepest = max(deepest, depth)
        elif character in ']}':
            depth -= 1
    return deepest


def parse_config(text):
    """The document as an OrderedDict; an empty (or blank) file reads as an empty object."""
    if not text.strip(_WHITESPACE):
        return OrderedDict()
    depth = _nesting_depth(text)
    if depth > MAX_DEPTH:
        raise DockerConfigError('objects and arrays nested %d deep, more than the %d this module reads '
                                '(daemon.json needs a handful)' % (depth, MAX_DEPTH))
    try:
        document = json.loads(text, object_pairs_hook=OrderedDict, parse_constant=_refuse_constant)
    except RecursionError:
        raise DockerConfigError('objects and arrays nested too deep to read')
    except DockerConfigError:
        raise
    except ValueError as error:
        # json's message carries "line L column C (char N)".
        raise DockerConfigError('not valid JSON: %s' % error)
    if not isinstance(document, dict):
        raise DockerConfigError('the top level is a %s, not an object' % type(document).__name__)
    return document


class _Member(object):
    def __init__(self, key, key_start, key_end, value):
        self.key = key
        self.key_start = key_start
        self.key_end = key_end
        self.value = value


class _Node(object):
    """Where a JSON value sits in the text; objects also list their members in order."""

    def __init__(self, start, end, members=None):
        self.start = start
        self.end = end
        self.members = members

    def member(self, key):
        # Like json.loads (and Docker's decoder), the last of duplicate keys wins.
        found = None
        for member in self.members or []:
            if member.key == key:
                found = member
        return found


def _skip_whitespace(text, position):
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def _string_end(text, position):
    """Index just past the string starting at ``position`` (which holds its opening quote)."""
    position += 1
    while text[position] != '"':
        position += 2 if text[position] == '\\' else 1
    return position + 1


def _scan(text, position):
    """Locate the value starting at ``position``; the text is known to be valid JSON."""
    position = _skip_whitespace(text, position)
    opener = text[position]
    if opener == '{':
        members = []
        cursor = _skip_whitespace(text, position + 1)
        while text[cursor] != '}':
            key_end = _string_end(text, cursor)
            key = json.loads(text[cursor:key_end])
            colon = _skip_whitespace(text, key_end)
            value = _scan(text, colon + 1)
            members.append(_Member(key, cursor, key_end, value))
            cursor = _skip_whitespace(text, value.end)
            if text[cursor] == ',':
                cursor = _skip_whitespace(text, cursor + 1)
        return _Node(position, cursor + 1, members)
    if opener == '[':
        cursor = _skip_whitespace(text, position + 1)
        while text[cursor] != ']':
            cursor = _skip_whitespace(text, _scan(text, cursor).end)
            if text[cursor] == ',':
                cursor = _skip_whitespace(text, cursor + 1)
        return _Node(position, cursor + 1)
    if opener == '"':
        return _Node(position, _string_end(text, position))
    return _Node(position, position + _SCALAR.match(text, position).end() - position)


def _line_indent(text, position):
    line_start = text.rfind('\n', 0, position) + 1
    line = text[line_start:position]
    return line[:len(line) - len(line.lstrip(' \t'))]


def _indent_unit(text, root):
    """The file's indentation step: what the first member of the top object is indented by."""
    if root.members:
        before = text[root.start + 1:root.members[0].key_start]
        if '\n' in before:
            unit = before[before.rfind('\n') + 1:]
            if unit:
                return unit
    return DEFAULT_INDENT_UNIT


def _key_separator(text, node):
    """What the file puts between a key and its value (``": "`` in Docker's own examples)."""
    for member in node.members or []:
        return text[member.key_end:member.value.start]
    return ': '


def _dump(value, indent, unit, key_separator, multiline):
    separator = key_separator.strip(_WHITESPACE) and key_separator or ': '
    if not multiline:
        return json.dumps(value, separators=(', ', separator), ensure_ascii=False)
    text = json.dumps(value, indent=unit, separators=(',', separator), ensure_ascii=False)
    return text.replace('\n', '\n' + indent)


def _insert_member(text, node, key, value, unit, key_separator):
    """Text with ``"key": value`` appended as the last member of the object ``node``.

    Returns ``(new_text, previous_inside)``: ``previous_inside`` is what was between the braces
    when the object was empty (so a removal can put it back), else None.
    """
    if node.members:
        last = node.members[-1]
        if len(node.members) > 1:
            previous = node.members[-2]
            between = text[previous.value.end:last.key_start]
            before_key = between[between.index(',') + 1:]
        else:
            before_key = text[node.start + 1:last.key_start]
        multiline = '\n' in before_key
        indent = before_key[before_key.rfind('\n') + 1:] if multiline else _line_indent(text, last.key_start)
        member = (',' + before_key + json.dumps(key, ensure_ascii=False) + key_separator
                  + _dump(value, indent, unit, key_separator, multiline))
        return text[:last.value.end] + member + text[last.value.end:], None
    inside = text[node.start + 1:node.end - 1]
    outer = _line_indent(text, node.start)
    indent = outer + unit
    member = ('\n' + indent + json.dumps(key, ensure_ascii=False) + key_separator
              + _dump(value, indent, unit, key_separator, True) + '\n' + outer)
    return text[:node.start + 1] + member + text[node.end - 1:], inside


def _remove_member(text, node, key, empty_inside=''):
    """Text without member ``key`` of object ``node``, cut so that an append is exactly undone."""
    members = node.members
    index = max(i for i, member in enumerate(members) if member.key == key)
    member = members[index]
    if len(members) == 1:
        return text[:node.start + 1] + empty_inside + text[node.end - 1:]
    if index == len(members) - 1:
        return text[:members[index - 1].value.end] + text[member.value.end:]
    return text[:member.key_start] + text[members[index + 1].key_start:]


def _replace_value(text, node, raw_value):
    return text[:node.start] + raw_value + text[node.end:]


def new_record():
    return {
        'runtime_created': False,
        'runtimes_created': False,
        'default_changed': False,
        'previous_default': None,
        # Inside of objects that were empty before this module added to them, keyed by
        # "top" or "runtimes", to put back byte for byte when they become empty again.
        'empty_insides': {},
    }


def _copy_record(record):
    merged = new_record()
    if record:
        merged.update(copy.deepcopy(record))
    return merged


def _root(text):
    if not text.strip(_WHITESPACE):
        return None
    return _scan(text, 0)


def _check_types(document, name):
    runtimes = document.get('runtimes')
    if runtimes is not None and not isinstance(runtimes, dict):
        raise DockerConfigError('"runtimes" is a %s, not an object' % type(runtimes).__name__)
    runtime = (runtimes or {}).get(name)
    if runtime is not None and not isinstance(runtime, dict):
        raise DockerConfigError('"runtimes.%s" is a %s, not an object' % (name, type(runtime).__name__))
    return runtimes, runtime


def add_runtime(text, name, runtime_path, make_default, record=None):
    """Register runtime ``name`` in daemon.json ``text``; returns ``(new_text, new_record)``.

    ``record`` is the one an earlier call returned (or None). A runtime that already exists keeps
    its other members (``runtimeArgs`` an operator set) and only gets its ``path`` corrected.
    ``make_default`` False makes sure ``name`` is *not* the default runtime, putting back the
    recorded previous ``default-runtime`` (or removing the member) when it is.

    The record of the first change keeps the text as it was (``original_text``) and every call
    the digest of the text it returns (``written_sha256``): as long as nobody else edited the
    file since, remove_runtime gives back exactly the original.
    """
    document = parse_config(text)
    runtimes, runtime = _check_types(document, name)
    first_change = record is None
    record = _copy_record(record)
    if first_change:
        record['original_text'] = text
    elif record.get('written_sha256') != _sha256(text):
        # Someone else wrote the file since this module last did: the text before the first change
        # is stale, and putting it back on absent would throw away what they wrote.
        record.pop('original_text', None)
    if runtime is None:
        record.pop('runtime_edited', None)
    elif record.get('runtime_written') is not None and runtime != record['runtime_written']:
        # Someone changed the entry since this module wrote it: it stays theirs, whatever present does now.
        record['runtime_edited'] = True
    crlf = _uses_crlf(text)
    if crlf:
        # Edited with LF line breaks (JSON strings hold none), every one written back as CRLF.
        text = text.replace('\r\n', '\n')
    if first_change and runtime is not None:
        # Taking over an entry that was there before (a manual Huawei install): its exact text
        # comes back on absent, whatever this module corrects in it now.
        runtime_node = _root(text).member('runtimes').value.member(name).value
        record['previous_runtime'] = text[runtime_node.start:runtime_node.end]
    if not text.strip(_WHITESPACE):
        # A blank file becomes an object; what it held is put back if it ends up empty.
        record['empty_insides'].setdefault('blank_file', text)
        text = '{}\n'
    root = _root(text)
    unit = _indent_unit(text, root)
    key_separator = _key_separator(text, root)

    if runtimes is None and root.member('runtimes') is not None:
        # "runtimes": null reads as no runtimes; a second "runtimes" member would be a duplicate key
        # (the last one wins), so the null itself becomes the object, and comes back on absent.
        null = root.member('runtimes').value
        record['previous_runtimes'] = text[null.start:null.end]
        value = OrderedDict([(name, OrderedDict([('path', runtime_path), ('runtimeArgs', [])]))])
        indent = _line_indent(text, root.member('runtimes').key_start)
        text = _replace_value(text, null, _dump(value, indent, unit, key_separator, _multiline(text, root)))
        record['runtimes_created'] = True
        record['runtime_created'] = True
    elif runtimes is None:
        text, inside = _insert_member(text, root, 'runtimes',
                                      OrderedDict([(name, OrderedDict([('path', runtime_path), ('runtimeArgs', [])]))]),
                                      unit, key_separator)
        if inside is not None:
            record['empty_insides'].setdefault('top', inside)
        record['runtimes_created'] = True
        record['runtime_created'] = True
    elif runtime is None:
        runtimes_node = root.member('runtimes').value
        text, inside = _insert_member(text, runtimes_node, name,
                                      OrderedDict([('path', runtime_path), ('runtimeArgs', [])]),
                                      unit, _key_separator(text, runtimes_node) if runtimes_node.members else key_separator)
        if inside is not None:
            record['empty_insides'].setdefault('runtimes', inside)
        record['runtime_created'] = True
    elif runtime.get('path') != runtime_path:
        runtime_node = root.member('runtimes').value.member(name).value
        path_member = runtime_node.member('path')
        if path_member is not None:
            text = _replace_value(text, path_member.value, json.dumps(runtime_path, ensure_ascii=False))
        else:
            text = _insert_member(text, runtime_node, 'path', runtime_path, unit, key_separator)[0]

    root = _root(text)
    current_default = parse_config(text).get('default-runtime')
    if make_default and current_default != name:
        default_member = root.member('default-runtime')
        record['default_changed'] = True
        # Whether the previous default named a runtime dockerd knew: one that is gone by the time
        # it would come back is not put back (a default dockerd refuses); one that never was is.
        record['previous_default_existed'] = isinstance(current_default, str) and (
            current_default in BUILTIN_RUNTIMES or current_default in (runtimes or {}))
        if default_member is not None:
            record['previous_default'] = text[default_member.value.start:default_member.value.end]
            text = _replace_value(text, default_member.value, json.dumps(name, ensure_ascii=False))
        else:
            record['previous_default'] = None
            text = _insert_member(text, root, 'default-runtime', name, unit, key_separator)[0]
    elif not make_default and current_default == name:
        if not record.get('default_changed'):
            # A default this module did not set: what it was comes back on absent.
            default_member = root.member('default-runtime')
            record['removed_default'] = text[default_member.value.start:default_member.value.end]
        text = _restore_default(text, record)
    if crlf:
        text = text.replace('\n', '\r\n')
    record['written_sha256'] = _sha256(text)
    # What the entry holds as this module left it: absent deletes (or gives back) only an entry
    # nobody changed since, so an operator's member in it is never lost.
    record['runtime_written'] = parse_config(text)['runtimes'][name]
    return text, record


def _multiline(text, node):
    """Whether the members of object ``node`` are on lines of their own."""
    return bool(node.members) and '\n' in text[node.start + 1:node.members[0].key_start]


def _sha256(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _uses_crlf(text):
    """Whether every line break of ``text`` is CRLF (a file written on Windows, or by a tool that keeps it)."""
    return '\r\n' in text and text.count('\r\n') == text.count('\n')


def _names_a_runtime(text, raw_default, removed=None):
    """Whether the recorded ``default-runtime`` spelling names a runtime dockerd knows once ``removed`` is gone."""
    try:
        default = json.loads(raw_default)
    except ValueError:
        return False
    if not isinstance(default, str) or default == removed:
        return False
    runtimes = parse_config(text).get('runtimes')
    return default in BUILTIN_RUNTIMES or (isinstance(runtimes, dict) and default in runtimes)


def _restore_default(text, record, removed=None):
    root = _root(text)
    default_member = root.member('default-runtime')
    previous = record.get('previous_default') if record.get('default_changed') else None
    if (previous is not None and record.get('previous_default_existed', True)
            and not _names_a_runtime(text, previous, removed)):
        # The default before ours names a runtime that is gone now (another of ours, removed first):
        # dockerd refuses a default-runtime it has no entry for, so its own default applies instead.
        previous = None
    if previous is not None:
        text = _replace_value(text, default_member.value, previous)
    else:
        # Docker's own default (runc) applies when the member is absent, as Huawei's uninstall leaves it.
        text = _remove_member(text, root, 'default-runtime', record.get('empty_insides', {}).get('top', ''))
    record['default_changed'] = False
    record['previous_default'] = None
    return text


def remove_runtime(text, name, record=None):
    """Unregister runtime ``name``; returns the new text (``undo_runtime`` without its info)."""
    return undo_runtime(text, name, record)[0]


def undo_runtime(text, name, record=None):
    """Unregister runtime ``name``; returns ``(new_text, info)`` (the text unchanged when nothing is registered).

    With the ``record`` of add_runtime only what it changed is undone, from the file as it is now:
    an entry it created goes, an entry that was there before gets its recorded text back, the
    default its previous value. An entry someone changed since the module last wrote it (a member
    added, a value changed) is theirs now: it stays, and ``info['runtime_kept']`` says so; of an
    entry that was there before only the ``path`` this module set goes back. Without a record (the
    module never changed this file) it does what Huawei's uninstall does.
    """
    info = {'runtime_kept': False}
    document = parse_config(text)
    runtimes, runtime = _check_types(document, name)
    recorded = record is not None
    record = _copy_record(record)
    if recorded and record.get('original_text') is not None and record.get('written_sha256') == _sha256(text):
        # Untouched since this module wrote it: the exact text before the first change comes back.
        return record['original_text'], info
    if not text.strip(_WHITESPACE):
        return text, info
    if _uses_crlf(text):
        undone, info = undo_runtime(text.replace('\r\n', '\n'), name, dict(record, original_text=None) if recorded else None)
        return undone.replace('\n', '\r\n'), info
    empty_insides = record.get('empty_insides') or {}
    written = record.get('runtime_written') if recorded else None
    edited_since = runtime is not None and (bool(record.get('runtime_edited')) or (written is not None and runtime != written))
    created = not recorded or (record.get('runtime_created') and record.get('previous_runtime') is None)
    if created and recorded and edited_since:
        info['runtime_kept'] = True
    elif not recorded and runtime is not None and not set(runtime) <= set(HUAWEI_RUNTIME_MEMBERS):
        # Without a record only what Huawei's installer writes is deleted: an entry with members of
        # its own (someone's settings, or one absent kept before) stays, with a default naming it.
        info['runtime_kept'] = True
    goes = runtime is not None and created and not info['runtime_kept']

    if document.get('default-runtime') == name and (record.get('default_changed') or (not recorded and goes)):
        text = _restore_default(text, record, removed=name if goes else None)

    if runtime is not None:
        root = _root(text)
        runtimes_node = root.member('runtimes').value
        entry = runtimes_node.member(name).value
        previous_runtime = record.get('previous_runtime')
        if recorded and previous_runtime is not None:
            if edited_since:
                text = _give_back_path(text, entry, previous_runtime, written)
            else:
                text = _replace_value(text, entry, previous_runtime)
        elif not goes:
            pass
        elif len(runtimes_node.members) == 1 and record.get('runtimes_created'):
            if record.get('previous_runtimes') is not None:
                text = _replace_value(text, root.member('runtimes').value, record['previous_runtimes'])
            else:
                text = _remove_member(text, root, 'runtimes', empty_insides.get('top', ''))
        else:
            text = _remove_member(text, runtimes_node, name, empty_insides.get('runtimes', ''))

    removed_default = record.get('removed_default') if recorded else None
    if removed_default is not None and 'default-runtime' not in parse_config(text):
        # Put back after the other members (its old place may have changed since).
        root = _root(text)
        text = _insert_member(text, root, 'default-runtime', None, _indent_unit(text, root), _key_separator(text, root))[0]
        text = _replace_value(text, _root(text).member('default-runtime').value, removed_default)

    if 'blank_file' in empty_insides and not parse_config(text):
        text = empty_insides['blank_file']
    return text, info


def _give_back_path(text, entry, previous_runtime, written):
    """Of an entry that was there before and was edited since, put back only its ``path``, if it is still ours."""
    path_member = entry.member('path')
    if path_member is None or json.loads(text[path_member.value.start:path_member.value.end]) != written.get('path'):
        return text
    previous_path = _scan(previous_runtime, 0).member('path')
    if previous_path is not None:
        return _replace_value(text, path_member.value, previous_runtime[previous_path.value.start:previous_path.value.end])
    return _remove_member(text, entry, 'path')


def _default_name(raw_default):
    try:
        return json.loads(raw_default) if raw_default is not None else None
    except ValueError:
        return None


def hand_over(name, record, others):
    """The records of the other runtimes in the same file, once ``name`` is undone with ``record``.

    What the file held before any of this module's runtimes (the ``runtimes`` object it created, the
    insides of objects that were empty, a blank or missing file) is put back by whichever runtime
    goes last, so those duties pass to the ones that stay; a runtime whose previous default was
    ``name`` gets ``name``'s previous default, so that the last undo names a runtime that exists.
    """
    others = copy.deepcopy(others)
    if not record:
        return others
    for other in others.values():
        if other.get('default_changed') and _default_name(other.get('previous_default')) == name:
            other['previous_default'] = record.get('previous_default') if record.get('default_changed') else None
            other['previous_default_existed'] = record.get('previous_default_existed', True)
        if record.get('runtimes_created'):
            other['runtimes_created'] = True
            if record.get('previous_runtimes') is not None:
                other.setdefault('previous_runtimes', record['previous_runtimes'])
        for key, inside in (record.get('empty_insides') or {}).items():
            other.setdefault('empty_insides', {}).setdefault(key, inside)
        if record.get('created_file'):
            other['created_file'] = True
    return others


def effective_runtime(text, name):
    """``(default-runtime, runtimes.<name>)`` as Docker would read them."""
    document = parse_config(text)
    runtimes, runtime = _check_types(document, name)
    return document.get('default-runtime'), runtime
