"""Contract tests of a node made from a collected bundle (sandbox/README.md, "Replaying a server").

Two nodes replay the fixture bundles (tests/fixtures/bundles): their fake npu-smi and hccn_tool answer
the recorded reads byte for byte and refuse any other read by name; a write goes to the simulator,
whose addresses and vNPUs start from what the bundle shows, and from then on the simulator answers.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
from conftest import NODE_NAME, REPO_ROOT, load_fleet_module, podman_available  # noqa: E402

BUNDLES = os.path.join(str(REPO_ROOT), "tests", "fixtures", "bundles")
A2, P310 = NODE_NAME + "-replay-a2", NODE_NAME + "-replay-310p"


@pytest.fixture(scope="module")
def replayed():
    if not podman_available():
        if os.environ.get("CI"):
            pytest.fail("podman is not installed, and CI is set: sandbox tests must run here; run `make deps`")
        pytest.skip("podman is not installed (run `make deps`)")
    module = load_fleet_module()
    specs = [module.NodeSpec.from_host_vars(A2, {"sandbox_replay_bundle": os.path.join(BUNDLES, "a2-training-unconfigured-npu")}),
             module.NodeSpec.from_host_vars(P310, {"sandbox_replay_bundle": os.path.join(BUNDLES, "310p-vnpus")})]
    fleet = module.Fleet(specs)
    fleet.down()
    try:
        fleet.up()
        yield fleet
    finally:
        fleet.down()


def _recorded(bundle, name, suffix=".txt"):
    with open(os.path.join(BUNDLES, bundle, "commands", name + suffix)) as handle:
        return handle.read()


def test_the_recorded_reads_come_back_byte_for_byte(replayed):
    info = replayed.exec(A2, ["npu-smi", "info"])
    assert info.stdout == _recorded("a2-training-unconfigured-npu", "npu-smi info") and info.returncode == 0
    unset = replayed.exec(A2, ["hccn_tool", "-i", "7", "-ip", "-g"], check=False)
    assert (unset.returncode, unset.stdout, unset.stderr) == (13, "", "Get ipconf failed, because no ip was preset there!\n")
    vnpus = replayed.exec(P310, ["npu-smi", "info", "-t", "info-vnpu", "-i", "32896", "-c", "0"])
    assert vnpus.stdout == _recorded("310p-vnpus", "npu-smi info -t info-vnpu -i 32896 -c 0")


def test_the_node_looks_like_the_server(replayed):
    lspci = replayed.exec(A2, ["lspci", "-nn", "-d", "19e5:"]).stdout
    assert lspci.count("[19e5:d802] (rev 20)") == 8 and "c1:00.0" in lspci
    assert replayed.exec(A2, ["sh", "-c", "ls /dev | grep -c '^davinci[0-9]'"]).stdout.strip() == "8"
    assert "Version=24.1.rc2" in replayed.exec(A2, ["cat", "/usr/local/Ascend/driver/version.info"]).stdout
    assert replayed.exec(P310, ["test", "-e", "/usr/local/bin/hccn_tool"], check=False).returncode == 1


def test_a_read_the_bundle_lacks_is_refused_by_name(replayed):
    board = replayed.exec(P310, ["npu-smi", "info", "-t", "board", "-i", "32896"], check=False)
    assert board.returncode == 2 and board.stdout == ""
    assert board.stderr.startswith("not in the bundle: npu-smi info -t board -i 32896 (")


def test_an_address_set_there_starts_from_the_bundles(replayed):
    replayed.exec(A2, ["hccn_tool", "-i", "7", "-ip", "-s", "address", "10.0.0.17", "netmask", "255.255.255.0"])
    assert replayed.exec(A2, ["hccn_tool", "-i", "7", "-ip", "-g"]).stdout == "ipaddr:10.0.0.17\nnetmask:255.255.255.0\n"
    # The simulator now answers hccn_tool, with the other NPUs' addresses as the bundle showed them.
    assert "ipaddr:10.0.0.10" in replayed.exec(A2, ["hccn_tool", "-i", "0", "-ip", "-g"]).stdout
    refused = replayed.exec(A2, ["hccn_tool", "-i", "6", "-ip", "-s", "address", "10.0.0.10", "netmask", "255.255.255.0"],
                            check=False)
    assert refused.returncode != 0
    assert json.loads(replayed.exec(A2, ["cat", "/var/lib/ascend-sandbox/replay-diverged.json"]).stdout) == ["hccn_tool"]
    # npu-smi still answers from the bundle.
    assert replayed.exec(A2, ["npu-smi", "info"]).stdout == _recorded("a2-training-unconfigured-npu", "npu-smi info")


def test_a_vnpu_made_there_joins_the_bundles(replayed):
    replayed.exec(P310, ["npu-smi", "set", "-t", "create-vnpu", "-i", "32896", "-c", "0", "-f", "vir01"])
    table = replayed.exec(P310, ["npu-smi", "info", "-t", "info-vnpu", "-i", "32896", "-c", "0"]).stdout
    assert "Total number of vnpu: 4" in table
    assert [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("|  10")] == ["100", "101", "102", "103"]
    assert replayed.exec(P310, ["npu-smi", "info"]).stdout == _recorded("310p-vnpus", "npu-smi info")


class _Node(object):
    """What testing's package helpers drive: exec and copy_in of one node."""

    def __init__(self, fleet, name):
        self.fleet, self.name = fleet, name

    def exec(self, argv, check=True, input=None):
        return self.fleet.exec(self.name, argv, check=check, input=input)

    def copy_in(self, host_path, node_path):
        self.fleet.copy_in(self.name, host_path, node_path)


def test_an_upgrade_there_leaves_the_bundle_for_the_simulator(replayed, tmp_path):
    node = _Node(replayed, A2)
    testing.install_packages_into_node(node, tmp_path, [testing.NODE_PACKAGES[0]])
    testing.prepare_driver_prerequisites(node)
    # The fake installer finds the bundle's driver 24.1.rc2 (its version file) and upgrades it.
    run = testing.run_package(node, testing.DRIVER, "--nox11", "--upgrade", "--quiet", expect=0)
    assert "[INFO]base version is 24.1.rc2." in run.stdout and "Reboot needed" in run.stdout, run.stdout
    pending = replayed.exec(A2, ["npu-smi", "info"], check=False)
    assert pending.returncode == 1 and "-8005" in pending.stdout
    replayed.reboot(A2)
    assert "Version: 25.0.rc1.1" in replayed.exec(A2, ["npu-smi", "info"]).stdout
