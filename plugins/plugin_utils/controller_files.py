# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What npu.ascend.controller_files changes in a directory on the controller. No Ansible imports.

``plan_writes`` compares the wanted files (relative path -> text) with what the directory holds and
returns only those whose bytes or mode differ; the action writes them. Names must stay inside the
directory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat


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
    with open(path, 'rb') as stream:
        return stream.read(), stat.S_IMODE(info.st_mode)


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
        before, current_mode = _current(path)
        if before != after or current_mode != mode:
            changes.append({'name': name, 'path': path, 'before': before, 'after': after,
                            'content_changed': before != after})
    return changes
