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


def missing_variables_message(missing, every_host=None):
    """One message for the whole run: each missing variable, its role, where, and an example."""
    if not missing:
        return ''
    lines = ['%d variable(s) the playbook\'s roles require are not set; set them in the inventory '
             '(group_vars/npu_nodes, for example) before anything is changed:' % len(missing)]
    for item in missing:
        example = ('%s: %s' % (item['variable'], item['example'])) if item.get('example') else item['variable']
        lines.append('- %s (role %s%s) missing on %s; for example `%s`%s' % (
            item['variable'], item['role'],
            '' if item.get('entry_point', 'main') == 'main' else ', entry point ' + item['entry_point'],
            _hosts_text(item['hosts'], every_host), example,
            ('. ' + item['description']) if item.get('description') else ''))
    return '\n'.join(lines)
