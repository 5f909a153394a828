#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: k8s_fleet_validate
short_description: Run the validation pods of many NPU nodes at once and lift the taint of those that pass
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller (C(delegate_to localhost), C(run_once)); the P(npu.ascend.validate#role) role calls it once
    with the validation pod of every host that needs one (hosts are grouped by their own O(nodes[].kubeconfig) and
    O(nodes[].context)).
  - Creates each pod's namespace when missing and the image pull Secrets of O(nodes[].registry), removes the pods an
    earlier run left, creates all pods, and reads them every 3 seconds until each passed (one of
    O(nodes[].success_phases)), failed, was refused by the scheduler (C(PodScheduled) C(Unschedulable)) for 30 seconds
    (the scheduler takes the pod once the node's device plugin registers its NPUs), or reached its
    O(nodes[].timeout_seconds).
  - Judges each pod by its phase and, with O(nodes[].judge_output), by its container's output
    (P(npu.ascend.npu_validation_verdict#filter)), then removes the pods unless O(nodes[].keep_pod).
  - For each node whose pod passed, records O(nodes[].validated_value) in O(nodes[].validated_label) and removes
    O(nodes[].taint) in one merge patch guarded by the Node's C(resourceVersion) (a conflict is read again and
    retried once).
  - Never fails for one node; each host gets its result in RV(hosts) (passed, the report of its pod, the message of
    a refusal), for the host to judge itself. A node whose O(nodes[].taint) cannot be used, or whose
    O(nodes[].validated_value) Kubernetes would refuse as a label value, fails alone before any pod starts.
options:
  nodes:
    description: The validation of each host.
    type: list
    elements: dict
    required: true
    suboptions:
      host:
        description: The inventory host, the key of its result.
        type: str
        required: true
      name:
        description: The Node.
        type: str
        required: true
      pod:
        description: The validation pod's definition (its C(metadata.namespace) and C(metadata.name) set).
        type: dict
        required: true
      resource:
        description: The NPU resource the pod requests, for the report.
        type: str
        required: true
      npu_count:
        description: How many NPUs the pod requests.
        type: int
        default: 1
      dies_per_npu:
        description:
          - Devices (dies) per NPU of the node's chip (2 on Atlas A3). Above 1, with O(nodes[].judge_output) and
            O(nodes[].npu_count) a multiple of it, the container must have got whole NPUs (every die of each).
        type: int
        default: 1
      judge_output:
        description: Judge the pod by its container's output too.
        type: bool
        default: false
      success_phases:
        description: Pod phases that count as a pass.
        type: list
        elements: str
        default: [Succeeded]
      timeout_seconds:
        description: How long to wait for the pod.
        type: int
        default: 180
      keep_pod:
        description: Leave the pod in place.
        type: bool
        default: false
      validated_label:
        description: The label that records the validated driver.
        type: str
        required: true
      validated_value:
        description: The driver validated (the node's driver label), or C(true).
        type: str
        required: true
      taint:
        description: The until-validated taint, C(key=value:Effect), removed on a pass.
        type: str
        required: true
      registry:
        description: Credentials of a private registry, stored as the image pull Secret O(nodes[].secret_name) in the
          pod's namespace; empty - none.
        type: dict
        default: {}
        suboptions:
          server:
            description: Registry host.
            type: str
          username:
            description: Registry user.
            type: str
          password:
            description: Registry password or token.
            type: str
      secret_name:
        description: Name of the image pull Secret.
        type: str
        default: npu-validation-registry
      kubeconfig:
        description: The host's kubeconfig when it differs from O(kubeconfig).
        type: path
      context:
        description: The host's kubeconfig context when it differs from O(context).
        type: str
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.k8s_fleet
attributes:
  check_mode:
    support: full
    details:
      - Runs no pod and writes nothing; reports a change for every node of O(nodes).
  diff_mode:
    support: none
  idempotent:
    support: partial
    details:
      - Every run starts the pods of O(nodes) again; the P(npu.ascend.validate#role) role passes only the nodes not
        validated yet for the driver they run.
  platform:
    platforms: posix
seealso:
  - module: npu.ascend.k8s_fleet_nodes
  - plugin: npu.ascend.npu_validation_verdict
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Validate the play's nodes with one pod each
  npu.ascend.k8s_fleet_validate:
    kubeconfig: "{{ k8s_kubeconfig | default(omit) }}"
    nodes:
      - host: a2-01
        name: a2-01
        resource: huawei.com/Ascend910
        pod: "{{ lookup('ansible.builtin.template', 'pod.yml.j2') | ansible.builtin.from_yaml }}"
        judge_output: true
        validated_label: npu.ascend/validated
        validated_value: 25.0.rc1.1
        taint: npu.ascend/unvalidated=true:NoSchedule
  delegate_to: localhost
  run_once: true
  register: fleet_validation
'''

RETURN = r'''
hosts:
  description: Host to its validation.
  returned: always
  type: dict
  contains:
    name:
      description: The Node.
      type: str
    passed:
      description: Whether its pod passed.
      type: bool
    report:
      description: What the pod was and how it ended (phase, the output's problems, the scheduler's reason, the
        containers' states), or why it could not run.
      type: str
    failed:
      description: Whether the node failed validation or could not be marked validated.
      type: bool
    msg:
      description: The message of a refusal by the API server (host, cause, fix); empty for a pod that ran.
      type: str
    phase:
      description: The pod's last phase; empty when it never ran.
      type: str
    lifted:
      description: Whether the validated driver was recorded and the taint removed.
      type: bool
  sample:
    a2-01: {name: a2-01, passed: true, failed: false, msg: '', phase: Succeeded, lifted: true,
            report: pod npu-validation/npu-validate-a2-01 requesting 1 huawei.com/Ascend910 on node a2-01 is Succeeded}
'''

import base64
import json

from ansible_collections.npu.ascend.plugins.module_utils.k8s import fleet
from ansible_collections.npu.ascend.plugins.module_utils.k8s.client import FIELD_MANAGER, KubernetesApi
from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet_module import fleet_module

NODE_OPTIONS = dict(
    host=dict(type='str', required=True),
    name=dict(type='str', required=True),
    pod=dict(type='dict', required=True),
    resource=dict(type='str', required=True),
    npu_count=dict(type='int', default=1),
    dies_per_npu=dict(type='int', default=1),
    judge_output=dict(type='bool', default=False),
    success_phases=dict(type='list', elements='str', default=['Succeeded']),
    timeout_seconds=dict(type='int', default=180),
    keep_pod=dict(type='bool', default=False),
    validated_label=dict(type='str', required=True),
    validated_value=dict(type='str', required=True),
    taint=dict(type='str', required=True),
    registry=dict(type='dict', default={}, options=dict(
        server=dict(type='str'), username=dict(type='str'), password=dict(type='str', no_log=True))),
    secret_name=dict(type='str', default='npu-validation-registry'),
)


def _b64(text):
    return base64.b64encode(text.encode('utf-8')).decode('ascii')


def pull_secrets(specs):
    """The image pull Secrets of the specs' registries: one per namespace and name, with every registry in it."""
    secrets = {}
    for spec in specs:
        registry = spec.get('registry') or {}
        if not registry.get('server'):
            continue
        key = (spec['pod']['metadata']['namespace'], spec['secret_name'])
        auths = secrets.setdefault(key, {})
        auths[registry['server']] = {
            'username': registry.get('username') or '', 'password': registry.get('password') or '',
            'auth': _b64('%s:%s' % (registry.get('username') or '', registry.get('password') or ''))}
    return [{'apiVersion': 'v1', 'kind': 'Secret', 'type': 'kubernetes.io/dockerconfigjson',
             'metadata': {'name': name, 'namespace': namespace,
                          'labels': {'app.kubernetes.io/managed-by': FIELD_MANAGER}},
             'data': {'.dockerconfigjson': _b64(json.dumps({'auths': auths}, sort_keys=True))}}
            for (namespace, name), auths in sorted(secrets.items())]


def run(module, api_for):
    params = module.params
    specs = [dict(spec) for spec in params['nodes']]
    for spec in specs:
        metadata = (spec['pod'].get('metadata') or {})
        if not metadata.get('name') or not metadata.get('namespace'):
            module.fail_json(msg='k8s_fleet_validate: host %s: the pod needs metadata.name and metadata.namespace'
                             % spec['host'])
    results, changed = {}, False
    for key, members in fleet.cluster_groups(specs, params['kubeconfig'], params['context']):
        try:
            api = api_for(*key, request_timeout=params['request_timeout'])
        except fleet.ApiError as error:
            for spec in members:
                results[spec['host']] = fleet.validation_failure(
                    spec, 'validation: the Kubernetes API cannot be used: %s. Fix: check that the API server of '
                    'k8s_kubeconfig (%s, context %s) runs and is reachable from the controller, then run again.'
                    % (error, key[0] or 'the default kubeconfig', key[1] or 'current'))
            continue
        outcome = fleet.validate_nodes(api, members, check_mode=module.check_mode, secrets=pull_secrets(members))
        results.update(outcome['results'])
        changed = changed or outcome['changed']
    module.exit_json(changed=changed, hosts=results)


def main():
    run(fleet_module(NODE_OPTIONS, supports_check_mode=True), KubernetesApi)


if __name__ == '__main__':
    main()
