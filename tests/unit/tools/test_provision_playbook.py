# -*- coding: utf-8 -*-
"""npu.ascend.provision as ansible-playbook itself reads it (--list-hosts --list-tasks): its stages run in
order (preflight, host stack, Kubernetes, report), each play once, the report and the run's summary once at
the end, and each stage can be left out (--skip-tags) or picked (--tags) by its tag.

The plays are those of site.yml and kubernetes.yml, listed here the same way, so a play added to either
(without its stage tag, or run twice) fails these tests.
"""

import os
import re
import subprocess

import pytest

from conftest import COLLECTIONS_ROOT, playbook_binary

STAGES = ('preflight', 'host_stack', 'kubernetes', 'report')
INVENTORY = '''
all:
  children:
    npu_nodes:
      hosts:
        node-1:
        node-2:
'''
_PLAY = re.compile(r'^  play #\d+ \([^)]*\): (?P<name>.*?)\tTAGS: \[(?P<tags>[^\]]*)\]$')
_HOSTS = re.compile(r'^    hosts \((?P<count>\d+)\):$')
_TASK = re.compile(r'^      (?P<name>.*?)\tTAGS: \[(?P<tags>[^\]]*)\]$')
# The summary of the run (npu.ascend.outcome's main entry point) and the fleet report's writing task.
SUMMARY = "npu.ascend.outcome : Summarise how the run ended for every node"
REPORT = "npu.ascend.fleet_report : Write the report on the controller"


@pytest.fixture(scope='module')
def listing(tmp_path_factory):
    """List a playbook of the installed collection: per play its name, tags, host count and tasks."""
    inventory = tmp_path_factory.mktemp('inventory') / 'hosts.yml'
    inventory.write_text(INVENTORY)
    cache = {}

    def run(playbook, *options):
        key = (playbook,) + options
        if key not in cache:
            env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_ROOT, ANSIBLE_NOCOLOR='1', LC_ALL='C.UTF-8')
            argv = [playbook_binary(), '-i', str(inventory), 'npu.ascend.' + playbook, '--list-hosts',
                    '--list-tasks'] + list(options)
            completed = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       universal_newlines=True, timeout=120, check=False)
            assert completed.returncode == 0, completed.stdout
            cache[key] = _parse(completed.stdout)
        return cache[key]
    return run


def _parse(text):
    plays = []
    for line in text.splitlines():
        play, hosts, task = _PLAY.match(line), _HOSTS.match(line), _TASK.match(line)
        if play:
            plays.append({'name': play.group('name'), 'tags': _tags(play.group('tags')), 'hosts': None, 'tasks': []})
        elif hosts:
            plays[-1]['hosts'] = int(hosts.group('count'))
        elif task:
            plays[-1]['tasks'].append(task.group('name'))
    assert plays and all(play['hosts'] is not None for play in plays), text
    return plays


def _tags(text):
    return set(tag.strip() for tag in text.split(',') if tag.strip())


def _stage(play):
    stages = [stage for stage in STAGES if stage in play['tags']]
    assert len(stages) == 1, 'play %r has the stage tags %s; each play of provision needs exactly one of %s' % (
        play['name'], stages, STAGES)
    return stages[0]


def _running(plays):
    """The plays that get hosts."""
    return [play for play in plays if play['hosts']]


def _own_tasks(play):
    # Role argument validation is tagged always by Ansible; it is not the stage's work.
    return [task for task in play['tasks'] if 'Validating arguments against arg spec' not in task]


def test_the_stages_run_in_order_each_play_once(listing):
    plays = _running(listing('provision'))
    stages = [_stage(play) for play in plays]
    assert [stage for index, stage in enumerate(stages) if index == 0 or stages[index - 1] != stage] == list(STAGES)
    names = [play['name'] for play in plays]
    assert len(names) == len(set(names)), names
    # Exactly the plays of site.yml and of kubernetes.yml, in their order, then one report.
    site = [play['name'] for play in _running(listing('site')) if 'report' not in play['tags']]
    kubernetes = [play['name'] for play in _running(listing('kubernetes')) if 'report' not in play['tags']]
    report = [play['name'] for play in _running(listing('report'))]
    assert site and kubernetes and len(report) == 1
    assert names == site + kubernetes + report


def test_no_task_of_a_stage_runs_twice(listing):
    tasks = [task for play in _running(listing('provision')) for task in _own_tasks(play)]
    # Every stage records stopped nodes and checks the failure budget with npu.ascend.outcome; every other
    # role's task belongs to one stage.
    staged = [task for task in tasks if task.startswith('npu.ascend.') and not task.startswith('npu.ascend.outcome :')]
    repeated = sorted(set(task for task in staged if staged.count(task) > 1))
    assert staged and not repeated, repeated
    assert tasks.count(SUMMARY) == 1 and tasks.count(REPORT) == 1


def test_the_summary_and_report_come_once_at_the_end_and_every_play_has_hosts(listing):
    plays = listing('provision')
    reports = [play for play in plays if REPORT in play['tasks']]
    assert [play['hosts'] for play in reports] == [2]
    assert plays[-1] is reports[-1] and SUMMARY in plays[-1]['tasks']
    # No play prints "no hosts matched" (site.yml's and kubernetes.yml's reports were such plays).
    assert [play['name'] for play in plays if not play['hosts']] == []
    # Run on their own, site.yml and kubernetes.yml still report.
    for playbook in ('site', 'kubernetes'):
        assert REPORT in _running(listing(playbook))[-1]['tasks']


@pytest.mark.parametrize('skipped', STAGES)
def test_each_stage_can_be_left_out_by_its_tag(listing, skipped):
    plays = _running(listing('provision', '--skip-tags', skipped))
    for play in plays:
        if _stage(play) == skipped:
            assert play['tasks'] == [], play
        else:
            assert _own_tasks(play), play
    assert (SUMMARY in plays[-1]['tasks']) == (skipped != 'report')


def test_a_stage_alone_runs_after_preflight_and_before_the_summary(listing):
    plays = _running(listing('provision', '--tags', 'host_stack'))
    working = [_stage(play) for play in plays if _own_tasks(play)]
    assert working[0] == 'preflight' and working[-1] == 'report' and set(working) == {'preflight', 'host_stack', 'report'}
    assert _own_tasks(plays[-1]) == [SUMMARY, "npu.ascend.outcome : Publish the run's outcome for AWX (the stopped "
                                              "nodes and the retry command)"]
