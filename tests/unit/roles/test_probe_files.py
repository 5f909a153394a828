# -*- coding: utf-8 -*-
"""Preflight's probe reads the files the later roles write, at the paths those roles write them."""

import os

import yaml

from ansible_collections.npu.ascend.plugins.modules import ascend_facts

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _load(*parts):
    with open(os.path.join(REPO, *parts)) as handle:
        return yaml.safe_load(handle)


def test_preflight_reads_cann_s_script_where_cann_writes_it_by_default():
    cann_default = _load('roles', 'cann', 'defaults', 'main.yml')['cann_profile_script']
    probe_files = _load('roles', 'preflight', 'vars', 'main.yml')['__preflight_probe_files']
    assert probe_files == ["{{ cann_profile_script | default('%s') }}" % cann_default]


def test_cann_compares_every_key_the_probe_reports_for_a_file(tmp_path):
    """cann skips its template only when the probe's entry equals __cann_profile_wanted as a whole:
    a key the probe reports that the wanted entry lacks would make them differ on every run."""
    script = tmp_path / 'ascend-cann.sh'
    script.write_text('# script\n')
    reported = ascend_facts.file_states([str(script)])[str(script)]
    wanted = _load('roles', 'cann', 'vars', 'main.yml')['__cann_profile_wanted']
    assert sorted(wanted) == sorted(reported)
    assert wanted['mode'] == '0644' and wanted['uid'] == 0 and wanted['gid'] == 0
