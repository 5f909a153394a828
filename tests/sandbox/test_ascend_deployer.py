"""Huawei's own deployer against the simulator: ascend-deployer 26.0.0 (PyPI), issue 41.

Three simulated servers, an Atlas 800I A2, an Atlas 300I Duo and an Atlas 800I A3, each an
openEuler 22.03 LTS x86_64 node (Debian, which the other sandbox nodes present, is not an OS the
deployer runs on: it takes only Debian 10 aarch64). In each node the deployer is installed the way
its PyPI package is meant to be used, `pip install ascend-deployer` (here into a venv, from the
pinned, hash-checked wheels of tests/sandbox/ascend-deployer-requirements.txt), and runs as root
with its default inventory (`localhost ansible_connection='local'`), which is how Huawei's guide
runs it on a single server. What the test proves:

- its NPU detection (the `collect_info` module its playbooks start with) names each product from the
  PCI ids of the simulated sysfs: card, scene and product, and its card names (`910b`, `310p`, `910_93`);
- its pre-check passes on the A2 and the Duo and refuses the A3 because its support table has the A3
  on aarch64 systems only (it recognises the A3 to refuse it);
- with its own opt-out of that check (`--skip_check`) it installs the A3's driver, firmware and CANN
  toolkit from the sandbox's fake packages (Huawei's file names), placed where its `--nocopy` mode reads
  them, `~/resources/run_from_910_93_zip` (the directory its own file-name table picks), and after a
  reboot its `--test` reports the versions, as do npu-smi and the version files our roles read.

One step of the deployer does not run: `PrepareJob.install_basic_dependencies`, which installs unzip,
sshpass, haveged and libselinux's Python module from the OS packages its `ascend-download --os-list`
fetches from openEuler's mirrors. The sandbox has no such mirror and the node lacks all four, so the
runner below replaces that one method (every other step of its command line runs). Without it the
deployer stops at its start with `dpkg: error: cannot access archive
'/root/ascend-deployer/resources/OpenEuler_22.03LTS_x86_64/unzip*.deb'`.
"""
import ast
import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
from conftest import NODE_NAME, REPO_ROOT, load_fleet_module, podman_available  # noqa: E402

fleet = load_fleet_module()

REQUIREMENTS = REPO_ROOT / "tests" / "sandbox" / "ascend-deployer-requirements.txt"
WHEEL_CACHE = REPO_ROOT / ".cache" / "ascend-deployer" / "wheels"
NODE_WHEELS = "/opt/ascend-deployer-wheels"
VENV = "/opt/ascend-deployer"
# Where the deployer copies its playbooks when it runs from site-packages: $HOME/ascend-deployer.
DEPLOYER_HOME = "/root/ascend-deployer"
NODE_PATH = VENV + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
NODE_OS = "openeuler-22.03"
DEPLOYER_OS = "OpenEuler_22.03LTS_x86_64"

# The console script `ascend-deployer` (ascend_deployer.start_deploy:main) with one method replaced,
# the bootstrap of OS packages the sandbox cannot download (module docstring).
RUNNER = """\
import sys
import ascend_deployer.start_deploy as start_deploy
import jobs  # start_deploy puts its own directory on sys.path and imports it so
jobs.PrepareJob.install_basic_dependencies = lambda self: None
sys.argv[0] = "ascend-deployer"
sys.exit(start_deploy.main())
"""
NODE_RUNNER = "/opt/ascend-deployer-runner.py"

NODES = {
    "a2": NODE_NAME + "-adp-a2",
    "duo": NODE_NAME + "-adp-duo",
    "a3": NODE_NAME + "-adp-a3",
}
PRODUCTS = {"a2": "Atlas 800I A2", "duo": "Atlas 300I Duo", "a3": "Atlas 800I A3"}
# What the deployer's card table (module_utils/common_info.py card_map, scenes_dict,
# product_model_dict) and its CheckUtil.get_card make of the simulated PCI ids
# (docs/huawei-sources.md, "What Huawei's deployer reads").
DETECTED = {
    "a2": ({"card": "Atlas 800I A2", "model": "Atlas 800I A2", "scene": "a910b", "product": "Atlas-800I-A2"}, "910b"),
    "duo": ({"card": "A300i-duo", "model": "A300i-duo", "scene": "a300iduo", "product": "Atlas-300i-duo"}, "310p"),
    "a3": ({"card": "Atlas 800I A3", "model": "Atlas 800I A3", "scene": "a910_93", "product": "Atlas-800I-A3"},
           "910_93"),
}
A3_REFUSED = "Check device supports os failed: %s is not supported on this device" % DEPLOYER_OS
CHECK_DETAILS = "For check details, please see ~/.ascend_deployer/deploy_info/check_res_output.json."
A3_DRIVER_VERSION = "25.3.rc1"
A3_FIRMWARE_VERSION = "7.8.0.2.212"
TOOLKIT_VERSION = "8.5.0"
# An installer or a whole deployer run never gets longer than this (they take seconds here).
DEPLOYER_TIMEOUT_SECONDS = 600


def cached_wheels():
    """The pinned wheels, downloaded once into .cache/ascend-deployer/wheels (pip checks every hash)."""
    WHEEL_CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--require-hashes",
         "--no-deps", "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11",
         "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
         "--dest", str(WHEEL_CACHE), "--requirement", str(REQUIREMENTS)],
        check=True, timeout=DEPLOYER_TIMEOUT_SECONDS)
    return WHEEL_CACHE


class DeployerNode(object):
    def __init__(self, nodes, name):
        self.nodes, self.name = nodes, name

    def exec(self, argv, check=True, input=None):
        return self.nodes.exec(self.name, argv, check=check, input=input)

    def copy_in(self, host_path, node_path):
        self.nodes.copy_in(self.name, host_path, node_path)

    def install_deployer(self, wheels):
        self.exec(["rm", "-rf", NODE_WHEELS])
        self.copy_in(wheels, NODE_WHEELS)
        self.copy_in(REQUIREMENTS, NODE_WHEELS + "/requirements.txt")
        pip = [path for path in os.listdir(str(wheels)) if path.startswith("pip-")][0]
        self.exec(["python3", "-m", "venv", "--without-pip", VENV])
        self.exec([VENV + "/bin/python", NODE_WHEELS + "/" + pip + "/pip", "install", "--quiet", "--no-index",
                   "--disable-pip-version-check", "--find-links", NODE_WHEELS, "--require-hashes",
                   "--requirement", NODE_WHEELS + "/requirements.txt"])
        self.exec(["sh", "-c", "cat > " + NODE_RUNNER], input=RUNNER)

    def deployer(self, *arguments, accept_eula=False):
        """Runs the deployer's command line as root in the node; returns (exit status, output)."""
        command = "cd /root && exec timeout %d python3 %s %s 2>&1" % (
            DEPLOYER_TIMEOUT_SECONDS, NODE_RUNNER, " ".join(arguments))
        result = self.exec(["env", "PATH=" + NODE_PATH, "sh", "-c", command], check=False,
                           input="y\n" if accept_eula else "")
        return result.returncode, result.stdout

    def ansible_module(self, module, arguments):
        """One of the deployer's modules through Ansible with the deployer's configuration and inventory."""
        command = ("cd %s && exec ansible -i parsed_inventory_file localhost -o -m %s -a '%s'"
                   % (DEPLOYER_HOME, module, arguments))
        result = self.exec(["env", "PATH=" + NODE_PATH, "ANSIBLE_CONFIG=" + DEPLOYER_HOME + "/ansible.cfg",
                            "ANSIBLE_LOAD_CALLBACK_PLUGINS=0", "sh", "-c", command], check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        line = [line for line in result.stdout.splitlines() if line.startswith("localhost | SUCCESS => ")][-1]
        return json.loads(line.split(" => ", 1)[1])


def check_messages(output):
    """The pre-check's findings as the deployer prints them (its "show check message" task)."""
    match = re.search(r'"check_result\.stdout_lines": \[(.*?)\]', output, re.S)
    assert match, output
    return re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(1))


@pytest.fixture(scope="module")
def deployer_nodes():
    if not podman_available():
        if os.environ.get("CI"):
            pytest.fail("podman is not installed, and CI is set: sandbox tests must run here; run `make deps`")
        pytest.skip("podman is not installed (run `make deps`)")
    wheels = cached_wheels()
    specs = [fleet.NodeSpec(NODES[key], PRODUCTS[key], node_os=NODE_OS) for key in NODES]
    nodes = fleet.Fleet(specs, {})
    nodes.down()
    try:
        nodes.up()
        result = {key: DeployerNode(nodes, NODES[key]) for key in NODES}
        for node in result.values():
            node.install_deployer(wheels)
            # Any first run (even --help) copies its playbooks to ~/ascend-deployer and parses its
            # inventory into parsed_inventory_file, which the module test below reads.
            assert node.deployer("--help")[0] == 0
        yield result
    finally:
        nodes.down()


def test_unchanged_deployer_stops_at_the_os_packages_it_would_download(deployer_nodes):
    """Why the runner replaces install_basic_dependencies: when the nodes get unzip (and the rest),
    this fails and the replacement can go."""
    node = deployer_nodes["a2"]
    result = node.exec(["env", "PATH=" + NODE_PATH, "sh", "-c",
                        "cd /root && timeout %d ascend-deployer --install=npu --check 2>&1" % DEPLOYER_TIMEOUT_SECONDS],
                       check=False)
    assert result.returncode != 0
    assert "/root/ascend-deployer/resources/%s/unzip*" % DEPLOYER_OS in result.stdout, result.stdout


@pytest.mark.parametrize("key", sorted(NODES))
def test_deployer_names_each_product_from_its_pci_ids(deployer_nodes, key):
    facts = deployer_nodes[key].ansible_module("collect_info", "tags=npu")["ansible_facts"]
    npu_info, card = DETECTED[key]
    assert facts["npu_info"] == npu_info
    assert facts["card_info"] == card
    assert facts["os_and_arch"] == DEPLOYER_OS


@pytest.mark.parametrize("key", ["a2", "duo"])
def test_deployer_precheck_passes_on_the_a2_and_the_duo(deployer_nodes, key):
    status, output = deployer_nodes[key].deployer("--install=npu", "--check")
    assert status == 0, output
    assert check_messages(output) == []
    assert "run cmd: --install=npu --check successfully" in output


def test_deployer_precheck_refuses_the_a3_on_x86_64(deployer_nodes):
    status, output = deployer_nodes["a3"].deployer("--install=npu", "--check")
    assert status != 0
    assert check_messages(output) == [A3_REFUSED, CHECK_DETAILS]


def test_deployer_installs_the_a3_from_the_fake_packages(deployer_nodes, tmp_path):
    node = deployer_nodes["a3"]
    packages = testing.load_builder()
    built = [packages.build("driver", "A3", A3_DRIVER_VERSION, "x86_64", False, str(tmp_path)),
             packages.build("firmware", "A3", A3_FIRMWARE_VERSION, "x86_64", False, str(tmp_path)),
             packages.build("toolkit", "A3", TOOLKIT_VERSION, "x86_64", False, str(tmp_path))]
    # Each file goes where the deployer's own table (scripts/pkg_utils.py get_run_dir) puts it.
    for path in built:
        name = os.path.basename(path)
        where = node.exec([VENV + "/bin/python", "-c",
                           "import sys; sys.path.insert(0, %r); from scripts.pkg_utils import get_run_dir; "
                           "print(get_run_dir('/root/resources', sys.argv[1]))" % DEPLOYER_HOME, name]).stdout.strip()
        assert where == ("/root/resources/run_from_cann_zip" if "cann" in name
                         else "/root/resources/run_from_910_93_zip"), name
        node.exec(["mkdir", "-p", where])
        node.copy_in(path, where + "/" + name)

    status, output = node.deployer("--install=npu,toolkit", "--skip_check", "--nocopy", accept_eula=True)
    assert status == 0, output
    assert "[ASCEND] Driver install processing is 100%" in output
    assert "[ASCEND] Firmware install processing is 100%" in output
    assert "Ascend-cann-toolkit_%s_linux-x86_64 install success" % TOOLKIT_VERSION in output
    assert "you need to reboot for the firmware/driver to take effect" in output
    node.nodes.reboot(node.name)

    status, output = node.deployer("--test=driver,firmware,toolkit")
    assert status == 0, output
    report = [line for line in output.splitlines() if line.startswith("{'localhost': ")]
    assert report, output
    assert ast.literal_eval(report[-1]) == {"localhost": {
        "driver": ["OK", A3_DRIVER_VERSION.upper()], "firmware": ["OK", A3_FIRMWARE_VERSION],
        "toolkit": ["OK", TOOLKIT_VERSION]}}

    # What the node reports as after our own install (docs/development.md, "Installed-version files").
    info = node.exec(["npu-smi", "info"]).stdout
    assert "Version: %s" % A3_DRIVER_VERSION in info
    assert info.count("Ascend910") == 16
    devices = node.exec(["sh", "-c", "ls /dev | grep '^davinci[0-9]' | sort -V"]).stdout.split()
    assert devices == ["davinci%d" % number for number in range(16)]
    assert "Version=%s" % A3_DRIVER_VERSION in node.exec(["cat", "/usr/local/Ascend/driver/version.info"]).stdout
    assert "Version=%s" % A3_FIRMWARE_VERSION in node.exec(["cat", "/usr/local/Ascend/firmware/version.info"]).stdout
    toolkit = node.exec(["sh", "-c", "cat /usr/local/Ascend/cann-%s/*-linux/ascend_toolkit_install.info"
                         % TOOLKIT_VERSION]).stdout
    assert "version=%s" % TOOLKIT_VERSION in toolkit

    # Its pre-check over the installed node reads npu-smi's table (every chip's health, the process
    # list) and the device nodes: it finds nothing wrong but the OS it refused before.
    status, output = node.deployer("--install=npu", "--check")
    assert status != 0
    assert check_messages(output) == [A3_REFUSED, CHECK_DETAILS]
