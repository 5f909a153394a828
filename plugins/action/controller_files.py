# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of npu.ascend.controller_files: writes a set of text files into a directory on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.npu.ascend.plugins.module_utils import durable_file
from ansible_collections.npu.ascend.plugins.plugin_utils import controller_files

ARGUMENT_SPEC = dict(
    dir=dict(type='path', required=True),
    files=dict(type='dict', required=True),
    mode=dict(type='str', default='0644'),
    directory_mode=dict(type='str', default='0755'),
)


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
        except (IOError, OSError) as error:
            return dict(result, failed=True, msg='controller_files: cannot read %s: %s. Fix: give dir a directory the '
                                                 'controller user may read and write' % (directory, to_native(error)))
        if not self._task.check_mode:
            try:
                for change in changes:
                    parent = os.path.dirname(change['path'])
                    if not os.path.isdir(parent):
                        os.makedirs(parent, mode=directory_mode)
                    if change['content_changed']:
                        durable_file.replace_durably(change['path'], change['after'], mode=mode)
                    else:
                        os.chmod(change['path'], mode)
            except (IOError, OSError) as error:
                return dict(result, failed=True, msg='controller_files: cannot write in %s: %s. Fix: give dir a '
                                                     'directory the controller user may write'
                                                     % (directory, to_native(error)))
        result.update(changed=bool(changes), written=[change['name'] for change in changes])
        if self._task.diff:
            result['diff'] = [
                {'before_header': change['path'], 'after_header': change['path'],
                 'before': (change['before'] or b'').decode('utf-8', 'replace'),
                 'after': change['after'].decode('utf-8')}
                for change in changes if change['content_changed']]
        return result
