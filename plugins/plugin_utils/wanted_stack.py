# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wanted stack: the one place that says which component should run at which version.

Every consumer (preflight, hdk, cann, container_runtime, health_gate, upgrade.yml, the fleet
report) asks ``wanted_stack`` instead of reading the role variables itself, so they all agree
on what "outdated" means: the operator kernels are ``kernels`` up to CANN 8.3 and ``ops`` from
8.5.0, NNAL follows CANN unless its own version is set, and an empty version is not managed.

Input is the variables of a host (the ``vars`` of a task, or ``hostvars[host]``), named as the
roles name them, or a stack written out as ``preflight_stack`` spells it. Controller side only,
no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import COMPONENTS, checked_version
from ansible_collections.npu.ascend.plugins.module_utils.packages.runfile import operator_kernels_component

_VERSION_VARIABLE = component_catalogue.version_variable
# Stack key, the role variable it comes from, and that variable's role default (the roles'
# defaults/main.yml say the same; a unit test holds them together). The version variables are the
# component catalogue's (``cann`` is the toolkit's version, which the kernels or ops follow);
# ``kernels`` and ``nnal`` are the cann role's switches. nnal_version's default (None) is the CANN version.
ROLE_VARIABLES = (
    ('driver', _VERSION_VARIABLE('driver'), ''),
    ('firmware', _VERSION_VARIABLE('firmware'), ''),
    ('cann', _VERSION_VARIABLE('toolkit'), ''),
    ('kernels', 'cann_kernels', True),
    ('nnal', 'cann_nnal', False),
    ('nnal_version', _VERSION_VARIABLE('nnal'), None),
    ('docker_runtime', _VERSION_VARIABLE('docker_runtime'), ''),
)
STACK_KEYS = tuple(key for key, _variable, _default in ROLE_VARIABLES)


def _text(value):
    if value is None or isinstance(value, bool):
        return ''
    return str(value).strip()


def _truthy(value):
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    return str(value).strip().lower() in ('1', 'true', 'yes', 'on', 'y')


def stack_from_variables(variables):
    """The stack (``preflight_stack``'s keys plus ``docker_runtime``) from a host's role variables."""
    if not isinstance(variables, Mapping):
        raise TypeError('the variables of a host must be a mapping, got %s' % type(variables).__name__)
    stack = {}
    for key, variable, default in ROLE_VARIABLES:
        # Read one by one: the mapping templates a value when it is read, and an unused
        # variable (NNAL's version when NNAL is off) must not be templated at all.
        if key == 'nnal_version' and not _truthy(stack['nnal']):
            continue
        stack[key] = variables[variable] if variable in variables else default
    return stack


ROLE_VARIABLE_OF = dict((key, variable) for key, variable, _default in ROLE_VARIABLES)
VERSION_KEYS = ('driver', 'firmware', 'cann', 'nnal_version', 'docker_runtime')


def _checked(stack, key, names):
    # Every wanted version goes through the one parser here, so the plan, the compatibility gate and
    # the packages never see a version one of them would read differently ('25.0 rc1.1', 'latest; ...').
    text = _text(stack.get(key))
    if text:
        checked_version(text, (names or {}).get(key, key))
    return text


def wanted_versions(stack, names=None):
    """Component (as ascend_facts names it) to wanted version, in Huawei's stack order.

    ``stack``: ``{driver, firmware, cann, kernels, nnal, nnal_version, docker_runtime}``, each
    optional. ``names``: stack key -> the variable the user set it with, for messages (default the key).
    ``InvalidVersion`` (a ValueError) naming that variable when a version is not a Huawei version.
    """
    if stack is not None and not isinstance(stack, Mapping):
        raise TypeError('the stack must be a mapping, got %s' % type(stack).__name__)
    stack = stack or {}
    unknown = sorted(set(stack) - set(STACK_KEYS))
    if unknown:
        raise ValueError('unknown stack key(s) %s; known: %s' % (', '.join(unknown), ', '.join(STACK_KEYS)))
    found = {}
    for component in ('driver', 'firmware', 'docker_runtime'):
        text = _checked(stack, component, names)
        if text:
            found[component] = text
    cann = _checked(stack, 'cann', names)
    if cann:
        found['toolkit'] = cann
        if _truthy(stack.get('kernels', True)):
            try:
                found[operator_kernels_component(cann)] = cann
            except ValueError:
                raise ValueError('%s %r is not a CANN version (for example 8.2.RC1 or 8.5.0)'
                                 % ((names or {}).get('cann', 'cann'), cann))
    if _truthy(stack.get('nnal', False)):
        nnal = _checked(stack, 'nnal_version', names) or cann
        if nnal:
            found['nnal'] = nnal
    return dict((component, found[component]) for component in COMPONENTS if component in found)


def wanted_stack(variables, stack=None, stack_name='the stack'):
    """The wanted versions of a host: from ``stack`` when it is a non-empty mapping (an operator's
    ``preflight_stack``, ``health_gate_stack`` or ``fleet_report_stack``, named ``stack_name`` in
    messages), else from its role variables (named as the user set them: ``hdk_driver_version``...)."""
    if isinstance(stack, Mapping) and len(stack) > 0:
        return wanted_versions(stack, dict((key, '%s.%s' % (stack_name, key)) for key in STACK_KEYS))
    return wanted_versions(stack_from_variables(variables), ROLE_VARIABLE_OF)
