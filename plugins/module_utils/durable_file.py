# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Replacing a file whole or not at all, durably. No Ansible imports.

Used on the nodes (the container runtime configs and their records, the reboot marker) and on the
controller (the fleet report files): a crash or a full disk mid-write leaves the old file, never a
truncated one, and no temporary file behind.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def fsync_directory(directory):
    try:
        fd = os.open(directory or '.', os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_durably(directory, prefix, data, mode=None):
    """A new temporary file in ``directory`` holding ``data``, flushed to disk; returns its path."""
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=prefix)
    try:
        with os.fdopen(handle, 'wb') as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
    except BaseException:
        os.unlink(temporary)
        raise
    return temporary


def replace_durably(path, data, move=os.rename, mode=None):
    """Put the bytes ``data`` at ``path`` through a unique temporary file in its directory, file and
    directory fsynced.

    ``move`` renames the temporary file over ``path``; ``mode`` is given to the temporary file before
    (else it keeps mkstemp's 0600). The temporary file never outlives a failure. Raises OSError/IOError.
    """
    directory = os.path.dirname(path) or '.'
    # mkstemp: a unique name (two writers never share a temporary file).
    temporary = _write_durably(directory, '.' + os.path.basename(path) + '.', data, mode)
    try:
        move(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    fsync_directory(directory)
