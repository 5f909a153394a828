# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way the collection writes a file: whole or not at all, durably, never through a link.
No Ansible imports.

Used on the nodes (the container runtime configs and their records, the reboot marker, the
diagnostics bundle) and on the controller (the fleet report files, controller_files): a crash or a
full disk mid-write leaves the old file, never a truncated one, and no temporary file behind.

Every file is written as root into directories others may write (``/tmp``, a report directory, a
directory of the operator), so the writer trusts no name in it:

- the destination's directory is opened once, and every later step works relative to that
  descriptor (``dir_fd``): a directory swapped for a link after the check changes nothing;
- with ``root``, the directory must resolve inside ``root`` (checked on the opened descriptor);
- a destination that is a symbolic link, or not a regular file, is refused (``UnsafeDestination``);
- the temporary file is created exclusively (``O_CREAT|O_EXCL|O_NOFOLLOW``) under a fresh random
  name in the destination's directory, fsynced, then renamed over the destination: a link planted at
  the destination meanwhile is replaced itself, its target is never written;
- an existing file keeps its permission bits (and, as root, its owner) unless the caller asks for
  a mode (``keep_mode=False``).

``tests/unit/tools/test_one_safe_writer.py`` walks ``plugins/`` and refuses any other way of
writing a file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import contextlib
import os
import stat

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read

_TEMPORARY_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0)
                    | getattr(os, 'O_CLOEXEC', 0))
_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_CLOEXEC', 0)
_FIX = 'Fix: remove what is there (or give a path of a plain file in a plain directory), then run again'


class UnsafeDestination(OSError):
    """A destination the writer refuses: a symbolic link, not a regular file, or outside its root.
    The message names the path, the cause and the fix."""

    def __init__(self, path, cause):
        super(UnsafeDestination, self).__init__('%s; nothing was written. %s' % (cause, _FIX))
        self.path = path
        self.cause = cause


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


def _inside(path, root):
    root = os.path.realpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def refuse_outside(path, root):
    """UnsafeDestination when ``path`` (existing or not) resolves outside ``root``, through a link
    anywhere on its way; returns the resolved path."""
    resolved = os.path.realpath(path)
    if not _inside(resolved, root):
        raise UnsafeDestination(path, '%s resolves to %s, outside %s (a symbolic link on its way)'
                                % (path, resolved, root))
    return resolved


def descriptor_path(fd, fallback):
    """Where the opened directory ``fd`` is (Linux: /proc/self/fd), else the resolved ``fallback``."""
    try:
        return os.readlink('/proc/self/fd/%d' % fd)
    except OSError:
        return os.path.realpath(fallback)


def _existing_file(directory_fd, name, path):
    """The lstat of ``name`` in the opened directory (None when absent); UnsafeDestination when it
    is a link or not a regular file."""
    try:
        status = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(status.st_mode):
        try:
            target = os.readlink(name, dir_fd=directory_fd)
        except OSError:
            target = '?'
        raise UnsafeDestination(path, '%s is a symbolic link (to %s); a file is never written through a link'
                                % (path, target))
    if not stat.S_ISREG(status.st_mode):
        raise UnsafeDestination(path, '%s is %s, not a regular file' % (path, bounded_read.describe_kind(status.st_mode)))
    return status


def _create_temporary(directory_fd, name):
    for _attempt in range(100):
        temporary = '.%s.%s.tmp' % (name[:200], binascii.hexlify(os.urandom(8)).decode('ascii'))
        try:
            return temporary, os.open(temporary, _TEMPORARY_FLAGS, 0o600, dir_fd=directory_fd)
        except FileExistsError:
            continue
    raise FileExistsError('no unique temporary name beside %s' % name)


def _open_directory(path, root):
    directory = os.path.dirname(path) or '.'
    name = os.path.basename(path)
    if not name or name in ('.', '..'):
        raise UnsafeDestination(path, '%s names no file' % path)
    if root is not None:
        refuse_outside(directory, root)
    fd = os.open(directory, _DIRECTORY_FLAGS)
    if root is not None:
        opened = descriptor_path(fd, directory)
        if not _inside(opened, root):
            os.close(fd)
            raise UnsafeDestination(path, 'the directory of %s resolves to %s, outside %s (a symbolic link on its way)'
                                    % (path, opened, root))
    return directory, name, fd


@contextlib.contextmanager
def writing(path, mode=None, root=None, keep_mode=True, move=None):
    """A binary stream whose bytes replace ``path`` whole when the block ends without an exception
    (nothing changes, and no temporary file stays, when it raises).

    ``mode``: the permission bits of a new file (0600 when None); an existing file keeps its own
    unless ``keep_mode`` is false. ``root``: the directory the destination must resolve inside.
    ``move``: a function renaming the temporary file (by path) over ``path`` (Ansible's
    ``atomic_move``, which also keeps SELinux contexts); by default a rename within the opened
    directory. Raises UnsafeDestination (an OSError) or OSError/IOError.
    """
    directory, name, directory_fd = _open_directory(path, root)
    try:
        existing = _existing_file(directory_fd, name, path)
        temporary, fd = _create_temporary(directory_fd, name)
        try:
            with os.fdopen(fd, 'wb') as stream:
                yield stream
                stream.flush()
                if existing is not None and keep_mode:
                    os.fchmod(stream.fileno(), stat.S_IMODE(existing.st_mode))
                    if hasattr(os, 'geteuid') and os.geteuid() == 0:
                        os.fchown(stream.fileno(), existing.st_uid, existing.st_gid)
                else:
                    os.fchmod(stream.fileno(), 0o600 if mode is None else mode)
                os.fsync(stream.fileno())
            # Checked again just before the rename: a link planted since is refused, not replaced silently.
            _existing_file(directory_fd, name, path)
            if move is None:
                os.rename(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
            else:
                move(os.path.join(directory, temporary), path)
        finally:
            try:
                os.unlink(temporary, dir_fd=directory_fd)
            except FileNotFoundError:
                pass
        try:
            os.fsync(directory_fd)
        except OSError:
            pass
    finally:
        os.close(directory_fd)


def replace_durably(path, data, move=None, mode=None, root=None, keep_mode=True):
    """Put the bytes ``data`` at ``path`` through a unique temporary file in its directory, file and
    directory fsynced (see ``writing`` for ``move``, ``mode``, ``root`` and ``keep_mode``).

    The temporary file never outlives a failure. Raises UnsafeDestination (an OSError) or OSError/IOError.
    """
    with writing(path, mode=mode, root=root, keep_mode=keep_mode, move=move) as stream:
        stream.write(data)


def set_mode(path, mode, root=None):
    """chmod of the regular file ``path`` (inside ``root``), never of a link's target."""
    _directory, name, directory_fd = _open_directory(path, root)
    try:
        _existing_file(directory_fd, name, path)
        fd = os.open(name, os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0), dir_fd=directory_fd)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    finally:
        os.close(directory_fd)


def make_directories(path, mode, root):
    """``os.makedirs(path, mode)`` when ``path`` (and each directory on its way) resolves inside ``root``."""
    refuse_outside(path, root)
    if not os.path.isdir(path):
        os.makedirs(path, mode)
    refuse_outside(path, root)


def rename_within(source, target, root):
    """Moves the regular file ``source`` to ``target``, both inside ``root``; a link at either end
    is refused (the link itself would move, or be replaced, never its target)."""
    for path in (source, target):
        refuse_outside(os.path.dirname(path) or '.', root)
    status = os.lstat(source)
    if not stat.S_ISREG(status.st_mode):
        raise UnsafeDestination(source, '%s is %s' % (source, 'a symbolic link' if stat.S_ISLNK(status.st_mode)
                                                      else bounded_read.describe_kind(status.st_mode)))
    if os.path.lexists(target):
        raise UnsafeDestination(target, '%s is already there' % target)
    os.rename(source, target)
    fsync_directory(os.path.dirname(target))
