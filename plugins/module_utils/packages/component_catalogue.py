# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one catalogue of Huawei's Ascend software components: one row per component.

A component has one name, ``id``, everywhere the collection names it: ``ascend_runfile``'s
``component`` option, the packages role's lists and ``packages_staged`` keys, the key of
``ansible_facts.ascend.installed``, the wanted stack and the plan (``docker_runtime``; Huawei's own
spelling, ``Ascend-docker-runtime_<ver>_linux-<arch>.run``, is only in the file-name patterns of
``ascend_package``). Its row says:

- ``role``: the role that installs it (None: the collection reads its file names only);
- ``version_variable``: the role variable that says which version the operator wants (None: the
  component follows another one's, as the CANN kernels and ops follow ``cann_version``);
- ``chip_in_name``: whether its package file names name a chip (``hardware_catalogue``'s spelling);
- ``version_file``: where it records what is installed (docs/development.md, "Installed-version
  files"; ``<ip>`` the install path, ``<ver>`` the version, ``<arch>`` the architecture);
- ``version_line``: the line of that file that names the version;
- ``reinstall``: how Huawei's installer goes over an existing install.

Plain data; no I/O, nothing from Ansible (it runs on the nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

COMPONENTS = (
    {'id': 'driver', 'role': 'hdk', 'version_variable': 'hdk_driver_version', 'chip_in_name': True,
     'version_file': '<ip>/driver/version.info', 'version_line': 'Version=<version>',
     'reinstall': "the driver package's --upgrade"},
    {'id': 'firmware', 'role': 'hdk', 'version_variable': 'hdk_firmware_version', 'chip_in_name': True,
     'version_file': '<ip>/firmware/version.info', 'version_line': 'Version=<version>',
     'reinstall': "the firmware package's --upgrade"},
    {'id': 'toolkit', 'role': 'cann', 'version_variable': 'cann_version', 'chip_in_name': False,
     'version_file': '<ip>/ascend-toolkit/<ver>/<arch>-linux/ascend_toolkit_install.info (< 8.5), '
                     '<ip>/cann-<ver>/<arch>-linux/ascend_toolkit_install.info (>= 8.5)',
     'version_line': 'version=<version>', 'reinstall': "the toolkit package's --upgrade"},
    {'id': 'kernels', 'role': 'cann', 'version_variable': None, 'chip_in_name': True,
     'version_file': '<ip>/ascend-toolkit/<ver>/opp_kernel/version.info', 'version_line': 'version_dir=<version>',
     'reinstall': "the kernels package's --uninstall, then its --install (it has no --upgrade)"},
    {'id': 'ops', 'role': 'cann', 'version_variable': None, 'chip_in_name': True,
     'version_file': '<ip>/cann-<ver>/opp_kernel/version.info', 'version_line': 'version_dir=<version>',
     'reinstall': "the ops package's --uninstall, then its --install (it has no --upgrade)"},
    {'id': 'nnal', 'role': 'cann', 'version_variable': 'cann_nnal_version', 'chip_in_name': False,
     'version_file': '<ip>/nnal/atb/latest/version.info', 'version_line': 'Ascend-cann-atb : <version>',
     'reinstall': "the NNAL package's --upgrade"},
    {'id': 'nnae', 'role': None, 'version_variable': None, 'chip_in_name': False,
     'version_file': None, 'version_line': None, 'reinstall': None},
    {'id': 'nnrt', 'role': None, 'version_variable': None, 'chip_in_name': False,
     'version_file': None, 'version_line': None, 'reinstall': None},
    {'id': 'docker_runtime', 'role': 'container_runtime', 'version_variable': 'container_runtime_version',
     'chip_in_name': False, 'version_file': '<ip>/Ascend-Docker-Runtime/ascend_docker_runtime_install.info',
     'version_line': 'version=v<version>', 'reinstall': "the Ascend Docker Runtime package's --upgrade"},
    {'id': 'driver-hotpatch', 'role': None, 'version_variable': None, 'chip_in_name': True,
     'version_file': None, 'version_line': None, 'reinstall': None},
)

_BY_ID = dict((row['id'], row) for row in COMPONENTS)


def component_ids():
    """Every component's id, in the catalogue's order."""
    return tuple(row['id'] for row in COMPONENTS)


def managed_components():
    """The components a role installs (each has a version file)."""
    return tuple(row['id'] for row in COMPONENTS if row['role'])


def roles():
    """Managed component id -> the role that installs it."""
    return dict((row['id'], row['role']) for row in COMPONENTS if row['role'])


def version_variable(component_id):
    """The role variable that names the wanted version of a component (None: it follows another one)."""
    return component_row(component_id)['version_variable']


def chip_components():
    """The components whose package file names name a chip."""
    return tuple(row['id'] for row in COMPONENTS if row['chip_in_name'])


def chipless_components():
    """The components whose package file names carry no chip."""
    return tuple(row['id'] for row in COMPONENTS if not row['chip_in_name'])


def component_row(component_id):
    """The row of a component; ValueError for one the catalogue does not know."""
    try:
        return _BY_ID[component_id]
    except KeyError:
        raise ValueError('unknown component %r (expected one of %s)' % (component_id, ', '.join(component_ids())))
