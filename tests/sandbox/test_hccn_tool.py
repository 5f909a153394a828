"""Contract tests of the fake hccn_tool and the NPU fabric between two training nodes.

Two Atlas 800T A2 nodes on one fabric (sandbox_fabric) get the fake driver; expected strings are
Huawei's (docs/hccn.md, tests/fixtures/samples/hccn), read back with the collection's parsers.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402
from conftest import NODE_NAME, load_fleet_module, podman_available  # noqa: E402

hccn = collection_code.load_module_utils("hardware.hccn_tool")

FIRST, SECOND = NODE_NAME + "-t1", NODE_NAME + "-t2"
FABRIC = NODE_NAME + "-fabric"
GATEWAY = "10.20.0.1"
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"


class Node(object):
    def __init__(self, fleet, name):
        self.fleet, self.name = fleet, name

    def exec(self, argv, check=True, input=None):
        return self.fleet.exec(self.name, argv, check=check, input=input)

    def copy_in(self, host_path, node_path):
        self.fleet.copy_in(self.name, host_path, node_path)

    def hccn(self, *args, expect=0):
        result = self.exec(["hccn_tool"] + list(args), check=False)
        assert result.returncode == expect, (args, result.returncode, result.stdout, result.stderr)
        return result.stdout

    def faults(self, **faults):
        self.fleet.set_faults(self.name, faults)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    if not podman_available():
        pytest.skip("podman is not installed (run `make deps`)")
    module = load_fleet_module()
    specs = [module.NodeSpec(name, "Atlas 800T A2", npu_count=8, fabric=FABRIC) for name in (FIRST, SECOND)]
    fleet = module.Fleet(specs, {FIRST: {"sandbox_fabric_answering": [GATEWAY]}})
    fleet.down()
    try:
        fleet.up()
        nodes = [Node(fleet, spec.name) for spec in specs]
        packages = tmp_path_factory.mktemp("hccn-packages")
        for node in nodes:
            testing.install_packages_into_node(node, packages, [testing.NODE_PACKAGES[0]])
            testing.prepare_driver_prerequisites(node)
            testing.run_package(node, testing.DRIVER, "--nox11", "--full", "--quiet", expect=0)
            fleet.reboot(node.name)
        yield nodes
    finally:
        fleet.down()


def configure(node, base):
    for npu in range(8):
        node.hccn("-i", str(npu), "-ip", "-s", "address", "10.20.0.%d" % (base + npu), "netmask", "255.255.255.0")
        node.hccn("-i", str(npu), "-netdetect", "-s", "address", GATEWAY)
        node.hccn("-i", str(npu), "-gateway", "-s", "gateway", GATEWAY)


def test_installed_where_huawei_puts_it(fabric):
    first = fabric[0]
    assert first.exec(["readlink", "/usr/local/bin/hccn_tool"]).stdout.strip() == TOOL
    assert first.exec(["stat", "-c", "%U:%G %a", "/etc/hccn.conf"]).stdout.strip() == "root:root 640"


@pytest.mark.parametrize("command,code,error", [
    ("-ip", 13, "Get ipconf failed, because no ip was preset there!"),
    ("-gateway", 2, "Get gateway failed, because no gateway was preset there!"),
])
def test_a_fresh_npu_answers_as_a_real_one(fabric, command, code, error):
    # A real 910B3 on driver 25.5.1 (docs/hccn.md): no address and no gateway, each Huawei's error on stderr
    # with the code main() returns for it.
    result = fabric[0].exec(["hccn_tool", "-i", "0", command, "-g"], check=False)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", error + "\n")
    assert hccn.says_not_preset("address" if command == "-ip" else "gateway", result.stderr)


def test_a_fresh_npu_has_no_detect_address_and_is_init(fabric):
    first = fabric[0]
    assert hccn.parse_netdetect(first.hccn("-i", "0", "-netdetect", "-g")) is None
    assert hccn.parse_net_health(first.hccn("-i", "0", "-net_health", "-g")) == "Init"
    assert hccn.parse_link(first.hccn("-i", "0", "-link", "-g")) == "UP"


def test_configure_read_back_and_save(fabric):
    first, second = fabric
    configure(first, 10)
    configure(second, 20)
    assert hccn.parse_ip(first.hccn("-i", "3", "-ip", "-g")) == {"address": "10.20.0.13", "netmask": "255.255.255.0"}
    assert hccn.parse_netdetect(first.hccn("-i", "3", "-netdetect", "-g")) == GATEWAY
    assert hccn.parse_gateway(first.hccn("-i", "3", "-gateway", "-g")) == GATEWAY
    assert hccn.parse_net_health(first.hccn("-i", "3", "-net_health", "-g")) == "Success"
    conf = hccn.parse_hccn_conf(first.exec(["cat", "/etc/hccn.conf"]).stdout)
    assert conf[3] == {"address": "10.20.0.13", "netmask": "255.255.255.0", "netdetect": GATEWAY, "gateway": GATEWAY}
    assert first.exec(["stat", "-c", "%U:%G %a", "/etc/hccn.conf"]).stdout.strip() == "root:root 640"


def test_ping_depends_on_the_other_node(fabric):
    first, second = fabric
    ping = hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.25"))
    assert (ping["npu"], ping["target"], ping["received"], ping["loss_pct"]) == (0, "10.20.0.25", 3, 0.0)
    # Nobody holds .99: lost.
    assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.99"))["loss_pct"] == 100.0
    second.hccn("-i", "5", "-ip", "-s", "address", "10.20.0.99", "netmask", "255.255.255.0")
    assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.99"))["received"] == 3
    assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.25"))["received"] == 0
    second.hccn("-i", "5", "-ip", "-s", "address", "10.20.0.25", "netmask", "255.255.255.0")


@pytest.mark.parametrize("address", ["192.168.1.5", "192.168.2.200"])
def test_reserved_ranges_are_refused(fabric, address):
    out = fabric[0].hccn("-i", "1", "-ip", "-s", "address", address, "netmask", "255.255.255.0", expect=1)
    assert "conflict" in out
    assert hccn.parse_ip(fabric[0].hccn("-i", "1", "-ip", "-g"))["address"] == "10.20.0.11"


def test_same_address_on_two_npus_of_a_node_is_refused(fabric):
    fabric[0].hccn("-i", "1", "-ip", "-s", "address", "10.20.0.12", "netmask", "255.255.255.0", expect=1)


def test_lldp_shows_the_switch_port(fabric):
    assert hccn.parse_lldp_ifname(fabric[0].hccn("-i", "0", "-lldp", "-g")) == "400GE1/1/1:1"
    assert hccn.parse_lldp_ifname(fabric[1].hccn("-i", "3", "-lldp", "-g")) == "400GE1/1/6:2"


def test_link_down_fault(fabric):
    first, second = fabric
    second.faults(hccn_link_down=[2])
    try:
        assert hccn.parse_link(second.hccn("-i", "2", "-link", "-g")) == "DOWN"
        assert hccn.parse_net_health(second.hccn("-i", "2", "-net_health", "-g")) == "Fault"
        # No link, no LLDP frame from the switch.
        assert "lldp info is not available" in second.hccn("-i", "2", "-lldp", "-g", expect=1)
        # Seen from the other node: its address no longer answers.
        assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.22"))["received"] == 0
    finally:
        second.faults()
    assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.22"))["received"] == 3


def test_swapped_cables(fabric):
    first, second = fabric
    second.faults(hccn_swapped_cables=[[0, 1]])
    try:
        assert hccn.parse_lldp_ifname(second.hccn("-i", "0", "-lldp", "-g")) == "400GE1/1/5:2"
        assert hccn.parse_net_health(second.hccn("-i", "0", "-net_health", "-g")) == "Success"
        assert hccn.parse_ping(first.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.21"))["received"] == 0
        assert hccn.parse_ping(second.hccn("-i", "1", "-ping", "-g", "address", "10.20.0.10"))["received"] == 0
    finally:
        second.faults()


@pytest.mark.parametrize("status", hccn.NET_HEALTH_STATUSES)
def test_net_health_fault_prints_every_status(fabric, status):
    fabric[0].faults(hccn_net_health={"4": status})
    try:
        assert hccn.parse_net_health(fabric[0].hccn("-i", "4", "-net_health", "-g")) == status
    finally:
        fabric[0].faults()


def test_detect_address_unanswered(fabric):
    fabric[0].faults(hccn_detect_unanswered=True)
    try:
        assert hccn.parse_net_health(fabric[0].hccn("-i", "6", "-net_health", "-g")) == "Receive timeout"
    finally:
        fabric[0].faults()


def test_address_conflict_between_nodes(fabric):
    first, second = fabric
    second.hccn("-i", "7", "-ip", "-s", "address", "10.20.0.10", "netmask", "255.255.255.0")
    try:
        assert hccn.parse_net_health(first.hccn("-i", "0", "-net_health", "-g")) == "Fault"
        assert hccn.parse_ping(second.hccn("-i", "0", "-ping", "-g", "address", "10.20.0.10"))["received"] == 0
    finally:
        second.hccn("-i", "7", "-ip", "-s", "address", "10.20.0.27", "netmask", "255.255.255.0")


def test_reboot_restores_from_hccn_conf(fabric):
    first = fabric[0]
    first.fleet.reboot(first.name)
    assert hccn.parse_ip(first.hccn("-i", "3", "-ip", "-g"))["address"] == "10.20.0.13"
    assert hccn.parse_net_health(first.hccn("-i", "3", "-net_health", "-g")) == "Success"
