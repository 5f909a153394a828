# -*- coding: utf-8 -*-
"""When the container_runtime role stops before registering the runtime (plugin_utils/container_runtime_checks.py)."""

import pytest

from ansible_collections.npu.ascend.plugins.plugin_utils.container_runtime_checks import engine_problem

KNOWN = ['containerd', 'docker']
CONFIG = '/etc/containerd/config.toml'


@pytest.mark.parametrize('engines', [['containerd'], ['docker'], ['containerd', 'docker']])
def test_known_engines_go_on(engines):
    assert engine_problem(engines, KNOWN, True, 'containerd 2.0.4', CONFIG, 'n1') == ''


@pytest.mark.parametrize('engines, found', [([], 'neither containerd nor docker'), (['podman'], 'podman'),
                                            (['containerd', 'cri-o'], 'containerd, cri-o')])
def test_no_engine_or_an_unknown_one_stops_with_what_was_found(engines, found):
    assert engine_problem(engines, KNOWN, True, '', CONFIG, 'n1') == (
        'n1: container runtime: no engine to register the Ascend Docker Runtime with (found %s; known: containerd, '
        'docker). Fix: install containerd or Docker first, or set container_runtime_engines to engines the node runs.'
        % found)


def test_a_drop_in_on_containerd_1_stops_naming_the_release_and_the_config_kept_instead():
    message = engine_problem(['containerd'], KNOWN, False, 'containerd github.com/containerd/containerd v1.7.24',
                             CONFIG, 'n1')
    assert message.startswith('n1: container runtime: containerd_drop_in needs containerd 2.x, the node runs '
                              'containerd github.com/containerd/containerd v1.7.24, which replaces')
    assert 'edits %s in place' % CONFIG in message
    assert 'containerd of an unknown release' in engine_problem(['containerd'], KNOWN, False, None, CONFIG, 'n1')
