# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One lock per node around the collection's edits of files it shares with others, kept free of Ansible.

Two runs against one node at once (two operators, AWX and a laptop) would otherwise both read an
engine config, both add their change and the later write would drop the earlier one. Every
read-modify-write of an engine config and every installer run takes an exclusive ``flock`` on one
file (``LOCK_PATH``). The kernel releases it when the holder exits or dies, so a crashed run never
leaves a stale lock behind; the file itself only says who holds it now, for the message of a run
that gave up waiting.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fcntl
import json
import os
import time

from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read

# In /run (a tmpfs that root alone may write): the lock is state of the running system only, so a
# failed run or an uninstall leaves no file of ours on disk, and a reboot starts without one.
LOCK_PATH = '/run/npu_ascend/lock'
# Config edits take milliseconds, but the lock is also held around installers (minutes).
DEFAULT_TIMEOUT = 600
_POLL_SECONDS = 0.1


class NodeLockTimeout(Exception):
    """The lock stayed held by another process for longer than the timeout."""

    def __init__(self, path, timeout, holder):
        self.path = path
        self.timeout = timeout
        self.holder = holder
        super(NodeLockTimeout, self).__init__(_describe_timeout(path, timeout, holder))


class NodeLockError(Exception):
    """The lock file cannot be created or opened."""


def _describe_holder(holder):
    """One line naming who holds the lock, from what it wrote into the lock file."""
    if not isinstance(holder, dict) or not holder:
        return 'a process that has not said who it is yet'
    parts = ['pid %s' % holder.get('pid', '?')]
    for key, label in (('module', 'module'), ('target', 'on'), ('user', 'user'), ('started_at', 'since')):
        if holder.get(key):
            parts.append('%s %s' % (label, holder[key]))
    return ', '.join(parts)


def _describe_timeout(path, timeout, holder):
    return ('the node lock %s is held by %s and was not released within %s seconds. Fix: let that run finish '
            '(a second run against the same node waits for it), or raise lock_timeout; the kernel releases the '
            'lock when its holder exits, so there is nothing to delete'
            % (path, _describe_holder(holder), timeout))


def _read_holder(path):
    """What the current holder wrote into the lock file ({} when unreadable or empty)."""
    try:
        text = bounded_read.read_bytes(path, follow=False).decode('utf-8')
        holder = json.loads(text) if text.strip() else {}
    except (IOError, OSError, ValueError, RecursionError):
        return {}
    return holder if isinstance(holder, dict) else {}


# Locks this process holds, by path: [fd, count]. The lock belongs to the process (one module run),
# so a nested acquisition in the same process (or one a module leaves to the kernel to release
# at exit) does not wait for itself.
_HELD = {}


class NodeLock(object):
    """``with NodeLock(holder=...)``: hold the node's lock for the block.

    ``timeout`` is how long to wait for another holder (0: do not wait). ``holder`` is a dict
    (module, target, ...) written into the lock file with the pid and start time.
    """

    def __init__(self, path=None, timeout=DEFAULT_TIMEOUT, holder=None, clock=time.time, sleep=time.sleep):
        self.path = path or LOCK_PATH
        self.timeout = timeout
        self.holder = dict(holder or {})
        self._clock = clock
        self._sleep = sleep
        self._fd = None

    def acquire(self):
        if self.timeout is None or self.timeout < 0:
            raise ValueError('the lock timeout must be 0 or more seconds, not %r' % (self.timeout,))
        held = _HELD.get(self.path)
        if held is not None and held[2] == os.getpid():
            held[1] += 1
            self._fd = held[0]
            return self
        directory = os.path.dirname(self.path)
        try:
            if directory and not os.path.isdir(directory):
                os.makedirs(directory, 0o755)
            # O_NOFOLLOW: the lock file is ours; a symlink planted there is not followed.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, 'O_NOFOLLOW', 0), 0o600)
        except (IOError, OSError) as error:
            raise NodeLockError('cannot open the node lock %s: %s. Fix: run as root (become: true), or make %s '
                                'writable' % (self.path, error, directory or '.'))
        deadline = self._clock() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except (IOError, OSError) as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise NodeLockError('cannot lock %s: %s' % (self.path, error))
            if self._clock() >= deadline:
                os.close(fd)
                raise NodeLockTimeout(self.path, self.timeout, _read_holder(self.path))
            self._sleep(_POLL_SECONDS)
        self._fd = fd
        _HELD[self.path] = [fd, 1, os.getpid()]
        holder = dict(self.holder, pid=os.getpid(),
                      started_at=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()))
        try:
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(holder, sort_keys=True) + '\n').encode('utf-8'))
        except (IOError, OSError):
            # Who holds the lock is only for messages; the lock itself is held.
            pass
        return self

    def release(self):
        if self._fd is None:
            return
        held = _HELD.get(self.path)
        if held is not None and held[0] == self._fd and held[1] > 1:
            held[1] -= 1
            self._fd = None
            return
        _HELD.pop(self.path, None)
        try:
            os.ftruncate(self._fd, 0)
        except (IOError, OSError):
            pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc_info):
        self.release()
        return False
