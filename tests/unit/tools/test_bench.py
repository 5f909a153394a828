# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bookkeeping of `make bench` (bench/run.py): what it counts per node, how it extrapolates
the naive baseline, and when it calls a target met. The runs themselves are `make bench`."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib.util
import os

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load_bench():
    spec = importlib.util.spec_from_file_location('npu_ascend_bench_run', os.path.join(REPO_ROOT, 'bench', 'run.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


def _task(name, action, hosts, role=None, delegated=False):
    return {'name': name, 'action': action, 'role': role, 'delegated_to_controller': delegated,
            'wall': 1.0, 'host_seconds': float(len(hosts)),
            'hosts': dict((host, {'status': status, 'start': 0.0, 'end': 1.0, 'changed': False})
                          for host, status in hosts.items())}


def _document(tasks, hosts, controller_cpu=8.0, changed=0, copied=0):
    return {'process_seconds': 10.0, 'wall_seconds': 9.5, 'controller_cpu_seconds': controller_cpu,
            'nodes_cpu_seconds': 3.0, 'changed_tasks': changed,
            'hosts': dict((host, {'changed': 0}) for host in hosts),
            'copied': {'bytes': copied, 'files': 1 if copied else 0, 'by_host': {},
                       'by_role': {bench.PACKAGES_ROLE: copied} if copied else {}},
            'tasks': tasks}


def test_tasks_per_node_count_what_ran_and_round_trips_what_reached_the_node():
    tasks = [
        _task('Gathering Facts', 'gather_facts', {'a': 'ok', 'b': 'ok'}),
        _task('probe', 'npu.ascend.ascend_facts', {'a': 'ok', 'b': 'ok'}),
        _task('install', 'npu.ascend.ascend_runfile', {'a': 'skipped', 'b': 'ok'}),
        _task('decide', 'ansible.builtin.set_fact', {'a': 'ok', 'b': 'ok'}),
        _task('role', 'include_role', {'a': 'ok'}),
        _task('node object', 'kubernetes.core.k8s_info', {'a': 'ok', 'b': 'failed'}, delegated=True),
    ]
    counts = bench.per_host_tasks(_document(tasks, ['a', 'b']))
    # (run, round trips, skipped)
    assert counts == {'a': (5, 2, 1), 'b': (5, 3, 0)}


def test_tasks_run_once_for_the_fleet_are_counted_apart():
    summarise = _task('summarise', 'ansible.builtin.debug', {'a': 'ok'})
    summarise['run_once'] = True
    read_cluster = _task('read the cluster', 'kubernetes.core.k8s_info', {'a': 'ok'})
    read_cluster['run_once'] = True
    unused = _task('stop', 'ansible.builtin.fail', {'a': 'skipped'})
    unused['run_once'] = True
    tasks = [_task('probe', 'npu.ascend.ascend_facts', {'a': 'ok', 'b': 'ok'}), summarise, read_cluster, unused]
    document = _document(tasks, ['a', 'b'])
    # The k8s_info run once on a still reached node a: a round trip, not a task of a's own.
    assert bench.per_host_tasks(document) == {'a': (1, 2, 0), 'b': (1, 1, 0)}
    assert bench.run_once_tasks(document) == 2
    assert bench.summarize(document)['run_once_tasks'] == 2


def test_summary_per_node_figures():
    tasks = [_task('t%d' % index, 'ansible.builtin.command', {'a': 'ok', 'b': 'ok' if index < 3 else 'skipped'})
             for index in range(5)]
    summary = bench.summarize(_document(tasks, ['a', 'b'], controller_cpu=8.0))
    assert summary['nodes'] == 2
    assert summary['controller_cpu_seconds_per_node'] == 4.0
    assert summary['tasks_by_host'] == {'a': 5, 'b': 3}
    assert summary['skipped_by_host'] == {'a': 0, 'b': 2}
    assert summary['tasks_per_node_max'] == 5
    assert summary['tasks_per_node_mean'] == 4.0
    assert summary['tasks_run'] == 8


def test_naive_baseline_of_a_fleet_counts_each_node_as_its_model():
    measured = {
        'bench-01': {'wall_seconds': 100.0, 'installer_seconds': 80.0},  # Atlas 800I A2
        'bench-02': {'wall_seconds': 60.0, 'installer_seconds': 50.0},   # Atlas 300I Duo
    }
    assert bench.host_model('bench-03') == bench.host_model('bench-01')
    assert bench.host_model('bench-04') == bench.host_model('bench-02')
    naive = bench.naive_for_fleet(measured, 5)  # three A2, two Duo
    assert naive['wall_seconds'] == 3 * 100.0 + 2 * 60.0
    assert naive['installer_seconds_total'] == 3 * 80.0 + 2 * 50.0
    assert naive['installer_seconds_longest_node'] == 80.0
    assert bench.naive_for_fleet({'bench-01': measured['bench-01']}, 1)['wall_seconds'] == 100.0


def _run(wall, tasks_max=10, changed=0, copied=0, cpu_per_node=1.0, nodes=4):
    return {'wall_seconds': wall, 'changed_tasks': changed, 'copied_bytes': copied, 'tasks_run': tasks_max * nodes,
            'tasks_per_node_max': tasks_max, 'tasks_per_node_mean': float(tasks_max),
            'round_trips_per_node_max': tasks_max, 'controller_cpu_seconds_per_node': cpu_per_node,
            'controller_cpu_seconds': cpu_per_node * nodes, 'nodes_cpu_seconds': 1.0}


def _results(converged_site=10.0, converged_kubernetes=2.0, noop=6.0, converged_tasks=20, changed=0, copied=0,
             first_site=130.0, one_node_site=100.0, naive_wall=400.0, nodes=4, forks=10):
    first = _run(first_site, nodes=nodes)
    converged = _run(converged_site, tasks_max=converged_tasks, changed=changed, copied=copied, nodes=nodes)
    return {
        'settings': {'nodes': nodes, 'forks': forks},
        'naive': {'wall_seconds': naive_wall, 'installer_seconds_longest_node': 50.0},
        'scale': [{'nodes': 1, 'first': _run(one_node_site, nodes=1), 'converged': _run(5.0, nodes=1)},
                  {'nodes': nodes, 'first': first, 'converged': converged}],
        'first': {'site': first, 'kubernetes': _run(30.0), 'total': bench.combine(first, _run(30.0))},
        'converged': {'site': converged, 'kubernetes': _run(converged_kubernetes),
                      'total': bench.combine(converged, _run(converged_kubernetes))},
        'noop': _run(noop),
    }


def _met(results):
    bench.evaluate(results)
    return [target['met'] for target in results['targets']]


def test_every_target_met_at_its_boundary():
    # 12 s converged = 2.0 x the 6 s floor; 20 tasks; 130 s = 1.3 x 100 s; 400 / 130 > 0.7 x 4.
    results = _results()
    assert _met(results) == [True, True, True, True]
    assert len(results['targets']) == 4


@pytest.mark.parametrize('changes, missed', [
    ({'converged_site': 10.1}, 0),
    ({'changed': 1}, 0),
    ({'copied': 1}, 0),
    ({'converged_tasks': 21}, 1),
    ({'first_site': 131.0}, 2),
    ({'forks': 3}, 2),                 # fewer forks than nodes: the fleet cannot run in parallel
    ({'naive_wall': 0.7 * 4 * 130.0 - 1}, 3),
])
def test_each_target_is_missed_just_past_its_boundary(changes, missed):
    met = _met(_results(**changes))
    assert met == [index != missed for index in range(4)]


def _round(total, noop, changed=0, copied=0):
    return {'site': total - 1.0, 'kubernetes': 1.0, 'total': total, 'noop': noop, 'ratio': bench.ratio(total, noop),
            'changed_tasks': changed, 'copied_bytes': copied}


def test_the_converged_target_takes_the_median_round():
    results = _results()
    results['converged_rounds'] = [_round(15.0, 6.0), _round(11.0, 6.0), _round(12.6, 7.0)]
    assert _met(results)[0]
    assert results['ratios']['converged_over_noop'] == bench.ratio(11.0, 6.0)
    assert results['ratios']['converged_rounds'] == 3
    assert 'median of 3 rounds: 2.5x, 1.833x, 1.8x' in results['targets'][0]['value']
    results['converged_rounds'][1] = _round(13.0, 6.0)
    assert not _met(results)[0]


@pytest.mark.parametrize('spoiled', [{'changed': 1}, {'copied': 10}])
def test_a_change_in_any_round_misses_the_converged_target(spoiled):
    results = _results()
    results['converged_rounds'] = [_round(11.0, 6.0), _round(11.0, 6.0, **spoiled), _round(11.0, 6.0)]
    assert not _met(results)[0]


def test_scale_curve_flatness_ratio():
    results = _results()
    results['scale'][1]['first']['controller_cpu_seconds_per_node'] = 3.0
    bench.evaluate(results)
    assert results['ratios']['first_cpu_per_node_largest_over_one'] == 3.0
    assert results['ratios']['converged_cpu_per_node_largest_over_one'] == 1.0


def test_scale_points_argument():
    assert bench.scale_points_argument('8,1, 2,4,2') == [1, 2, 4, 8]
    for text in ('0,2', 'two', ''):
        with pytest.raises(Exception):
            bench.scale_points_argument(text)
