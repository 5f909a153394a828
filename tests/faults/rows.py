"""The rows of the fault matrix (tests/faults/matrix.py), one declarative entry per fault.

A row:
  id, fault    short id and what goes wrong
  before       actions that bring the node to the state the fault needs (not part of the fault)
  inject       actions that inject the fault
  run          (playbook of tests/faults/playbooks, extra vars): the run that meets the fault;
               a fault given as a wrong setting lives only in these extra vars
  during       optional: something done to the node while that run goes on
  expect       regular expressions (case-insensitive) that must all match the failure the
               operator reads for the host: host, component, cause and fix; None for a row
               whose run must succeed (a situation the node is in, not a failure); "killed" for a
               run the row's "during" kills with SIGKILL (nothing is left to print a message)
  reach        optional: actions that make the node reachable again before the survivors are read
  survive      node paths (files, or directories walked recursively; "k8s:<API path>" for a
               Kubernetes object's labels and taints) that the failed run must leave byte for
               byte, with their modes
  remove       actions that remove the fault (and follow the failure's own fix where it says
               what the operator must clean up)
  rerun        (playbook, extra vars): the run that must converge once the fault is gone
  rerun_changed  optional: the changed count that rerun must report (0 on a converged node)
  host         optional (fleet lane): the row's bad node; the lane's own node is then a healthy
               peer that runs beside it, must finish the failed run and change nothing on the rerun
  summary      optional: regular expressions the run's output must match (the run's summary)
  rerun_output optional: regular expressions the rerun's output must match

Actions: ("fault", {faults.json keys}), ("clear",), ("headers", present), ("exec", argv),
("reboot",), ("start",), ("playbook", name, vars), ("hide_pci", address),
("restore_pci", address), ("save", path), ("restore", path),
("probe_image", [hosts]) (default the row's node), ("controlplane_up",), ("dead_kubeconfig",),
("k8s_patch_status", {resource: count}),
("mirror", "start" | "stop" | "untouched") (a plain-http mirror of the packages on MIRROR_PORT),
("background_playbook", name, vars) (a run that goes on beside the row's own), ("wait_background",)
(waits for it; it must succeed), ("stop",) (podman stop: the node powered off).
"""
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES_DIR = REPO_ROOT / ".cache" / "faults" / "packages"
DEAD_KUBECONFIG = REPO_ROOT / ".cache" / "faults" / "dead-kubeconfig"

# The plain-http package mirror the insecure-mirror row serves the packages from.
MIRROR_PORT = 18473
MIRROR_URL = "http://host.containers.internal:%d" % MIRROR_PORT

HOST_NODE = "flt-a2-01"
ENGINE_NODE = "flt-duo-01"

DRIVER = "25.0.rc1.1"
FIRMWARE = "7.7.0.1.231"
CANN = "8.2.RC1"
RUNTIME = "7.3.0"
OLDER_DRIVER = "24.1.rc2"
# No row of the compatibility matrix speaks about CANN 8.3.RC1 with any driver (row P6U).
UNKNOWN_PAIR_CANN = "8.3.RC1"
UNKNOWN_PAIR_STACK = {"cann_version": UNKNOWN_PAIR_CANN, "cann_kernels": False, "cann_nnal": False}

DRIVER_910B = "Ascend-hdk-910b-npu-driver_%s_linux-x86-64.run" % DRIVER
DRIVER_910B_ARM = "Ascend-hdk-910b-npu-driver_%s_linux-aarch64.run" % DRIVER
RUNTIME_FILE = "Ascend-docker-runtime_%s_linux-x86_64.run" % RUNTIME

# (component, chip, version, arch) built into .cache/faults/packages, with SHA256SUMS.
PACKAGES = [
    ("driver", "910b", DRIVER, "x86_64"),
    ("firmware", "910b", FIRMWARE, "x86_64"),
    ("kernels", "910b", CANN, "x86_64"),
    ("driver", "310p", DRIVER, "x86_64"),
    ("firmware", "310p", FIRMWARE, "x86_64"),
    ("toolkit", "910b", CANN, "x86_64"),
    ("nnal", "910b", CANN, "x86_64"),
    ("docker_runtime", "910b", RUNTIME, "x86_64"),
    # an older driver, for the incompatible-stack row
    ("driver", "910b", OLDER_DRIVER, "x86_64"),
    # the same stack for aarch64, for the wrong-architecture row
    ("driver", "910b", DRIVER, "aarch64"),
    ("kernels", "910b", CANN, "aarch64"),
    ("toolkit", "910b", CANN, "aarch64"),
    ("nnal", "910b", CANN, "aarch64"),
    # a CANN release the compatibility matrix has no row for, for the unknown-pair row
    ("toolkit", "910b", UNKNOWN_PAIR_CANN, "x86_64"),
]

# Copies of the package directory, each damaged one way (<packages>-<name>).
DAMAGED_PACKAGE_DIRS = {
    # a flipped byte in the driver, SHA256SUMS as published: the checksum catches it
    "checksum-mismatch": {"kind": "flip-byte", "file": DRIVER_910B},
    # a flipped byte in the runtime, SHA256SUMS made from the damaged file: only the archive's
    # own check can catch it
    "corrupt-runtime": {"kind": "flip-byte", "file": RUNTIME_FILE, "matching_checksum": True},
    # the x86_64 driver replaced by the aarch64 one (a download for the wrong architecture)
    "wrong-arch-driver": {"kind": "missing", "file": DRIVER_910B},
    "missing-driver": {"kind": "missing", "file": [DRIVER_910B, DRIVER_910B_ARM]},
    "no-driver-checksum": {"kind": "no-checksum", "file": DRIVER_910B},
}


def damaged(name):
    return "%s-%s" % (PACKAGES_DIR, name)


# What the failed runs must leave alone.
OPERATOR_DATA = ["/srv/models", "/etc/containerd/config.toml"]
NOTHING_ASCEND = ["/usr/local/Ascend", "/etc/ascend_install.info", "/usr/local/sbin/npu-smi", "/var/lib/npu_ascend",
                  "/var/cache/npu_ascend"]
HDK = ["/usr/local/Ascend/driver", "/usr/local/Ascend/firmware", "/etc/ascend_install.info", "/usr/local/sbin/npu-smi",
       "/var/lib/ascend-sandbox/firmware-running.json"]
TOOLKIT = ["/usr/local/Ascend/ascend-toolkit"]
ENGINE_CONFIGS = ["/etc/containerd/config.toml", "/etc/docker/daemon.json", "/srv/models"]
K8S_NODE = "k8s:/api/v1/nodes/%s" % ENGINE_NODE

PLANT_OPERATOR_DATA = ("exec", ["sh", "-c", "mkdir -p /srv/models && head -c 262144 /dev/urandom > /srv/models/resnet50.om"
                                " && chmod 0640 /srv/models/resnet50.om"])

# Refuses to start containerd while its config names the Ascend runtime: a containerd that will
# not come back with the new config (the role must put the old one back and restart it).
REFUSE_ASCEND_DROP_IN = "/etc/systemd/system/containerd.service.d/90-flt-refuse-ascend.conf"
REFUSE_ASCEND = ("exec", ["sh", "-c", "mkdir -p /etc/systemd/system/containerd.service.d && printf '%s\\n' '[Service]' "
                          "\"ExecStartPre=/bin/sh -c '! grep -q ascend-docker-runtime /etc/containerd/config.toml'\" > "
                          + REFUSE_ASCEND_DROP_IN + " && systemctl daemon-reload"])
ALLOW_ASCEND = ("exec", ["sh", "-c", "rm -f %s && systemctl daemon-reload" % REFUSE_ASCEND_DROP_IN])

CANN_TOOLKIT_ONLY = {"cann_kernels": False, "cann_nnal": False}
CANN_NO_NNAL = {"cann_nnal": False}

PREFLIGHT_ROWS = [
    {
        "id": "P1", "fault": "kernel headers missing from the node's repositories",
        "inject": [("fault", {"no_kernel_headers": True}), ("headers", False)],
        "run": ("preflight", {}),
        "expect": {"host": HOST_NODE, "component": r"kernel headers",
                   "cause": r"linux-headers-\S+ missing", "fix": r"fix:\smake linux-headers-\S+ installable"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "remove": [("clear",), ("headers", True)],
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P2", "fault": "driver package checksum mismatch (damaged download)",
        "run": ("preflight", {"packages_source_dir": damaged("checksum-mismatch")}),
        "expect": {"host": HOST_NODE, "component": r"package driver",
                   "cause": r"sha256 mismatch", "fix": r"fix:\sdownload \S+ again"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P3", "fault": "driver downloaded for the wrong architecture (only aarch64 there)",
        "run": ("preflight", {"packages_source_dir": damaged("wrong-arch-driver")}),
        "expect": {"host": HOST_NODE, "component": r"package driver",
                   "cause": r"aarch64\.run, built for the other architecture", "fix": r"fix:\sdownload \S+x86-64\.run"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P4", "fault": "driver package missing from the package directory",
        "run": ("preflight", {"packages_source_dir": damaged("missing-driver")}),
        "expect": {"host": HOST_NODE, "component": r"package driver",
                   "cause": r"(missing|not found|does not exist|no such)",
                   "fix": r"fix:\sdownload \S+ from Huawei into"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P5", "fault": "no known sha256 for the driver package",
        "run": ("preflight", {"packages_source_dir": damaged("no-driver-checksum")}),
        "expect": {"host": HOST_NODE, "component": r"package driver",
                   "cause": r"(no (known )?sha256|no checksum|checksum .{0,20}unknown)",
                   "fix": r"fix:\sadd the line .{0,300}SHA256SUMS"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P6", "fault": "incompatible versions (driver 24.1.rc2 under CANN 8.2.RC1)",
        "run": ("preflight", {"hdk_driver_version": OLDER_DRIVER}),
        "expect": {"host": HOST_NODE, "component": r"compatibility",
                   "cause": r"driver 24\.1\.rc2 do not fit", "fix": r"fix:\schoose versions that fit"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P6U", "fault": "unknown pair (CANN 8.3.RC1 with driver 25.0.rc1.1: no matrix row)",
        "run": ("preflight", UNKNOWN_PAIR_STACK),
        "expect": {"host": HOST_NODE, "component": r"compatibility",
                   "cause": r"cann 8\.3\.RC1 with driver 25\.0\.rc1\.1 .{0,80}is not in the compatibility matrix; "
                            r"the matrix has no row for cann 8\.3\.RC1",
                   "fix": r"fix:\s.{0,200}preflight_compat_extra_rows.{0,120}preflight_compat_allow_unknown"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        # The way forward the message names: the same stack with the explicit opt-in passes.
        "rerun": ("preflight", dict(UNKNOWN_PAIR_STACK, preflight_compat_allow_unknown=True)), "rerun_changed": 0,
    },
    {
        "id": "P7", "fault": "an NPU gone from the PCI bus (7 of 8 visible)",
        "inject": [("hide_pci", "0000:42:00.0")],
        "run": ("preflight", {}),
        "expect": {"host": HOST_NODE, "component": r"NPU count",
                   "cause": r"found 7, expected 8", "fix": r"fix:\s.{0,80}reseat the cards"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        "remove": [("restore_pci", "0000:42:00.0")],
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
    {
        "id": "P8", "fault": "plain-http package mirror, no checksum pinned (insecure mirror refused)",
        "before": [("mirror", "start")],
        "run": ("preflight", {"packages_source_dir": "", "packages_mirror_url": MIRROR_URL}),
        "expect": {"host": HOST_NODE, "component": r"package mirror",
                   "cause": r"is plain http:// and no checksum is pinned",
                   "fix": r"Fix:\s.{0,300}packages_sha256sums.{0,100}packages_mirror_allow_insecure=true"},
        "survive": NOTHING_ASCEND + OPERATOR_DATA,
        # nothing, not even SHA256SUMS, was fetched before the refusal
        "remove": [("mirror", "untouched")],
        "rerun": ("preflight", {"packages_source_dir": "", "packages_mirror_url": MIRROR_URL,
                                "packages_mirror_allow_insecure": True}),
        "rerun_changed": 0,
    },
]

HDK_ROWS = [
    {
        "id": "H1", "fault": "DKMS build of the driver fails",
        "inject": [("fault", {"driver_dkms_failure": True})],
        "run": ("hdk", {}),
        "expect": {"host": HOST_NODE, "component": r"driver install failed",
                   "cause": r"Dkms install failed", "fix": r"Fix:\sinstall dkms, gcc, make and the kernel headers"},
        "survive": OPERATOR_DATA,
        # The driver's own line says "retry after uninstall and reboot": the operator does that.
        "remove": [("clear",),
                   ("exec", ["sh", "-c", "if [ -x /usr/local/Ascend/driver/script/uninstall.sh ]; then "
                                         "/usr/local/Ascend/driver/script/uninstall.sh; else rm -rf /usr/local/Ascend/driver; fi"]),
                   ("reboot",)],
        "rerun": ("hdk", {}),
    },
    {
        "id": "H2", "fault": "unhealthy chip after the install (NPU 3 Critical)",
        "inject": [("fault", {"unhealthy_chips": [[3, 0]]})],
        "run": ("hdk", {}),
        "expect": {"host": HOST_NODE, "component": r"NPU 3 chip 0",
                   "cause": r"health is Critical", "fix": r"Fix:\ssee `npu-smi info -t health"},
        "survive": HDK + OPERATOR_DATA,
        "remove": [("clear",)],
        "rerun": ("hdk", {}), "rerun_changed": 0,
    },
    {
        "id": "H3", "fault": "npu-smi cannot reach the driver (dcmi -8005)",
        "inject": [("fault", {"npu_smi_error": -8005})],
        "run": ("hdk", {}),
        "expect": {"host": HOST_NODE, "component": r"npu-smi",
                   "cause": r"-8005", "fix": r"reboot the node; if the error stays, reinstall the driver"},
        "survive": HDK + OPERATOR_DATA,
        "remove": [("clear",)],
        "rerun": ("hdk", {}), "rerun_changed": 0,
    },
]

# The driver installer's success lines in the node's install log: a count saved before the row, compared after.
DRIVER_INSTALLS_LOG = "/var/log/ascend_seclog/ascend_install.log"
DRIVER_INSTALLED_LINE = "Driver package installed successfully"
COUNT_DRIVER_INSTALLS = ("exec", ["sh", "-c", "grep -c '%s' %s > /root/flt-h4-installs || true"
                                  % (DRIVER_INSTALLED_LINE, DRIVER_INSTALLS_LOG)])
ONE_DRIVER_INSTALL = ("exec", ["sh", "-c", "before=$(cat /root/flt-h4-installs) && now=$(grep -c '%s' %s)"
                               " && echo \"driver installs during the row: $((now - before)) (wanted exactly 1)\""
                               " && test $((now - before)) -eq 1 && rm /root/flt-h4-installs"
                               % (DRIVER_INSTALLED_LINE, DRIVER_INSTALLS_LOG)])
REMOVE_DRIVER = ("exec", ["sh", "-c", "if [ -x /usr/local/Ascend/driver/script/uninstall.sh ]; then "
                                      "/usr/local/Ascend/driver/script/uninstall.sh; else rm -rf /usr/local/Ascend/driver; fi"])
# Long enough that the rerun reaches the driver while the first run's installer still runs.
CONTROLLER_KILLED_INSTALL_SECONDS = 240

# After H1 (the node converged by its rerun): the driver removed again, for a fresh driver install.
CONTROLLER_ROWS = [
    {
        "id": "H4", "fault": "the controller is killed (SIGKILL to ansible-playbook) during the driver installer",
        "before": [REMOVE_DRIVER, ("reboot",), COUNT_DRIVER_INSTALLS],
        "inject": [("fault", {"install_seconds": CONTROLLER_KILLED_INSTALL_SECONDS})],
        "during": "kill_controller_during_install",
        "run": ("hdk", {}),
        # Nothing prints a message: the run is gone. The installer goes on in the node (started in the
        # background), and the rerun must wait for it and take its result instead of installing again.
        "expect": "killed",
        "survive": OPERATOR_DATA,
        "rerun": ("hdk", {}),
        # The rerun found the first run's driver installer still running and took its result: its wait
        # reports the install as changed (a driver installed before the rerun would be kept, unchanged).
        "rerun_output": [r"TASK \[npu\.ascend\.packages : Wait on every node for the installers of firmware and driver\]"
                         r"[^\n]*\n(?:FAILED - RETRYING[^\n]*\n)*changed: \[flt-a2-01\]"],
        "after": [("clear",), ONE_DRIVER_INSTALL],
    },
]

CANN_ROWS = [
    {
        "id": "C1", "fault": "node unreachable mid-run (stopped while the toolkit installs)",
        "inject": [("fault", {"install_seconds": 30})],
        "during": "stop_node_during_install",
        "run": ("cann", CANN_TOOLKIT_ONLY),
        "expect": {"host": HOST_NODE, "component": r"toolkit|CANN",
                   "cause": r"unreachable|not running|no such container|connection",
                   "fix": r"fix:\s"},
        "survive": HDK + OPERATOR_DATA,
        # the node is started again before what survived is read
        "reach": [("start",)],
        "remove": [("clear",)],
        "rerun": ("cann", CANN_TOOLKIT_ONLY),
    },
    {
        "id": "C2", "fault": "disk full while installing the operator kernels",
        "inject": [("fault", {"disk_full": True})],
        "run": ("cann", CANN_NO_NNAL),
        "expect": {"host": HOST_NODE, "component": r"(?:kernels|toolkit) install failed",  # toolkit when the row runs alone (--only)
                   "cause": r"free space|no space", "fix": r"fix:\sfree .{0,40}space"},
        "survive": HDK + TOOLKIT + OPERATOR_DATA,
        "remove": [("clear",)],
        "rerun": ("cann", CANN_NO_NNAL),
    },
    {
        "id": "C3", "fault": "NNAL installer killed midway",
        "inject": [("fault", {"installer_killed_midway": "nnal"})],
        "run": ("cann", {}),
        "expect": {"host": HOST_NODE, "component": r"nnal install failed",
                   "cause": r"the installer was killed", "fix": r"Fix:\sfind what killed it"},
        "survive": HDK + TOOLKIT + OPERATOR_DATA,
        "remove": [("clear",)],
        "rerun": ("cann", {}),
    },
]

# Kernels that move on (docs/kernel-upgrades.md). The node's apt repository offers a kernel update
# (sandbox/README.md): installing linux-image-sandbox-update puts a newer kernel in /boot and
# /lib/modules and runs /etc/kernel's hooks, DKMS's among them, as Debian's kernel packages do.
KERNEL_UPDATE = "linux-image-sandbox-update"
KERNEL_UPDATE_HEADERS = "linux-headers-sandbox-update"
APT = "DEBIAN_FRONTEND=noninteractive apt-get -y -q"
STAGED_DRIVER = "/var/cache/npu_ascend/packages/" + DRIVER_910B
# The kernel update gone again (the running kernel's headers stay).
NO_KERNEL_UPDATE = ("exec", ["sh", "-c", "%s purge %s %s $(dpkg-query -W -f '${Package}\\n' 'linux-image-[0-9]*' "
                                         "'linux-headers-[0-9]*' 2>/dev/null | grep -v \"$(uname -r)\") >/dev/null"
                                         % (APT, KERNEL_UPDATE, KERNEL_UPDATE_HEADERS)])
# The driver's modules exist for both kernels, built by DKMS.
MODULES_FOR_BOTH_KERNELS = ("exec", ["sh", "-c", "test $(ls /lib/modules/*/updates/dkms/drv_pcie_hdc_host.ko | wc -l) -eq 2"])

KERNEL_ROWS = [
    {
        "id": "KU2", "fault": "kernel upgraded after a DKMS install (not a fault: DKMS rebuilds the modules)",
        "before": [NO_KERNEL_UPDATE],
        # The upgrade as `apt upgrade` does it on Debian and Ubuntu: the image with its headers.
        "inject": [("exec", ["sh", "-c", "%s install %s %s >/dev/null" % (APT, KERNEL_UPDATE, KERNEL_UPDATE_HEADERS)])],
        "run": ("preflight", {}),
        "expect": None,
        "survive": HDK + OPERATOR_DATA,
        "remove": [MODULES_FOR_BOTH_KERNELS],
        "rerun": ("hdk", {}), "rerun_changed": 0,
    },
    {
        "id": "KU1", "fault": "kernel upgraded after a driver install without DKMS (prebuilt modules, running kernel only)",
        # The driver installed by hand on a node without dkms: Huawei's installer copies its prebuilt modules.
        "before": [NO_KERNEL_UPDATE,
                   ("exec", ["sh", "-c", "/usr/local/Ascend/driver/script/uninstall.sh >/dev/null && %s remove dkms "
                                         ">/dev/null && %s --nox11 --full --quiet --install-for-all"
                                         % (APT, STAGED_DRIVER)]),
                   ("reboot",)],
        "inject": [("exec", ["sh", "-c", "%s install %s >/dev/null" % (APT, KERNEL_UPDATE)])],
        "run": ("preflight", {}),
        "expect": {"host": HOST_NODE, "component": r"NPU kernel modules",
                   "cause": r"kernel \S+, which the next boot takes, has no NPU modules of driver 25\.0\.rc1\.1 "
                            r"\(installed without DKMS: prebuilt modules for \S+ only\)",
                   "fix": r"fix:\sreinstall the driver so that it builds through DKMS: run \S+/uninstall\.sh, reboot, "
                          r"then run the hdk role"},
        "survive": HDK + OPERATOR_DATA,
        # The fix as written: uninstall, reboot, the hdk role (dkms, gcc and both kernels' headers, then the driver).
        "remove": [("exec", ["/usr/local/Ascend/driver/script/uninstall.sh"]), ("reboot",), ("playbook", "hdk", {}),
                   MODULES_FOR_BOTH_KERNELS],
        "rerun": ("preflight", {}), "rerun_changed": 0,
    },
]

ENGINE_ROWS = [
    {
        "id": "E1", "fault": "runtime installer exits non-zero (rc=1)",
        "inject": [("fault", {"installer_exit_code": {"docker_runtime": 1}})],
        "run": ("container_runtime", {}),
        "expect": {"host": ENGINE_NODE, "component": r"docker_runtime install failed",
                   "cause": r"rc=1", "fix": r"Fix:\s(?!see the installer log)"},
        "survive": ENGINE_CONFIGS,
        "remove": [("clear",)],
        "rerun": ("container_runtime", {}),
    },
    {
        "id": "E2", "fault": "existing containerd config is invalid TOML",
        "before": [("save", "/etc/containerd/config.toml")],
        "inject": [("exec", ["sh", "-c", "printf '[plugins.\"broken\"\\nkey = \\n' >> /etc/containerd/config.toml"])],
        "run": ("container_runtime", {}),
        "expect": {"host": ENGINE_NODE, "component": r"containerd|config\.toml",
                   "cause": r"not valid TOML", "fix": r"fix:\s"},
        "survive": ENGINE_CONFIGS,
        "remove": [("restore", "/etc/containerd/config.toml")],
        "rerun": ("container_runtime", {}), "rerun_changed": 0,
    },
    {
        "id": "E3", "fault": "existing Docker daemon.json is invalid JSON",
        "before": [("save", "/etc/docker/daemon.json")],
        "inject": [("exec", ["sh", "-c", "printf '{\"live-restore\": true,,\\n' > /etc/docker/daemon.json"])],
        "run": ("container_runtime", {}),
        "expect": {"host": ENGINE_NODE, "component": r"docker|daemon\.json",
                   "cause": r"not valid JSON", "fix": r"fix:\s"},
        "survive": ENGINE_CONFIGS,
        "remove": [("restore", "/etc/docker/daemon.json")],
        "rerun": ("container_runtime", {}), "rerun_changed": 0,
    },
    {
        "id": "E4", "fault": "corrupt runtime archive whose checksum list matches",
        "before": [("playbook", "container_runtime_uninstall", {})],
        "run": ("container_runtime", {"packages_source_dir": damaged("corrupt-runtime")}),
        "expect": {"host": ENGINE_NODE, "component": r"docker_runtime package",
                   "cause": r"Error in SHA256 checksums|archive check failed",
                   "fix": r"Fix:\scopy or download the package again"},
        "survive": ENGINE_CONFIGS,
        "rerun": ("container_runtime", {}),
    },
    {
        "id": "E5", "fault": "containerd will not restart with the new config",
        "before": [("playbook", "container_runtime_uninstall", {})],
        "inject": [REFUSE_ASCEND],
        "run": ("container_runtime", {}),
        "expect": {"host": ENGINE_NODE, "component": r"containerd did not start",
                   "cause": r"ExecStartPre|control process exited|failed", "fix": r"Fix:\sread `journalctl -u containerd`"},
        # The rollback must put containerd's config back byte for byte (daemon.json was written
        # before the failed restart and is not rolled back: Docker was never restarted with it).
        "survive": ["/etc/containerd/config.toml", "/srv/models"],
        "remove": [ALLOW_ASCEND],
        "rerun": ("container_runtime", {}),
    },
]

# ---- "pre-existing runtime undone" (containerd undo, package runtime-undo) ----------------------
# A manual Huawei install before the collection arrives: its own runtimes.ascend (a copy of runc
# with the wrapper as BinaryName and a runc root of its own) and default_runtime_name = "ascend",
# written into the operator's config. site (container_runtime) then its uninstall must leave
# /etc/containerd byte for byte as it was: the entry and the default kept, no record, no backup.
MANUAL_ASCEND_SCRIPT = r"""
import re
path = "/etc/containerd/config.toml"
text = open(path).read()
cri = 'plugins."io.containerd.grpc.v1.cri".containerd'
text, defaults = re.subn(r"default_runtime_name = .*", 'default_runtime_name = "ascend"  # Ascend-docker-runtime '
                         '--install-scene=containerd, by hand', text, count=1)
table = ('        [%s.runtimes.ascend]\n'
         '          runtime_type = "io.containerd.runc.v2"\n'
         '          [%s.runtimes.ascend.options]\n'
         '            BinaryName = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"\n'
         '            Root = "/run/containerd/runc-ascend"\n'
         '            SystemdCgroup = false\n' % (cri, cri))
anchor = '        [%s.runtimes.runc]\n' % cri
if defaults != 1 or anchor not in text:
    raise SystemExit("the operator config has no default_runtime_name or runc table to edit")
open(path, "w").write(text.replace(anchor, table + anchor, 1))
"""
MANUAL_ASCEND = ("exec", ["python3", "-c", MANUAL_ASCEND_SCRIPT])
RESTART_CONTAINERD = ("exec", ["systemctl", "restart", "containerd"])

UNDO_ROWS = [
    {
        "id": "U1", "fault": "pre-existing runtime undone (manual runtimes.ascend, default ascend; site, uninstall)",
        # The role once (it installs python3-tomlkit, which the uninstall needs), then its
        # uninstall: the node as the operator had it, whatever rows ran before.
        "before": [("playbook", "container_runtime", {}), ("playbook", "container_runtime_uninstall", {}),
                   ("save", "/etc/containerd/config.toml")],
        "inject": [MANUAL_ASCEND, RESTART_CONTAINERD],
        "run": ("container_runtime_then_uninstall", {}),
        # Not a failure: both runs must succeed and leave the operator's entry as it was.
        "expect": None,
        "survive": ["/etc/containerd", "/srv/models"],
        "remove": [("restore", "/etc/containerd/config.toml"), RESTART_CONTAINERD],
        "rerun": ("container_runtime", {}),
    },
]

# Runtime config files (docs/container-runtime.md): the node lock, crash safety, symlinks.
KEEP_ORIGINAL_CONFIGS = ("exec", ["sh", "-c", "cp -p /etc/containerd/config.toml /root/flt-config.toml.orig"
                                  " && cp -p /etc/docker/daemon.json /root/flt-daemon.json.orig"])
CONFIGS_AS_ORIGINAL = ("exec", ["sh", "-c", "cmp /etc/containerd/config.toml /root/flt-config.toml.orig"
                                " && cmp /etc/docker/daemon.json /root/flt-daemon.json.orig"
                                " && test ! -e /etc/containerd/.config.toml.npu_ascend.json"
                                " && test ! -e /etc/containerd/.config.toml.npu_ascend.converged"
                                " && test ! -e /etc/docker/.daemon.json.npu_ascend.json"])
SYMLINK_CONFIG = ("exec", ["sh", "-c", "mkdir -p /etc/containerd/real"
                           " && mv /etc/containerd/config.toml /etc/containerd/real/config.toml"
                           " && ln -s real/config.toml /etc/containerd/config.toml"
                           " && cp -p /etc/containerd/real/config.toml /root/flt-real-config.toml.orig"])
SYMLINK_REGISTERED = ("exec", ["sh", "-c", "test -L /etc/containerd/config.toml"
                               " && grep -q ascend-docker-runtime /etc/containerd/real/config.toml"
                               " && test -e /etc/containerd/real/.config.toml.npu_ascend.json"])
SYMLINK_RESTORED = ("exec", ["sh", "-c", "test -L /etc/containerd/config.toml"
                             " && cmp /etc/containerd/real/config.toml /root/flt-real-config.toml.orig"
                             " && rm /etc/containerd/config.toml && mv /etc/containerd/real/config.toml /etc/containerd/config.toml"
                             # the role's backups were made beside the target, and are kept by the uninstall
                             " && ls /etc/containerd/real/config.toml.*~ && rm /etc/containerd/real/config.toml.*~"
                             " && rmdir /etc/containerd/real"])

# ---- "two runs against one node at once" (the node lock, docs/container-runtime.md) ------------
# A first run of container_runtime goes on in the background; the row's own run starts once the
# first one's runtime installer holds the node lock. The fake runtime installer lasts
# install_seconds, long enough for the row's run to reach its own installer while the first holds
# the lock (it plans an install, as the runtime is not installed when it looks).
NODE_LOCK = "/run/npu_ascend/lock"
CONCURRENT_INSTALL_SECONDS = 60
# The lock file names a holder only while one holds it (flock itself cannot be asked who).
WAIT_FOR_LOCK_HOLDER = ("exec", ["sh", "-c", "for i in $(seq 440); do grep -q '\"pid\"' %s 2>/dev/null"
                                 " && ! flock -n %s true && exit 0; sleep 0.5; done;"
                                 " echo 'nobody took the node lock within 4 minutes' >&2; exit 1" % (NODE_LOCK, NODE_LOCK)])
# When the row's run met the lock (the start of the wait, for CONCURRENT_INSTALLED_ONCE).
MARK_MEETING = ("exec", ["touch", "/root/flt-rf1-met"])
# The row's run planned its install while the first installer ran and got the lock only after it;
# ascend_runfile then decides again on what is installed and does not install the runtime a second
# time. So the runtime's install info is the first run's: written less than one install after the
# runs met (a second install after the first would end at least one whole install later).
CONCURRENT_INSTALLED_ONCE = ("exec", ["sh", "-c", "met=$(stat -c %%Y /root/flt-rf1-met)"
                                      " && done=$(stat -c %%Y %s)"
                                      " && echo \"the runtime's last install ended $((done - met)) s after the runs met"
                                      " (one install, the first run's, ends less than %d s after)\""
                                      " && test $((done - met)) -lt %d && rm /root/flt-rf1-met"
                                      % ("/usr/local/Ascend/Ascend-Docker-Runtime/ascend_docker_runtime_install.info",
                                         CONCURRENT_INSTALL_SECONDS * 3 // 2, CONCURRENT_INSTALL_SECONDS * 3 // 2)])
# Both engines have the registration, and everything else of the operator's configs is as it was:
# config.toml lost no line but its default_runtime_name; daemon.json is the operator's plus ours.
REGISTERED_AND_OPERATOR_KEPT_SCRIPT = r"""
import json, subprocess
wrapper = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"
toml = open("/etc/containerd/config.toml").read()
if 'BinaryName = "%s"' % wrapper not in toml or "runtimes.ascend]" not in toml:
    raise SystemExit("config.toml has no ascend runtime:\n" + toml)
diff = subprocess.run(["diff", "/root/flt-config.toml.orig", "/etc/containerd/config.toml"],
                      capture_output=True, text=True).stdout.splitlines()
lost = [line for line in diff if line.startswith("< ") and "default_runtime_name" not in line]
if lost:
    raise SystemExit("config.toml lost the operator's lines: %s" % lost)
daemon = json.load(open("/etc/docker/daemon.json"))
if daemon.get("runtimes", {}).pop("ascend", {}).get("path") != wrapper:
    raise SystemExit("daemon.json has no ascend runtime: %s" % daemon)
daemon.pop("default-runtime", None)
if daemon != json.load(open("/root/flt-daemon.json.orig")):
    raise SystemExit("daemon.json lost the operator's settings: %s" % daemon)
print("both engines have the ascend runtime; the operator's settings are as they were")
"""
REGISTERED_AND_OPERATOR_KEPT = ("exec", ["python3", "-c", REGISTERED_AND_OPERATOR_KEPT_SCRIPT])
DROP_ORIGINAL_CONFIGS = ("exec", ["rm", "/root/flt-config.toml.orig", "/root/flt-daemon.json.orig"])

CONCURRENT_ROWS = [
    {
        "id": "RF1", "fault": "two runs against one node at once (the second waits for the node lock)",
        "before": [("playbook", "container_runtime_uninstall", {}), KEEP_ORIGINAL_CONFIGS,
                   ("fault", {"install_seconds": CONCURRENT_INSTALL_SECONDS}),
                   ("background_playbook", "container_runtime", {}), WAIT_FOR_LOCK_HOLDER, MARK_MEETING],
        "run": ("container_runtime", {}),
        # Not a failure: the second run waits (default lock_timeout) and both succeed.
        "expect": None,
        # The engine configs are the first run's to change meanwhile; what they hold afterwards is
        # checked by REGISTERED_AND_OPERATOR_KEPT.
        "survive": ["/srv/models"],
        "remove": [("wait_background",), ("clear",), CONCURRENT_INSTALLED_ONCE, REGISTERED_AND_OPERATOR_KEPT,
                   DROP_ORIGINAL_CONFIGS],
        "rerun": ("container_runtime", {}), "rerun_changed": 0,
    },
    {
        "id": "RF1b", "fault": "two runs at once, the second with a 5 s lock timeout (it still waits for the installer)",
        "before": [("playbook", "container_runtime_uninstall", {}), KEEP_ORIGINAL_CONFIGS,
                   ("fault", {"install_seconds": CONCURRENT_INSTALL_SECONDS}),
                   ("background_playbook", "container_runtime", {}), WAIT_FOR_LOCK_HOLDER, MARK_MEETING],
        "run": ("container_runtime", {"container_runtime_lock_timeout": 5}),
        # Not a failure: the lock's holder is the runtime installer of the same package, which the second
        # run waits for beyond its lock timeout (until that installer's own deadline) and whose result it
        # returns; it starts no installer of its own. A holder that is not that installer still ends the wait
        # after lock_timeout, naming the holder (tests/unit/modules/test_ascend_runfile_node_lock.py).
        "expect": None,
        "survive": ["/srv/models"],
        "remove": [("wait_background",), ("clear",), CONCURRENT_INSTALLED_ONCE, REGISTERED_AND_OPERATOR_KEPT,
                   DROP_ORIGINAL_CONFIGS],
        "rerun": ("container_runtime", {}), "rerun_changed": 0,
    },
]

RUNTIME_FILE_ROWS = [
    {
        "id": "RF2", "fault": "the module dies between its change record and the config (crash, power loss)",
        "before": [("playbook", "container_runtime_uninstall", {}), KEEP_ORIGINAL_CONFIGS],
        "run": ("container_runtime", {"faults_module_environment": {"NPU_ASCEND_TEST_CRASH_AFTER_RECORD": "1"}}),
        # A killed module has no message of ours: Ansible's own ("Module result deserialization
        # failed", rc 137), which names neither component nor fix; the row's proof is what follows.
        "expect": {"host": ENGINE_NODE, "component": r"Module result|MODULE FAILURE",
                   "cause": r"rc.{0,6}137", "fix": r"No start of json|See stdout/stderr"},
        "survive": ENGINE_CONFIGS,
        # The uninstall right after the crash still gives every config back byte for byte.
        "remove": [("playbook", "container_runtime_uninstall", {}), CONFIGS_AS_ORIGINAL],
        "rerun": ("container_runtime", {}),
    },
    {
        "id": "RF3", "fault": "containerd's config.toml is a symlink (not a fault: it must stay one)",
        "before": [("playbook", "container_runtime_uninstall", {}), SYMLINK_CONFIG],
        "run": ("container_runtime", {}),
        # Not a failure: the run must succeed.
        "expect": None,
        # The link itself (type and target) is what must survive; its target gains the runtime.
        "survive": ["/etc/containerd/config.toml", "/srv/models"],
        "remove": [SYMLINK_REGISTERED, ("playbook", "container_runtime_uninstall", {}), SYMLINK_RESTORED],
        "rerun": ("container_runtime", {}),
    },
]
ENGINE_ROWS = ENGINE_ROWS + CONCURRENT_ROWS + RUNTIME_FILE_ROWS

K8S_ROWS = [
    {
        "id": "K1", "fault": "Kubernetes API unreachable",
        "before": [("dead_kubeconfig",)],
        "run": ("k8s_node", {"k8s_kubeconfig": str(DEAD_KUBECONFIG), "k8s_node_wait_seconds": 5}),
        "expect": {"host": ENGINE_NODE, "component": r"Kubernetes|API server|cluster",
                   "cause": r"connection refused|failed to establish|max retries|unreachable",
                   "fix": r"fix:\s.{0,200}(kubeconfig|API server|apiserver|control plane|reachable)"},
        "survive": [K8S_NODE],
        "rerun": ("k8s_node", {}), "rerun_changed": 0,
    },
    {
        "id": "K2", "fault": "the node advertises no NPUs (device plugin not publishing)",
        "inject": [("k8s_patch_status", {})],
        "run": ("validate", {"validate_k8s_timeout_seconds": 20}),
        "expect": {"host": ENGINE_NODE, "component": r"validation",
                   "cause": r"Insufficient huawei\.com/Ascend310P", "fix": r"Fix:\s.{0,80}device plugin"},
        "survive": [K8S_NODE],
        "remove": [("k8s_patch_status", {"huawei.com/Ascend310P": "2"})],
        "rerun": ("validate", {}),
    },
    {
        "id": "K3", "fault": "wrong NPU resource name (huawei.com/Ascend910 on a 310P node)",
        "run": ("validate", {"validate_k8s_resource_name": "huawei.com/Ascend910", "validate_k8s_force": True,
                             "validate_k8s_timeout_seconds": 20}),
        "expect": {"host": ENGINE_NODE, "component": r"validation",
                   "cause": r"Insufficient huawei\.com/Ascend910\b",
                   "fix": r"Fix:\s.{0,200}(validate_k8s_resource_name|resource name|advertises)"},
        "survive": [K8S_NODE],
        "rerun": ("validate", {"validate_k8s_force": True}),
    },
]


# A fleet as it is (issue "Fleets as they are"): site.yml over a healthy node and one bad node per
# row, with half the fleet allowed to fail preflight. Each row's bad node must be named with the
# stage it stopped at and the retry command, the healthy node must finish (and change nothing on the
# rerun), and the bad node must converge once the fault is gone.
FLEET_PEER = "flt-fl-01"
FLEET_SITE = ("site", {"npu_ascend_max_fail_percentage": 50})
# Installed at the fault, not started: at the node's next boot it takes sshd away, so the node
# never answers again after the reboot the driver asks for.
NO_SSH_AFTER_REBOOT = ("exec", ["sh", "-c", "printf '%s\\n' '[Unit]' 'Description=flt: no SSH after the next boot' "
                                "'[Service]' 'Type=oneshot' 'ExecStart=/bin/mv /usr/sbin/sshd /usr/sbin/sshd.flt' "
                                "'[Install]' 'WantedBy=multi-user.target' > /etc/systemd/system/flt-no-ssh.service "
                                "&& systemctl daemon-reload && systemctl enable flt-no-ssh.service"])
SSH_BACK = ("exec", ["sh", "-c", "systemctl disable flt-no-ssh.service; rm -f /etc/systemd/system/flt-no-ssh.service; "
                     "systemctl daemon-reload; [ ! -e /usr/sbin/sshd.flt ] || mv /usr/sbin/sshd.flt /usr/sbin/sshd"])

FLEET_NODES = [FLEET_PEER, "flt-fl-02", "flt-fl-03", "flt-fl-04", "flt-fl-05"]
FLEET_ROWS = [
    {
        "id": "F1", "fault": "a node unreachable from the start, among healthy ones",
        "host": "flt-fl-02",
        "inject": [("stop",)],
        "run": FLEET_SITE,
        "expect": {"host": "flt-fl-02", "component": r"stopped at connect",
                   "cause": r"unreachable|could not be sent|ssh", "fix": r"bring the node back"},
        "summary": [r"Run of 2 nodes: 1 done, 0 failed, 1 unreachable",
                    r"flt-fl-02 \(at connect", r"Retry only these nodes: ansible-playbook .* --limit flt-fl-02\b"],
        # A stopped node cannot be read before the run; it is not reached, so nothing on it changes.
        "survive": [],
        "reach": [("start",)],
        "rerun": FLEET_SITE,
    },
    {
        "id": "F2", "fault": "a node that goes away during the driver installer, among healthy ones",
        "host": "flt-fl-03",
        "inject": [("fault", {"install_seconds": 30})],
        "during": "stop_node_during_install",
        "run": FLEET_SITE,
        "expect": {"host": "flt-fl-03", "component": r"stopped at hdk.{0,200}(driver|firmware)",
                   "cause": r"unreachable|not running|no such container|connection|went away",
                   "fix": r"fix:\s"},
        "summary": [r"Run of 2 nodes: 1 done, 1 failed, 0 unreachable", r"flt-fl-03 \(at hdk",
                    r"left: firmware and driver possibly part way", r"--limit flt-fl-03\b"],
        "survive": [],
        "reach": [("start",)],
        "remove": [("clear",)],
        "rerun": FLEET_SITE,
    },
    {
        "id": "F3", "fault": "a node whose reboot after the driver never comes back, among healthy ones",
        "host": "flt-fl-04",
        "inject": [NO_SSH_AFTER_REBOOT],
        "run": ("site", {"npu_ascend_max_fail_percentage": 50, "hdk_reboot_timeout": 90}),
        "expect": {"host": "flt-fl-04", "component": r"stopped at hdk", "cause": r"timed out|reboot",
                   "fix": r"fix:\s.{0,200}(console|power|BMC)"},
        "summary": [r"Run of 2 nodes: 1 done, 1 failed, 0 unreachable", r"flt-fl-04 \(at hdk",
                    r"--limit flt-fl-04\b"],
        "survive": [],
        "remove": [SSH_BACK],
        "rerun": FLEET_SITE,
    },
    {
        "id": "F4", "fault": "a node failing preflight (an NPU gone from the PCI bus), among healthy ones",
        "host": "flt-fl-05",
        "inject": [("hide_pci", "0000:42:00.0")],
        "run": FLEET_SITE,
        "expect": {"host": "flt-fl-05", "component": r"NPU count", "cause": r"found 7, expected 8",
                   "fix": r"fix:\s.{0,80}reseat the cards"},
        "summary": [r"Run of 2 nodes: 1 done, 1 failed, 0 unreachable", r"flt-fl-05 \(at preflight",
                    r"left: untouched: preflight changes nothing", r"--limit flt-fl-05\b"],
        "survive": NOTHING_ASCEND,
        "remove": [("restore_pci", "0000:42:00.0")],
        "rerun": FLEET_SITE,
    },
]


# Static vNPUs (docs/vnpu.md) on the host lane's 910B4 node, without Kubernetes: one vNPU on NPU 0
# chip 0 (set up once), which every failed run must leave as it was.
VNPU_STATE = ["/var/lib/ascend-sandbox/vnpu.json"]
VNPU_ONE = {"vnpu_layout_per_chip": [{"npu": 0, "chip": 0, "vnpus": ["vir05_1c_8g"]}]}
VNPU_SETUP = ("playbook", "vnpu", VNPU_ONE)
VNPU_ROWS = [
    {
        "id": "V1", "fault": "a vNPU template the chip does not list (vir02 is a 310P template, the node a 910B4)",
        "run": ("vnpu", {"vnpu_layout": ["vir02"]}),
        "expect": {"host": HOST_NODE, "component": r"NPU 0 chip 0 \(910B4\)",
                   "cause": r"template vir02 is not one this chip lists in npu-smi info -t template-info",
                   "fix": r"fix:\schange vnpu_layout for this chip"},
        "survive": VNPU_STATE,
        "rerun": ("vnpu", VNPU_ONE), "rerun_changed": 0,
    },
    {
        "id": "V2", "fault": "an over-full vNPU layout (25 AI cores on a 20-core 910B4)",
        "run": ("vnpu", {"vnpu_layout": ["vir10_3c_16g", "vir10_3c_16g", "vir05_1c_8g"]}),
        "expect": {"host": HOST_NODE, "component": r"NPU 0 chip 0 \(910B4\)",
                   "cause": r"needs 25 AI cores, the chip has 20",
                   "fix": r"fix:\schange vnpu_layout for this chip"},
        "survive": VNPU_STATE,
        "rerun": ("vnpu", VNPU_ONE), "rerun_changed": 0,
    },
    {
        "id": "V3", "fault": "a vNPU in use by a container that the new layout destroys, no drain possible",
        "inject": [("fault", {"vnpu_in_use": [100]})],
        "run": ("vnpu", {"vnpu_layout": ["vir10_3c_16g"]}),
        "expect": {"host": HOST_NODE, "component": r"NPU 0 chip 0 \(910B4\)",
                   "cause": r"vir05_1c_8g id 100 vgroup \d+ \(in use by container \w+\)",
                   "fix": r"fix:\sstop the containers that use them, or let the role drain the node"},
        "survive": VNPU_STATE,
        "remove": [("clear",)],
        "rerun": ("vnpu", VNPU_ONE), "rerun_changed": 0,
    },
]


def _rows(rows):
    return [{"row": row} for row in rows]


# The NPU RoCE fabric (docs/hccn.md): the row's bad node hcn-flt-t2 beside the lane's healthy
# training node hcn-flt-t1, both cabled to one simulated fabric.
FABRIC_PEER = "hcn-flt-t1"
FABRIC_NODE = "hcn-flt-t2"
FABRIC_RUN = ("hccn", {})
# Before each row the bad node is configured on its own (its first run installs the driver).
FABRIC_READY = ("playbook", "hccn", {})
# A failed gate replaces the node's fabric record (/var/lib/npu_ascend/hccn-fabric.json) with a failed
# one, so that its Node loses the fabric label; the rerun without the fault records the pass again:
# that one file is the rerun's only change.
FABRIC_RERUN_CHANGED = 1
FABRIC_ROWS = [
    {
        "id": "N1", "fault": "an NPU's cable pulled (link down)",
        "host": FABRIC_NODE,
        "before": [FABRIC_READY],
        "inject": [("fault", {"hccn_link_down": [3]})],
        "run": FABRIC_RUN,
        "expect": {"host": FABRIC_NODE, "component": r"NPU 3: link DOWN",
                   "cause": r"cable unplugged or faulty", "fix": r"fix:\scheck the cable and the switch port"},
        "survive": ["/etc/hccn.conf"],
        "remove": [("clear",)],
        "rerun": FABRIC_RUN, "rerun_changed": FABRIC_RERUN_CHANGED,
    },
    {
        "id": "N2", "fault": "two NPUs' cables swapped",
        "host": FABRIC_NODE,
        "before": [FABRIC_READY],
        "inject": [("fault", {"hccn_swapped_cables": [[0, 1]]})],
        "run": FABRIC_RUN,
        "expect": {"host": FABRIC_NODE,
                   "component": r"NPU 0: cabled to switch port 400GE1/1/5:2, the cabling plan \(hccn_switch_ports\) says "
                                r"400GE1/1/5:1",
                   "cause": r"swapped or misplaced cable", "fix": r"fix:\smove the cable of NPU 0 to switch port 400GE1/1/5:1"},
        "survive": ["/etc/hccn.conf"],
        "remove": [("clear",)],
        "rerun": FABRIC_RUN, "rerun_changed": FABRIC_RERUN_CHANGED,
    },
    {
        "id": "N3", "fault": "an NPU's net health Fault",
        "host": FABRIC_NODE,
        "before": [FABRIC_READY],
        "inject": [("fault", {"hccn_net_health": {"5": "Fault"}})],
        "run": FABRIC_RUN,
        "expect": {"host": FABRIC_NODE, "component": r"NPU 5: net health Fault",
                   "cause": r"detect address 10\.30\.0\.1 does not answer", "fix": r"fix:\smake the detect address answer"},
        "survive": ["/etc/hccn.conf"],
        "remove": [("clear",)],
        "rerun": FABRIC_RUN, "rerun_changed": FABRIC_RERUN_CHANGED,
    },
    {
        "id": "N4", "fault": "the detect address answers nobody",
        "host": FABRIC_NODE,
        "before": [FABRIC_READY],
        "inject": [("fault", {"hccn_detect_unanswered": True})],
        "run": FABRIC_RUN,
        "expect": {"host": FABRIC_NODE, "component": r"NPU 0: net health Receive timeout",
                   "cause": r"detect address 10\.30\.0\.1 does not answer", "fix": r"hccn_detect_address"},
        "survive": ["/etc/hccn.conf"],
        "remove": [("clear",)],
        "rerun": FABRIC_RUN, "rerun_changed": FABRIC_RERUN_CHANGED,
    },
    {
        "id": "N5", "fault": "an address plan that gives a node its peer's addresses (address conflict between two nodes)",
        "host": FABRIC_NODE,
        "before": [FABRIC_READY],
        # Both nodes are given one base address; the healthy peer holds those addresses already.
        "run": ("hccn", {"hccn_base_address": "10.30.0.10"}),
        "expect": {"host": FABRIC_NODE, "component": r"NPU address plan",
                   "cause": r"NPU 0: address 10\.30\.0\.10 is also planned for hcn-flt-t1 NPU 0, which holds it now",
                   "fix": r"fix:\sgive every NPU of the fleet its own address"},
        "survive": ["/etc/hccn.conf"],
        "rerun": FABRIC_RUN, "rerun_changed": 0,
    },
]


def _ids(rows):
    return [row["id"] for row in rows]


# (lane name, node, steps): a step is a row or a set-up {"name", "actions", "for": row ids}
# that runs only when one of those rows is selected.
LANES = [
    ("host", HOST_NODE,
     [{"name": "the operator's data on the node", "actions": [PLANT_OPERATOR_DATA],
       "for": _ids(PREFLIGHT_ROWS + HDK_ROWS + CONTROLLER_ROWS + CANN_ROWS + KERNEL_ROWS)}]
     + _rows(PREFLIGHT_ROWS)
     + _rows(HDK_ROWS[:1] + CONTROLLER_ROWS)
     + [{"name": "firmware and driver installed", "actions": [("playbook", "hdk", {})],
         "for": _ids(HDK_ROWS[1:] + CANN_ROWS + KERNEL_ROWS + VNPU_ROWS)}]
     + _rows(HDK_ROWS[1:] + CANN_ROWS + KERNEL_ROWS)
     + [{"name": "one vNPU on NPU 0 chip 0", "actions": [VNPU_SETUP], "for": _ids(VNPU_ROWS)}]
     + _rows(VNPU_ROWS)),
    ("engine", ENGINE_NODE,
     [{"name": "firmware and driver, Docker, the operator's engine configs and data, the probe image",
       "actions": [("playbook", "hdk", {}), ("playbook", "operator_engines", {}), PLANT_OPERATOR_DATA,
                   ("probe_image",)],
       "for": _ids(ENGINE_ROWS + UNDO_ROWS + K8S_ROWS)}]
     + _rows(ENGINE_ROWS)
     + _rows(UNDO_ROWS)
     + [{"name": "control plane up, node labelled and tainted",
         "actions": [("controlplane_up",), ("playbook", "k8s_node", {})],
         "for": _ids(K8S_ROWS)}]
     + _rows(K8S_ROWS)),
    # The bad node hcn-flt-t2 beside the lane's healthy training node; the peer is configured first.
    ("fabric", FABRIC_PEER,
     [{"name": "the healthy training node's driver and NPU network", "actions": [FABRIC_READY],
       "for": _ids(FABRIC_ROWS)}]
     + _rows(FABRIC_ROWS)),
    # Each row names its own bad node ("host"); the lane's healthy peer runs beside it.
    ("fleet", FLEET_PEER,
     [{"name": "the probe image in every fleet node", "actions": [("probe_image", FLEET_NODES)],
       "for": _ids(FLEET_ROWS)}]
     + _rows(FLEET_ROWS)),
]
