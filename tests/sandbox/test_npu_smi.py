"""Contract tests of the fake npu-smi.

Host part: the renderer, fed with hardware rebuilt from a real sample, must print that sample
byte for byte. Node part (tests named test_node_*, so that `-k "not test_node_"` runs the host
part alone): what npu-smi answers around driver installs, reboots and faults.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402

npu_smi = testing.load_npu_smi()
parser = collection_code.load_module_utils("hardware.npu_smi")
version_files = collection_code.load_module_utils("packages.version_files")

INFO_SAMPLES = [
    ("910B4_25.0.rc1.1_info.txt", "910b"),
    ("910B2_23.0.7_info.txt", "910b"),
    ("910B-legacy910_24.1.0_info.txt", "910"),
    ("Ascend910-A3_24.1.rc3.7_info.txt", "A3"),
    ("310P3_25.5.2_info.txt", "310p"),
    ("310P3_22.0.4_info-vm.txt", "310p"),
    ("310B4_23.0.rc3_info.txt", "310b"),
]


@pytest.mark.parametrize("sample, family", INFO_SAMPLES, ids=[sample for sample, _family in INFO_SAMPLES])
def test_info_renders_the_sample_byte_for_byte(sample, family):
    hardware = testing.hardware_from_info_sample(sample, family)
    tool_version, driver_version = testing.versions_of_info_sample(sample)
    assert npu_smi.render_info(hardware, driver_version, tool_version) == testing.read_sample(sample)


def test_info_list_and_mapping_render_the_910b4_samples():
    hardware = testing.hardware_from_info_sample("910B4_25.0.rc1.1_info.txt", "910b")
    assert npu_smi.render_info_list(hardware) == testing.read_sample("910B4_25.0.rc1.1_info-l.txt")
    assert npu_smi.render_info_mapping(hardware) == testing.read_sample("910B4_25.0.rc1.1_info-m.txt")


def test_info_mapping_renders_the_310p3_sample():
    hardware = testing.hardware_from_info_sample("310P3_25.5.2_info.txt", "310p")
    assert npu_smi.render_info_mapping(hardware) == testing.read_sample("310P3_25.5.2_info-m.txt")


def d801_board_hardware():
    """The board of sample 910-D801_23.0.5 (an Atlas 300T training card)."""
    return {"chip_family": "910", "chip_name": "910", "pci_device": "d801", "board_id": "0x02",
            "subsystem_vendor": "0x0200", "subsystem_device": "0x0100",
            "npus": [{"npu_id": 0, "chips": [{"chip_id": 0, "bus_id": "0000:61:00.0", "health": "OK"}]}]}


def test_board_and_health_render_the_d801_samples():
    hardware = d801_board_hardware()
    assert npu_smi.render_board(hardware, "23.0.5", "7.1.0.7.220", 0) == testing.read_sample(
        "910-D801_23.0.5_info-t-board-i0.txt")
    assert npu_smi.render_health(hardware, 0, 0) == testing.read_sample("910-D801_23.0.5_info-t-health-i0-c0.txt")


def test_chip_board_has_the_sample_keys_in_order():
    sample_keys = list(parser.parse_key_values(testing.read_sample("910-D801_23.0.5_info-t-board-i0-c0.txt")))
    rendered = npu_smi.render_board(d801_board_hardware(), "23.0.5", "7.1.0.7.220", 0, 0)
    assert list(parser.parse_key_values(rendered)) == sample_keys
    assert parser.parse_key_values(rendered)["Firmware Version"] == "7.1.0.7.220"


def test_unhealthy_chip_shows_critical_in_info_and_health():
    hardware = testing.hardware_from_info_sample("910B4_25.0.rc1.1_info.txt", "910b")
    parsed = parser.parse_info(npu_smi.render_info(hardware, "25.0.rc1.1", unhealthy=[[2, 0]]))
    assert [chip["health"] for chip in parsed["chips"]] == ["OK", "OK", "Critical"] + ["OK"] * 5
    health = parser.parse_key_values(npu_smi.render_health(hardware, 2, 0, unhealthy=[[2, 0]]))
    assert health["Health Status"] == "Critical"
    assert health["Error Code"] != "NA"


def test_duo_card_renders_two_chips_per_npu_that_the_parser_reads():
    hardware = {"chip_family": "310p", "chip_name": "310P3", "npus": [
        {"npu_id": 1, "chips": [{"chip_id": 0, "bus_id": "0000:01:00.0", "power_w": None, "temp_c": 52,
                                 "memory_used_mb": 1594, "memory_total_mb": 44280},
                                {"chip_id": 1, "bus_id": "0000:06:00.0", "power_w": None, "temp_c": 49,
                                 "memory_used_mb": 1401, "memory_total_mb": 43693}]}]}
    parsed = parser.parse_info(npu_smi.render_info(hardware, "25.5.2"))
    assert [(chip["npu_id"], chip["chip_id"], chip["phy_id"]) for chip in parsed["chips"]] == [(1, 0, 0), (1, 1, 1)]
    assert [chip["bus_id"] for chip in parsed["chips"]] == ["0000:01:00.0", "0000:06:00.0"]
    assert parsed["chips"][0]["power_w"] is None


def _devices_file(tmp_path, logic_ids):
    path = tmp_path / "visible-devices"
    path.write_text("".join("%d\n" % logic_id for logic_id in logic_ids))
    return str(path)


def test_a_container_given_some_chips_sees_only_those_with_their_logical_ids(tmp_path):
    hardware = testing.hardware_from_info_sample("910B4_25.0.rc1.1_info.txt", "910b")
    view = npu_smi.visible_hardware(hardware, _devices_file(tmp_path, [3, 5]))
    parsed = parser.parse_info(npu_smi.render_info(view, "25.0.rc1.1", unhealthy=[[5, 0]]))
    assert [(chip["npu_id"], chip["chip_id"], chip["health"]) for chip in parsed["chips"]] == [
        (3, 0, "OK"), (5, 0, "Critical")]
    mapping = npu_smi.render_info_mapping(view).splitlines()
    assert [line.split()[:3] for line in mapping[1:] if "Ascend" in line] == [["3", "0", "3"], ["5", "0", "5"]]
    assert "Total Count                    : 2" in npu_smi.render_info_list(view)
    # The node's own description is left as it was.
    assert len(ascend_chips(hardware)) == 8


def test_a_container_given_one_chip_of_a_duo_card_sees_that_chip(tmp_path):
    hardware = {"chip_family": "310p", "chip_name": "310P3", "npus": [
        {"npu_id": 1, "chips": [{"chip_id": 0, "bus_id": "0000:01:00.0"}, {"chip_id": 1, "bus_id": "0000:06:00.0"}]}]}
    view = npu_smi.visible_hardware(hardware, _devices_file(tmp_path, [1]))
    parsed = parser.parse_info(npu_smi.render_info(view, "25.5.2"))
    assert [(chip["npu_id"], chip["chip_id"], chip["bus_id"]) for chip in parsed["chips"]] == [(1, 1, "0000:06:00.0")]


def test_a_node_sees_the_whole_hardware_whatever_its_device_files(tmp_path):
    # No devices file: not a container of the runtime. A node that lost /dev/davinci1 still has
    # the chip, and npu-smi still lists it (the doctor reports the missing device file).
    hardware = testing.hardware_from_info_sample("910B4_25.0.rc1.1_info.txt", "910b")
    assert npu_smi.visible_hardware(hardware, str(tmp_path / "absent")) is hardware


def ascend_chips(hardware):
    return npu_smi.ascend_sim.hardware_chips(hardware)


def test_errors_and_unknown_commands():
    hardware = testing.hardware_from_info_sample("910B4_25.0.rc1.1_info.txt", "910b")
    with pytest.raises(npu_smi.NpuSmiFailure) as failure:
        npu_smi.run(["info"], hardware, {"npu_smi_error": -8020})
    assert failure.value.message == "dcmi module initialize failed. ret is -8020"
    assert parser.detect_error(failure.value.message).code == -8020
    with pytest.raises(npu_smi.NpuSmiFailure):
        npu_smi.run(["frobnicate"], hardware, {})


# ============================== inside a sandbox node ======================================

@pytest.fixture
def node(sandbox_node, node_packages):
    sandbox_node.reset()
    testing.prepare_driver_prerequisites(sandbox_node)
    return sandbox_node


def npu_smi_in(node, *args):
    return node.exec(["npu-smi"] + list(args), check=False)


def test_node_npu_smi_fails_with_8005_until_the_reboot_after_a_driver_install(node):
    assert node.exec(["sh", "-c", "command -v npu-smi"], check=False).returncode != 0
    testing.run_package(node, testing.DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    before = npu_smi_in(node, "info")
    assert before.stdout.strip() == "dcmi module initialize failed. ret is -8005"
    assert before.returncode == 1
    assert node.exec(["sh", "-c", "ls /dev/davinci0"], check=False).returncode != 0

    node.reboot()

    after = npu_smi_in(node, "info")
    assert after.returncode == 0, after.stdout
    parsed = parser.parse_info(after.stdout)
    assert parsed["driver_version"] == "25.0.rc1.1"
    assert len(parsed["chips"]) == 8
    assert all(chip["health"] == "OK" for chip in parsed["chips"])
    devices = node.exec(["sh", "-c", "ls /dev/davinci* /dev/devmm_svm /dev/hisi_hdc"]).stdout.split()
    assert devices == sorted(["/dev/davinci%d" % index for index in range(8)] +
                             ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"])
    listing = parser.parse_info_list(npu_smi_in(node, "info", "-l").stdout)
    assert listing["total_count"] == 8
    mapping = parser.parse_info_mapping(npu_smi_in(node, "info", "-m").stdout)
    assert [row["chip_name"] for row in mapping if row["chip_logic_id"] is not None] == ["Ascend 910B4"] * 8


def test_node_firmware_runs_only_after_the_reboot_that_follows_its_install(node):
    testing.run_package(node, testing.DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    node.reboot()
    factory = parser.parse_key_values(npu_smi_in(node, "info", "-t", "board", "-i", "0").stdout)
    assert factory["Software Version"] == "25.0.rc1.1"

    testing.run_package(node, testing.FIRMWARE, "--nox11", "--full", "--quiet", expect=0)
    board = parser.parse_key_values(npu_smi_in(node, "info", "-t", "board", "-i", "0").stdout)
    assert board["Firmware Version"] == factory["Firmware Version"] != "7.7.0.1.231"
    tool = node.exec(["/usr/local/Ascend/driver/tools/upgrade-tool", "--device_index", "-1", "--component", "-1",
                      "--version"]).stdout
    assert {record["version"] for record in version_files.parse_upgrade_tool_versions(tool)} == {
        factory["Firmware Version"]}
    assert npu_smi_in(node, "info").returncode == 0, "a firmware install must not take the driver down"

    node.reboot()

    board = parser.parse_key_values(npu_smi_in(node, "info", "-t", "board", "-i", "0").stdout)
    assert board["Firmware Version"] == "7.7.0.1.231"
    assert board["Compatibility"] == "OK"
    tool = node.exec(["/usr/local/Ascend/driver/tools/upgrade-tool", "--device_index", "-1", "--component", "-1",
                      "--version"]).stdout
    records = version_files.parse_upgrade_tool_versions(tool)
    assert {record["version"] for record in records} == {"7.7.0.1.231"}
    assert sorted({record["device_id"] for record in records}) == list(range(8))


def test_node_faults_make_chips_unhealthy_and_npu_smi_fail(node):
    testing.run_package(node, testing.DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    node.reboot()
    node.set_faults({"unhealthy_chips": [[3, 0]]})
    parsed = parser.parse_info(npu_smi_in(node, "info").stdout)
    assert [chip["npu_id"] for chip in parsed["chips"] if chip["health"] != "OK"] == [3]
    health = parser.parse_key_values(npu_smi_in(node, "info", "-t", "health", "-i", "3", "-c", "0").stdout)
    assert health["Health Status"] == "Critical"

    node.set_faults({"npu_smi_error": -8005})
    failed = npu_smi_in(node, "info")
    assert failed.returncode == 1
    assert parser.detect_error(failed.stdout).code == -8005

    node.set_faults({})
    assert npu_smi_in(node, "info").returncode == 0
    unknown = npu_smi_in(node, "info", "-t", "nonsense", "-i", "0")
    assert unknown.returncode == 1
    assert unknown.stdout.startswith("Invalid command")
