# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""File handling shared by the container runtime config modules (containerd_runtime, docker_runtime).

Each module edits an engine's config file it does not own, so the file is read as UTF-8, replaced
atomically (keeping its mode, owner and SELinux context), and what the module changed is kept in a
record file beside it, so that state=absent can undo exactly that.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

from ansible.module_utils.common.text.converters import to_native

RECORD_FORMAT = 1


def read_config(module, path):
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8')
    except UnicodeDecodeError as error:
        module.fail_json(msg='%s is not UTF-8 text: %s' % (path, to_native(error)))
    except (IOError, OSError) as error:
        module.fail_json(msg='cannot read %s: %s' % (path, to_native(error)))


def write_config_atomically(module, path, text, new_file_mode=None):
    """Replace path with text; a file created here gets new_file_mode."""
    directory = os.path.dirname(path) or '.'
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix='.' + os.path.basename(path) + '.')
    try:
        with os.fdopen(handle, 'wb') as stream:
            stream.write(text.encode('utf-8'))
        # atomic_move keeps an existing file's mode, owner and SELinux context.
        module.atomic_move(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    if new_file_mode is not None:
        module.set_mode_if_different(path, new_file_mode, False)


def load_records(module, record_path):
    if not os.path.exists(record_path):
        return {}
    try:
        with open(record_path) as handle:
            content = json.load(handle)
        return dict(content.get('runtimes') or {})
    except (IOError, OSError, ValueError, AttributeError) as error:
        module.fail_json(msg='cannot read the record of earlier changes %s: %s; move it away to start afresh'
                         % (record_path, to_native(error)))


def save_records(record_path, records):
    if not records:
        if os.path.exists(record_path):
            os.unlink(record_path)
        return
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(record_path) or '.',
                                         prefix=os.path.basename(record_path) + '.')
    with os.fdopen(handle, 'w') as stream:
        json.dump({'format': RECORD_FORMAT, 'runtimes': records}, stream, indent=2, sort_keys=True)
        stream.write('\n')
    os.rename(temporary, record_path)


def conclude(module, result, before, after, exists, remove_file, records, record, new_file_mode, key=None):
    """Report the change of the config file and, outside check mode, make it; then exit the module.

    ``before``/``after`` are the file's text, ``remove_file`` says the file this module created is
    to go again, and ``records``/``record`` are the change records of every entry the modules made
    in this file and of this one, filed under ``key`` (default: the module's ``name``).

    The copies that ``backup`` made are listed in the record; state=absent, which undoes the change,
    deletes them with the record, so that an uninstall leaves nothing of the modules behind.
    """
    params = module.params
    path, name = params['path'], key or params['name']
    file_changed = (after != before) or remove_file
    undone = params['state'] == 'absent' and name in records
    backups = [backup for backup in (records[name].get('backups') or []) if os.path.lexists(backup)] if undone else []
    result['changed'] = file_changed or bool(backups)
    result['restart_needed'] = file_changed
    if params['state'] == 'absent':
        result['removed_backups'] = backups
    if module._diff:
        result['diff'] = {'before': before, 'after': after,
                          'before_header': path if exists else '%s (absent)' % path,
                          'after_header': '%s (absent)' % path if remove_file else path}

    if module.check_mode:
        module.exit_json(**result)
    if file_changed:
        if params['backup'] and exists:
            result['backup_file'] = module.backup_local(path)
        if remove_file:
            os.unlink(path)
        else:
            write_config_atomically(module, path, after, None if exists else new_file_mode)
    if params['state'] == 'present' and file_changed:
        made_backups = list((records.get(name) or {}).get('backups') or [])
        if result.get('backup_file') and result['backup_file'] not in made_backups:
            made_backups.append(result['backup_file'])
        record = dict(record, backups=made_backups) if made_backups else record
        records[name] = record
        save_records(result['state_file'], records)
    elif undone:
        # The registration is gone (by this run or by hand): its record has served its purpose.
        records.pop(name)
        save_records(result['state_file'], records)
        for backup in backups:
            os.unlink(backup)
    module.exit_json(**result)
