# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""File handling shared by the container runtime config modules (containerd_runtime, containerd_import, docker_runtime).

Each module edits an engine's config file it does not own. What they promise, and where it is done:

* one node lock (``node_lock``) around the whole read-modify-write, so two runs at once lose nothing
  (``locked``);
* a config path that is a symlink stays one: the edit goes to its target (``config_target``);
  anything but a regular file (a FIFO would block the read) is refused before it is opened;
* the record of what the module changed is written (and fsynced) *before* the config, so a crash
  between the two still leaves an undoable node; the config is replaced atomically, keeping its
  mode, owner and SELinux context, and fsynced with its directory (``conclude``);
* state=absent deletes a backup only when asked (``remove_backups``) and only when it is one of
  ``backup_local``'s copies of that very file (``_is_own_backup``);
* secrets in the engine config never reach a diff (``redact_secrets``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import hashlib
import json
import os
import re
import stat
import time

from ansible.module_utils.common.text.converters import to_native
from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_redaction
from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file
from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock

RECORD_FORMAT = 1
REDACTED = config_redaction.REDACTED
SECRET_KEYS = config_redaction.SECRET_KEYS
# backup_local names a copy "<file name>.<pid>.<YYYY-MM-DD@HH:MM:SS~>" in the file's directory.
_BACKUP_SUFFIX = re.compile(r'\.[0-9]+\.[0-9]{4}-[0-9]{2}-[0-9]{2}@[0-9]{2}:[0-9]{2}:[0-9]{2}~\Z')


def shared_argument_spec():
    """The options every runtime config module has (documented in the npu.ascend.runtime_config fragment)."""
    return dict(
        state=dict(type='str', default='present', choices=['present', 'absent']),
        backup=dict(type='bool', default=False),
        remove_backups=dict(type='bool', default=False),
        lock_timeout=dict(type='int', default=node_lock.DEFAULT_TIMEOUT),
    )


def runc_rewrite_argument_spec():
    """The opt-in to register over ``runc`` (npu.ascend.runtime_config.runc_rewrite fragment)."""
    return dict(allow_runc_rewrite=dict(type='bool', default=False))


@contextlib.contextmanager
def locked(module, target=None):
    """Hold the node lock while the block runs (not in check mode, which writes nothing).

    A module's fail_json/exit_json inside the block leave it through SystemExit, which releases the lock.
    """
    timeout = module.params.get('lock_timeout')
    if timeout is None:
        timeout = node_lock.DEFAULT_TIMEOUT
    if timeout < 0:
        module.fail_json(msg='lock_timeout is %s; it must be 0 (do not wait) or more seconds' % timeout)
    if module.check_mode:
        yield
        return
    holder = {'module': 'npu.ascend.%s' % getattr(module, '_name', 'module'),
              'target': target or module.params.get('path'),
              'user': os.environ.get('SUDO_USER') or os.environ.get('USER') or str(os.getuid())}
    lock = node_lock.NodeLock(timeout=timeout, holder=holder)
    try:
        lock.acquire()
    except (node_lock.NodeLockTimeout, node_lock.NodeLockError) as error:
        module.fail_json(msg=to_native(error))
    try:
        yield
    finally:
        lock.release()


def _kind(mode):
    for test, name in ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO (named pipe)'),
                       (stat.S_ISSOCK, 'a socket'), (stat.S_ISCHR, 'a character device'),
                       (stat.S_ISBLK, 'a block device')):
        if test(mode):
            return name
    return 'not a regular file'


def _refuse_kind(module, path, mode, shown=None):
    module.fail_json(msg='%s is %s, not a regular file; nothing was read or changed. Fix: point path at the '
                         'engine\'s config file (or at a symlink to it)' % (shown or path, _kind(mode)))


def config_target(module, path):
    """The file to edit for ``path``: its target when it is a symlink, so that the link stays a link.

    Refuses (before anything opens it) a path that is a directory, a FIFO or another non-regular
    file, and a symlink loop. A missing file (or a dangling link's target) is returned as is.
    """
    try:
        os.lstat(path)
    except OSError:
        return path
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        mode = os.stat(target).st_mode
    except OSError as error:
        if os.path.islink(path) and not os.path.lexists(target):
            return target
        module.fail_json(msg='cannot follow %s: %s; nothing was changed. Fix: make it a regular file or a '
                             'symlink to one' % (path, to_native(error)))
    if not stat.S_ISREG(mode):
        _refuse_kind(module, target, mode, shown=path if target == path else '%s (the target of %s)' % (target, path))
    return target


def read_config(module, path):
    """The text of ``path`` (a regular file, UTF-8), or a failure naming file, cause and fix."""
    try:
        # bounded_read: a FIFO swapped in after config_target looked must not hang the run, and a
        # directory (template_config can name one) is refused on the opened descriptor.
        data = bounded_read.read_bytes(path, bounded_read.CONFIG_FILE_LIMIT)
    except bounded_read.RefusedFile as error:
        if error.mode is not None:
            _refuse_kind(module, path, error.mode)
        module.fail_json(msg='%s; nothing was changed. Fix: point path at the engine\'s config file, or restore it '
                             'from a backup' % error.cause)
    except (IOError, OSError) as error:
        module.fail_json(msg='cannot read %s: %s. Fix: run as root (become: true) or correct the path'
                         % (path, to_native(error)))
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        module.fail_json(msg='%s is not UTF-8 text (%s); nothing was changed. Fix: the engine reads its config as '
                             'UTF-8: convert or restore the file, then run again' % (path, to_native(error)))


def write_config_atomically(module, path, text, new_file_mode=None):
    """Replace path with text (durably: file and directory fsynced); a file created here gets new_file_mode.

    Raises OSError/IOError for the caller to report (it may have to undo its record first).
    """
    directory = os.path.dirname(path) or '.'
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    # atomic_move keeps an existing file's mode, owner and SELinux context.
    durable_file.replace_durably(path, text.encode('utf-8'), module.atomic_move)
    if new_file_mode is not None:
        module.set_mode_if_different(path, new_file_mode, False)


def _record_problem(content, config_path):
    """Why a parsed record file cannot be used, or None."""
    if not isinstance(content, dict):
        return 'holds a JSON %s, not an object' % type(content).__name__
    if content.get('format', RECORD_FORMAT) != RECORD_FORMAT:
        return 'has format %r, this collection reads format %d' % (content.get('format'), RECORD_FORMAT)
    if config_path is not None and content.get('config') not in (None, config_path):
        return 'is the record of %s, not of %s' % (content.get('config'), config_path)
    runtimes = content.get('runtimes')
    if runtimes is None:
        return None
    if not isinstance(runtimes, dict):
        return '"runtimes" is a %s, not an object' % type(runtimes).__name__
    for name, record in runtimes.items():
        if not isinstance(record, dict):
            return 'the entry %r is a %s, not an object' % (name, type(record).__name__)
        backups = record.get('backups')
        if backups is not None and not (isinstance(backups, list) and all(isinstance(b, str) for b in backups)):
            return 'the backups of %r are not a list of paths' % name
    return None


def load_records(module, record_path, config_path=None):
    """The records kept beside a config ({} when there are none); a damaged record is refused."""
    if not os.path.lexists(record_path):
        return {}
    fix = ('nothing was changed. Fix: move %s away (state=absent then does what Huawei\'s uninstall does and '
           'state=present records afresh) or restore it from a backup, then run again' % record_path)
    try:
        fd = os.open(record_path, os.O_RDONLY | getattr(os, 'O_NONBLOCK', 0) | getattr(os, 'O_NOFOLLOW', 0))
        with os.fdopen(fd, 'rb') as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                module.fail_json(msg='the record of earlier changes %s is not a regular file; %s' % (record_path, fix))
            content = json.loads(handle.read().decode('utf-8'))
    except (IOError, OSError, ValueError, RecursionError) as error:
        module.fail_json(msg='cannot read the record of earlier changes %s: %s; %s'
                         % (record_path, to_native(error) or type(error).__name__, fix))
    problem = _record_problem(content, config_path)
    if problem:
        module.fail_json(msg='the record of earlier changes %s %s; %s' % (record_path, problem, fix))
    return dict(content.get('runtimes') or {})


def _record_bytes(records, config_path):
    content = {'format': RECORD_FORMAT, 'runtimes': records}
    if config_path is not None:
        content['config'] = config_path
    return (json.dumps(content, indent=2, sort_keys=True) + '\n').encode('utf-8')


def save_records(record_path, records, config_path=None):
    """Write (or, with no records left, delete) the record file durably; raises OSError/IOError."""
    directory = os.path.dirname(record_path) or '.'
    if not records:
        if os.path.lexists(record_path):
            os.unlink(record_path)
            durable_file.fsync_directory(directory)
        return
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    durable_file.replace_durably(record_path, _record_bytes(records, config_path))


def _raw_record(record_path):
    try:
        with open(record_path, 'rb') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _put_back_record(record_path, raw):
    """Restore the record file's earlier bytes (None: there was none) after the config write failed."""
    try:
        if raw is None:
            if os.path.lexists(record_path):
                os.unlink(record_path)
            return
        durable_file.replace_durably(record_path, raw)
    except (IOError, OSError):
        pass


def _is_regular_file(path):
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _follow_write(records, name, before, after):
    """Tell the records of the other runtimes in the file that its new bytes are this collection's too.

    A record's ``file_sha256`` names the bytes the collection last left in the file; one that still
    names ``before`` follows this write, one that does not (the file was edited since) stays as it is.
    """
    before_sha, after_sha = (hashlib.sha256(text.encode('utf-8')).hexdigest() for text in (before, after))
    for other, record in records.items():
        if other != name and isinstance(record, dict) and record.get('file_sha256') == before_sha:
            record['file_sha256'] = after_sha


def _backup(path):
    """A copy of ``path`` named as Ansible's backup_local names it, with its mode, through the safe writer:
    backup_local's copy follows a link planted at that predictable name."""
    name = '%s.%s.%s' % (path, os.getpid(), time.strftime('%Y-%m-%d@%H:%M:%S~', time.localtime(time.time())))
    with bounded_read.open_regular(path) as source:
        status = os.fstat(source.fileno())
        data = source.read(bounded_read.CONFIG_FILE_LIMIT + 1)
    if len(data) > bounded_read.CONFIG_FILE_LIMIT:
        raise bounded_read.RefusedFile(path, '%s is larger than %d bytes' % (path, bounded_read.CONFIG_FILE_LIMIT))
    durable_file.replace_durably(name, data, mode=stat.S_IMODE(status.st_mode), keep_mode=False)
    os.utime(name, ns=(status.st_atime_ns, status.st_mtime_ns), follow_symlinks=False)
    if os.geteuid() == 0:
        os.chown(name, status.st_uid, status.st_gid, follow_symlinks=False)
    return name


def _is_own_backup(config_path, candidate):
    """Whether ``candidate`` is a copy ``backup_local`` made of ``config_path``: same directory, its naming."""
    directory, base = os.path.split(config_path)
    cand_directory, cand_base = os.path.split(candidate)
    if os.path.normpath(directory or '.') != os.path.normpath(cand_directory or '.'):
        return False
    return cand_base.startswith(base) and _BACKUP_SUFFIX.match(cand_base[len(base):]) is not None


def redact_secrets(text, kind=None):
    """``text`` with its credentials hidden (``config_redaction.redact_config_text``, which see).

    ``kind`` is 'json' (daemon.json) or 'toml' (containerd); None guesses: JSON when it parses as JSON.
    Hidden the same way in the before and the after of a diff, whatever else changed.
    """
    return config_redaction.redact_config_text(text, kind)


def refuse_runc(module, name, records):
    """Fail unless the operator opted in when ``name`` is runc, the runtime others copy and fall back to.

    Undoing a change the module itself recorded for runc stays possible without the opt-in.
    """
    if name != 'runc' or module.params.get('allow_runc_rewrite'):
        return
    if module.params['state'] == 'absent' and name in records:
        return
    module.fail_json(msg='refusing to %s the runtime "runc" in %s: it is the runtime new runtimes copy and the '
                         'fallback default, nothing was changed. Fix: register the Ascend runtime under its own '
                         'name (name: ascend), or set allow_runc_rewrite: true if rewriting runc is really meant'
                         % ('register' if module.params['state'] == 'present' else 'remove', module.params['path']))


def _fail_write(module, result, path, error, what):
    # Every failure path leaves the config (and the record) as it was: nothing changed, nothing to restart.
    result['changed'] = False
    result['restart_needed'] = False
    module.fail_json(msg='cannot %s %s: %s; the config was left as it was. Fix: run as root (become: true), make '
                         'the directory writable or free space on it, then run again'
                         % (what, path, to_native(error)), **result)


def conclude(module, result, before, after, exists, remove_file, records, record, new_file_mode, key=None,
             after_write=None, config_kind=None):
    """Report the change of the config file and, outside check mode, make it; then exit the module.

    ``before``/``after`` are the file's text, ``remove_file`` says the file this module created is
    to go again, and ``records``/``record`` are the change records of every entry the modules made
    in this file and of this one, filed under ``key`` (default: the module's ``name``). The file
    is ``result['path']`` (the target when the configured path is a symlink).

    ``after_write``, when given, is called once the file is as the result says (not in check mode).
    ``config_kind`` ('json' or 'toml') says how the diff's text is parsed to hide its credentials.

    Order on disk, so that a crash at any point leaves a node the next run (or absent) can undo:
    state=present writes the record of what it will change, then the config; state=absent puts
    the config back, then drops the record.
    """
    params = module.params
    path, name = result['path'], key or params['name']
    record_path = result['state_file']
    file_changed = (after != before) or remove_file
    undone = params['state'] == 'absent' and name in records
    result['changed'] = file_changed or undone
    result['restart_needed'] = file_changed
    if exists:
        result['before_sha256'] = module.sha256(path) if os.path.isfile(path) else None
    else:
        result['before_sha256'] = None

    listed = [backup for backup in (records[name].get('backups') or []) if os.path.lexists(backup)] if undone else []
    # A backup name now taken by something else (a directory, a link) is not the copy that was made: kept.
    not_files = [backup for backup in listed if not _is_regular_file(backup)]
    if not_files and params.get('remove_backups'):
        module.warn('the record of %s lists %s, which %s not a regular file any more (not the copy this module '
                    'made); left in place. Fix: look at %s and remove it by hand if it is not needed'
                    % (path, ', '.join(not_files), 'is' if len(not_files) == 1 else 'are',
                       'it' if len(not_files) == 1 else 'them'))
    removed = [backup for backup in listed if params.get('remove_backups') and _is_own_backup(path, backup)
               and backup not in not_files]
    kept = [backup for backup in listed if backup not in removed]
    if params['state'] == 'absent':
        result['removed_backups'] = removed
        result['kept_backups'] = kept
        foreign = [backup for backup in listed if not _is_own_backup(path, backup)]
        if foreign:
            module.warn('the record of %s lists %s, which %s not a backup this module made of that file; left in place'
                        % (path, ', '.join(foreign), 'is' if len(foreign) == 1 else 'are'))
        result['changed'] = result['changed'] or bool(removed)
    if module._diff:
        result['diff'] = {'before': redact_secrets(before, config_kind), 'after': redact_secrets(after, config_kind),
                          'before_header': path if exists else '%s (absent)' % path,
                          'after_header': '%s (absent)' % path if remove_file else path}

    if module.check_mode:
        module.exit_json(**result)

    _follow_write(records, name, before, after)
    if params['state'] == 'present' and file_changed:
        if params['backup'] and exists:
            try:
                result['backup_file'] = _backup(path)
            except (IOError, OSError, bounded_read.RefusedFile) as error:
                _fail_write(module, result, path, error, 'back up')
        made_backups = list((records.get(name) or {}).get('backups') or [])
        if result.get('backup_file') and result['backup_file'] not in made_backups:
            made_backups.append(result['backup_file'])
        records[name] = dict(record, backups=made_backups) if made_backups else record
        previous_record = _raw_record(record_path)
        try:
            save_records(record_path, records, path)
        except (IOError, OSError) as error:
            _put_back_record(record_path, previous_record)
            _fail_write(module, result, record_path, error, 'record the change before writing')
        _hook_after_record()
        try:
            write_config_atomically(module, path, after, None if exists else new_file_mode)
        except (IOError, OSError) as error:
            _put_back_record(record_path, previous_record)
            _fail_write(module, result, path, error, 'write')
    elif params['state'] == 'absent':
        if file_changed:
            try:
                if remove_file:
                    os.unlink(path)
                    durable_file.fsync_directory(os.path.dirname(path))
                else:
                    write_config_atomically(module, path, after, None)
            except (IOError, OSError) as error:
                _fail_write(module, result, path, error, 'write')
        if undone:
            # The registration is gone (by this run or by hand): its record has served its purpose.
            records.pop(name)
            try:
                save_records(record_path, records, path)
            except (IOError, OSError) as error:
                # The record still names the registration: the config goes back to match it, so
                # that a rerun undoes it again instead of meeting a config without its record.
                try:
                    if file_changed:
                        write_config_atomically(module, path, before, new_file_mode if remove_file else None)
                except (IOError, OSError) as put_back_error:
                    result['restart_needed'] = file_changed
                    module.fail_json(msg='cannot update the record %s: %s, and cannot put %s back as it was: %s. '
                                         'The config was changed (the registration is undone) but its record '
                                         'still names it. Fix: free space or make the directory writable, then '
                                         'run state=absent again'
                                     % (record_path, to_native(error), path, to_native(put_back_error)), **result)
                _fail_write(module, result, record_path, error, 'update the record')
            for backup in list(removed):
                try:
                    os.unlink(backup)
                except (IOError, OSError) as error:
                    # The config is restored and the record dropped: a backup left behind is a warning.
                    removed.remove(backup)
                    result['kept_backups'].append(backup)
                    module.warn('cannot delete the backup %s: %s; left in place' % (backup, to_native(error)))
    if after_write is not None:
        after_write()
    module.exit_json(**result)


# Tests only (the fault matrix's "crash between record and config"): with this variable set the
# module dies right after the record is on disk, as a node losing power there would.
CRASH_AFTER_RECORD_ENV = 'NPU_ASCEND_TEST_CRASH_AFTER_RECORD'


def _hook_after_record():
    if os.environ.get(CRASH_AFTER_RECORD_ENV):
        os._exit(137)
