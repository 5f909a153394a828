# -*- coding: utf-8 -*-
"""preflight_required_roles names every role site.yml and kubernetes.yml run, and nothing else."""

import os

import yaml

from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements as rr

REPO = os.path.dirname(rr.ROLES_DIR)


def _playbook_roles(name, seen=None):
    seen = seen if seen is not None else []
    with open(os.path.join(REPO, 'playbooks', name)) as handle:
        plays = yaml.safe_load(handle)
    for play in plays:
        if 'ansible.builtin.import_playbook' in play:
            _playbook_roles(play['ansible.builtin.import_playbook'], seen)
            continue
        roles = [role['role'] if isinstance(role, dict) else role for role in play.get('roles') or []]
        # A role a play includes as a task (the optional viewer) counts as well.
        roles += [task[key]['name'] for task in play.get('tasks') or []
                  for key in ('ansible.builtin.include_role', 'ansible.builtin.import_role') if key in task]
        for role in roles:
            if role not in seen:
                seen.append(role)
    return seen


def test_the_default_is_every_role_of_site_and_kubernetes():
    with open(os.path.join(REPO, 'roles', 'preflight', 'defaults', 'main.yml')) as handle:
        default = yaml.safe_load(handle)['preflight_required_roles']
    played = _playbook_roles('site.yml') + _playbook_roles('kubernetes.yml')
    assert sorted(set(default)) == sorted(set(played))
    # And each of them can be read.
    for role in default:
        rr.required_variables(role)
