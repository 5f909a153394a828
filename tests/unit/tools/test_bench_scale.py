# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bookkeeping of `make bench-scale` (bench/scale.py): when a target is met, which steps grow
with N squared, and the projection to 1,000 and 10,000 nodes. The runs themselves are the lane's."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib.util
import os

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load_scale():
    spec = importlib.util.spec_from_file_location('npu_ascend_bench_scale', os.path.join(REPO_ROOT, 'bench', 'scale.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


scale = _load_scale()


def _run(cpu_per_node, wall, tasks=(), ssh=1, pss=100.0, changed=0):
    return {'wall_seconds': wall, 'controller_cpu_seconds_per_node': cpu_per_node, 'changed_tasks': changed,
            'ssh_connections': ssh, 'controller_memory': {'pss_mib': pss, 'rss_mib': pss * 2},
            'task_walls': [{'role': role, 'name': name, 'action': 'command', 'wall': task_wall,
                            'host_seconds': task_wall} for role, name, task_wall in tasks]}


def _point(nodes, cpu_per_node=1.0, converged_wall=10.0, noop_wall=5.0, tasks=(), forks=None, changed=0):
    runs = dict((name, _run(cpu_per_node, 10.0, tasks=tasks, ssh=nodes)) for name, _path in scale.RUNS)
    runs['converged-site'] = _run(cpu_per_node, converged_wall / 2, tasks=tasks, ssh=nodes, changed=changed)
    runs['converged-kubernetes'] = _run(cpu_per_node, converged_wall / 2, tasks=tasks, ssh=nodes)
    runs['noop'] = _run(cpu_per_node, noop_wall, tasks=tasks, ssh=nodes)
    return {'nodes': nodes, 'forks': forks or max(nodes, 10), 'runs': runs}


def _target(results, starts_with):
    return next(t for t in results['targets'] if t['target'].startswith(starts_with))


def test_flat_cost_per_node_meets_the_flatness_target():
    results = {'points': [_point(1, 3.0), _point(10, 1.0), _point(100, 1.25)]}
    scale.evaluate(results)
    target = _target(results, 'controller CPU per node')
    assert target['met'] is True
    assert results['ratios']['cpu_per_node_flatness'] == 1.25
    assert target['nodes'] == [10, 100]
    assert 'not both measured' not in target['value']


def test_growing_cost_per_node_misses_it_and_a_missing_point_is_named():
    results = {'points': [_point(10, 1.0), _point(25, 1.5)]}
    scale.evaluate(results)
    target = _target(results, 'controller CPU per node')
    assert target['met'] is False
    assert 'measured at N=25 against N=10' in target['value']


def test_a_single_fleet_size_is_not_judged_rather_than_met():
    results = {'points': [_point(10)]}
    scale.evaluate(results)
    assert _target(results, 'controller CPU per node')['met'] is None


def test_converged_over_noop_on_the_largest_fleet():
    results = {'points': [_point(10, converged_wall=50.0, noop_wall=5.0), _point(50, converged_wall=29.0,
                                                                                 noop_wall=10.0)]}
    scale.evaluate(results)
    target = _target(results, 'converged')
    assert results['ratios']['converged_over_noop'] == 2.9
    assert target['met'] is True
    assert 'N=100 not measured' in target['value']


def test_a_converged_run_that_changes_something_misses_the_target():
    results = {'points': [_point(100, converged_wall=10.0, noop_wall=10.0, changed=3)]}
    scale.evaluate(results)
    assert _target(results, 'converged')['met'] is False


def test_steps_are_not_judged_from_a_reference_below_ten_nodes():
    results = {'points': [_point(1), _point(2)]}
    scale.evaluate(results)
    assert _target(results, 'no step')['met'] is None


def test_a_step_whose_cost_per_node_grows_with_n_is_flagged():
    # Linear: wall proportional to N (per node flat). Quadratic: wall proportional to N squared.
    linear = [('probe', 'linear %d' % index, 1.0) for index in range(5)]
    small = _point(10, tasks=linear + [('report', 'per host over hostvars', 1.0), ('hdk', 'tiny', 0.01)])
    large = _point(100, tasks=[(role, name, wall * 10) for role, name, wall in linear]
                   + [('report', 'per host over hostvars', 100.0), ('hdk', 'tiny', 0.5)])
    flagged, worst, threshold = scale.quadratic_steps(small, large)
    assert threshold == 5.5
    assert set(row['name'] for row in flagged) == {'per host over hostvars'}
    assert all(row['run'] in dict(scale.RUNS) for row in flagged)
    # Too small to matter, though it grew: listed among the worst, not flagged.
    assert any(row['name'] == 'tiny' and not row['flagged'] for row in worst)
    results = {'points': [small, large]}
    scale.evaluate(results)
    target = _target(results, 'no step')
    assert target['met'] is False
    assert 'per host over hostvars' in target['value']


def test_a_machine_busier_for_the_large_fleet_slows_every_step_alike_and_flags_none():
    tasks = [('probe', 'step %d' % index, 1.0 + index) for index in range(6)]
    small = _point(10, tasks=tasks)
    # Every step 2.5x slower per node: the load, not the steps.
    large = _point(25, tasks=[(role, name, wall * 2.5 * 2.5) for role, name, wall in tasks])
    flagged, worst, _threshold = scale.quadratic_steps(small, large)
    assert flagged == []
    assert worst[0]['raw_growth'] == 2.5 and worst[0]['per_node_growth'] == 1.0


def test_a_task_repeated_in_a_run_is_compared_with_its_own_occurrence():
    small = _point(10, tasks=[('outcome', 'summary', 1.0), ('outcome', 'summary', 0.1)])
    large = _point(100, tasks=[('outcome', 'summary', 10.0), ('outcome', 'summary', 1.0)])
    flagged, _worst, _threshold = scale.quadratic_steps(small, large)
    assert flagged == []


def test_projection_adds_installer_waves_and_the_controllers_cpu():
    figures = {'first_cpu_seconds_per_node': 10.0, 'converged_cpu_seconds_per_node': 2.0,
               'memory_base_mib': 100.0, 'memory_mib_per_fork': 40.0, 'ssh_connections_per_node': 3.0}
    # 1,000 nodes on 8 cores at 80%: 10,000 CPU s / 6.4 = 1562.5 s; 20 waves of 50 x 1280 s = 25,600 s.
    one = scale.project(figures, 1000, controllers=1, cores=8, forks=50)
    assert one['first_installer_waves'] == 20
    assert one['first_cpu_bound_seconds'] == 1562.5
    assert one['first_seconds'] == 25600.0 + 1562.5
    assert one['converged_seconds'] == 312.5
    assert one['memory_mib_per_controller'] == 100 + 50 * 40
    assert one['ssh_connections'] == 3000
    # Forks for every node: one wave of installers.
    wide = scale.project(figures, 1000, controllers=1, cores=8, forks=1000)
    assert wide['first_seconds'] == 1280.0 + 1562.5


def test_memory_per_fork_is_the_slope_over_the_workers():
    points = [_point(1), _point(10), _point(25)]
    for point, pss in zip(points, (100.0, 460.0, 1060.0)):
        for entry in point['runs'].values():
            entry['controller_memory']['pss_mib'] = pss
    # Workers: min(N, forks) = 1, 10, 25; 100 MiB + 40 MiB per worker.
    assert scale.memory_fit(points) == (60.0, 40.0)
    assert scale.memory_fit(points[:1]) == (0.0, 100.0)


def test_projection_slices_evenly_over_execution_nodes():
    figures = {'first_cpu_seconds_per_node': 10.0, 'converged_cpu_seconds_per_node': 2.0,
               'memory_base_mib': 0.0, 'memory_mib_per_fork': 40.0, 'ssh_connections_per_node': 3.0}
    sliced = scale.project(figures, 10000, controllers=10, cores=8, forks=1000)
    alone = scale.project(figures, 1000, controllers=1, cores=8, forks=1000)
    assert sliced['nodes_per_controller'] == 1000
    assert sliced['first_seconds'] == alone['first_seconds']
    assert sliced['converged_seconds'] == alone['converged_seconds']
    uneven = scale.project(figures, 1001, controllers=4, cores=8, forks=50)
    assert uneven['nodes_per_controller'] == 251


def test_projections_use_the_largest_complete_point():
    results = {'points': [_point(10, 2.0), _point(25, 1.0)]}
    rows = scale.projections(results)
    assert results['per_node']['nodes'] == 25
    assert results['per_node']['first_cpu_seconds_per_node'] == 4.0
    assert sorted(set(row['nodes'] for row in rows)) == [1000, 10000]


def test_the_counting_proxy_replaces_only_the_proxy_command():
    common = ('-o ProxyCommand="/repo/sandbox/podman.sh exec -i %h /usr/sbin/sshd -i" '
              '-o StrictHostKeyChecking=no -o LogLevel=ERROR')
    replaced = scale.counting_proxy(common, proxy='/repo/bench/ssh_proxy_count.sh', counter='/tmp/count',
                                    repo='/repo')
    assert replaced == ('-o ProxyCommand="/repo/bench/ssh_proxy_count.sh /tmp/count /repo %h" '
                        '-o StrictHostKeyChecking=no -o LogLevel=ERROR')


@pytest.mark.parametrize('points, expected', [
    ([1, 10, 25], (10, 25)),
    ([1, 2], (1, 2)),
    ([1, 10], (1, 10)),
    ([1, 25, 100], (25, 100)),
    ([10, 50, 100], (10, 100)),
])
def test_pick_points(points, expected):
    picked = scale.pick_points([{'nodes': n} for n in points], 10, 100)
    assert (picked[0]['nodes'], picked[1]['nodes']) == expected
    assert scale.pick_points([{'nodes': 10}], 10, 100) is None


def test_a_light_node_masks_only_what_no_role_reads():
    import io
    import tarfile
    fleet = scale.fleet
    with tarfile.open(fileobj=io.BytesIO(fleet.light_node_overlay())) as archive:
        members = dict((member.name, member) for member in archive.getmembers())
        journald = archive.extractfile('etc/systemd/journald.conf.d/sandbox-light.conf').read().decode()
    masked = sorted(name.rsplit('/', 1)[1] for name, member in members.items() if member.issym())
    assert masked == sorted(fleet.LIGHT_NODE_MASKED)
    assert all(members['etc/systemd/system/' + unit].linkname == '/dev/null' for unit in masked)
    # What the roles need stays: containerd (the runtime checks), logind and D-Bus (`shutdown -r`).
    assert not set(masked) & {'containerd.service', 'systemd-logind.service', 'dbus.service', 'dbus.socket'}
    assert 'Storage=volatile' in journald
    # A light node is another node: `up` recreates one that was not.
    spec = dict(name='scl-001', product='Atlas 800I A2')
    assert fleet.NodeSpec(light=True, **spec).hardware_fingerprint() != fleet.NodeSpec(**spec).hardware_fingerprint()


def _task(role, name, action, wall):
    return {'role': role, 'name': name, 'action': action, 'wall': wall, 'host_seconds': wall}


def test_long_steps_count_the_installer_starts_and_waits_and_the_reboot_of_the_install_roles_only():
    tasks = [
        _task('npu.ascend.packages', 'npu.ascend.packages : Start the installers on every node: driver 25.0.rc1.1', 'npu.ascend.ascend_runfile', 10.0),
        _task('npu.ascend.packages', 'npu.ascend.packages : Wait on every node for the installers of firmware and driver',
              'ansible.builtin.async_status', 40.0),
        _task('npu.ascend.hdk', 'npu.ascend.hdk : Wait until the node answers again (1)',
              'ansible.builtin.wait_for_connection', 30.0),
        _task('npu.ascend.hdk', 'npu.ascend.hdk : Wait for the NPU device nodes after the reboot',
              'ansible.builtin.wait_for', 5.0),
        _task('npu.ascend.packages', 'npu.ascend.packages : Wait on every node for the installers of CANN',
              'ansible.builtin.async_status', 20.0),
        # An uninstall elsewhere, or a task of another role, is not an installer of the first run.
        _task('npu.ascend.preflight', 'npu.ascend.preflight : Read the node', 'npu.ascend.ascend_facts', 99.0),
        _task('npu.ascend.hdk', 'npu.ascend.hdk : Create the HwHiAiUser user', 'ansible.builtin.user', 7.0),
    ]
    assert scale.long_step_walls(tasks) == {'installer_wall_seconds': 70.0, 'installer_tasks': 3,
                                            'reboot_wall_seconds': 35.0, 'reboot_tasks': 2}


def _installer_point(nodes, forks, wall):
    return {'nodes': nodes, 'forks': forks, 'runs': {'first-site': {'long_steps': {
        'installer_wall_seconds': wall, 'installer_tasks': 12, 'reboot_wall_seconds': 30.0, 'reboot_tasks': 6}}}}


@pytest.mark.parametrize('big_wall, big_forks, met', [(140.0, 10, True), (160.0, 10, False), (100.0, 50, False)])
def test_the_installer_target_needs_fewer_forks_than_nodes_and_at_most_one_and_a_half_times_n10(
        big_wall, big_forks, met):
    results = {'points': [_installer_point(10, 10, 100.0), _installer_point(50, big_forks, big_wall)]}
    targets, ratios = [], {}
    scale.installer_target(results, targets, ratios)
    assert targets[0]['met'] is met and targets[0]['nodes'] == [10, 50]


def test_the_installer_target_with_one_fleet_size_is_not_judged():
    targets = []
    scale.installer_target({'points': [_installer_point(10, 10, 100.0)]}, targets, {})
    assert targets[0]['met'] is None and 'not judged' in targets[0]['value']
