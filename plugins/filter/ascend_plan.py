# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters ``npu.ascend.ascend_wanted_stack``, ``npu.ascend.ascend_plan`` and ``npu.ascend.ascend_plan_packages``.

Documentation is in the sidecar files of the same names; the logic is in plugin_utils.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError


def ascend_wanted_stack(variables, stack=None, stack_name=None):
    """Component -> wanted version of a host, from its role variables or an explicit stack."""
    # Imported on use, not at the top: ansible-core imports every filter and test file of the collection
    # in each worker process at the first use of any of them (docs/development.md).
    from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import InvalidVersion
    from ansible_collections.npu.ascend.plugins.plugin_utils import wanted_stack
    try:
        return wanted_stack.wanted_stack(variables, stack, stack_name or 'the stack')
    except InvalidVersion as error:
        # Its message names the variable the user set and the fix already.
        raise AnsibleFilterError('ascend_wanted_stack: %s' % error)
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError('ascend_wanted_stack: %s. Fix: set hdk_driver_version, hdk_firmware_version, '
                                 'cann_version and container_runtime_version to Huawei versions' % error)


def ascend_plan(probe, wanted, allow_downgrade=False, reboot_policy='auto'):
    """The plan of one node from its probe (ansible_facts.ascend) and its wanted stack."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner
    try:
        return planner.plan_node(wanted, probe, allow_downgrade=allow_downgrade, reboot_policy=reboot_policy)
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError('ascend_plan: %s' % error)


def ascend_plan_packages(plan, role=None, chip=None):
    """The packages role's packages_components for what the plan installs (of one role when given)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner
    if not isinstance(plan, Mapping) or 'components' not in plan:
        raise AnsibleFilterError('ascend_plan_packages expects a plan made by npu.ascend.ascend_plan')
    try:
        return planner.packages_to_stage(plan, role=role or None, chip=chip or None)
    except ValueError as error:
        raise AnsibleFilterError('ascend_plan_packages: %s' % error)


def ascend_plan_refusal(plan, role, host):
    """The message a role stops with for what the plan refuses of its components ('' when nothing)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner
    if not isinstance(plan, Mapping) or 'roles' not in plan:
        raise AnsibleFilterError('ascend_plan_refusal expects a plan made by npu.ascend.ascend_plan')
    try:
        return planner.refusal_message(plan, role, str(host))
    except ValueError as error:
        raise AnsibleFilterError('ascend_plan_refusal: %s' % error)


def ascend_operator_kernels_installed(installed, chip=None):
    """Every installed version of the operator kernels, as the cann role's uninstall takes them."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner
    if not isinstance(installed, Mapping):
        raise AnsibleFilterError('ascend_operator_kernels_installed expects the probe\'s installed software (a dict)')
    return planner.operator_kernels_installed(installed, chip)


def ascend_probe_current(probe, install_path, npu_smi=False):
    """Whether this run's probe still describes the node for a role (its install path, and npu-smi when asked)."""
    from ansible_collections.npu.ascend.plugins.plugin_utils import planner
    return planner.probe_is_current(probe, install_path, bool(npu_smi))


class FilterModule(object):
    """The wanted stack and the plan of a node."""

    def filters(self):
        return {
            'ascend_wanted_stack': ascend_wanted_stack,
            'ascend_plan': ascend_plan,
            'ascend_plan_packages': ascend_plan_packages,
            'ascend_plan_refusal': ascend_plan_refusal,
            'ascend_operator_kernels_installed': ascend_operator_kernels_installed,
            'ascend_probe_current': ascend_probe_current,
        }
