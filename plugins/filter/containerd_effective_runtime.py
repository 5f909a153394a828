# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.containerd_effective_runtime``; documentation in containerd_effective_runtime.yml."""

from __future__ import annotations

import tomllib

from ansible.errors import AnsibleFilterError

# Only the version table: the node-side editing needs tomlkit, reading here needs only tomllib.


def containerd_effective_runtime(config_text, name='ascend'):
    """Read runtime ``name`` out of a containerd config, typically the output of ``containerd config dump``."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config.containerd_layout import CRI_PLUGIN_BY_VERSION, VERSION_WHEN_MISSING, option_value
    if not isinstance(config_text, str):
        raise AnsibleFilterError('containerd_effective_runtime: expected the text of a containerd config, got %s'
                                 % type(config_text).__name__)
    try:
        document = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError as error:
        raise AnsibleFilterError('containerd_effective_runtime: not valid TOML: %s' % error)
    version = document.get('version', VERSION_WHEN_MISSING)
    if version not in CRI_PLUGIN_BY_VERSION:
        raise AnsibleFilterError('containerd_effective_runtime: unknown containerd config version %r' % (version,))
    plugin = CRI_PLUGIN_BY_VERSION[version]
    containerd = document.get('plugins', {}).get(plugin, {}).get('containerd', {})
    runtime = containerd.get('runtimes', {}).get(name)
    return {
        'config_version': version,
        'cri_plugin': plugin,
        'default_runtime_name': containerd.get('default_runtime_name'),
        'runtime': runtime,
        # containerd matches option keys case-insensitively (kubespray writes binaryName).
        'binary_name': option_value((runtime or {}).get('options', {}), 'BinaryName'),
        'imports': document.get('imports', []),
    }


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {'containerd_effective_runtime': containerd_effective_runtime}
