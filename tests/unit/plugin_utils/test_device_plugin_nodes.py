# -*- coding: utf-8 -*-
"""The Nodes the device plugin's DaemonSets select: the wanted accelerator and every selector pair."""

from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils.device_plugin_nodes import selected_node_names


def node(name, **labels):
    return {'metadata': {'name': name, 'labels': labels}}


def test_the_wanted_accelerator_and_every_selector_pair_select_a_node():
    nodes = [node('a2-01', accelerator='huawei-Ascend910', pool='train'),
             node('a2-02', accelerator='huawei-Ascend910', pool='infer'),
             node('duo-01', accelerator='huawei-Ascend310P', pool='train'),
             node('bare'), {'metadata': {'name': 'no-labels'}}, node('a2-01', accelerator='huawei-Ascend910', pool='train')]
    assert selected_node_names(nodes, ['huawei-Ascend910'], {}) == ['a2-01', 'a2-02']
    assert selected_node_names(nodes, ['huawei-Ascend910', 'huawei-Ascend310P'], {'pool': 'train'}) == ['a2-01', 'duo-01']
    assert selected_node_names(nodes, [], {}) == []
    assert selected_node_names(None, ['huawei-Ascend910'], None) == []


def test_a_selector_value_compares_as_its_string():
    nodes = [node('n1', accelerator='x', generation='2')]
    assert selected_node_names(nodes, ['x'], {'generation': 2}) == ['n1']


labels = st.dictionaries(st.sampled_from(['accelerator', 'pool', 'zone']), st.sampled_from(['x', 'y', 'train']), max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(['n1', 'n2', 'n3']), labels), max_size=6),
       st.lists(st.sampled_from(['x', 'y']), max_size=2),
       st.dictionaries(st.sampled_from(['pool', 'zone']), st.sampled_from(['x', 'train']), max_size=2))
def test_a_node_is_selected_exactly_when_all_its_labels_agree(entries, wanted, selector):
    nodes = [node(name, **node_labels) for name, node_labels in entries]
    expected = sorted(set(name for name, node_labels in entries
                          if node_labels.get('accelerator') in wanted
                          and all(node_labels.get(key) == value for key, value in selector.items())))
    assert selected_node_names(nodes, wanted, selector) == expected
