#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: contributors to npu.ascend
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The naive baseline of `make bench`: the same Huawei installers, node after node, by a plain script.

What a careful administrator would type on each server in turn, without Ansible: copy the
packages in, create HwHiAiUser, install the kernel headers, run driver and firmware, reboot,
run toolkit, kernels and NNAL, install the Ascend Docker Runtime for containerd and restart
containerd. Every installer is timed on its own, so the sum of the installers' own durations
(the floor no tool can beat on one node) comes from the same run.

    .venv/bin/python bench/naive.py --inventory .cache/bench/inventory --out naive.json

The nodes must be bare (fresh from `sandbox/fleet.py up`). Prints JSON on stdout or to --out.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import glob
import importlib
import json
import os
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The sandbox's fleet library only: the script knows nothing of the collection. The components
# and versions are the sandbox's (sandbox_package_versions, the packages it built for the nodes),
# the file names those the package build recorded, the installer options Huawei's install guides
# give (facts reference sections 2, 3 and 8).
sys.path.insert(0, os.path.join(REPO_ROOT, 'sandbox'))
fleet = importlib.import_module('fleet')

NODE_DIR = '/var/tmp/naive-bench'
# In the order Huawei's guides install them on a bare node, with the options they give.
HOST_STACK = (
    ('driver', ['--nox11', '--full', '--quiet', '--install-for-all']),
    ('firmware', ['--nox11', '--full', '--quiet']),
    ('toolkit', ['--nox11', '--install', '--quiet', '--install-for-all']),
    ('kernels', ['--nox11', '--install', '--quiet', '--install-for-all']),
    ('ops', ['--nox11', '--install', '--quiet', '--install-for-all']),
    ('nnal', ['--nox11', '--install', '--quiet', '--install-for-all']),
    ('docker_runtime', ['--nox11', '--install', '--install-scene=containerd']),
)
REBOOT_AFTER = 'firmware'


class NaiveError(Exception):
    """A step failed on a node; the message names the node, the step and the output."""


def package_file(packages_dir, component, chip, version, arch):
    """The file the sandbox built for this component (its build record, .built/*.json)."""
    chip_key = chip if component in fleet.CHIP_SPECIFIC_COMPONENTS else '*'
    pattern = os.path.join(packages_dir, '.built', '%s_%s_%s_%s.json' % (component, chip_key, version, arch))
    for record in sorted(glob.glob(pattern)):
        with open(record) as handle:
            names = [name for name in json.load(handle) if name.endswith('.run')]
        if len(names) == 1:
            return names[0]
    raise NaiveError('no fake %s %s package for %s/%s in %s: run `sandbox/fleet.py packages`'
                     % (component, version, chip, arch, packages_dir))


def plan(host_vars, spec, packages_dir):
    """(component, file name, argv) for each installer this node runs."""
    versions = host_vars.get('sandbox_package_versions') or {}
    if not versions:
        raise NaiveError('%s: sandbox_package_versions is not set in the inventory' % spec.name)
    chip = fleet.PRODUCTS[spec.product]['chip_family']
    steps = []
    for component, options in HOST_STACK:
        if component not in versions:
            continue
        name = package_file(packages_dir, component, chip, versions[component], spec.arch)
        steps.append((component, name, ['%s/%s' % (NODE_DIR, name)] + options))
    return steps


def timed(record, step, function, *args):
    started = time.monotonic()
    result = function(*args)
    record['steps'].append({'step': step, 'seconds': round(time.monotonic() - started, 3)})
    return result


def node_exec(the_fleet, host, argv, step):
    result = the_fleet.exec(host, ['env', 'LC_ALL=C'] + list(argv), check=False)
    if result.returncode != 0:
        raise NaiveError('%s: %s failed: `%s` exited %d:\n%s%s' % (
            host, step, ' '.join(argv), result.returncode, result.stdout[-2000:], result.stderr[-2000:]))
    return result


def reboot(the_fleet, host, attempts=6):
    """Reboots and waits for the new boot; on a host crowded with systemd containers a unit can
    fail for want of inotify instances, so failed units are restarted and the wait repeated."""
    try:
        the_fleet.reboot(host)
        return
    except fleet.SandboxError as error:
        if 'degraded' not in str(error):
            raise
    for attempt in range(1, attempts + 1):
        time.sleep(5 * attempt)
        the_fleet.exec(host, ['sh', '-c', "units=$(systemctl --failed --no-legend --plain | cut -d' ' -f1); "
                                          "systemctl reset-failed; [ -z \"$units\" ] || systemctl restart $units"],
                       check=False)
        try:
            the_fleet.wait_running(host)
            return
        except fleet.SandboxError:
            if attempt == attempts:
                raise


def provision(the_fleet, host, host_vars, packages_dir):
    spec = the_fleet.spec(host)
    record = {'steps': [], 'installers': {}}
    started = time.monotonic()
    steps = plan(host_vars, spec, packages_dir)
    node_exec(the_fleet, host, ['mkdir', '-p', NODE_DIR], 'staging directory')
    for component, name, _argv in steps:
        timed(record, 'copy %s' % component, the_fleet.copy_in, host, os.path.join(packages_dir, name),
              '%s/%s' % (NODE_DIR, name))
    node_exec(the_fleet, host, ['chmod', '0755'] + ['%s/%s' % (NODE_DIR, name) for _c, name, _a in steps],
              'chmod')
    timed(record, 'HwHiAiUser', node_exec, the_fleet, host,
          ['sh', '-c', 'getent group HwHiAiUser || groupadd HwHiAiUser; id HwHiAiUser || '
                       'useradd -g HwHiAiUser -d /home/HwHiAiUser -m -s /bin/bash HwHiAiUser'], 'HwHiAiUser')
    timed(record, 'kernel headers', node_exec, the_fleet, host,
          ['sh', '-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-headers-$(uname -r) '
                       'dkms gcc make pciutils net-tools'], 'kernel headers')
    for component, _name, argv in steps:
        installer_started = time.monotonic()
        timed(record, 'install %s' % component, node_exec, the_fleet, host, argv, 'install %s' % component)
        record['installers'][component] = round(time.monotonic() - installer_started, 3)
        if component == REBOOT_AFTER:
            timed(record, 'reboot', reboot, the_fleet, host)
    timed(record, 'restart containerd', node_exec, the_fleet, host, ['systemctl', 'restart', 'containerd'],
          'restart containerd')
    record['installer_seconds'] = round(sum(record['installers'].values()), 3)
    record['wall_seconds'] = round(time.monotonic() - started, 3)
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--inventory', required=True, help='inventory directory (sandbox_nodes group)')
    parser.add_argument('--packages', default=str(fleet.PACKAGES_OUT_DIR),
                        help='directory holding the .run files (default: %(default)s)')
    parser.add_argument('--out', help='write the JSON there instead of stdout')
    args = parser.parse_args(argv)
    hosts = fleet.inventory_hosts(args.inventory)
    the_fleet = fleet.Fleet.from_inventory(args.inventory)
    result = {'nodes': {}}
    started = time.monotonic()
    try:
        for host in sorted(hosts):
            print('naive: %s' % host, file=sys.stderr)
            result['nodes'][host] = provision(the_fleet, host, hosts[host], args.packages)
    except (NaiveError, fleet.SandboxError, subprocess.CalledProcessError) as error:
        print('naive: error: %s' % error, file=sys.stderr)
        return 1
    result['wall_seconds'] = round(time.monotonic() - started, 3)
    result['installer_seconds_total'] = round(sum(n['installer_seconds'] for n in result['nodes'].values()), 3)
    result['installer_seconds_longest_node'] = max(n['installer_seconds'] for n in result['nodes'].values())
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.out:
        with open(args.out, 'w') as handle:
            handle.write(text + '\n')
    else:
        print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
