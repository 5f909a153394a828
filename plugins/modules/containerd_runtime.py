#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: containerd_runtime
short_description: Register the Ascend Docker Runtime (or another runc wrapper) in a containerd config
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Adds (or removes) the runtime O(name) in containerd's CRI plugin configuration and optionally makes
    it the default runtime, editing the TOML file in place.
  - The CRI plugin table follows the file's top-level C(version) - V(1) C(plugins.cri), V(2)
    C(plugins."io.containerd.grpc.v1.cri"), V(3) (containerd 2.x) C(plugins."io.containerd.cri.v1.runtime").
    A file without C(version) is read by containerd as version 1, so it is edited as version 1 (Huawei's
    installer writes the version 2 table there, which containerd ignores).
  - The runtime table C(<plugin>.containerd.runtimes.<name>) is a copy of the C(runc) runtime table, so
    C(runtime_type), C(options.SystemdCgroup) and the other settings follow the node's own runc; its
    C(options.BinaryName) is set to O(binary_name). Without a C(runc) table it gets
    C(runtime_type = "io.containerd.runc.v2") and C(options.SystemdCgroup = true), as Huawei's installer does.
    A runtime that already exists keeps its settings; only C(options.BinaryName) is corrected (and a missing
    C(runtime_type) added).
  - containerd reads runtime options case-insensitively (kubespray writes C(binaryName), C(systemdCgroup)); an
    option is set in the spelling the file has, so the result never holds two spellings of one option. A runtime
    table already holding two spellings of C(BinaryName) is refused.
  - A version 2 file that holds containerd 2.x tables (C(plugins."io.containerd.cri.v1.runtime")) gets the runtime
    there, where containerd 2.x reads it; one holding runtimes under both CRI tables is refused.
  - Everything the module does not own stays byte for byte as it was - comments, key order, blank lines,
    quoting, indentation. New tables are indented the way the file indents its tables.
  - What O(state=present) changed is recorded in a hidden file beside the config,
    C(.<file name>.npu_ascend.json) (for example C(/etc/containerd/.config.toml.npu_ascend.json)), mode
    0600. O(state=absent) uses it to undo exactly that - the previous C(default_runtime_name) comes back
    with its own spelling, tables the module created are pruned when empty, and a file the module created
    is deleted again - so present followed by absent restores the original bytes.
  - O(state=present) also leaves a stamp beside the file, C(.<file name>.npu_ascend.converged) (mode 0600),
    naming the SHA-1 of what it left in the file and a fingerprint of the options that decide it (and of the
    editor's source). A role can then tell from a probe of the file and the stamp (M(npu.ascend.ascend_facts)
    option O(npu.ascend.ascend_facts#module:files)) that the file is as this module would leave it, without running
    it; a file edited since no longer matches. Writing the stamp is not reported as a change. O(state=absent)
    deletes it.
  - A runtime table of the requested name that existed before the module's first change (a manual Huawei install
    leaves C(runtimes.ascend) and C(default_runtime_name = "ascend")) is taken over, not replaced - its previous
    values are recorded, even when present changes nothing, and O(state=absent) puts them back and keeps the
    table and the default naming it, byte for byte as they were.
  - Without a record, O(state=absent) does what Huawei's uninstall does (deletes the runtime table and resets a
    C(default_runtime_name) naming it to C(runc)) only for a table that holds nothing beyond what Huawei's
    installer writes - a copy of the C(runc) table with its own C(BinaryName). A table with settings of its own
    is kept with the default naming it, and a warning names it - nothing proves it was ours to delete. The
    C(runc) table itself is never deleted.
  - A file that is not valid TOML, has an unknown C(version), or holds a non-table where a table must be,
    is refused with the reason (for TOML errors the line and column) and left untouched.
  - A missing file is created from the output of the node's own C(containerd config default), then edited.
    With O(config_version) a missing file is instead created holding only C(version) and the runtime,
    which is what a drop-in file imported by the main config needs.
options:
  path:
    description:
      - The containerd config file to edit. A drop-in file (for example
        C(/etc/containerd/conf.d/ascend.toml)) works as well; its directory is created when missing.
    type: path
    default: /etc/containerd/config.toml
  name:
    description:
      - Name of the runtime in containerd's configuration (what pods select by RuntimeClass handler).
    type: str
    default: ascend
  binary_name:
    description:
      - Path of the runc-compatible binary containerd's runc shim runs, written to C(options.BinaryName).
    type: path
    default: /usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime
  default:
    description:
      - Make O(name) containerd's C(default_runtime_name), as Huawei's installer does, so that every pod
        gets the NPU devices its C(ASCEND_VISIBLE_DEVICES) asks for.
      - V(false) makes sure O(name) is not the default; when it is, the default recorded before this module
        changed it comes back, else C(runc).
    type: bool
    default: true
  config_version:
    description:
      - Config version (V(1), V(2), V(3) or V(4)) of a file this module creates. Given, a missing O(path) is
        created holding only C(version = <config_version>) and the runtime instead of the output of
        C(containerd config default); use it for drop-in files.
      - For an existing file it must equal the version containerd reads the file as, else the module fails
        rather than write tables containerd would ignore.
    type: int
    choices: [1, 2, 3, 4]
  template_config:
    description:
      - Another containerd config whose C(runc) runtime table a new runtime copies, instead of the C(runc) table
        of O(path). Give the main config here when O(path) is a drop-in file, so that the runtime keeps the
        node's C(SystemdCgroup) and other runc settings.
      - Must use the same config version as O(path). Without O(config_version), a missing O(path) is created as a
        drop-in file of the version of O(template_config).
    type: path
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.runtime_config
  - npu.ascend.runtime_config.runc_rewrite
requirements:
  - tomlkit (Python library on the managed node; Debian and Ubuntu package C(python3-tomlkit))
notes:
  - Supports check mode and diff mode. In check mode a missing file is still generated with
    C(containerd config default) (which only prints), so the diff shows the file that would be written.
  - The module never restarts containerd. RV(restart_needed) tells whether the running containerd must be
    restarted for the change to take effect.
  - containerd 1.x replaces a whole plugin table when it merges an imported file, so a drop-in that sets the
    CRI plugin hides the main config's CRI settings there; merge plugin tables key by key is containerd
    2.x behaviour. Check the merged result with C(containerd config dump).
  - A new file gets mode 0644 (as Debian's containerd package ships its config); an existing file keeps its
    mode and owner.
seealso:
  - module: npu.ascend.containerd_import
  - module: npu.ascend.docker_runtime
  - module: npu.ascend.ascend_runfile
attributes:
  check_mode:
    support: full
    details:
      - A missing config is still generated with C(containerd config default), which only prints, so that the
        plan and the diff show the file a real run would write.
  diff_mode:
    support: full
    details:
      - The config file's text before and after.
  idempotent:
    support: full
'''

EXAMPLES = r'''
- name: Register the Ascend Docker Runtime with containerd and make it the default
  npu.ascend.containerd_runtime:
    backup: true
  register: ascend_runtime

- name: Restart containerd when the config changed
  ansible.builtin.systemd_service:
    name: containerd
    state: restarted
  when: ascend_runtime.restart_needed

- name: Write a drop-in file for containerd 2.x instead of editing the main config
  npu.ascend.containerd_runtime:
    path: /etc/containerd/conf.d/ascend.toml
    config_version: 3
    template_config: /etc/containerd/config.toml

- name: Make the main config import the drop-in file
  npu.ascend.containerd_import:
    path: /etc/containerd/config.toml
    import: /etc/containerd/conf.d/ascend.toml

- name: Register the runtime without making it the default (pods select it by RuntimeClass)
  npu.ascend.containerd_runtime:
    default: false

- name: Undo the registration
  npu.ascend.containerd_runtime:
    state: absent

- name: Point the runc runtime itself at the wrapper (as old Huawei installers did), explicitly allowed
  npu.ascend.containerd_runtime:
    name: runc
    default: false
    allow_runc_rewrite: true
'''

RETURN = r'''
path:
  description: The file edited.
  returned: always
  type: str
  sample: /etc/containerd/config.toml
config_version:
  description: The config version containerd reads the file as; null when the file neither existed nor was created.
  returned: always
  type: int
  sample: 2
cri_plugin:
  description: Name of the plugin table the runtime lives in; null when config_version is.
  returned: always
  type: str
  sample: io.containerd.grpc.v1.cri
backup_file:
  description: The copy made before the change.
  returned: when O(backup=true) and an existing file was changed
  type: str
  sample: /etc/containerd/config.toml.12345.2025-01-01@10:00:00~
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

import hashlib
import inspect
import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.npu.ascend.plugins.module_utils.files import durable_file
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_files, config_stamp
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import containerd_config, containerd_layout, toml_editor, undo_record

NEW_FILE_MODE = '0644'


def _sha256(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _default_config(module):
    containerd = module.get_bin_path('containerd')
    if containerd is None:
        module.fail_json(msg='the config file does not exist and containerd is not installed to generate it '
                             '(install containerd first, or set config_version to write a minimal file)')
    rc, out, err = module.run_command([containerd, 'config', 'default'], environ_update={'LC_ALL': 'C'})
    if rc != 0:
        module.fail_json(msg='containerd config default failed: %s' % (err.strip() or out.strip()), rc=rc)
    return out


def _template_version(module, template_config):
    try:
        return containerd_layout.describe(config_files.read_config(module, template_config))[0]
    except containerd_config.ContainerdConfigError as error:
        module.fail_json(msg='template_config %s: %s' % (template_config, to_native(error)))


def _template(module, template_config, version):
    if not template_config:
        return None
    text = config_files.read_config(module, template_config)
    template_version, _plugin = containerd_layout.describe(text)
    if template_version != version:
        module.fail_json(msg='template_config %s is config version %d but %s is version %d; the runc table of one '
                             'cannot be copied into the other'
                             % (template_config, template_version, module.params['path'], version))
    return containerd_layout.template_runtime(text)


def _keep_takeover_record(module, path, state_file, params, exists, before, after, records, record):
    """Save the record of a runtime table taken over even when present changes no byte of the file.

    ``conclude`` saves records only with a change of the file; a manual install whose entry already
    reads as wanted would otherwise leave no record, and a later absent could not tell the operator's
    entry from ours.
    """
    if (params['state'] != 'present' or module.check_mode or not exists or after != before
            or not record.get('runtime_previous') or records.get(params['name']) == record):
        return
    records[params['name']] = record
    config_files.save_records(state_file, records, path)


# The editor whose source a stamp names; config_stamp.CONTAINERD_EDITOR lists the same files for the controller.
EDITOR_PARTS = (toml_editor, containerd_layout, undo_record, containerd_config)


def stamp_fingerprint(options):
    """The request a stamp names: the options that decide the file and the editor's source."""
    source = ''.join(inspect.getsource(part) for part in EDITOR_PARTS)
    return config_stamp.request_fingerprint(options, config_stamp.text_sha1(source), config_stamp.CONTAINERD_RUNTIME_OPTIONS)


def _restamp(module, after):
    """Outside check mode: the stamp names what present leaves in the file; absent takes it away.

    Called once the config is written: a crash before leaves the stamp of the file's earlier bytes,
    which vouches for nothing now. Not a change of the node (the config is what ``changed`` reports):
    a converged node from before the stamps gets one without a changed task.
    """
    path = config_stamp.stamp_path(module.params['path'])
    try:
        if module.params['state'] == 'absent' or after is None:
            if os.path.lexists(path):
                os.unlink(path)
                durable_file.fsync_directory(os.path.dirname(path))
            return
        wanted = config_stamp.stamp_bytes(config_stamp.text_sha1(after), stamp_fingerprint(module.params))
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, 'rb') as handle:
                if handle.read() == wanted:
                    return
        durable_file.replace_durably(path, wanted, mode=0o600)
    except (IOError, OSError) as error:
        # The config is already as the result says (a symlinked config's target is written, the stamp
        # goes beside the link, maybe in a read-only directory): a failure here must not hide that
        # change. A stamp that is missing or names other bytes vouches for nothing, so the next run
        # simply checks the config again.
        module.warn('cannot update %s, the stamp of %s: %s; the config itself is as this task reports (changed '
                    'or not), only the next run cannot skip checking it. Fix: run as root (become: true) or make '
                    'the directory of %s writable' % (path, module.params['path'], to_native(error), path))


def run(module):
    params = module.params
    path = config_files.config_target(module, params['path'])
    name = params['name']
    result = {
        'changed': False,
        'path': path,
        'config_version': None,
        'cri_plugin': None,
        'restart_needed': False,
        'state_file': undo_record.state_file_path(path),
    }
    if os.path.isdir(path):
        module.fail_json(msg='containerd config %s is a directory; nothing was changed. Fix: set path to the '
                             'config file (for example %s/config.toml)' % (path, path.rstrip('/')), **result)

    exists = os.path.exists(path)
    if not exists and params['state'] == 'absent':
        if not module.check_mode:
            _restamp(module, None)
        module.exit_json(**result)
    if exists:
        before = config_files.read_config(module, path)
        base = before
    elif params['config_version'] or params['template_config']:
        version = params['config_version'] or _template_version(module, params['template_config'])
        before, base = '', containerd_layout.minimal_config(version)
    else:
        before, base = '', _default_config(module)

    records = config_files.load_records(module, result['state_file'], path)
    config_files.refuse_runc(module, name, records)
    record = records.get(name)
    try:
        version, plugin = containerd_layout.describe(base)
        if exists and params['config_version'] and version != params['config_version']:
            module.fail_json(msg='%s is read by containerd as config version %d, not %d; tables written for '
                                 'version %d would be ignored' % (path, version, params['config_version'],
                                                                  params['config_version']), **result)
        if params['state'] == 'present':
            template = _template(module, params['template_config'], version)
            after, record, info = containerd_config.add_runtime(base, name, params['binary_name'],
                                                                params['default'], record, template)
            if not exists:
                record.setdefault('created_file_sha256', _sha256(base))
        else:
            after, info = containerd_config.remove_runtime(base, name, record)
            if info.pop('runtime_kept'):
                module.warn('%s: kept runtime %s (and a default naming it): no record says this module created '
                            'it, and it holds settings beyond a copy of runc. Delete it by hand if it is not '
                            'wanted' % (path, name))
            if info.pop('runtime_edited'):
                module.warn('%s: kept runtime %s: someone changed its table since this module wrote it (its '
                            'settings are theirs now); the rest of the registration was undone. Delete the table '
                            'by hand if it is not wanted' % (path, name))
            # Whichever of this module's runtimes goes last puts back what the file held before any of them.
            records.update(undo_record.hand_over(name, record, dict((key, value) for key, value in records.items()
                                                                    if key != name)))
    except containerd_config.ContainerdConfigError as error:
        module.fail_json(msg='containerd config %s: %s; nothing was changed. Fix: correct the file (containerd '
                             'cannot load it either: `containerd --config %s config dump` shows why) or restore it '
                             'from its backup, then run again' % (path, to_native(error), path), **result)
    result.update(info)
    _keep_takeover_record(module, path, result['state_file'], params, exists, before, after, records, record)

    # A file this module created goes again once it is back to what it was, or (a drop-in file) holds
    # nothing but its version any more.
    created = record.get('created_file_sha256') if record is not None else None
    remove_file = (params['state'] == 'absent' and created is not None
                   and (created == _sha256(after) or containerd_layout.holds_only_version(after)))
    if remove_file:
        after = ''
    config_files.conclude(module, result, before, after, exists, remove_file, records, record,
                          NEW_FILE_MODE,
                          after_write=lambda: _restamp(module, after if params['state'] == 'present' else None),
                          config_kind='toml')


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default='/etc/containerd/config.toml'),
            name=dict(type='str', default='ascend'),
            binary_name=dict(type='path', default='/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime'),
            default=dict(type='bool', default=True),
            config_version=dict(type='int', choices=[1, 2, 3, 4]),
            template_config=dict(type='path'),
            **dict(config_files.shared_argument_spec(), **config_files.runc_rewrite_argument_spec())
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
