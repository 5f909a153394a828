# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Commands run under timeout(1), and how to tell that timeout stopped one. No Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

# Tools' output is parsed; a translated message or a decimal comma would not match.
C_LOCALE = {'LC_ALL': 'C', 'LANG': 'C'}

# timeout(1) exits 124 when it stopped the command with SIGTERM; when SIGKILL was needed it
# reports 137, or is itself killed with its process group (-9).
TIMEOUT_RC = 124
TIMEOUT_KILLED_RCS = (137, -9)


def timeout_argv(argv, seconds, kill_after):
    """``argv`` under ``timeout``: SIGTERM after ``seconds``, SIGKILL ``kill_after`` seconds later."""
    return ['timeout', '--kill-after=%d' % kill_after, str(seconds)] + list(argv)


def stopped_by_timeout(rc, elapsed, seconds):
    """Whether timeout stopped the command: 124, or 137/-9 after the whole limit (137 alone is also the OOM killer's mark)."""
    return rc == TIMEOUT_RC or (rc in TIMEOUT_KILLED_RCS and elapsed >= seconds)


def run(run_command, argv, seconds, kill_after, clock=time.time):
    """Runs ``argv`` under timeout(1) in the C locale through ``run_command(argv, environ_update=...) ->
    (rc, out, err)`` (AnsibleModule.run_command); returns ``(rc, out, err, stopped)``, ``stopped`` telling
    whether timeout ended it."""
    started = clock()
    rc, out, err = run_command(timeout_argv(argv, seconds, kill_after), environ_update=C_LOCALE)
    return rc, out, err, stopped_by_timeout(rc, clock() - started, seconds)
