# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the cann role: everything the role decides about one node, from its probe
(``ansible_facts.ascend``), its wanted stack and the role's options. The role's tasks read the fields and act;
``roles/cann/vars/main.yml`` keeps only names and constants. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.npu.ascend.plugins.plugin_utils import planner
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping


def cann_state(probe, wanted, options):
    """Everything the cann role decides about a node.

    ``probe``: ``ansible_facts.ascend`` (None before any probe); ``wanted``: component to version
    (``ascend_wanted_stack``); ``options``: ``host``, ``install_path``, ``allow_downgrade``, ``chip`` (in the
    kernels package's name), ``profile_script`` (the environment script's path) and ``profile_wanted`` (the
    script as the role writes it: ``sha1``, ``mode``, ``uid``, ``gid``, as the probe reports a file).

    Returns ``plan`` (the node's plan, ``planner.plan_node``), ``install`` (the CANN packages in the plan's
    order), ``refused`` and ``refusal`` (the message, '' when nothing is refused), ``due`` (the plan installs or
    refuses a CANN package), ``packages`` (the packages role's ``packages_components`` for ``install``),
    ``probe_current`` (the probe read this install path), ``profile_as_wanted`` (the probe found the script as
    the role writes it) and ``converged`` (nothing for the role to do). TypeError or ValueError names a wrong
    input."""
    if probe is not None and not isinstance(probe, Mapping):
        raise TypeError('the probe must be what npu.ascend.ascend_facts returned (a dict), got %s'
                        % type(probe).__name__)
    options = _mapping(options)
    host = str(options.get('host') or 'localhost')
    plan = planner.plan_node(wanted, probe, allow_downgrade={'cann': bool(options.get('allow_downgrade'))})
    part = plan['roles']['cann']
    probe = _mapping(probe)
    probe_current = planner.probe_is_current(probe, options.get('install_path'), False)
    found = _mapping(probe.get('files')).get(options.get('profile_script'))
    profile_as_wanted = found is not None and dict(found) == dict(_mapping(options.get('profile_wanted')))
    return {
        'plan': plan,
        'install': list(part['install']),
        'refused': list(part['refused']),
        'refusal': planner.refusal_message(plan, 'cann', host),
        'due': bool(part['due']),
        'packages': planner.packages_to_stage(plan, role='cann', chip=options.get('chip') or None),
        'probe_current': probe_current,
        'profile_as_wanted': profile_as_wanted,
        'converged': probe_current and profile_as_wanted and not part['due'],
    }
