#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: docker_runtime
short_description: Register the Ascend Docker Runtime (or another OCI runtime) in Docker's daemon.json
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Adds (or removes) the member C(runtimes.<name>) of Docker's C(daemon.json) - an object with C(path) set to
    O(runtime_path) and an empty C(runtimeArgs) list - and optionally makes it the C(default-runtime), as
    Huawei's installer does.
  - Every other member keeps its value, its place and its bytes - the file is edited as text at the exact
    places this module owns, after the whole file has been parsed. New members follow the file's own
    indentation (four spaces when the file shows none) and key separator. An existing runtime O(name)
    keeps its other members (for example C(runtimeArgs)); only its C(path) is corrected.
  - The file's mode and owner are kept. A file this module creates gets mode 0600 and the user running the
    module, which is what Huawei's installer leaves behind.
  - What O(state=present) changed is recorded in a hidden file beside the config,
    C(.<file name>.npu_ascend.json) (for example C(/etc/docker/.daemon.json.npu_ascend.json)), mode 0600.
    O(state=absent) uses it to undo exactly that - the previous C(default-runtime) comes back in its own
    spelling, a C(runtimes) object the module created goes away, a file it created is deleted - so present
    followed by absent restores the original bytes. Without that record absent does what Huawei's uninstall
    does - removes C(runtimes.<name>) and a C(default-runtime) naming it.
  - An entry O(name) that was there before the module first changed the file (a manual Huawei install) is taken
    over - its text is recorded, and O(state=absent) puts it back byte for byte, with the C(default-runtime) it had.
  - A file that is not valid JSON (also C(NaN) or C(Infinity), which Python would read but dockerd does not,
    and nesting deeper than 200 levels), or whose C(runtimes) is not an object, is refused with the reason (for
    JSON errors the line and column) and left untouched. An empty file reads as an empty object.
options:
  path:
    description:
      - Docker's daemon configuration file.
    type: path
    default: /etc/docker/daemon.json
  name:
    description:
      - Name of the runtime (what C(docker run --runtime) selects).
    type: str
    default: ascend
  runtime_path:
    description:
      - Path of the runtime binary, the C(path) of the runtime entry.
    type: path
    default: /usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime
  default:
    description:
      - Make O(name) Docker's C(default-runtime), as Huawei's installer does.
      - V(false) makes sure O(name) is not the default; when it is, the value recorded before this module
        changed it comes back, else the member is removed (Docker then uses C(runc)).
    type: bool
    default: true
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.runtime_config
  - npu.ascend.runtime_config.runc_rewrite
notes:
  - Supports check mode and diff mode.
  - The module never restarts Docker. RV(restart_needed) tells whether the running daemon must be restarted
    (or reloaded) for the change to take effect.
seealso:
  - module: npu.ascend.containerd_runtime
  - module: npu.ascend.ascend_runfile
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The text of C(daemon.json) before and after.
  idempotent:
    support: full
'''

EXAMPLES = r'''
- name: Register the Ascend Docker Runtime with Docker and make it the default
  npu.ascend.docker_runtime:
    backup: true
  register: ascend_docker

- name: Restart Docker when daemon.json changed
  ansible.builtin.systemd_service:
    name: docker
    state: restarted
  when: ascend_docker.restart_needed

- name: Offer the runtime without making it the default
  npu.ascend.docker_runtime:
    default: false

- name: Undo the registration
  npu.ascend.docker_runtime:
    state: absent
'''

RETURN = r'''
path:
  description: The file edited (the target when O(path) is a symlink).
  returned: always
  type: str
  sample: /etc/docker/daemon.json
backup_file:
  description: The copy made before the change.
  returned: when O(backup=true) and an existing file was changed
  type: str
  sample: /etc/docker/daemon.json.12345.2025-01-01@10:00:00~
removed_backups:
  description: The copies made by O(backup=true) that O(state=absent) deleted (in check mode, would delete).
  returned: when O(state=absent)
  type: list
  elements: str
  sample: [/etc/docker/daemon.json.12345.2025-01-01@10:00:00~]
kept_backups:
  description: The copies listed in the record that O(state=absent) left in place.
  returned: when O(state=absent)
  type: list
  elements: str
  sample: [/etc/docker/daemon.json.12345.2025-01-01@10:00:00~]
before_sha256:
  description: SHA-256 of the file before this run changed it; null when it did not exist.
  returned: always
  type: str
restart_needed:
  description:
    - Whether Docker must be restarted for the change to take effect, that is whether the file changed.
    - C(changed) is also true when only the record was dropped or backups were deleted.
  returned: always
  type: bool
state_file:
  description: The file holding what O(state=present) changed, used by O(state=absent).
  returned: always
  type: str
  sample: /etc/docker/.daemon.json.npu_ascend.json
'''

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files, docker_config

NEW_FILE_MODE = '0600'


def run(module):
    params = module.params
    path = config_files.config_target(module, params['path'])
    name = params['name']
    result = {
        'changed': False,
        'path': path,
        'restart_needed': False,
        'state_file': docker_config.state_file_path(path),
    }
    exists = os.path.exists(path)
    if not exists and params['state'] == 'absent':
        module.exit_json(**result)
    before = config_files.read_config(module, path) if exists else ''

    records = config_files.load_records(module, result['state_file'], path)
    config_files.refuse_runc(module, name, records)
    record = records.get(name)
    try:
        if params['state'] == 'present':
            after, record = docker_config.add_runtime(before, name, params['runtime_path'], params['default'], record)
            if not exists:
                record.setdefault('created_file', True)
        else:
            after, info = docker_config.undo_runtime(before, name, record)
            if info['runtime_kept']:
                module.warn('%s: kept runtime %s: %s, so its settings are not this module\'s to delete; the rest '
                            'of the registration was undone. Delete the entry by hand if it is not wanted'
                            % (path, name, 'someone changed its entry since this module wrote it' if record else
                               'no record says this module created it and it holds members beyond path and runtimeArgs'))
            # Whichever of this module's runtimes goes last puts back what the file held before any of them.
            records.update(docker_config.hand_over(name, record, dict((key, value) for key, value in records.items()
                                                                      if key != name)))
    except docker_config.DockerConfigError as error:
        module.fail_json(msg='Docker config %s: %s; nothing was changed. Fix: correct the file (dockerd cannot '
                             'start with it either: `dockerd --validate --config-file %s` shows why) or restore it '
                             'from its backup, then run again' % (path, to_native(error), path), **result)

    # A file this module created and that is back to what it started from ('') goes away again.
    remove_file = params['state'] == 'absent' and record is not None and record.get('created_file') and after == ''
    config_files.conclude(module, result, before, after, exists, remove_file, records, record,
                          NEW_FILE_MODE, config_kind='json')


def main():
    argument_spec = dict(
        path=dict(type='path', default='/etc/docker/daemon.json'),
        name=dict(type='str', default='ascend'),
        runtime_path=dict(type='path', default='/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'),
        default=dict(type='bool', default=True),
    )
    argument_spec.update(config_files.shared_argument_spec())
    argument_spec.update(config_files.runc_rewrite_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    with config_files.locked(module):
        run(module)


if __name__ == '__main__':
    main()
