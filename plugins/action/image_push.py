# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of npu.ascend.image_push: one image of an archive on the controller pushed to a registry,
only what it lacks (plugins/plugin_utils/registry_push.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.npu.ascend.plugins.plugin_utils import image_delivery, registry_push

ARGUMENT_SPEC = dict(
    archive=dict(type='path', required=True),
    image=dict(type='str', required=True),
    registry=dict(type='str', required=True),
    ca_file=dict(type='path', default=''),
    username=dict(type='str', default=''),
    password=dict(type='str', default='', no_log=True),
    insecure=dict(type='bool', default=False),
    timeout=dict(type='float', default=60.0),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            if args['timeout'] <= 0:
                raise registry_push.RegistryError('timeout must be more than 0 seconds, got %s' % args['timeout'])
            registry = registry_push.Registry(args['registry'], ca_file=args['ca_file'], username=args['username'],
                                              password=args['password'], insecure=args['insecure'],
                                              timeout=args['timeout'])
            pushed = registry_push.push(args['archive'], args['image'], registry, check_mode=self._task.check_mode)
        except (registry_push.RegistryError, image_delivery.ImageReferenceError) as error:
            return dict(result, failed=True, msg='image_push: %s' % to_native(error), image=args['image'])
        result.update(changed=pushed['changed'], reference=pushed['reference'], digest=pushed['digest'],
                      uploaded=pushed['uploaded'], image=args['image'])
        if args['insecure']:
            result['warnings'] = ['image_push: registry %s is used with images_registry_insecure=true: its identity '
                                  'is not verified' % registry.name]
        return result
