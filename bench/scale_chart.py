#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Draws bench/scale-results.png from bench/scale-results.json (run with .cache/bench/venv's python).

    .cache/bench/venv/bin/python bench/scale_chart.py bench/scale-results.json bench/scale-results.png

Four panels against the fleet size N: wall seconds per run, controller CPU seconds per node per
run (flat is linear), the controller's peak memory and SSH connections per node.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=wrong-import-position

RUNS = ('preflight', 'first-site', 'converged-site', 'first-kubernetes', 'converged-kubernetes', 'report', 'noop')
STYLES = {
    'preflight': ('#228833', '-'), 'first-site': ('#4477aa', '-'), 'converged-site': ('#4477aa', '--'),
    'first-kubernetes': ('#66ccee', '-'), 'converged-kubernetes': ('#66ccee', '--'), 'report': ('#aa3377', '-'),
    'noop': ('#bbbbbb', ':'),
}


def series(points, run, key, sub=None):
    xs, ys = [], []
    for point in points:
        entry = point.get('runs', {}).get(run)
        if not entry:
            continue
        value = entry[key] if sub is None else entry[key][sub]
        xs.append(point['nodes'])
        ys.append(value)
    return xs, ys


def main(source, target):
    with open(source) as handle:
        results = json.load(handle)
    points = sorted(results.get('points', []), key=lambda p: p['nodes'])
    figure, axes = plt.subplots(2, 2, figsize=(13, 9))
    sizes = [point['nodes'] for point in points]
    for axis in (axes[0][0], axes[0][1], axes[1][0], axes[1][1]):
        if sizes and max(sizes) >= 10 * min(sizes):
            axis.set_xscale('log')
            axis.set_xticks(sizes)
            axis.set_xticklabels([str(size) for size in sizes])
    panels = (
        (axes[0][0], 'wall_seconds', None, 'wall seconds per run'),
        (axes[0][1], 'controller_cpu_seconds_per_node', None, 'controller CPU seconds per node (flat = linear)'),
        (axes[1][0], 'controller_memory', 'pss_mib', 'controller peak memory, MiB (PSS of ansible-playbook\'s tree)'),
    )
    for axis, key, sub, title in panels:
        for run in RUNS:
            xs, ys = series(points, run, key, sub)
            if xs:
                colour, style = STYLES[run]
                axis.plot(xs, ys, style, marker='o', color=colour, label=run)
        axis.set_title(title, fontsize=10)
        axis.set_xlabel('nodes (N)')
        axis.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize=8)
    axis = axes[1][1]
    for run in RUNS:
        xs, ys = series(points, run, 'ssh_connections')
        if xs:
            colour, style = STYLES[run]
            axis.plot(xs, [y / float(x) for x, y in zip(xs, ys)], style, marker='o', color=colour, label=run)
    axis.set_title('SSH connections opened per node', fontsize=10)
    axis.set_xlabel('nodes (N)')
    axis.grid(True, alpha=0.3)
    words = {None: 'not judged', True: 'MET', False: 'MISSED'}
    verdicts = '; '.join('%s: %s' % (t['target'], words[t['met']]) for t in results.get('targets', []))
    figure.suptitle('make bench-scale: light sandbox nodes, kwok kubelets, 2 cores\n' + verdicts, fontsize=9)
    figure.tight_layout()
    figure.savefig(target, dpi=110)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
