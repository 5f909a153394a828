"""The simulated Ascend fleet: node image, per-node fake hardware, podman containers.

Usable as a CLI (`python3 sandbox/fleet.py --help`) and as a library
(`from sandbox.fleet import Fleet, NodeSpec`, or loaded by path) by molecule and pytest.
Needs only the standard library and PyYAML.
"""
import argparse
import contextlib
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SANDBOX_DIR = REPO_ROOT / "sandbox"
IMAGE_RECIPE_DIR = SANDBOX_DIR / "image"
PODMAN_WRAPPER = SANDBOX_DIR / "podman.sh"
PACKAGE_BUILDER = SANDBOX_DIR / "packages" / "build.py"
STATE_ROOT = REPO_ROOT / ".cache" / "sandbox"
NODES_STATE_DIR = STATE_ROOT / "nodes"
# One directory per fabric (host variable sandbox_fabric): the NPU RoCE network its nodes share
# (docs/development.md, "The NPU fabric").
FABRICS_DIR = STATE_ROOT / "fabrics"
FABRIC_MOUNT = "/var/lib/ascend-sandbox-fabric"
PACKAGES_OUT_DIR = STATE_ROOT / "packages"
# The key Ansible logs in to every node with (inventories' ansible_ssh_private_key_file); its
# public half is each node's authorized_keys of the operator's sudo user (LOGIN_USER, whom
# every sandbox inventory logs in as) and of root (only bench's "no become" lever logs in as root).
SSH_KEY = STATE_ROOT / "ssh" / "id_ed25519"
SSH_PUBLIC_KEY = STATE_ROOT / "ssh" / "id_ed25519.pub"
# Made by sandbox/image/customize.sh, with ~/.ssh owned by it (sshd's StrictModes).
LOGIN_USER = "ops"
AUTHORIZED_KEYS_FILES = ("/home/%s/.ssh/authorized_keys" % LOGIN_USER, "/root/.ssh/authorized_keys")
DEFAULT_INVENTORY = REPO_ROOT / "inventories" / "sandbox"
ROOTFS_CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "npu-ascend"

NODE_GROUP = "sandbox_nodes"
IMAGE_REPOSITORY = "localhost/npu-ascend-node"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
LABEL_PREFIX = "npu-ascend.sandbox"

# The operating systems a node can present (host var sandbox_os; absent: the base image of
# sandbox/image/). Each is a recipe directory applied on top of the base recipe: packages.txt
# (more Debian packages for debootstrap), rootfs/ (overlay), customize.sh (run in the chroot
# after the base one, with the recipe's other files in /var/tmp/sandbox-recipe). A recipe with
# a `repository` leaves a package repository in the root at `built_at`, which is moved out of the
# image into the cache and mounted read-only at `mount_at` in every node of that OS: the
# controller serving the node's only repository.
NODE_OSES = {
    "openeuler-22.03": {
        "recipe": SANDBOX_DIR / "image-openeuler",
        "image_repository": IMAGE_REPOSITORY + "-openeuler",
        "repository": {"built_at": "srv/sandbox-repository",
                       "mount_at": "/srv/openEuler-22.03-LTS/OS/%s"},
    },
}

# What /proc/cpuinfo shows for each core of a Kunpeng 920, the host CPU of Huawei's aarch64
# Atlas servers (TaiShan v110 cores: implementer 0x48 HiSilicon, part 0xd01, as the kernel's
# arch/arm64/include/asm/cputype.h names them; the lines as a TaiShan 2280 prints them,
# https://github.com/hrw/arm-socs-table/issues/86). Under qemu user emulation a process reads
# the host's x86_64 file instead (qemu 7.2 fakes it for no arm target), which lacks "CPU
# architecture", and containerd, which takes arm64's platform variant from that line, then
# fails to import any image ("failure getting variant").
KUNPENG_920_CPUINFO_CORE = (
    "processor\t: {index}\n"
    "BogoMIPS\t: 200.00\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm\n"
    "CPU implementer\t: 0x48\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x1\n"
    "CPU part\t: 0xd01\n"
    "CPU revision\t: 0\n"
    "\n"
)

# uname -m of the node -> Debian and OCI spellings; for a foreign architecture, the CPU whose
# /proc/cpuinfo the node is given, and what debootstrap adds for that architecture only: its
# probe image is made from the node's own busybox (the host's is x86_64, and a Kunpeng server
# runs no x86_64 binary).
ARCHITECTURES = {
    "x86_64": {"debian": "amd64", "oci": "amd64", "binfmt": None, "cpu": None, "extra_packages": []},
    "aarch64": {"debian": "arm64", "oci": "arm64", "binfmt": "qemu-aarch64",
                "cpu": {"model": "Kunpeng 920", "cpuinfo_core": KUNPENG_920_CPUINFO_CORE},
                "extra_packages": ["busybox-static"]},
}

HUAWEI_PCI_VENDOR = "0x19e5"
PROCESSING_ACCELERATOR_CLASS = "0x120000"

# An A3's 16 dies in Phy-ID order: chip 0 of NPU n at bus 0x9D - 4n, chip 1 at +2.
A3_BUS_IDS = ["0000:%02x:00.0" % (0x9D - 4 * npu + 2 * die) for npu in range(8) for die in range(2)]
# The largest server index of a SuperPoD (Atlas 900 A3 SuperPoD: 48 servers; hccn_tool's
# A3_SUPERPOD_MAX_NUMS) and the NPUs of one server: Super Pod Size counts NPUs (384 = 48 x 8).
A3_SUPERPOD_MAX_SERVERS = 48

# What each simulated server looks like on the PCI bus and in npu-smi. Bus ids are listed in
# the order of NPU ids, as a real server's `npu-smi info` shows them.
PRODUCTS = {
    "Atlas 800I A2": {
        "chip_family": "910b",
        "default_chip_name": "910B4",
        "pci_device": "d802",
        "subsystem_vendor": HUAWEI_PCI_VENDOR,
        "subsystem_device": "0x3002",
        "revision": "0x20",
        "chips_per_npu": 1,
        "board_id": "0x33",
        "bus_ids": ["0000:c1:00.0", "0000:c2:00.0", "0000:81:00.0", "0000:82:00.0",
                    "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"],
        "power_w": 87.2,
        "temp_c": 33,
        "hbm_total_mb": 32768,
        "memory_total_mb": 0,
        "hot_reset": False,
    },
    # A training server: 910B chips with a RoCE port per NPU (hccn_tool, docs/hccn.md). Its PCI
    # subsystem id and board id are not in Huawei's public sources: the subsystem id is a
    # placeholder no product table knows (the collection shows the product as unknown), the board
    # id is left unknown as on the Duo.
    "Atlas 800T A2": {
        "chip_family": "910b",
        "default_chip_name": "910B3",
        "pci_device": "d802",
        "subsystem_vendor": HUAWEI_PCI_VENDOR,
        "subsystem_device": "0x3000",
        "revision": "0x20",
        "chips_per_npu": 1,
        "board_id": None,
        "bus_ids": ["0000:c1:00.0", "0000:c2:00.0", "0000:81:00.0", "0000:82:00.0",
                    "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"],
        "power_w": 93.5,
        "temp_c": 35,
        "hbm_total_mb": 65536,
        "memory_total_mb": 0,
        "hot_reset": False,
        "roce": True,
    },
    # Atlas A3 (Ascend 910C, Huawei's "910_93"): 8 NPUs of 2 dies each, every die its own PCI
    # function 19e5:d803 (rev 20), /dev/davinciN, 64 GB of HBM and RoCE port, npu-smi's Phy-ID
    # = 2 x NPU + die (facts: docs/huawei-sources.md, "Atlas A3"). Bus ids: chip 0 of NPU n at
    # 0x9D - 4n, chip 1 two above, as on every Kunpeng-host A3 captured. Subsystem ids: Huawei's
    # deployer knows 0x19e5/0x0100 and 0x3003 as "Atlas 800I A3" and 0x3000-0x3002 as "Atlas 900
    # A3 Pod"; no public source names the Atlas 800T A3's, so it takes 0x3001 (a Pod server's id,
    # also seen in a third-party board output: our choice). Board and main board ids from
    # MindCluster and the driver's hccn_tool source: 0xb3 / 0x14 for the 800I A3; the 800T A3's
    # are not public (its main board becomes 0x18, the Atlas 900 A3 SuperPoD's, when the node is a
    # SuperPoD member, sandbox_super_pod). npu_name (npu-smi's `NPU Name`, the 93xx of the SoC
    # name Ascend910_93xx): which SKU is which product is not public; 9392 (Huawei's own example)
    # and 9362 (seen on an A3 pod) are our choice.
    "Atlas 800T A3": {
        "chip_family": "A3",
        "default_chip_name": "Ascend910",
        "npu_name": "9392",
        "pci_device": "d803",
        "subsystem_vendor": HUAWEI_PCI_VENDOR,
        "subsystem_device": "0x3001",
        "revision": "0x20",
        "chips_per_npu": 2,
        "board_id": None,
        "main_board_id": None,
        "super_pod_main_board_id": "0x18",
        "bus_ids": A3_BUS_IDS,
        "power_w": 178.7,
        "temp_c": 37,
        "hbm_total_mb": 65536,
        "memory_total_mb": 0,
        "hot_reset": False,
        "roce": True,
    },
    "Atlas 800I A3": {
        "chip_family": "A3",
        "default_chip_name": "Ascend910",
        "npu_name": "9362",
        "pci_device": "d803",
        "subsystem_vendor": HUAWEI_PCI_VENDOR,
        "subsystem_device": "0x3003",
        "revision": "0x20",
        "chips_per_npu": 2,
        "board_id": "0xb3",
        "main_board_id": "0x14",
        "super_pod_main_board_id": "0x14",
        "bus_ids": A3_BUS_IDS,
        "power_w": 182.0,
        "temp_c": 36,
        "hbm_total_mb": 65536,
        "memory_total_mb": 0,
        "hot_reset": False,
        "roce": True,
    },
    "Atlas 300I Duo": {
        "chip_family": "310p",
        "default_chip_name": "310P3",
        "pci_device": "d500",
        # Huawei's deployer identifies 300I Pro (0x0100) and Duo (0x0110) cards by subsystem vendor
        # 0x0200, not Huawei's 0x19e5 (docs/development.md, "PCI ids").
        "subsystem_vendor": "0x0200",
        "subsystem_device": "0x0110",
        "revision": "0x23",
        "chips_per_npu": 2,
        # Not known from a real card: npu-smi shows it as unknown.
        "board_id": None,
        # one card = two chips; a second and third card sit behind other root ports
        "bus_ids": ["0000:01:00.0", "0000:06:00.0", "0000:81:00.0", "0000:86:00.0",
                    "0000:c1:00.0", "0000:c6:00.0"],
        "power_w": None,
        "temp_c": 54,
        "hbm_total_mb": 0,
        "memory_total_mb": 44213,
        "hot_reset": False,
    },
}

# Documented in docs/development.md; a key outside this list is written anyway (the fake
# packages may learn new faults first) but gets a warning, to catch typos.
KNOWN_FAULTS = {
    "driver_dkms_failure", "installer_killed_midway", "disk_full", "no_kernel_headers",
    "unhealthy_chips", "npu_smi_error", "installer_exit_code", "install_seconds",
    "install_time_scale",
    # The NPU fabric (hccn_tool): NPU ids whose link is down, pairs of NPUs whose cables are swapped,
    # {npu: status} net health shown whatever else holds, and a detect address that never answers.
    "hccn_link_down", "hccn_swapped_cables", "hccn_net_health", "hccn_detect_unanswered",
    # An A3's dies (Phy-IDs) whose HCCS link to the SuperPoD is down: their vNIC link reads DOWN and
    # their HCCS pings are lost.
    "hccn_hccs_link_down",
}

# A tiny image (static busybox) the nodes' engines start containers from, to check that the
# Ascend runtime hands a container its NPUs (the node cannot pull images: no registry).
PROBE_IMAGE = "localhost/npu-ascend-probe:1"
PROBE_IMAGE_APPLETS = ("sh", "ls", "cat", "sleep", "env")
# The probe image plus Python and its standard library, taken from the node image: the image of
# the workloads that run npu-smi, which the Ascend runtime mounts into the container. Huawei's
# npu-smi is a binary that runs in any image (the validate role's default is ubuntu); the
# sandbox's is a Python script, so the image it runs in needs Python.
WORKLOAD_IMAGE = "localhost/npu-ascend-workload:1"
CONTAINER_IMAGES = {"probe": PROBE_IMAGE, "workload": WORKLOAD_IMAGE}
# Run in a container of the node image, writes a tar of Python, its standard library and the
# shared libraries they load to stdout (the lines of `ldd` that name a file: "x => /path (...)"
# and the loader's "/path (...)").
PYTHON_EXPORT_SCRIPT = r"""
set -eu
python=$(readlink -f /usr/bin/python3)
stdlib=/usr/lib/$(basename "$python")
root=$(mktemp -d)
libraries=$({ ldd "$python"; find "$stdlib/lib-dynload" -name '*.so' -exec ldd {} +; } \
  | awk '$2 == "=>" && $3 ~ /^\// {print $3} NF == 2 && $1 ~ /^\// {print $1}' | sort -u)
cp -L --parents $libraries "$python" "$root"
cp -a --parents "$stdlib" "$root"
rm -rf "$root$stdlib/test" "$root$stdlib/idlelib" "$root$stdlib/ensurepip" "$root$stdlib/lib2to3" \
  "$root$stdlib/tkinter" "$root$stdlib/pydoc_data" "$root$stdlib/config-"*
ln -s "$(basename "$python")" "$root/usr/bin/python3"
tar -C "$root" --numeric-owner -c .
"""
BUSYBOX = Path("/bin/busybox")
# Where busybox-static (ARCHITECTURES' extra_packages) puts it in a foreign node's image.
NODE_IMAGE_BUSYBOX = "/bin/busybox"

# Components whose package file names carry the chip (facts reference, section 1).
CHIP_SPECIFIC_COMPONENTS = {"driver", "firmware", "kernels", "ops"}

BOOT_TIMEOUT_SECONDS = 180
# A node of a foreign architecture runs under qemu user emulation: its systemd took more than
# 12 minutes (4 x the boot timeout) to reach `running` with the host's load average at 35.
EMULATION_SLOWDOWN = 8
COMMAND_ENV = dict(os.environ, LC_ALL="C")


class SandboxError(Exception):
    """A failure the user can act on: the message names the host, the cause and the fix."""


def log(message):
    print("fleet: " + message, file=sys.stderr, flush=True)


def run(argv, check=True, capture=True, input=None, **kwargs):
    return subprocess.run(
        [str(part) for part in argv], check=check, input=input, env=COMMAND_ENV,
        stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE if capture else None,
        universal_newlines=True, **kwargs)


def require_tool(tool, why):
    if shutil.which(tool) is None:
        raise SandboxError("%s is not installed on this host (%s); run `make deps`" % (tool, why))


def podman(*args, check=True, capture=True, input=None):
    require_tool("podman", "it runs the sandbox nodes")
    result = run([PODMAN_WRAPPER] + list(args), check=False, capture=capture, input=input)
    if check and result.returncode != 0:
        raise SandboxError("podman %s failed (exit %d): %s" % (
            " ".join(str(a) for a in args[:3]), result.returncode, (result.stderr or "").strip()))
    return result


def atomic_write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=str(path.parent), prefix="." + path.name + ".")
    with os.fdopen(handle, "w") as stream:
        stream.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, str(path))


def tree_digest(root, digest):
    """Feeds every file under root (path, kind, content or link target) into digest.

    Only what git records counts (not directory modes or the umask), so that every checkout of
    one commit gets the same hash.
    """
    for path in sorted(Path(root).rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            kind, payload = "link", os.readlink(str(path)).encode()
        elif path.is_file():
            kind = "exec" if os.access(str(path), os.X_OK) else "file"
            payload = path.read_bytes()
        else:
            continue
        digest.update(("%s\0%s\0%d\0" % (relative, kind, len(payload))).encode())
        digest.update(payload)


# ---------------------------------------------------------------------------------------------
# Node image


def check_node_os(node_os, host=None):
    if node_os is not None and node_os not in NODE_OSES:
        raise SandboxError("%sunknown sandbox_os %r; use one of %s, or leave it out for the base image"
                           % ("%s: " % host if host else "", node_os, ", ".join(sorted(NODE_OSES))))


def read_package_list(path):
    lines = Path(path).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def base_rootfs_packages(node_os=None, arch="x86_64"):
    packages = read_package_list(IMAGE_RECIPE_DIR / "packages.txt")
    if node_os is not None:
        packages += read_package_list(NODE_OSES[node_os]["recipe"] / "packages.txt")
    return packages + ARCHITECTURES[arch]["extra_packages"]


def base_rootfs_hash(arch, node_os=None):
    # Only what debootstrap sees: editing the overlay must not cost a new debootstrap.
    digest = hashlib.sha256()
    digest.update(("%s %s %s %s\n" % (DEBIAN_SUITE, DEBIAN_MIRROR, arch,
                                      ",".join(base_rootfs_packages(node_os, arch)))).encode())
    return digest.hexdigest()[:12]


def image_hash(arch, node_os=None):
    digest = hashlib.sha256()
    digest.update(("arch=%s\n" % arch).encode())
    tree_digest(IMAGE_RECIPE_DIR, digest)
    if node_os is not None:
        digest.update(("os=%s\n" % node_os).encode())
        tree_digest(NODE_OSES[node_os]["recipe"], digest)
    return digest.hexdigest()[:12]


def image_repository(node_os=None):
    return NODE_OSES[node_os]["image_repository"] if node_os else IMAGE_REPOSITORY


def image_name(arch, node_os=None):
    return "%s:%s" % (image_repository(node_os), image_hash(arch, node_os))


def package_repository_dir(arch, node_os):
    """Where the cache keeps the package repository of an OS's image (None: the OS has none)."""
    if node_os is None or "repository" not in NODE_OSES[node_os]:
        return None
    return ROOTFS_CACHE_DIR / ("repository-%s-%s-%s" % (node_os, image_hash(arch, node_os), arch))


# Under qemu user emulation (qemu 7.2, Debian 12's) the node's own runc and runc shim cannot start
# a container: qemu answers the shim's prctl(PR_SET_CHILD_SUBREAPER) and runc's clone() with
# namespace flags with EINVAL. A node of a foreign architecture therefore gets the host's build of
# both (tests/containerd/build.sh), copied where its containerd and the Ascend runtime's runc
# lookup find them first. Copied, not bind-mounted: runc protects its own binary with an overlay
# of the binary's directory, in which a file mounted over shows as its empty mount point. The
# containers' own processes stay the node's architecture.
NATIVE_CONTAINER_RUNTIME = {"SHIM_RUNC_V2": "/usr/local/bin/containerd-shim-runc-v2",
                            "RUNC": "/usr/local/sbin/runc"}
CONTAINERD_BUILD = REPO_ROOT / "tests" / "containerd" / "build.sh"


def native_container_runtime_files(arch):
    """[(host path, node path)] of the host's runc and runc shim an emulated node runs."""
    if arch == os.uname().machine:
        return []
    paths = dict(line.split("=", 1) for line in run(["bash", CONTAINERD_BUILD, "--paths"]).stdout.split())
    # The shim comes with a containerd build; both are cached after the first one.
    built = run(["bash", CONTAINERD_BUILD, paths["SHIM_RUNC_V2_VERSION"], "runc"], check=False)
    if built.returncode != 0:
        raise SandboxError("could not build the native runc and runc shim an emulated %s node needs: %s"
                           % (arch, (built.stderr or built.stdout).strip()[-2000:]))
    return [(paths[name], target) for name, target in sorted(NATIVE_CONTAINER_RUNTIME.items())]


def check_arch(arch, host=None):
    if arch not in ARCHITECTURES:
        raise SandboxError("%sunknown architecture %r; use one of %s" % (
            "%s: " % host if host else "", arch, ", ".join(sorted(ARCHITECTURES))))
    binfmt = ARCHITECTURES[arch]["binfmt"]
    if binfmt and os.uname().machine != arch and not Path("/proc/sys/fs/binfmt_misc", binfmt).exists():
        raise SandboxError(
            "%snodes of architecture %s need qemu user emulation, which is not enabled on this host; "
            "run `python3 sandbox/fleet.py enable-foreign-arch` (it changes the host's binfmt_misc "
            "registry, so it is opt-in)" % ("%s: " % host if host else "", arch))


def unmount_below(directory):
    prefix = str(directory).rstrip("/") + "/"
    with open("/proc/mounts") as mounts:
        targets = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
    for target in sorted(targets, key=len, reverse=True):
        run(["umount", "--lazy", target], check=False)


def build_base_rootfs(arch, node_os=None):
    """Returns the cached debootstrap tarball for arch (and OS), making it when missing."""
    tarball = ROOTFS_CACHE_DIR / ("rootfs-%s-%s.tar" % (base_rootfs_hash(arch, node_os), arch))
    if tarball.exists():
        log("reusing debootstrap result %s" % tarball)
        return tarball
    require_tool("debootstrap", "it makes the node image")
    ROOTFS_CACHE_DIR.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=str(ROOTFS_CACHE_DIR), prefix="debootstrap-") as work:
        root = Path(work) / "root"
        argv = ["debootstrap", "--variant=minbase", "--arch=" + ARCHITECTURES[arch]["debian"],
                "--include=" + ",".join(base_rootfs_packages(node_os, arch)), DEBIAN_SUITE, root, DEBIAN_MIRROR]
        log("debootstrap %s (%s), a few minutes: %s" % (DEBIAN_SUITE, arch, " ".join(str(a) for a in argv)))
        try:
            result = run(argv, check=False)
        finally:
            # A debootstrap that dies midway leaves /proc and /sys mounted in the target; removing
            # the directory would then walk into the host's /proc.
            unmount_below(root)
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
            raise SandboxError("debootstrap of the %s node image failed (exit %d); check that %s is "
                               "reachable and the names in sandbox/image/packages.txt exist:\n%s"
                               % (arch, result.returncode, DEBIAN_MIRROR, tail))
        partial = Path(work) / "rootfs.tar"
        run(["tar", "--numeric-owner", "--xattrs", "-C", root, "-cf", partial, "."])
        os.replace(str(partial), str(tarball))
    log("debootstrap done in %.0f s, cached as %s" % (time.monotonic() - started, tarball))
    return tarball


def image_exists(name):
    return podman("image", "exists", name, check=False).returncode == 0


def image_complete(arch, node_os, name):
    repository = package_repository_dir(arch, node_os)
    return image_exists(name) and (repository is None or (repository / "repodata" / "repomd.xml").exists())


def build_image(arch="x86_64", node_os=None):
    """Builds localhost/npu-ascend-node[-<os>]:<recipe hash> unless it exists; returns its name."""
    check_arch(arch)
    check_node_os(node_os)
    name = image_name(arch, node_os)
    if image_complete(arch, node_os, name):
        log("image %s is up to date" % name)
        return name
    ROOTFS_CACHE_DIR.mkdir(parents=True, exist_ok=True)
    # Several test sessions may start at once; one builds, the others wait and reuse it.
    lock_name = "build-%s%s.lock" % (arch, "-" + node_os if node_os else "")
    with open(str(ROOTFS_CACHE_DIR / lock_name), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("waiting for another build of the %s node image" % (node_os or arch))
            fcntl.flock(lock, fcntl.LOCK_EX)
        if image_complete(arch, node_os, name):
            log("image %s is up to date" % name)
            return name
        return build_image_locked(arch, name, node_os)


def run_customize(root, script, what):
    with open(str(script)) as stream:
        result = subprocess.run(["chroot", str(root), "/bin/sh", "-s"], stdin=stream, env=COMMAND_ENV, check=False,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if result.returncode != 0:
        raise SandboxError("%s failed in the %s image (exit %d); fix the recipe:\n%s"
                           % (script.relative_to(REPO_ROOT), what, result.returncode, result.stdout.strip()))


def apply_os_recipe(root, arch, node_os):
    """The OS recipe on top of the customized base root; moves its package repository to the cache."""
    recipe = NODE_OSES[node_os]["recipe"]
    run(["cp", "-a", "--no-preserve=ownership", "--remove-destination", str(recipe / "rootfs") + "/.", root])
    staged = Path(root) / "var" / "tmp" / "sandbox-recipe"
    staged.mkdir(parents=True)
    for path in recipe.iterdir():
        if path.is_file():
            shutil.copy2(str(path), str(staged / path.name))
    run_customize(root, recipe / "customize.sh", "%s %s" % (node_os, arch))
    repository = package_repository_dir(arch, node_os)
    if repository is None:
        return
    built = Path(root) / NODE_OSES[node_os]["repository"]["built_at"]
    if not (built / "repodata" / "repomd.xml").exists():
        raise SandboxError("%s/customize.sh left no package repository at /%s; fix the recipe"
                           % (recipe.relative_to(REPO_ROOT), NODE_OSES[node_os]["repository"]["built_at"]))
    partial = repository.with_name(repository.name + ".partial")
    shutil.rmtree(str(partial), ignore_errors=True)
    shutil.move(str(built), str(partial))
    shutil.rmtree(str(repository), ignore_errors=True)
    os.replace(str(partial), str(repository))
    log("package repository of the %s image: %s" % (node_os, repository))


def build_image_locked(arch, name, node_os=None):
    started = time.monotonic()
    tarball = build_base_rootfs(arch, node_os)
    with tempfile.TemporaryDirectory(dir=str(ROOTFS_CACHE_DIR), prefix="image-") as work:
        root = Path(work) / "root"
        root.mkdir()
        run(["tar", "--numeric-owner", "--xattrs", "-C", root, "-xpf", tarball])
        overlay = IMAGE_RECIPE_DIR / "rootfs"
        run(["cp", "-a", "--no-preserve=ownership", str(overlay) + "/.", root])
        run_customize(root, IMAGE_RECIPE_DIR / "customize.sh", arch)
        if node_os is not None:
            apply_os_recipe(root, arch, node_os)
        tar = subprocess.Popen(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-c", "."],
                               stdout=subprocess.PIPE, env=COMMAND_ENV)
        importer = subprocess.run(
            [str(PODMAN_WRAPPER), "import", "--arch", ARCHITECTURES[arch]["oci"],
             "--change", "CMD=/sbin/init", "--change", "STOPSIGNAL=SIGRTMIN+3",
             "--change", "LABEL=%s.recipe=%s" % (LABEL_PREFIX, image_hash(arch, node_os)),
             "--message", "npu.ascend sandbox node (%s%s)" % (arch, ", " + node_os if node_os else ""), "-", name],
            stdin=tar.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
            env=COMMAND_ENV, check=False)
        tar.stdout.close()
        tar.wait()
        if importer.returncode != 0 or tar.returncode != 0:
            raise SandboxError("podman import of %s failed: %s" % (name, importer.stderr.strip()))
    log("image %s built in %.0f s" % (name, time.monotonic() - started))
    remove_superseded_images(arch, name, node_os)
    return name


def remove_superseded_images(arch, current, node_os=None):
    """Drops node images of older recipes for arch; podman keeps those a container still uses."""
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", "--filter",
                    "reference=%s" % image_repository(node_os), check=False).stdout.split()
    for name in listed:
        if name == current:
            continue
        image_arch = podman("image", "inspect", "--format", "{{.Architecture}}", name, check=False).stdout.strip()
        if image_arch != ARCHITECTURES[arch]["oci"]:
            continue
        if podman("rmi", name, check=False).returncode == 0:
            log("removed superseded image %s" % name)
            # No node runs that image any more, so none mounts its package repository.
            if package_repository_dir(arch, node_os) is not None:
                old_hash = name.rsplit(":", 1)[1]
                shutil.rmtree(str(ROOTFS_CACHE_DIR / ("repository-%s-%s-%s" % (node_os, old_hash, arch))),
                              ignore_errors=True)
        else:
            log("kept superseded image %s: a node still uses it (`fleet.py up --recreate` moves it on)" % name)


BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
BINFMT_AARCH64 = BINFMT_DIR / "qemu-aarch64"


def _binfmt_entry(path):
    """The fields of a binfmt_misc entry file (interpreter, flags, offset, magic, mask)."""
    fields = {}
    for line in path.read_text().splitlines():
        key, value = (line.split(" ", 1) + [""])[:2]
        fields[key.rstrip(":")] = value.strip()
    return fields


def _binfmt_with_credentials():
    """Registers qemu-aarch64 again with the C flag, which binfmt-support's entry lacks.

    Without it the kernel runs a foreign setuid binary with the caller's credentials, so sudo in an
    aarch64 node says "effective uid is not 0" and the operator's become fails, where on a real
    Kunpeng server it works. C (credentials from the binary, not the interpreter; implies O) gives
    foreign setuid binaries the semantics native ones have. The registration lasts until the host
    reboots or binfmt-support registers its own again; this runs at every create, so it is redone.
    """
    entry = _binfmt_entry(BINFMT_AARCH64)
    flags = entry.get("flags", "")
    if "C" in flags:
        return False

    def escaped(hex_text):
        return "".join("\\x" + hex_text[i:i + 2] for i in range(0, len(hex_text), 2))

    rule = ":qemu-aarch64:M:%s:%s:%s:%s:%s" % (
        entry.get("offset", "0"), escaped(entry["magic"]), escaped(entry["mask"]), entry["interpreter"],
        "".join(sorted(set(flags + "FC"))))
    BINFMT_AARCH64.write_text("-1")
    (BINFMT_DIR / "register").write_text(rule)
    return True


def enable_foreign_arch():
    """Registers qemu-aarch64 in the host's binfmt_misc (opt-in: it changes the host), with the
    credentials flag that setuid binaries (sudo) need; idempotent."""
    newly_registered = not BINFMT_AARCH64.exists()
    if newly_registered:
        if not (shutil.which("qemu-aarch64-static") and shutil.which("update-binfmts")):
            installed = subprocess.run(["apt-get", "install", "-y", "-q", "qemu-user-static", "binfmt-support"],
                                       check=False, env=dict(COMMAND_ENV, DEBIAN_FRONTEND="noninteractive"))
            if installed.returncode != 0:
                raise SandboxError("installing qemu-user-static and binfmt-support failed (exit %d); fix: run "
                                   "`make deps` (it updates apt's lists first), then this command again"
                                   % installed.returncode)
        if not (BINFMT_DIR / "status").exists():
            run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT_DIR)])
        run(["update-binfmts", "--enable", "qemu-aarch64"], check=False)
        if not BINFMT_AARCH64.exists():
            raise SandboxError("qemu-aarch64 is still not registered in /proc/sys/fs/binfmt_misc; "
                               "check `update-binfmts --display qemu-aarch64`")
    if not (_binfmt_with_credentials() or newly_registered):
        log("qemu-aarch64 already registered: aarch64 nodes can run")
        return
    log("qemu-aarch64 registered with flags %s: aarch64 nodes can run"
        % _binfmt_entry(BINFMT_AARCH64).get("flags", "?"))


# ---------------------------------------------------------------------------------------------
# Per-node simulated hardware


class NodeSpec:
    """One simulated server: its product, chips and initial faults."""

    def __init__(self, name, product, chip_name=None, npu_count=None, chips_per_npu=None,
                 arch="x86_64", unhealthy_chips=(), faults=None, npu_ids=None, node_os=None, kubelet=False,
                 light=False, fabric=None, super_pod=None):
        if product not in PRODUCTS:
            raise SandboxError("%s: unknown sandbox_product %r; use one of: %s (or add it to PRODUCTS "
                               "in sandbox/fleet.py)" % (name, product, ", ".join(sorted(PRODUCTS))))
        model = PRODUCTS[product]
        self.name = name
        self.product = product
        self.chip_name = chip_name or model["default_chip_name"]
        self.chips_per_npu = int(chips_per_npu or model["chips_per_npu"])
        if self.chips_per_npu != model["chips_per_npu"]:
            raise SandboxError("%s: an %s has %d chip(s) per NPU, not %d; fix sandbox_chips_per_npu"
                               % (name, product, model["chips_per_npu"], self.chips_per_npu))
        self.npu_count = int(npu_count if npu_count is not None else len(model["bus_ids"]) // self.chips_per_npu)
        if self.npu_count * self.chips_per_npu > len(model["bus_ids"]):
            raise SandboxError("%s: an %s in the sandbox has at most %d NPUs; lower sandbox_npu_count "
                               "or add bus ids to PRODUCTS in sandbox/fleet.py"
                               % (name, product, len(model["bus_ids"]) // self.chips_per_npu))
        self.npu_ids = list(npu_ids) if npu_ids else list(range(self.npu_count))
        if len(self.npu_ids) != self.npu_count:
            raise SandboxError("%s: sandbox_npu_ids lists %d ids for %d NPUs; make them agree"
                               % (name, len(self.npu_ids), self.npu_count))
        if arch not in ARCHITECTURES:
            raise SandboxError("%s: unknown sandbox_arch %r; use one of %s"
                               % (name, arch, ", ".join(sorted(ARCHITECTURES))))
        self.arch = arch
        check_node_os(node_os, name)
        self.node_os = node_os
        self.unhealthy_chips = [list(entry) for entry in unhealthy_chips or ()]
        self.faults = dict(faults or {})
        # A node that runs a real kubelet gets a cgroup namespace of its own (see run_node).
        self.kubelet = bool(kubelet)
        # A light node (sandbox_light: true) leaves out what no role reads (LIGHT_NODE_MASKED): for
        # fleets of a hundred nodes on one machine (bench/scale.py).
        self.light = bool(light)
        # The NPU fabric the node is cabled to (nodes naming the same one reach each other's NPUs).
        self.fabric = fabric or None
        if self.fabric and not PRODUCTS[product].get("roce"):
            raise SandboxError("%s: an %s has no NPU RoCE ports to cable to fabric %s; remove sandbox_fabric"
                               % (name, product, self.fabric))
        # SuperPoD membership of an A3 (sandbox_super_pod: {id, server_index, size}): what npu-smi's
        # spod-info, hccn_tool's vNIC and its address rules read.
        self.super_pod = check_super_pod(super_pod, name, product)

    @classmethod
    def from_host_vars(cls, name, host_vars):
        if host_vars.get("sandbox_replay_bundle"):
            return ReplaySpec(name, host_vars["sandbox_replay_bundle"], host_vars.get("sandbox_replay_node"),
                              host_vars.get("sandbox_faults") or {}, host_vars.get("sandbox_os"),
                              host_vars.get("sandbox_kubelet", False), host_vars.get("sandbox_light", False),
                              host_vars.get("sandbox_fabric"))
        missing = [key for key in ("sandbox_product",) if key not in host_vars]
        if missing:
            raise SandboxError("%s: missing %s in its host_vars; see inventories/sandbox/host_vars"
                               % (name, ", ".join(missing)))
        return cls(name, host_vars["sandbox_product"], host_vars.get("sandbox_chip_name"),
                   host_vars.get("sandbox_npu_count"), host_vars.get("sandbox_chips_per_npu"),
                   host_vars.get("sandbox_arch", "x86_64"), host_vars.get("sandbox_unhealthy_chips") or (),
                   host_vars.get("sandbox_faults") or {}, host_vars.get("sandbox_npu_ids"),
                   host_vars.get("sandbox_os"), host_vars.get("sandbox_kubelet", False),
                   host_vars.get("sandbox_light", False), host_vars.get("sandbox_fabric"),
                   host_vars.get("sandbox_super_pod"))

    @property
    def state_dir(self):
        return NODES_STATE_DIR / self.name

    def chip_health(self, npu_id, chip_id):
        for entry in self.unhealthy_chips:
            if entry[0] == npu_id and entry[1] == chip_id:
                return entry[2] if len(entry) > 2 else "Critical"
        return "OK"

    def hardware(self):
        model = PRODUCTS[self.product]
        a3 = model["chip_family"] == "A3"
        bus_ids = iter(model["bus_ids"])
        npus = []
        for npu_id in self.npu_ids:
            chips = []
            for chip_id in range(self.chips_per_npu):
                chip = {
                    "chip_id": chip_id,
                    "bus_id": next(bus_ids).upper(),
                    "health": self.chip_health(npu_id, chip_id),
                    # An A3 shows its NPU's power on chip 0 and "-" on chip 1 (every capture).
                    "power_w": model["power_w"] if chip_id == 0 else ("-" if a3 else None),
                    "temp_c": model["temp_c"],
                    "hbm_total_mb": model["hbm_total_mb"],
                    "memory_total_mb": model["memory_total_mb"],
                }
                if a3:
                    chip["phy_id"] = 2 * npu_id + chip_id
                    # What an idle die holds (the 24.1.rc3.7 capture's NPU 0).
                    chip["hbm_used_mb"] = 3419 if chip_id == 0 else 3196
                chips.append(chip)
            npus.append({"npu_id": npu_id, "chips": chips})
        a3_fields = {}
        if a3:
            main_board = model["super_pod_main_board_id"] if self.super_pod else model["main_board_id"]
            a3_fields = {"npu_name": model["npu_name"], "main_board_id": main_board}
            if self.super_pod:
                a3_fields["super_pod"] = self.super_pod
        return {
            "product": self.product,
            "chip_family": model["chip_family"],
            "chip_name": self.chip_name,
            "pci_device": model["pci_device"],
            "pci_revision": model["revision"],
            "subsystem_vendor": model["subsystem_vendor"],
            "subsystem_device": model["subsystem_device"],
            "arch": self.arch,
            **({"cpu": ARCHITECTURES[self.arch]["cpu"]["model"]} if ARCHITECTURES[self.arch]["cpu"] else {}),
            "hot_reset": model["hot_reset"],
            "board_id": model["board_id"],
            **({"roce": True} if model.get("roce") else {}),
            **a3_fields,
            "npus": npus,
        }

    def hardware_fingerprint(self):
        described = self.hardware()
        if self.kubelet:
            described["kubelet"] = True
        if self.light:
            described["light"] = True
        if self.fabric:
            described["fabric"] = self.fabric
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:12]


def load_replay():
    """sandbox/replay.py (a node made from a collected bundle), loaded by path as fleet.py may be."""
    name = "npu_ascend_sandbox_replay"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, str(SANDBOX_DIR / "replay.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


class ReplaySpec(NodeSpec):
    """A node made from a real server's diagnostics bundle (sandbox/README.md, "Replaying a server"): its
    hardware is what the bundle's reads show, its fake npu-smi and hccn_tool answer those reads verbatim.
    The bundle is read when first needed, so that `down` works for a node whose bundle is gone."""

    def __init__(self, name, bundle, bundle_node=None, faults=None, node_os=None, kubelet=False, light=False,
                 fabric=None):
        self.bundle = str(bundle)
        self.bundle_node = bundle_node
        self._members = self._hardware = None
        self.name = name
        check_node_os(node_os, name)
        self.node_os = node_os
        self.unhealthy_chips = []
        self.faults = dict(faults or {})
        self.kubelet = bool(kubelet)
        self.light = bool(light)
        self.fabric = fabric or None

    def _load(self):
        if self._hardware is None:
            replay = load_replay()
            try:
                self._members = replay.read_bundle(self.bundle, self.bundle_node)
                self._hardware = replay.hardware(self._members, PRODUCTS, HUAWEI_PCI_VENDOR)
            except replay.BundleError as error:
                raise SandboxError("%s: cannot replay %s: %s" % (self.name, self.bundle, error))
            if self.fabric and not self._hardware.get("roce"):
                raise SandboxError("%s: the bundle %s shows no NPU RoCE port (no hccn_tool read answered) to cable "
                                   "to fabric %s; remove sandbox_fabric" % (self.name, self.bundle, self.fabric))
        return self._hardware

    @property
    def members(self):
        self._load()
        return self._members

    @property
    def product(self):
        return self._load()["product"]

    @property
    def chip_name(self):
        return self._load()["chip_name"]

    @property
    def npu_ids(self):
        return [npu["npu_id"] for npu in self._load()["npus"]]

    @property
    def npu_count(self):
        return len(self.npu_ids)

    @property
    def chips_per_npu(self):
        return max(len(npu["chips"]) for npu in self._load()["npus"])

    @property
    def arch(self):
        return self._load()["arch"]

    def hardware(self):
        return json.loads(json.dumps(self._load()))

    def hardware_fingerprint(self):
        base = NodeSpec.hardware_fingerprint(self)
        return hashlib.sha256((base + load_replay().digest(self.members)).encode()).hexdigest()[:12]

    def overlay(self):
        # The node runs the host's kernel.
        return load_replay().overlay(self.members, self._load(), os.uname().release)

    def write_replay_dir(self, hardware_dir):
        load_replay().write_replay_dir(self.members, Path(hardware_dir) / load_replay().REPLAY_SUBDIR)


# What a light node (sandbox_light: true) does without, and why no role notices: the daily timers
# (dpkg's database backup, e2scrub, the tmpfiles clean-up: a burst of CPU in a hundred nodes at
# once), and the journal kept in memory and capped (journalctl still reads it). systemd-logind and
# D-Bus stay: Ansible's reboot module runs `shutdown -r`, which asks logind over D-Bus; containerd
# stays: the container runtime's checks start containers. Measured in docs/benchmarks.md,
# "Scale lane".
LIGHT_NODE_MASKED = ("dpkg-db-backup.timer", "e2scrub_all.timer", "systemd-tmpfiles-clean.timer")
LIGHT_NODE_JOURNALD = "[Journal]\nStorage=volatile\nRuntimeMaxUse=4M\nRateLimitBurst=1000\n"


def check_super_pod(value, name, product):
    """sandbox_super_pod ({id, server_index, size}) as hardware.json's super_pod, or None."""
    if not value:
        return None
    if PRODUCTS[product]["chip_family"] != "A3":
        raise SandboxError("%s: only an Atlas A3 is a SuperPoD member; remove sandbox_super_pod" % name)
    if not isinstance(value, dict) or set(value) - {"id", "server_index", "size"} or "server_index" not in value:
        raise SandboxError("%s: sandbox_super_pod is a mapping of server_index (0-%d) and optional id "
                           "(default 0) and size (NPUs, default %d), e.g. {id: 0, server_index: 3, size: 384}"
                           % (name, A3_SUPERPOD_MAX_SERVERS - 1, A3_SUPERPOD_MAX_SERVERS * 8))
    super_pod = {"id": int(value.get("id", 0)), "server_index": int(value["server_index"]),
                 "size": int(value.get("size", A3_SUPERPOD_MAX_SERVERS * 8))}
    if not 0 <= super_pod["server_index"] < A3_SUPERPOD_MAX_SERVERS or super_pod["id"] < 0 or super_pod["size"] < 1:
        raise SandboxError("%s: sandbox_super_pod needs 0 <= server_index < %d, id >= 0 and size >= 1"
                           % (name, A3_SUPERPOD_MAX_SERVERS))
    return super_pod


def light_node_overlay():
    """A tar stream (bytes) of what a light node gets before its first boot: the masks (links to
    /dev/null in /etc/systemd/system) and the journal's drop-in."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for directory in ("etc/systemd/system", "etc/systemd/journald.conf.d"):
            entry = tarfile.TarInfo(directory)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(entry)
        for unit in LIGHT_NODE_MASKED:
            entry = tarfile.TarInfo("etc/systemd/system/" + unit)
            entry.type, entry.linkname = tarfile.SYMTYPE, "/dev/null"
            archive.addfile(entry)
        add_file_to_tar(archive, "etc/systemd/journald.conf.d/sandbox-light.conf", LIGHT_NODE_JOURNALD.encode())
    return buffer.getvalue()


def add_file_to_tar(archive, name, data):
    """A regular file of root's, mode 0644, holding the bytes ``data``, at ``name`` in ``archive``."""
    entry = tarfile.TarInfo(name)
    entry.size, entry.mode = len(data), 0o644
    archive.addfile(entry, io.BytesIO(data))


# Every node's Python keeps the bytecode of what it imports from zip files (Ansible's modules):
# sandbox/bytecode-cache/ascend_sandbox_bytecode_cache.py says why. It goes in before the first boot,
# as the light node's overlay, so that the node images stay as they are.
BYTECODE_CACHE_DIR = SANDBOX_DIR / "bytecode-cache"
BYTECODE_CACHE_FILES = ("ascend_sandbox_bytecode_cache.py", "ascend_sandbox_bytecode_cache.pth")
NODE_SITE_PACKAGES = "usr/lib/python3/dist-packages"


def bytecode_cache_overlay():
    """A tar stream (bytes) of the bytecode cache's module and .pth file in the node's dist-packages."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in BYTECODE_CACHE_FILES:
            add_file_to_tar(archive, "%s/%s" % (NODE_SITE_PACKAGES, name), (BYTECODE_CACHE_DIR / name).read_bytes())
    return buffer.getvalue()


def pci_config_space(vendor, device, revision, class_code, subsystem_vendor, subsystem_device):
    """The first 256 bytes of a type-0 PCI configuration header, as lspci reads them from sysfs."""
    config = bytearray(256)
    config[0x00:0x02] = int(vendor, 16).to_bytes(2, "little")
    config[0x02:0x04] = int(device, 16).to_bytes(2, "little")
    config[0x04:0x06] = (0x0006).to_bytes(2, "little")  # memory space + bus master enabled
    config[0x08] = int(revision, 16)
    config[0x09:0x0c] = int(class_code, 16).to_bytes(3, "little")  # prog-if, subclass, class
    config[0x2c:0x2e] = int(subsystem_vendor, 16).to_bytes(2, "little")
    config[0x2e:0x30] = int(subsystem_device, 16).to_bytes(2, "little")
    return bytes(config)


def write_fake_sysfs(spec, sysfs_dir):
    hardware = spec.hardware()
    device = "0x" + hardware["pci_device"]
    for npu in hardware["npus"]:
        for chip in npu["chips"]:
            function_dir = Path(sysfs_dir) / chip["bus_id"].lower()
            function_dir.mkdir(parents=True)
            attributes = {
                "vendor": HUAWEI_PCI_VENDOR,
                "device": device,
                "class": PROCESSING_ACCELERATOR_CLASS,
                "subsystem_vendor": hardware["subsystem_vendor"],
                "subsystem_device": hardware["subsystem_device"],
                "revision": hardware["pci_revision"],
                "modalias": "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
                    int(HUAWEI_PCI_VENDOR, 16), int(device, 16), int(hardware["subsystem_vendor"], 16),
                    int(hardware["subsystem_device"], 16), 0x12, 0x00, 0x00),
                "numa_node": "-1",
                "enable": "1",
                # `lspci -v` reads it (the subsystem line then shows, e.g. [0200:0110] on a Duo).
                "irq": "0",
                # ... and this (start, end, flags of 6 BARs, the ROM and 6 bridge windows): without it
                # `lspci -v` stops after the first function with "Cannot open .../resource".
                "resource": "\n".join(["0x%016x 0x%016x 0x%016x" % (0, 0, 0)] * 13),
            }
            for attribute, value in attributes.items():
                (function_dir / attribute).write_text(value + "\n")
            (function_dir / "config").write_bytes(pci_config_space(
                HUAWEI_PCI_VENDOR, device, hardware["pci_revision"], PROCESSING_ACCELERATOR_CLASS,
                hardware["subsystem_vendor"], hardware["subsystem_device"]))


def prepare_node_state(spec):
    """(Re)creates .cache/sandbox/nodes/<host>/{sysfs,hardware} for a node about to be created."""
    state = spec.state_dir
    if state.exists():
        shutil.rmtree(str(state))
    write_fake_sysfs(spec, state / "sysfs")
    atomic_write(state / "hardware" / "hardware.json", json.dumps(spec.hardware(), indent=2) + "\n")
    if isinstance(spec, ReplaySpec):
        spec.write_replay_dir(state / "hardware")
    if spec.fabric:
        atomic_write(state / "fabric", spec.fabric + "\n")
    write_faults(spec.name, spec.faults)
    cpuinfo = fake_cpuinfo(spec.arch)
    if cpuinfo is not None:
        atomic_write(state / "cpuinfo", cpuinfo)


def fabric_dir(name):
    return FABRICS_DIR / name


def node_fabric(host):
    """The fabric a node was created on, or None."""
    path = NODES_STATE_DIR / host / "fabric"
    return path.read_text().strip() if path.exists() else None


def fabric_port(base, npu_position):
    """The leaf switch port an NPU (an A3 die) is cabled to (Huawei's naming, e.g. 400GE1/1/5:1): two
    ports per 400GE port split in two, the node's first after port number ``base``."""
    return "400GE1/1/%d:%d" % (base + npu_position // 2 + 1, npu_position % 2 + 1)


def roce_port_ids(spec):
    """The ids hccn_tool -i takes on the node, one per RoCE port: the NPU ids, an A3's dies (Phy-IDs)."""
    hardware = spec.hardware()
    if str(hardware.get("chip_family", "")).lower() == "a3":
        return [chip["phy_id"] for npu in hardware["npus"] for chip in npu["chips"]]
    return [npu["npu_id"] for npu in hardware["npus"]]


def _port_number(port):
    return int(port.split("/")[-1].split(":")[0])


def write_fabrics(specs, inventory_vars):
    """fabric.json of every fabric the nodes name: the switch port of each NPU (the cabling plan) and
    the addresses that answer on it (gateways, detect addresses: sandbox_fabric_answering)."""
    fabrics = {}
    for spec in sorted(specs, key=lambda spec: spec.name):
        if spec.fabric:
            fabrics.setdefault(spec.fabric, []).append(spec)
    for name, members in fabrics.items():
        answering = set()
        for spec in members:
            answering.update(inventory_vars.get(spec.name, {}).get("sandbox_fabric_answering") or [])
        directory = fabric_dir(name)
        for sub in ("state", "faults"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        # A node keeps its switch ports once cabled (`up --limit` names some of the fabric's nodes
        # only); a new one takes the next leaf ports.
        path = directory / "fabric.json"
        known = json.loads(path.read_text()) if path.exists() else {}
        ports = dict(known.get("ports") or {})
        for spec in members:
            if spec.name not in ports:
                # Four 400GE ports per node of eight NPUs, as before; an A3's 16 dies take eight, and the
                # next node starts after the last port taken.
                used = [_port_number(port) for node_ports in ports.values() for port in node_ports.values()]
                base = max([len(ports) * 4] + used)
                ports[spec.name] = {str(npu): fabric_port(base, position)
                                    for position, npu in enumerate(roce_port_ids(spec))}
        answering.update(known.get("answering") or [])
        atomic_write(path, json.dumps({"answering": sorted(answering), "ports": ports},
                                      indent=2, sort_keys=True) + "\n")


def fake_cpuinfo(arch, cores=None):
    """The /proc/cpuinfo a node of a foreign architecture is given, one entry per core the host
    lets it use (so that nproc and the file agree); None where the node reads the host's own."""
    cpu = ARCHITECTURES[arch]["cpu"]
    if cpu is None or os.uname().machine == arch:
        return None
    count = cores if cores is not None else len(os.sched_getaffinity(0))
    return "".join(cpu["cpuinfo_core"].format(index=index) for index in range(count))


def faults_path(host):
    return NODES_STATE_DIR / host / "hardware" / "faults.json"


def write_faults(host, faults):
    unknown = sorted(set(faults) - KNOWN_FAULTS)
    if unknown:
        log("%s: warning: fault key(s) %s are not in docs/development.md" % (host, ", ".join(unknown)))
    # The node sees this file through a directory bind mount, so the atomic rename is visible there.
    atomic_write(faults_path(host), json.dumps(faults, indent=2, sort_keys=True) + "\n")
    fabric = node_fabric(host)
    if fabric:
        # The other nodes of the fabric see this node's link and cabling faults through their copy.
        atomic_write(fabric_dir(fabric) / "faults" / ("%s.json" % host), json.dumps(faults, sort_keys=True) + "\n")


def read_faults(host):
    path = faults_path(host)
    if not path.exists():
        raise SandboxError("%s: no sandbox state at %s; run `python3 sandbox/fleet.py up` first"
                           % (host, path.parent.parent))
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------------------
# Inventory


def load_yaml(path):
    with open(str(path)) as handle:
        return yaml.safe_load(handle) or {}


def load_vars_dir(base, name):
    """Variables of <base>/<name> the way Ansible finds them: the directory <name>/ (every
    .yml/.yaml/.json file in it, sorted) wins over <name>.yml, <name>.yaml, <name>.json."""
    merged = {}
    directory = base / name
    if directory.is_dir():
        for path in sorted(directory.rglob("*")):
            if path.is_file() and path.suffix in (".yml", ".yaml", ".json"):
                merged.update(load_yaml(path))
        return merged
    for suffix in (".yml", ".yaml", ".json"):
        candidate = base / (name + suffix)
        if candidate.is_file():
            merged.update(load_yaml(candidate))
            break
    return merged


def inventory_hosts(inventory_dir, group=NODE_GROUP):
    """{host: {var: value}} for every host in group (directly or through child groups).

    Reads only what the sandbox needs: hosts.yml inline vars, group_vars of the group chain
    and host_vars. Jinja expressions are not rendered (sandbox_* values must be literals).
    """
    inventory_dir = Path(inventory_dir)
    hosts_file = next((inventory_dir / name for name in ("hosts.yml", "hosts.yaml")
                       if (inventory_dir / name).is_file()), None)
    if hosts_file is None:
        raise SandboxError("no hosts.yml in inventory %s; pass --inventory <dir with hosts.yml>" % inventory_dir)
    tree = load_yaml(hosts_file)
    groups = {}

    def collect(name, body, parents):
        body = body or {}
        entry = groups.setdefault(name, {"hosts": {}, "children": [], "vars": {}, "parents": set()})
        entry["parents"].update(parents)
        entry["vars"].update(body.get("vars") or {})
        for host, host_vars in (body.get("hosts") or {}).items():
            entry["hosts"].setdefault(host, {}).update(host_vars or {})
        for child, child_body in (body.get("children") or {}).items():
            entry["children"].append(child)
            collect(child, child_body, {name})

    for name, body in tree.items():
        collect(name, body, set())
    if group not in groups:
        raise SandboxError("inventory %s has no group %s; the sandbox nodes must be in it" % (hosts_file, group))

    def hosts_of(name):
        found = dict(groups[name]["hosts"])
        for child in groups[name]["children"]:
            for host, host_vars in hosts_of(child).items():
                found.setdefault(host, {}).update(host_vars)
        return found

    def ancestry(name):
        chain = []
        for parent in groups.get(name, {}).get("parents", ()):
            chain.extend(ancestry(parent))
        chain.append(name)
        return chain

    host_groups = {}
    for name in groups:
        for host in hosts_of(name):
            host_groups.setdefault(host, set()).add(name)
    result = {}
    for host, inline_vars in hosts_of(group).items():
        merged = {}
        merged.update(load_vars_dir(inventory_dir / "group_vars", "all"))
        ordered = []
        for name in sorted(host_groups[host]):
            for ancestor in ancestry(name):
                if ancestor not in ordered and ancestor != "all":
                    ordered.append(ancestor)
        for name in ordered:
            merged.update(groups[name]["vars"])
            merged.update(load_vars_dir(inventory_dir / "group_vars", name))
        merged.update(inline_vars)
        merged.update(load_vars_dir(inventory_dir / "host_vars", host))
        result[host] = merged
    return result


# ---------------------------------------------------------------------------------------------
# The fleet


class Fleet:
    """A set of sandbox nodes; every method works on all of them (or the named ones)."""

    def __init__(self, specs, inventory_vars=None):
        self.specs = {spec.name: spec for spec in specs}
        self.inventory_vars = inventory_vars or {}

    @classmethod
    def from_inventory(cls, inventory_dir=DEFAULT_INVENTORY, limit=None):
        hosts = inventory_hosts(inventory_dir)
        if limit:
            unknown = sorted(set(limit) - set(hosts))
            if unknown:
                raise SandboxError("--limit names %s, not in group %s of %s"
                                   % (", ".join(unknown), NODE_GROUP, inventory_dir))
            hosts = {host: host_vars for host, host_vars in hosts.items() if host in limit}
        for host_vars in hosts.values():
            bundle = host_vars.get("sandbox_replay_bundle")
            if bundle and not os.path.isabs(str(bundle)):
                # Relative to the inventory directory, as the other paths of an inventory are.
                host_vars["sandbox_replay_bundle"] = str(Path(inventory_dir) / str(bundle))
        return cls([NodeSpec.from_host_vars(host, host_vars) for host, host_vars in sorted(hosts.items())],
                   hosts)

    def replay_from(self, bundle, bundle_node=None):
        """Makes the fleet's one node a replay of ``bundle`` (``up --from-bundle``)."""
        if len(self.specs) != 1:
            raise SandboxError("--from-bundle makes one node; name it with --limit (the inventory has %s)"
                               % (", ".join(sorted(self.specs)) or "no node"))
        host = next(iter(self.specs))
        host_vars = dict(self.inventory_vars.get(host, {}), sandbox_replay_bundle=str(bundle),
                         sandbox_replay_node=bundle_node)
        self.specs[host] = NodeSpec.from_host_vars(host, host_vars)
        log("%s: replays %s (%s)" % (host, bundle, load_replay().summary(self.specs[host].members)))

    def spec(self, host):
        if host not in self.specs:
            raise SandboxError("%s is not a sandbox node of this inventory (known: %s)"
                               % (host, ", ".join(sorted(self.specs)) or "none"))
        return self.specs[host]

    # -- containers ---------------------------------------------------------------------------

    @staticmethod
    def inspect(host):
        result = podman("container", "inspect", host, check=False)
        if result.returncode != 0:
            return None
        return json.loads(result.stdout)[0]

    def up(self, recreate=False):
        ensure_ssh_key()
        hold_bridge_address()
        write_fabrics(self.specs.values(), self.inventory_vars)
        for spec in self.specs.values():
            self.up_node(spec, recreate)
            hold_bridge_address()
        for spec in self.specs.values():
            self.wait_running(spec.name)

    def up_node(self, spec, recreate=False):
        check_arch(spec.arch, spec.name)
        image = build_image(spec.arch, spec.node_os)
        fingerprint = spec.hardware_fingerprint()
        current = self.inspect(spec.name)
        if current is not None:
            labels = current["Config"].get("Labels") or {}
            changes = []
            if labels.get(LABEL_PREFIX + ".image") != image:
                changes.append("image %s -> %s" % (labels.get(LABEL_PREFIX + ".image"), image))
            if labels.get(LABEL_PREFIX + ".hardware") != fingerprint:
                changes.append("hardware description changed")
            if not spec.state_dir.exists():
                changes.append("state directory %s is gone" % spec.state_dir)
            if changes and not recreate:
                raise SandboxError("%s: the running node is out of date (%s); run `python3 sandbox/fleet.py "
                                   "up --recreate --limit %s` to replace it (its installed software is lost)"
                                   % (spec.name, "; ".join(changes), spec.name))
            if not changes:
                if current["State"]["Status"] != "running":
                    log("%s: starting the existing node" % spec.name)
                    podman("start", spec.name)
                else:
                    log("%s: already running with image %s and the same hardware, left alone"
                        % (spec.name, image))
                return
            log("%s: recreating (%s)" % (spec.name, "; ".join(changes)))
            self.remove_node(spec.name)
        prepare_node_state(spec)
        log("%s: starting %s (%s, %d NPU x %d chip, %s)" % (
            spec.name, image, spec.product, spec.npu_count, spec.chips_per_npu, spec.arch))
        try:
            self.run_node(spec, image, fingerprint)
        except SandboxError as error:
            raise SandboxError("%s: could not start the node: %s; `python3 sandbox/fleet.py down --limit %s` "
                               "clears what is left, then retry" % (spec.name, error, spec.name))

    @staticmethod
    def run_node(spec, image, fingerprint):
        cpuinfo = spec.state_dir / "cpuinfo"
        # runc allows this one file of /proc to be mounted over (as LXCFS does).
        cpuinfo_volume = ["--volume", "%s:/proc/cpuinfo:ro" % cpuinfo] if cpuinfo.exists() else []
        native_runtime_files = native_container_runtime_files(spec.arch)
        repository = package_repository_dir(spec.arch, spec.node_os)
        repository_mount = []
        if repository is not None:
            target = NODE_OSES[spec.node_os]["repository"]["mount_at"] % spec.arch
            repository_mount = ["--volume", "%s:%s:ro" % (repository, target)]
        podman("create", "--name", spec.name, "--hostname", spec.name,
               "--privileged", "--systemd=always", "--restart=always",
               "--arch", ARCHITECTURES[spec.arch]["oci"],
               # On this cgroup v1 host a node sees its cgroups as host paths; runc, which the
               # node's kubelet drives, then mixes two views of the name=systemd hierarchy (docs/
               # kubelets.md). A private cgroup namespace gives the node one view, rooted at itself.
               *(["--cgroupns=private"] if spec.kubelet else []),
               "--label", "%s=1" % LABEL_PREFIX,
               "--label", "%s.image=%s" % (LABEL_PREFIX, image),
               "--label", "%s.hardware=%s" % (LABEL_PREFIX, fingerprint),
               "--volume", "%s:/sys/bus/pci/devices:ro" % (spec.state_dir / "sysfs"),
               "--volume", "%s:/etc/ascend-sandbox:ro" % (spec.state_dir / "hardware"),
               *cpuinfo_volume,
               *repository_mount,
               *(["--volume", "%s:%s" % (fabric_dir(spec.fabric), FABRIC_MOUNT)] if spec.fabric else []),
               *[argument for target in AUTHORIZED_KEYS_FILES
                 for argument in ("--volume", "%s:%s:ro" % (SSH_PUBLIC_KEY, target))],
               image, "/sbin/init")
        # Before the first boot, so that the node's containerd never sees its own shim.
        for source, target in native_runtime_files:
            podman("cp", source, "%s:%s" % (spec.name, target))
        # Light nodes are the benchmarks': they compile as a real server does, so that their
        # figures stay comparable with earlier ones (docs/benchmarks.md).
        overlays = [("light node's", light_node_overlay())] if spec.light else [
            ("bytecode cache's", bytecode_cache_overlay())]
        if isinstance(spec, ReplaySpec):
            overlays.append(("replayed bundle's", spec.overlay()))
        for what, overlay in overlays:
            # A tar stream on stdin (`podman cp -`): the masks are symbolic links.
            result = subprocess.run([str(PODMAN_WRAPPER), "cp", "-", "%s:/" % spec.name], input=overlay,
                                    capture_output=True, env=COMMAND_ENV, check=False)
            if result.returncode != 0:
                raise SandboxError("podman cp of the %s overlay failed (exit %d): %s"
                                   % (what, result.returncode, result.stderr.decode(errors="replace").strip()))
        podman("start", spec.name)

    def wait_running(self, host, timeout=None, after_marker=None):
        """Waits for systemd to finish booting; with after_marker, for a boot other than that one."""
        if timeout is None:
            timeout = BOOT_TIMEOUT_SECONDS
            if self.spec(host).arch != os.uname().machine:
                timeout *= EMULATION_SLOWDOWN
        deadline = time.monotonic() + timeout
        state = "no answer"
        while time.monotonic() < deadline:
            result = podman("exec", host, "systemctl", "is-system-running", check=False)
            state = (result.stdout or "").strip() or (result.stderr or "").strip()
            if state in ("running", "degraded"):
                if after_marker is not None and self.boot_marker(host) == after_marker:
                    time.sleep(1)
                    continue
                break
            time.sleep(1)
        else:
            raise SandboxError("%s: systemd did not finish booting within %d s (last state: %s); "
                               "see `python3 sandbox/fleet.py exec %s -- journalctl -b`"
                               % (host, timeout, state, host))
        if state == "degraded":
            failed = podman("exec", host, "systemctl", "--failed", "--no-legend", "--plain",
                            check=False).stdout.strip()
            raise SandboxError("%s: systemd is degraded, failed units:\n%s\nfix the image recipe in "
                               "sandbox/image/ (mask or repair those units)" % (host, failed))
        log("%s: systemd running" % host)

    @staticmethod
    def boot_marker(host):
        return podman("exec", host, "/usr/local/libexec/ascend-sandbox/bootmarker").stdout.strip()

    def reboot(self, host, wait=True):
        before = self.boot_marker(host)
        # The container exits during the call, so podman's own exit status means nothing here.
        podman("exec", host, "systemctl", "reboot", check=False)
        if wait:
            self.wait_running(host, after_marker=before)
        return before

    @staticmethod
    def remove_node(host):
        podman("rm", "--force", "--volumes", "--time", "10", host, check=False)

    def down(self):
        for spec in self.specs.values():
            self.remove_node(spec.name)
            if spec.fabric:
                for sub in ("state", "faults"):
                    (fabric_dir(spec.fabric) / sub / ("%s.json" % spec.name)).unlink(missing_ok=True)
            if spec.state_dir.exists():
                shutil.rmtree(str(spec.state_dir))
            log("%s: removed" % spec.name)
        release_bridge()
        for directory in (NODES_STATE_DIR,):
            if directory.is_dir() and not any(directory.iterdir()):
                directory.rmdir()

    def status(self):
        rows = []
        for spec in self.specs.values():
            try:
                product = spec.product
            except SandboxError:
                product = "replay of %s (unreadable)" % spec.bundle
            current = self.inspect(spec.name)
            if current is None:
                rows.append((spec.name, "absent", "-", "-", product))
                continue
            rows.append((spec.name, current["State"]["Status"], current.get("ImageName", "-"),
                         str(current.get("RestartCount", 0)), product))
        return rows

    def exec(self, host, argv, check=True, input=None, interactive=False):
        self.spec(host)
        flags = ["--interactive"] if (interactive or input is not None) else []
        if interactive and sys.stdin.isatty():
            flags.append("--tty")
        if interactive:
            return run([PODMAN_WRAPPER, "exec"] + flags + [host] + list(argv), check=False, capture=False)
        result = podman("exec", *(flags + [host] + list(argv)), check=False, input=input)
        if check and result.returncode != 0:
            raise subprocess.CalledProcessError(result.returncode, list(argv), result.stdout, result.stderr)
        return result

    def copy_in(self, host, host_path, node_path):
        self.spec(host)
        podman("cp", str(host_path), "%s:%s" % (host, node_path))

    # -- probe image ---------------------------------------------------------------------------

    def load_container_image(self, host, kind="probe"):
        """Puts the probe or workload image into the node's containerd (namespace k8s.io) and
        Docker, if running."""
        archive = build_container_image(kind, self.spec(host).arch)
        node_archive = "/var/tmp/npu-ascend-%s-image.tar" % kind
        self.copy_in(host, archive, node_archive)
        # The native snapshotter works inside a container whose root is already an overlay. ctr 1.7
        # and later import through the daemon's transfer service, which unpacks only for the
        # platforms its config lists; --local unpacks in the client, as ctr 1.6 always does.
        help_text = self.exec(host, ["ctr", "images", "import", "--help"], check=False).stdout
        local = ["--local"] if "--local" in help_text else []
        commands = [["ctr", "--namespace", "k8s.io", "images", "import"] + local
                    + ["--snapshotter", "native", node_archive]]
        if self.exec(host, ["systemctl", "is-active", "--quiet", "docker"], check=False).returncode == 0:
            commands.append(["docker", "load", "--input", node_archive])
        for argv in commands:
            result = self.exec(host, argv, check=False)
            if result.returncode != 0:
                engine = "containerd" if argv[0] == "ctr" else "docker"
                raise SandboxError("%s: loading the %s image failed: `%s` exited %d: %s; fix: check that %s "
                                   "runs in the node (fleet.py exec %s -- systemctl status %s)"
                                   % (host, kind, " ".join(argv), result.returncode, result.stderr.strip(),
                                      engine, host, engine))
        self.exec(host, ["rm", "-f", node_archive])
        return CONTAINER_IMAGES[kind]

    # -- faults -------------------------------------------------------------------------------

    def set_faults(self, host, faults):
        self.spec(host)
        write_faults(host, faults)
        self.apply_faults(host)

    def update_faults(self, host, changes=None, clear=None):
        self.spec(host)
        faults = read_faults(host)
        if clear is not None:
            for key in clear or list(faults):
                faults.pop(key, None)
        faults.update(changes or {})
        write_faults(host, faults)
        self.apply_faults(host)
        return faults

    def apply_faults(self, host):
        """Make a running node act on its new faults.json before returning.

        The node's path unit would republish the kernel headers repository too, but later: an apt
        run started right after a fault change would race it.
        """
        current = self.inspect(host)
        if current is None or current["State"]["Status"] != "running":
            return
        self.exec(host, ["python3", "/usr/local/libexec/ascend-sandbox/boot", "--publish-headers-only"])

    # -- packages -----------------------------------------------------------------------------

    def package_plan(self):
        """(component, chip, version, arch) for every fake package the inventory's nodes need."""
        wanted = {}
        for host, spec in self.specs.items():
            versions = self.inventory_vars.get(host, {}).get("sandbox_package_versions") or {}
            for component, version in versions.items():
                chip = spec.hardware()["chip_family"]
                # One toolkit/nnal/runtime file serves every chip: build it once.
                key = (component, chip if component in CHIP_SPECIFIC_COMPONENTS else None,
                       str(version), spec.arch)
                wanted[key] = min(chip, wanted.get(key, chip))
        return sorted((component, chip, version, arch)
                      for (component, _chip_key, version, arch), chip in wanted.items())

    def build_packages(self, out_dir=PACKAGES_OUT_DIR):
        # Molecule scenarios run side by side and share the package directory.
        with state_lock("packages"):
            return self.build_packages_locked(out_dir)

    def build_packages_locked(self, out_dir):
        if not PACKAGE_BUILDER.exists():
            raise SandboxError("%s is missing (the fake package builder); nothing to "
                               "build" % PACKAGE_BUILDER)
        plan = self.package_plan()
        if not plan:
            raise SandboxError("no sandbox_package_versions in the inventory; set it as in "
                               "inventories/sandbox/group_vars/sandbox_nodes/packages.yml")
        out_dir = Path(out_dir)
        stamps = out_dir / ".built"
        stamps.mkdir(parents=True, exist_ok=True)
        builder_sources = [path for path in PACKAGE_BUILDER.parent.rglob("*")
                           if path.is_file() and "__pycache__" not in path.parts]
        newest_source = max(path.stat().st_mtime for path in builder_sources)
        built = []
        for component, chip, version, arch in plan:
            stamp = stamps / ("%s_%s_%s_%s.json" % (component, chip, version, arch))
            if stamp.exists():
                outputs = [out_dir / name for name in json.loads(stamp.read_text())]
                if outputs and all(path.exists() and path.stat().st_mtime >= newest_source for path in outputs):
                    log("%s %s (%s, %s): up to date" % (component, version, chip, arch))
                    built.extend(outputs)
                    continue
            before = {path.name: path.stat().st_mtime for path in out_dir.iterdir() if path.is_file()}
            argv = [sys.executable, PACKAGE_BUILDER, "--component", component, "--chip", chip,
                    "--version", version, "--arch", arch, "--out", out_dir]
            result = run(argv, check=False)
            if result.returncode != 0:
                raise SandboxError("building the fake %s %s package (%s, %s) failed (exit %d); run `%s` to "
                                   "see why:\n%s" % (component, version, chip, arch, result.returncode,
                                                     " ".join(str(a) for a in argv),
                                                     (result.stderr or result.stdout).strip()))
            outputs = sorted(path.name for path in out_dir.iterdir()
                             if path.is_file() and before.get(path.name) != path.stat().st_mtime)
            atomic_write(stamp, json.dumps(outputs) + "\n")
            log("%s %s (%s, %s): built %s" % (component, version, chip, arch, ", ".join(outputs) or "nothing"))
            built.extend(out_dir / name for name in outputs)
        write_checksums(out_dir)
        return built


def ensure_ssh_key():
    """The sandbox's SSH key pair, made once per checkout."""
    with state_lock("ssh-key"):
        if not (SSH_KEY.exists() and SSH_PUBLIC_KEY.exists()):
            require_tool("ssh-keygen", "it makes the key Ansible logs in to the nodes with")
            SSH_KEY.parent.mkdir(parents=True, exist_ok=True)
            SSH_KEY.unlink(missing_ok=True)
            SSH_PUBLIC_KEY.unlink(missing_ok=True)
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "npu-ascend-sandbox", "-f", SSH_KEY])
            log("made the SSH key %s" % SSH_KEY)


# The nodes reach this machine (package mirrors, the API server) at their network's gateway, an
# address of the podman bridge. A Linux bridge whose address nobody set takes the lowest MAC
# address among its ports, so every node that starts or stops, of any fleet on this machine, can
# move the gateway's MAC under the running nodes; they keep the old one in their ARP cache and
# their connections to this machine time out for up to ~45 s (a scenario's mirror check did, in
# CI). Setting the bridge's address to the one it has pins it without moving it; a port of our
# own keeps netavark from deleting the bridge, and recreating it unpinned, when its last node
# stops. docs/development.md tells how to take the port away.
BRIDGE_ANCHOR = "npusbx-anchor"
SYSFS_NET = Path("/sys/class/net")
ADDRESS_SET_BY_USER = "3"  # addr_assign_type NET_ADDR_SET


def _network_bridge(network="podman"):
    result = podman("network", "inspect", network, "--format", "{{.NetworkInterface}}", check=False)
    bridge = (result.stdout or "").strip()
    return bridge if result.returncode == 0 and bridge and (SYSFS_NET / bridge).is_dir() else None


def _bridge_ports(bridge):
    return sorted(port.name for port in (SYSFS_NET / bridge / "brif").iterdir())


def _ip_link(*args):
    result = run(["ip", "link"] + list(args), check=False)
    if result.returncode != 0:
        log("could not run `ip link %s` (%s): nodes may lose this machine for up to a minute "
            "when other nodes start or stop" % (" ".join(args), result.stderr.strip()))
    return result.returncode == 0


def hold_bridge_address():
    """Pins the address of the nodes' bridge and anchors the bridge (see BRIDGE_ANCHOR)."""
    bridge = _network_bridge()
    if bridge is None:
        return  # the first node's start creates it; up() calls this again after each start
    bridge_dir = SYSFS_NET / bridge
    if (bridge_dir / "addr_assign_type").read_text().strip() != ADDRESS_SET_BY_USER:
        _ip_link("set", "dev", bridge, "address", (bridge_dir / "address").read_text().strip())
    if not (SYSFS_NET / BRIDGE_ANCHOR).exists():
        # Another checkout's fleet.py may add it at the same moment: then it exists, as wanted.
        run(["ip", "link", "add", BRIDGE_ANCHOR, "type", "veth", "peer", "name", BRIDGE_ANCHOR + "p"], check=False)
    if BRIDGE_ANCHOR not in _bridge_ports(bridge):
        _ip_link("set", "dev", BRIDGE_ANCHOR, "master", bridge)


def release_bridge():
    """Takes our port away once no node is left on the bridge; the idle bridge stays for the next node."""
    bridge = _network_bridge()
    if bridge is not None and _bridge_ports(bridge) == [BRIDGE_ANCHOR]:
        _ip_link("delete", "dev", BRIDGE_ANCHOR)


@contextlib.contextmanager
def state_lock(name):
    """Serialises work on shared files under .cache/sandbox between concurrent fleet.py runs."""
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(str(STATE_ROOT / (".%s.lock" % name)), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def image_archive(kind, arch):
    suffix = "" if arch == "x86_64" else "-" + arch
    return STATE_ROOT / ("%s-image%s.tar" % (kind, suffix))


def build_container_image(kind="probe", arch="x86_64"):
    """The probe or workload image of arch as a docker-archive (which both ctr and docker load),
    built once."""
    check_arch(arch)
    with state_lock("%s-image" % kind):
        if image_archive(kind, arch).exists():
            return image_archive(kind, arch)
        # The podman store, where the image is tagged before it is saved, is the host's: a
        # checkout building the image of another architecture must not retag it in between.
        ROOTFS_CACHE_DIR.mkdir(parents=True, exist_ok=True)
        with open(str(ROOTFS_CACHE_DIR / ("%s-image.lock" % kind)), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return build_container_image_locked(kind, arch)


def copy_busybox(arch, target):
    """The static busybox of arch: the host's for its own architecture, the node image's otherwise."""
    if arch == os.uname().machine:
        if not BUSYBOX.exists():
            raise SandboxError("%s is missing: the probe image is built from the host's static busybox. "
                               "Fix: run `make deps` (Debian package busybox-static)" % BUSYBOX)
        shutil.copy2(BUSYBOX, target)
        return
    image = build_image(arch)
    created = podman("create", "--arch", ARCHITECTURES[arch]["oci"], image, NODE_IMAGE_BUSYBOX, check=False)
    if created.returncode != 0:
        raise SandboxError("could not open the %s node image %s to take its busybox: %s"
                           % (arch, image, created.stderr.strip()))
    container = created.stdout.strip()
    try:
        copied = podman("cp", "%s:%s" % (container, NODE_IMAGE_BUSYBOX), str(target), check=False)
    finally:
        podman("rm", "--force", container, check=False)
    if copied.returncode != 0:
        raise SandboxError("the %s node image %s has no %s (%s); fix: keep busybox-static in "
                           "ARCHITECTURES[%r]['extra_packages'] of sandbox/fleet.py"
                           % (arch, image, NODE_IMAGE_BUSYBOX, copied.stderr.strip(), arch))


def export_node_python(arch, root):
    """Unpacks Python, its standard library and their shared libraries from the node image of
    arch into root."""
    image = build_image(arch)
    tarball = Path(root).parent / "python.tar"
    with open(str(tarball), "wb") as stream:
        exported = subprocess.run(
            [str(PODMAN_WRAPPER), "run", "--rm", "--arch", ARCHITECTURES[arch]["oci"], "--entrypoint", "/bin/sh",
             image, "-c", PYTHON_EXPORT_SCRIPT], stdout=stream, stderr=subprocess.PIPE, env=COMMAND_ENV,
            universal_newlines=False, check=False)
    if exported.returncode != 0:
        raise SandboxError("could not take Python out of the %s node image %s: %s; fix: check that the image "
                           "still has python3 and ldd (sandbox/image/packages.txt)"
                           % (arch, image, exported.stderr.decode("utf-8", "replace").strip()))
    run(["tar", "-C", str(root), "-xf", str(tarball)])


def build_container_image_locked(kind, arch):
    archive = image_archive(kind, arch)
    with tempfile.TemporaryDirectory(prefix="npu-ascend-%s-" % kind) as work:
        root = Path(work) / "rootfs"
        (root / "bin").mkdir(parents=True)
        (root / "dev").mkdir()
        copy_busybox(arch, root / "bin" / "busybox")
        for applet in PROBE_IMAGE_APPLETS:
            (root / "bin" / applet).symlink_to("busybox")
        if kind == "workload":
            export_node_python(arch, root)
        tarball = Path(work) / "rootfs.tar"
        run(["tar", "-C", str(root), "--numeric-owner", "--owner=0", "--group=0", "-cf", str(tarball), "."])
        name = CONTAINER_IMAGES[kind]
        podman("import", "--arch", ARCHITECTURES[arch]["oci"], "--change", "CMD [\"/bin/sh\"]",
               "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               str(tarball), name)
        STATE_ROOT.mkdir(parents=True, exist_ok=True)
        partial = archive.with_name(archive.name + ".partial")
        partial.unlink(missing_ok=True)
        podman("save", "--format", "docker-archive", "--output", str(partial), name)
        partial.rename(archive)
    return archive


def image_archive_bytes(binary, image, arch, entrypoint):
    """A `docker save` archive (docker-archive: manifest.json, the config, one layer) of a scratch
    image holding binary at entrypoint, tagged image, byte for byte the same for the same input."""
    def tar_bytes(members):
        stream = io.BytesIO()
        with tarfile.open(fileobj=stream, mode="w", format=tarfile.USTAR_FORMAT) as archive:
            for name, data, mode in members:
                info = tarfile.TarInfo(name)
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                if data is None:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(info)
                else:
                    info.size, info.mode = len(data), mode
                    archive.addfile(info, io.BytesIO(data))
        return stream.getvalue()

    parts = entrypoint.strip("/").split("/")
    members = [("/".join(parts[:depth]) + "/", None, 0) for depth in range(1, len(parts))]
    members.append(("/".join(parts), Path(binary).read_bytes(), 0o755))
    layer = tar_bytes(members)
    layer_digest = hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": ARCHITECTURES[arch]["oci"], "os": "linux",
        "config": {"Entrypoint": [entrypoint],
                   "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + layer_digest]},
        "history": [{"created_by": "sandbox/fleet.py image-archive %s" % Path(binary).name}],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [image],
                            "Layers": [layer_digest + "/layer.tar"]}]).encode()
    return tar_bytes([(layer_digest + "/", None, 0), (layer_digest + "/layer.tar", layer, 0o644),
                      (config_name, config, 0o644), ("manifest.json", manifest, 0o644)])


def build_image_archive(binary, image, arch, entrypoint, out_dir=PACKAGES_OUT_DIR):
    """Writes the archive of image into the package directory as <name>_<tag>_linux-<arch>.tar (the
    name an operator gives the `docker save` of it) and refreshes SHA256SUMS; unchanged input leaves
    the file as it is."""
    check_arch(arch)
    if not Path(binary).is_file():
        raise SandboxError("%s is missing; fix: build it first (tests/k8s/build.sh builds the device plugin "
                           "stand-in)" % binary)
    name, separator, tag = image.rpartition(":")
    if not separator or not name or "/" in tag:
        raise SandboxError("%s has no tag; give the image as name:tag" % image)
    out_dir = Path(out_dir)
    target = out_dir / ("%s_%s_linux-%s.tar" % (name.rsplit("/", 1)[-1], tag, arch))
    data = image_archive_bytes(binary, image, arch, entrypoint)
    with state_lock("packages"):
        out_dir.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            partial = target.with_name(target.name + ".partial")
            partial.write_bytes(data)
            partial.rename(target)
        write_checksums(out_dir)
    return target


# Huawei's MindCluster component zips (docs/huawei-sources.md, "MindCluster component packages and
# images"): Ascend-mindxdl-<component>_<version>_linux-<arch>.zip holding, flat, the binary, a
# Dockerfile that copies it (and its JSON files) into ubuntu:22.04, and the manifests. The Dockerfile
# here is the sandbox's own, with the instructions the facts name: FROM, ENV, COPY, RUN.
COMPONENT_ZIPS = {
    "device-plugin": {
        "binary": "device-plugin",
        "data_files": ("faultCode.json", "faultCustomization.json"),
        "manifests": ("device-plugin-910-v{version}.yaml", "device-plugin-310P-v{version}.yaml",
                      "device-plugin-volcano-v{version}.yaml"),
        "image": "ascend-k8sdeviceplugin",
    },
    "npu-exporter": {
        "binary": "npu-exporter",
        "data_files": (),
        "manifests": ("npu-exporter-v{version}.yaml",),
        "image": "npu-exporter",
    },
}
COMPONENT_BASE_IMAGE = "ubuntu:22.04"


def component_dockerfile(binary, data_files):
    lines = ["FROM %s" % COMPONENT_BASE_IMAGE, "",
             "RUN useradd -d /home/HwHiAiUser -u 1000 -m -s /usr/sbin/nologin HwHiAiUser",
             "",
             "ENV LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/driver:"
             "/usr/local/Ascend/driver/lib64/common",
             "",
             "COPY ./%s /usr/local/bin/" % binary]
    lines += ["COPY ./%s /usr/local/" % name for name in data_files]
    lines += ["", "RUN chmod 550 /usr/local/bin/%s" % binary
              + "".join(" && \\\n    chmod 440 /usr/local/%s" % name for name in data_files), ""]
    return "\n".join(lines)


def component_zip_bytes(component, version, arch, binary):
    """The component zip of version and arch with binary inside, byte for byte the same for the same input."""
    spec = COMPONENT_ZIPS[component]
    image = "%s:v%s" % (spec["image"], version)
    members = [(spec["binary"], Path(binary).read_bytes(), 0o500),
               ("Dockerfile", component_dockerfile(spec["binary"], spec["data_files"]).encode(), 0o400)]
    members += [(name, b"{}\n", 0o400) for name in spec["data_files"]]
    for manifest in spec["manifests"]:
        text = ("# sandbox stand-in for Huawei's %s (%s)\napiVersion: apps/v1\nkind: DaemonSet\n"
                "metadata: {name: %s, namespace: kube-system}\n"
                "spec:\n  template:\n    spec:\n      containers:\n      - name: %s\n"
                "        image: %s\n        imagePullPolicy: Never\n"
                % (manifest.format(version=version), arch, component, component, image))
        members.append((manifest.format(version=version), text.encode(), 0o400))
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return stream.getvalue()


def write_package_file(target, data):
    """Writes data at target in the package directory unless it holds it already, and refreshes SHA256SUMS."""
    with state_lock("packages"):
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            partial = target.with_name(target.name + ".partial")
            partial.write_bytes(data)
            partial.rename(target)
        write_checksums(target.parent)
    return target


def build_component_zip(component, version, arch, binary, out_dir=PACKAGES_OUT_DIR):
    """Writes Ascend-mindxdl-<component>_<version>_linux-<arch>.zip into the package directory."""
    check_arch(arch)
    if not Path(binary).is_file():
        raise SandboxError("%s is missing; fix: build it first (tests/k8s/build.sh builds the device plugin "
                           "stand-in)" % binary)
    target = Path(out_dir) / ("Ascend-mindxdl-%s_%s_linux-%s.zip" % (component, version, arch))
    return write_package_file(target, component_zip_bytes(component, version, arch, binary))


def put_container_image(kind, arch, file_name, out_dir=PACKAGES_OUT_DIR):
    """Puts the probe or workload image's docker-archive into the package directory as file_name: the
    workload image as the validation pod's image an operator saves there, or either as the stand-in for the
    base image a component's Dockerfile names (ubuntu:22.04): the workload image where the component's
    stand-in runs npu-smi in its pod (Python), the probe image (busybox) where nothing does."""
    if "/" in file_name or not file_name.endswith(".tar"):
        raise SandboxError("%s: give a plain file name ending in .tar" % file_name)
    archive = build_container_image(kind, arch)
    return write_package_file(Path(out_dir) / file_name, archive.read_bytes())


def write_checksums(out_dir):
    """SHA256SUMS over every package and image archive in out_dir, in sha256sum's format, as the
    roles expect beside them on the controller."""
    lines = []
    for path in sorted(list(Path(out_dir).glob("*.run")) + list(Path(out_dir).glob("*.tar"))
                       + list(Path(out_dir).glob("*.zip"))):
        digest = hashlib.sha256()
        with open(str(path), "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        lines.append("%s  %s\n" % (digest.hexdigest(), path.name))
    atomic_write(Path(out_dir) / "SHA256SUMS", "".join(lines))


# ---------------------------------------------------------------------------------------------
# Command line


def parse_fault_assignments(host, assignments):
    faults = {}
    for assignment in assignments:
        key, separator, value = assignment.partition("=")
        if not separator or not key:
            raise SandboxError("%s: %r is not key=<json value>, e.g. disk_full=true or "
                               "installer_killed_midway='\"driver\"'" % (host, assignment))
        try:
            faults[key] = json.loads(value)
        except ValueError:
            raise SandboxError("%s: the value of %s is not JSON (%r); quote strings as JSON, e.g. "
                               "%s='\"driver\"'" % (host, key, value, key))
    return faults


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fleet.py", description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", default=str(DEFAULT_INVENTORY),
                        help="inventory directory with hosts.yml and host_vars/ (default: %(default)s)")
    commands = parser.add_subparsers(dest="command", required=True)

    image = commands.add_parser("image", help="build the node image if it is missing")
    image.add_argument("--arch", default="x86_64", choices=sorted(ARCHITECTURES))
    image.add_argument("--os", dest="node_os", choices=sorted(NODE_OSES),
                       help="the OS the node presents (default: the base image of sandbox/image/)")
    image.add_argument("--print-name", action="store_true", help="only print the image name for this recipe")

    up = commands.add_parser("up", help="start the inventory's nodes (idempotent)")
    up.add_argument("--limit", help="comma-separated hosts")
    up.add_argument("--recreate", action="store_true", help="replace nodes whose image or hardware changed")
    up.add_argument("--from-bundle", metavar="ARCHIVE",
                    help="make the one node --limit names from a bundle of npu.ascend.collect (its archive, a "
                         "<node>.tar.gz in it, or an unpacked directory): its fake tools answer the recorded reads")
    up.add_argument("--bundle-node", help="with --from-bundle, the node of a fleet archive to replay")

    down = commands.add_parser("down", help="remove the nodes and their state")
    down.add_argument("--limit", help="comma-separated hosts")

    status = commands.add_parser("status", help="table of nodes")
    status.add_argument("--limit", help="comma-separated hosts")

    reboot = commands.add_parser("reboot", help="reboot a node (systemctl reboot inside) and wait")
    reboot.add_argument("host")

    fault = commands.add_parser("fault", help="change a node's injected faults")
    fault_commands = fault.add_subparsers(dest="fault_command", required=True)
    fault_set = fault_commands.add_parser("set", help="set faults: key=<json value> ...")
    fault_set.add_argument("host")
    fault_set.add_argument("assignments", nargs="+", metavar="key=value")
    fault_clear = fault_commands.add_parser("clear", help="clear the named faults (all without keys)")
    fault_clear.add_argument("host")
    fault_clear.add_argument("keys", nargs="*")
    fault_show = fault_commands.add_parser("show", help="print a node's faults.json")
    fault_show.add_argument("host")

    exec_parser = commands.add_parser("exec", help="run a command in a node: exec <host> -- cmd...")
    exec_parser.add_argument("host")
    exec_parser.add_argument("argv", nargs=argparse.REMAINDER)

    commands.add_parser("packages", help="build the fake .run packages the inventory asks for")
    for kind in CONTAINER_IMAGES:
        loader = commands.add_parser("%s-image" % kind,
                                     help="load the %s image into the nodes' containerd and Docker" % kind)
        loader.add_argument("hosts", nargs="*", help="nodes (default: every node of the inventory)")
    commands.add_parser("enable-foreign-arch",
                        help="register qemu-aarch64 in the host's binfmt_misc (opt-in, changes the host)")
    archive = commands.add_parser("image-archive",
                                  help="write a `docker save` archive of a scratch image holding one binary into "
                                       "the package directory, with its sha256 in SHA256SUMS")
    archive.add_argument("--binary", required=True, help="the program the image holds")
    archive.add_argument("--image", required=True, help="the name:tag the archive carries")
    archive.add_argument("--arch", default="x86_64", choices=sorted(ARCHITECTURES))
    archive.add_argument("--entrypoint", default="/usr/local/bin/device-plugin",
                         help="where the binary goes in the image (default: %(default)s)")
    component = commands.add_parser("component-zip",
                                    help="write a MindCluster component zip (binary, Dockerfile, manifests) into the "
                                         "package directory, with its sha256 in SHA256SUMS")
    component.add_argument("--component", default="device-plugin", choices=sorted(COMPONENT_ZIPS))
    component.add_argument("--version", required=True, help="the component's version, e.g. 7.3.0")
    component.add_argument("--binary", required=True, help="the program the zip holds")
    component.add_argument("--arch", default="x86_64", choices=sorted(ARCHITECTURES))
    put_image = commands.add_parser("package-image",
                                    help="put the probe or workload image's docker-archive into the package directory "
                                         "under a file name, with its sha256 in SHA256SUMS")
    put_image.add_argument("--kind", required=True, choices=sorted(CONTAINER_IMAGES))
    put_image.add_argument("--file-name", required=True)
    put_image.add_argument("--arch", default="x86_64", choices=sorted(ARCHITECTURES))

    args = parser.parse_args(argv)
    try:
        if args.command == "image":
            if args.print_name:
                print(image_name(args.arch, args.node_os))
            else:
                print(build_image(args.arch, args.node_os))
            return 0
        if args.command == "enable-foreign-arch":
            enable_foreign_arch()
            return 0
        if args.command == "image-archive":
            print(build_image_archive(args.binary, args.image, args.arch, args.entrypoint))
            return 0
        if args.command == "component-zip":
            print(build_component_zip(args.component, args.version, args.arch, args.binary))
            return 0
        if args.command == "package-image":
            print(put_container_image(args.kind, args.arch, args.file_name))
            return 0
        limit = args.limit.split(",") if getattr(args, "limit", None) else None
        fleet = Fleet.from_inventory(args.inventory, limit)
        if args.command == "up":
            if args.from_bundle:
                fleet.replay_from(args.from_bundle, args.bundle_node)
            started = time.monotonic()
            fleet.up(recreate=args.recreate)
            log("up: %d node(s) ready in %.0f s" % (len(fleet.specs), time.monotonic() - started))
        elif args.command == "down":
            fleet.down()
        elif args.command == "status":
            rows = [("NODE", "STATE", "IMAGE", "RESTARTS", "PRODUCT")] + fleet.status()
            widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
            for row in rows:
                print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        elif args.command == "reboot":
            fleet.spec(args.host)
            before = fleet.reboot(args.host)
            log("%s: rebooted (boot %s -> %s)" % (args.host, before, fleet.boot_marker(args.host)))
        elif args.command == "fault":
            if args.fault_command == "set":
                faults = fleet.update_faults(args.host, parse_fault_assignments(args.host, args.assignments))
            elif args.fault_command == "clear":
                faults = fleet.update_faults(args.host, clear=args.keys)
            else:
                fleet.spec(args.host)
                faults = read_faults(args.host)
            print(json.dumps(faults, sort_keys=True))
        elif args.command == "exec":
            argv_in_node = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
            if not argv_in_node:
                raise SandboxError("%s: nothing to run; usage: fleet.py exec %s -- cmd..." % (args.host, args.host))
            return fleet.exec(args.host, argv_in_node, check=False, interactive=True).returncode
        elif args.command.endswith("-image"):
            kind = args.command[:-len("-image")]
            for host in args.hosts or list(fleet.specs):
                log("%s: %s image %s loaded" % (host, kind, fleet.load_container_image(host, kind)))
        elif args.command == "packages":
            for path in fleet.build_packages():
                print(path)
        return 0
    except SandboxError as error:
        print("fleet: error: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
