# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.containerd_runtime_stamped``; documentation in containerd_runtime_stamped.yml."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError


def containerd_runtime_stamped(file_states, path, **options):
    """Whether the probe's ``files`` show ``path`` exactly as containerd_runtime left it for ``options``."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils import container_runtime_state
    options['path'] = path
    try:
        return container_runtime_state.containerd_stamped(file_states, options)
    except ValueError as error:
        raise AnsibleFilterError('containerd_runtime_stamped: %s' % error)


class FilterModule:
    """Ansible filter plugin entry point."""

    def filters(self):
        return {'containerd_runtime_stamped': containerd_runtime_stamped}
