# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.containerd_runtime_stamped``; documentation in containerd_runtime_stamped.yml."""

from __future__ import annotations

import os

from ansible.errors import AnsibleFilterError


def _editor_sha1():
    # The files themselves, not an import of them: the editor imports tomlkit, which the controller need not have.
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
    source = ''
    for name in config_stamp.CONTAINERD_EDITOR:
        with open(os.path.join(os.path.dirname(config_stamp.__file__), name), 'rb') as handle:
            source += handle.read().decode('utf-8')
    return config_stamp.text_sha1(source)


def containerd_runtime_stamped(file_states, path, **options):
    """Whether the probe's ``files`` show ``path`` exactly as containerd_runtime left it for ``options``."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
    if not isinstance(file_states, dict):
        raise AnsibleFilterError('containerd_runtime_stamped: expected the probe\'s files (a dict), got %s'
                                 % type(file_states).__name__)
    options['path'] = path
    missing = [name for name in config_stamp.CONTAINERD_RUNTIME_OPTIONS if name not in options]
    unknown = sorted(set(options) - set(config_stamp.CONTAINERD_RUNTIME_OPTIONS))
    problems = []
    if missing:
        problems.append('missing options: ' + ', '.join(missing))
    if unknown:
        problems.append('unknown options: ' + ', '.join(unknown))
    if problems:
        raise AnsibleFilterError('containerd_runtime_stamped: %s' % '; '.join(problems))
    fingerprint = config_stamp.request_fingerprint(options, _editor_sha1(), config_stamp.CONTAINERD_RUNTIME_OPTIONS)
    return config_stamp.vouches(file_states.get(path), fingerprint)


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {'containerd_runtime_stamped': containerd_runtime_stamped}
