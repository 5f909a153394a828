# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of npu.ascend.controller_files: writes a set of text files into a directory on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess
import tempfile

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file
from ansible_collections.npu.ascend.plugins.plugin_utils import controller_files

ARGUMENT_SPEC = dict(
    dir=dict(type='path', required=True),
    files=dict(type='dict', required=True),
    mode=dict(type='str', default='0644'),
    directory_mode=dict(type='str', default='0755'),
    validate=dict(type='dict', options=dict(
        file=dict(type='str', required=True),
        command=dict(type='list', elements='str', required=True),
        timeout=dict(type='int', default=60),
    )),
)
# What a validator prints is cut to its end in a failure message.
VALIDATION_OUTPUT_SHOWN = 2000


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_diff = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        directory = args['dir']
        try:
            if not directory:
                raise controller_files.ControllerFilesError('dir is empty')
            mode = controller_files.parse_mode(args['mode'])
            directory_mode = controller_files.parse_mode(args['directory_mode'])
            changes = controller_files.plan_writes(directory, args['files'], mode)
        except controller_files.ControllerFilesError as error:
            return dict(result, failed=True, msg='controller_files: %s. Fix: give plain relative names under dir, text '
                                                 'contents and octal modes' % to_native(error))
        except durable_file.UnsafeDestination as error:
            return dict(result, failed=True, msg='controller_files: %s' % to_native(error))
        except (IOError, OSError) as error:
            return dict(result, failed=True, msg='controller_files: cannot read %s: %s. Fix: give dir a directory the '
                                                 'controller user may read and write' % (directory, to_native(error)))
        if changes and args['validate']:
            refusal = self._validate(args['files'], args['validate'])
            if refusal:
                return dict(result, failed=True, msg='controller_files: %s; nothing was written in %s' % (refusal, directory))
        if not self._task.check_mode:
            try:
                for change in changes:
                    durable_file.make_directories(os.path.dirname(change['path']), directory_mode, directory)
                    if change['content_changed']:
                        durable_file.replace_durably(change['path'], change['after'], mode=mode, root=directory,
                                                     keep_mode=False)
                    else:
                        durable_file.set_mode(change['path'], mode, root=directory)
            except durable_file.UnsafeDestination as error:
                return dict(result, failed=True, msg='controller_files: %s' % to_native(error))
            except (IOError, OSError) as error:
                return dict(result, failed=True, msg='controller_files: cannot write in %s: %s. Fix: give dir a '
                                                     'directory the controller user may write'
                                                     % (directory, to_native(error)))
        result.update(changed=bool(changes), written=[change['name'] for change in changes],
                      validated=bool(changes and args['validate']))
        if self._task.diff:
            result['diff'] = [
                {'before_header': change['path'], 'after_header': change['path'],
                 'before': (change['before'] or b'').decode('utf-8', 'replace'),
                 'after': change['after'].decode('utf-8')}
                for change in changes if change['content_changed']]
        return result

    @staticmethod
    def _validate(files, validate):
        """Why the validator refuses the whole set of files, staged aside (a dry run checks it too), or None."""
        staging = tempfile.mkdtemp(prefix='npu-ascend-validate-')
        try:
            try:
                controller_files.stage(staging, files)
                argv = controller_files.validation_argv(
                    validate['command'], controller_files.staged_file(staging, files, validate['file']))
            except controller_files.ControllerFilesError as error:
                return '%s. Fix: name one of the files in validate.file and put %%s where the command takes it' % error
            except (IOError, OSError) as error:
                return 'cannot stage the files for validation in %s: %s. Fix: free the temporary directory' % (
                    staging, to_native(error))
            shown = ' '.join(validate['command'])
            try:
                completed = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                           timeout=validate['timeout'], env=dict(os.environ, LC_ALL='C'), check=False)
            except subprocess.TimeoutExpired:
                return '%s did not finish within %d s. Fix: check the validator, or raise validate.timeout' % (
                    shown, validate['timeout'])
            except (IOError, OSError) as error:
                return 'cannot run %s: %s. Fix: install it on the controller or correct its path' % (shown, to_native(error))
            if completed.returncode != 0:
                output = completed.stdout.decode('utf-8', 'replace').strip()[-VALIDATION_OUTPUT_SHOWN:]
                return '%s refused the files (exit %d): %s. Fix: correct what it names in the variables the files ' \
                       'come from' % (shown, completed.returncode, output or 'no output')
            return None
        finally:
            shutil.rmtree(staging, ignore_errors=True)
