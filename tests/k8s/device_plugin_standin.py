# -*- coding: utf-8 -*-
"""Publishes each sandbox node's NPUs the way Huawei's device plugin and the kubelet would.

Huawei's device plugin cannot run here (it needs its image, a real driver and /dev/davinci*),
and kwok has no kubelet to publish extended resources. This loop stands in for both, from what
really happens on the sandbox node and in the cluster:

- a node whose device plugin pod is not Running (no DaemonSet for it, or the DaemonSet no longer
  selects it, as during an upgrade) publishes 0 NPUs;
- otherwise `npu-smi info` runs inside the node's container: every chip it lists counts in
  capacity, the healthy ones in allocatable (the plugin reports the others Unhealthy); an
  `npu-smi` that fails ("dcmi module initialize failed", driver missing or reboot pending)
  publishes 0, as the real plugin's "failed to get card list" does.

Nodes without a sandbox container (e.g. an Alibaba ACK node given with --node) keep the
capacity they were registered with. Started by `controlplane.py up --device-plugin-standin`,
stopped by `down` with the other components; it logs every change it publishes.
"""

import argparse
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
PODMAN = REPO_ROOT / 'sandbox' / 'podman.sh'
sys.path.insert(0, str(REPO_ROOT / 'plugins' / 'module_utils' / 'hardware'))

import npu_smi  # noqa: E402  (the collection's own parser, shared with npu_smi_info)

# The pods of every DaemonSet the npu.ascend.device_plugin role applies carry this label.
DEVICE_PLUGIN_SELECTOR = 'app.kubernetes.io/name=ascend-device-plugin'
POLL_SECONDS = 5
NPU_SMI_TIMEOUT_SECONDS = 30


class Api:
    """The admin's client of the control plane in STATE_DIR."""

    def __init__(self, state_dir):
        state = json.loads((state_dir / 'state.json').read_text(encoding='utf-8'))
        self.server = 'https://127.0.0.1:%d' % state['ports']['apiserver']
        self.nodes = state['nodes']
        pki = state_dir / 'pki'
        self.context = ssl.create_default_context(cafile=str(pki / 'ca.crt'))
        self.context.load_cert_chain(str(pki / 'admin.crt'), str(pki / 'admin.key'))

    def call(self, method, path, body=None, content_type='application/json'):
        data = json.dumps(body).encode('utf-8') if body is not None else None
        headers = {'Accept': 'application/json'}
        if data is not None:
            headers['Content-Type'] = content_type
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            return json.loads(response.read())


def container_exists(name):
    return subprocess.run([str(PODMAN), 'container', 'exists', name], check=False,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def node_npus(name):
    """(chips listed, healthy chips, why) from `npu-smi info` inside the node's container."""
    try:
        result = subprocess.run(
            [str(PODMAN), 'exec', '--env', 'LC_ALL=C', name, 'npu-smi', 'info'], check=False,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
            timeout=NPU_SMI_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        return 0, 0, 'npu-smi timed out'
    if result.returncode != 0:
        first_line = (result.stdout.strip().splitlines() or ['no output'])[0]
        return 0, 0, 'npu-smi exit %d: %s' % (result.returncode, first_line)
    try:
        chips = npu_smi.parse_info(result.stdout)['chips']
    except (npu_smi.NpuSmiError, ValueError) as error:
        return 0, 0, 'npu-smi: %s' % error
    healthy = [chip for chip in chips if chip.get('health') == 'OK']
    return len(chips), len(healthy), '%d chips, %d healthy' % (len(chips), len(healthy))


def plugin_running_on(api):
    """Names of the nodes where a device plugin pod is Running."""
    query = urllib.parse.urlencode({'labelSelector': DEVICE_PLUGIN_SELECTOR})
    pods = api.call('GET', '/api/v1/pods?' + query)['items']
    return {pod['spec'].get('nodeName') for pod in pods
            if pod['status'].get('phase') == 'Running' and not pod['metadata'].get('deletionTimestamp')}


def publish_once(api, simulated, log):
    running = plugin_running_on(api)
    for node in api.nodes:
        name = node['name']
        if name not in simulated or not node['npu_resources']:
            continue
        if name in running:
            capacity, allocatable, why = node_npus(name)
        else:
            capacity, allocatable, why = 0, 0, 'no device plugin pod Running'
        current = api.call('GET', '/api/v1/nodes/' + name)['status']
        wanted_capacity = {resource: str(capacity) for resource in node['npu_resources']}
        wanted_allocatable = {resource: str(allocatable) for resource in node['npu_resources']}
        if all(current.get('capacity', {}).get(resource) == value
               for resource, value in wanted_capacity.items()) and all(
                current.get('allocatable', {}).get(resource) == value
                for resource, value in wanted_allocatable.items()):
            continue
        api.call('PATCH', '/api/v1/nodes/%s/status' % name,
                 {'status': {'capacity': wanted_capacity, 'allocatable': wanted_allocatable}},
                 content_type='application/merge-patch+json')
        log('%s: capacity %s, allocatable %s (%s)' % (name, wanted_capacity, wanted_allocatable, why))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0])
    parser.add_argument('--state-dir', type=Path, required=True)
    arguments = parser.parse_args(argv)

    def log(message):
        print('%s %s' % (time.strftime('%H:%M:%S'), message), flush=True)

    api = Api(arguments.state_dir.resolve())
    simulated = {node['name'] for node in api.nodes if container_exists(node['name'])}
    log('publishing NPUs from npu-smi for %s; registered capacity kept for %s' % (
        ', '.join(sorted(simulated)) or 'no node',
        ', '.join(sorted({node['name'] for node in api.nodes} - simulated)) or 'no node'))
    while True:
        try:
            publish_once(api, simulated, log)
        except (OSError, ValueError, KeyError, urllib.error.URLError) as error:
            # The API server restarting or a node rebooting is no reason to stop.
            log('retrying after: %s' % error)
        time.sleep(POLL_SECONDS)


if __name__ == '__main__':
    os.environ['LC_ALL'] = 'C'
    sys.exit(main())
