"""Contract tests of the fake npu-smi's static vNPUs (docs/vnpu.md).

Host part: the simulator's rules (templates per chip, ids, capacity, vGroups, in-use refusal,
config recovery across a reboot) and that the collection's parsers read what it prints. Node
part (test_node_*): the same through the installed npu-smi, across a real node restart.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402

npu_smi = testing.load_npu_smi()
collection_code.load_module_utils("hardware.npu_smi")  # npu_vnpu imports it under its Ansible name
vnpu_parser = collection_code.load_module_utils("hardware.npu_vnpu")

A2 = {"chip_family": "910b", "chip_name": "910B4",
      "npus": [{"npu_id": 0, "chips": [{"chip_id": 0}]}, {"npu_id": 1, "chips": [{"chip_id": 0}]}]}
DUO = {"chip_family": "310p", "chip_name": "310P3",
       "npus": [{"npu_id": 1, "chips": [{"chip_id": 0}, {"chip_id": 1}]}]}

# Two NPUs of an A3 server (dies 0 and 1 each, phy ids 2 x NPU + die).
A3_NPUS = [{"npu_id": npu, "chips": [{"chip_id": die, "logic_id": 2 * npu + die, "phy_id": 2 * npu + die}
                                     for die in (0, 1)]} for npu in (0, 1)]
A3_TRAINING = {"chip_family": "A3", "chip_name": "Ascend910", "product": "Atlas 800T A3", "npus": A3_NPUS}
A3_INFERENCE = dict(A3_TRAINING, product="Atlas 800I A3")


@pytest.fixture
def simulated(tmp_path, monkeypatch):
    """npu-smi's vNPU commands against a state file and a /dev in tmp_path, with a boot we control."""
    monkeypatch.setattr(npu_smi, "VNPU_STATE_FILE", str(tmp_path / "vnpu.json"))
    monkeypatch.setattr(npu_smi, "DEVICE_DIR", str(tmp_path))
    monkeypatch.setattr(npu_smi, "CONTAINER_BUNDLES", str(tmp_path / "bundles"))
    monkeypatch.setattr(npu_smi, "make_device_node", lambda path, major, minor: open(path, "w").close())
    monkeypatch.setattr(npu_smi.ascend_sim, "boot_marker", lambda: boot[0])
    monkeypatch.setattr(npu_smi.ascend_sim, "installed_driver_version", lambda: "25.0.rc1.1")
    monkeypatch.setattr(npu_smi.ascend_sim, "driver_reboot_pending", lambda: False)
    boot = ["boot-1"]

    class Simulated(object):
        devices = tmp_path

        def run(self, hardware, *argv, **kwargs):
            return npu_smi.run(list(argv), hardware, kwargs.get("faults", {}))

        def fails(self, hardware, *argv, **kwargs):
            with pytest.raises(npu_smi.NpuSmiFailure) as failure:
                self.run(hardware, *argv, **kwargs)
            return failure.value.message

        def reboot(self):
            boot[0] += "+"

        def vnpus(self, hardware, npu, chip):
            return vnpu_parser.parse_info_vnpu(self.run(hardware, "info", "-t", "info-vnpu", "-i", str(npu),
                                                        "-c", str(chip)))

    return Simulated()


def test_template_info_is_what_the_parser_reads(simulated):
    templates = vnpu_parser.parse_template_info(simulated.run(A2, "info", "-t", "template-info"))
    assert templates["vir10_3c_16g"] == {"aicore": 10, "memory_gb": 16, "aicpu": 3}
    assert sorted(templates) == ["vir05_1c_8g", "vir10_3c_16g", "vir10_3c_16g_nm", "vir10_4c_16g_m"]
    templates = vnpu_parser.parse_template_info(simulated.run(DUO, "info", "-t", "template-info"))
    assert sorted(templates) == sorted(vnpu_parser.TEMPLATES["310P"])


def test_create_gives_ids_from_the_chip_range_and_vgroups(simulated):
    answer = simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "1", "-f", "vir02")
    assert vnpu_parser.parse_created(answer) == "Create vnpu success"
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "1", "-f", "vir01")
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "1", "-f", "vir01")
    parsed = simulated.vnpus(DUO, 1, 1)
    # Chip 1 of the Duo card is /dev/davinci1: ids 116..123; two vir01 share one vGroup.
    assert [(v["vnpu_id"], v["vgroup_id"], v["template"]) for v in parsed["vnpus"]] == [
        (116, 0, "vir02"), (117, 1, "vir01"), (118, 1, "vir01")]
    assert parsed["resources"]["aicore"] == {"free": 4, "total": 8}
    assert parsed["resources"]["memory_gb"] == {"free": 12, "total": 24}
    assert sorted(os.listdir(str(simulated.devices))) == ["davinci116", "davinci117", "davinci118", "vnpu.json"]
    assert simulated.vnpus(DUO, 1, 0)["vnpus"] == []


def test_create_refusals(simulated):
    unknown = simulated.fails(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir02")
    assert "template vir02 is not supported" in unknown
    assert vnpu_parser.parse_set_result(unknown)[0] is False
    out_of_range = simulated.fails(A2, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir05_1c_8g",
                                   "-v", "100")
    assert "out of range [116, 131]" in out_of_range
    vgroup = simulated.fails(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g", "-g", "0")
    assert "-g is not supported" in vgroup
    simulated.run(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir10_3c_16g", "-v", "103")
    taken = simulated.fails(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g", "-v", "103")
    assert "103 already exists" in taken
    simulated.run(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g")
    full = simulated.fails(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir10_3c_16g")
    assert "not enough" in full
    assert [v["vnpu_id"] for v in simulated.vnpus(A2, 0, 0)["vnpus"]] == [100, 103]


def test_310p_vgroups_limit(simulated):
    for vgroup in range(4):
        simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir02_1c", "-g", str(vgroup))
    assert "not enough" in simulated.fails(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir01")


def test_destroy_and_in_use(simulated, tmp_path):
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir02")
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir02")
    bundle = tmp_path / "bundles" / "k8s.io" / ("c0ffee" * 10)
    bundle.mkdir(parents=True)
    (bundle / "ascend-sandbox-visible-devices").write_text("101\n")
    parsed = simulated.vnpus(DUO, 1, 0)
    assert [(v["vnpu_id"], v["in_use"], v["container_id"]) for v in parsed["vnpus"]] == [
        (100, False, "000000000000"), (101, True, "c0ffeec0ffee")]
    refused = simulated.fails(DUO, "set", "-t", "destroy-vnpu", "-i", "1", "-c", "0", "-v", "101")
    assert "in use by container c0ffeec0ffee" in refused
    faulted = simulated.fails(DUO, "set", "-t", "destroy-vnpu", "-i", "1", "-c", "0", "-v", "100",
                              faults={"vnpu_in_use": [100]})
    assert "in use" in faulted
    answer = simulated.run(DUO, "set", "-t", "destroy-vnpu", "-i", "1", "-c", "0", "-v", "100")
    assert vnpu_parser.parse_destroyed(answer, 100) == "Destroy vnpu 100 success"
    assert "does not exist" in simulated.fails(DUO, "set", "-t", "destroy-vnpu", "-i", "1", "-c", "0", "-v", "100")
    assert "davinci100" not in os.listdir(str(simulated.devices))


def test_layout_survives_a_reboot_only_with_config_recovery(simulated):
    assert vnpu_parser.parse_recover(simulated.run(DUO, "info", "-t", "vnpu-cfg-recover")) is True
    assert vnpu_parser.parse_mode(simulated.run(DUO, "info", "-t", "vnpu-mode")) == "docker"
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir04")
    simulated.reboot()
    assert len(simulated.vnpus(DUO, 1, 0)["vnpus"]) == 1
    answer = simulated.run(DUO, "set", "-t", "vnpu-cfg-recover", "-d", "0")
    assert vnpu_parser.parse_set_result(answer)[0] is True
    assert vnpu_parser.parse_recover(simulated.run(DUO, "info", "-t", "vnpu-cfg-recover")) is False
    simulated.reboot()
    assert simulated.vnpus(DUO, 1, 0)["vnpus"] == []
    assert "davinci100" not in os.listdir(str(simulated.devices))


def test_mode_change_needs_no_vnpus(simulated):
    simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir04")
    refused = simulated.fails(DUO, "set", "-t", "vnpu-mode", "-d", "1")
    # Huawei's npu-smi source: Status Fail and this message.
    assert "Destroy them before switching the mode" in refused
    assert vnpu_parser.parse_set_result(refused)[0] is False
    answer = simulated.run(DUO, "set", "-t", "vnpu-mode", "-d", "0")
    assert vnpu_parser.parse_set_result(answer) == (True, "Set vnpu docker mode success")


def test_vm_mode_answers_with_a_sentence_and_success(simulated):
    assert vnpu_parser.parse_set_result(simulated.run(DUO, "set", "-t", "vnpu-mode", "-d", "1"))[0] is True
    assert simulated.run(DUO, "info", "-t", "vnpu-mode") == "\tvnpu-mode                      : VM\n"
    assert vnpu_parser.parse_mode(simulated.run(DUO, "info", "-t", "vnpu-mode")) == "vm"
    answer = simulated.run(DUO, "info", "-t", "info-vnpu", "-i", "1", "-c", "0")
    assert answer == "The vnpu is not in docker mode, does not support querying info-vnpu.\n"
    with pytest.raises(vnpu_parser.VnpuUnavailable, match="VM mode"):
        vnpu_parser.parse_info_vnpu(answer)
    answer = simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir02")
    with pytest.raises(vnpu_parser.VnpuUnavailable, match="VM mode"):
        vnpu_parser.parse_created(answer)
    simulated.run(DUO, "set", "-t", "vnpu-mode", "-d", "0")
    assert simulated.vnpus(DUO, 1, 0)["vnpus"] == []


def test_chips_without_vnpus_say_so(simulated):
    soc = {"chip_family": "310b", "chip_name": "310B4", "npus": [{"npu_id": 0, "chips": [{"chip_id": 0}]}]}
    answer = simulated.run(soc, "info", "-t", "template-info")
    assert answer == "This device does not support querying template-info.\n"
    with pytest.raises(vnpu_parser.VnpuUnavailable, match="no vNPU support"):
        vnpu_parser.parse_template_info(answer)


def test_legacy_910_is_split_with_its_templates(simulated):
    legacy = {"chip_family": "910", "chip_name": "910B", "npus": [{"npu_id": 0, "chips": [{"chip_id": 0}]}]}
    templates = vnpu_parser.parse_template_info(simulated.run(legacy, "info", "-t", "template-info"))
    assert sorted(templates) == sorted(vnpu_parser.TEMPLATES["910"])
    for name, values in templates.items():
        assert values["aicore"] == vnpu_parser.TEMPLATES["910"][name][0]
    for template in ("vir16", "vir08", "vir04", "vir02"):
        simulated.run(legacy, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", template)
    parsed = simulated.vnpus(legacy, 0, 0)
    assert [(v["vnpu_id"], v["template"]) for v in parsed["vnpus"]] == [
        (100, "vir16"), (101, "vir08"), (102, "vir04"), (103, "vir02")]
    assert parsed["resources"]["aicore"] == {"free": 0, "total": 30}
    assert "not enough" in simulated.fails(legacy, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir02")


def test_a_chip_without_vnpus_on_a_26_driver_prints_no_table_header(simulated, monkeypatch):
    monkeypatch.setattr(npu_smi.ascend_sim, "installed_driver_version", lambda: "26.0.rc1")
    answer = simulated.run(A2, "info", "-t", "info-vnpu", "-i", "0", "-c", "0")
    assert "Total number of vnpu: 0" in answer and "Vnpu ID" not in answer
    assert vnpu_parser.parse_info_vnpu(answer)["vnpus"] == []
    simulated.run(A2, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir05_1c_8g")
    assert "Vnpu ID" in simulated.run(A2, "info", "-t", "info-vnpu", "-i", "0", "-c", "0")


def test_set_answers_are_huawei_s(simulated):
    answer = simulated.run(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir02")
    assert answer == "\tStatus                         : OK\n\tMessage                        : Create vnpu success\n"
    refused = simulated.fails(DUO, "set", "-t", "destroy-vnpu", "-i", "1", "-c", "0", "-v", "107")
    assert refused.splitlines()[0] == "destroy vnpu 107 failed."
    refused = simulated.fails(DUO, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", "vir32")
    assert refused.splitlines()[0] == "create vnpu failed."
    assert simulated.run(DUO, "info", "-t", "vnpu-cfg-recover") == "\tVNPU config recover mode       : Enable\n"


# ============================== inside a sandbox node ======================================

@pytest.fixture
def node(sandbox_node, node_packages):
    sandbox_node.reset()
    testing.prepare_driver_prerequisites(sandbox_node)
    testing.run_package(sandbox_node, testing.DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    sandbox_node.reboot()
    return sandbox_node


def test_node_vnpus_and_their_device_nodes_survive_a_reboot_with_recovery(node):
    def npu_smi_in(*args):
        return node.exec(["npu-smi"] + list(args), check=False)

    created = npu_smi_in("set", "-t", "create-vnpu", "-i", "2", "-c", "0", "-f", "vir05_1c_8g")
    assert created.returncode == 0, created.stdout
    assert node.exec(["sh", "-c", "ls /dev/davinci132"], check=False).returncode == 0
    node.reboot()
    parsed = vnpu_parser.parse_info_vnpu(npu_smi_in("info", "-t", "info-vnpu", "-i", "2", "-c", "0").stdout)
    assert [(v["vnpu_id"], v["template"]) for v in parsed["vnpus"]] == [(132, "vir05_1c_8g")]
    assert node.exec(["sh", "-c", "ls /dev/davinci132"], check=False).returncode == 0
    assert npu_smi_in("set", "-t", "vnpu-cfg-recover", "-d", "0").returncode == 0
    node.reboot()
    parsed = vnpu_parser.parse_info_vnpu(npu_smi_in("info", "-t", "info-vnpu", "-i", "2", "-c", "0").stdout)
    assert parsed["vnpus"] == []
    assert node.exec(["sh", "-c", "ls /dev/davinci132"], check=False).returncode != 0


def test_a_container_given_a_vnpu_sees_the_chip_it_is_cut_from(tmp_path):
    devices = tmp_path / "visible-devices"
    devices.write_text("117\n")
    seen = npu_smi.visible_hardware(DUO, str(devices))
    assert [(npu["npu_id"], [chip["chip_id"] for chip in npu["chips"]]) for npu in seen["npus"]] == [(1, [1])]


@pytest.mark.parametrize("hardware, templates, cores", [
    (A3_TRAINING, ["vir06_1c_16g", "vir12_3c_32g"], 24),
    (A3_INFERENCE, ["vir05_1c_16g", "vir10_3c_32g"], 20),
])
def test_a3_dies_offer_their_servers_templates(simulated, hardware, templates, cores):
    listed = vnpu_parser.parse_template_info(simulated.run(hardware, "info", "-t", "template-info"))
    assert sorted(listed) == templates
    # The collection's A3 family holds every template an A3 lists, with the same numbers.
    for name, values in listed.items():
        assert (values["aicore"], values["memory_gb"], values["aicpu"]) == vnpu_parser.TEMPLATES["A3"][name]
    # Die 1 of NPU 1 is phy 3: ids 148-163, its own totals (an A3 die: 64 GB of HBM).
    simulated.run(hardware, "set", "-t", "create-vnpu", "-i", "1", "-c", "1", "-f", templates[0])
    parsed = simulated.vnpus(hardware, 1, 1)
    assert [(v["vnpu_id"], v["template"]) for v in parsed["vnpus"]] == [(148, templates[0])]
    assert parsed["resources"]["aicore"]["total"] == cores
    assert parsed["resources"]["memory_gb"]["total"] == 64
    assert simulated.vnpus(hardware, 1, 0)["vnpus"] == []
    assert "davinci148" in os.listdir(str(simulated.devices))
    out_of_range = simulated.fails(hardware, "set", "-t", "create-vnpu", "-i", "1", "-c", "0", "-f", templates[0],
                                   "-v", "148")
    assert "out of range [132, 147]" in out_of_range


def test_a3_die_refuses_the_other_servers_templates_and_overfill(simulated):
    refused = simulated.fails(A3_TRAINING, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir10_3c_32g")
    assert "template vir10_3c_32g is not supported" in refused
    simulated.run(A3_TRAINING, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir12_3c_32g")
    simulated.run(A3_TRAINING, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir12_3c_32g")
    full = simulated.fails(A3_TRAINING, "set", "-t", "create-vnpu", "-i", "0", "-c", "0", "-f", "vir06_1c_16g")
    assert "not enough" in full
