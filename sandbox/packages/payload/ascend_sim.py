"""Shared simulation logic of the fake Huawei Ascend packages (sandbox only).

Packed into every fake ``.run`` archive, and installed by the fake driver as
``/usr/local/dcmi/ascend_sim.py`` (the stand-in for Huawei's DCMI library, which the real
``npu-smi`` and ``upgrade-tool`` use to talk to the devices).

It reads the simulated hardware (``/etc/ascend-sandbox/hardware.json``), the injected
faults (``/etc/ascend-sandbox/faults.json``) and the node-local simulated state
(``/var/lib/ascend-sandbox/``), whose formats are described in docs/development.md.
Nothing here is Huawei code: it reproduces the observable behaviour recorded in the facts
reference and the real transcripts under tests/fixtures/samples.
"""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time

HARDWARE_DIR = "/etc/ascend-sandbox"
HARDWARE_FILE = os.path.join(HARDWARE_DIR, "hardware.json")
FAULTS_FILE = os.path.join(HARDWARE_DIR, "faults.json")
STATE_DIR = "/var/lib/ascend-sandbox"
PENDING_REBOOT_FILE = os.path.join(STATE_DIR, "pending-reboot.json")
FIRMWARE_STAGED_FILE = os.path.join(STATE_DIR, "firmware-staged.json")
FIRMWARE_RUNNING_FILE = os.path.join(STATE_DIR, "firmware-running.json")
SANDBOX_LIBEXEC = "/usr/local/libexec/ascend-sandbox"
BOOTMARKER = os.path.join(SANDBOX_LIBEXEC, "bootmarker")
BOOT_HELPER = os.path.join(SANDBOX_LIBEXEC, "boot")

DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
INSTALL_INFO_FILE = "/etc/ascend_install.info"
LOG_DIR = "/var/log/ascend_seclog"
INSTALL_LOG = os.path.join(LOG_DIR, "ascend_install.log")
OPERATION_LOG = os.path.join(LOG_DIR, "operation.log")
NPU_SMI_PATH = "/usr/local/sbin/npu-smi"
# The path the Ascend Docker Runtime's base.list mounts into containers (and Huawei's container
# guides name): the driver provides npu-smi there too, here as a link to the sbin one.
NPU_SMI_LINK = "/usr/local/bin/npu-smi"
DCMI_DIR = "/usr/local/dcmi"
# hccn_tool (docs/hccn.md): <install path>/driver/tools/hccn_tool, on PATH through this link.
HCCN_TOOL_LINK = "/usr/local/bin/hccn_tool"
HCCN_CONF = "/etc/hccn.conf"
# The sandbox's name for the driver's boot step that restores /etc/hccn.conf (the real driver's is not known).
HCCN_RECOVERY_UNIT = "/etc/systemd/system/ascend-hccn-recovery.service"
HCCN_RECOVERY_WANTS = "/etc/systemd/system/multi-user.target.wants/ascend-hccn-recovery.service"


def hccn_recovery_unit(tool):
    return ("[Unit]\nDescription=Restore the NPU RoCE settings of /etc/hccn.conf (hccn_tool -cfg recovery)\n"
            "After=ascend-sandbox-boot.service\nConditionPathExists=/etc/hccn.conf\n\n"
            "[Service]\nType=oneshot\nExecStart=-%s -cfg recovery\n\n"
            "[Install]\nWantedBy=multi-user.target\n" % tool)


# What a card runs when no firmware package was ever installed on this node and
# hardware.json does not say (a plausible factory firmware of the 910B/310P generation).
FACTORY_FIRMWARE_VERSION = "7.1.0.5.220"

# The same majors as the image's boot service, used only when that service is absent
# (a bare test container): nothing may depend on the numbers, only on the node names.
DEVICE_MAJORS = {"davinci": 236, "davinci_manager": 237, "devmm_svm": 238, "hisi_hdc": 239}


# --- version ordering -------------------------------------------------------------------
# Our own small comparator: the fake must not share code with the collection's parser,
# or a bug in one would hide in both.

_PRE_RELEASE = re.compile(r"^(alpha|beta|b|t)(\d*)$")


def version_key(text):
    """Sort key for Huawei versions: numeric fields, rcN < release, alpha/bNNN < rc, SPC after."""
    fields = re.split(r"[.\-]", str(text).strip().lower().lstrip("v"))
    key = []
    for field in fields:
        if field == "":
            continue
        if field.isdigit():
            key.append((3, int(field)))
        elif field.startswith("rc") and field[2:].isdigit():
            key.append((1, int(field[2:])))
        elif field.startswith("spc") and field[3:].isdigit():
            key.append((4, int(field[3:])))
        else:
            pre = _PRE_RELEASE.match(field)
            key.append((0, int(pre.group(2) or 0)) if pre else (0, 0))
    # A missing field sorts between pre-releases and releases: 8.1.RC1.alpha002 < 8.1.RC1 < 8.1.RC1.1
    key.append((2, 0))
    return key


def version_at_least(version, minimum):
    return version_key(version) >= version_key(minimum)


# --- operating system ---------------------------------------------------------------------
# Huawei's packages support a list of systems (facts reference section 7); Huawei's deployer
# names a node's system <Name>_<version>_<arch> from /etc/os-release ID and VERSION_ID
# (/etc/debian_version on Debian). An empty version list accepts every version of that system.
OS_RELEASE_FILE = "/etc/os-release"
SUPPORTED_OS = {
    "ubuntu": ("Ubuntu", ("18.04", "20.04", "22.04", "24.04")),
    "openeuler": ("OpenEuler", ("20.03", "22.03", "24.03")),
    "centos": ("CentOS", ("7",)),
    "euleros": ("EulerOS", ("2.0",)),
    "kylin": ("Kylin", ("V10", "V11")),
    "uos": ("UOS", ("20",)),
    "bclinux": ("BCLinux", ("21.10",)),
    "ctyunos": ("CTyunOS", ()),
    "debian": ("Debian", ("10",)),
}


def os_release(path=OS_RELEASE_FILE):
    return dict((key, value.strip("\"'")) for key, value in read_key_values(path).items())


def read_first_line(path):
    try:
        with open(path) as handle:
            return handle.readline().strip()
    except (IOError, OSError):
        return ""


def unsupported_os(arch, path=OS_RELEASE_FILE):
    """The node's system as Huawei's deployer names it when it is not supported, else None."""
    fields = os_release(path)
    os_id = fields.get("ID", "").lower()
    version = fields.get("VERSION_ID", "")
    debian_version = read_first_line("/etc/debian_version") if os_id == "debian" else ""
    if debian_version[:1].isdigit():
        version = debian_version
    name, versions = SUPPORTED_OS.get(os_id, (fields.get("NAME") or os_id or "unknown", None))
    if versions is not None and (not versions or any(version == v or version.startswith(v + ".") for v in versions)):
        return None
    return "%s_%s_%s" % (name, version or "unknown", arch)


def in_compat_ranges(version, ranges_text):
    """Huawei's ``[lo,hi],[lo,hi.]`` form; a trailing dot on hi means 'this prefix and below it'."""
    for low, high in re.findall(r"\[([^,\]]+),([^\]]+)\]", ranges_text or ""):
        if high.endswith("."):
            prefix = high.rstrip(".").lower()
            text = version.lower()
            if text == prefix or text.startswith(prefix + "."):
                return True
            high = prefix
        if version_key(low) <= version_key(version) <= version_key(high):
            return True
    return False


# --- files and state ----------------------------------------------------------------------

def read_json(path, default=None):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return default


def write_json_atomic(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(temporary, path)


def read_key_values(path):
    values = {}
    try:
        with open(path) as handle:
            for line in handle:
                if "=" in line:
                    key, value = line.rstrip("\n").split("=", 1)
                    values[key.strip()] = value.strip()
    except (IOError, OSError):
        pass
    return values


def load_hardware():
    return read_json(HARDWARE_FILE, {}) or {}


def load_faults():
    return read_json(FAULTS_FILE, {}) or {}


def hardware_chips(hardware):
    """Every chip in logical order, with its NPU id and logical id added (a chip that already
    carries its logical id, as in a container's view of the node, keeps it)."""
    chips = []
    for npu in hardware.get("npus", []):
        for chip in npu.get("chips", []):
            entry = dict(chip)
            entry["npu_id"] = npu.get("npu_id", 0)
            entry.setdefault("logic_id", len(chips))
            chips.append(entry)
    return chips


def boot_marker():
    """The current boot: the image's bootmarker helper, else the start time of PID 1."""
    if os.access(BOOTMARKER, os.X_OK):
        result = subprocess.run([BOOTMARKER], stdout=subprocess.PIPE, universal_newlines=True,
                                env=dict(os.environ, LC_ALL="C"), check=False)
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    with open("/proc/1/stat") as handle:
        after_command = handle.read().rsplit(") ", 1)[1].split()
    return after_command[19]


def pending_reboot():
    """The pending-reboot record when it was made in the current boot, else None."""
    pending = read_json(PENDING_REBOOT_FILE)
    if not pending or str(pending.get("boot")) != boot_marker():
        return None
    return pending


def record_pending_reboot(component, version):
    """Remember that ``component`` waits for a reboot (the boot service clears this at boot)."""
    pending = pending_reboot() or {"boot": boot_marker(), "components": {}}
    pending.setdefault("components", {})[component] = version
    write_json_atomic(PENDING_REBOOT_FILE, pending)


def forget_pending_reboot(component):
    pending = read_json(PENDING_REBOOT_FILE)
    if not pending:
        return
    pending.get("components", {}).pop(component, None)
    if pending.get("components"):
        write_json_atomic(PENDING_REBOOT_FILE, pending)
    else:
        os.remove(PENDING_REBOOT_FILE)


def driver_reboot_pending():
    pending = pending_reboot()
    return bool(pending and "driver" in pending.get("components", {}))


def install_info():
    return read_key_values(INSTALL_INFO_FILE)


def driver_install_path():
    return install_info().get("Driver_Install_Path_Param") or DEFAULT_INSTALL_PATH


def installed_driver_version(install_path=None):
    path = os.path.join(install_path or driver_install_path(), "driver", "version.info")
    return read_key_values(path).get("Version")


def running_firmware_version(hardware=None):
    running = read_json(FIRMWARE_RUNNING_FILE)
    if running and running.get("version"):
        return running["version"]
    hardware = load_hardware() if hardware is None else hardware
    return hardware.get("firmware_version") or FACTORY_FIRMWARE_VERSION


# --- replay of a real server's bundle (sandbox/README.md, "Replaying a server") ------------
# `fleet.py up --from-bundle` puts the bundle's commands/ directory (the verbatim reads the
# collection's diagnostics bundle keeps, docs/collect.md) at REPLAY_DIR. A tool asked for a read
# there answers with the recorded stdout, stderr and exit status; a read the bundle lacks is refused
# with "not in the bundle: <argv>" on stderr and REPLAY_MISSING_EXIT. Writes (npu-smi set, hccn_tool
# -s) go to the simulator, whose state starts from what the bundle shows; after one, the reads it
# changes come from the simulator too (REPLAY_DIVERGED_FILE lists the scopes that left the bundle).
REPLAY_DIR = os.path.join(HARDWARE_DIR, "replay")
# The driver version the bundle shows ({"version": ...}): the recorded reads are the server's only while
# that driver is installed; after an upgrade or an uninstall the simulator answers every read.
REPLAY_DRIVER_FILE = os.path.join(HARDWARE_DIR, "replay-driver.json")
REPLAY_DIVERGED_FILE = os.path.join(STATE_DIR, "replay-diverged.json")
REPLAY_MISSING_EXIT = 2
_REPLAY_UNSAFE = re.compile(r"[^\x21-\x7e]|[%/\\:<>\"|?*]")


def replaying():
    """Whether this node replays a bundle: it has one, and the driver the bundle shows is still installed."""
    if not os.path.isdir(REPLAY_DIR):
        return False
    recorded = (read_json(REPLAY_DRIVER_FILE, {}) or {}).get("version")
    return recorded is None or recorded == installed_driver_version()


def replay_name(tool, args):
    """The file name (without suffix) of the record of ``tool args``: the words joined by spaces, a
    space, %, /, any of \\:<>"|?* or anything unprintable inside a word written %XX (the bundle's documented
    naming, docs/collect.md)."""
    def quote(word):
        return _REPLAY_UNSAFE.sub(lambda match: "".join("%%%02X" % byte for byte in match.group(0).encode("utf-8")),
                                  word)
    return " ".join(quote(str(word)) for word in [tool] + list(args))


def replay_answer(tool, args, directory=None):
    """(exit status, stdout bytes, stderr bytes) of the recorded read, or the refusal for a read the
    bundle lacks."""
    base = os.path.join(directory or REPLAY_DIR, replay_name(tool, args))
    try:
        with open(base + ".rc") as handle:
            status = int(handle.read().strip())
    except (IOError, OSError, ValueError):
        return (REPLAY_MISSING_EXIT, b"",
                ("not in the bundle: %s (this sandbox node replays a collected bundle, which holds no record "
                 "of this read)\n" % " ".join([tool] + [str(arg) for arg in args])).encode("utf-8"))
    outputs = []
    for suffix in (".txt", ".stderr.txt"):
        try:
            with open(base + suffix, "rb") as handle:
                outputs.append(handle.read())
        except (IOError, OSError):
            outputs.append(b"")
    return status, outputs[0], outputs[1]


def replay_text(tool, args, directory=None):
    """The recorded stdout of a read that succeeded, as text; None when absent or failed."""
    status, out, _err = replay_answer(tool, args, directory)
    return out.decode("utf-8", "replace") if status == 0 else None


def replay_diverged(scope):
    return scope in (read_json(REPLAY_DIVERGED_FILE, []) or [])


def mark_replay_diverged(scope):
    scopes = read_json(REPLAY_DIVERGED_FILE, []) or []
    if scope not in scopes:
        write_json_atomic(REPLAY_DIVERGED_FILE, sorted(scopes + [scope]))


def print_replay(answer):
    """Writes a replay answer to stdout and stderr as recorded; returns its exit status."""
    status, out, err = answer
    sys.stdout.flush()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()
    return status


# --- device nodes -----------------------------------------------------------------------

def load_driver_devices():
    """Create the device nodes as the kernel module does after a hot reset."""
    if os.access(BOOT_HELPER, os.R_OK):
        subprocess.run([sys.executable, BOOT_HELPER, "--load-driver"], stdout=subprocess.DEVNULL,
                       check=False, env=dict(os.environ, LC_ALL="C"))
        return
    chips = hardware_chips(load_hardware())
    for chip in chips:
        _mknod("/dev/davinci%d" % chip["logic_id"], DEVICE_MAJORS["davinci"], chip["logic_id"])
    for name in ("davinci_manager", "devmm_svm", "hisi_hdc"):
        _mknod("/dev/" + name, DEVICE_MAJORS[name], 0)


def unload_driver_devices():
    if os.access(BOOT_HELPER, os.R_OK):
        subprocess.run([sys.executable, BOOT_HELPER, "--unload-driver"], stdout=subprocess.DEVNULL,
                       check=False, env=dict(os.environ, LC_ALL="C"))
        return
    for name in os.listdir("/dev"):
        if name.startswith("davinci") or name in ("devmm_svm", "hisi_hdc"):
            os.remove(os.path.join("/dev", name))


def _mknod(path, major, minor):
    import stat
    if os.path.exists(path):
        os.remove(path)
    os.mknod(path, stat.S_IFCHR | 0o660, os.makedev(major, minor))
    os.chmod(path, 0o660)  # mknod applies the umask


# --- faults -----------------------------------------------------------------------------

class Faults(object):
    """The injected faults as they apply to one component's installer."""

    def __init__(self, component, data=None):
        self.component = component
        self.data = load_faults() if data is None else data

    @property
    def disk_full(self):
        return bool(self.data.get("disk_full"))

    @property
    def dkms_failure(self):
        return bool(self.data.get("driver_dkms_failure"))

    @property
    def killed_midway(self):
        return self.data.get("installer_killed_midway") == self.component

    def exit_code(self):
        codes = self.data.get("installer_exit_code") or {}
        return codes.get(self.component)

    def install_seconds(self, package):
        """How long this install lasts: the install_seconds fault (every installer alike), else the
        install_time_scale fault times the duration of Huawei's own installer the archive carries
        (huawei_install_seconds, from build.py's table), else the archive's --install-seconds."""
        value = self.data.get("install_seconds")
        if value is not None:
            return float(value)
        scale = self.data.get("install_time_scale")
        if scale is not None:
            return float(scale) * float(package.get("huawei_install_seconds", 0))
        return float(package.get("install_seconds", 0))

    def kill_now(self):
        # SIGKILL, like the OOM killer or a lost SSH session taking the installer down:
        # no cleanup, no message, files left as they are.
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


# --- console, logs and installed files ----------------------------------------------------

class Console(object):
    """Prints installer lines with the component's real prefix and appends them to the log.

    ``style`` "hdk" gives ``[Driver] [2025-07-17 10:35:21] [INFO]text``;
    "cann" gives ``[Toolkit] [20250612-15:02:08] [INFO] text``.
    """

    def __init__(self, name, style, log_enabled=True):
        self.name = name
        self.style = style
        self.log_enabled = log_enabled

    def timestamp(self):
        if self.style == "cann":
            return time.strftime("%Y%m%d-%H:%M:%S")
        return time.strftime("%Y-%m-%d %H:%M:%S")

    def format(self, level, text):
        separator = " " if self.style == "cann" else ""
        return "[%s] [%s] [%s]%s%s" % (self.name, self.timestamp(), level, separator, text)

    def line(self, level, text, to_log=True):
        formatted = self.format(level, text)
        print(formatted, flush=True)
        if to_log:
            self.log(formatted)

    def info(self, text):
        self.line("INFO", text)

    def warning(self, text):
        self.line("WARNING", text)

    def error(self, text):
        self.line("ERROR", text)

    def log(self, formatted, operation=False):
        if not self.log_enabled:
            return
        try:
            os.makedirs(LOG_DIR, mode=0o750, exist_ok=True)
            with open(OPERATION_LOG if operation else INSTALL_LOG, "a") as handle:
                handle.write(formatted + "\n")
        except (IOError, OSError):
            pass

    def operation(self, text):
        self.log(self.format("INFO", text), operation=True)


class Recorder(object):
    """Writes an installation's files and remembers them, so that uninstall removes exactly them."""

    def __init__(self, faults, manifest_path):
        self.faults = faults
        self.manifest_path = manifest_path
        self.paths = []

    def _check_space(self):
        if self.faults.disk_full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def _remember(self, path):
        if path not in self.paths:
            self.paths.append(path)

    def mkdir(self, path, mode=0o755):
        missing = []
        current = path
        while current and not os.path.isdir(current):
            missing.append(current)
            current = os.path.dirname(current)
        for directory in reversed(missing):
            self._check_space()
            os.mkdir(directory, mode)
            os.chmod(directory, mode)
            self._remember(directory)

    def write(self, path, content, mode=0o644):
        self.mkdir(os.path.dirname(path))
        self._check_space()
        with open(path, "w") as handle:
            handle.write(content)
        os.chmod(path, mode)
        self._remember(path)

    def copy(self, source, path, mode=0o755):
        with open(source) as handle:
            self.write(path, handle.read(), mode)

    def symlink(self, target, path):
        self.mkdir(os.path.dirname(path))
        if os.path.islink(path) or os.path.exists(path):
            os.remove(path)
        os.symlink(target, path)
        self._remember(path)

    def save(self):
        self.write(self.manifest_path, "\n".join(self.paths + [self.manifest_path]) + "\n")


def remove_recorded(manifest_path, stop_at):
    """Removes what a Recorder wrote (files first, then directories left empty)."""
    try:
        with open(manifest_path) as handle:
            paths = [line.strip() for line in handle if line.strip()]
    except (IOError, OSError):
        return False
    for path in sorted(paths, key=len, reverse=True):
        if os.path.islink(path) or os.path.isfile(path):
            os.remove(path)
        elif os.path.isdir(path):
            try:
                os.rmdir(path)
            except OSError:
                pass
    prune_empty_parents(os.path.dirname(manifest_path), stop_at)
    return True


def remove_tree(path):
    import shutil
    if os.path.islink(path) or os.path.isfile(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def prune_empty_parents(path, stop_at):
    """Removes ``path`` and its parents while empty, up to and including ``stop_at``."""
    stop_at = os.path.abspath(stop_at)
    current = os.path.abspath(path)
    while current.startswith(stop_at):
        if os.path.isdir(current):
            try:
                os.rmdir(current)
            except OSError:
                break
        if current == stop_at:
            break
        current = os.path.dirname(current)


def update_install_info(updates, removals=()):
    """Rewrites /etc/ascend_install.info keeping other components' keys and their order."""
    lines = []
    seen = set()
    try:
        with open(INSTALL_INFO_FILE) as handle:
            for line in handle:
                key = line.split("=", 1)[0].strip()
                if key in removals:
                    continue
                if key in updates:
                    line = "%s=%s\n" % (key, updates[key])
                    seen.add(key)
                lines.append(line)
    except (IOError, OSError):
        pass
    for key, value in updates.items():
        if key not in seen:
            lines.append("%s=%s\n" % (key, value))
    keys_left = [line for line in lines if line.split("=", 1)[0].strip() not in ("UserName", "UserGroup")]
    if not keys_left:
        if os.path.exists(INSTALL_INFO_FILE):
            os.remove(INSTALL_INFO_FILE)
        return
    with open(INSTALL_INFO_FILE + ".tmp", "w") as handle:
        handle.writelines(lines)
    os.chmod(INSTALL_INFO_FILE + ".tmp", 0o644)
    os.replace(INSTALL_INFO_FILE + ".tmp", INSTALL_INFO_FILE)
