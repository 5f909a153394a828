# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The background job that installs a role's staged packages: what ascend_runfile runs, and how long it is waited for.

The install roles (hdk, cann, container_runtime) start one ``ascend_runfile`` run with ``installers`` in the
background (``async``, ``poll: 0``) on every node of the play and then wait for it once
(``roles/packages/tasks/install.yml``). This module decides that job from the staged packages, kept free of Ansible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# How long the background job may last per installer: its archive check, an upgrade's uninstall and the install
# may each take the installer's limit, after up to the lock timeout for the node lock, and a run that finds an
# earlier run's installer still running waits for it (ascend_runfile); its own timeouts stop a hung installer
# long before this.
ASYNC_FACTOR = 6
ASYNC_MARGIN_SECONDS = 600


def _positive_int(value, what):
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError('%s must be a whole number of seconds, got %r' % (what, value))
    if number <= 0:
        raise ValueError('%s must be a positive number of seconds, got %r' % (what, value))
    return number


def installer_job(staged, components, timeouts, poll_interval, lock_timeout=600):
    """The job installing ``components`` (in this order) from ``staged`` (the packages role's ``packages_staged``).

    ``timeouts`` maps each component to its installer's limit in seconds; ``lock_timeout`` is the module's wait
    for the node lock before each installer. Returns ``installers`` (the module's
    option), ``async_seconds`` (the job's limit), ``poll_interval`` and ``retries`` (the wait's), and ``label``
    (``driver 25.0.rc1.1, firmware 7.7.0.1.231``) for the task names.
    """
    staged = staged or {}
    timeouts = timeouts or {}
    poll = _positive_int(poll_interval, 'the installer poll interval')
    try:
        lock_wait = int(lock_timeout)
    except (TypeError, ValueError):
        lock_wait = -1
    if lock_wait < 0:
        raise ValueError('the lock timeout must be 0 or more seconds, got %r' % (lock_timeout,))
    installers, labels, async_seconds = [], [], 0
    for component in components or []:
        package = staged.get(component)
        if not isinstance(package, dict) or not package.get('path'):
            raise ValueError('no staged package for %s (staged: %s)' % (component, ', '.join(sorted(staged)) or 'none'))
        if component not in timeouts:
            raise ValueError('no installer timeout for %s' % component)
        timeout = _positive_int(timeouts[component], 'the %s installer timeout' % component)
        installers.append({'src': package['path'], 'component': component, 'checksum': package.get('sha256'),
                           'timeout': timeout})
        labels.append(('%s %s' % (component, package.get('version') or '')).strip())
        async_seconds += timeout * ASYNC_FACTOR + lock_wait + ASYNC_MARGIN_SECONDS
    return {'installers': installers, 'async_seconds': async_seconds, 'poll_interval': poll,
            'retries': async_seconds // poll + 1, 'label': ', '.join(labels)}
