# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.ascend_kernels_component`` and ``ascend_toolkit_set_env``: the CANN package layout.

Documentation is in the sidecar files ascend_kernels_component.yml and ascend_toolkit_set_env.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_kernels_component(cann_version):
    """``ops`` for CANN 8.5.0 and later, ``kernels`` before."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.runfile import operator_kernels_component
    try:
        return operator_kernels_component(cann_version)
    except ValueError as error:
        raise AnsibleFilterError('ascend_kernels_component: %r is not a CANN version: %s' % (cann_version, error))


def ascend_toolkit_set_env(cann_version, install_path='/usr/local/Ascend'):
    """The toolkit's set_env.sh of this CANN release under install_path."""
    from ansible_collections.npu.ascend.plugins.module_utils.packages.runfile import toolkit_set_env
    try:
        return toolkit_set_env(install_path, cann_version)
    except ValueError as error:
        raise AnsibleFilterError('ascend_toolkit_set_env: %r is not a CANN version: %s' % (cann_version, error))


class FilterModule(object):
    """CANN package layout."""

    def filters(self):
        return {'ascend_kernels_component': ascend_kernels_component, 'ascend_toolkit_set_env': ascend_toolkit_set_env}
