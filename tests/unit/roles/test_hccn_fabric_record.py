# -*- coding: utf-8 -*-
"""The hccn role writes the fabric marker where ascend_facts reads it, inside the collection's state
directory that uninstall.yml cleans, and uninstall removes it (/etc/hccn.conf stays)."""

import os

import yaml

from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _load(*parts):
    with open(os.path.join(REPO, *parts)) as handle:
        return yaml.safe_load(handle)


def test_the_role_writes_the_marker_where_the_probe_reads_it():
    assert _load('roles', 'hccn', 'vars', 'main.yml')['__hccn_fabric_marker'] == fabric_marker.FABRIC_MARKER_PATH


def test_uninstall_removes_the_marker_and_leaves_hccn_conf():
    play = _load('playbooks', 'uninstall.yml')[0]
    assert os.path.dirname(fabric_marker.FABRIC_MARKER_PATH) in play['vars']['__uninstall_own_dir_paths']
    text = yaml.safe_dump(play['tasks'])
    assert "name: npu.ascend.hccn" in text and 'tasks_from: uninstall' in text
    tasks = _load('roles', 'hccn', 'tasks', 'uninstall.yml')
    assert [task['ansible.builtin.file'] for task in tasks] == [{'path': '{{ __hccn_fabric_marker }}', 'state': 'absent'}]
    assert 'hccn.conf' not in yaml.safe_dump(tasks)
