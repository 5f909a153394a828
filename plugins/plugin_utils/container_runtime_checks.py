# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the container_runtime role can register the Ascend Docker Runtime on a node, and what containerd's
effective configuration says of a runtime; kept free of Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def engine_problem(engines, known, drop_in_mergeable, containerd_release, containerd_config, host):
    """Why the role stops before registering the runtime ('' when it goes on).

    ``engines`` are the engines to register with (the inventory's, else those the probe found), ``known`` the
    engines the role knows. ``drop_in_mergeable`` is false when a containerd drop-in is asked for but containerd
    1.x would replace the whole CRI plugin table with it (``containerd_release`` is what ``containerd --version``
    printed, ``containerd_config`` the main config the role would edit in place instead).
    """
    engines, known = list(engines or []), list(known or [])
    if not drop_in_mergeable:
        return ("%s: container runtime: containerd_drop_in needs containerd 2.x, the node runs %s, which replaces the "
                "whole CRI plugin table with an imported one and would drop the main config's CRI settings. Fix: set "
                "container_runtime_containerd_drop_in to false (the role then edits %s in place, keeping everything "
                "else), or upgrade containerd to 2.x."
                % (host, containerd_release or 'containerd of an unknown release', containerd_config))
    if not engines or [engine for engine in engines if engine not in known]:
        return ('%s: container runtime: no engine to register the Ascend Docker Runtime with (found %s; known: %s). '
                'Fix: install containerd or Docker first, or set container_runtime_engines to engines the node runs.'
                % (host, ', '.join(engines) or 'neither containerd nor docker', ', '.join(known)))
    return ''


def effective_runtime(config_text, name='ascend'):
    """Runtime ``name`` as a containerd config (typically ``containerd config dump``) has it: the config and CRI
    plugin versions, the default runtime, the runtime's table, its BinaryName and the imports. ValueError when the
    text is not a containerd config this collection knows."""
    # Imported on use, not at the top: ansible-core imports every filter file of the collection in each worker
    # process at the first use of any of them (docs/development.md). Only the version table: the node-side
    # editing needs tomlkit, reading here needs only tomllib.
    import tomllib
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config.containerd_layout import (
        CRI_PLUGIN_BY_VERSION, VERSION_WHEN_MISSING, option_value)
    if not isinstance(config_text, str):
        raise ValueError('expected the text of a containerd config, got %s' % type(config_text).__name__)
    try:
        document = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError('not valid TOML: %s' % error)
    version = document.get('version', VERSION_WHEN_MISSING)
    if version not in CRI_PLUGIN_BY_VERSION:
        raise ValueError('unknown containerd config version %r' % (version,))
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
