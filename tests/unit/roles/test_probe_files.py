# -*- coding: utf-8 -*-
"""Preflight's probe reads the files the later roles write, at the paths those roles write them."""

import os

import yaml

from ansible_collections.npu.ascend.plugins.modules import ascend_facts

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _load(*parts):
    with open(os.path.join(REPO, *parts)) as handle:
        return yaml.safe_load(handle)


def test_preflight_reads_the_files_where_cann_and_container_runtime_write_them_by_default():
    cann = _load('roles', 'cann', 'defaults', 'main.yml')
    runtime = _load('roles', 'container_runtime', 'defaults', 'main.yml')
    probe_files = _load('roles', 'preflight', 'vars', 'main.yml')['__preflight_probe_files']
    assert probe_files == [
        "{{ %s | default('%s') }}" % (name, defaults[name])
        for defaults, name in ((cann, 'cann_profile_script'), (runtime, 'container_runtime_containerd_config'),
                               (runtime, 'container_runtime_containerd_drop_in_path'))]


def test_cann_compares_every_key_the_probe_reports_for_a_file(tmp_path):
    """cann skips its template only when the probe's entry equals __cann_profile_wanted as a whole:
    a key the probe reports that the wanted entry lacks would make them differ on every run."""
    script = tmp_path / 'ascend-cann.sh'
    script.write_text('# script\n')
    reported = ascend_facts.file_states([str(script)])[str(script)]
    wanted = _load('roles', 'cann', 'vars', 'main.yml')['__cann_profile_wanted']
    assert sorted(wanted) == sorted(reported)
    assert wanted['mode'] == '0644' and wanted['uid'] == 0 and wanted['gid'] == 0
