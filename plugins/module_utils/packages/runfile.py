# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to do with a Huawei ``.run`` package, and the argv that does it; kept free of Ansible.

* the components and the one vocabulary of actions the planner, preflight and
  ``ascend_runfile`` share;
* what to do with a package given what is installed (``plan_action``);
* the exact argv Huawei's own deployer uses for each component and action.

Where each component records its installed version is read by ``install_state``, what an
installer printed by ``installer_output``, the pending reboot by ``reboot_marker``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import compare_versions

DEFAULT_INSTALL_PATH = '/usr/local/Ascend'

# Components ascend_runfile can manage (each has a version file in the contract table): the component
# catalogue's; each is its own key in the ``installed`` fact.
MANAGED_COMPONENTS = component_catalogue.managed_components()
HDK_COMPONENTS = ('driver', 'firmware')
CANN_COMPONENTS = ('toolkit', 'kernels', 'ops', 'nnal')
# Kernels and ops packages offer --install but no --upgrade (CANN installation guide; docs/huawei-sources.md).
INSTALL_ONLY_COMPONENTS = ('kernels', 'ops')
# The only first-release layout change: CANN >= 8.5.0 installs under <ip>/cann-<ver>.
CANN_LAYOUT_CHANGE = '8.5.0'

# One vocabulary for the planner, preflight's plan and ascend_runfile: install, upgrade or
# downgrade (both through Huawei's --upgrade path), keep (nothing to do), uninstall, refuse.
ACTIONS = ('install', 'upgrade', 'downgrade', 'keep', 'uninstall', 'refuse')
# The actions that run an installer over the package.
INSTALLING_ACTIONS = ('install', 'upgrade', 'downgrade')


def operator_kernels_component(cann_version):
    """The package carrying a CANN release's operator kernels: ``ops`` from CANN_LAYOUT_CHANGE on,
    ``kernels`` before it. ValueError names a text that is not a version."""
    return 'ops' if compare_versions(str(cann_version), CANN_LAYOUT_CHANGE) >= 0 else 'kernels'


def toolkit_set_env(install_path, cann_version):
    """Where a CANN release's toolkit puts its environment script: ``<ip>/cann/set_env.sh`` from
    CANN_LAYOUT_CHANGE on, ``<ip>/ascend-toolkit/set_env.sh`` before it (install_state reads the same
    two layouts on a node)."""
    layout = 'cann' if compare_versions(str(cann_version), CANN_LAYOUT_CHANGE) >= 0 else 'ascend-toolkit'
    return '%s/%s/set_env.sh' % (str(install_path).rstrip('/'), layout)


def plan_action(component, installed_version, package_version, state='present', allow_downgrade=False,
                all_installed_versions=None):
    """Decide what to do; returns ``{'action': one of ACTIONS, 'reason': text}``.

    A downgrade (``downgrade``) is carried out as an upgrade run (Huawei's ``--upgrade`` path
    replaces whatever is installed) and only when explicitly allowed; ``keep`` is nothing to do. For state=absent, the plan's
    ``version`` is the one to remove: the package's when it is among ``all_installed_versions``
    (operator kernels of older toolkits stay beside the current ones), else the installed one.
    """
    if state not in ('present', 'absent'):
        raise ValueError('state must be present or absent, got %r' % (state,))
    if state == 'absent':
        if package_version is not None:
            for version in all_installed_versions or []:
                if compare_versions(version, package_version) == 0:
                    return {'action': 'uninstall', 'version': version,
                            'reason': '%s %s is installed' % (component, version)}
        if installed_version is None:
            return {'action': 'keep', 'reason': '%s is not installed' % component}
        return {'action': 'uninstall', 'version': installed_version,
                'reason': '%s %s is installed' % (component, installed_version)}
    if package_version is None:
        raise ValueError('the package version is needed for state=present')
    if installed_version is None:
        return {'action': 'install', 'reason': '%s is not installed' % component}
    order = compare_versions(package_version, installed_version)
    if order == 0:
        return {'action': 'keep', 'reason': '%s %s is already installed' % (component, installed_version)}
    if order > 0:
        return {'action': 'upgrade',
                'reason': '%s %s is installed, the package is %s' % (component, installed_version, package_version)}
    if allow_downgrade:
        return {'action': 'downgrade',
                'reason': 'downgrading %s from %s to %s (allow_downgrade is set)'
                          % (component, installed_version, package_version)}
    return {'action': 'refuse',
            'reason': 'refusing to downgrade %s from %s to %s; set allow_downgrade=true to do it anyway'
                      % (component, installed_version, package_version)}


def check_prerequisites(component, package_version, installed):
    """Return a message when a CANN add-on would install without the toolkit it needs, else None.

    ``installed`` is the dict of ``install_state.read_all_installed()``.
    """
    if component not in ('kernels', 'ops'):
        return None
    toolkit = (installed or {}).get('toolkit')
    if toolkit and toolkit.get('damaged'):
        return 'the CANN %s package needs the CANN toolkit, whose install is damaged: %s' % (component, toolkit['damaged'])
    if not toolkit:
        return ('the CANN %s package needs the CANN toolkit installed first; install '
                'Ascend-cann-toolkit_%s first' % (component, package_version))
    if component == 'ops' and compare_versions(toolkit['version'], CANN_LAYOUT_CHANGE) < 0:
        return ('the CANN ops package %s needs toolkit >= %s, but toolkit %s is installed; upgrade the toolkit first'
                % (package_version, CANN_LAYOUT_CHANGE, toolkit['version']))
    return None


def supports_install_for_all(component, soc=False):
    """True when the installer accepts --install-for-all (the SoC driver rejects it)."""
    if component == 'driver':
        return not soc
    return component in CANN_COMPONENTS


def _install_path_args(install_path):
    # Leaving the default out keeps argv identical to Huawei's deployer and works with
    # installers (firmware) that do not document --install-path.
    if install_path and os.path.normpath(install_path) != DEFAULT_INSTALL_PATH:
        return ['--install-path=%s' % install_path]
    return []


def build_commands(component, action, src=None, install_path=DEFAULT_INSTALL_PATH, install_for_all=True,
                   extra_args=None, soc=False, uninstall_script=None):
    """Return the argv lists to run, in order, for ``action`` on ``component``.

    ``extra_args`` are appended to every run of the ``.run`` file (for example
    ``--install-scene=containerd`` for the docker runtime) but not to uninstall scripts.
    Raises ValueError when the action cannot be done (no src, no uninstall entry point).
    """
    if component not in MANAGED_COMPONENTS:
        raise ValueError('unsupported component %r (managed: %s)' % (component, ', '.join(MANAGED_COMPONENTS)))
    extra = list(extra_args or [])
    path_args = _install_path_args(install_path)
    for_all = ['--install-for-all'] if install_for_all and supports_install_for_all(component, soc) else []
    if install_for_all and component == 'driver' and soc:
        raise ValueError('the SoC driver package rejects --install-for-all; set install_for_all=false')

    if action not in ACTIONS:
        raise ValueError('unknown action %r (known: %s)' % (action, ', '.join(ACTIONS)))
    if action in ('keep', 'refuse'):
        return []
    if action == 'uninstall':
        return [_uninstall_argv(component, src, path_args, extra, uninstall_script)]
    if not src:
        raise ValueError('installing %s needs the package file (src)' % component)

    if component == 'driver':
        if action == 'install':
            return [[src, '--nox11', '--full', '--quiet'] + for_all + path_args + extra]
        return [[src, '--nox11', '--upgrade', '--quiet'] + path_args + extra]
    if component == 'firmware':
        mode = '--full' if action == 'install' else '--upgrade'
        return [[src, '--nox11', mode, '--quiet'] + path_args + extra]
    if component == 'docker_runtime':
        mode = '--install' if action == 'install' else '--upgrade'
        return [[src, '--nox11', mode] + path_args + extra]
    install_argv = [src, '--nox11', '--install', '--quiet'] + for_all + path_args + extra
    if action == 'install':
        return [install_argv]
    if component in INSTALL_ONLY_COMPONENTS:
        # No --upgrade exists: remove the old one, then install the new one.
        return [[src, '--nox11', '--uninstall'] + path_args + extra, install_argv]
    return [[src, '--nox11', '--upgrade', '--quiet'] + path_args + extra]


def _uninstall_argv(component, src, path_args, extra, uninstall_script):
    if component in HDK_COMPONENTS:
        if not uninstall_script:
            raise ValueError('cannot uninstall %s: its uninstall script is missing' % component)
        return [uninstall_script]
    if src and os.path.exists(src):
        return [src, '--nox11', '--uninstall'] + path_args + extra
    if uninstall_script:
        return [uninstall_script]
    raise ValueError('cannot uninstall %s: give src (the .run file) or keep its installed uninstall script'
                     % component)
