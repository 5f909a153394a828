# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The cluster options of the fleet-wide Kubernetes modules (k8s_fleet_nodes, k8s_fleet_validate),
    which run on the controller for all the play's hosts at once."""

    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Kubeconfig on the controller. Unset - C(K8S_AUTH_KUBECONFIG), else C(KUBECONFIG) or C(~/.kube/config), else
        the in-cluster service account.
    type: path
  context:
    description: Context of the kubeconfig. Unset - C(K8S_AUTH_CONTEXT), else the current context.
    type: str
  request_timeout:
    description:
      - Seconds each request to the API server may take in all, from connecting to the last byte of its answer,
        as C(kubectl --request-timeout) gives. A request that runs out fails the hosts it was for, naming the
        request (for example C(GET /api/v1/nodes)) and this limit; an API server that does not answer or sends
        its answer a byte at a time holds the run no longer.
      - The roles pass the inventory variable C(k8s_request_timeout).
    type: int
    default: 60
attributes:
  action_group:
    description: Use C(group/npu.ascend.k8s_fleet) in C(module_defaults) to set defaults for this module.
    support: full
    membership:
      - npu.ascend.k8s_fleet
requirements:
  - kubernetes (Python library on the controller, as kubernetes.core needs)
'''
