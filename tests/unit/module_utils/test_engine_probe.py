# -*- coding: utf-8 -*-
"""The engine probe's parsers: systemctl show's blocks and containerd's version line."""

import pytest
from hypothesis import given, strategies as st

from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import engine_probe

SHOW = (
    'Id=containerd.service\nLoadState=loaded\nActiveState=active\n\n'
    'Id=docker.service\nLoadState=not-found\nActiveState=inactive\n\n'
    'Id=kubelet.service\nLoadState=loaded\nActiveState=activating\n'
)


def test_one_systemctl_call_asks_for_every_unit():
    assert engine_probe.systemctl_show_argv('/usr/bin/systemctl') == [
        '/usr/bin/systemctl', 'show', '--property=Id,LoadState,ActiveState',
        'containerd.service', 'docker.service', 'kubelet.service']


def test_blocks_are_the_units_in_the_order_asked():
    assert engine_probe.parse_systemctl_show(SHOW) == {
        'containerd': {'load_state': 'loaded', 'active_state': 'active'},
        'docker': {'load_state': 'not-found', 'active_state': 'inactive'},
        'kubelet': {'load_state': 'loaded', 'active_state': 'activating'},
    }


@pytest.mark.parametrize('text', ['', 'Id=containerd.service\nLoadState=loaded\n',
                                  SHOW + '\nId=extra.service\nLoadState=loaded\n'])
def test_a_block_count_other_than_the_units_asked_is_refused(text):
    with pytest.raises(ValueError, match='block'):
        engine_probe.parse_systemctl_show(text)


_STATE = st.sampled_from(['loaded', 'not-found', 'masked', 'active', 'inactive', 'failed', 'activating', ''])


@given(st.lists(st.tuples(_STATE, _STATE), min_size=3, max_size=3), st.sampled_from(['\n', '\r\n']))
def test_any_states_come_back_per_unit(states, newline):
    text = '\n'.join('Id=%s.service\nLoadState=%s\nActiveState=%s\n' % (unit, load, active)
                     for unit, (load, active) in zip(engine_probe.UNITS, states))
    parsed = engine_probe.parse_systemctl_show(text.replace('\n', newline))
    assert [(parsed[unit]['load_state'], parsed[unit]['active_state']) for unit in engine_probe.UNITS] == states


@pytest.mark.parametrize('line, version, major, minor', [
    ('containerd github.com/containerd/containerd/v2 v2.4.2 0b5dc3bf7f0e9c8f', '2.4.2', 2, 4),
    ('containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1', '1.6.20~ds1', 1, 6),
    ('containerd containerd.io 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da\n', '1.7.27', 1, 7),
])
def test_the_containerd_release(line, version, major, minor):
    parsed = engine_probe.parse_containerd_version(line)
    assert (parsed['version'], parsed['major'], parsed['minor']) == (version, major, minor)
    assert parsed['output'] == line.strip()


@pytest.mark.parametrize('line', ['', 'containerd', 'ctr github.com/containerd/containerd v2.0.0',
                                  'containerd github.com/containerd/containerd dev'])
def test_output_that_names_no_release_is_none(line):
    assert engine_probe.parse_containerd_version(line) is None


@given(st.text(max_size=120))
def test_any_version_output_parses_or_is_none(text):
    parsed = engine_probe.parse_containerd_version(text)
    assert parsed is None or (parsed['major'] >= 0 and parsed['output'] == text.strip())


@pytest.mark.parametrize('states, engines', [
    ({}, []),
    ({'containerd': {'load_state': 'loaded', 'active_state': 'inactive'},
      'docker': {'load_state': 'not-found', 'active_state': 'inactive'},
      'kubelet': {'load_state': 'loaded', 'active_state': 'active'}}, ['containerd']),
    ({'containerd': {'load_state': 'masked'}, 'docker': {'load_state': 'loaded'}}, ['containerd', 'docker']),
    ({'docker': {'load_state': ''}}, []),
])
def test_the_engines_of_a_node_are_the_units_systemd_loaded(states, engines):
    assert engine_probe.present_engines(states) == engines
