#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draws bench/results.png from bench/results.json (run with .cache/bench/venv's python).

    .cache/bench/venv/bin/python bench/chart.py bench/results.json bench/results.png
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=wrong-import-position

SITE_COLOUR = '#4477aa'
KUBERNETES_COLOUR = '#66ccee'
FLOOR_COLOUR = '#bbbbbb'
NAIVE_COLOUR = '#ee6677'


def phase_bars(results):
    """(label, [(seconds, colour, legend)]) from top to bottom."""
    bars = []
    naive = results.get('naive')
    if naive:
        bars.append(('naive baseline\n(node after node)', [(naive['wall_seconds'], NAIVE_COLOUR, 'naive script')]))
        bars.append(('installers, sum\nover all nodes', [(naive['installer_seconds_total'], FLOOR_COLOUR, 'floor')]))
        bars.append(('installers of\nthe longest node', [(naive['installer_seconds_longest_node'], FLOOR_COLOUR,
                                                         'floor')]))
    one_node = next((point for point in results.get('scale', []) if point['nodes'] == 1), None)
    if one_node and results['settings']['nodes'] > 1:
        bars.append(('first run,\none node', [(one_node['first']['wall_seconds'], SITE_COLOUR, 'site.yml')]))
    for phase in ('first', 'converged'):
        bars.append(('%s run' % phase, [(results[phase]['site']['wall_seconds'], SITE_COLOUR, 'site.yml'),
                                        (results[phase]['kubernetes']['wall_seconds'], KUBERNETES_COLOUR,
                                         'kubernetes.yml')]))
    bars.append(('no-op floor', [(results['noop']['wall_seconds'], FLOOR_COLOUR, 'floor')]))
    return bars


def draw_phases(axis, results):
    bars = phase_bars(results)
    seen = set()
    for position, (label, segments) in enumerate(reversed(bars)):
        left = 0.0
        for seconds, colour, legend in segments:
            axis.barh(position, seconds, left=left, color=colour,
                      label=None if legend in seen else legend)
            seen.add(legend)
            left += seconds
        axis.text(left, position, ' %.0f s' % left, va='center', fontsize=8)
    axis.set_yticks(range(len(bars)))
    axis.set_yticklabels([label for label, _segments in reversed(bars)], fontsize=8)
    axis.set_xlabel('seconds (wall clock)')
    settings = results['settings']
    load = results['load_average']
    axis.set_title('make bench: %d nodes, installers at %s x Huawei\'s, forks %d; load average %.1f at start, '
                   '%.1f at end' % (settings['nodes'], settings['install_scale'], settings['forks'],
                                    load['start'][0], load['end'][0]), fontsize=9)
    axis.legend(fontsize=8, loc='lower right')
    axis.margins(x=0.15)


def draw_scale(cpu_axis, tasks_axis, results):
    """Per-node cost of site.yml as the fleet grows: flat lines are the goal."""
    curve = results['scale']
    sizes = [point['nodes'] for point in curve]
    for phase, colour in (('first', SITE_COLOUR), ('converged', KUBERNETES_COLOUR)):
        cpu_axis.plot(sizes, [point[phase]['controller_cpu_seconds_per_node'] for point in curve], 'o-',
                      color=colour, label='%s run' % phase)
        tasks_axis.plot(sizes, [point[phase]['tasks_per_node_max'] for point in curve], 'o-', color=colour,
                        label='%s run' % phase)
    tasks_axis.axhline(20, color=NAIVE_COLOUR, linestyle='--', linewidth=1, label='target, converged')
    for axis, label in ((cpu_axis, 'controller CPU seconds per node'), (tasks_axis, 'tasks per node (most)')):
        axis.set_xscale('log', base=2)
        axis.set_xticks(sizes)
        axis.set_xticklabels([str(size) for size in sizes])
        axis.set_xlabel('nodes in the fleet')
        axis.set_ylabel(label, fontsize=8)
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=8)
    cpu_axis.set_title('site.yml: controller CPU per node', fontsize=9)
    tasks_axis.set_title('site.yml: tasks per node', fontsize=9)


def draw_levers(axis, levers):
    for position, lever in enumerate(reversed(levers)):
        axis.barh(position, lever['wall_seconds'], color=SITE_COLOUR)
        axis.text(lever['wall_seconds'], position, ' %.0f s' % lever['wall_seconds'], va='center', fontsize=8)
    axis.set_yticks(range(len(levers)))
    axis.set_yticklabels([lever['lever'] for lever in reversed(levers)], fontsize=8)
    axis.set_xlabel('seconds (wall clock)')
    axis.set_title('converged site.yml under each lever, one at a time', fontsize=9)
    axis.margins(x=0.15)


def draw(results, out):
    levers = [lever for lever in results.get('levers', []) if 'wall_seconds' in lever]
    rows = 3 if levers else 2
    figure = plt.figure(figsize=(10, 4.5 * rows))
    grid = figure.add_gridspec(rows, 2)
    draw_phases(figure.add_subplot(grid[0, :]), results)
    draw_scale(figure.add_subplot(grid[1, 0]), figure.add_subplot(grid[1, 1]), results)
    if levers:
        draw_levers(figure.add_subplot(grid[2, :]), levers)
    figure.tight_layout()
    figure.savefig(out, dpi=100)


def main(argv):
    if len(argv) != 3:
        print('usage: chart.py RESULTS.json OUT.png', file=sys.stderr)
        return 2
    with open(argv[1]) as handle:
        results = json.load(handle)
    draw(results, argv[2])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
