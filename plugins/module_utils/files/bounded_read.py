# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way the modules read a file on a node: a regular file, a bounded number of bytes, no
blocking open. No Ansible imports.

Every file a module reads as root may have been replaced by something else: a FIFO (an open for
reading waits for a writer forever), a link to ``/dev/zero`` (a read never ends) or a huge file.
So the file is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting), checked with
``fstat`` on the opened descriptor (no window between the check and the read), refused unless it is
a regular file, and read up to a cap: version files and our own markers are a few hundred bytes,
so anything beyond ``SMALL_FILE_LIMIT`` is refused; of a log only the tail is read.

Missing or unreadable files raise the usual OSError/IOError (callers decide what absence means);
a file that is there but cannot be read safely raises RefusedFile, whose message names the path,
what was found and the fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

# Version files, install records, our reboot marker, os-release, sysfs and /proc entries.
SMALL_FILE_LIMIT = 1024 * 1024
# Engine configs (containerd's config.toml, Docker's daemon.json): large ones are a few hundred KiB.
CONFIG_FILE_LIMIT = 16 * 1024 * 1024
# Of an installer log only the end is shown (its last lines).
LOG_TAIL_BYTES = 64 * 1024

_KINDS = (
    (stat.S_ISDIR, 'a directory'),
    (stat.S_ISFIFO, 'a FIFO (named pipe)'),
    (stat.S_ISCHR, 'a character device'),
    (stat.S_ISBLK, 'a block device'),
    (stat.S_ISSOCK, 'a socket'),
)


_FIX = 'Fix: put the file that belongs there back (or remove what is there), then run again'


class RefusedFile(ValueError):
    """A file that is there but is not one to read: not a regular file, or larger than the cap.

    ``cause`` says what was found (with the path), for callers that know a better fix than the
    generic one of the message; ``mode`` is the file's st_mode when it is not a regular file.
    """

    def __init__(self, path, cause, mode=None):
        super(RefusedFile, self).__init__('%s. %s' % (cause, _FIX))
        self.path = path
        self.cause = cause
        self.mode = mode


def describe_kind(mode):
    """'a FIFO (named pipe)', 'a directory'... for a mode that is not a regular file's."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return 'not a regular file'


def _open_regular(path, follow=True, dir_fd=None):
    """A descriptor of ``path`` (relative to the opened directory ``dir_fd`` when given) opened
    read-only without blocking, and its stat; RefusedFile unless it is a regular file (the
    descriptor is then closed)."""
    flags = os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOCTTY', 0)
    if not follow:
        flags |= getattr(os, 'O_NOFOLLOW', 0)
    fd = os.open(path, flags) if dir_fd is None else os.open(path, flags, dir_fd=dir_fd)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise RefusedFile(path, '%s is %s, not a regular file, so it was not read'
                              % (path, describe_kind(status.st_mode)), status.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def open_regular(path, follow=True):
    """A binary file object of the regular file ``path`` (for streaming it, e.g. into a hash);
    RefusedFile for anything else, OSError when it cannot be opened."""
    fd, _status = _open_regular(path, follow)
    return os.fdopen(fd, 'rb')


def _read_up_to(fd, limit):
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b''.join(chunks)


def read_bytes(path, limit=SMALL_FILE_LIMIT, follow=True, dir_fd=None):
    """The bytes of the regular file ``path``; RefusedFile when it is not one or holds more than
    ``limit`` bytes (checked on what is read, so /proc files reporting size 0 are read too).
    ``dir_fd``: ``path`` is a name in that opened directory."""
    fd, status = _open_regular(path, follow, dir_fd)
    try:
        if status.st_size > limit:
            data = None
        else:
            data = _read_up_to(fd, limit)
    finally:
        os.close(fd)
    if data is None or len(data) > limit:
        raise RefusedFile(path, '%s is larger than %d bytes (%d), far more than such a file holds, so it was '
                                'not read' % (path, limit, max(status.st_size, limit + 1)))
    return data


def read_tail(path, limit=LOG_TAIL_BYTES, follow=True, dir_fd=None):
    """The last ``limit`` bytes (at most) of the regular file ``path``; RefusedFile when it is not one.
    ``dir_fd``: ``path`` is a name in that opened directory."""
    fd, status = _open_regular(path, follow, dir_fd)
    try:
        if status.st_size > limit:
            os.lseek(fd, status.st_size - limit, os.SEEK_SET)
        data = _read_up_to(fd, limit)
    finally:
        os.close(fd)
    # A file that grew meanwhile: still only its last ``limit`` bytes of what was read.
    return data[-limit:]
