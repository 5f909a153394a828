# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one runner of the node's tools (npu-smi, hccn_tool): each run under timeout(1) in the C locale, every argv
kept. No Ansible imports.

npu_smi_runner.NpuSmiReader and hccn_tool_runner.HccnReader are ToolRunners: each says in ``_stopped`` what a run
that timeout had to stop raises (its own message, its own fix) and judges what its tool printed itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.npu.ascend.plugins.module_utils import timed_command

# SIGKILL this many seconds after timeout(1)'s SIGTERM, for a tool stuck in the driver.
KILL_AFTER_SECONDS = 10


class ToolRunner(object):
    """Runs ``binary`` with ``run_command(argv, environ_update=...) -> (rc, out, err)`` (AnsibleModule.run_command),
    each run under timeout(1); every argv run is kept in ``commands``."""

    def __init__(self, run_command, binary, timeout, clock=time.time):
        self._run_command = run_command
        self.binary = binary
        self.timeout = timeout
        self._clock = clock
        self.commands = []

    def _stopped(self, argv):
        """The exception a run of ``argv`` that timeout had to stop raises; each tool's runner words its own."""
        raise NotImplementedError

    def _run_tool(self, args):
        """``(rc, out, err)`` of one run of ``binary args``, its argv kept in ``commands``; raises ``_stopped(argv)``
        when timeout had to stop it."""
        argv = [self.binary] + [str(arg) for arg in args]
        self.commands.append(argv)
        rc, out, err, stopped = timed_command.run(self._run_command, argv, self.timeout, KILL_AFTER_SECONDS, self._clock)
        if stopped:
            raise self._stopped(argv)
        return rc, out, err
