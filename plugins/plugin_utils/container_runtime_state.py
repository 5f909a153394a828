# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the container_runtime role: everything the role decides about one node, from its probe
(``ansible_facts.ascend``), its wanted stack and the role's options. The role's tasks read the fields and act;
``roles/container_runtime/vars/main.yml`` keeps only names and constants. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os
from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.plugin_utils import container_runtime_checks, planner
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

# The engines the role registers the runtime with.
KNOWN_ENGINES = ('containerd', 'docker')
# Where Huawei's installer puts the runtime's binary under the install path.
BINARY = 'Ascend-Docker-Runtime/ascend-docker-runtime'


# Once per process: the role's state, computed at each reference to it, would otherwise read the files each time.
@functools.lru_cache(maxsize=1)
def editor_sha1():
    """The sha1 of the containerd editor's sources, which containerd_runtime's stamp records. The files
    themselves, not an import of them: the editor imports tomlkit, which the controller need not have."""
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
    source = ''
    for name in config_stamp.CONTAINERD_EDITOR:
        with open(os.path.join(os.path.dirname(config_stamp.__file__), name), 'rb') as handle:
            source += handle.read().decode('utf-8')
    return config_stamp.text_sha1(source)


def containerd_stamped(file_states, options):
    """Whether the probe's ``files`` show ``options['path']`` exactly as containerd_runtime left it for
    ``options`` (config_stamp.CONTAINERD_RUNTIME_OPTIONS, each given). ValueError names what is missing or
    unknown."""
    from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
    if not isinstance(file_states, Mapping):
        raise ValueError("expected the probe's files (a dict), got %s" % type(file_states).__name__)
    missing = [name for name in config_stamp.CONTAINERD_RUNTIME_OPTIONS if name not in options]
    unknown = sorted(set(options) - set(config_stamp.CONTAINERD_RUNTIME_OPTIONS))
    problems = []
    if missing:
        problems.append('missing options: ' + ', '.join(missing))
    if unknown:
        problems.append('unknown options: ' + ', '.join(unknown))
    if problems:
        raise ValueError('; '.join(problems))
    fingerprint = config_stamp.request_fingerprint(dict(options), editor_sha1(), config_stamp.CONTAINERD_RUNTIME_OPTIONS)
    return config_stamp.vouches(file_states.get(options['path']), fingerprint)


def container_runtime_state(probe, wanted, options):
    """Everything the container_runtime role decides about a node.

    ``probe``: ``ansible_facts.ascend`` (None before any probe); ``wanted``: component to version
    (``ascend_wanted_stack``); ``options``: ``host``, ``install_path``, ``name`` (the runtime's name in the
    engines), ``default`` (make it containerd's default runtime), ``engines`` (the inventory's, empty for those
    the probe found), ``drop_in`` and ``drop_in_path``, ``config`` (containerd's main config), ``allow_downgrade``
    and ``installer_config`` (engine to the scratch file Huawei's installer is pointed at).

    Returns ``binary`` (the runtime's path), ``containerd_target`` (the file the registration goes in),
    ``engines``, ``kubelet`` (the kubelet runs), ``drop_in_mergeable``, ``engine_problem`` ('' when the role can
    go on), ``scene`` and ``installer_args`` (Huawei's installer's options), ``probe_current`` (the probe read
    this install path), ``tomlkit_importable``, ``containerd_stamped``, ``plan`` (the node's plan,
    ``planner.plan_node``), ``install``, ``install_needed``, ``refused``, ``refusal`` ('' when nothing is
    refused), ``packages`` (the packages role's ``packages_components``) and ``converged`` (nothing for the role
    to do: the probe read this install path and the config, containerd alone edited in place, tomlkit
    importable, the runtime at the wanted version and the config stamped as wanted; Docker is asked at every run
    whether it runs with its registration). TypeError or ValueError names a wrong input."""
    if probe is not None and not isinstance(probe, Mapping):
        raise TypeError('the probe must be what npu.ascend.ascend_facts returned (a dict), got %s'
                        % type(probe).__name__)
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    install_path = options.get('install_path') or '/usr/local/Ascend'
    drop_in = bool(options.get('drop_in'))
    plan = planner.plan_node(wanted, probe, allow_downgrade={'container_runtime': bool(options.get('allow_downgrade'))})
    part = plan['roles']['container_runtime']
    probe = _mapping(probe)
    binary = '%s/%s' % (install_path, BINARY)
    containerd_target = options.get('drop_in_path') if drop_in else options.get('config')
    engines = list(options.get('engines') or probe.get('engines_present') or [])
    containerd = _mapping(probe.get('containerd'))
    drop_in_mergeable = 'containerd' not in engines or not drop_in or int(containerd.get('major') or 0) >= 2
    scene = 'docker' if 'docker' in engines else 'containerd'
    installer_config = _mapping(options.get('installer_config'))
    probe_current = planner.probe_is_current(probe, install_path, False)
    tomlkit_importable = bool(_mapping(probe.get('python_libraries')).get('tomlkit'))
    stamped = containerd_stamped(_mapping(probe.get('files')), {
        'path': containerd_target, 'name': options.get('name'), 'binary_name': binary,
        'default': bool(options.get('default')), 'config_version': None, 'allow_runc_rewrite': False})
    install = list(part['install'])
    refused = list(part['refused'])
    return {
        'binary': binary,
        'containerd_target': containerd_target,
        'engines': engines,
        'kubelet': _mapping(_mapping(probe.get('services')).get('kubelet')).get('active_state') == 'active',
        'drop_in_mergeable': drop_in_mergeable,
        'engine_problem': container_runtime_checks.engine_problem(
            engines, KNOWN_ENGINES, drop_in_mergeable, containerd.get('output') or '', options.get('config'), host),
        'scene': scene,
        'installer_args': ['--install-scene=%s' % scene, '--config-file-path=%s' % installer_config.get(scene)],
        'probe_current': probe_current,
        'tomlkit_importable': tomlkit_importable,
        'containerd_stamped': stamped,
        'plan': plan,
        'install': install,
        'install_needed': len(install) > 0,
        'refused': refused,
        'refusal': planner.refusal_message(plan, 'container_runtime', host),
        'packages': planner.packages_to_stage(plan, role='container_runtime'),
        'converged': (probe_current and engines == ['containerd'] and not drop_in and tomlkit_importable
                      and not install and not refused and stamped),
    }
