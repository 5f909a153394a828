# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether the container_runtime role can register the Ascend Docker Runtime on a node, kept free of Ansible."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def engine_problem(engines, known, drop_in_mergeable, containerd_release, containerd_config, host):
    """Why the role stops before registering the runtime ('' when it goes on).

    ``engines`` are the engines to register with (the inventory's, else those the probe found), ``known`` the
    engines the role knows. ``drop_in_mergeable`` is false when a containerd drop-in is asked for but containerd
    1.x would replace the whole CRI plugin table with it (``containerd_release`` is what ``containerd --version``
    printed, ``containerd_config`` the main config the role would edit in place instead).
    """
    engines, known = list(engines or []), list(known or [])
    if not drop_in_mergeable:
        return ("%s: container runtime: containerd_drop_in needs containerd 2.x, the node runs %s, which replaces the "
                "whole CRI plugin table with an imported one and would drop the main config's CRI settings. Fix: set "
                "container_runtime_containerd_drop_in to false (the role then edits %s in place, keeping everything "
                "else), or upgrade containerd to 2.x."
                % (host, containerd_release or 'containerd of an unknown release', containerd_config))
    if not engines or [engine for engine in engines if engine not in known]:
        return ('%s: container runtime: no engine to register the Ascend Docker Runtime with (found %s; known: %s). '
                'Fix: install containerd or Docker first, or set container_runtime_engines to engines the node runs.'
                % (host, ', '.join(engines) or 'neither containerd nor docker', ', '.join(known)))
    return ''
