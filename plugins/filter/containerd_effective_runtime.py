# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.containerd_effective_runtime``; documentation in containerd_effective_runtime.yml."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def containerd_effective_runtime(config_text, name='ascend'):
    """Read runtime ``name`` out of a containerd config, typically the output of ``containerd config dump``."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import container_runtime_checks
    try:
        return container_runtime_checks.effective_runtime(config_text, name)
    except ValueError as error:
        raise AnsibleFilterError('containerd_effective_runtime: %s' % error)


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {'containerd_effective_runtime': containerd_effective_runtime}
