# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of the profiling role: which set_env.sh the operators source, whether the node is
ready for them (toolkit, accounts, device group, management device), which operator cannot profile
after the change, and, for the verify entry point, which msprof run left no profile. Every problem
is the message the role fails with. Pure functions, no Ansible imports."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping
from ansible_collections.npu.ascend.plugins.plugin_utils.plain_data import mapping as _mapping

# The device file msprof opens first; every /dev/davinci<N> too.
MANAGER_DEVICE = '/dev/davinci_manager'
# timeout(1)'s exit status when it stopped the command.
TIMED_OUT = 124
# What one failure quotes of a run's output.
_QUOTED_OUTPUT = 400
# A path the verify entry point stats for an operator whose run left no new profile: it never exists.
NO_PROFILE = '/nonexistent'
PARSED_OUTPUT = 'mindstudio_profiler_output'


def _results(registered):
    """The per-item results of a registered loop (empty when the task was skipped or did not run)."""
    return [item for item in _mapping(registered).get('results') or [] if isinstance(item, Mapping)]


def shorten(text, length=_QUOTED_OUTPUT, leeway=5, end='...'):
    """``text`` cut at a word to about ``length`` characters, as Jinja's ``truncate`` does."""
    if len(text) <= length + leeway:
        return text
    return text[:length - len(end)].rsplit(' ', 1)[0] + end


def set_env(probe, wanted):
    """The set_env.sh to source: the one the operator named if it exists, else the installed toolkit's."""
    probe = _mapping(probe)
    if wanted:
        return wanted if wanted in (probe.get('paths_present') or []) else ''
    toolkit = _mapping(_mapping(probe.get('installed')).get('toolkit'))
    return toolkit.get('set_env') or ''


def _readiness_problem(options, found_set_env, missing, groups, manager):
    group = options.get('device_group')
    if not found_set_env:
        where = ('no file %s (profiling_set_env)' % options['set_env']) if options.get('set_env') else \
            'no CANN toolkit under %s' % options.get('install_path')
        return ('%s. Fix: install CANN first (npu.ascend.cann) or set profiling_set_env to the toolkit\'s set_env.sh.'
                % where)
    if missing:
        return ('the operators %s have no account on the node. Fix: create their accounts (this role adds people to '
                'a group, it creates nobody), or remove them from profiling_operators.' % ', '.join(missing))
    if group not in groups:
        return ('the group %s does not exist. Fix: install the driver (npu.ascend.hdk creates HwHiAiUser), or set '
                'profiling_device_group to the group the driver was installed with (UserGroup in '
                '/etc/ascend_install.info).' % group)
    if not manager.get('exists'):
        return ('%s is missing: the driver is not loaded. Fix: install the driver and reboot if it asked for it '
                '(npu.ascend.hdk), then check npu-smi info.' % MANAGER_DEVICE)
    if manager.get('gr_name') != group or not (manager.get('rgrp') and manager.get('wgrp')):
        return ('%s belongs to group %s with mode %s, so members of %s could not open it. Fix: set '
                'profiling_device_group to %s, or reinstall the driver with the wanted --install-usergroup.'
                % (MANAGER_DEVICE, manager.get('gr_name'), manager.get('mode'), group, manager.get('gr_name')))
    return None


def _probe_failure(options, found_set_env, result):
    """None, or why the operator of one probe (``msprof=<path>`` and ``denied=<device>`` lines) cannot profile."""
    if result.get('skipped') or 'stdout_lines' not in result:
        return None
    lines = [str(line) for line in result.get('stdout_lines') or []]
    msprof = [line for line in lines if line.startswith('msprof=') and len(line) > len('msprof=')]
    denied = [line[len('denied='):] for line in lines if line.startswith('denied=')]
    prefix = '%s: profiling: %s ' % (options.get('host'), result.get('__profiling_operator'))
    if not msprof:
        return prefix + ('finds no msprof after sourcing %s. Fix: install the CANN toolkit completely (its '
                         'tools/profiler/bin/msprof), or point profiling_set_env at the set_env.sh that puts it on '
                         'PATH.' % found_set_env)
    if denied:
        return prefix + ('may not read and write %s. Fix: make sure the devices belong to %s with mode 0660 (the driver '
                         'sets this), then log in again.' % (', '.join(denied), options.get('device_group')))
    return None


def _new_profiles(operators, before, after):
    """Per operator, the path to stat for the parsed output of the profile its run added (NO_PROFILE for none)."""
    paths = []
    for index in range(len(operators)):
        seen = set(str(_mapping(found).get('path')) for found in
                   (_mapping(before[index]).get('files') if index < len(before) else None) or [])
        new = [str(_mapping(found).get('path')) for found in
               (_mapping(after[index]).get('files') if index < len(after) else None) or []
               if str(_mapping(found).get('path')) not in seen]
        paths.append('%s/%s' % (new[0], PARSED_OUTPUT) if new else NO_PROFILE)
    return paths


def _run_failure(options, operator, run, output):
    """None, or why msprof as ``operator`` left no profile."""
    rc = run.get('rc')
    if rc == 0 and _mapping(output.get('stat')).get('exists'):
        return None
    if rc != 0:
        what = 'exited %s' % rc
        if rc == TIMED_OUT:
            what += ' (stopped after %s s)' % options.get('verify_timeout_seconds')
        what += ': %s' % shorten((str(run.get('stderr') or '') or str(run.get('stdout') or '')).strip())
    else:
        what = 'wrote no PROF_* directory with %s in %s/%s' % (PARSED_OUTPUT, options.get('output_root'), operator)
    return ('%s: profiling: msprof as %s around `%s` %s. Fix: run the same as that user (source set_env.sh, then msprof '
            '--output=... <command>) and read its messages and its log in the output directory.'
            % (options.get('host'), operator, ' '.join(str(word) for word in options.get('verify_command') or []),
               what))


def role_state(probe, options, evidence=None):
    """Everything the profiling role decides about a node.

    ``probe``: ``ansible_facts.ascend`` (read with ``paths: [profiling_set_env]``); ``options``: ``host``
    and the role's variables without their prefix (``operators``, ``device_group``, ``install_path``,
    ``set_env``, ``output_root``, ``verify_command``, ``verify_timeout_seconds``); ``evidence``: what
    the role read so far - ``passwd`` and ``group`` (getent), ``manager`` (the stat of the management
    device), ``probes`` (each operator's probe), and for verify ``before``, ``runs``, ``after`` and
    ``outputs`` (registered loops over the operators).

    Returns ``set_env``, ``missing_operators``, ``problem`` (None, or why the node is not ready),
    ``probe_failures`` (one message per operator who cannot profile), ``new_profiles`` (per operator,
    the path of the parsed output of the profile its run added) and ``verify_failures`` (one message
    per operator whose run left no profile)."""
    options = _mapping(options)
    evidence = _mapping(evidence)
    operators = [str(name) for name in options.get('operators') or []]
    passwd = _mapping(evidence.get('passwd'))
    found_set_env = set_env(probe, options.get('set_env'))
    missing = [name for name in operators if name not in passwd]
    problem = _readiness_problem(options, found_set_env, missing, _mapping(evidence.get('group')),
                                 _mapping(_mapping(evidence.get('manager')).get('stat')))
    runs = _results(evidence.get('runs'))
    outputs = _results(evidence.get('outputs'))
    return {
        'set_env': found_set_env,
        'missing_operators': missing,
        'problem': None if problem is None else '%s: profiling: %s' % (options.get('host'), problem),
        'probe_failures': [failure for failure in (_probe_failure(options, found_set_env, result)
                                                   for result in _results(evidence.get('probes'))) if failure],
        'new_profiles': _new_profiles(operators, _results(evidence.get('before')), _results(evidence.get('after'))),
        'verify_failures': [failure for failure in (_run_failure(options, operator, runs[index], outputs[index])
                                                    for index, operator in enumerate(operators)
                                                    if index < len(runs) and index < len(outputs)) if failure],
    }
