# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The variables the collection's roles cannot run without, and which hosts lack them.

A role's ``meta/argument_specs.yml`` marks an option ``required: true``; Ansible checks it only
when the role starts, so a variable only the fourth play's role needs is found missing after the
first three plays have changed the nodes. Preflight asks this module instead, before anything
changes, for every role the playbook will run.

The roles are read from the collection's own ``roles/`` directory, found from this file's path,
so an installed collection reads its own specs, not a checkout's. Controller side only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os
import re

import yaml

COLLECTION = 'npu.ascend'
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')

# Example values for required variables whose description gives none (the description's
# "for example C(...)" and a commented "# name: value" line in the role's defaults come first).
CURATED_EXAMPLES = {
    'hdk_driver_version': '25.0.rc1.1',
    'hdk_firmware_version': '7.7.0.1.231',
    'cann_version': '8.2.RC1',
    'container_runtime_version': '7.3.0',
}

_FOR_EXAMPLE = re.compile(r'for example\s+[CV]\(([^)]+)\)')
# Ansible's documentation markup (C(code), V(value), O(option), M(module), ...), for plain messages.
_MARKUP = re.compile(r'\b[A-Z]\(([^()]*)\)')


class RoleSpecError(ValueError):
    """A role that is not in the collection, or whose spec cannot be read."""


def _role_name(role):
    """``hdk`` or ``npu.ascend.hdk`` -> ``hdk``; ``role:entry`` keeps its entry point apart."""
    name, _sep, entry_point = str(role).strip().partition(':')
    if not re.match(r'^(?:[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*$', name):
        raise RoleSpecError('%r is not a role name (expected hdk, npu.ascend.hdk or npu.ascend.hdk:entry_point)'
                            % (role,))
    if '.' in name:
        namespace_collection, _dot, short = name.rpartition('.')
        if namespace_collection != COLLECTION:
            raise RoleSpecError('role %s is not one of the %s collection; only its roles have specs to read'
                                % (name, COLLECTION))
        name = short
    return name, entry_point or 'main'


def _load_yaml(path):
    try:
        with open(path) as handle:
            return yaml.safe_load(handle) or {}
    except (IOError, OSError) as error:
        raise RoleSpecError('cannot read %s: %s' % (path, error))
    except yaml.YAMLError as error:
        raise RoleSpecError('%s is not valid YAML: %s' % (path, error))


def _first_existing(directory, names):
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def _role_file_vars(role_dir, kind):
    """Names set by the role's defaults/ or vars/ main file, and its text (for commented examples)."""
    path = _first_existing(os.path.join(role_dir, kind), ('main.yml', 'main.yaml', 'main'))
    if path is None:
        return set(), ''
    data = _load_yaml(path)
    with open(path) as handle:
        text = handle.read()
    return set(data) if isinstance(data, dict) else set(), text


def _description_text(description):
    if isinstance(description, (list, tuple)):
        return ' '.join(str(part) for part in description)
    return str(description or '')


def _example(name, spec, defaults_text):
    found = _FOR_EXAMPLE.search(_description_text(spec.get('description')))
    if found:
        return found.group(1)
    commented = re.search(r'^#\s*%s:\s*(\S.*?)\s*$' % re.escape(name), defaults_text, re.MULTILINE)
    if commented:
        return commented.group(1)
    if name in CURATED_EXAMPLES:
        return CURATED_EXAMPLES[name]
    return None


def required_variables(role, roles_dir=None):
    """The required variables of one role's entry point that the role itself does not set.

    Returns a list of ``{role, entry_point, variable, description, example}`` in spec order.
    An option with a ``default:`` in its spec, or set in the role's defaults/ or vars/, is not
    needed from the inventory.
    """
    name, entry_point = _role_name(role)
    roles_dir = roles_dir or ROLES_DIR
    role_dir = os.path.join(roles_dir, name)
    if not os.path.isdir(role_dir):
        raise RoleSpecError('the %s collection has no role %s (looked in %s)' % (COLLECTION, name, roles_dir))
    spec_path = _first_existing(os.path.join(role_dir, 'meta'), ('argument_specs.yml', 'argument_specs.yaml'))
    if spec_path is None:
        return []
    entry_points = (_load_yaml(spec_path).get('argument_specs') or {})
    if entry_point not in entry_points:
        raise RoleSpecError('role %s has no entry point %s (it has %s)'
                            % (name, entry_point, ', '.join(sorted(entry_points)) or 'none'))
    options = (entry_points[entry_point] or {}).get('options') or {}
    defaults, defaults_text = _role_file_vars(role_dir, 'defaults')
    role_vars, _text = _role_file_vars(role_dir, 'vars')
    result = []
    for variable, spec in options.items():
        spec = spec or {}
        if not spec.get('required') or 'default' in spec or variable in defaults or variable in role_vars:
            continue
        result.append({
            'role': '%s.%s' % (COLLECTION, name),
            'entry_point': entry_point,
            'variable': variable,
            'description': _MARKUP.sub(r'\1', ' '.join(_description_text(spec.get('description')).split())),
            'example': _example(variable, spec, defaults_text),
        })
    return result


def missing_variables(defined_by_host, roles, roles_dir=None):
    """Which required variables of ``roles`` each host lacks.

    ``defined_by_host``: host -> the names of the variables it has (inventory, extra vars, facts).
    Returns one item per missing variable, in the order of ``roles`` and their specs:
    ``{role, entry_point, variable, description, example, hosts}``, ``hosts`` sorted; a variable
    two roles require is listed once, under the first.
    """
    if isinstance(roles, str):
        roles = [roles]
    seen = set()
    missing = []
    for role in roles:
        for item in required_variables(role, roles_dir=roles_dir):
            if item['variable'] in seen:
                continue
            seen.add(item['variable'])
            hosts = sorted(str(host) for host, names in defined_by_host.items() if item['variable'] not in set(names))
            if hosts:
                entry = dict(item)
                entry['hosts'] = hosts
                missing.append(entry)
    return missing


def _hosts_text(hosts, every_host):
    if every_host and set(hosts) == set(every_host):
        return 'every host' if len(hosts) > 1 else hosts[0]
    return ', '.join(hosts)


def misspelt_as(variable, unknown):
    """The names in ``unknown`` (unknown_variables) that look like misspellings of ``variable``."""
    return [item['variable'] for item in unknown or [] if item.get('suggestion') == variable]


def missing_variables_message(missing, every_host=None, unknown=None):
    """One message for the whole run: each missing variable, its role, where, and an example, naming a
    misspelling of it that is set instead; then the other misspelt variables (``unknown``)."""
    lines = []
    if missing:
        lines.append('%d variable(s) the playbook\'s roles require are not set; set them in the inventory '
                     '(group_vars/npu_nodes, for example) before anything is changed:' % len(missing))
    for item in missing or []:
        example = ('%s: %s' % (item['variable'], item['example'])) if item.get('example') else item['variable']
        misspelt = misspelt_as(item['variable'], unknown)
        lines.append('- %s (role %s%s) missing on %s%s; for example `%s`%s' % (
            item['variable'], item['role'],
            '' if item.get('entry_point', 'main') == 'main' else ', entry point ' + item['entry_point'],
            _hosts_text(item['hosts'], every_host),
            (' (%s is set instead: rename it)' % ' and '.join(misspelt)) if misspelt else '', example,
            ('. ' + item['description']) if item.get('description') else ''))
    unknown_text = unknown_variables_message(unknown, every_host)
    if unknown_text:
        lines.append(unknown_text)
    return '\n'.join(lines)


# --------------------------------------------------------------------------------------
# Variables that look like the collection's but are none of its variables
# --------------------------------------------------------------------------------------

# Names outside the roles' prefixes that the collection's playbooks read.
COLLECTION_PREFIX = 'npu_ascend_'
# The connection variables every Kubernetes role shares (k8s_kubeconfig, k8s_context; docs/kubernetes.md).
SHARED_PREFIXES = (COLLECTION_PREFIX, 'k8s_')
# How far a name may be from an option and still be its misspelling: one edit in short names,
# two from 10 characters on (hdk_driver_verison is two letters swapped, one edit with transpositions).
_NEAR_SHORT = 1
_NEAR_LONG = 2
_NEAR_LONG_FROM = 10
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def role_names(roles_dir=None):
    """The collection's roles, read from its ``roles/`` directory."""
    roles_dir = roles_dir or ROLES_DIR
    return sorted(name for name in os.listdir(roles_dir)
                  if os.path.isdir(os.path.join(roles_dir, name)) and re.match(r'^[a-z_][a-z0-9_]*$', name))


def prefixes(roles_dir=None):
    """The prefixes that make a variable look like the collection's: each role's name and ``_``,
    ``npu_ascend_`` and the shared ``k8s_``, longest first (``k8s_node_`` before ``k8s_``)."""
    found = ['%s_' % name for name in role_names(roles_dir)] + list(SHARED_PREFIXES)
    return tuple(sorted(set(found), key=lambda prefix: (-len(prefix), prefix)))


def _spec_options(role_dir):
    spec_path = _first_existing(os.path.join(role_dir, 'meta'), ('argument_specs.yml', 'argument_specs.yaml'))
    if spec_path is None:
        return {}
    options = {}
    for entry_point, spec in (_load_yaml(spec_path).get('argument_specs') or {}).items():
        for name, option in ((spec or {}).get('options') or {}).items():
            options.setdefault(name, []).append((entry_point, bool((option or {}).get('required'))))
    return options


def _names_in_text(directory, wanted_prefixes):
    """Every name with one of ``wanted_prefixes`` in the files under ``directory``: the facts the roles
    publish (set_fact, register), the variables their tasks and templates read, the playbooks' own."""
    names = set()
    for root, dirs, files in os.walk(directory):
        dirs[:] = [name for name in dirs if not name.startswith('.') and name != '__pycache__']
        for file_name in files:
            try:
                with open(os.path.join(root, file_name), 'rb') as handle:
                    text = handle.read().decode('utf-8', 'replace')
            except (IOError, OSError):
                continue
            # Comment lines are left out: one may quote a misspelling to explain the check.
            code = '\n'.join(line for line in text.splitlines() if not line.lstrip().startswith('#'))
            names.update(name for name in _NAME.findall(code) if name.startswith(wanted_prefixes))
    return names


def known_variables(roles_dir=None):
    """See _known_variables; read once per process and roles directory (the files do not change in a run)."""
    return _known_variables(roles_dir or ROLES_DIR)


@functools.lru_cache(maxsize=4)
def _known_variables(roles_dir):
    """``{'options': {name: {'roles': [...], 'required': bool}}, 'known': set}``.

    ``options`` are what a user sets: every option of every entry point of every role's argument spec
    and every name of its defaults/ and vars/ (the suggestions come from these). ``known`` adds every
    name with one of the prefixes that the roles and playbooks mention (the facts they publish, such as
    ``preflight_plan``, and the variables they read with a default), which are no misspellings either.
    """
    roles_dir = roles_dir or ROLES_DIR
    wanted_prefixes = prefixes(roles_dir)
    options = {}
    for name in role_names(roles_dir):
        role_dir = os.path.join(roles_dir, name)
        entries = _spec_options(role_dir)
        defaults, _text = _role_file_vars(role_dir, 'defaults')
        role_vars, _text = _role_file_vars(role_dir, 'vars')
        for variable in set(entries) | defaults | role_vars:
            if variable.startswith('__'):
                continue
            option = options.setdefault(variable, {'roles': [], 'required': False})
            option['roles'].append('%s.%s' % (COLLECTION, name))
            option['required'] = option['required'] or (
                any(required for _entry, required in entries.get(variable, []))
                and variable not in defaults and variable not in role_vars)
    playbooks_dir = os.path.join(os.path.dirname(roles_dir), 'playbooks')
    if os.path.isdir(playbooks_dir):
        # The playbooks' own variables (npu_ascend_max_fail_percentage) are set by users like options.
        for variable in _names_in_text(playbooks_dir, (COLLECTION_PREFIX,)):
            options.setdefault(variable, {'roles': [], 'required': False})
    known = set(options) | _names_in_text(roles_dir, wanted_prefixes)
    if os.path.isdir(playbooks_dir):
        known |= _names_in_text(playbooks_dir, wanted_prefixes)
    return {'options': options, 'known': known}


def edit_distance(left, right):
    """Edits (insert, delete, replace, swap two neighbours) that turn ``left`` into ``right``."""
    previous_previous = None
    previous = list(range(len(right) + 1))
    for i, left_char in enumerate(left, 1):
        current = [i] + [0] * len(right)
        for j, right_char in enumerate(right, 1):
            cost = 0 if left_char == right_char else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if (previous_previous is not None and i > 1 and j > 1
                    and left_char == right[j - 2] and left[i - 2] == right_char):
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        previous_previous, previous = previous, current
    return previous[len(right)]


def near(name, option):
    """Whether ``name`` is close enough to ``option`` to be taken for its misspelling."""
    limit = _NEAR_LONG if min(len(name), len(option)) >= _NEAR_LONG_FROM else _NEAR_SHORT
    return edit_distance(name, option) <= limit


def closest_option(name, options):
    """The option nearest to ``name`` (ties: the shorter, then alphabetical), or None when none is near."""
    best = None
    for option in options:
        if abs(len(option) - len(name)) > _NEAR_LONG:
            continue
        distance = edit_distance(name, option)
        if near(name, option) and (best is None or (distance, len(option), option) < best):
            best = (distance, len(option), option)
    return best[2] if best else None


# Variables earlier versions read and that one shared variable replaced (docs/kubernetes.md, "One label
# domain, one Node name"): setting one now would be silently ignored, so it stops the run naming the
# variable that took its place.
REPLACED_VARIABLES = dict(
    [(name, 'npu_ascend_label_domain') for name in (
        'k8s_node_label_domain', 'validate_k8s_label_domain', 'k8s_maintenance_label_domain', 'doctor_label_domain',
        'fleet_report_label_domain', 'upgrade_label_domain', 'device_plugin_unvalidated_taint_key',
        'exporter_unvalidated_taint_key', 'k8s_node_taint', 'validate_k8s_taint', 'device_plugin_pause_label',
        'k8s_maintenance_device_plugin_pause_label')]
    + [(name, 'npu_ascend_k8s_node_name') for name in (
        'k8s_node_name', 'validate_k8s_node_name', 'k8s_maintenance_node_name', 'health_gate_node_name',
        'doctor_k8s_node_name', 'fleet_report_k8s_node_name')])


def unknown_variables(defined_by_host, roles_dir=None):
    """Variables the hosts set that look like the collection's (a role's prefix, or ``npu_ascend_``) but
    that no role knows.

    ``defined_by_host``: host -> the names of its variables. Returns one item per name, sorted:
    ``{variable, hosts, suggestion, suggestion_required, severity}``. ``severity`` is ``error`` when the
    name is a near miss of an option (its value is silently ignored while the option keeps its default,
    or is missing when required), ``warning`` when it is near no option (it may be the user's own).
    """
    wanted_prefixes = prefixes(roles_dir)
    known = known_variables(roles_dir)
    hosts_of = {}
    for host, names in defined_by_host.items():
        for name in names:
            name = str(name)
            if name.startswith(wanted_prefixes) and name not in known['known']:
                hosts_of.setdefault(name, set()).add(str(host))
    result = []
    for name in sorted(hosts_of):
        replaced_by = REPLACED_VARIABLES.get(name)
        suggestion = replaced_by or closest_option(name, known['options'])
        result.append({
            'variable': name,
            'hosts': sorted(hosts_of[name]),
            'suggestion': suggestion,
            'suggestion_required': bool(suggestion and suggestion in known['options']
                                        and known['options'][suggestion]['required']),
            'replaced': bool(replaced_by),
            'severity': 'error' if suggestion else 'warning',
        })
    return result


def unknown_variable_text(item, every_host=None):
    """One sentence for one unknown variable: where it is set and what it probably should be."""
    where = _hosts_text(item['hosts'], every_host)
    if item.get('replaced'):
        return ('%s (set on %s) is no longer read: %s replaced it for every role (docs/kubernetes.md). Fix: set %s '
                'instead and remove %s' % (item['variable'], where, item['suggestion'], item['suggestion'],
                                           item['variable']))
    if item.get('suggestion'):
        return ('%s (set on %s) is not a variable of %s; did you mean %s? Fix: rename it to %s, or its value is '
                'ignored' % (item['variable'], where, COLLECTION, item['suggestion'], item['suggestion']))
    return ('%s (set on %s) is not a variable of %s and is near none of its variables; if it is your own, '
            'ignore this, else see `ansible-doc -t role %s.<role>` for the names' % (
                item['variable'], where, COLLECTION, COLLECTION))


def unknown_variables_message(unknown, every_host=None):
    """The lines of the stop for misspelt variables (the errors only), or ''."""
    errors = [item for item in unknown or [] if item.get('severity') == 'error']
    if not errors:
        return ''
    lines = ['%d variable(s) look like npu.ascend\'s but are none of its variables; rename them before anything '
             'is changed:' % len(errors)]
    lines.extend('- ' + unknown_variable_text(item, every_host) for item in errors)
    return '\n'.join(lines)
