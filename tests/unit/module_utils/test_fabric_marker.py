# -*- coding: utf-8 -*-
"""The fabric marker: what the hccn role records after its gate, and how the probe judges it against
the live /etc/hccn.conf (docs/hccn.md, "The Node label")."""

import hashlib
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker

CONF = (b'address_0=10.20.0.10\nnetmask_0=255.255.255.0\nnetdetect_0=10.20.0.1\ngateway_0=10.20.0.1\n'
        b'send_arp_status_0=1\naddress_1=10.20.0.11\nnetmask_1=255.255.255.0\nnetdetect_1=10.20.0.1\n'
        b'gateway_1=10.20.0.1\nsend_arp_status_1=1\n')
NPUS = [{'npu': 1, 'address': '10.20.0.11', 'netmask': '255.255.255.0', 'gateway': '10.20.0.1', 'netdetect': '10.20.0.1'},
        {'npu': 0, 'address': '10.20.0.10', 'netmask': '255.255.255.0', 'gateway': '10.20.0.1', 'netdetect': '10.20.0.1',
         'link': 'UP'}]


@pytest.fixture
def node(tmp_path, monkeypatch):
    marker = tmp_path / 'var' / 'hccn-fabric.json'
    marker.parent.mkdir()
    conf = tmp_path / 'hccn.conf'
    conf.write_bytes(CONF)
    monkeypatch.setattr(fabric_marker, 'FABRIC_MARKER_PATH', str(marker))
    monkeypatch.setattr(fabric_marker, 'HCCN_CONF_PATH', str(conf))
    return {'marker': marker, 'conf': conf}


def record(node, passed=True, problems=None, conf=CONF, npus=None):
    text = fabric_marker.marker_text(fabric_marker.build_marker(passed, NPUS if npus is None else npus,
                                                                fabric_marker.conf_sha256(conf), problems))
    node['marker'].write_text(text)
    return text


def test_a_passed_gate_on_the_live_conf_is_passed(node):
    record(node)
    fact = fabric_marker.read_fabric()
    assert fact == {'state': 'passed', 'verdict': 'passed', 'reason': None, 'marker': str(node['marker']),
                    'npus': [0, 1]}


def test_the_marker_is_stable_text_without_a_time_stamp():
    first = fabric_marker.marker_text(fabric_marker.build_marker(True, NPUS, 'a' * 64))
    again = fabric_marker.marker_text(fabric_marker.build_marker(True, list(reversed(NPUS)), 'a' * 64))
    assert first == again and first.endswith('}\n')
    marker = json.loads(first)
    assert [entry['npu'] for entry in marker['npus']] == [0, 1]
    # Only what the gate checked: the link and health readings are no part of the fingerprint.
    assert set(marker['npus'][0]) == {'npu', 'address', 'netmask', 'gateway', 'netdetect'}
    assert marker['conf_sha256'] == 'a' * 64 and marker['problems'] == []


def test_a_hand_edited_conf_takes_the_verdict_away(node):
    record(node)
    node['conf'].write_bytes(CONF.replace(b'address_1=10.20.0.11', b'address_1=10.20.0.99'))
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'changed' and fact['verdict'] == 'passed'
    assert 'not the one the gate checked' in fact['reason'] and 'site.yml --tags hccn' in fact['reason']
    # Even a comment changes the fingerprint: the gate vouches for one file, byte for byte.
    node['conf'].write_bytes(CONF + b'# edited\n')
    assert fabric_marker.read_fabric()['state'] == 'changed'


def test_a_conf_gone_takes_the_verdict_away(node):
    record(node)
    os.remove(str(node['conf']))
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'changed' and '/etc/hccn.conf is gone' in fact['reason']


def test_a_conf_that_does_not_hold_what_was_checked_is_changed(node):
    """hccn_tool did not save what it set (conf_saved false): the next boot would restore other values."""
    npus = [dict(NPUS[0], address='10.20.0.12')]
    record(node, npus=npus)
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'changed' and 'NPU 1 address' in fact['reason'] and 'next boot' in fact['reason']


def test_a_failed_gate_is_failed_whatever_the_conf(node):
    record(node, passed=False, problems=['t2 NPU 3: link DOWN; fix: check the cable'])
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'failed' and fact['verdict'] == 'failed'
    assert 't2 NPU 3: link DOWN' in fact['reason']
    # A failed marker keeps its problems; a passed one never carries any.
    assert fabric_marker.build_marker(True, NPUS, None, ['old'])['problems'] == []


def test_no_marker_is_absent(node):
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'absent' and fact['verdict'] is None and fact['npus'] == []


@pytest.mark.parametrize('text', [
    '', 'not json', '[]', '{"format": 2, "verdict": "passed", "npus": []}',
    '{"format": 1, "verdict": "maybe", "npus": []}',
    '{"format": 1, "verdict": "passed", "conf_sha256": "abc", "npus": []}',
    '{"format": 1, "verdict": "passed", "conf_sha256": null, "npus": [{"npu": "0"}]}',
    '{"format": 1, "verdict": "passed", "conf_sha256": null, "npus": [{"npu": true}]}',
    '{"format": 1, "verdict": "passed", "conf_sha256": null, "npus": [{"npu": 0, "address": "10.0.0.300"}]}',
    '{"format": 1, "verdict": "failed", "conf_sha256": null, "npus": [], "problems": "x"}',
    '[' * 100000,
])
def test_a_damaged_marker_is_its_own_state_never_a_traceback(node, text):
    node['marker'].write_text(text)
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'damaged' and 'is damaged' in fact['reason'] and 'Fix: remove it' in fact['reason']


def test_a_marker_that_is_not_utf8_or_not_a_file_is_damaged(node, tmp_path):
    node['marker'].write_bytes(b'\xff\xfe{}')
    assert 'not UTF-8' in fabric_marker.read_fabric()['reason']
    os.remove(str(node['marker']))
    os.mkfifo(str(node['marker']))
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'damaged' and 'FIFO' in fact['reason']
    os.remove(str(node['marker']))
    target = tmp_path / 'elsewhere.json'
    target.write_text(record(node))
    os.remove(str(node['marker']))
    os.symlink(str(target), str(node['marker']))
    # Our own file: a link there is not followed.
    assert fabric_marker.read_fabric()['state'] == 'damaged'


def test_a_huge_marker_is_not_read(node):
    with open(str(node['marker']), 'wb') as handle:
        handle.truncate(2 * 1024 * 1024)
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'damaged' and 'larger than' in fact['reason']


def test_a_conf_that_cannot_be_read_takes_the_verdict_away(node):
    record(node)
    os.remove(str(node['conf']))
    os.mkfifo(str(node['conf']))
    fact = fabric_marker.read_fabric()
    assert fact['state'] == 'changed' and 'FIFO' in fact['reason']


def test_the_fingerprint_is_the_sha256_of_the_file():
    assert fabric_marker.conf_sha256(CONF) == hashlib.sha256(CONF).hexdigest()
    assert fabric_marker.conf_sha256(None) is None


_ADDRESS = st.tuples(*[st.integers(0, 255)] * 4).map(lambda parts: '.'.join(str(part) for part in parts))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.fixed_dictionaries({'npu': st.integers(0, 15), 'address': _ADDRESS,
                                       'netmask': st.sampled_from(['255.255.255.0', '255.255.0.0']),
                                       'gateway': st.one_of(st.none(), _ADDRESS),
                                       'netdetect': st.one_of(st.none(), _ADDRESS)}), max_size=16),
       st.booleans(), st.one_of(st.none(), st.text(alphabet='0123456789abcdef', min_size=64, max_size=64)),
       st.lists(st.text(max_size=40), max_size=3))
def test_what_is_written_reads_back_the_same(npus, passed, digest, problems):
    marker = fabric_marker.build_marker(passed, npus, digest, problems)
    assert fabric_marker.parse_marker(fabric_marker.marker_text(marker)) == marker


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(['format', 'verdict', 'npus', 'npu', 'address',
                                                                'conf_sha256', 'problems']), children, max_size=5)),
    max_leaves=20).map(json.dumps)))
def test_any_text_is_a_marker_or_a_value_error(text):
    try:
        fabric_marker.parse_marker(text)
    except ValueError:
        pass
