# -*- coding: utf-8 -*-
"""What the profiling role decides (plugin_utils/profiling_state.py) and the filter that exposes it."""

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings, strategies as st

from ansible_collections.npu.ascend.plugins.filter.profiling_state import FilterModule, profiling_state
from ansible_collections.npu.ascend.plugins.plugin_utils import profiling_state as ps

SET_ENV = '/usr/local/Ascend/cann/set_env.sh'
PROBE = {'installed': {'toolkit': {'version': '8.5.0', 'set_env': SET_ENV}}, 'paths_present': []}
OPTIONS = {'host': 'npu-01', 'operators': ['alice', 'bob'], 'device_group': 'HwHiAiUser',
           'install_path': '/usr/local/Ascend', 'set_env': '', 'output_root': '/var/lib/ascend-profiling',
           'verify_command': ['npu-smi', 'info'], 'verify_timeout_seconds': 300}
MANAGER = {'stat': {'exists': True, 'gr_name': 'HwHiAiUser', 'mode': '0660', 'rgrp': True, 'wgrp': True}}
READY = {'passwd': {'alice': ['x', '1001', '1001'], 'bob': ['x', '1002', '1002']}, 'group': {'HwHiAiUser': []},
         'manager': MANAGER}


def state(probe=None, evidence=None, **options):
    return ps.role_state(PROBE if probe is None else probe, dict(OPTIONS, **options), dict(READY, **(evidence or {})))


def test_a_ready_node_sources_the_installed_toolkit():
    ready = state()
    assert (ready['set_env'], ready['missing_operators'], ready['problem']) == (SET_ENV, [], None)
    assert ready['probe_failures'] == [] and ready['verify_failures'] == []


def test_a_named_set_env_is_used_only_when_it_exists():
    assert state(dict(PROBE, paths_present=['/opt/x/set_env.sh']), set_env='/opt/x/set_env.sh')['set_env'] == \
        '/opt/x/set_env.sh'
    gone = state(set_env='/opt/x/set_env.sh')
    assert gone['set_env'] == '' and gone['problem'] == (
        "npu-01: profiling: no file /opt/x/set_env.sh (profiling_set_env). Fix: install CANN first (npu.ascend.cann) "
        "or set profiling_set_env to the toolkit's set_env.sh.")
    assert state({'installed': {'toolkit': None}})['problem'].startswith(
        'npu-01: profiling: no CANN toolkit under /usr/local/Ascend. Fix: install CANN first')


@pytest.mark.parametrize('evidence, expected', [
    ({'passwd': {'bob': []}}, 'the operators alice have no account on the node. Fix: create their accounts'),
    ({'group': {}}, 'the group HwHiAiUser does not exist. Fix: install the driver (npu.ascend.hdk creates HwHiAiUser)'),
    ({'manager': {'stat': {'exists': False}}},
     '/dev/davinci_manager is missing: the driver is not loaded. Fix: install the driver and reboot'),
    ({'manager': {'stat': dict(MANAGER['stat'], gr_name='root')}},
     '/dev/davinci_manager belongs to group root with mode 0660, so members of HwHiAiUser could not open it. Fix: set '
     'profiling_device_group to root, or reinstall the driver with the wanted --install-usergroup.'),
    ({'manager': {'stat': dict(MANAGER['stat'], mode='0640', wgrp=False)}},
     '/dev/davinci_manager belongs to group HwHiAiUser with mode 0640, so members of HwHiAiUser could not open it.'),
])
def test_a_node_not_ready_is_named_with_the_fix(evidence, expected):
    assert state(evidence=evidence)['problem'].startswith('npu-01: profiling: ' + expected)


def test_each_operator_who_cannot_profile_gets_a_message():
    probes = {'results': [
        {'__profiling_operator': 'alice', 'stdout_lines': ['msprof=']},
        {'__profiling_operator': 'bob', 'stdout_lines': ['msprof=/x/msprof', 'denied=/dev/davinci0', 'denied=/dev/davinci1']},
        {'__profiling_operator': 'carol', 'stdout_lines': ['msprof=/x/msprof']},
        {'__profiling_operator': 'dave', 'skipped': True},
    ]}
    assert state(evidence={'probes': probes})['probe_failures'] == [
        'npu-01: profiling: alice finds no msprof after sourcing %s. Fix: install the CANN toolkit completely (its '
        'tools/profiler/bin/msprof), or point profiling_set_env at the set_env.sh that puts it on PATH.' % SET_ENV,
        'npu-01: profiling: bob may not read and write /dev/davinci0, /dev/davinci1. Fix: make sure the devices belong '
        'to HwHiAiUser with mode 0660 (the driver sets this), then log in again.']


def _found(*paths):
    return {'files': [{'path': path} for path in paths]}


def test_verify_stats_the_new_profile_and_names_every_run_that_left_none():
    before = {'results': [_found('/p/alice/PROF_1'), _found()]}
    after = {'results': [_found('/p/alice/PROF_1', '/p/alice/PROF_2'), _found()]}
    assert state(evidence={'before': before, 'after': after})['new_profiles'] == [
        '/p/alice/PROF_2/mindstudio_profiler_output', '/nonexistent']
    runs = {'results': [{'rc': 0}, {'rc': 124, 'stderr': '', 'stdout': ' timed out \n'}]}
    outputs = {'results': [{'stat': {'exists': False}}, {'stat': {'exists': False}}]}
    failures = state(evidence={'runs': runs, 'outputs': outputs})['verify_failures']
    fix = ('. Fix: run the same as that user (source set_env.sh, then msprof --output=... <command>) and read its '
           'messages and its log in the output directory.')
    assert failures == [
        'npu-01: profiling: msprof as alice around `npu-smi info` wrote no PROF_* directory with '
        'mindstudio_profiler_output in /var/lib/ascend-profiling/alice' + fix,
        'npu-01: profiling: msprof as bob around `npu-smi info` exited 124 (stopped after 300 s): timed out' + fix]
    done = state(evidence={'runs': {'results': [{'rc': 0}]}, 'outputs': {'results': [{'stat': {'exists': True}}]}})
    assert done['verify_failures'] == []


def test_long_output_is_cut_at_a_word_like_jinja_truncate():
    assert ps.shorten('short') == 'short'
    text = 'word ' * 200
    cut = ps.shorten(text)
    assert cut.endswith('word...') and len(cut) <= 400


def test_the_filter_refuses_bad_input():
    assert FilterModule().filters() == {'profiling_state': profiling_state}
    with pytest.raises(AnsibleFilterError, match='expects what npu.ascend.ascend_facts returned'):
        profiling_state(None)
    with pytest.raises(AnsibleFilterError, match='evidence must be a dict'):
        profiling_state({}, {}, [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(['msprof=', 'msprof=/bin/msprof', 'denied=/dev/davinci3']),
                          st.text(max_size=20)), max_size=6))
def test_any_probe_output_gives_at_most_one_message_naming_the_operator(lines):
    failures = state(evidence={'probes': {'results': [{'__profiling_operator': 'alice', 'stdout_lines': lines}]}})[
        'probe_failures']
    has_msprof = any(line.startswith('msprof=') and len(line) > 7 for line in lines)
    denied = any(line.startswith('denied=') for line in lines)
    assert len(failures) == (0 if has_msprof and not denied else 1)
    assert all(failure.startswith('npu-01: profiling: alice ') and 'Fix: ' in failure for failure in failures)
