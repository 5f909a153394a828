# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AnsibleModule of the fleet-wide Kubernetes modules: their per-node options, the cluster options
of the doc fragment npu.ascend.k8s_fleet, and the refusal without the kubernetes library."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ansible_collections.npu.ascend.plugins.module_utils.k8s.client import KUBERNETES_IMPORT_ERROR, REQUEST_TIMEOUT

# A host whose kubeconfig or context differs from the module's is read and written with its own.
NODE_CLUSTER_OPTIONS = dict(kubeconfig=dict(type='path'), context=dict(type='str'))


def fleet_module(node_options, supports_check_mode):
    """The module, once its arguments are checked; ``node_options`` are those of each ``nodes`` entry
    besides NODE_CLUSTER_OPTIONS."""
    options = dict(node_options)
    options.update(NODE_CLUSTER_OPTIONS)
    module = AnsibleModule(
        argument_spec=dict(
            nodes=dict(type='list', elements='dict', required=True, options=options),
            kubeconfig=dict(type='path', fallback=(env_fallback, ['K8S_AUTH_KUBECONFIG'])),
            context=dict(type='str', fallback=(env_fallback, ['K8S_AUTH_CONTEXT'])),
            request_timeout=dict(type='int', default=REQUEST_TIMEOUT),
        ),
        supports_check_mode=supports_check_mode,
    )
    if KUBERNETES_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib('kubernetes'), exception=str(KUBERNETES_IMPORT_ERROR))
    if module.params['request_timeout'] < 1:
        module.fail_json(msg='request_timeout (k8s_request_timeout in the inventory) must be at least 1 second, not %s'
                         % module.params['request_timeout'])
    return module
