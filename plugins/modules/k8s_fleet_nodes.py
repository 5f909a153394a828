#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: k8s_fleet_nodes
short_description: Label and taint the Node objects of many hosts in one step, each judged on its own
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Runs on the controller (C(delegate_to localhost), C(run_once)) for the hosts of a play; the
    P(npu.ascend.k8s_node#role) role calls it once with what each host's Node should carry.
  - Reads the cluster's Nodes in one request per cluster (hosts are grouped by their own O(nodes[].kubeconfig)
    and O(nodes[].context)), waits for the Nodes not registered yet (the list read again every 5 seconds, up to
    each node's O(nodes[].wait_seconds)), and sends each Node that differs one JSON merge patch - the labels that
    differ, and the taint list when it must change, guarded by the Node's C(resourceVersion). A conflict (another
    writer changed the Node meanwhile) is read again and retried once.
  - A Node is validated when its O(nodes[].validated_label) equals O(nodes[].validated_value) (the driver it runs)
    once the labels are set; it carries the taint O(nodes[].taint) exactly when it is not (with
    O(nodes[].manage_taint)). Other taints are kept.
  - Never fails for one node - a Node that never appears, an API server that cannot be reached or answers no
    Node object, a taint that cannot be used, labels Kubernetes would refuse, a patch refused twice; each host
    gets its own result in RV(hosts) with the message (host, cause, fix), for the host to judge itself.
options:
  nodes:
    description: What each host's Node should carry.
    type: list
    elements: dict
    required: true
    suboptions:
      host:
        description: The inventory host, the key of its result.
        type: str
        required: true
      name:
        description: The Node's name.
        type: str
        required: true
      labels:
        description:
          - The labels it should carry; a null value removes one; an integer is sent as its string.
          - A label Kubernetes would refuse (checked as C(kubectl label) does - a key is an optional DNS subdomain
            prefix of up to 253 characters and C(/), then a name of 1 to 63 characters; a value is empty or up to 63
            characters; names and values are alphanumeric at both ends with only C(-), C(_) and C(.) inside) is not
            sent. The other labels and the taint are written, and the host then fails naming each refused label
            with its value and its source (O(nodes[].label_sources)) in RV(hosts.refused_labels).
        type: dict
        default: {}
      label_sources:
        description:
          - Where each label of O(nodes[].labels) comes from (label to the inventory variable or the probe's fact), to
            name it when Kubernetes would refuse the label. A label not named here is said to come from this option.
        type: dict
        default: {}
      taint:
        description: The until-validated taint, C(key=value:Effect).
        type: str
      manage_taint:
        description: Add or remove O(nodes[].taint) as the node is validated or not; V(false) leaves taints alone.
        type: bool
        default: true
      validated_label:
        description: The label that records the driver the node was validated with.
        type: str
      validated_value:
        description: The driver the node runs (the value O(nodes[].validated_label) must have), or C(true).
        type: str
        default: 'true'
      wait_seconds:
        description: How long to wait for a Node the cluster does not list yet.
        type: int
        default: 60
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
      - Reads the Nodes (and waits for those not registered yet) as a real run does; writes nothing.
  diff_mode:
    support: full
  idempotent:
    support: full
  platform:
    platforms: posix
notes:
  - Requests the API server with the kubernetes client's CoreV1 calls, each within O(request_timeout).
seealso:
  - module: kubernetes.core.k8s
  - plugin: npu.ascend.k8s_taints
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Label and taint the play's Nodes where they differ, in one step for the play
  npu.ascend.k8s_fleet_nodes:
    kubeconfig: "{{ k8s_kubeconfig | default(omit) }}"
    nodes:
      - host: a2-01
        name: a2-01
        labels: {accelerator: huawei-Ascend910, npu.ascend/driver: 25.0.rc1.1}
        taint: npu.ascend/unvalidated=true:NoSchedule
        validated_label: npu.ascend/validated
        validated_value: 25.0.rc1.1
  delegate_to: localhost
  run_once: true
  register: fleet_nodes

- name: Fail the host whose Node could not be written
  ansible.builtin.fail:
    msg: "{{ fleet_nodes.hosts[inventory_hostname].msg }}"
  when: fleet_nodes.hosts[inventory_hostname].failed
'''

RETURN = r'''
hosts:
  description: Host to its Node's result.
  returned: always
  type: dict
  contains:
    name:
      description: The Node.
      type: str
    changed:
      description: Whether its Node was (or in check mode would be) patched.
      type: bool
    failed:
      description: Whether its Node could not be read or written.
      type: bool
    msg:
      description: Why, with the fix; empty when it did not fail.
      type: str
    refused_labels:
      description: The labels of O(nodes[].labels) Kubernetes would refuse, which were not sent (the host fails).
      type: list
      elements: dict
      contains:
        key:
          description: The label's key.
          type: str
        value:
          description: Its value, as given.
          type: raw
        source:
          description: Where it came from (O(nodes[].label_sources), else the option).
          type: str
        reason:
          description: The rule it breaks.
          type: str
    validated:
      description: Whether the node is validated for the driver it runs, as its labels now say.
      type: bool
    listed:
      description: Whether the first list of the cluster's Nodes had it (false - it was waited for).
      type: bool
    label_changes:
      description: The labels sent (null - removed).
      type: dict
    taints:
      description: The Node's taints as read.
      type: list
    wanted_taints:
      description: The taints it has now (or would have).
      type: list
  sample:
    a2-01: {name: a2-01, changed: true, failed: false, msg: '', refused_labels: [], validated: false, listed: true,
            label_changes: {npu.ascend/driver: 25.0.rc1.1}, taints: [],
            wanted_taints: [{key: npu.ascend/unvalidated, value: 'true', effect: NoSchedule}]}
resources:
  description:
    - The Nodes of the cluster of O(kubeconfig) and O(context) as first read, before any write; null when they could
      not be read.
  returned: always
  type: list
  elements: dict
all_listed:
  description: Whether every host's Node was in that first read (none waited for, none in another cluster).
  returned: always
  type: bool
'''

from ansible_collections.npu.ascend.plugins.module_utils.k8s import fleet
from ansible_collections.npu.ascend.plugins.module_utils.k8s.client import KubernetesApi
from ansible_collections.npu.ascend.plugins.module_utils.k8s.fleet_module import fleet_module

NODE_OPTIONS = dict(
    host=dict(type='str', required=True),
    name=dict(type='str', required=True),
    labels=dict(type='dict', default={}),
    label_sources=dict(type='dict', default={}),
    taint=dict(type='str'),
    manage_taint=dict(type='bool', default=True),
    validated_label=dict(type='str'),
    validated_value=dict(type='str', default='true'),
    wait_seconds=dict(type='int', default=60),
)


def run(module, api_for):
    params = module.params
    specs = [dict(spec) for spec in params['nodes']]
    for spec in specs:
        if spec.get('manage_taint') and not spec.get('taint'):
            module.fail_json(msg='k8s_fleet_nodes: host %s: manage_taint needs a taint' % spec['host'])
    results, resources, all_listed, changed = {}, None, True, False
    own = (params['kubeconfig'], params['context'])
    for key, members in fleet.cluster_groups(specs, *own):
        try:
            api = api_for(*key, request_timeout=params['request_timeout'])
        except fleet.ApiError as error:
            for spec in members:
                results[spec['host']] = fleet.node_failure(spec, fleet.unread_message(spec, error))
            all_listed = False
            continue
        outcome = fleet.apply_nodes(api, members, check_mode=module.check_mode)
        results.update(outcome['results'])
        changed = changed or outcome['changed']
        if key == own:
            resources = outcome['resources']
        else:
            all_listed = False
    all_listed = all_listed and all(result['listed'] for result in results.values())
    output = dict(changed=changed, hosts=results, resources=resources, all_listed=all_listed)
    if module._diff:
        output['diff'] = fleet.nodes_diff(results)
    module.exit_json(**output)


def main():
    run(fleet_module(NODE_OPTIONS, supports_check_mode=True), KubernetesApi)


if __name__ == '__main__':
    main()
