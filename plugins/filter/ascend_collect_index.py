# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter ``npu.ascend.ascend_collect_index``: the index of a fleet's diagnostics archive.

Documentation is in the sidecar file ascend_collect_index.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def ascend_collect_index(bundles_by_host, stops_by_host, left_out=None):
    """Per node what its bundle holds and lacks, or why there is none."""
    from ansible_collections.npu.ascend.plugins.plugin_utils.collect_index import fleet_index
    if not isinstance(bundles_by_host, dict) or not isinstance(stops_by_host, dict):
        raise AnsibleFilterError('ascend_collect_index expects host -> bundle and host -> stop record '
                                 '(npu.ascend.host_values), got %s and %s'
                                 % (type(bundles_by_host).__name__, type(stops_by_host).__name__))
    return fleet_index(bundles_by_host, stops_by_host, left_out or [])


class FilterModule(object):
    """The diagnostics archive."""

    def filters(self):
        return {'ascend_collect_index': ascend_collect_index}
