# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What npu.ascend.controller_files changes in a directory on the controller. No Ansible imports.

``plan_writes`` compares the wanted files (relative path -> text) with what the directory holds and
returns only those whose bytes or mode differ; the action writes them. Names must stay inside the
directory. With a validation command, the action first writes the whole set into a staging directory
(``stage``) and runs the command there (``validation_argv``): a set the validator refuses is not written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read, durable_file


class ControllerFilesError(ValueError):
    """A file name or mode the action refuses, with the reason."""


def _relative_name(name):
    if not isinstance(name, str) or not name:
        raise ControllerFilesError('a file name is empty or not a string: %r' % (name,))
    parts = name.split('/')
    if name.startswith('/') or '\\' in name or any(part in ('', '.', '..') for part in parts) or '\x00' in name:
        raise ControllerFilesError('file name %r is not a plain relative path inside the directory' % name)
    return os.path.join(*parts)


def parse_mode(mode):
    """``'0644'`` (or ``'644'``) -> 0o644; refuses anything but permission bits."""
    try:
        value = int(str(mode), 8)
    except ValueError:
        raise ControllerFilesError('mode %r is not an octal file mode such as 0644' % (mode,))
    if value < 0 or value > 0o777:
        raise ControllerFilesError('mode %r is not a permission mode between 0000 and 0777' % (mode,))
    return value


def _current(path):
    """(bytes, permission bits) of the regular file at path, or (None, None) when there is none."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, None
    if not stat.S_ISREG(info.st_mode):
        raise ControllerFilesError('%s exists and is not a regular file' % path)
    try:
        # Not through a link swapped in since the lstat: its target would show in the diff.
        return bounded_read.read_bytes(path, bounded_read.CONFIG_FILE_LIMIT, follow=False), stat.S_IMODE(info.st_mode)
    except bounded_read.RefusedFile as refusal:
        raise ControllerFilesError(refusal.cause)


def plan_writes(directory, files, mode):
    """The files of ``files`` (relative name -> text) that differ from what ``directory`` holds.

    Each entry: ``name``, ``path``, ``before`` (the bytes there, None when absent), ``after`` (the
    wanted bytes) and ``content_changed``; a file whose bytes match but whose mode differs from
    ``mode`` is listed with ``content_changed`` false. In the order of the names.
    """
    if not isinstance(files, dict):
        raise ControllerFilesError('files must map relative names to their text')
    changes = []
    for name in sorted(files):
        path = os.path.join(directory, _relative_name(name))
        text = files[name]
        if not isinstance(text, str):
            raise ControllerFilesError('the content of %s is not text' % name)
        after = text.encode('utf-8')
        # A link on the way (a directory of dir that is a link) must not lead a write, a chmod or a
        # mkdir outside dir: UnsafeDestination.
        durable_file.refuse_outside(os.path.dirname(path), directory)
        before, current_mode = _current(path)
        if before != after or current_mode != mode:
            changes.append({'name': name, 'path': path, 'before': before, 'after': after,
                            'content_changed': before != after})
    return changes


def validation_argv(command, staged_path):
    """The validation command with ``%s`` replaced by the staged copy of the file it checks.

    ``command`` is an argv list; exactly one of its items holds ``%s``, as ``validate`` of
    ansible.builtin.template has it.
    """
    if not isinstance(command, list) or not command or not all(isinstance(item, str) and item for item in command):
        raise ControllerFilesError('validate.command must be a non-empty list of non-empty strings')
    holding = [index for index, item in enumerate(command) if '%s' in item]
    if len(holding) != 1:
        raise ControllerFilesError('validate.command must have exactly one item with %%s (the file to check), got %r'
                                   % (command,))
    return [item.replace('%s', staged_path) if index == holding[0] else item for index, item in enumerate(command)]


def stage(directory, files):
    """Write every file of ``files`` (relative name -> text) under ``directory``, a fresh staging
    directory, so that a validator sees the whole set as it will be, relative references included."""
    for name in sorted(files):
        path = os.path.join(directory, _relative_name(name))
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, mode=0o700)
        durable_file.replace_durably(path, files[name].encode('utf-8'), mode=0o600, root=directory)


def staged_file(directory, files, name):
    """The path of ``name``, one of ``files``, in the staging ``directory``."""
    if not isinstance(files, dict) or name not in files:
        raise ControllerFilesError('validate.file %r is not one of the files written' % (name,))
    return os.path.join(directory, _relative_name(name))
