"""Helpers for the contract tests of the fake packages (tests/sandbox/test_packages_*.py,
tests/sandbox/test_npu_smi.py): hardware descriptions rebuilt from the real npu-smi samples,
building packages, and reading installer output as a terminal shows it.

The renderer tests feed the rebuilt hardware to the fake npu-smi and expect the sample back
byte for byte, so the values here are read out of the sample tables themselves, cell by cell.
"""
import importlib.util
import os
import sys

PACKAGES_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGES_DIR))
SAMPLES_ROOT = os.path.join(REPO_ROOT, "tests", "fixtures", "samples")
SAMPLES_DIR = os.path.join(SAMPLES_ROOT, "npu-smi")
PAYLOAD_DIR = os.path.join(PACKAGES_DIR, "payload")


def load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_builder():
    return load_by_path("npu_ascend_package_builder", os.path.join(PACKAGES_DIR, "build.py"))


def load_npu_smi():
    """The fake npu-smi as a module (its ascend_sim import is satisfied from the payload)."""
    if PAYLOAD_DIR not in sys.path:
        sys.path.insert(0, PAYLOAD_DIR)
    return load_by_path("npu_ascend_fake_npu_smi", os.path.join(PAYLOAD_DIR, "npu_smi.py"))


def terminal_text(text):
    """Output as a terminal shows it: makeself draws its progress with backspaces."""
    lines = []
    for raw_line in text.split("\n"):
        line = []
        cursor = 0
        for character in raw_line:
            if character == "\b":
                cursor = max(cursor - 1, 0)
                continue
            if cursor < len(line):
                line[cursor] = character
            else:
                line.append(character)
            cursor += 1
        lines.append("".join(line))
    return "\n".join(lines)


def read_sample_file(*parts):
    with open(os.path.join(SAMPLES_ROOT, *parts)) as handle:
        return handle.read()


def read_sample(name):
    with open(os.path.join(SAMPLES_DIR, name)) as handle:
        return handle.read()


def _cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _number(text):
    text = text.strip()
    if text in ("NA", "-"):
        return None
    return float(text) if "." in text else int(text)


def _pair(text):
    used, total = text.split("/")
    return int(used), int(total)


def hardware_from_info_sample(name, chip_family, **extra):
    """Reads the chip rows of an ``npu-smi info`` sample back into a hardware.json dict."""
    lines = read_sample(name).splitlines()
    rows = [line for line in lines if line.startswith("| ") and line.count("|") == 4]
    chip_rows = [row for row in rows if not row.startswith(("| NPU ", "| Chip "))]
    npus = []
    for first, second in zip(chip_rows[0::2], chip_rows[1::2]):
        npu_name, health, power_temp_pages = _cells(first)
        chip_device, bus_id, usage = _cells(second)
        npu_id, chip_name = npu_name.split(None, 1)
        power, temp, pages = power_temp_pages.split(None, 2)
        chip_fields = chip_device.split()
        chip = {"chip_id": int(chip_fields[0]), "bus_id": None if bus_id == "NA" else bus_id,
                "health": health, "power_w": _number(power), "temp_c": int(temp), "name": chip_name}
        if power == "-":
            chip["power_w"] = "-"
        chip["hugepages_used"], chip["hugepages_total"] = _pair(pages)
        if len(chip_fields) > 1:
            key = "phy_id" if chip_family == "A3" else "device_id"
            chip[key] = int(chip_fields[1])
        aicore, rest = usage.split(None, 1)
        chip["aicore_pct"] = int(aicore)
        if chip_family in ("310p", "310b"):
            chip["memory_used_mb"], chip["memory_total_mb"] = _pair(rest)
        else:
            used, total_and_hbm = rest.split("/", 1)
            total, hbm = total_and_hbm.split(None, 1)
            chip["memory_used_mb"], chip["memory_total_mb"] = int(used), int(total)
            chip["hbm_used_mb"], chip["hbm_total_mb"] = _pair(hbm)
        npu_id = int(npu_id)
        if not npus or npus[-1]["npu_id"] != npu_id:
            npus.append({"npu_id": npu_id, "chips": []})
        npus[-1]["chips"].append(chip)
    hardware = {"chip_family": chip_family, "chip_name": npus[0]["chips"][0]["name"], "npus": npus}
    hardware.update(extra)
    return hardware


def versions_of_info_sample(name):
    banner = read_sample(name).splitlines()[1]
    tool_part, driver_part = banner.strip("| ").split("Version:")
    return tool_part.split()[1], driver_part.split()[0]


# --- running packages inside a sandbox node (tests/sandbox/conftest.py's sandbox_node) ------

NODE_PACKAGE_DIR = "/opt/npu-ascend-test-packages"

# (component, chip, version, arch, soc) built once per test module and copied into the node
NODE_PACKAGES = [
    ("driver", "910b", "25.0.rc1.1", "x86_64", False),
    ("driver", "910b", "24.1.rc2.2", "x86_64", False),
    ("driver", "910b", "25.0.rc1.1", "aarch64", False),
    ("driver", "310b", "25.0.rc1.1", "aarch64", True),
    ("firmware", "910b", "7.7.0.1.231", "x86_64", False),
    ("toolkit", "910b", "8.2.RC1", "x86_64", False),
    ("toolkit", "910b", "8.2.RC1", "aarch64", False),
    ("toolkit", "910b", "8.5.0", "x86_64", False),
    ("kernels", "910b", "8.2.RC1", "x86_64", False),
    ("ops", "910b", "8.5.0", "x86_64", False),
    ("nnal", "910b", "8.2.RC1", "x86_64", False),
    ("docker_runtime", "910b", "7.3.0", "x86_64", False),
    ("docker_runtime", "910b", "26.1.0", "x86_64", False),
]
DRIVER = "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run"
OLD_DRIVER = "Ascend-hdk-910b-npu-driver_24.1.rc2.2_linux-x86-64.run"
ARM_DRIVER = "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run"
SOC_DRIVER = "Ascend-hdk-310b-npu-driver-soc_25.0.rc1.1_linux-aarch64.run"
FIRMWARE = "Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run"
TOOLKIT = "Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run"
ARM_TOOLKIT = "Ascend-cann-toolkit_8.2.RC1_linux-aarch64.run"
TOOLKIT_85 = "Ascend-cann-toolkit_8.5.0_linux-x86_64.run"
KERNELS = "Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64.run"
OPS = "Ascend-cann-910b-ops_8.5.0_linux-x86_64.run"
NNAL = "Ascend-cann-nnal_8.2.RC1_linux-x86_64.run"
DOCKER_RUNTIME = "Ascend-docker-runtime_7.3.0_linux-x86_64.run"
DOCKER_RUNTIME_EULA = "Ascend-docker-runtime_26.1.0_linux-x86_64.run"


def install_packages_into_node(node, host_dir, packages):
    builder = load_builder()
    node.exec(["mkdir", "-p", NODE_PACKAGE_DIR])
    names = []
    for component, chip, version, arch, soc in packages:
        path = builder.build(component, chip, version, arch, soc, str(host_dir))
        node.copy_in(path, NODE_PACKAGE_DIR + "/" + os.path.basename(path))
        names.append(os.path.basename(path))
    # Readable by everyone: one test runs a package as an unprivileged user.
    node.exec(["chmod", "-R", "a+rX", NODE_PACKAGE_DIR])
    return names


def prepare_driver_prerequisites(node):
    """What the roles set up before a driver install: HwHiAiUser and the running kernel's headers."""
    node.exec(["sh", "-c", "getent group HwHiAiUser >/dev/null || groupadd HwHiAiUser; "
                           "getent passwd HwHiAiUser >/dev/null || "
                           "useradd -g HwHiAiUser -d /home/HwHiAiUser -m HwHiAiUser -s /bin/bash"])
    node.exec(["sh", "-c", "test -e /lib/modules/$(uname -r)/build || "
                           "DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-headers-$(uname -r)"])


class PackageRun(object):
    """A package run in a node: exit code, stdout as a terminal shows it, and its lines."""

    def __init__(self, result):
        self.returncode = result.returncode
        self.raw_stdout = result.stdout
        self.stderr = result.stderr
        self.stdout = terminal_text(result.stdout)
        self.lines = self.stdout.splitlines()

    def messages(self):
        """The installer lines without the ``[Driver] [timestamp] `` prefix."""
        import re
        return [re.sub(r"^\[[^\]]+\] \[[0-9: -]+\] ", "", line) for line in self.lines]


UNPRIVILEGED = ("65534", "65534")  # nobody:nogroup


def run_package(node, name, *args, expect=None, input=None, path=None, user=None):
    """Runs a package in the node with stderr merged into stdout, as a terminal interleaves them."""
    argv = [NODE_PACKAGE_DIR + "/" + name] + list(args)
    if path is not None:
        argv = ["env", "PATH=" + path] + argv
    if user is not None:
        argv = ["setpriv", "--reuid=" + user[0], "--regid=" + user[1], "--clear-groups"] + argv
    argv = ["sh", "-c", 'exec "$@" 2>&1', "run-package"] + argv
    run = PackageRun(node.exec(argv, check=False, input=input))
    if expect is not None:
        assert run.returncode == expect, ("exit %d, expected %d:\n%s\n%s"
                                          % (run.returncode, expect, run.stdout, run.stderr))
    return run


def path_without(node, *tools):
    """A PATH in the node that offers every command except ``tools`` (to simulate missing tools)."""
    directory = "/tmp/path-without-" + "-".join(tools)
    node.exec(["sh", "-c", "rm -rf {d} && mkdir -p {d} && for f in /usr/sbin/* /usr/bin/*; do "
                           "n=$(basename $f); case \" {tools} \" in *\" $n \"*) ;; *) ln -sf $f {d}/$n ;; esac; "
                           "done".format(d=directory, tools=" ".join(tools))])
    return directory


def read_node_file(node, path):
    return node.exec(["cat", path]).stdout


def node_path_exists(node, path):
    return node.exec(["sh", "-c", "test -e '%s' || test -L '%s'" % (path, path)], check=False).returncode == 0
