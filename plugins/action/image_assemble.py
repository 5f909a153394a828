# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of npu.ascend.image_assemble: a container image archive assembled on the controller from
one of Huawei's component zips and a base image archive (plugins/plugin_utils/image_assembly.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file
from ansible_collections.npu.ascend.plugins.plugin_utils import image_assembly

ARGUMENT_SPEC = dict(
    package=dict(type='path', required=True),
    base=dict(type='path', required=True),
    image=dict(type='str', required=True),
    arch=dict(type='str', required=True, choices=sorted(image_assembly.OCI_ARCHITECTURES)),
    dest=dict(type='path', required=True),
    dockerfile=dict(type='str', default='Dockerfile'),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        what = 'image_assemble: %s from %s on %s' % (args['image'], args['package'], args['base'])
        try:
            with open(args['package'], 'rb') as package_stream, open(args['base'], 'rb') as base_stream:
                package = image_assembly.open_package(package_stream)
                base = image_assembly.open_base(base_stream)
                plan = image_assembly.plan_archive(package, base, args['image'], args['arch'],
                                                   os.path.basename(args['package']), args['dockerfile'])
                existing = None
                if os.path.isfile(args['dest']) and not os.path.islink(args['dest']):
                    with open(args['dest'], 'rb') as current:
                        existing = image_assembly.archive_manifest(current)
                changed = existing != plan['manifest']
                if changed and not self._task.check_mode:
                    directory = os.path.dirname(args['dest'])
                    durable_file.make_directories(directory, 0o700, directory)
                    with durable_file.writing(args['dest'], mode=0o600, root=directory, keep_mode=False) as stream:
                        image_assembly.write_archive(plan, base, stream)
        except image_assembly.AssemblyError as error:
            return dict(result, failed=True, msg='%s: %s. Fix: give the component zip as Huawei ships it and a '
                                                 '`docker save` (or OCI layout) archive of the one image its '
                                                 'Dockerfile names in FROM, for this architecture'
                                                 % (what, to_native(error)))
        except durable_file.UnsafeDestination as error:
            return dict(result, failed=True, msg='%s: %s' % (what, to_native(error)))
        except (IOError, OSError) as error:
            return dict(result, failed=True, msg='%s: %s. Fix: check that both files are readable and that the '
                                                 'controller user may write %s' % (what, to_native(error), args['dest']))
        result.update(changed=changed, dest=args['dest'], image=args['image'], base_image=plan['from'],
                      files=plan['files'], run_lines_left_out=plan['skipped'])
        return result
