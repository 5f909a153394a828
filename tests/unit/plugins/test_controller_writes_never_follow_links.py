# -*- coding: utf-8 -*-
"""controller_files and fleet_report_write as an attacker (or a careless link) sees them: links planted in
the directories they write never lead a write, a chmod or a copy outside, and a report file the operator
made private stays private."""
import json
import os
import stat

import pytest

from test_controller_files_action import _run as _run_files
from test_fleet_report_write_action import _hostvars, _run as _run_report

KEY = b'-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n'


@pytest.fixture
def victim(tmp_path):
    outside = tmp_path / 'operator'
    outside.mkdir()
    key = outside / 'id_ed25519'
    key.write_bytes(KEY)
    key.chmod(0o600)
    return key


def _untouched(victim):
    return (victim.read_bytes() == KEY and stat.S_IMODE(victim.stat().st_mode) == 0o600
            and os.listdir(str(victim.parent)) == [victim.name])


def test_controller_files_does_not_write_through_a_directory_link_inside_its_directory(tmp_path, victim):
    monitoring = tmp_path / 'monitoring'
    monitoring.mkdir()
    (monitoring / 'rules').symlink_to(victim.parent)
    result = _run_files(tmp_path, files={'rules/id_ed25519': 'overwritten\n', 'rules/new.yml': 'groups: []\n'})
    assert result['failed'] and 'outside' in result['msg'] and 'Fix:' in result['msg'], result
    assert _untouched(victim)


def test_controller_files_does_not_chmod_through_a_directory_link(tmp_path, victim):
    monitoring = tmp_path / 'monitoring'
    monitoring.mkdir()
    (monitoring / 'rules').symlink_to(victim.parent)
    # Same bytes, another mode: the action would only chmod.
    result = _run_files(tmp_path, files={'rules/id_ed25519': KEY.decode()})
    assert result['failed'] and 'outside' in result['msg'], result
    assert _untouched(victim)


def test_controller_files_does_not_create_directories_through_a_link(tmp_path, victim):
    monitoring = tmp_path / 'monitoring'
    monitoring.mkdir()
    (monitoring / 'rules').symlink_to(victim.parent)
    result = _run_files(tmp_path, files={'rules/deeper/alerts.yml': 'groups: []\n'})
    assert result['failed'], result
    assert _untouched(victim)


def test_a_link_planted_between_the_plan_and_the_write_is_not_written_through(tmp_path, victim, monkeypatch):
    from ansible_collections.npu.ascend.plugins.plugin_utils import controller_files
    plan = controller_files.plan_writes

    def plan_then_plant(directory, files, mode):
        changes = plan(directory, files, mode)
        os.symlink(str(victim), os.path.join(directory, 'prometheus.yml'))
        return changes
    (tmp_path / 'monitoring').mkdir()
    monkeypatch.setattr(controller_files, 'plan_writes', plan_then_plant)
    result = _run_files(tmp_path, files={'prometheus.yml': 'rule_files: []\n'})
    assert result['failed'] and 'symbolic link' in result['msg'], result
    assert _untouched(victim)


def test_the_previous_report_is_never_copied_from_a_link(tmp_path, victim):
    reports = tmp_path / 'reports'
    reports.mkdir()
    (reports / 'fleet-report.json').symlink_to(victim)
    result = _run_report(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=[])
    assert result['failed'] and 'symbolic link' in result['msg'] and 'Fix:' in result['msg'], result
    assert _untouched(victim)
    assert not (reports / 'fleet-report.previous.json').exists()
    assert 'PRIVATE KEY' not in json.dumps(result)


def test_report_files_the_operator_made_private_stay_private(tmp_path):
    _run_report(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=['markdown'])
    reports = tmp_path / 'reports'
    for name in ('fleet-report.json', 'fleet-report.md'):
        (reports / name).chmod(0o600)
    result = _run_report(tmp_path, _hostvars(), ['node-a', 'node-b'], formats=['markdown'])
    assert not result.get('failed'), result
    for name in ('fleet-report.json', 'fleet-report.md', 'fleet-report.previous.json'):
        assert stat.S_IMODE((reports / name).stat().st_mode) == 0o600, name


def test_a_parts_directory_that_is_a_link_is_not_written_into(tmp_path, victim):
    reports = tmp_path / 'reports'
    reports.mkdir()
    (reports / 'parts').symlink_to(victim.parent)
    result = _run_report(tmp_path, _hostvars(), ['node-a', 'node-b'], part='s1', formats=[])
    assert result['failed'] and 'outside' in result['msg'], result
    assert _untouched(victim)


def test_a_part_that_is_a_link_is_neither_read_nor_moved(tmp_path, victim):
    written = _run_report(tmp_path, _hostvars(), ['node-a', 'node-b'], part='s1', formats=[])
    assert not written.get('failed'), written
    parts = tmp_path / 'reports' / 'parts'
    (parts / 's2.json').symlink_to(victim)
    result = _run_report(tmp_path, {}, [], hosts=[], merge_parts=True)
    assert result['failed'] and 'symbolic link' in result['msg'], result
    assert 'PRIVATE KEY' not in json.dumps(result) and 'b3BlbnNzaC1' not in json.dumps(result)
    assert _untouched(victim) and os.path.islink(str(parts / 's2.json'))
