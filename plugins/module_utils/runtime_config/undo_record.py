# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The undo record of a containerd config edit: what ``containerd_config.add_runtime`` changed, so that
``remove_runtime`` gives back exactly what was there. JSON-serialisable, kept beside the config in a hidden
file (``state_file_path``); no Ansible imports.

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
import hashlib
import json
import os

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_layout
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import toml_editor

STATE_FILE_SUFFIX = '.npu_ascend.json'


def state_file_path(config_path):
    """Where the records of one config live: a hidden file beside it.

    The name does not end in ``.toml``, so an ``imports = ["conf.d/*.toml"]`` glob never loads it.
    """
    directory, base = os.path.split(config_path)
    return os.path.join(directory, '.' + base + STATE_FILE_SUFFIX)


def new_record():
    return {
        'runtime_created': False,
        'created_tables': [],
        'default_changed': False,
        'previous_default': None,
        'newline_added': False,
        'headed_tables': [],
    }


def copy_record(record):
    merged = new_record()
    if record:
        merged.update(copy.deepcopy(record))
    return merged


def sha256(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def json_safe(value):
    """``value`` as it reads back from the JSON record (dates become text, tuples lists)."""
    return json.loads(json.dumps(value, default=str))


def remember(takeover, path, table, key):
    """Record, once, the TOML spelling ``key`` of a taken-over table had before its first change (None: absent)."""
    if any(recorded == path for recorded, _raw_value in takeover['values']):
        return
    takeover['values'].append([list(path), toml_editor.toml_spelling(table[key]) if key in table else None])


def restore_default(containerd, record):
    if record.get('default_changed'):
        previous = record.get('previous_default')
        if previous is not None and record.get('previous_default_existed', True):
            runtimes = containerd.get('runtimes') if 'runtimes' in containerd else None
            named = toml_editor.plain(toml_editor.value_of_spelling(previous))
            if named != containerd_layout.FALLBACK_DEFAULT_RUNTIME and not (isinstance(named, str) and toml_editor.is_table(runtimes) and named in runtimes):
                # It named a runtime that is gone now (another of ours, removed first): containerd's
                # CRI refuses a default it has no runtime for, so its own default applies instead.
                previous = None
        if previous is None:
            if 'default_runtime_name' in containerd:
                del containerd['default_runtime_name']
        else:
            toml_editor.restore_spelling(containerd, 'default_runtime_name', previous)
    else:
        containerd['default_runtime_name'] = containerd_layout.FALLBACK_DEFAULT_RUNTIME
    record['default_changed'] = False
    record['previous_default'] = None
    record.pop('default_set_to', None)


def _value_at(plain, path):
    for key in path:
        if not isinstance(plain, dict) or key not in plain:
            return None
        plain = plain[key]
    return plain


def give_back(table, takeover, written=None):
    """Put the recorded values of a taken-over runtime table back, newest change first.

    With ``written`` (the table as the module left it), a value someone changed since stays theirs.
    """
    current = json_safe(toml_editor.plain(table))
    for path, raw in reversed(takeover.get('values') or []):
        parent = toml_editor.table_at(table, path[:-1]) if len(path) > 1 else table
        if parent is None:
            continue
        if written is not None and _value_at(current, path) != _value_at(written, path):
            continue
        if raw is None:
            if path[-1] in parent:
                del parent[path[-1]]
        else:
            toml_editor.restore_spelling(parent, path[-1], raw)
    for path in sorted(takeover.get('tables') or [], key=len, reverse=True):
        sub = toml_editor.table_at(table, path)
        if sub is not None and len(sub) == 0:
            parent = toml_editor.table_at(table, path[:-1]) if len(path) > 1 else table
            del parent[path[-1]]


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
        if other.get('default_changed') and previous is not None and toml_editor.plain(toml_editor.value_of_spelling(previous)) == name:
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
