# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.container_runtime_state``; documentation in container_runtime_state.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def container_runtime_state(probe, wanted, options=None):
    """Everything the container_runtime role decides about a node (plugin_utils/container_runtime_state.py)."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.plugin_utils.container_runtime_state import container_runtime_state as decide
    if options is not None and not isinstance(options, dict):
        raise AnsibleFilterError('container_runtime_state: options must be a dict, got %s' % type(options).__name__)
    try:
        return decide(probe, wanted, options or {})
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('container_runtime_state: %s' % exc)


class FilterModule(object):
    """What the container_runtime role does on a node."""

    def filters(self):
        return {'container_runtime_state': container_runtime_state}
