#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ascend_collect
short_description: Write a diagnostics bundle of an Ascend NPU node for a support case
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Gathers what a support case about an NPU node asks for into one gzip-compressed tar archive at O(dest) on the node,
    with an C(index.json) that says for every piece where it came from and whether it was collected, cut to its
    last O(max_file_bytes) (truncated), absent, refused (not a regular file) or failed (a command that failed or
    did not answer within O(timeout)).
  - The pieces - the kernel's lines about the NPU driver (C(dmesg)) and its loaded modules (C(/proc/modules)); the
    installed components' version files and C(/etc/ascend_install.info); the newest installer logs under
    C(/var/log/ascend_seclog); the device plugin's and npu-exporter's logs; the containerd and Docker configs and the
    collection's stamps beside them; the collection's own records under C(/var/lib/npu_ascend); the kubelet's
    journal; C(/etc/os-release), C(uname -a); C(/etc/hccn.conf).
  - The verbatim output of every read the collection makes on a node, each command run once, for a support case and
    for replaying the node in the sandbox - C(npu-smi info), C(info -l), C(info -m), each NPU's board (the NPUs of
    C(npu-smi info), or of C(info -l) when the table cannot be read), each chip's vNPUs with the template list, vNPU
    mode and recovery setting where chips can be split, C(hccn_tool -i N <read> -g) of each NPU (address, gateway,
    detect address, link, net health, LLDP), C(lspci -nn) and C(lspci -vmm -nn -D) of Huawei's devices - as
    C(commands/<tool> <arguments>.txt) (stdout), C(.stderr.txt) (when something was printed there) and C(.rc) (the
    exit status).
  - Every config-like file (the engine configs, the records) is redacted before it is written - passwords, tokens,
    registry auth and headers, credentials in URLs - by the same redaction the modules' diffs use.
  - The log directories and the records are read without following a symbolic link (a container can replace its
    log directory through its hostPath mount) - a directory reached through a link, and a link, FIFO or
    subdirectory in one, is not read and has an index entry (V(refused)) naming it; the logs beyond
    O(max_log_files) are named in a V(truncated) entry of their directory.
  - The archive is written through a new temporary file of its own in the directory of O(dest), then renamed over
    O(dest) - never through a link (a link at O(dest) is refused), and nothing is left behind when it fails.
  - Nothing on the node changes but O(dest). The playbook C(npu.ascend.collect) fetches the archives of the fleet
    into one on the controller.
options:
  dest:
    description: The archive to write on the node (a C(.tar.gz)); its directory must exist.
    type: path
    required: true
  install_path:
    description: Where the Ascend packages are installed.
    type: path
    default: /usr/local/Ascend
  containerd_config:
    description: containerd's main config.
    type: path
    default: /etc/containerd/config.toml
  containerd_drop_in_dir:
    description: The directory of containerd's drop-in configs.
    type: path
    default: /etc/containerd/conf.d
  docker_config:
    description: Docker's daemon config.
    type: path
    default: /etc/docker/daemon.json
  max_file_bytes:
    description: The most any one piece may hold; a longer one keeps its end (the newest log lines).
    type: int
    default: 1048576
  max_log_files:
    description: The newest files kept of each log directory; the index names the ones left out.
    type: int
    default: 20
  timeout:
    description: Seconds each command (npu-smi, hccn_tool, dmesg, journalctl, lspci) may take before it is stopped.
    type: int
    default: 60
notes:
  - Supports check mode - it then gathers nothing and reports the archive it would write.
seealso:
  - module: npu.ascend.ascend_facts
extends_documentation_fragment:
  - npu.ascend.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: none
    details:
      - Each run writes a new archive of the node as it is then.
'''

EXAMPLES = r'''
- name: Write the node's diagnostics bundle
  npu.ascend.ascend_collect:
    dest: /tmp/npu-ascend-collect.tar.gz
  register: bundle

- name: Bring it to the controller
  ansible.builtin.fetch:
    src: "{{ bundle.dest }}"
    dest: "collect/{{ inventory_hostname }}.tar.gz"
    flat: true
'''

RETURN = r'''
dest:
  description: The archive written.
  returned: always
  type: str
  sample: /tmp/npu-ascend-collect.tar.gz
index:
  description: One entry per piece - C(member) (its path in the archive), C(source), C(status) (V(collected),
    V(truncated), V(absent), V(refused) or V(failed)), C(bytes), C(detail) and C(redacted).
  returned: always
  type: list
  elements: dict
counts:
  description: How many pieces have each status.
  returned: always
  type: dict
  sample: {collected: 31, truncated: 1, absent: 6, refused: 0, failed: 0}
'''

import errno
import glob
import io
import json
import os
import stat
import tarfile
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils import diagnostics
from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read, durable_file
from ansible_collections.npu.ascend.plugins.module_utils.hardware import hccn_tool_runner, npu_smi
from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state
from ansible_collections.npu.ascend.plugins.module_utils import timed_command
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner
from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config.config_stamp import stamp_path

KILL_AFTER_SECONDS = 5
LOG_DIRECTORIES = ('/var/log/ascend_seclog', '/var/log/mindx-dl/devicePlugin', '/var/log/mindx-dl/npu-exporter')
RECORDS_DIR = os.path.dirname(reboot_marker.REBOOT_MARKER_PATH)
# More than this many files under the records directory means something else lives there.
MAX_RECORD_FILES = 200
# The logs left out by max_log_files named in the index's note, at most.
MAX_NAMES_SHOWN = 20
MAX_BOARDS = 64
PROC_MODULES = '/proc/modules'
SYSTEM_FILES = ('/etc/ascend_install.info', '/etc/os-release', hccn_tool_runner.HCCN_CONF)


class Bundle(object):
    """The archive's members, kept in memory until written, and the index."""

    def __init__(self, limit):
        self.limit = limit
        self.members = []
        self.index = []

    def add(self, member, source, data, redacted=False, detail='', cut=False):
        """``cut``: the data is already the end of something longer."""
        data, truncated = diagnostics.cap(data, self.limit)
        truncated = truncated or cut
        self.members.append((member, data))
        self.index.append(diagnostics.index_entry(member, source, 'truncated' if truncated else 'collected',
                                                  len(data), detail, redacted))

    def note(self, member, source, status, detail):
        self.index.append(diagnostics.index_entry(member, source, status, 0, detail))

    def write(self, dest):
        """Through the safe writer: a link at dest, or planted beside it, is never written through;
        a failure leaves no temporary file."""
        now = time.time()
        with durable_file.writing(dest, mode=0o600, keep_mode=False) as stream:
            with tarfile.open(fileobj=stream, mode='w:gz') as archive:
                for member, data in self.members + [('index.json', json.dumps(self.index, indent=2).encode('utf-8'))]:
                    info = tarfile.TarInfo(member)
                    info.size = len(data)
                    info.mtime = now
                    info.mode = 0o600
                    archive.addfile(info, io.BytesIO(data))


def run(module, bundle, member, argv, transform=None):
    """Runs argv under timeout and adds its output; a missing tool is absent, a failure failed."""
    binary = module.get_bin_path(argv[0]) if not os.path.isabs(argv[0]) else argv[0]
    source = ' '.join(argv)
    if not binary:
        bundle.note(member, source, 'absent', '%s is not installed' % argv[0])
        return None
    rc, out, err, stopped = timed_command.run(module.run_command, [binary] + list(argv[1:]), module.params['timeout'],
                                              KILL_AFTER_SECONDS)
    if stopped:
        bundle.note(member, source, 'failed', 'did not answer within %d s' % module.params['timeout'])
        return None
    text = transform(out) if transform else out
    detail = '' if rc == 0 else 'exit %d: %s' % (rc, (err or '').strip()[:400])
    failure = ('\n' + err) if rc != 0 and err else ''
    bundle.add(member, source, ((text or '') + failure).encode('utf-8', 'replace'), detail=detail)
    return out if rc == 0 else None


def add_file(bundle, path, tail=False, redact=False, dir_fd=None):
    """``dir_fd``: ``path`` is read as its name in that opened directory, never through a link."""
    member = diagnostics.member_for_file(path)
    if dir_fd is None and not os.path.lexists(path):
        bundle.note(member, path, 'absent', 'no such file')
        return
    name, follow = (path, True) if dir_fd is None else (os.path.basename(path), False)
    cut = False
    try:
        if tail:
            data = bounded_read.read_tail(name, bundle.limit + 1, follow=follow, dir_fd=dir_fd)
            cut = len(data) > bundle.limit
            data = data[-bundle.limit:]
        else:
            data = bounded_read.read_bytes(name, bounded_read.CONFIG_FILE_LIMIT, follow=follow, dir_fd=dir_fd)
    except bounded_read.RefusedFile as refusal:
        bundle.note(member, path, 'refused', str(refusal))
        return
    except (OSError, IOError) as error:
        if error.errno == errno.ELOOP and not follow:
            bundle.note(member, path, 'refused', '%s became a symbolic link while the bundle was made; not followed' % path)
        else:
            bundle.note(member, path, 'failed', str(error))
        return
    if redact:
        data = diagnostics.redact(path, data)
    bundle.add(member, path, data, redacted=redact, cut=cut)


def _refuse_entry(bundle, path, status, dir_fd):
    """Notes why the entry ``path`` (lstat ``status``) of an opened directory is not read."""
    if stat.S_ISLNK(status.st_mode):
        try:
            target = os.readlink(os.path.basename(path), dir_fd=dir_fd)
        except OSError:
            target = '?'
        detail = 'a symbolic link (to %s); not followed, so nothing from elsewhere enters the bundle' % target
    elif stat.S_ISDIR(status.st_mode):
        detail = 'a directory; only the files of the directory itself are taken'
    else:
        detail = '%s, not a regular file; not read' % bounded_read.describe_kind(status.st_mode)
    bundle.note(diagnostics.member_for_file(path), path, 'refused', '%s is %s' % (path, detail))


def _open_directory(bundle, directory):
    """A descriptor of ``directory``, or None with an index entry: absent, or reached through a symbolic
    link anywhere on its way (a container may replace its log directory through a hostPath mount)."""
    member = diagnostics.member_for_file(directory) + '/'
    if not os.path.lexists(directory):
        bundle.note(member, directory, 'absent', 'no such directory')
        return None
    resolved = os.path.realpath(directory)
    refusal = '%s resolves to %s through a symbolic link; not followed, nothing under it was read. Fix: put the ' \
              'directory back as a plain directory' % (directory, resolved)
    if resolved != os.path.abspath(directory):
        bundle.note(member, directory, 'refused', refusal)
        return None
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_NOFOLLOW', 0))
    except (OSError, IOError) as error:
        bundle.note(member, directory, 'refused' if error.errno in (errno.ELOOP, errno.ENOTDIR) else 'failed',
                    refusal if error.errno == errno.ELOOP else '%s: %s' % (directory, error))
        return None
    # Swapped for a link between the check and the open: the opened descriptor says where it is.
    if durable_file.descriptor_path(fd, directory) != os.path.abspath(directory):
        os.close(fd)
        bundle.note(member, directory, 'refused', refusal)
        return None
    return fd


def _regular_entries(bundle, directory, fd, names):
    """(mtime, path) of the regular files among ``names`` of the opened directory; the others noted."""
    regular = []
    for name in sorted(names):
        path = os.path.join(directory, name)
        try:
            status = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (OSError, IOError) as error:
            bundle.note(diagnostics.member_for_file(path), path, 'failed', str(error))
            continue
        if stat.S_ISREG(status.st_mode):
            regular.append((status.st_mtime, path))
        else:
            _refuse_entry(bundle, path, status, fd)
    return regular


def collect_logs(bundle, directory, count):
    """The ``count`` newest logs of ``directory``, read without following a link; every file left out
    has an entry (links, FIFOs, subdirectories, and the older logs beyond ``count``)."""
    fd = _open_directory(bundle, directory)
    if fd is None:
        return
    try:
        logs = sorted(_regular_entries(bundle, directory, fd, os.listdir(fd)), reverse=True)
        if not logs:
            bundle.note(diagnostics.member_for_file(directory) + '/', directory, 'absent', 'no log files')
        for _mtime, path in logs[:count]:
            add_file(bundle, path, tail=True, dir_fd=fd)
        if len(logs) > count:
            dropped = [os.path.basename(path) for _mtime, path in logs[count:]]
            shown = ', '.join(dropped[:MAX_NAMES_SHOWN]) + (', ...' if len(dropped) > MAX_NAMES_SHOWN else '')
            bundle.note(diagnostics.member_for_file(directory) + '/', directory, 'truncated',
                        '%d log files, the newest %d kept (max_log_files); left out: %s' % (len(logs), count, shown))
    finally:
        os.close(fd)


def collect_records(bundle, directory):
    """The collection's records under ``directory``, read without following a link (links noted)."""
    if not os.path.lexists(directory):
        return
    top = _open_directory(bundle, directory)
    if top is None:
        return
    os.close(top)
    seen = 0
    for root, dirs, names, fd in os.fwalk(directory, follow_symlinks=False):
        dirs.sort()
        regular = _regular_entries(bundle, root, fd, names)
        for name in list(dirs):
            try:
                status = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except (OSError, IOError) as error:
                dirs.remove(name)
                bundle.note(diagnostics.member_for_file(os.path.join(root, name)), os.path.join(root, name), 'failed',
                            str(error))
                continue
            if not stat.S_ISDIR(status.st_mode):
                dirs.remove(name)
                _refuse_entry(bundle, os.path.join(root, name), status, fd)
        for _mtime, path in sorted(regular, key=lambda item: item[1]):
            seen += 1
            if seen <= MAX_RECORD_FILES:
                add_file(bundle, path, redact=True, dir_fd=fd)
    if seen > MAX_RECORD_FILES:
        bundle.note(diagnostics.member_for_file(directory) + '/', directory, 'truncated',
                    '%d files, the first %d kept' % (seen, MAX_RECORD_FILES))


def collect_files(module, bundle):
    params = module.params
    installed = install_state.read_all_installed(params['install_path'], os.uname()[4])
    version_files = sorted(set(entry['version_file'] for entry in installed.values()
                               if entry and entry.get('version_file')))
    for path in version_files + list(SYSTEM_FILES):
        add_file(bundle, path)
    for directory in LOG_DIRECTORIES:
        collect_logs(bundle, directory, params['max_log_files'])
    configs = [params['containerd_config'], params['docker_config']]
    configs += sorted(glob.glob(os.path.join(params['containerd_drop_in_dir'], '*.toml')))
    for path in configs:
        add_file(bundle, path, redact=True)
        if os.path.lexists(stamp_path(path)):
            add_file(bundle, stamp_path(path), redact=True)
    collect_records(bundle, RECORDS_DIR)


def _verbatim(text):
    """The bytes a command printed: run_command keeps undecodable bytes as surrogates (surrogateescape)."""
    try:
        return (text or '').encode('utf-8', 'surrogateescape')
    except UnicodeEncodeError:
        return (text or '').encode('utf-8', 'replace')


def record_command(module, bundle, argv):
    """Runs argv under timeout and keeps what it printed verbatim, for a replay (diagnostics.command_member):
    ``.txt`` stdout, ``.stderr.txt`` stderr, ``.rc`` the exit status. Returns (rc, stdout), rc None when the
    command did not answer."""
    member = diagnostics.command_member(argv)
    source = ' '.join(argv)
    rc, out, err, stopped = timed_command.run(module.run_command, list(argv), module.params['timeout'], KILL_AFTER_SECONDS)
    if stopped:
        bundle.note(member + '.txt', source, 'failed', 'did not answer within %d s' % module.params['timeout'])
        return None, ''
    detail = '' if rc == 0 else 'exit %d' % rc
    bundle.add(member + '.txt', source, _verbatim(out), detail=detail)
    if err:
        bundle.add(member + '.stderr.txt', source, _verbatim(err), detail=detail)
    bundle.add(member + '.rc', source, ('%d\n' % rc).encode('ascii'), detail=detail)
    return rc, out


def _listed_chips(bundle, answers):
    """The chips to ask for boards and vNPUs: those of ``npu-smi info``, else the NPUs of ``npu-smi info -l``
    (boards only: the list names no chip), else none, with an index entry saying why."""
    problems = []
    for args, parse in ((('info',), lambda text: npu_smi.parse_info(text)['chips']),
                        (('info', '-l'), lambda text: [{'npu_id': npu['npu_id']} for npu in npu_smi.parse_info_list(text)['npus']])):
        rc, text = answers[args]
        if rc != 0:
            problems.append('npu-smi %s %s' % (' '.join(args), 'did not answer' if rc is None else 'exited %d' % rc))
            continue
        try:
            chips = parse(text)
        except (ValueError, npu_smi.NpuSmiError) as error:
            problems.append('npu-smi %s: %s' % (' '.join(args), error))
            continue
        if chips:
            return chips
        problems.append('npu-smi %s lists no NPU' % ' '.join(args))
    bundle.note(diagnostics.command_member(['npu-smi', 'info', '-t']) + '*', 'npu-smi info', 'failed',
                'no chip list to ask for boards and vNPUs: %s' % '; '.join(problems))
    return []


def collect_commands(module, bundle):
    """The verbatim output of every read the collection makes on a node (npu-smi's views, the boards and
    vNPUs, hccn_tool's reads of each NPU, lspci of the NPUs), so that a sandbox node can replay it."""
    npu_smi_binary = module.get_bin_path('npu-smi', opt_dirs=npu_smi_runner.NPU_SMI_DIRS)
    npu_ids = []
    if not npu_smi_binary:
        bundle.note(diagnostics.command_member(['npu-smi']) + '*', 'npu-smi', 'absent', 'npu-smi is not installed')
    else:
        answers = dict((args, record_command(module, bundle, [npu_smi_binary] + list(args)))
                       for args in diagnostics.NPU_SMI_READS)
        chips = _listed_chips(bundle, answers)
        for args in diagnostics.npu_smi_chip_reads(chips[:MAX_BOARDS]):
            record_command(module, bundle, [npu_smi_binary] + list(args))
        npu_ids = sorted(set(chip['npu_id'] for chip in chips if chip.get('npu_id') is not None))[:MAX_BOARDS]
    hccn = hccn_tool_runner.find_hccn_tool(None, module.params['install_path'])
    if not hccn:
        bundle.note(diagnostics.command_member(['hccn_tool']) + '*', 'hccn_tool', 'absent',
                    'hccn_tool is not installed (it comes with the driver of training servers)')
    else:
        for position, npu in enumerate(npu_ids):
            answers = [record_command(module, bundle, [hccn] + list(args))[0] for args in diagnostics.hccn_reads([npu])]
            if position == 0 and all(rc != 0 for rc in answers) and len(npu_ids) > 1:
                # An inference server's driver ships hccn_tool too, but it has no RoCE port to read.
                bundle.note(diagnostics.command_member(['hccn_tool']) + '*', 'hccn_tool', 'failed',
                            'every read of NPU %s failed, the other NPUs were not read' % npu)
                break
    lspci = module.get_bin_path('lspci')
    if not lspci:
        bundle.note(diagnostics.command_member(['lspci']) + '*', 'lspci', 'absent', 'lspci is not installed')
    else:
        for args in diagnostics.LSPCI_READS:
            record_command(module, bundle, [lspci] + list(args))


def collect(module, bundle):
    collect_commands(module, bundle)
    run(module, bundle, 'kernel/dmesg-npu.txt', ['dmesg'], diagnostics.kernel_lines)
    if not os.path.exists(PROC_MODULES):
        bundle.note('kernel/modules-npu.txt', PROC_MODULES, 'absent', 'no loadable modules here (a container?)')
    else:
        try:
            modules = bounded_read.read_bytes(PROC_MODULES).decode('utf-8', 'replace')
            bundle.add('kernel/modules-npu.txt', PROC_MODULES, diagnostics.driver_modules(modules).encode('utf-8'))
        except (bounded_read.RefusedFile, OSError, IOError) as error:
            bundle.note('kernel/modules-npu.txt', PROC_MODULES, 'failed', str(error))
    run(module, bundle, 'system/uname.txt', ['uname', '-a'])
    run(module, bundle, 'kubernetes/kubelet-journal.txt', ['journalctl', '--unit', 'kubelet', '--lines', '2000',
                                                           '--no-pager'])
    collect_files(module, bundle)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type='path', required=True),
            install_path=dict(type='path', default='/usr/local/Ascend'),
            containerd_config=dict(type='path', default='/etc/containerd/config.toml'),
            containerd_drop_in_dir=dict(type='path', default='/etc/containerd/conf.d'),
            docker_config=dict(type='path', default='/etc/docker/daemon.json'),
            max_file_bytes=dict(type='int', default=1024 * 1024),
            max_log_files=dict(type='int', default=20),
            timeout=dict(type='int', default=60),
        ),
        supports_check_mode=True,
    )
    for option in ('max_file_bytes', 'max_log_files', 'timeout'):
        if module.params[option] <= 0:
            module.fail_json(msg='%s must be a positive number, got %s' % (option, module.params[option]))
    dest = module.params['dest']
    if not os.path.isdir(os.path.dirname(dest) or '.'):
        module.fail_json(msg='the directory of dest %s does not exist on the node. Fix: create it, or give a dest in an '
                             'existing directory' % dest)
    bundle = Bundle(module.params['max_file_bytes'])
    if module.check_mode:
        module.exit_json(changed=True, dest=dest, index=[], counts=diagnostics.summary([]))
    collect(module, bundle)
    try:
        bundle.write(dest)
    except durable_file.UnsafeDestination as error:
        module.fail_json(msg='could not write the diagnostics bundle: %s' % error)
    except (OSError, IOError, tarfile.TarError) as error:
        module.fail_json(msg='could not write the diagnostics bundle %s: %s. Fix: free space in its directory or give '
                             'another dest' % (dest, error))
    module.exit_json(changed=True, dest=dest, index=bundle.index, counts=diagnostics.summary(bundle.index))


if __name__ == '__main__':
    main()
