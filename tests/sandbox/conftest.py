"""pytest fixtures that run contract tests inside one real sandbox node.

`sandbox_node` (session scope) starts the node `pytest-node-a2` (Atlas 800I A2, 8 x 910B4,
x86_64; the env var SANDBOX_PYTEST_NODE overrides the name) with sandbox/fleet.py and removes
it at the end. Call `sandbox_node.reset()` at the start of a test to get a bare node again (no
Huawei software, no device nodes, no faults) without paying for a new container.

Without podman the tests are skipped, except under CI (env CI set), where that is an error.
"""
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# Two pytest sessions at once (e.g. a developer and CI on one machine) need different names.
NODE_NAME = os.environ.get("SANDBOX_PYTEST_NODE", "pytest-node-a2")


def load_fleet_module():
    spec = importlib.util.spec_from_file_location("npu_ascend_sandbox_fleet", str(REPO_ROOT / "sandbox" / "fleet.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# What the Huawei packages leave on a node (facts reference section 4) plus the sandbox's own
# simulated state; the kernel headers repository stays, it belongs to the "distribution".
SOFTWARE_PATHS = [
    "/usr/local/Ascend",
    "/usr/local/dcmi",
    "/etc/ascend_install.info",
    "/var/log/ascend_seclog",
    "/usr/local/sbin/npu-smi",
    "/usr/local/bin/npu-smi",
    "/var/lib/npu_ascend",
]
RESET_SCRIPT = r"""
set -e
rm -rf {paths}
find /var/lib/ascend-sandbox -mindepth 1 -maxdepth 1 ! -name apt ! -name 'apt-publish*' -exec rm -rf {{}} +
rm -f /dev/davinci* /dev/devmm_svm /dev/hisi_hdc
""".format(paths=" ".join(SOFTWARE_PATHS))


class SandboxNode:
    """A running sandbox node, driven through podman."""

    def __init__(self, fleet, name):
        self._fleet = fleet
        self.name = name

    def exec(self, argv, check=True, input=None):
        """Runs argv (a list) as root in the node; returns the CompletedProcess (text mode)."""
        return self._fleet.exec(self.name, argv, check=check, input=input)

    def copy_in(self, host_path, node_path):
        self._fleet.copy_in(self.name, host_path, node_path)

    def set_faults(self, faults):
        """Replaces the node's faults.json (keys in docs/development.md)."""
        self._fleet.set_faults(self.name, faults)

    def boot_marker(self):
        return self._fleet.boot_marker(self.name)

    def reboot(self, wait=True):
        """`systemctl reboot` inside; with wait, returns once a new boot has reached `running`."""
        self._fleet.reboot(self.name, wait=wait)

    def reset(self):
        """Back to a bare node: no Huawei software, no simulated driver/firmware state, no faults."""
        self.set_faults({})
        self.exec(["sh", "-c", RESET_SCRIPT])


def podman_available():
    return shutil.which("podman") is not None


@pytest.fixture(scope="session")
def sandbox_node():
    if not podman_available():
        if os.environ.get("CI"):
            pytest.fail("podman is not installed, and CI is set: sandbox tests must run here; run `make deps`")
        pytest.skip("podman is not installed (run `make deps`); sandbox contract tests skipped")
    fleet_module = load_fleet_module()
    spec = fleet_module.NodeSpec(NODE_NAME, "Atlas 800I A2", chip_name="910B4", npu_count=8,
                                 chips_per_npu=1, arch="x86_64")
    fleet = fleet_module.Fleet([spec])
    try:
        # A node left over by an interrupted session would carry unknown state.
        fleet.down()
        fleet.up()
    except fleet_module.SandboxError as error:
        fleet.down()
        pytest.fail("could not start the sandbox node: %s" % error)
    try:
        yield SandboxNode(fleet, NODE_NAME)
    finally:
        fleet.down()


@pytest.fixture(scope="session")
def node_packages(sandbox_node, tmp_path_factory):
    """The fake packages the contract tests run, built once and copied into the session's node."""
    sys.path.insert(0, str(REPO_ROOT / "sandbox" / "packages"))
    import testing  # pylint: disable=import-outside-toplevel  # lives beside the builder it drives
    return testing.install_packages_into_node(sandbox_node, tmp_path_factory.mktemp("packages"), testing.NODE_PACKAGES)
