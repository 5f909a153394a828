#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ascend_runfile
short_description: Install, upgrade or uninstall one Huawei Ascend .run package idempotently
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Installs, upgrades or uninstalls one Huawei Ascend C(.run) package (NPU driver, NPU firmware, CANN
    toolkit, CANN kernels, CANN ops, NNAL, Ascend Docker Runtime) that is already on the node.
  - The package version comes from the file name (Huawei's names are authoritative); the installed
    version from the files each component writes (the same ones M(npu.ascend.ascend_facts) reads).
    Equal versions do nothing, a newer package upgrades, an older one is refused unless
    O(allow_downgrade=true).
  - Before running anything the module verifies O(checksum) and then the archive itself with
    C(<src> --check).
  - Runs the installers the way Huawei's deployer does (C(--nox11 --full --quiet --install-for-all) for a
    fresh driver, C(--upgrade) over an existing one, C(--install)/C(--upgrade) for CANN), answers C(y) on
    stdin to EULA and confirmation prompts, and treats exit codes 0 and 2 as success for driver and
    firmware.
  - Reads the installer's output. C(Reboot needed) (and the firmware's C(Reboot now or after driver
    installation)) is the only signal that a reboot is needed; the module returns it as
    RV(reboot_required) and records it in C(/var/lib/npu_ascend/reboot-required.json) with the current
    boot, which M(npu.ascend.ascend_facts) turns into C(reboot_pending). A failure is reported with the
    installer's own error line and the fix.
  - After the run the installed version is read again and must equal the package version.
  - Before its first installer command the module records, in C(/run/npu_ascend/installers/<component>.json),
    its pid, the installer's pid and argv, the start and the deadline, and where its result will be; at the end it
    writes the result next to it. A later run that finds that installer still running (for example because the
    controller died while the installer ran under C(async)) waits for it and returns its result (RV(adopted)) instead
    of starting the installer again.
  - A component whose version file is there but names no version (empty, C(Version=) with no value, no
    Version line) is a damaged install, not a missing one, and is refused (also in check mode and with
    O(state=absent)) naming the file and the fix; so is a version file that is not a regular file or is larger
    than 1 MiB.
options:
  src:
    description:
      - Path of the C(.run) file on the node. It must be executable.
      - Required with O(state=present) unless O(installers) is given. With O(state=absent) it is used for the C(--uninstall) of CANN
        packages and the docker runtime when it exists.
      - In check mode it may be missing (a dry run does not copy the package to a fresh node); the plan is
        then made from the file name alone, with a warning that O(checksum) and the archive are not checked.
    type: path
  state:
    description:
      - V(present) installs or upgrades to the package's version, V(absent) uninstalls the component.
      - With V(absent), the version removed is the package's when several are installed side by side (the
        operator kernels of an older toolkit stay beside the current ones, and each goes with its own package);
        otherwise the installed version.
    type: str
    choices: [present, absent]
    default: present
  component:
    description:
      - The component; derived from the O(src) file name when omitted. When both are given they must agree.
    type: str
    choices: [driver, firmware, toolkit, kernels, ops, nnal, docker_runtime]
  checksum:
    description:
      - Expected SHA-256 of O(src) (hex, optionally prefixed C(sha256:)). Verified before anything else.
    type: str
  install_path:
    description:
      - Install path of the packages (C(--install-path)). The default is not passed to the installer.
    type: path
    default: /usr/local/Ascend
  install_for_all:
    description:
      - Pass C(--install-for-all) so that users other than the installing one can use the component.
      - Defaults to true for the driver and the CANN packages, which accept it; the firmware and the docker
        runtime ignore it. The SoC (310B) driver rejects it, so true is an error there.
    type: bool
  extra_args:
    description:
      - More installer arguments, appended to every run of the C(.run) file (for example
        C(--install-scene=containerd) for the docker runtime). Not passed to uninstall scripts.
    type: list
    elements: str
    default: []
  allow_downgrade:
    description:
      - Install a package older than the installed version instead of failing.
    type: bool
    default: false
  timeout:
    description:
      - Seconds each installer run (and the archive check before it) may take before it is stopped
        (through C(timeout), which sends C(SIGTERM) and C(SIGKILL) 30 seconds later). The run then fails
        naming the component, the version and the limit.
      - When omitted, a default per component with a wide margin over what real servers take (see the
        timeout table in docs/packages.md) - V(1800) for the driver (its DKMS build compiles the kernel
        module), V(3600) for the firmware (it flashes every NPU in turn), V(1800) for the toolkit,
        kernels and ops (several GB to unpack), V(900) for NNAL and V(600) for the docker runtime.
      - Must be a positive number of seconds; there is no "no limit".
    type: int
  installers:
    description:
      - Several packages to install or upgrade in this order, in one process, instead of O(src) - for example
        the firmware and the driver, or the CANN toolkit, its operator kernels and NNAL. The roles start one
        such run in the background on every node of the play and wait for it once.
      - Each entry is handled as a run with that O(src) alone would be (checksum, archive check, record,
        adoption of an earlier run's installer, node lock, timeout); the other options are shared. The node
        lock is released between two installers. The first installer that fails ends the run; those after
        it do not run.
      - Only with O(state=present); not together with O(src), O(component), O(checksum) or O(timeout).
    type: list
    elements: dict
    suboptions:
      src:
        description: Path of the C(.run) file on the node, as O(src).
        type: path
        required: true
      component:
        description: The component, as O(component).
        type: str
        choices: [driver, firmware, toolkit, kernels, ops, nnal, docker_runtime]
      checksum:
        description: Expected SHA-256 of this O(installers[].src), as O(checksum).
        type: str
      timeout:
        description: Seconds each run of this installer may take, as O(timeout).
        type: int
  lock_timeout:
    description:
      - Seconds to wait for the node lock C(/run/npu_ascend/lock) before the installers run. The collection's
        installers and edits of engine configs hold it, so two runs against one node never interleave them; a run
        that gives up names the holder (pid, module, start time). V(0) does not wait. Check mode takes no lock.
      - When the holder is an installer of this same package that is still running (started by a run whose
        controller died or was killed, or by a run beside this one), the wait is not cut by this timeout but by
        that installer's own deadline, and its result is this run's result; no second installer is started.
    type: int
    default: 600
notes:
  - Supports check mode (decides and returns the commands it would run, runs nothing) and diff mode
    (the installed version before and after). Check mode reports the same C(changed) as the real run would,
    also when O(src) is not on the node yet (the version comes from its file name; O(checksum) and the
    archive cannot be verified then, which a warning says).
  - In check mode a missing prerequisite (the CANN toolkit under C(kernels) or C(ops)) is a warning
    rather than an error, since the toolkit is normally planned by an earlier task of the same dry run;
    outside check mode it fails as before.
  - Must run as root (C(become=true)).
seealso:
  - module: npu.ascend.ascend_facts
extends_documentation_fragment:
  - npu.ascend.attributes
attributes:
  check_mode:
    support: partial
    details:
      - Reports the same C(changed) and the installer commands a real run would run, and runs none of them.
      - The installer's own archive check (C(--check)) does not run, and when O(src) is not on the node yet its
        checksum cannot be verified either; a missing prerequisite is a warning instead of an error.
  diff_mode:
    support: full
    details:
      - The installed version before and after.
  idempotent:
    support: full
    details:
      - A component already at the package's version is kept; nothing runs.
'''

EXAMPLES = r'''
- name: Install or upgrade the NPU driver
  npu.ascend.ascend_runfile:
    src: /opt/ascend/Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run
    checksum: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  register: driver

- name: Reboot when the installer asked for it
  ansible.builtin.reboot:
  when: driver.reboot_required

- name: Install the docker runtime for containerd
  npu.ascend.ascend_runfile:
    src: /opt/ascend/Ascend-docker-runtime_7.3.0_linux-x86_64.run
    extra_args:
      - --install-scene=containerd

- name: Install the CANN toolkit, then its operator kernels, in one run
  npu.ascend.ascend_runfile:
    installers:
      - src: /opt/ascend/Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run
        timeout: 1800
      - src: /opt/ascend/Ascend-cann-kernels-910b_8.2.RC1_linux-aarch64.run
  register: cann_installers

- name: Remove the CANN toolkit
  npu.ascend.ascend_runfile:
    component: toolkit
    state: absent
'''

RETURN = r'''
component:
  description: The component handled.
  returned: always
  type: str
  sample: driver
action:
  description:
    - What was (or in check mode would be) done, V(install), V(upgrade), V(downgrade) (allowed by O(allow_downgrade),
      run through the installer's upgrade path), V(uninstall) or V(keep) (nothing to do).
    - The same words as the plan M(npu.ascend.ascend_facts) and preflight print.
  returned: always
  type: str
  sample: upgrade
reason:
  description: Why that action was chosen.
  returned: always
  type: str
package_version:
  description: Version of the package, from its file name; null with O(state=absent) and no O(src).
  returned: always
  type: str
  sample: 25.0.rc1.1
version_before:
  description: Installed version before the run, null when not installed.
  returned: always
  type: str
  sample: 24.1.rc2
version_after:
  description: Installed version read from disk after the run (in check mode, the expected one).
  returned: always
  type: str
  sample: 25.0.rc1.1
reboot_required:
  description: True when the installer said a reboot is needed for the change to take effect.
  returned: always
  type: bool
cmd:
  description: The (last) installer argv run, or that would be run in check mode; empty when nothing to do.
  returned: always
  type: list
  elements: str
  sample: [/opt/ascend/Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run, --nox11, --upgrade, --quiet]
commands:
  description: Every argv run or planned, in order (kernels and ops upgrade with uninstall then install).
  returned: always
  type: list
  elements: list
rc:
  description: Exit code of the last installer run; null when nothing ran.
  returned: always
  type: int
stdout_lines:
  description: Output of the installer runs.
  returned: always
  type: list
  elements: str
adopted:
  description:
    - Set when this run found the same package's installer still running, started by an earlier run, waited for it
      and returned its result instead of running the installer again; names that run (pid, start, argv).
  returned: when an earlier run's installer was waited for
  type: dict
results:
  description:
    - With O(installers), each installer's result (the keys above), in their order; the run stops after the first
      that failed, and its C(msg), C(component), C(cause) and C(fix) are also the run's own.
  returned: with O(installers)
  type: list
  elements: dict
components:
  description: With O(installers), the components handled, in their order.
  returned: with O(installers)
  type: list
  elements: str
  sample: [firmware, driver]
changed_components:
  description: With O(installers), the components whose installer ran (or, in check mode, would run).
  returned: with O(installers)
  type: list
  elements: str
  sample: [driver]
log_tail:
  description:
    - The last 20 lines of the installer's log (the C(LogFile) it names, else
      C(/var/log/ascend_seclog/ascend_install.log) or the newest log under C(/var/log/ascend_seclog)).
  returned: always
  type: list
  elements: str
'''

import hashlib
import os
import platform
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read, durable_file
from ansible_collections.npu.ascend.plugins.module_utils.files import node_lock
from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state, installer_output, installer_record
from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker, runfile
from ansible_collections.npu.ascend.plugins.module_utils import timed_command
from ansible_collections.npu.ascend.plugins.module_utils.packages.package_names import parse_package_name
from ansible_collections.npu.ascend.plugins.module_utils.packages.ascend_version import compare_versions
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import VersionFileError

# Enough answers for the EULA prompt plus "do you want to continue?" confirmations.
PROMPT_ANSWERS = 'y\ny\ny\ny\n'
KILL_AFTER_SECONDS = 30
# Beyond the installer commands' own timeouts: the checksum, the reads before and after them.
RECORD_MARGIN_SECONDS = 120
# Seconds an installer run may take when the caller sets no timeout: a wide margin over what
# real servers take (docs/packages.md has the table and the reasons).
DEFAULT_TIMEOUTS = {
    'driver': 1800,
    'firmware': 3600,
    'toolkit': 1800,
    'kernels': 1800,
    'ops': 1800,
    'nnal': 900,
    'docker_runtime': 600,
}


class UnreadAnswers(object):
    """stdin of an installer that may exit before it reads the answers we offer its prompts.

    A prerequisite failure ends the installer at once; writing the answers then raises a broken
    pipe, and run_command would report that instead of the installer's own error message.
    """

    def __init__(self, pipe):
        self._pipe = pipe

    def write(self, data):
        try:
            return self._pipe.write(data)
        except BrokenPipeError:
            return 0

    def close(self):
        try:
            self._pipe.close()
        except BrokenPipeError:
            pass


def tolerate_unread_answers(process):
    process.stdin = UnreadAnswers(process.stdin)


def sha256_of(path):
    digest = hashlib.sha256()
    with bounded_read.open_regular(path) as handle:
        for block in iter(lambda: handle.read(1024 * 1024), b''):
            digest.update(block)
    return digest.hexdigest()


def expected_checksum(text):
    value = text.strip().lower()
    if value.startswith('sha256:'):
        value = value[len('sha256:'):]
    if len(value) != 64 or any(char not in '0123456789abcdef' for char in value):
        raise ValueError('checksum must be a SHA-256 hex digest (64 characters), got %r' % text)
    return value


def machine_arch():
    machine = platform.machine().lower()
    return {'amd64': 'x86_64', 'arm64': 'aarch64'}.get(machine, machine)


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def log_tail_for(component, output, started_at):
    """The last lines of the installer's log; [] when none can be read.

    The log is named by the installer's output (``LogFile:``), which could name anything: only a
    regular file is read, only its tail, and bytes that are not UTF-8 (Huawei's logs can hold GBK
    text) are shown escaped, so that a successful install is never lost to reading its log.
    """
    named = installer_output.log_file_from_output(output)
    candidates = [named] if named else []
    if component in runfile.HDK_COMPONENTS:
        candidates.append(installer_output.INSTALL_LOG_PATH)
    else:
        # CANN installers write their own log under the same directory; take what changed during the run.
        try:
            logs = [os.path.join(installer_output.INSTALL_LOG_DIR, name) for name in os.listdir(installer_output.INSTALL_LOG_DIR)]
        except OSError:
            logs = []
        fresh = [(_mtime(path), path) for path in logs if path.endswith('.log')]
        candidates.extend(path for mtime, path in sorted(
            (item for item in fresh if item[0] is not None and item[0] >= started_at - 1), reverse=True))
    for path in candidates:
        try:
            data = bounded_read.read_tail(path)
        except (IOError, OSError, ValueError):
            continue
        return installer_output.log_tail(installer_output.decode_log(data))
    return []


class Runner(object):
    def __init__(self, module, component):
        self.module = module
        self.component = component
        # Ansible reads a result with a non-zero or null rc as failed unless it says otherwise;
        # Huawei's installers exit 2 on success and nothing runs when the version is installed.
        self.result = {
            'failed': False,
            'changed': False, 'component': component, 'action': 'keep', 'reason': '',
            'package_version': None, 'version_before': None, 'version_after': None,
            'reboot_required': False, 'cmd': [], 'commands': [], 'rc': None,
            'stdout_lines': [], 'log_tail': [],
        }
        self.output = ''
        self.started_at = time.time()
        self.default_timeout = DEFAULT_TIMEOUTS.get(component, max(DEFAULT_TIMEOUTS.values()))
        # The record of this run's installer on the node (installer_record), once its first command is near.
        self.record = None

    def fail(self, msg, **extra):
        self.result.update(extra)
        self.result['msg'] = msg
        if self.output:
            self.result['log_tail'] = log_tail_for(self.component, self.output, self.started_at)
        self.save_result(dict(self.result, failed=True))
        self.module.fail_json(**self.result)

    def save_result(self, result):
        """The result where a later run that waited for this installer finds it; never fails the run."""
        if self.record is None:
            return
        try:
            installer_record.write_result(self.record, result)
        except (IOError, OSError) as error:
            self.module.warn('cannot record the result of the %s installer in %s: %s; a run that waits for it will '
                             'decide from the installed version instead' % (self.component, self.record['result_path'], error))

    def start_record(self, plan, src, package_version, commands, timeout):
        """Records the installer about to run, before its first command; fails (nothing started) when it cannot."""
        # Every command (and the archive check before them) may take its timeout and the kill margin.
        budget = (len(commands) + 1) * (timeout + KILL_AFTER_SECONDS) + RECORD_MARGIN_SECONDS
        try:
            boot = reboot_marker.read_current_boot()
        except ValueError:
            boot = None
        record = installer_record.new_record(self.component, package_version, plan['action'], src, commands,
                                             budget, boot)
        try:
            installer_record.write_record(record)
        except (IOError, OSError) as error:
            self.fail('%s %s not started: cannot record the installer run in %s: %s. Fix: make %s a writable '
                      'directory (root, become: true), then run again'
                      % (self.component, plan['action'], installer_record.record_path(self.component), error,
                         installer_record.RECORD_DIR))
        self.record = record

    def _started(self, argv):
        def callback(process):
            tolerate_unread_answers(process)
            if self.record is not None:
                try:
                    installer_record.note_installer(self.record, process.pid, argv)
                except (IOError, OSError):
                    # The record still names this module, which waits for the installer: enough for a later run.
                    pass
        return callback

    def run(self, argv, timeout=None):
        timeout = timeout or self.default_timeout
        command = timed_command.timeout_argv(argv, timeout, KILL_AFTER_SECONDS)
        started = time.time()
        rc, out, err = self.module.run_command(command, data=PROMPT_ANSWERS, binary_data=True,
                                               environ_update=timed_command.C_LOCALE,
                                               before_communicate_callback=self._started(argv))
        elapsed = time.time() - started
        text = out + (('\n' + err) if err.strip() else '')
        self.output += text + '\n'
        self.result['stdout_lines'].extend(text.splitlines())
        self.result['rc'] = rc
        self.result['cmd'] = list(argv)
        if timed_command.stopped_by_timeout(rc, elapsed, timeout):
            self.fail('%s %s of version %s did not finish within %s seconds and was stopped: %s. Fix: read the '
                      'installer log (log_tail) for where it hung; if it was only slow, raise the timeout '
                      '(ascend_runfile timeout, or the role variable for %s, e.g. hdk_driver_installer_timeout '
                      'or cann_toolkit_installer_timeout) and run again'
                      % (self.component, self.result['action'], self.result['package_version'] or '(installed)',
                         timeout, ' '.join(argv), self.component),
                      cause='timeout', timeout=timeout)
        return rc, text


def record_reboot(module, component, version):
    """Record the reboot the installer asked for. Never fails: the install has succeeded, and the
    result's reboot_required must reach the play even when the marker cannot be written."""
    try:
        boot = reboot_marker.read_current_boot()
    except ValueError as error:
        module.warn('cannot tell the current boot, the reboot request is not recorded: %s' % error)
        return
    marker, problem = reboot_marker.read_reboot_marker()
    if problem:
        # A damaged marker pends nothing; this run's reason replaces it.
        module.warn('%s; it is replaced by a marker holding this reboot request' % problem)
    recorded_at = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
    updated = reboot_marker.add_reboot_reason(marker or {}, boot, component, version, recorded_at)
    directory = os.path.dirname(reboot_marker.REBOOT_MARKER_PATH)
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        durable_file.replace_durably(reboot_marker.REBOOT_MARKER_PATH, module.jsonify(updated).encode('utf-8'), mode=0o644)
    except (IOError, OSError) as error:
        module.warn('cannot record the pending reboot in %s: %s. The %s installer asked for a reboot (reboot_required '
                    'is true); a later ascend_facts will not report it. Fix: reboot the node, and make %s a writable '
                    'directory' % (reboot_marker.REBOOT_MARKER_PATH, error, component, directory))


def read_running_installer(module, component):
    """(boot, record) of an installer of ``component`` that an earlier run started and that still runs, else (boot, None)."""
    try:
        boot = reboot_marker.read_current_boot()
    except ValueError:
        boot = None
    record, problem = installer_record.read_record(component)
    if problem:
        # Nothing can be known from it; the node lock still keeps a second installer from running beside one.
        module.warn('%s; it is replaced when this run starts the installer' % problem)
    if record is None or not installer_record.running(record, boot):
        return boot, None
    return boot, record


def same_installer(record, component, package_version, state):
    """Whether the recorded installer does what this run would: the same component, version and direction."""
    if record.get('component') != component or record.get('package_version') != package_version:
        return False
    removing = record.get('action') == 'uninstall'
    return removing if state == 'absent' else (record.get('action') in runfile.INSTALLING_ACTIONS)


def adopt_earlier_installer(module, runner, earlier, boot):
    """Once the node lock is ours (the earlier module has ended): return the earlier run's result.

    Returns only when that run left no result (its module was killed): after its installer has ended,
    this run decides again from what is installed.
    """
    result = installer_record.read_result(earlier)
    described = installer_record.describe(earlier)
    if result is None:
        ended = installer_record.wait_while(lambda: installer_record.installer_running(earlier, boot),
                                            earlier['deadline_epoch'] + KILL_AFTER_SECONDS)
        if not ended:
            runner.fail('%s: its installer (pid %s, %s) still runs past its deadline. Fix: find out why it hangs '
                        '(ps, the installer log under /var/log/ascend_seclog/), stop it, then run again'
                        % (described, earlier.get('installer_pid'), ' '.join(earlier.get('installer_argv') or [])))
        module.warn('%s ended without a result (its module was stopped); this run decides again from the installed '
                    'version' % described)
        return
    adopted = {'run_id': earlier['run_id'], 'module_pid': earlier.get('module_pid'),
               'installer_pid': earlier.get('installer_pid'), 'started_at': earlier.get('started_at'),
               'argv': earlier.get('installer_argv') or (earlier.get('argv') or [[]])[-1]}
    result = dict(result, adopted=adopted)
    result['reason'] = '%s (the result of %s, which was still running when this run started; this run waited for it '\
                       'and started no installer of its own)' % (result.get('reason') or '', described)
    if result.get('failed'):
        module.fail_json(**result)
    module.exit_json(**result)


def describe_package(module, src, component):
    try:
        package = parse_package_name(os.path.basename(src))
    except ValueError as error:
        if component:
            module.fail_json(msg='cannot read the version from the file name: %s' % error)
        module.fail_json(msg='%s; set component, and name the file as Huawei does' % error)
    if package['component'] not in runfile.MANAGED_COMPONENTS:
        module.fail_json(msg='%s is a %s package, which this module does not manage (managed: %s)'
                         % (package['filename'], package['component'], ', '.join(runfile.MANAGED_COMPONENTS)))
    if component and component != package['component']:
        module.fail_json(msg='component is %s but %s is a %s package'
                         % (component, package['filename'], package['component']))
    return package


def resolve_install_for_all(module, component, soc):
    requested = module.params['install_for_all']
    supported = runfile.supports_install_for_all(component, soc)
    if requested is None:
        return supported
    if requested and component == 'driver' and soc:
        module.fail_json(msg='the SoC driver package rejects --install-for-all; set install_for_all=false')
    if requested and not supported:
        module.warn('install_for_all is ignored: the %s installer has no --install-for-all' % component)
        return False
    return requested


def verify_src(module, src, state):
    if not src:
        return False
    exists = os.path.isfile(src)
    if not exists:
        if state == 'present' and module.check_mode:
            # A dry run does not copy the package, so on a node that never had it the file is
            # missing; the plan still follows from the name, which carries the version.
            module.warn('src %s is not on the node (a dry run does not copy it): the plan is made from its '
                        'file name, and %s cannot be checked until a real run copies it'
                        % (src, 'its checksum and archive' if module.params['checksum'] else 'its archive'))
            return False
        if state == 'present':
            module.fail_json(msg='src %s does not exist on the node; copy the package there first' % src)
        if module.params['checksum']:
            module.fail_json(msg='checksum is given but src %s does not exist on the node' % src)
        return False
    if module.params['checksum']:
        try:
            expected = expected_checksum(module.params['checksum'])
        except ValueError as error:
            module.fail_json(msg=str(error))
        actual = sha256_of(src)
        if actual != expected:
            module.fail_json(msg='checksum mismatch for %s: expected sha256 %s, actual %s; the file is damaged '
                                 'or not the one meant' % (src, expected, actual),
                             expected_checksum=expected, actual_checksum=actual)
    return True


def _decide(module, runner, component, src, src_exists, package_version, install_for_all, soc):
    """Read what is installed and plan the installer runs: (plan, version_before, commands)."""
    params = module.params
    install_path, state = params['install_path'], params['state']
    arch = machine_arch()
    try:
        installed = install_state.read_all_installed(install_path, arch, install_state.read_install_record())
    except VersionFileError as error:
        runner.fail('cannot tell which %s is installed: %s' % (component, error))
    entry = installed[component]
    if entry and entry.get('damaged'):
        # Installed, but at a version nobody can tell: neither a fresh install nor an uninstall is safe.
        runner.fail('refusing to %s %s: %s' % ('uninstall' if state == 'absent' else 'install or upgrade', component,
                                               entry['damaged']), cause='damaged', version_file=entry['version_file'])
    version_before = entry['version'] if entry else None

    plan = runfile.plan_action(component, version_before, package_version, state, params['allow_downgrade'],
                               install_state.installed_versions(entry))
    if plan['action'] == 'refuse':
        runner.fail(plan['reason'])
    if plan['action'] in runfile.INSTALLING_ACTIONS:
        missing = runfile.check_prerequisites(component, package_version, installed)
        # A damaged toolkit is no task's to install earlier in a dry run: refused in check mode too.
        damaged_prerequisite = bool((installed.get('toolkit') or {}).get('damaged'))
        if missing and module.check_mode and not damaged_prerequisite:
            # In a dry run the prerequisite (the toolkit) is usually planned by an earlier task of
            # the same run and so not installed yet; the real run still stops here if it is missing.
            module.warn('%s; a real run fails here unless an earlier task installs it' % missing)
        elif missing:
            runner.fail(missing)

    # The name alone is enough to build the installer argv a dry run reports for a package the
    # node does not hold yet; a real uninstall must not name a .run file that is not there.
    planned_src = src if src_exists or (src and (state == 'present' or module.check_mode)) else None
    try:
        commands = runfile.build_commands(
            component, plan['action'], src=planned_src, install_path=install_path,
            install_for_all=install_for_all, extra_args=params['extra_args'], soc=soc,
            uninstall_script=entry['uninstall_script'] if entry else None)
    except ValueError as error:
        runner.fail(str(error))
    return plan, version_before, commands


def _report_plan(module, result, plan, version_before, commands, package_version):
    result['version_before'] = version_before
    result['action'], result['reason'] = plan['action'], plan['reason']
    result['commands'] = commands
    result['cmd'] = commands[-1] if commands else []
    expected_after = None if plan['action'] == 'uninstall' else (
        package_version if plan['action'] in runfile.INSTALLING_ACTIONS else version_before)
    result['version_after'] = expected_after
    if module._diff:
        result['diff'] = {'before': 'version: %s\n' % version_before, 'after': 'version: %s\n' % expected_after}


ARGUMENT_SPEC = dict(
    src=dict(type='path'),
    state=dict(type='str', default='present', choices=['present', 'absent']),
    component=dict(type='str', choices=list(runfile.MANAGED_COMPONENTS)),
    checksum=dict(type='str'),
    install_path=dict(type='path', default=runfile.DEFAULT_INSTALL_PATH),
    install_for_all=dict(type='bool'),
    extra_args=dict(type='list', elements='str', default=[]),
    allow_downgrade=dict(type='bool', default=False),
    timeout=dict(type='int'),
    lock_timeout=dict(type='int', default=node_lock.DEFAULT_TIMEOUT),
    installers=dict(type='list', elements='dict', options=dict(
        src=dict(type='path', required=True),
        component=dict(type='str', choices=list(runfile.MANAGED_COMPONENTS)),
        checksum=dict(type='str'),
        timeout=dict(type='int'),
    )),
)
# What each entry of installers sets for its own installer; the other options are shared.
INSTALLER_OWN = ('src', 'component', 'checksum', 'timeout')


class InstallerDone(Exception):
    """One installer of ``installers`` ended (its exit_json or fail_json); the module goes on to the next."""

    def __init__(self, result):
        super(InstallerDone, self).__init__(result.get('msg') or '')
        self.result = result


class OneInstaller(object):
    """The module as one entry of ``installers`` sees it: that entry's options, and an exit that ends only it.

    The functions of this module call ``exit_json``/``fail_json`` where a single installer ends; for a
    list of installers run in one process those end the installer, not the process.
    """

    def __init__(self, module, params):
        self._module = module
        self.params = params
        self.check_mode = module.check_mode
        self._diff = module._diff

    def warn(self, warning):
        self._module.warn(warning)

    def run_command(self, *args, **kwargs):
        return self._module.run_command(*args, **kwargs)

    def jsonify(self, data):
        return self._module.jsonify(data)

    def exit_json(self, **result):
        raise InstallerDone(dict(result, failed=False))

    def fail_json(self, **result):
        raise InstallerDone(dict(result, failed=True))


def run_one(module, locks=None):
    """Decide and run one installer; ends through ``module.exit_json``/``fail_json``.

    The node lock it takes is appended to ``locks`` when given (a list of installers releases it after each);
    otherwise it is held until the process exits.
    """
    params = module.params
    src, state, install_path = params['src'], params['state'], params['install_path']
    if params['timeout'] is not None and params['timeout'] <= 0:
        module.fail_json(msg='timeout must be a positive number of seconds, got %s; leave it out for the '
                             "component's default (%s)" % (params['timeout'], ', '.join(
                                 '%s %ss' % item for item in sorted(DEFAULT_TIMEOUTS.items()))))

    src_exists = verify_src(module, src, state)
    package = describe_package(module, src, params['component']) if src else None
    component = package['component'] if package else params['component']
    runner = Runner(module, component)
    result = runner.result
    package_version = package['version'] if package else None
    result['package_version'] = package_version

    arch = machine_arch()
    if package and package.get('arch') and state == 'present' and package['arch'] != arch:
        runner.fail('%s package %s is built for %s but this node is %s. Fix: use the %s package of version %s '
                    '(check packages_arch or the package file name you gave)'
                    % (component, package['filename'], package['arch'], arch, arch, package_version))
    soc = bool(package and package.get('soc'))
    install_for_all = resolve_install_for_all(module, component, soc)

    plan, version_before, commands = _decide(module, runner, component, src, src_exists, package_version,
                                             install_for_all, soc)
    _report_plan(module, result, plan, version_before, commands, package_version)
    result['changed'] = bool(commands) and module.check_mode
    if module.check_mode or not commands:
        module.exit_json(**result)

    # An installer of this package that an earlier run started and that still runs (its controller
    # died, or a run beside this one): wait for it and take its result, never start a second one.
    boot, earlier = read_running_installer(module, component)
    same = earlier is not None and same_installer(earlier, component, package_version, state)
    if same:
        # Its result is written when its installer ends; the module that started it may hold the node lock
        # longer (a list of installers goes on to the next one), and taking a result runs nothing.
        installer_record.wait_while(
            lambda: installer_record.read_result(earlier) is None and installer_record.running(earlier, boot),
            earlier['deadline_epoch'] + KILL_AFTER_SECONDS)
        if installer_record.read_result(earlier) is not None:
            adopt_earlier_installer(module, runner, earlier, boot)
    lock_wait = params['lock_timeout']
    if same and lock_wait is not None and lock_wait >= 0:
        lock_wait = max(lock_wait, int(earlier['deadline_epoch'] - time.time()) + KILL_AFTER_SECONDS)

    # One installer at a time per node, and none while a runtime module edits an engine config;
    # held until this process exits (the kernel releases it then, also when the run is killed).
    try:
        lock = node_lock.NodeLock(timeout=lock_wait, holder={
            'module': 'npu.ascend.ascend_runfile', 'target': '%s %s' % (component, src or '')}).acquire()
        if locks is not None:
            locks.append(lock)
    except (node_lock.NodeLockTimeout, node_lock.NodeLockError, ValueError) as error:
        runner.fail('%s %s not started: %s' % (component, plan['action'], error))
    if same:
        adopt_earlier_installer(module, runner, earlier, boot)
    # Another run may have held the lock to install this very package meanwhile: decide again on
    # what is installed now, so that the second of two runs does not install it a second time.
    planned_action = plan['action']
    plan, version_before, commands = _decide(module, runner, component, src, src_exists, package_version,
                                             install_for_all, soc)
    if plan['action'] != planned_action:
        _report_plan(module, result, plan, version_before, commands, package_version)
        result['reason'] = '%s (decided again after waiting for the node lock: another run changed it meanwhile)' % (
            plan['reason'])
    if not commands:
        module.exit_json(**result)
    runner.start_record(plan, src, package_version, commands, params['timeout'] or runner.default_timeout)

    if src_exists and plan['action'] in runfile.INSTALLING_ACTIONS:
        if not os.access(src, os.X_OK):
            runner.fail('%s is not executable; copy it with mode 0755' % src)
        rc, text = runner.run([src, '--check'], params['timeout'])
        problem = installer_output.interpret_archive_check(rc, text)
        if problem:
            runner.fail('%s package %s: %s. Fix: copy or download the package again and compare its sha256 '
                        'with the one Huawei publishes; a checksum list made from the damaged file does not catch this.'
                        % (component, os.path.basename(src), problem))
        result['stdout_lines'] = []
        runner.output = ''

    for index, argv in enumerate(commands):
        step = plan['action']
        if step in ('upgrade', 'downgrade') and len(commands) > 1 and index < len(commands) - 1:
            step = 'uninstall'
        result['changed'] = True
        rc, text = runner.run(argv, params['timeout'])
        verdict = installer_output.interpret_result(component, step, rc, text)
        if not verdict['ok']:
            runner.fail(verdict['message'], cause=verdict['cause'], fix=verdict['fix'])
        if verdict['reboot_required']:
            result['reboot_required'] = True

    try:
        after = install_state.read_installed(component, install_path, arch, install_state.read_install_record())
    except VersionFileError as error:
        runner.fail('the %s installer finished but the installed version cannot be read: %s' % (component, error))
    if after and after.get('damaged'):
        runner.fail('the %s installer reported success but %s' % (component, after['damaged']))
    version_after = after['version'] if after else None
    result['version_after'] = version_after
    if module._diff:
        result['diff']['after'] = 'version: %s\n' % version_after
    if plan['action'] == 'uninstall':
        removed = plan['version']
        if any(compare_versions(version, removed) == 0 for version in install_state.installed_versions(after)):
            runner.fail('the %s uninstall reported success but %s is still installed' % (component, removed))
    elif version_after is None or compare_versions(version_after, package_version) != 0:
        runner.fail('the %s installer reported success but the installed version is now %s, not %s; see log_tail'
                    % (component, version_after, package_version))

    if result['reboot_required']:
        record_reboot(module, component, version_after)
    result['log_tail'] = log_tail_for(component, runner.output, runner.started_at)
    runner.save_result(result)
    module.exit_json(**result)


def run_entry(module, params):
    """The result of one entry of ``installers``, run as a single installer; the node lock it took is released."""
    locks = []
    try:
        run_one(OneInstaller(module, params), locks)
    except InstallerDone as done:
        return done.result
    finally:
        for lock in reversed(locks):
            lock.release()
    # run_one ends through exit_json or fail_json; reaching here is a defect of this module, said as a failure.
    return {'failed': True, 'changed': False, 'component': params.get('component'),
            'msg': 'ascend_runfile: the installer of %s ended without a result' % params.get('src')}


def run_list(module):
    """Run the installers of ``installers`` in their order in this one process; stop at the first that fails.

    One background job then installs a whole role's packages: the roles start it on every node and wait
    for it once. Each installer keeps what a single one has (its checksum and archive check, its record
    and the adoption of an earlier run's installer, the node lock, its timeout); the lock is released
    between installers, so a run beside this one can only take the next component before it, which this
    run then keeps (it decides again under the lock).
    """
    results = []
    for entry in module.params['installers']:
        params = dict(module.params, installers=None)
        params.update((key, entry[key]) for key in INSTALLER_OWN)
        result = run_entry(module, params)
        results.append(result)
        if result.get('failed'):
            break
    summary = {
        'changed': any(result.get('changed') for result in results),
        'reboot_required': any(result.get('reboot_required') for result in results),
        'results': results,
        'components': [result.get('component') for result in results],
        'changed_components': [result.get('component') for result in results if result.get('changed')],
    }
    diffs = [result['diff'] for result in results if result.get('diff')]
    if diffs:
        summary['diff'] = diffs
    last = results[-1] if results else {}
    if last.get('failed'):
        # The failed installer's own message, cause and fix; component names it for the roles' messages.
        failed = dict((key, last[key]) for key in ('component', 'action', 'cause', 'fix', 'rc', 'log_tail', 'adopted')
                      if key in last)
        module.fail_json(msg=last.get('msg') or '', **dict(summary, **failed))
    module.exit_json(**summary)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        required_if=[('state', 'present', ('src', 'installers'), True)],
        required_one_of=[('src', 'component', 'installers')],
        mutually_exclusive=[('installers', key) for key in INSTALLER_OWN],
        supports_check_mode=True,
    )
    if module.params['installers'] is not None:
        if module.params['state'] != 'present':
            module.fail_json(msg='installers installs or upgrades; uninstall one component at a time with src or component')
        run_list(module)
    run_one(module)


if __name__ == '__main__':
    main()
