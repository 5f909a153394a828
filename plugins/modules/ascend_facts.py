#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the npu.ascend collection
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: ascend_facts
short_description: Gather facts about Huawei Ascend NPUs and their installed software
version_added: 1.0.0
author: npu.ascend maintainers (@npu-ascend)
description:
  - Finds the Ascend NPUs on the PCI bus (vendor C(19e5)) from C(/sys/bus/pci/devices), falling back
    to C(lspci -vmm -nn) when sysfs cannot be read.
  - Reads what Huawei's packages record on disk (driver, firmware, CANN toolkit, kernels or ops, NNAL,
    Ascend Docker Runtime), the install record C(/etc/ascend_install.info), the present device nodes
    and where C(npu-smi) is.
  - Reports whether a reboot asked for by an installer is still pending. Huawei leaves no marker for
    that, so M(npu.ascend.ascend_runfile) writes C(/var/lib/npu_ascend/reboot-required.json) when an
    installer prints C(Reboot needed), tagged with the boot it happened in (the kernel boot id and
    the start time of PID 1, so a container restart counts as a reboot too). The reboot is pending
    while that tag is the current boot's.
  - Reports whether the NPU RoCE fabric gate of the P(npu.ascend.hccn#role) role passed for the configuration that is
    live (RV(ansible_facts.ascend.fabric)), reading the role's marker and C(/etc/hccn.conf) with the same bounded,
    non-blocking reads; a damaged marker is a state of its own, never a failure.
  - Fails naming the file and what it found (escaped) when a version file is not UTF-8 text, holds a
    version no Huawei installer writes (shell characters, blanks, control characters), is not a regular file
    (a FIFO, a link to a device) or is larger than 1 MiB, rather than passing such a value on or reading the
    component as not installed.
  - A version file that is there but names no version (empty, C(Version=) with no value, no Version line) is
    reported as a damaged install of that component (C(version) null, C(damaged) the reason and the fix), never
    as not installed; P(npu.ascend.ascend_plan#filter) and M(npu.ascend.ascend_runfile) refuse it.
  - Also returns, so that one call is the probe the roles plan from (P(npu.ascend.ascend_plan#filter)), the
    operating system as C(/etc/os-release) names it (what the compatibility matrix matches), the free space of
    O(free_space_path) and which of O(paths) exist, the container engines and the kubelet as systemd knows them
    (one C(systemctl show)), the containerd release, whether the NPU driver's kernel modules exist for the
    running kernel and for the kernel the next boot takes (and whether DKMS built them), and whether the Python
    library the containerd config modules need (C(tomlkit)) can be imported by the interpreter the modules run with; when asked, the chips as
    C(npu-smi) reports them (O(npu_smi)) and what the package manager knows of some packages (O(packages)).
  - Read-only; runs in check mode.
options:
  install_path:
    description:
      - Where the Ascend packages are installed (their C(--install-path)).
    type: path
    default: /usr/local/Ascend
  paths:
    description:
      - Paths to look for (leftovers of earlier installs, the kernel's build tree); RV(ansible_facts.ascend.paths_present)
        lists those that exist.
    type: list
    elements: path
    default: []
  files:
    description:
      - Files whose content and ownership RV(ansible_facts.ascend.files) reports. Given the files the roles write, the
        probe tells a role whether its file is already as wanted, without a task of its own.
    type: list
    elements: path
    default: []
  free_space_path:
    description: The file system whose free space RV(ansible_facts.ascend.free_kb) gives.
    type: path
    default: /
  npu_smi:
    description:
      - Also read the chips with C(npu-smi). V(info) runs C(npu-smi info), V(board) also C(npu-smi info -t board -i N)
        for every NPU, V(first_board) only until one board names its Board ID (what a node's labels are computed
        from). The result is RV(ansible_facts.ascend.npu_smi), as M(npu.ascend.npu_smi_info) returns it.
      - An npu-smi that fails, prints an error code or does not answer within O(npu_smi_timeout) does not fail the
        module; the chips' state is a fact like any other, given in RV(ansible_facts.ascend.npu_smi_error).
      - V(none) leaves npu-smi alone (and both facts out).
    type: str
    choices: [none, info, board, first_board]
    default: none
  vnpus:
    description:
      - With O(npu_smi) other than V(none), also read the static vNPUs of every chip that can be split (310P, 910B,
        legacy 910), one C(npu-smi info -t info-vnpu -i N -c C) per chip, into the C(vnpus) of RV(ansible_facts.ascend.npu_smi).
        What a Node's vNPU labels are computed from where the node was split before it joined the cluster (docs/vnpu.md).
      - A chip where npu-smi answers with a sentence instead of the table (VM mode, SMP mode) has no container vNPUs,
        and its C(unavailable) says why. A chip whose output cannot be read makes the whole reading fail, as any npu-smi
        error does (RV(ansible_facts.ascend.npu_smi_error)), naming the node, the chip and the first line printed.
    type: bool
    default: false
  npu_smi_timeout:
    description: Seconds each C(npu-smi) run may take before it is stopped (through C(timeout)).
    type: int
    default: 120
  npu_smi_from:
    description:
      - An earlier probe of this run (C(ansible_facts.ascend)) whose npu-smi reading, RV(ansible_facts.ascend.npu_smi)
        and RV(ansible_facts.ascend.npu_smi_error), this probe returns unchanged instead of running npu-smi. For the
        probe after an installer that leaves the chips alone (CANN, the Ascend Docker Runtime), so that the reading
        is not lost and later steps (the fleet report) need not run npu-smi again.
      - Ignored when O(npu_smi) is not V(none) or the earlier probe has no reading.
    type: dict
  packages:
    description:
      - Packages to ask O(package_manager) about (C(apt-cache policy), C(dnf list --showduplicates)) for their installed
        and available versions, in RV(ansible_facts.ascend.package_query).
    type: list
    elements: str
    default: []
  package_manager:
    description: The package manager O(packages) are asked about; without one, O(packages) are not looked up.
    type: str
    choices: [apt, dnf, dnf5]
notes:
  - Supports check mode.
seealso:
  - module: npu.ascend.npu_smi_info
  - module: npu.ascend.ascend_runfile
extends_documentation_fragment:
  - npu.ascend.attributes
  - npu.ascend.attributes.read_only
  - npu.ascend.attributes.facts
'''

EXAMPLES = r'''
- name: Gather Ascend facts
  npu.ascend.ascend_facts:

- name: Fail early on a node without NPUs
  ansible.builtin.assert:
    that: ansible_facts.ascend.npu_count > 0
    fail_msg: No Ascend NPU found on the PCI bus

- name: Show the installed driver
  ansible.builtin.debug:
    msg: "{{ ansible_facts.ascend.installed.driver.version | default('not installed') }}"
'''

RETURN = r'''
ansible_facts:
  description: Facts to add to ansible_facts.
  returned: always
  type: dict
  contains:
    ascend:
      description: Everything found about the Ascend hardware and software of the node.
      type: dict
      returned: always
      contains:
        arch:
          description: Machine architecture (C(x86_64) or C(aarch64)).
          type: str
          sample: aarch64
        pci_devices:
          description: The Ascend NPU PCI functions, each with address, ids, chip family and product.
          type: list
          elements: dict
          sample:
            - address: "0000:c1:00.0"
              vendor_id: 19e5
              device_id: d802
              subsystem_vendor_id: 19e5
              subsystem_device_id: "3002"
              class_id: "1200"
              revision: "20"
              chip_family: 910b
              product: Atlas 800I A2
        pci_source:
          description: Where the PCI devices were read from (C(sysfs), C(lspci) or C(none)).
          type: str
          sample: sysfs
        npu_count:
          description: Number of Ascend NPU PCI functions.
          type: int
          sample: 8
        chip_family:
          description: Chip family of the NPUs (C(910), C(910b), C(A3), C(310), C(310p), C(310b), C(A5)), or null.
          type: str
          sample: 910b
        chip_families:
          description: All chip families found (more than one is unusual).
          type: list
          elements: str
        product:
          description: Product name when the PCI subsystem id identifies it, else null.
          type: str
          sample: Atlas 800I A2
        k8s_resource_name:
          description: The extended resource Huawei's device plugin advertises for this chip family.
          type: str
          sample: huawei.com/Ascend910
        accelerator_label:
          description: Value of the C(accelerator) node label for this chip family.
          type: str
          sample: huawei-Ascend910
        installed:
          description:
            - Per component (C(firmware), C(driver), C(toolkit), C(kernels), C(ops), C(nnal),
              C(docker_runtime)) a dict with C(version), C(path), C(version_file), C(uninstall_script)
              and what the version file adds (for example C(compatible_version_fw)), or null when not installed.
            - When the version file is there but names no version, C(version) is null and C(damaged) says which file,
              what it should hold and the fix (restore it, or reinstall over it with the installer's C(--upgrade)).
          type: dict
          sample:
            driver:
              version: 25.0.rc1.1
              path: /usr/local/Ascend/driver
              version_file: /usr/local/Ascend/driver/version.info
              compatible_version_fw: "[7.0.0,7.7.99]"
            toolkit: null
        install_record:
          description: The keys of C(/etc/ascend_install.info), or null when absent.
          type: dict
        device_nodes:
          description: The Ascend device nodes present under C(/dev).
          type: list
          elements: str
          sample: [/dev/davinci0, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc]
        npu_smi_path:
          description: Path of C(npu-smi), or null when it is not installed.
          type: str
          sample: /usr/local/sbin/npu-smi
        reboot_pending:
          description: True while a reboot an installer asked for has not happened yet.
          type: bool
        reboot_reasons:
          description: The installs that asked for the pending reboot (component, version, recorded_at).
          type: list
          elements: dict
        reboot_marker:
          description: The file M(npu.ascend.ascend_runfile) records a reboot an installer asked for in.
          type: str
          sample: /var/lib/npu_ascend/reboot-required.json
        install_path:
          description: The install path the facts were read from.
          type: str
          sample: /usr/local/Ascend
        os:
          description: The operating system as C(/etc/os-release) names it (C(NAME) and C(VERSION_ID)), or null.
          type: str
          sample: openEuler 24.03
        free_kb:
          description: Free space of O(free_space_path) in KiB for an unprivileged user (as C(df) shows it), or null.
          type: int
          sample: 52428800
        files:
          description:
            - Per entry of O(files), its SHA-1, mode (octal), owner and group ids, or null when it is not a regular file.
            - C(stamp_sha1), only where M(npu.ascend.containerd_runtime) left its stamp beside the file, is the
              SHA-1 of that stamp; the P(npu.ascend.containerd_runtime_stamped#filter) filter tells from it whether
              the file is as the module left it.
          type: dict
          returned: always
          sample:
            /etc/profile.d/ascend-cann.sh: {sha1: 5b4c0e3f9d0a1e2b3c4d5e6f708192a3b4c5d6e7, mode: '0644', uid: 0, gid: 0}
            /etc/containerd/config.toml: {sha1: 0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d, mode: '0644', uid: 0, gid: 0,
                                          stamp_sha1: 9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291807}
        paths_present:
          description: The entries of O(paths) that exist (a dangling symbolic link counts).
          type: list
          elements: str
        services:
          description:
            - Per unit (C(containerd), C(docker), C(kubelet)) its C(load_state) (C(not-found) when systemd has no
              unit file for it) and C(active_state), as C(systemctl show) gives them.
            - Empty when C(systemctl) is missing or fails.
          type: dict
          sample:
            containerd: {load_state: loaded, active_state: active}
            docker: {load_state: not-found, active_state: inactive}
            kubelet: {load_state: loaded, active_state: active}
        engines_present:
          description: The container engines (V(containerd), V(docker)) whose unit systemd has loaded.
          type: list
          elements: str
          sample: [containerd]
        containerd:
          description: The release C(containerd --version) names (C(version), C(major), C(minor), C(output)), or null
            when the binary is missing or names no release.
          type: dict
          sample: {version: 2.4.2, major: 2, minor: 4, output: containerd github.com/containerd/containerd/v2 v2.4.2 abc}
        npu_smi:
          description:
            - With O(npu_smi=info) or O(npu_smi=board), what C(npu-smi) reported (C(binary), C(tool_version),
              C(driver_version), C(chips), C(processes), and C(boards) with O(npu_smi=board) or O(npu_smi=first_board)), or null when npu-smi is
              not installed or could not be read.
            - With O(npu_smi=board) or O(npu_smi=first_board), also C(super_pod), the SuperPoD membership of a node whose
              chips can be members (Atlas A3) from C(npu-smi info -t spod-info) of its first die (C(super_pod_id),
              C(server_index), C(super_pod_size), C(sdid)), or null (other chips, or not a member).
            - With O(vnpus), C(vnpus) lists every chip that can be split (C(npu_id), C(chip_id), C(name)), its vNPUs
              (C(vnpu_id), C(vgroup_id), C(container_id), C(status), C(template), C(in_use), and C(resource), the device
              plugin's resource name or null for a template it does not publish), C(resources), the count of each resource,
              and C(unavailable), null or why npu-smi lists no container vNPU on that chip (its answer and the cause, for
              example VM mode).
            - Absent with O(npu_smi=none), unless O(npu_smi_from) has a reading.
          type: dict
          returned: when O(npu_smi) is not V(none), or O(npu_smi_from) has a reading
        npu_smi_error:
          description: With O(npu_smi) other than V(none), why npu-smi could not be read (with the fix), or null.
          type: str
          returned: when O(npu_smi) is not V(none), or O(npu_smi_from) has a reading
        package_query:
          description:
            - With O(packages) and O(package_manager), the query's C(manager), C(argv), C(rc) and C(stdout).
              dnf exits 1 when some names are unknown and still lists the others, so that is not a failure.
          type: dict
          returned: when O(packages) and O(package_manager) are given
        kernel_modules:
          description:
            - Whether the NPU driver's kernel modules (C(drv_pcie_hdc_host.ko) and its kin, under
              C(/lib/modules/<release>/updates) or C(extra), at any depth up to 3) exist for the running kernel
              (C(running)) and for the newest installed kernel, the one the next boot takes (C(next); the newest
              C(/boot/vmlinuz-<release>) or the running kernel), each with C(release), C(present), C(path) and
              C(dkms) (DKMS built the modules for it).
            - C(installed) lists the releases of the C(/boot/vmlinuz-<release>) images.
            - C(dkms) says whether the driver went the DKMS way (C(used), true when DKMS's tree C(/var/lib/dkms) holds a
              build of the driver's modules), its DKMS C(module) name and C(version), the C(kernels) it built for,
              and only then C(status), what C(dkms status -m <module>) printed (or why it could not run), parsed
              in C(entries).
            - Huawei's installer builds through DKMS only when dkms, gcc and the running kernel's headers are
              installed; otherwise it copies prebuilt modules for the running kernel only, and a kernel installed
              later has none (docs/kernel-upgrades.md).
          type: dict
          returned: always
          sample:
            running: {release: 6.1.0-28-amd64, present: true, dkms: false,
                      path: /lib/modules/6.1.0-28-amd64/updates/drv_pcie_hdc_host.ko}
            next: {release: 6.1.0-29-amd64, present: false, dkms: false, path: null}
            installed: [6.1.0-29-amd64]
            dkms: {used: false, module: null, version: null, kernels: [], status: null, entries: []}
        python_libraries:
          description: Per Python library the collection's modules need on the node (C(tomlkit)), whether the
            interpreter running the modules can import it.
          type: dict
          sample: {tomlkit: true}
        fabric:
          description:
            - The verdict of the NPU RoCE fabric gate the P(npu.ascend.hccn#role) role last recorded on the node
              (C(/var/lib/npu_ascend/hccn-fabric.json)), judged against what is live - C(state) V(passed) (the gate
              passed and C(/etc/hccn.conf) is still the file it checked, with the same SHA-256 and the same address,
              netmask, gateway and detect address per NPU), V(failed) (the last gate failed), V(changed) (the NPU
              network configuration changed since, for example a hand-edited C(/etc/hccn.conf)), V(absent) (no gate
              recorded) or V(damaged) (the marker cannot be read).
            - C(verdict) is the recorded one (V(passed), V(failed) or null), C(reason) why the state is not V(passed)
              (with the fix), C(marker) the file, C(npus) the NPU ids the gate checked.
            - The P(npu.ascend.k8s_node#role) role labels a training node C(<domain>/fabric=passed) only while C(state) is V(passed).
          type: dict
          returned: always
          sample: {state: passed, verdict: passed, reason: null, marker: /var/lib/npu_ascend/hccn-fabric.json,
                   npus: [0, 1, 2, 3, 4, 5, 6, 7]}
'''

import glob
import hashlib
import importlib.util
import os
import platform
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.npu.ascend.plugins.module_utils.files import bounded_read
from ansible_collections.npu.ascend.plugins.module_utils.packages import compatibility
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import config_stamp
from ansible_collections.npu.ascend.plugins.module_utils.runtime_config import engine_probe
from ansible_collections.npu.ascend.plugins.module_utils.hardware import fabric_marker
from ansible_collections.npu.ascend.plugins.module_utils.hardware import pci
from ansible_collections.npu.ascend.plugins.module_utils.packages import install_state
from ansible_collections.npu.ascend.plugins.module_utils.packages import driver_kernel_modules
from ansible_collections.npu.ascend.plugins.module_utils.hardware import npu_smi_runner
from ansible_collections.npu.ascend.plugins.module_utils.packages import reboot_marker
from ansible_collections.npu.ascend.plugins.module_utils.packages import runfile
from ansible_collections.npu.ascend.plugins.module_utils import timed_command
from ansible_collections.npu.ascend.plugins.module_utils.packages.version_files import VersionFileError

SYSFS_PCI_DEVICES = '/sys/bus/pci/devices'
OS_RELEASE = '/etc/os-release'
# The libraries the collection's modules import on the node, beyond the standard library.
PYTHON_LIBRARIES = ('tomlkit',)
# systemctl and containerd answer at once; one that does not is a stuck node, not a slow one.
PROBE_TIMEOUT_SECONDS = 30
PROBE_KILL_AFTER_SECONDS = 5
# dnf may refresh its repository metadata first, over the network.
PACKAGE_QUERY_TIMEOUT_SECONDS = 300
# The package managers' queries; dnf exits 1 when some of the names are unknown and still lists the others.
_DNF_QUERY = (['dnf', '-q', 'list', '--showduplicates'], (0, 1))
PACKAGE_QUERIES = {'apt': (['apt-cache', 'policy'], (0,)), 'dnf': _DNF_QUERY, 'dnf5': _DNF_QUERY}
SYSFS_FILES = ('vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'class', 'revision')
DEVICE_NODE_PATTERNS = ('/dev/davinci[0-9]*', '/dev/davinci_manager', '/dev/devmm_svm', '/dev/hisi_hdc')


def _read(path):
    """The UTF-8 text of a small regular file; OSError when missing, ValueError (RefusedFile,
    UnicodeDecodeError) for a FIFO, a device, a huge or a non-UTF-8 file: nothing here may hang."""
    return bounded_read.read_bytes(path).decode('utf-8')


def read_sysfs_devices(root=SYSFS_PCI_DEVICES):
    """Return the parsed devices, or None when sysfs cannot be read at all."""
    try:
        addresses = sorted(os.listdir(root))
    except OSError:
        return None
    devices = []
    for address in addresses:
        files = {}
        for name in SYSFS_FILES:
            try:
                files[name] = _read(os.path.join(root, address, name))
            except (IOError, OSError, ValueError):
                files[name] = None
        if files['vendor'] is None or files['device'] is None:
            continue
        try:
            devices.append(pci.parse_sysfs_device(address, files))
        except ValueError:
            continue
    return devices


def gather_pci(module):
    devices = read_sysfs_devices(SYSFS_PCI_DEVICES)
    if devices is not None:
        return pci.npu_devices(devices), 'sysfs'
    lspci = module.get_bin_path('lspci')
    if lspci:
        argv = [lspci, '-vmm', '-nn', '-D']
        rc, out, err, stopped = timed_command.run(module.run_command, argv, PROBE_TIMEOUT_SECONDS, PROBE_KILL_AFTER_SECONDS)
        if stopped:
            module.warn('%s did not answer within %d s; the NPUs are not counted' % (' '.join(argv), PROBE_TIMEOUT_SECONDS))
        elif rc == 0:
            try:
                return pci.npu_devices(pci.parse_lspci_vmm(out)), 'lspci'
            except ValueError as error:
                module.warn('cannot read lspci output: %s' % error)
        else:
            module.warn('lspci failed (rc=%s): %s' % (rc, err.strip()))
    return [], 'none'


def find_npu_smi(module):
    return module.get_bin_path('npu-smi', opt_dirs=npu_smi_runner.NPU_SMI_DIRS)


def read_npu_smi(module, binary, what):
    """(what npu-smi reported, None) or (None, why it could not be read); never fails the module."""
    if not binary:
        return None, None
    reader = npu_smi_runner.NpuSmiReader(module.run_command, binary, module.params['npu_smi_timeout'])
    try:
        return reader.read(board={'board': True, 'first_board': 'first'}.get(what, False),
                           vnpus=module.params['vnpus']), None
    except npu_smi_runner.NpuSmiFailure as failure:
        return None, str(failure)


def device_nodes():
    found = []
    for pattern in DEVICE_NODE_PATTERNS:
        found.extend(sorted(glob.glob(pattern)))
    return found


def reboot_state(module):
    try:
        boot = reboot_marker.read_current_boot()
    except ValueError:
        return False, []
    marker, problem = reboot_marker.read_reboot_marker()
    if problem:
        # Our own file, damaged: it pends nothing (the next recorded reboot replaces it), but say so.
        module.warn('%s; it pends nothing. %s' % (problem, reboot_marker.damaged_marker_fix()))
    return reboot_marker.reboot_pending(marker, boot)


def _family_facts(devices):
    families = sorted(set(device['chip_family'] for device in devices if device.get('chip_family')))
    products = sorted(set(device['product'] for device in devices if device.get('product')))
    chip_family = families[0] if families else None
    resource = label = None
    if chip_family:
        try:
            resource = pci.k8s_resource_name(chip_family)
            label = pci.accelerator_label(chip_family)
        except ValueError:
            pass
    return {
        'chip_family': chip_family,
        'chip_families': families,
        'product': products[0] if products else None,
        'k8s_resource_name': resource,
        'accelerator_label': label,
    }


def read_os_release(module, path=None):
    """``NAME VERSION_ID`` of os-release (what the compatibility matrix's ``os`` matches), or None."""
    path = path or OS_RELEASE
    try:
        return compatibility.parse_os_release(_read(path))
    except (IOError, OSError):
        return None
    except ValueError as error:
        # os-release is UTF-8 text by its specification; anything else names no OS we know.
        module.warn('%s was not read (%s), so the operating system is unknown. Fix: restore the file the '
                    'distribution ships' % (path, getattr(error, 'cause', None) or 'not UTF-8 text'))
        return None


def free_kb(path):
    try:
        filesystem = os.statvfs(path)
    except OSError:
        return None
    return filesystem.f_bavail * filesystem.f_frsize // 1024


def _run_probe(module, argv, seconds=None,
               stuck='the node is stuck (systemd or the service it asks). Fix: look at `systemctl status` and the '
                     'journal on the node, then run again.'):
    seconds = seconds or PROBE_TIMEOUT_SECONDS
    rc, out, err, stopped = timed_command.run(module.run_command, argv, seconds, PROBE_KILL_AFTER_SECONDS)
    if stopped:
        module.fail_json(msg='%s did not answer within %d s; %s' % (' '.join(argv), seconds, stuck))
    return rc, out, err


def read_services(module):
    systemctl = module.get_bin_path('systemctl')
    if not systemctl:
        return {}
    rc, out, err = _run_probe(module, engine_probe.systemctl_show_argv(systemctl))
    if rc != 0:
        module.warn('systemctl show failed (rc=%s): %s' % (rc, err.strip()))
        return {}
    try:
        return engine_probe.parse_systemctl_show(out)
    except ValueError as error:
        module.warn('cannot read systemctl show output: %s' % error)
        return {}


def read_containerd(module):
    containerd = module.get_bin_path('containerd')
    if not containerd:
        return None
    rc, out, _err = _run_probe(module, [containerd, '--version'])
    return engine_probe.parse_containerd_version(out) if rc == 0 else None


def query_packages(module, manager, names):
    base, accepted = PACKAGE_QUERIES[manager]
    argv = base + list(names)
    if not module.get_bin_path(argv[0]):
        module.fail_json(msg='%s is not installed, so the build packages (%s) cannot be looked up. Fix: install it, '
                             'or correct ansible_pkg_mgr if it names the wrong package manager' % (argv[0], ', '.join(names)))
    rc, out, err = _run_probe(module, argv, PACKAGE_QUERY_TIMEOUT_SECONDS,
                              'the package manager is stuck (a lock held by another run, or a repository that does '
                              'not answer). Fix: check the node\'s repositories and package manager locks, then run again.')
    if rc not in accepted:
        module.fail_json(msg='%s failed (rc=%s): %s. Fix: check the node\'s package repositories (%s update)'
                             % (' '.join(argv), rc, (err or out).strip() or 'no output', argv[0]))
    return {'manager': manager, 'argv': argv, 'rc': rc, 'stdout': out}


def _regular_file_sha1(path):
    """(SHA-1, stat) of a regular file (links followed); OSError or ValueError for anything else."""
    with bounded_read.open_regular(path) as handle:
        status = os.fstat(handle.fileno())
        digest = hashlib.sha1()
        for block in iter(lambda: handle.read(65536), b''):
            digest.update(block)
    return digest.hexdigest(), status


def file_states(paths):
    """Path -> {sha1, mode, uid, gid[, stamp_sha1]} of each regular file, None for anything else.

    ``stamp_sha1`` is there when a config module left its stamp beside the file (config_stamp.py).
    """
    states = {}
    for path in paths:
        try:
            sha1, status = _regular_file_sha1(path)
        except (IOError, OSError, ValueError):
            states[path] = None
            continue
        states[path] = {'sha1': sha1, 'mode': '%04o' % stat.S_IMODE(status.st_mode),
                        'uid': status.st_uid, 'gid': status.st_gid}
        try:
            states[path]['stamp_sha1'] = _regular_file_sha1(config_stamp.stamp_path(path))[0]
        except (IOError, OSError, ValueError):
            pass
    return states


def find_npu_module(release, root=None):
    """The path of one of the driver's modules under ``<root>/<release>/{updates,extra}``, or None."""
    root = root or driver_kernel_modules.MODULES_ROOT
    for sub in driver_kernel_modules.MODULE_DIRS:
        top = os.path.join(root, release, sub)
        for directory, subdirectories, names in os.walk(top):
            if directory[len(top):].count(os.sep) >= driver_kernel_modules.MAX_DEPTH:
                subdirectories[:] = []
            subdirectories.sort()
            for name in sorted(names):
                if driver_kernel_modules.is_npu_module(name):
                    return os.path.join(directory, name)
    return None


def read_dkms_status(module, dkms_module):
    """What ``dkms status`` says of the driver's DKMS module; never fails the probe."""
    dkms = module.get_bin_path('dkms')
    if not dkms:
        return 'dkms is not installed (the DKMS tree holds the driver\'s modules, but there is no dkms command)'
    argv = driver_kernel_modules.dkms_status_argv(dkms, dkms_module)
    rc, out, err, stopped = timed_command.run(module.run_command, argv, PROBE_TIMEOUT_SECONDS, PROBE_KILL_AFTER_SECONDS)
    if stopped:
        return '%s did not answer within %d s' % (' '.join(argv), PROBE_TIMEOUT_SECONDS)
    return out.strip() if rc == 0 else ('%s failed (rc=%s): %s' % (' '.join(argv), rc, (err or out).strip()))


def read_kernel_modules(module, arch):
    """The ``kernel_modules`` fact: the driver's modules for the running and the next kernel, and DKMS.

    Reads directories only; ``dkms status`` runs only when DKMS built the driver's modules."""
    running = platform.release()
    try:
        boot_names = os.listdir(driver_kernel_modules.BOOT_DIR)
    except OSError:
        boot_names = []
    releases = set([running, driver_kernel_modules.newest_release(driver_kernel_modules.boot_releases(boot_names) + [running])])
    modules = dict((release, find_npu_module(release)) for release in releases if release)
    dkms_paths = glob.glob(os.path.join(driver_kernel_modules.DKMS_TREE, '*', '*', '*', '*', 'module', '*'))
    tree = driver_kernel_modules.DKMS_TREE
    builds = driver_kernel_modules.dkms_builds(dkms_paths, arch, tree)
    status = read_dkms_status(module, builds[0][0]) if builds else None
    return driver_kernel_modules.judge(running, boot_names, modules, dkms_paths, arch, status, tree)


def python_libraries():
    return dict((name, importlib.util.find_spec(name) is not None) for name in PYTHON_LIBRARIES)


def gather(module, install_path):
    arch = platform.machine()
    devices, source = gather_pci(module)
    record = install_state.read_install_record()
    pending, reasons = reboot_state(module)
    facts = {
        'arch': arch,
        'install_path': install_path,
        'pci_devices': devices,
        'pci_source': source,
        'npu_count': len(devices),
        'installed': install_state.read_all_installed(install_path, arch, record),
        'install_record': record,
        'device_nodes': device_nodes(),
        'npu_smi_path': find_npu_smi(module),
        'reboot_pending': pending,
        'reboot_reasons': reasons,
        'reboot_marker': reboot_marker.REBOOT_MARKER_PATH,
    }
    facts.update(_family_facts(devices))
    facts['os'] = read_os_release(module)
    facts['free_kb'] = free_kb(module.params['free_space_path'])
    facts['paths_present'] = [path for path in module.params['paths'] if os.path.lexists(path)]
    facts['files'] = file_states(module.params['files'])
    facts['services'] = read_services(module)
    facts['engines_present'] = engine_probe.present_engines(facts['services'])
    facts['containerd'] = read_containerd(module)
    facts['python_libraries'] = python_libraries()
    facts['kernel_modules'] = read_kernel_modules(module, arch)
    facts['fabric'] = fabric_marker.read_fabric()
    earlier = module.params['npu_smi_from'] or {}
    if module.params['npu_smi'] != 'none':
        facts['npu_smi'], facts['npu_smi_error'] = read_npu_smi(module, facts['npu_smi_path'], module.params['npu_smi'])
    elif 'npu_smi' in earlier:
        facts['npu_smi'], facts['npu_smi_error'] = earlier['npu_smi'], earlier.get('npu_smi_error')
    if module.params['packages'] and module.params['package_manager']:
        facts['package_query'] = query_packages(module, module.params['package_manager'], module.params['packages'])
    return facts


def main():
    module = AnsibleModule(
        argument_spec=dict(
            install_path=dict(type='path', default=runfile.DEFAULT_INSTALL_PATH),
            paths=dict(type='list', elements='path', default=[]),
            files=dict(type='list', elements='path', default=[]),
            free_space_path=dict(type='path', default='/'),
            npu_smi=dict(type='str', choices=['none', 'info', 'board', 'first_board'], default='none'),
            vnpus=dict(type='bool', default=False),
            npu_smi_timeout=dict(type='int', default=npu_smi_runner.DEFAULT_TIMEOUT_SECONDS),
            npu_smi_from=dict(type='dict'),
            packages=dict(type='list', elements='str', default=[]),
            package_manager=dict(type='str', choices=list(PACKAGE_QUERIES)),
        ),
        supports_check_mode=True,
    )
    if module.params['npu_smi_timeout'] <= 0:
        module.fail_json(msg='npu_smi_timeout must be a positive number of seconds, got %s' % module.params['npu_smi_timeout'])
    try:
        facts = gather(module, module.params['install_path'])
    except VersionFileError as error:
        # A version file that is there but unreadable must not become "not installed".
        module.fail_json(msg='cannot read the installed Ascend versions: %s' % error)
    module.exit_json(changed=False, ansible_facts={'ascend': facts})


if __name__ == '__main__':
    main()
