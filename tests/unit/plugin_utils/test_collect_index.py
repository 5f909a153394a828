# -*- coding: utf-8 -*-
"""The index of a fleet's diagnostics archive names every node: its bundle and gaps, or why it has none."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.ascend_collect_index import ascend_collect_index

BUNDLE = {'member': 'n1.tar.gz', 'counts': {'collected': 3, 'absent': 1},
          'index': [{'member': 'commands/npu-smi info.txt', 'source': 'npu-smi info', 'status': 'collected', 'bytes': 9,
                     'detail': '', 'redacted': False},
                    {'member': 'files/etc/docker/daemon.json', 'source': '/etc/docker/daemon.json',
                     'status': 'absent', 'bytes': 0, 'detail': 'no such file', 'redacted': False}]}


def test_every_node_is_a_row_collected_failed_or_unreachable():
    index = ascend_collect_index(
        {'n1': BUNDLE, 'n2': None, 'n3': None},
        {'n1': None, 'n2': {'stage': 'collect', 'message': 'n2: disk full', 'unreachable': False}, 'n3': None},
        left_out=['n4'])
    assert index['collected'] == ['n1'] and index['missing'] == ['n2', 'n3'] and index['left_out'] == ['n4']
    assert index['nodes']['n1']['not_collected'] == [{'member': 'files/etc/docker/daemon.json',
                                                      'source': '/etc/docker/daemon.json', 'status': 'absent',
                                                      'detail': 'no such file'}]
    assert index['nodes']['n2'] == {'status': 'failed', 'stage': 'collect', 'message': 'n2: disk full'}
    assert index['nodes']['n3']['status'] == 'unreachable' and 'no answer' in index['nodes']['n3']['message']


def test_the_filter_wants_host_values():
    with pytest.raises(AnsibleFilterError, match='host_values'):
        ascend_collect_index([BUNDLE], {})
