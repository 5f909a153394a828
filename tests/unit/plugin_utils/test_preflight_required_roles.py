# -*- coding: utf-8 -*-
"""preflight_required_roles names every role site.yml and kubernetes.yml run, and nothing else."""

import os

import yaml
from playbook_roles import playbook_roles

from ansible_collections.npu.ascend.plugins.plugin_utils import role_requirements as rr

REPO = os.path.dirname(rr.ROLES_DIR)


def test_the_default_is_every_role_of_site_and_kubernetes():
    with open(os.path.join(REPO, 'roles', 'preflight', 'defaults', 'main.yml')) as handle:
        default = yaml.safe_load(handle)['preflight_required_roles']
    played = playbook_roles('site.yml') + playbook_roles('kubernetes.yml')
    assert sorted(set(default)) == sorted(set(played))
    # And each of them can be read.
    for role in default:
        rr.required_variables(role)
