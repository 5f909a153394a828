# -*- coding: utf-8 -*-
"""The cann role's decisions (plugin_utils/cann_state.py) and the filter that exposes them."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.npu.ascend.plugins.filter.cann_state import FilterModule, cann_state as cann_state_filter
from ansible_collections.npu.ascend.plugins.plugin_utils.cann_state import cann_state

PATH = '/usr/local/Ascend'
SCRIPT = '/etc/profile.d/ascend-cann.sh'
WANTED = {'toolkit': '8.2.RC1', 'kernels': '8.2.RC1', 'nnal': '8.2.RC1'}
PROFILE = {'sha1': 'a9993e364706816aba3e25717850c26c9cd0d89d', 'mode': '0644', 'uid': 0, 'gid': 0}
OPTIONS = {'host': 'npu-01', 'install_path': PATH, 'allow_downgrade': False, 'chip': '910b', 'profile_script': SCRIPT,
           'profile_wanted': PROFILE}


def probe(toolkit='8.2.RC1', kernels='8.2.RC1', nnal='8.2.RC1', script='as wanted', **extra):
    """The probe of a node; ``script`` is the environment script's file entry (None: not a regular file)."""
    script = PROFILE if script == 'as wanted' else script
    installed = dict((name, {'version': version} if version else None)
                     for name, version in (('toolkit', toolkit), ('kernels', kernels), ('nnal', nnal)))
    result = {'install_path': PATH, 'reboot_pending': False, 'installed': installed,
              'files': {SCRIPT: dict(script) if script is not None else None}}
    result.update(extra)
    return result


def test_a_converged_node_has_nothing_to_do():
    state = cann_state(probe(), WANTED, OPTIONS)
    assert state['converged'] is True and state['due'] is False and state['profile_as_wanted'] is True
    assert state['install'] == [] and state['refused'] == [] and state['refusal'] == '' and state['packages'] == []


def test_a_fresh_node_installs_the_toolkit_first_and_stages_the_kernels_of_its_chip():
    state = cann_state(probe(toolkit=None, kernels=None, nnal=None, script=None), WANTED, OPTIONS)
    assert state['install'] == ['toolkit', 'kernels', 'nnal'] and state['due'] and not state['converged']
    assert state['profile_as_wanted'] is False
    kernels = [entry for entry in state['packages'] if entry['component'] == 'kernels']
    assert kernels and kernels[0]['version'] == '8.2.RC1' and kernels[0]['chip'] == '910b'
    assert [entry['component'] for entry in state['packages']] == ['toolkit', 'kernels', 'nnal']


@pytest.mark.parametrize('script', [
    dict(PROFILE, sha1='0' * 40),   # another text
    dict(PROFILE, mode='0755'),
    dict(PROFILE, uid=1000),
    None,                           # not a regular file
])
def test_an_environment_script_other_than_the_role_writes_is_not_converged(script):
    state = cann_state(probe(script=script), WANTED, OPTIONS)
    assert state['profile_as_wanted'] is False and state['converged'] is False and state['due'] is False


def test_a_script_the_probe_did_not_read_is_not_as_wanted():
    state = cann_state(dict(probe(), files={}), WANTED, OPTIONS)
    assert state['profile_as_wanted'] is False and state['converged'] is False


def test_a_probe_of_another_install_path_is_not_current():
    state = cann_state(probe(install_path='/opt/Ascend'), WANTED, OPTIONS)
    assert state['probe_current'] is False and state['converged'] is False


def test_a_downgrade_is_refused_with_the_cann_fix_unless_allowed():
    state = cann_state(probe(toolkit='8.3.RC1'), WANTED, OPTIONS)
    assert state['due'] and [item['component'] for item in state['refused']] == ['toolkit']
    assert state['refusal'].startswith('npu-01: ') and 'cann_allow_downgrade' in state['refusal']
    allowed = cann_state(probe(toolkit='8.3.RC1'), WANTED, dict(OPTIONS, allow_downgrade=True))
    assert allowed['refused'] == [] and allowed['install'] == ['toolkit']


def test_before_any_probe_everything_is_to_install():
    state = cann_state(None, WANTED, OPTIONS)
    assert state['install'] == ['toolkit', 'kernels', 'nnal'] and not state['probe_current'] and not state['converged']


@pytest.mark.parametrize('probe_value, options, message', [
    ('not a probe', OPTIONS, 'cann_state: the probe must be'),
    (probe(), ['host'], 'cann_state: options must be a dict'),
])
def test_the_filter_names_a_wrong_input(probe_value, options, message):
    with pytest.raises(AnsibleFilterError, match=message):
        cann_state_filter(probe_value, WANTED, options)


def test_the_filter_is_the_collection_s():
    assert FilterModule().filters()['cann_state'] is cann_state_filter
