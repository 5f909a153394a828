"""Contract tests of the simulated Atlas A3 (Ascend 910C, "910_93"): issue 41.

Host part: the hardware fleet.py describes for an Atlas 800T A3 / 800I A3 (PCI functions, fake
sysfs), what the fake npu-smi and hccn_tool print for it, and the A3 package names. Expected
values are the facts of docs/huawei-sources.md ("Atlas A3"): [OUT] captures where one exists.
Node part (test_node_*): one A3 node with its real lspci, /dev/davinci0..15 and npu-smi.
"""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402
from conftest import NODE_NAME, load_fleet_module, podman_available  # noqa: E402

fleet = load_fleet_module()
npu_smi = testing.load_npu_smi()
hccn_tool = testing.load_by_path("npu_ascend_fake_hccn_tool", os.path.join(testing.PAYLOAD_DIR, "hccn_tool.py"))
builder = testing.load_builder()
# The collection's parsers, to hold the fake tools to what the product reads (the simulator never imports them).
product_hccn = collection_code.load_module_utils("hardware.hccn_tool")
product_super_pod = collection_code.load_module_utils("hardware.super_pod")

# Bus ids of every Kunpeng-host A3 captured, in Phy-ID order (vllm-ascend #2971 and others).
A3_BUS_IDS = ["0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0", "0000:9B:00.0", "0000:95:00.0", "0000:97:00.0",
              "0000:91:00.0", "0000:93:00.0", "0000:8D:00.0", "0000:8F:00.0", "0000:89:00.0", "0000:8B:00.0",
              "0000:85:00.0", "0000:87:00.0", "0000:81:00.0", "0000:83:00.0"]
A3_SAMPLE = "Ascend910-A3_24.1.rc3.7_info.txt"


def a3(product="Atlas 800T A3", **super_pod):
    return fleet.NodeSpec("a3-test", product, super_pod=super_pod or None)


# --- hardware and sysfs ---------------------------------------------------------------------------

@pytest.mark.parametrize("product, subsystem", [("Atlas 800T A3", "0x3001"), ("Atlas 800I A3", "0x3003")])
def test_a3_has_16_d803_functions_two_per_npu(tmp_path, product, subsystem):
    spec = a3(product)
    hardware = spec.hardware()
    assert hardware["chip_family"] == "A3" and hardware["pci_device"] == "d803"
    assert [npu["npu_id"] for npu in hardware["npus"]] == list(range(8))
    chips = [chip for npu in hardware["npus"] for chip in npu["chips"]]
    assert [chip["bus_id"] for chip in chips] == A3_BUS_IDS
    assert [chip["phy_id"] for chip in chips] == list(range(16))
    assert all(chip["hbm_total_mb"] == 65536 for chip in chips)
    assert [chip["power_w"] == "-" for chip in chips] == [False, True] * 8
    fleet.write_fake_sysfs(spec, tmp_path)
    assert sorted(os.listdir(tmp_path)) == sorted(bus.lower() for bus in A3_BUS_IDS)
    function = tmp_path / "0000:9f:00.0"
    assert {name: (function / name).read_text().strip() for name in
            ("vendor", "device", "subsystem_vendor", "subsystem_device", "revision", "class")} == {
        "vendor": "0x19e5", "device": "0xd803", "subsystem_vendor": "0x19e5", "subsystem_device": subsystem,
        "revision": "0x20", "class": "0x120000"}
    config = (function / "config").read_bytes()
    assert config[0:4] == bytes([0xe5, 0x19, 0x03, 0xd8]) and config[8] == 0x20
    assert config[0x2e:0x30] == int(subsystem, 16).to_bytes(2, "little")


def test_super_pod_membership_is_a_node_variable():
    spec = fleet.NodeSpec.from_host_vars("a3-pod", {"sandbox_product": "Atlas 800T A3",
                                                    "sandbox_super_pod": {"id": 1, "server_index": 40}})
    hardware = spec.hardware()
    assert hardware["super_pod"] == {"id": 1, "server_index": 40, "size": 384}
    assert hardware["main_board_id"] == "0x18"
    assert "super_pod" not in a3().hardware() and a3().hardware()["main_board_id"] is None
    for wrong in ({"server_index": 48}, {"id": 0}, {"server_index": 1, "rack": 2}):
        with pytest.raises(fleet.SandboxError):
            fleet.NodeSpec("a3-pod", "Atlas 800T A3", super_pod=wrong)
    with pytest.raises(fleet.SandboxError):
        fleet.NodeSpec("a2", "Atlas 800I A2", super_pod={"server_index": 1})
    # An A3 joins a fabric (one port per die: test_a3_nodes_join_a_fabric_one_port_per_die); a card without
    # RoCE ports does not.
    assert fleet.NodeSpec("a3", "Atlas 800T A3", fabric="f1").fabric == "f1"
    with pytest.raises(fleet.SandboxError):
        fleet.NodeSpec("duo", "Atlas 300I Duo", fabric="f1")


# --- npu-smi ----------------------------------------------------------------------------------------

def test_info_prints_the_a3_table_of_the_capture():
    sample = testing.read_sample(A3_SAMPLE).splitlines()
    tool_version, driver_version = testing.versions_of_info_sample(A3_SAMPLE)
    rendered = npu_smi.render_info(a3().hardware(), driver_version, tool_version).splitlines()
    # Header, NPU 0's first die, the rule between its dies and the "-" power of its second die.
    assert rendered[:9] == sample[:9]
    assert rendered[9] == sample[9].replace("| -           36", "| -           37")
    assert rendered[10:12] == sample[10:12]
    assert rendered[12] == "| 1     Ascend910           | OK            | 178.7       37                0    / 0             |"
    assert rendered[13].startswith("| 0     2                   | 0000:99:00.0  |")
    assert len([line for line in rendered if "Ascend910" in line]) == 16


def test_mapping_has_phy_ids_and_the_mcu_at_chip_2():
    lines = npu_smi.render_info_mapping(a3().hardware()).splitlines()
    assert lines[0].split() == ["NPU", "ID", "Chip", "ID", "Chip", "Logic", "ID", "Chip", "Phy-ID", "Chip", "Name"]
    assert [line.split() for line in lines[1:4]] == [
        ["0", "0", "0", "0", "Ascend910"], ["0", "1", "1", "1", "Ascend910"], ["0", "2", "-", "-", "Mcu"]]
    assert lines[-2].split() == ["7", "1", "15", "15", "Ascend910"] and len(lines) == 1 + 8 * 3


def test_list_counts_eight_npus_of_two_chips():
    text = npu_smi.render_info_list(a3().hardware())
    assert "Total Count                    : 8" in text
    assert text.count("Chip Count                     : 2") == 8


@pytest.mark.parametrize("product, npu_name", [("Atlas 800T A3", "9392"), ("Atlas 800I A3", "9362")])
def test_chip_board_names_the_npu_and_no_chip_type(product, npu_name):
    lines = npu_smi.render_board(a3(product).hardware(), "25.3.rc1", "7.8.0.2.212", 3, 1).splitlines()
    assert lines[:4] == ["NPU ID                         : 3", "NPU Name                       : %s" % npu_name,
                         "Chip ID                        : 1", "Chip Name                      : Ascend910"]
    assert not [line for line in lines if line.startswith("Chip Type")]
    assert "PCIe Bus Info                  : 0000:93:00.0" in lines


def test_spod_info_matches_the_superpod_log():
    # A real Atlas 900 A3 SuperPoD-class node, server index 40 (MindCluster fault-diag log):
    # dies 0, 1 and 10 (NPU 5, die 0).
    hardware = a3(id=0, server_index=40, size=384).hardware()
    assert npu_smi.render_spod_info(hardware, 0, 0) == (
        "\tSDID                           : 167772160\n\tSuper Pod Size                 : 384\n"
        "\tSuper Pod ID                   : 0\n\tServer Index                   : 40\n")
    assert npu_smi.render_spod_info(hardware, 0, 1).startswith("\tSDID                           : 167837697\n")
    assert npu_smi.render_spod_info(hardware, 5, 0).startswith("\tSDID                           : 169082890\n")
    # MindIE's A3 rank table: server 9, phy 7 (NPU 3, die 1).
    assert npu_smi.spod_sdid(9, 3, 1, 7) == 38600711


def test_spod_info_is_refused_outside_a_superpod_and_on_other_chips():
    refusal = "This device does not support querying spod-info.\n"
    assert npu_smi.render_spod_info(a3().hardware(), 0, 0) == refusal
    a2 = fleet.NodeSpec("a2", "Atlas 800I A2").hardware()
    assert npu_smi.render_spod_info(a2, 0, 0) == refusal
    with pytest.raises(npu_smi.NpuSmiFailure):
        npu_smi.render_spod_info(a3(server_index=1).hardware(), 8, 0)


# --- hccn_tool ---------------------------------------------------------------------------------------

@pytest.fixture
def hccn(tmp_path, monkeypatch):
    """Runs the fake hccn_tool in-process against a hardware description, its state under tmp_path."""
    monkeypatch.setattr(hccn_tool, "CONF_FILE", str(tmp_path / "hccn.conf"))
    monkeypatch.setattr(hccn_tool, "LIVE_FILE", str(tmp_path / "hccn-live.json"))
    monkeypatch.setattr(hccn_tool, "FABRIC_DIR", str(tmp_path / "no-fabric"))
    monkeypatch.setattr(hccn_tool.ascend_sim, "installed_driver_version", lambda *args: "25.3.rc1")
    monkeypatch.setattr(hccn_tool.ascend_sim, "driver_reboot_pending", lambda *args: False)
    monkeypatch.setattr(hccn_tool.ascend_sim, "load_faults", lambda *args: {})
    if os.geteuid() != 0:
        monkeypatch.setattr(hccn_tool.os, "chown", lambda *args: None)

    def run(hardware, *argv):
        monkeypatch.setattr(hccn_tool.ascend_sim, "load_hardware", lambda *args: hardware)
        try:
            return 0, hccn_tool.run(list(argv))
        except hccn_tool.HccnFailure as failure:
            return failure.exit_code, failure.message
    return run


def test_hccn_tool_takes_one_id_per_die(hccn):
    hardware = a3().hardware()
    for device in (0, 15):
        assert hccn(hardware, "-i", str(device), "-link", "-g") == (0, "link status: UP")
    assert hccn(hardware, "-i", "16", "-link", "-g")[0] == 1
    assert hccn(hardware, "-i", "13", "-ip", "-s", "address", "10.0.244.16", "netmask", "255.255.255.0") == (
        0, hccn_tool.DONE)
    assert hccn(hardware, "-i", "13", "-ip", "-g") == (0, "ipaddr:10.0.244.16\nnetmask:255.255.255.0")


def test_vnic_address_follows_the_superpod_rule(hccn):
    member = a3(server_index=40).hardware()
    assert hccn(member, "-i", "0", "-vnic", "-g") == (
        0, "vnic link status: UP\nvnic ipaddr: 192.40.2.199\nvnic netmask: 255.255.255.0")
    assert hccn(member, "-i", "1", "-vnic", "-g")[1].splitlines()[1] == "vnic ipaddr: 192.40.3.198"
    assert hccn(member, "-i", "15", "-vnic", "-g")[1].splitlines()[1] == "vnic ipaddr: 192.40.3.184"
    assert hccn(a3().hardware(), "-i", "0", "-vnic", "-g")[1].splitlines()[1] == "vnic ipaddr: 192.168.2.199"


@pytest.mark.parametrize("address, member, refused", [
    ("192.10.0.5", True, True), ("192.168.9.5", True, True), ("10.0.245.11", True, False),
    ("192.168.7.5", False, True), ("192.168.0.5", False, True), ("192.168.8.5", False, False),
    ("192.10.0.5", False, False),
])
def test_a3_address_refusals(hccn, address, member, refused):
    hardware = a3(server_index=3).hardware() if member else a3().hardware()
    result = hccn(hardware, "-i", "2", "-ip", "-s", "address", address, "netmask", "255.255.255.0")
    assert result == ((1, "Ipaddr conflict.") if refused else (0, hccn_tool.DONE))


def test_hccs_ping_where_the_main_board_supports_it(hccn):
    member = a3(server_index=0).hardware()
    code, text = hccn(member, "-i", "0", "-hccs_ping", "-g", "address", "192.1.3.198", "cnt", "2")
    lines = text.splitlines()
    assert code == 0 and lines[:5] == ["device 0 PING 192.1.3.198", "", "This pkt ping success!",
                                       lines[3], ""]
    assert lines[3].startswith("recv seq 0, time = ") and lines[3].endswith("us, L1 plane check result = 0x0")
    assert "2 packets transmitted, 2 received, 0.00% packets loss" in lines
    assert [line.split(" time ")[0] for line in lines[-4:]] == ["max", "min", "average", "TP95"]
    # By SDID: server 1, NPU 0, die 1, device 1 = 192.1.3.198.
    assert hccn(member, "-i", "0", "-hccs_ping", "-g", "sdid", str((1 << 22) | (1 << 16) | 1))[1].startswith(
        "device 0 PING 192.1.3.198\n")
    # Die and device must agree (chip * 2 + die == device).
    assert hccn(member, "-i", "0", "-hccs_ping", "-g", "address", "192.1.2.198")[0] == 1
    # The 800I A3 (main board 0x14) pings outside a SuperPoD too: its own dies answer, others do not.
    standalone = a3("Atlas 800I A3").hardware()
    assert "3 received" in hccn(standalone, "-i", "4", "-hccs_ping", "-g", "address", "192.168.3.198")[1]
    unanswered = hccn(standalone, "-i", "4", "-hccs_ping", "-g", "address", "192.0.3.198")[1]
    assert "0 received, 100.00% packets loss" in unanswered


def test_hccs_ping_refused_elsewhere(hccn):
    refusal = (1, "The command is not supported on this product.")
    assert hccn(a3().hardware(), "-i", "0", "-hccs_ping", "-g", "address", "192.168.3.198") == refusal
    a2 = fleet.NodeSpec("t", "Atlas 800T A2").hardware()
    assert hccn(a2, "-i", "0", "-hccs_ping", "-g", "address", "192.0.3.198") == refusal


def test_a_die_whose_hccs_link_is_down(hccn, monkeypatch):
    """Fault hccn_hccs_link_down: the die's vNIC reads DOWN, its HCCS pings and those to it are lost; the other
    dies are untouched."""
    monkeypatch.setattr(hccn_tool.ascend_sim, "load_faults", lambda *args: {"hccn_hccs_link_down": [3]})
    member = a3(server_index=0).hardware()
    down = hccn(member, "-i", "3", "-vnic", "-g")
    assert down == (0, "vnic link status: DOWN\nvnic ipaddr: 192.0.3.196\nvnic netmask: 255.255.255.0")
    assert product_hccn.parse_vnic(down[1])["vnic_link"] == "DOWN"
    assert product_hccn.parse_vnic(hccn(member, "-i", "2", "-vnic", "-g")[1])["vnic_link"] == "UP"
    lost = hccn(member, "-i", "3", "-hccs_ping", "-g", "address", "192.1.3.196")
    assert lost[0] == 0 and product_hccn.parse_hccs_ping(lost[1])["received"] == 0
    # Another die of the node pinging the downed one gets no answer either; a healthy pair does.
    assert product_hccn.parse_hccs_ping(hccn(member, "-i", "1", "-hccs_ping", "-g", "address", "192.0.3.196")[1])[
        "received"] == 0
    assert product_hccn.parse_hccs_ping(hccn(member, "-i", "1", "-hccs_ping", "-g", "address", "192.1.3.198")[1])[
        "received"] == 3


def test_the_products_parsers_read_the_fake_a3_outputs(hccn):
    member = a3(server_index=40).hardware()
    assert product_hccn.parse_vnic(hccn(member, "-i", "15", "-vnic", "-g")[1]) == {
        "vnic_link": "UP", "vnic_address": "192.40.3.184", "vnic_netmask": "255.255.255.0"}
    assert product_super_pod.vnic_address("super_pod_server", 40, 15) == "192.40.3.184"
    ping = product_hccn.parse_hccs_ping(hccn(member, "-i", "0", "-hccs_ping", "-g", "address", "192.1.3.198")[1])
    assert (ping["npu"], ping["target"], ping["transmitted"], ping["received"]) == (0, "192.1.3.198", 3, 3)
    assert len(ping["times_us"]) == 3 and ping["max_us"] >= ping["avg_us"] > 0
    refusal = hccn(a3().hardware(), "-i", "0", "-hccs_ping", "-g", "address", "192.168.3.198")[1]
    assert product_hccn.says_not_supported(refusal)
    assert product_super_pod.parse_spod_info(npu_smi.render_spod_info(member, 5, 0)) == {
        "sdid": 169082890, "size": 384, "id": 0, "server_index": 40}
    assert product_super_pod.parse_spod_info(npu_smi.render_spod_info(a3().hardware(), 0, 0)) is None


def test_a3_nodes_join_a_fabric_one_port_per_die(tmp_path, monkeypatch):
    monkeypatch.setattr(fleet, "fabric_dir", lambda name: tmp_path / name)
    first = fleet.NodeSpec("a3-1", "Atlas 800T A3", fabric="f", super_pod={"server_index": 0})
    a2 = fleet.NodeSpec("t-2", "Atlas 800T A2", fabric="f")
    fleet.write_fabrics([first, a2], {})
    ports = json.loads((tmp_path / "f" / "fabric.json").read_text())["ports"]
    assert sorted(ports["a3-1"], key=int) == [str(die) for die in range(16)]
    assert ports["a3-1"]["15"] == "400GE1/1/8:2"
    # The A2 node after it takes the next free ports, none of the A3's.
    assert ports["t-2"]["0"] == "400GE1/1/9:1" and not set(ports["t-2"].values()) & set(ports["a3-1"].values())


# --- packages --------------------------------------------------------------------------------------

@pytest.mark.parametrize("component, version, arch, expected", [
    ("driver", "25.3.rc1", "aarch64", "Atlas-A3-hdk-npu-driver_25.3.rc1_linux-aarch64.run"),
    ("driver", "25.3.rc1", "x86_64", "Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run"),
    ("firmware", "7.8.0.2.212", "aarch64", "Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run"),
    ("kernels", "8.2.RC1", "aarch64", "Atlas-A3-cann-kernels_8.2.RC1_linux-aarch64.run"),
    # The 8.5.0 alphas still shipped the A3 kernels package (CANN 8.5.0.alpha002 quick install guide).
    ("kernels", "8.5.0.alpha002", "x86_64", "Atlas-A3-cann-kernels_8.5.0.alpha002_linux-x86_64.run"),
    ("ops", "8.5.0", "x86_64", "Ascend-cann-A3-ops_8.5.0_linux-x86_64.run"),
])
def test_a3_packages_are_named_like_huaweis(tmp_path, component, version, arch, expected):
    path = builder.build(component, "A3", version, arch, False, str(tmp_path))
    assert os.path.basename(path) == expected
    with open(path, "rb") as handle:
        assert b"makeself" in handle.read(4096).lower()


def test_fleet_builds_a3_packages_for_a3_nodes():
    spec = a3()
    plan = fleet.Fleet([spec], {spec.name: {"sandbox_package_versions": {"driver": "25.3.rc1",
                                                                         "ops": "8.5.0"}}}).package_plan()
    assert plan == [("driver", "A3", "25.3.rc1", "x86_64"), ("ops", "A3", "8.5.0", "x86_64")]


# --- an A3 node ------------------------------------------------------------------------------------

A3_NODE = NODE_NAME + "-a3"
A3_DRIVER = "Atlas-A3-hdk-npu-driver_25.3.rc1_linux-x86-64.run"
A3_FIRMWARE = "Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run"


@pytest.fixture(scope="module")
def a3_node(tmp_path_factory):
    if not podman_available():
        pytest.skip("podman is not installed (run `make deps`)")
    spec = fleet.NodeSpec(A3_NODE, "Atlas 800T A3", super_pod={"id": 0, "server_index": 40, "size": 384})
    nodes = fleet.Fleet([spec], {})
    nodes.down()
    try:
        nodes.up()
        yield _Node(nodes, A3_NODE)
    finally:
        nodes.down()


class _Node(object):
    def __init__(self, fleet_object, name):
        self.fleet, self.name = fleet_object, name

    def exec(self, argv, check=True, input=None):
        return self.fleet.exec(self.name, argv, check=check, input=input)

    def copy_in(self, host_path, node_path):
        self.fleet.copy_in(self.name, host_path, node_path)


def test_node_a3_comes_up_with_16_dies(a3_node, tmp_path_factory):
    lspci = a3_node.exec(["lspci", "-nn", "-d", "19e5:"]).stdout.splitlines()
    assert len(lspci) == 16
    assert all("[19e5:d803] (rev 20)" in line for line in lspci)
    assert lspci[0].startswith("81:00.0 Processing accelerators [1200]: Huawei Technologies Co., Ltd.")
    subsystems = a3_node.exec(["sh", "-c", "lspci -vnn -d 19e5: 2>/dev/null | grep Subsystem"]).stdout.splitlines()
    assert len(subsystems) == 16 and all("[19e5:3001]" in line for line in subsystems)
    assert json.loads(a3_node.exec(["cat", "/etc/ascend-sandbox/hardware.json"]).stdout)["chip_family"] == "A3"

    names = testing.install_packages_into_node(a3_node, tmp_path_factory.mktemp("a3-packages"), [
        ("driver", "A3", "25.3.rc1", "x86_64", False), ("firmware", "A3", "7.8.0.2.212", "x86_64", False)])
    assert names == [A3_DRIVER, A3_FIRMWARE]
    testing.prepare_driver_prerequisites(a3_node)
    testing.run_package(a3_node, A3_DRIVER, "--nox11", "--full", "--quiet", expect=0)
    firmware = testing.run_package(a3_node, A3_FIRMWARE, "--nox11", "--full", "--quiet", expect=0)
    assert "The firmware of [16] chips are successfully upgraded." in firmware.stdout
    a3_node.fleet.reboot(a3_node.name)

    devices = a3_node.exec(["sh", "-c", "ls /dev | grep '^davinci[0-9]' | sort -V"]).stdout.split()
    assert devices == ["davinci%d" % number for number in range(16)]
    info = a3_node.exec(["npu-smi", "info"]).stdout
    assert "| Chip  Phy-ID              | Bus-Id        |" in info
    assert "| 1     15                  | 0000:83:00.0  | 0           0    / 0          3196 / 65536         |" in info
    spod = a3_node.exec(["npu-smi", "info", "-t", "spod-info", "-i", "5", "-c", "0"]).stdout
    assert spod.splitlines()[0] == "\tSDID                           : 169082890"
    vnic = a3_node.exec(["hccn_tool", "-i", "15", "-vnic", "-g"]).stdout
    assert "vnic ipaddr: 192.40.3.184" in vnic
