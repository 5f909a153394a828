# -*- coding: utf-8 -*-
"""One node's diagnostics index of an unexpected shape (a damaged fact, a module of another version, a
hand-set collect_bundle) must not break the fleet's index for every node: that node is named with the
cause and the fix, the others are indexed as always."""
import json

from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.plugin_utils.collect_index import fleet_index

GOOD = {'member': 'good.tar.gz', 'counts': {'collected': 1, 'refused': 1},
        'index': [{'member': 'commands/npu-smi info.txt', 'source': 'npu-smi info', 'status': 'collected', 'bytes': 9,
                   'detail': '', 'redacted': False},
                  {'member': 'files/var/log/x/', 'source': '/var/log/x', 'status': 'refused', 'bytes': 0,
                   'detail': 'a symbolic link', 'redacted': False}]}

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
BUNDLE_KEYS = st.fixed_dictionaries({}, optional={'member': JSON, 'counts': JSON, 'index': JSON | st.lists(
    st.fixed_dictionaries({}, optional={'member': JSON, 'source': JSON, 'status': JSON | st.sampled_from(
        ['absent', 'refused', 'failed', 'collected']), 'detail': JSON}), max_size=3)})


def _judged(bad_bundle, bad_stop=None):
    index = fleet_index({'good': GOOD, 'odd': bad_bundle}, {'good': None, 'odd': bad_stop})
    json.dumps(index)
    assert index['collected'][:1] == ['good'] or 'good' in index['collected']
    assert index['nodes']['good']['not_collected'] == [{'member': 'files/var/log/x/', 'source': '/var/log/x',
                                                        'status': 'refused', 'detail': 'a symbolic link'}]
    return index['nodes']['odd']


def test_an_index_that_is_not_a_list_names_the_node_cause_and_fix():
    odd = _judged({'member': 'odd.tar.gz', 'counts': {}, 'index': 'collected'})
    assert odd['status'] == 'failed' and 'odd.tar.gz' in odd['message'] and 'Fix:' in odd['message'], odd


def test_entries_missing_their_keys_are_no_traceback():
    odd = _judged({'member': 'odd.tar.gz', 'counts': {}, 'index': [{'status': 'absent'}, 'x', None]})
    assert odd['status'] == 'failed' and 'Fix:' in odd['message'], odd


def test_a_stop_record_that_is_not_a_mapping_is_still_a_row():
    odd = _judged(None, 'disk full')
    assert odd['status'] == 'failed' and 'disk full' in odd['message'], odd


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON, BUNDLE_KEYS), st.one_of(st.none(), JSON))
def test_whatever_one_node_sent_the_fleet_index_is_made(bundle, stop):
    odd = _judged(bundle, stop)
    assert odd['status'] in ('collected', 'failed', 'unreachable')
    if odd['status'] == 'collected':
        assert isinstance(odd['archive'], str) and all(isinstance(entry, dict) for entry in odd['not_collected'])
    else:
        assert isinstance(odd['message'], str) and odd['message']
