# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of one node: what the run does to each component, in which order, and what follows.

``plan_node`` takes the wanted stack (``wanted_stack.wanted_stack``) and what one probe of the
node returned (``ascend_facts``) and returns, per component, one of the actions of
``runfile.ACTIONS`` with its reason (the same decision ``ascend_runfile`` makes on the node),
Huawei's installation order, whether a reboot follows, which engine configs change, the
components that are not at the wanted version ("outdated", the one meaning health_gate,
upgrade.yml and the fleet report share) and the lines preflight prints.

Preflight prints the plan; hdk, cann and container_runtime install the components their part
of it names; upgrade.yml drains only the nodes whose plan changes something. Controller side
only, no Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.module_utils.hardware import hardware_catalogue

from ansible_collections.npu.ascend.plugins.module_utils.packages import component_catalogue, runfile
from ansible_collections.npu.ascend.plugins.plugin_utils import kernel_judgement
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import (
    COMPONENTS, COMPONENT_TITLES, version_mismatches)

ROLES = ('hdk', 'cann', 'container_runtime')
# Component -> the role that installs it: the component catalogue's rows.
ROLE_OF = component_catalogue.roles()
REBOOT_POLICIES = ('auto', 'never')
# What the probe says about an engine's config: it registers the runtime as wanted, or not.
ENGINE_STATES = ('registered', 'unregistered')


def _version(record):
    if isinstance(record, Mapping):
        record = record.get('version')
    return str(record) if record not in (None, '') else None


def _allowed(allow_downgrade, role):
    if isinstance(allow_downgrade, Mapping):
        return bool(allow_downgrade.get(role, False))
    return bool(allow_downgrade)


def install_order(installed):
    """Huawei's order: on a fresh node the driver first (the firmware installer needs its tools),
    over an existing driver the firmware first (the new driver then starts against it), then CANN
    (toolkit before its kernels or ops and NNAL) and the Ascend Docker Runtime."""
    hdk = ['firmware', 'driver'] if _version((installed or {}).get('driver')) else ['driver', 'firmware']
    return hdk + ['toolkit', 'kernels', 'ops', 'nnal', 'docker_runtime']


def _damaged(record):
    """The probe's reason when a component's version file is there but names no version, else ''."""
    if isinstance(record, Mapping) and record.get('damaged'):
        return str(record['damaged'])
    return ''


def _item(component, record, want, allow_downgrade):
    have = _version(record)
    damaged = _damaged(record)
    if damaged:
        # Installed at a version nobody can tell: not "not installed", so no fresh install over it.
        decision = {'action': 'refuse', 'reason': '%s: %s' % (component, damaged)}
    else:
        decision = runfile.plan_action(component, have, want, 'present', allow_downgrade)
    return {'component': component, 'role': ROLE_OF[component],
            'title': COMPONENT_TITLES[component], 'have': have, 'want': want,
            'action': decision['action'], 'reason': decision['reason'], 'damaged': bool(damaged)}


def _line(item):
    action, component = item['action'], item['component']
    if action == 'install':
        return 'install %s %s' % (component, item['want'])
    if action == 'keep':
        return 'keep %s %s (no change)' % (component, item['have'])
    if action == 'refuse' and item.get('damaged'):
        return 'refuse %s %s (damaged install: its version file names no version)' % (component, item['want'])
    if action == 'refuse':
        return 'refuse %s downgrade %s -> %s' % (component, item['have'], item['want'])
    return '%s %s %s -> %s' % (action, component, item['have'], item['want'])


def _engines(probe_engines):
    if probe_engines is None:
        return {}
    if not isinstance(probe_engines, Mapping):
        raise TypeError('the probe\'s engines must be a mapping of engine to its state, got %s'
                        % type(probe_engines).__name__)
    engines = {}
    for engine in sorted(probe_engines):
        state = probe_engines[engine]
        if isinstance(state, Mapping):
            state = state.get('state')
        if state not in ENGINE_STATES:
            raise ValueError('engine %s: state %r is not one of %s' % (engine, state, ', '.join(ENGINE_STATES)))
        engines[engine] = 'keep' if state == 'registered' else 'register'
    return engines


def _role_part(role, changing, refused, reboot_pending):
    """What one role is asked: the components it installs in order, those it must refuse, and whether it has
    anything to do at all (the HDK also when a reboot it asked for is still pending)."""
    install = [item['component'] for item in changing if item['role'] == role]
    role_refused = [item for item in refused if item['role'] == role]
    return {'install': install, 'refused': role_refused,
            'due': bool(install or role_refused or (role == 'hdk' and reboot_pending))}


def plan_node(wanted, probe, allow_downgrade=False, reboot_policy='auto'):
    """The plan of one node (see the module's docstring).

    ``wanted``: component -> version (an empty version is not managed). ``probe``: what
    ``ascend_facts`` returned (``installed``, ``reboot_pending``, optionally ``engines``: engine ->
    ``registered`` or ``unregistered``). A component the probe reports ``damaged`` is refused with
    that reason (item ``damaged`` true), whatever is wanted. ``allow_downgrade``: a bool for every role, or role -> bool.
    ValueError names what is wrong with the input.
    """
    if not isinstance(wanted, Mapping):
        raise TypeError('wanted must be a mapping of component to version, got %s' % type(wanted).__name__)
    if probe is not None and not isinstance(probe, Mapping):
        raise TypeError('the probe must be what ascend_facts returned, got %s' % type(probe).__name__)
    if reboot_policy not in REBOOT_POLICIES:
        raise ValueError('reboot policy %r is not one of %s' % (reboot_policy, ', '.join(REBOOT_POLICIES)))
    unknown = sorted(set(wanted) - set(COMPONENTS))
    if unknown:
        raise ValueError('unknown component(s) %s; use %s' % (', '.join(unknown), ', '.join(COMPONENTS)))
    probe = probe or {}
    installed = probe.get('installed') or {}
    managed = dict((component, str(version)) for component, version in wanted.items() if version not in (None, ''))

    items = [_item(component, installed.get(component), managed[component],
                   _allowed(allow_downgrade, ROLE_OF[component]))
             for component in install_order(installed) if component in managed]
    changing = [item for item in items if item['action'] in runfile.INSTALLING_ACTIONS]
    refused = [item for item in items if item['action'] == 'refuse']
    hdk_changes = [item['component'] for item in changing if item['role'] == 'hdk']
    pending = bool(probe.get('reboot_pending'))
    if hdk_changes:
        reboot_reason = '%s change' % ' and '.join(hdk_changes)
    elif pending:
        reboot_reason = 'a reboot is already pending'
    else:
        reboot_reason = ''
    engines = _engines(probe.get('engines'))
    # A new runtime binary or a config that lacks the registration: the engine restarts.
    restarts = sorted(engine for engine, action in engines.items() if action == 'register')
    if any(item['role'] == 'container_runtime' for item in changing) and engines:
        restarts = sorted(engines)

    lines = [_line(item) for item in items]
    if reboot_reason and reboot_policy == 'auto':
        lines.append('reboot when the installer asks for it (%s)' % reboot_reason)
    elif reboot_reason:
        lines.append('no reboot (policy never): the node will report "reboot pending" (%s)' % reboot_reason)
    else:
        lines.append('no reboot')
    lines.append('restart %s (runtime registration)' % ' and '.join(restarts) if restarts else 'no service restart')
    if not items:
        lines = ['nothing to do: no component version is set']

    plan = {
        'components': items,
        'order': [item['component'] for item in changing],
        'roles': dict((role, _role_part(role, changing, refused, pending)) for role in ROLES),
        'refused': refused,
        'outdated': version_mismatches(installed, managed),
        'reboot': {'needed': bool(reboot_reason), 'reason': reboot_reason, 'policy': reboot_policy,
                   'pending': pending},
        'engines': engines,
        'restarts': restarts,
        'changes': bool(changing) or bool(restarts) or pending,
        'lines': lines,
    }
    kernel_line = kernel_judgement.plan_line(plan, probe)
    if kernel_line:
        lines.append(kernel_line)
    return plan


def probe_is_current(probe, install_path, npu_smi=False):
    """Whether this run's probe (``ansible_facts.ascend``) still describes the node for a role: it read
    the role's install path and, when the role needs the chips, npu-smi. A role that changes the node
    probes again itself, so an earlier probe is current until then."""
    if not isinstance(probe, Mapping) or probe.get('install_path') != install_path:
        return False
    return not npu_smi or 'npu_smi' in probe


def packages_to_stage(plan, role=None, chip=None):
    """The packages role's ``packages_components`` for the components ``plan`` installs (those of
    ``role`` only, when given): component (as the packages name it), version, and for the HDK and
    the operator kernels the node's chip."""
    if role is not None and role not in ROLES:
        raise ValueError('role %r is not one of %s' % (role, ', '.join(ROLES)))
    entries = []
    for item in plan['components']:
        if (role is not None and item['role'] != role) or item['action'] not in runfile.INSTALLING_ACTIONS:
            continue
        entry = {'component': item['component'], 'version': item['want']}
        if item['component'] in ('driver', 'firmware'):
            entry.update({'chip': chip, 'soc': chip in hardware_catalogue.soc_package_chips()})
        elif item['component'] in ('kernels', 'ops'):
            entry['chip'] = chip
        entries.append(entry)
    return entries


# The fix of a refused downgrade, per role: the variables its user sets.
DOWNGRADE_FIXES = {
    'hdk': 'raise hdk_driver_version and hdk_firmware_version, or set hdk_allow_downgrade to true if the downgrade '
           'is intended',
    'cann': 'raise cann_version (or cann_nnal_version), or set cann_allow_downgrade to true if the downgrade is intended',
    'container_runtime': 'raise container_runtime_version, or set container_runtime_allow_downgrade to true if the '
                         'downgrade is intended',
}


def refusal_message(plan, role, host):
    """The message a role stops with for what ``plan`` refuses of its components; '' when it refuses nothing.

    Each refused component's reason, then the role's downgrade fix unless every refusal is a damaged install
    (whose reason carries its own fix).
    """
    if role not in ROLES:
        raise ValueError('role %r is not one of %s' % (role, ', '.join(ROLES)))
    refused = plan['roles'][role]['refused']
    if not refused:
        return ''
    message = '%s: %s.' % (host, '; '.join(item['reason'] for item in refused))
    if any(not item.get('damaged') for item in refused):
        message += ' Fix: %s.' % DOWNGRADE_FIXES[role]
    return message


def operator_kernels_installed(installed, chip):
    """Every installed version of the operator kernels (``ops`` first, then ``kernels``), each as the entry the
    cann role's uninstall stages and removes: ``{component, version, chip}``.

    Huawei's toolkit upgrade removes the kernels installed with the old toolkit, but a kernels package installed
    on its own, or by hand after an upgrade, can sit beside a newer one: each version found goes with its own
    package. ``installed`` is the probe's ``installed`` (``all_versions`` when several are side by side).
    """
    found = []
    for component in ('ops', 'kernels'):
        entry = (installed or {}).get(component)
        if not entry:
            continue
        versions = entry.get('all_versions') or [entry.get('version')]
        found.extend({'component': component, 'version': version, 'chip': chip} for version in versions)
    return found
