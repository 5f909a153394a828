#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: containerd_import
short_description: Make a containerd config import a drop-in file
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Adds (or removes) one entry of the top-level C(imports) array of a containerd config, so that the config
    loads a drop-in file of our own (written with M(npu.ascend.containerd_runtime)) while another tool
    (kubespray, a cloud image) keeps owning the main file.
  - An existing C(imports) array gets the entry appended, its formatting kept; otherwise a new array is added
    among the top-level keys. Everything else stays byte for byte as it was.
  - What O(state=present) changed is recorded beside the config, as M(npu.ascend.containerd_runtime) does, so
    O(state=absent) restores the original bytes (an array it created goes again).
  - containerd reads C(imports) from config version 2 on; a version 1 file (or one without C(version)) is
    refused. containerd 1.x replaces a whole plugin table with an imported one, so a drop-in that registers a
    runtime hides the main config's CRI settings there; use drop-in files with containerd 2.x, which merges
    plugin tables key by key.
options:
  path:
    description: The main containerd config.
    type: path
    default: /etc/containerd/config.toml
  import:
    description:
      - The file to import, written as given (containerd resolves a relative path from the directory of O(path)).
    type: path
    required: true
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.runtime_config
requirements:
  - tomlkit (Python library on the managed node; Debian and Ubuntu package C(python3-tomlkit))
notes:
  - Supports check mode and diff mode. The module never restarts containerd.
seealso:
  - module: npu.ascend.containerd_runtime
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The config file's text before and after.
  idempotent:
    support: full
'''

EXAMPLES = r'''
- name: Register the Ascend runtime in a drop-in file
  npu.ascend.containerd_runtime:
    path: /etc/containerd/conf.d/99-npu-ascend.toml
    config_version: 3
    template_config: /etc/containerd/config.toml

- name: Import the drop-in file from the main config
  npu.ascend.containerd_import:
    path: /etc/containerd/config.toml
    import: /etc/containerd/conf.d/99-npu-ascend.toml
    backup: true
'''

RETURN = r'''
path:
  description: The main config.
  returned: always
  type: str
  sample: /etc/containerd/config.toml
imports:
  description: The C(imports) of the config after the change (in check mode, as it would be).
  returned: always
  type: list
  elements: str
  sample: [/etc/containerd/conf.d/99-npu-ascend.toml]
backup_file:
  description: The copy made before the change.
  returned: when O(backup=true) and the file was changed
  type: str
removed_backups:
  description: The copies made by O(backup=true) that O(state=absent) deleted (in check mode, would delete).
  returned: when O(state=absent)
  type: list
  elements: str
  sample: [/etc/containerd/config.toml.12345.2025-01-01@10:00:00~]
kept_backups:
  description: The copies listed in the record that O(state=absent) left in place.
  returned: when O(state=absent)
  type: list
  elements: str
before_sha256:
  description: SHA-256 of the file before this run changed it; null when it did not exist.
  returned: always
  type: str
restart_needed:
  description:
    - Whether containerd must be restarted for the change to take effect, that is whether the file changed.
    - C(changed) is also true when only the record was dropped or backups were deleted.
  returned: always
  type: bool
state_file:
  description: The file holding what O(state=present) changed, used by O(state=absent).
  returned: always
  type: str
  sample: /etc/containerd/.config.toml.npu_ascend.json
'''

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, toml_editor, undo_record

# Records of imports share the record file with those of runtimes; the prefix keeps them apart.
RECORD_KEY_PREFIX = 'import:'


def run(module):
    params = module.params
    path = config_files.config_target(module, params['path'])
    key = RECORD_KEY_PREFIX + params['import']
    result = {'changed': False, 'path': path, 'imports': [], 'restart_needed': False,
              'state_file': undo_record.state_file_path(path)}
    if os.path.isdir(path):
        module.fail_json(msg='containerd config %s is a directory; nothing was changed. Fix: set path to the main '
                             'config file (for example %s/config.toml)' % (path, path.rstrip('/')), **result)
    if params['state'] == 'present' and os.path.isdir(params['import']):
        module.fail_json(msg='containerd config %s: the import %s is a directory, which containerd cannot load; '
                             'nothing was changed. Fix: import the drop-in file itself (or a glob such as %s/*.toml)'
                             % (path, params['import'], params['import'].rstrip('/')), **result)
    if not os.path.lexists(path):
        if params['state'] == 'absent':
            module.exit_json(**result)
        module.fail_json(msg='%s does not exist; the main containerd config must exist before it can import a '
                             'drop-in file (write it with `containerd config default`)' % path, **result)
    before = config_files.read_config(module, path)
    records = config_files.load_records(module, result['state_file'], path)
    record = records.get(key)
    try:
        if params['state'] == 'present':
            after, new_record = containerd_config.add_import(before, params['import'])
            # A second run finds the entry there already; the first run's record stays the one that counts.
            record = record or new_record
        else:
            after = containerd_config.remove_import(before, params['import'], record)
        result['imports'] = containerd_layout.imports_of(after)
    except containerd_config.ContainerdConfigError as error:
        module.fail_json(msg='containerd config %s: %s; nothing was changed. Fix: correct the file (containerd '
                             'cannot load it either: `containerd --config %s config dump` shows why) or restore it '
                             'from its backup, then run again' % (path, to_native(error), path), **result)
    config_files.conclude(module, result, before, after, True, False, records, record, None, key=key,
                          config_kind='toml')


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/etc/containerd/config.toml'),
            **dict(config_files.shared_argument_spec(), **{'import': dict(type='path', required=True)})
        ),
        supports_check_mode=True,
    )
    if toml_editor.TOMLKIT_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib('tomlkit'), exception=toml_editor.TOMLKIT_IMPORT_ERROR)
    try:
        with config_files.locked(module):
            run(module)
    except toml_editor.TomlkitMissingError as error:
        module.fail_json(msg=missing_required_lib('tomlkit'), exception=to_native(error))


if __name__ == '__main__':
    main()
