# -*- coding: utf-8 -*-
"""The container_runtime role's decisions (plugin_utils/container_runtime_state.py) and the filter that exposes them."""

import hashlib

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.container_runtime_state import FilterModule
from ansible_collections.npu.ascend.plugins.filter.container_runtime_state import container_runtime_state as state_filter
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
from ansible_collections.npu.ascend.plugins.plugin_utils.container_runtime_state import (
    editor_sha1, container_runtime_state, containerd_stamped)

PATH = '/usr/local/Ascend'
CONFIG = '/etc/containerd/config.toml'
DROP_IN = '/etc/containerd/conf.d/99-npu-ascend.toml'
WANTED = {'docker_runtime': '7.3.0'}
SCRATCH = {'containerd': '/var/lib/npu_ascend/container_runtime/installer-scratch-config.toml',
           'docker': '/var/lib/npu_ascend/container_runtime/installer-scratch-daemon.json'}
OPTIONS = {'host': 'npu-01', 'install_path': PATH, 'name': 'ascend', 'default': False, 'engines': [],
           'drop_in': False, 'drop_in_path': DROP_IN, 'config': CONFIG, 'allow_downgrade': False,
           'installer_config': SCRATCH}
BINARY = PATH + '/Ascend-Docker-Runtime/ascend-docker-runtime'
CONFIG_TEXT = 'version = 2\n'


def stamped_entry(path=CONFIG, name='ascend', default=False):
    """The probe's entry of a config containerd_runtime left for these options, its stamp beside it."""
    fingerprint = config_stamp.request_fingerprint(
        {'path': path, 'name': name, 'binary_name': BINARY, 'default': default, 'config_version': None,
         'allow_runc_rewrite': False}, editor_sha1(), config_stamp.CONTAINERD_RUNTIME_OPTIONS)
    sha1 = config_stamp.text_sha1(CONFIG_TEXT)
    return {'sha1': sha1, 'stamp_sha1': hashlib.sha1(config_stamp.stamp_bytes(sha1, fingerprint)).hexdigest()}


def probe(version='7.3.0', engines=('containerd',), files=None, tomlkit=True, major=1, kubelet='inactive', **extra):
    result = {'install_path': PATH, 'engines_present': list(engines),
              'installed': {'docker_runtime': {'version': version}} if version else {},
              'files': {CONFIG: stamped_entry()} if files is None else files,
              'python_libraries': {'tomlkit': tomlkit},
              'containerd': {'major': major, 'output': 'containerd github.com/containerd/containerd v1.7.24 abc'},
              'services': {'kubelet': {'active_state': kubelet}}}
    result.update(extra)
    return result


def test_a_converged_node_has_nothing_to_do():
    state = container_runtime_state(probe(), WANTED, OPTIONS)
    assert state['converged'] is True and state['containerd_stamped'] is True
    assert state['install'] == [] and state['install_needed'] is False and state['refused'] == []
    assert state['refusal'] == '' and state['packages'] == [] and state['engine_problem'] == ''
    assert state['binary'] == BINARY and state['containerd_target'] == CONFIG and state['engines'] == ['containerd']
    assert state['installer_args'] == ['--install-scene=containerd', '--config-file-path=' + SCRATCH['containerd']]


@pytest.mark.parametrize('changes, options', [
    ({'files': {}}, {}),                                  # the config not stamped as this request leaves it
    ({'files': {CONFIG: stamped_entry(name='other')}}, {}),
    ({'tomlkit': False}, {}),                             # tomlkit to install first
    ({'engines': ('containerd', 'docker')}, {}),          # Docker is asked at every run
    ({}, {'drop_in': True}),                              # a drop-in is checked by containerd itself
    ({'install_path': '/opt/Ascend'}, {}),                # the probe read another install path
    ({'version': '7.2.0'}, {}),                           # an upgrade
])
def test_anything_else_is_not_converged(changes, options):
    state = container_runtime_state(probe(**changes), WANTED, dict(OPTIONS, **options))
    assert state['converged'] is False


def test_a_fresh_node_installs_the_runtime_and_stages_its_package():
    state = container_runtime_state(probe(version=None, files={}), WANTED, OPTIONS)
    assert state['install'] == ['docker_runtime'] and state['install_needed'] is True and not state['converged']
    assert state['packages'] == [{'component': 'docker_runtime', 'version': '7.3.0'}]


def test_a_downgrade_is_refused_with_the_role_s_fix_unless_allowed():
    state = container_runtime_state(probe(version='7.5.0'), WANTED, OPTIONS)
    assert [item['component'] for item in state['refused']] == ['docker_runtime']
    assert state['refusal'].startswith('npu-01: ') and 'container_runtime_allow_downgrade' in state['refusal']
    allowed = container_runtime_state(probe(version='7.5.0'), WANTED, dict(OPTIONS, allow_downgrade=True))
    assert allowed['refused'] == [] and allowed['install'] == ['docker_runtime']


def test_the_inventory_s_engines_win_over_those_found_and_docker_sets_the_installer_s_scene():
    state = container_runtime_state(probe(engines=('containerd',)), WANTED, dict(OPTIONS, engines=['docker']))
    assert state['engines'] == ['docker'] and state['scene'] == 'docker'
    assert state['installer_args'] == ['--install-scene=docker', '--config-file-path=' + SCRATCH['docker']]


def test_a_drop_in_goes_in_its_own_file_and_needs_containerd_2():
    on_one = container_runtime_state(probe(major=1), WANTED, dict(OPTIONS, drop_in=True))
    assert on_one['containerd_target'] == DROP_IN and on_one['drop_in_mergeable'] is False
    assert on_one['engine_problem'].startswith('npu-01: container runtime: containerd_drop_in needs containerd 2.x')
    assert 'containerd github.com/containerd/containerd v1.7.24' in on_one['engine_problem']
    on_two = container_runtime_state(probe(major=2), WANTED, dict(OPTIONS, drop_in=True))
    assert on_two['drop_in_mergeable'] is True and on_two['engine_problem'] == ''


def test_a_node_without_an_engine_is_stopped_with_the_fix():
    state = container_runtime_state(probe(engines=()), WANTED, OPTIONS)
    assert state['engines'] == [] and state['converged'] is False
    assert 'no engine to register the Ascend Docker Runtime with (found neither containerd nor docker' in state['engine_problem']


def test_the_kubelet_counts_only_when_it_runs():
    assert container_runtime_state(probe(kubelet='active'), WANTED, OPTIONS)['kubelet'] is True
    assert container_runtime_state(probe(kubelet='failed'), WANTED, OPTIONS)['kubelet'] is False
    assert container_runtime_state(probe(services={}), WANTED, OPTIONS)['kubelet'] is False


def test_before_any_probe_nothing_is_current_and_the_runtime_is_installed():
    state = container_runtime_state(None, WANTED, OPTIONS)
    assert state['probe_current'] is False and state['converged'] is False and state['engines'] == []
    assert state['install'] == ['docker_runtime'] and state['tomlkit_importable'] is False


def test_a_stamp_request_given_in_part_is_refused():
    with pytest.raises(ValueError, match='missing options: .*binary_name'):
        containerd_stamped({}, {'path': CONFIG, 'name': 'ascend'})
    with pytest.raises(ValueError, match="expected the probe's files"):
        containerd_stamped([], {})


@pytest.mark.parametrize('probe_value, options, message', [
    ('not a probe', OPTIONS, 'container_runtime_state: the probe must be'),
    (probe(), ['host'], 'container_runtime_state: options must be a dict'),
])
def test_the_filter_names_a_wrong_input(probe_value, options, message):
    with pytest.raises(AnsibleFilterError, match=message):
        state_filter(probe_value, WANTED, options)


def test_the_filter_is_the_collection_s():
    assert FilterModule().filters()['container_runtime_state'] is state_filter
