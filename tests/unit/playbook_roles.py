# -*- coding: utf-8 -*-
"""The roles a playbook of the collection runs, read from its YAML (shared by the tests that need them)."""

import os

import yaml

PLAYBOOKS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'playbooks')
_ROLE_ACTIONS = ('ansible.builtin.import_role', 'ansible.builtin.include_role')


def _task_roles(tasks):
    """(role, tasks_from) of the roles tasks import or include, in blocks, rescues and always sections too."""
    found = []
    for task in tasks or []:
        for section in ('block', 'rescue', 'always'):
            found.extend(_task_roles(task.get(section)))
        for action in _ROLE_ACTIONS:
            if action in task:
                found.append((task[action]['name'], task[action].get('tasks_from')))
    return found


def playbook_roles(name, main_only=False, seen=None):
    """The roles (full names, first-seen order) a playbook runs, following its import_playbook entries.

    ``main_only``: only roles run at their main entry point (listed under ``roles:``, or imported or
    included without ``tasks_from``).
    """
    seen = set() if seen is None else seen
    name = name.split('npu.ascend.')[-1]
    name = name if name.endswith('.yml') else name + '.yml'
    with open(os.path.join(PLAYBOOKS_DIR, name)) as handle:
        plays = yaml.safe_load(handle)
    roles = []
    for play in plays:
        imported = play.get('ansible.builtin.import_playbook')
        if imported:
            if imported not in seen:
                seen.add(imported)
                roles.extend(role for role in playbook_roles(imported, main_only, seen) if role not in roles)
            continue
        found = [(role['role'] if isinstance(role, dict) else role, None) for role in play.get('roles') or []]
        found += _task_roles(play.get('tasks'))
        for role, tasks_from in found:
            if role not in roles and not (main_only and tasks_from):
                roles.append(role)
    return roles
