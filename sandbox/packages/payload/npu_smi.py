"""Fake ``npu-smi`` of the sandbox (installed by the fake driver as /usr/local/sbin/npu-smi).

It prints what Huawei's tool prints for the simulated hardware of the node
(/etc/ascend-sandbox/hardware.json), the installed driver and the running firmware, with
the column widths of the real samples in tests/fixtures/samples/npu-smi. The render_*
functions are pure so that the host-side tests can compare them byte for byte with the
samples; main() adds the node's state (pending reboot, faults).

Not backed by a sample, so chosen by us (see sandbox/README.md, "Fake packages"):
the exit code 1 of every failure, the text for an unknown command or a bad id, the
separator between the two chips of a 310P Duo card, the 310P ``info -m`` layout for
versions other than 25.5.2, and the error code shown for an unhealthy chip.
"""

import os
import re
import sys

# Nothing may be left behind in /usr/local/dcmi for the driver uninstall to miss.
sys.dont_write_bytecode = True
sys.path.insert(0, "/usr/local/dcmi")

import ascend_sim  # noqa: E402  (found next to this file in the payload, in /usr/local/dcmi on a node)

DCMI_NOT_READY = -8005

# --- 910 family (A2 910B1-B4, legacy 910, A3): 98 columns ---------------------------------
_A2_WIDTHS = (27, 15, 52)
_A2_HEADER = (
    "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
    "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
)
_A3_SECOND_HEADER = "| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |"
_A2_PROCESS_HEADER = "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |"

# --- 310P / 310B: 106 columns ---------------------------------------------------------------
_310P_WIDTHS = (31, 17, 54)
_310P_HEADER = (
    "| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |",
    "| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |",
)
# 22.x drivers printed the first header row with narrower gaps (sample 310P3_22.0.4_info-vm.txt).
_310P_HEADER_22 = "| NPU     Name                  | Health          | Power(W)     Temp(C)     Hugepages-Usage(page)     |"
_310P_PROCESS_HEADER = (
    "| NPU     Chip                  | Process id      | Process name             | Process memory(MB)        |")

# An error code for a simulated unhealthy chip (real codes are hex event ids; this one is ours).
_UNHEALTHY_ERROR_CODE = "80E18005"


class NpuSmiFailure(Exception):
    def __init__(self, message, exit_code=1):
        Exception.__init__(self, message)
        self.message = message
        self.exit_code = exit_code


def _layout(hardware):
    family = str(hardware.get("chip_family", "910b")).lower()
    if family == "a3":
        return "a3"
    if family in ("310p", "310b"):
        return family
    return "a2"


def _rule(widths, fill):
    return "+" + "+".join(fill * width for width in widths) + "+"


def _full_rule(widths):
    return "+" + "-" * (sum(widths) + len(widths) - 1) + "+"


def _row(cells, widths):
    return "|" + "|".join((" " + cell).ljust(width) for cell, width in zip(cells, widths)) + "|"


def _banner(tool_version, driver_version, widths, version_column):
    inner = sum(widths) + len(widths) - 1
    text = " npu-smi " + tool_version.ljust(version_column - 10) + "Version: " + driver_version
    return "|" + text.ljust(inner) + "|"


def _number(value, default="0"):
    if value is None:
        return default
    return str(value)


def _power(value):
    if value is None:
        return "NA"
    if isinstance(value, str):
        return value
    return "%.1f" % value


def chip_health(chip, unhealthy):
    if [chip["npu_id"], chip.get("chip_id", 0)] in unhealthy:
        return "Critical"
    return chip.get("health", "OK")


def render_info(hardware, driver_version, tool_version=None, unhealthy=()):
    """``npu-smi info`` for the hardware description (see docs/development.md)."""
    tool_version = tool_version or driver_version
    unhealthy = [list(item) for item in unhealthy]
    layout = _layout(hardware)
    chips = ascend_sim.hardware_chips(hardware)
    if layout in ("310p", "310b"):
        return _render_310p(hardware, chips, driver_version, tool_version, unhealthy, layout)
    return _render_910(hardware, chips, driver_version, tool_version, unhealthy, layout)


def _render_910(hardware, chips, driver_version, tool_version, unhealthy, layout):
    widths = _A2_WIDTHS
    lines = [_full_rule(widths), _banner(tool_version, driver_version, widths, 35), _rule(widths, "-"),
             _A2_HEADER[0], _A3_SECOND_HEADER if layout == "a3" else _A2_HEADER[1], _rule(widths, "=")]
    npu_ids = []
    for index, chip in enumerate(chips):
        if chip["npu_id"] not in npu_ids:
            npu_ids.append(chip["npu_id"])
        hugepages = "%s/ %s" % (_number(chip.get("hugepages_used")).ljust(5),
                                _number(chip.get("hugepages_total")).ljust(14))
        memory = "%s/ %s" % (_number(chip.get("memory_used_mb")).ljust(5),
                             _number(chip.get("memory_total_mb")).ljust(11))
        hbm = "%s/ %s" % (_number(chip.get("hbm_used_mb")).ljust(5), _number(chip.get("hbm_total_mb")).ljust(14))
        second_column = str(chip.get("phy_id", chip["logic_id"])) if layout == "a3" else ""
        lines.append(_row([str(chip["npu_id"]).ljust(6) + chip.get("name", hardware.get("chip_name", "")),
                           chip_health(chip, unhealthy),
                           _power(chip.get("power_w")).ljust(12) + str(chip.get("temp_c", 0)).ljust(18) + hugepages],
                          widths))
        lines.append(_row([str(chip.get("chip_id", 0)).ljust(6) + second_column, chip.get("bus_id") or "NA",
                           _number(chip.get("aicore_pct")).ljust(12) + memory + hbm], widths))
        last_of_npu = index + 1 == len(chips) or chips[index + 1]["npu_id"] != chip["npu_id"]
        lines.append(_rule(widths, "=") if last_of_npu else _full_rule(widths))
    lines.append(_rule(widths, "-"))
    lines.append(_A2_PROCESS_HEADER)
    lines.append(_rule(widths, "="))
    for npu_id in npu_ids:
        lines.append(_row(["No running processes found in NPU %s" % npu_id], (sum(widths) + 2,)))
        lines.append(_rule(widths, "="))
    return "\n".join(lines) + "\n"


def _render_310p(hardware, chips, driver_version, tool_version, unhealthy, layout):
    widths = _310P_WIDTHS
    old_format = ascend_sim.version_key(driver_version) < ascend_sim.version_key("23.0.rc1")
    lines = [_full_rule(widths), _banner(tool_version, driver_version, widths, 51), _rule(widths, "-"),
             _310P_HEADER_22 if old_format else _310P_HEADER[0], _310P_HEADER[1], _rule(widths, "=")]
    npu_ids = []
    for index, chip in enumerate(chips):
        if chip["npu_id"] not in npu_ids:
            npu_ids.append(chip["npu_id"])
        if old_format:
            hugepages = "%s/ %s" % (_number(chip.get("hugepages_used")).ljust(5),
                                    _number(chip.get("hugepages_total")).ljust(15))
        else:
            hugepages = "%s/ %s" % (_number(chip.get("hugepages_used")).ljust(6),
                                    _number(chip.get("hugepages_total")).ljust(14))
        memory = "%s/ %s" % (_number(chip.get("memory_used_mb")).ljust(5), _number(chip.get("memory_total_mb")))
        bus_id = "NA" if layout == "310b" else (chip.get("bus_id") or "NA")
        lines.append(_row([str(chip["npu_id"]).ljust(8) + chip.get("name", hardware.get("chip_name", "")),
                           chip_health(chip, unhealthy),
                           _power(chip.get("power_w")).ljust(13) + str(chip.get("temp_c", 0)).ljust(18) + hugepages],
                          widths))
        lines.append(_row([str(chip.get("chip_id", 0)).ljust(8) + str(chip.get("device_id", chip["logic_id"])),
                           bus_id, _number(chip.get("aicore_pct")).ljust(13) + memory], widths))
        last_of_npu = index + 1 == len(chips) or chips[index + 1]["npu_id"] != chip["npu_id"]
        # Between the two chips of a Duo card: no sample; a plain column rule is our guess.
        # 22.x closed every NPU with a plain rule and printed no process table (the VM sample).
        lines.append(_rule(widths, "=") if last_of_npu and not old_format else _rule(widths, "-"))
    if layout == "310p" and not old_format:
        lines.append(_rule(widths, "-"))
        lines.append(_310P_PROCESS_HEADER)
        lines.append(_rule(widths, "="))
        for npu_id in npu_ids:
            lines.append(_row(["No running processes found in NPU %s" % npu_id], (sum(widths) + 2,)))
            lines.append(_rule(widths, "="))
    return "\n".join(lines) + "\n"


def _key_value(key, value, indent=""):
    return "%s%s: %s" % (indent, key.ljust(31), value)


def render_info_list(hardware):
    """``npu-smi info -l``."""
    indent = " " * 8
    npus = hardware.get("npus", [])
    lines = [_key_value("Total Count", len(npus), indent)]
    for npu in npus:
        lines.append("")
        lines.append(_key_value("NPU ID", npu.get("npu_id", 0), indent))
        lines.append(_key_value("Chip Count", len(npu.get("chips", [])), indent))
    return "\n".join(lines) + "\n"


def render_info_mapping(hardware):
    """``npu-smi info -m``: the chips and the MCU row of every NPU."""
    chips = ascend_sim.hardware_chips(hardware)
    if _layout(hardware) == "a3":
        return _render_a3_mapping(hardware, chips)
    rows = []
    for chip in chips:
        rows.append((str(chip["npu_id"]), str(chip.get("chip_id", 0)), str(chip["logic_id"]),
                     "Ascend " + chip.get("name", hardware.get("chip_name", ""))))
        last_of_npu = chip is chips[-1] or chips[chips.index(chip) + 1]["npu_id"] != chip["npu_id"]
        if last_of_npu:
            rows.append((str(chip["npu_id"]), str(int(chip.get("chip_id", 0)) + 1), "-", "Mcu"))
    if _layout(hardware) in ("310p", "310b"):
        # 310P3 25.5.2 sample: no indent, narrow columns, nothing padded after the name.
        lines = ["NPU ID".ljust(13) + "Chip ID".ljust(14) + "Chip Logic ID".ljust(20) + "Chip Name"]
        lines += [row[0].ljust(13) + row[1].ljust(14) + row[2].ljust(20) + row[3] for row in rows]
        return "\n".join(lines) + "\n"
    # 910B4 25.0.rc1.1 sample: 8-space indent, 31-wide columns; the header and the Mcu rows are
    # padded to 30 after the name, the chip rows are not.
    indent = " " * 8
    lines = [indent + "NPU ID".ljust(31) + "Chip ID".ljust(31) + "Chip Logic ID".ljust(31) + "Chip Name".ljust(30)]
    for row in rows:
        name = row[3].ljust(30) if row[3] == "Mcu" else row[3]
        lines.append(indent + row[0].ljust(31) + row[1].ljust(31) + row[2].ljust(31) + name)
    return "\n".join(lines) + "\n"


def _render_a3_mapping(hardware, chips):
    """A3 ``-m``: a Chip Phy-ID column, the name without a space (``Ascend910``) and the MCU as chip
    2 of each NPU (MindCluster's fault-diag docstring and third-party fixtures: the columns and
    values). The widths are the 910B4 sample's (8-space indent, 31-wide columns): our choice."""
    indent = " " * 8
    columns = ("NPU ID", "Chip ID", "Chip Logic ID", "Chip Phy-ID")
    lines = [indent + "".join(column.ljust(31) for column in columns) + "Chip Name".ljust(30)]
    for index, chip in enumerate(chips):
        name = chip.get("name", hardware.get("chip_name", ""))
        lines.append(indent + "".join(str(value).ljust(31) for value in (
            chip["npu_id"], chip.get("chip_id", 0), chip["logic_id"], chip.get("phy_id", chip["logic_id"]))) + name)
        if index + 1 == len(chips) or chips[index + 1]["npu_id"] != chip["npu_id"]:
            lines.append(indent + "".join(str(value).ljust(31) for value in (chip["npu_id"], A3_MCU_CHIP_ID, "-", "-"))
                         + "Mcu".ljust(30))
    return "\n".join(lines) + "\n"


# On an A3 the MCU is chip 2 of every NPU (DCMI: ids 0 and 1 are the dies); chip 1 on an A2.
A3_MCU_CHIP_ID = 2
SPOD_UNSUPPORTED = "This device does not support querying spod-info."


def spod_sdid(server_index, npu_id, die_id, phy_id):
    """A die's SuperPoD device id (Huawei's A3 DCMI reference: bits 22-31 server index, 18-21 NPU
    (chip) id, 16-17 die id, 0-15 device (Phy-)id)."""
    return (server_index << 22) | (npu_id << 18) | (die_id << 16) | phy_id


def render_spod_info(hardware, npu_id, chip_id):
    """``npu-smi info -t spod-info -i N -c C``: the four tab-indented keys of a real A3 SuperPoD
    node's log. A chip that is not an A3, or an A3 outside a SuperPoD, gets the sentence Huawei's
    reference prints for unsupported products (the A3 outside a SuperPoD is our choice)."""
    super_pod = hardware.get("super_pod")
    if _layout(hardware) != "a3" or not super_pod:
        _npu(hardware, npu_id)
        return SPOD_UNSUPPORTED + "\n"
    if chip_id is None:
        raise NpuSmiFailure("The input parameter -c is missing.")
    chip = _chip(hardware, npu_id, chip_id)
    phy_id = chip.get("phy_id", chip["logic_id"])
    sdid = spod_sdid(int(super_pod["server_index"]), npu_id, chip.get("chip_id", 0), phy_id)
    lines = [_key_value("SDID", sdid, "\t"), _key_value("Super Pod Size", super_pod.get("size", 384), "\t"),
             _key_value("Super Pod ID", super_pod.get("id", 0), "\t"),
             _key_value("Server Index", super_pod["server_index"], "\t")]
    return "\n".join(lines) + "\n"


def _npu(hardware, npu_id):
    for npu in hardware.get("npus", []):
        if npu.get("npu_id", 0) == npu_id:
            return npu
    raise NpuSmiFailure("The input parameter -i is invalid. The NPU ID %s does not exist." % npu_id)


def _chip(hardware, npu_id, chip_id):
    for chip in ascend_sim.hardware_chips(hardware):
        if chip["npu_id"] == npu_id and chip.get("chip_id", 0) == chip_id:
            return chip
    raise NpuSmiFailure("The input parameter -c is invalid. The chip ID %s does not exist." % chip_id)


def _die_id(bus_id, salt):
    # Stable per chip, different per chip: derived from the bus id.
    digits = "".join(character for character in (bus_id or "0") if character.isalnum()).upper()
    base = int(digits, 16) if digits else 0
    words = ["%08X" % ((base * (index + 3) * 2654435761 + salt) & 0xFFFFFFFF) for index in range(5)]
    return " ".join(words)


def render_board(hardware, driver_version, firmware_version, npu_id, chip_id=None, compatibility="OK"):
    """``npu-smi info -t board -i N [-c C]``; ``compatibility`` is OK or NOK (driver vs firmware)."""
    npu = _npu(hardware, npu_id)
    chips = npu.get("chips", [])
    first_chip = chips[0] if chips else {}
    board_id = hardware.get("board_id") or "NA"
    if chip_id is not None:
        chip = _chip(hardware, npu_id, chip_id)
        if _layout(hardware) == "a3":
            # An A3 names the NPU (93xx, the SoC is Ascend910_93xx) and has no Chip Type (Huawei's
            # "Method for Obtaining the SoC Model" excerpt: these four keys; the rest as on an A2).
            lines = [_key_value("NPU ID", npu_id), _key_value("NPU Name", hardware.get("npu_name", "NA")),
                     _key_value("Chip ID", chip_id)]
        else:
            lines = [_key_value("NPU ID", npu_id), _key_value("Chip ID", chip_id), _key_value("Chip Type", "Ascend")]
        lines += [
            _key_value("Chip Name", chip.get("name", hardware.get("chip_name", ""))),
            _key_value("Chip Version", "V1"),
            _key_value("Board ID", board_id),
            _key_value("PCB ID", "NA"),
            _key_value("BOM ID", "1"),
            _key_value("VDie ID", _die_id(chip.get("bus_id"), 1)),
            _key_value("NDie ID", _die_id(chip.get("bus_id"), 2)),
            _key_value("Chip Position ID", chip.get("chip_id", 0)),
            _key_value("PCIe Bus Info", chip.get("bus_id") or "NA"),
            _key_value("Firmware Version", firmware_version),
        ]
        return "\n".join(lines) + "\n"
    lines = [
        _key_value("NPU ID", npu_id),
        _key_value("Software Version", driver_version),
        _key_value("Firmware Version", firmware_version),
        _key_value("Compatibility", compatibility),
        _key_value("Board ID", board_id),
        _key_value("PCB ID", "A"),
        _key_value("BOM ID", "1"),
        _key_value("PCIe Bus Info", first_chip.get("bus_id") or "NA"),
        _key_value("Slot ID", npu_id),
        _key_value("Class ID", "NA"),
        _key_value("PCI Vendor ID", "0x19e5"),
        _key_value("PCI Device ID", "0x" + str(hardware.get("pci_device", "")).upper().replace("0X", "")),
        _key_value("Subsystem Vendor ID", hardware.get("subsystem_vendor", "NA")),
        _key_value("Subsystem Device ID", hardware.get("subsystem_device", "NA")),
        _key_value("Chip Count", len(chips)),
    ]
    return "\n".join(lines) + "\n"


def render_health(hardware, npu_id, chip_id=None, unhealthy=()):
    """``npu-smi info -t health -i N [-c C]``; without -c the worst chip of the NPU counts."""
    unhealthy = [list(item) for item in unhealthy]
    npu = _npu(hardware, npu_id)
    if chip_id is not None:
        chips = [_chip(hardware, npu_id, chip_id)]
    else:
        chips = [chip for chip in ascend_sim.hardware_chips(hardware) if chip["npu_id"] == npu.get("npu_id", 0)]
    order = ["OK", "Warning", "Alarm", "Critical", "UNKNOWN"]
    health = "OK"
    for chip in chips:
        value = chip_health(chip, unhealthy)
        if order.index(value if value in order else "UNKNOWN") > order.index(health):
            health = value
    error_code = "NA" if health == "OK" else _UNHEALTHY_ERROR_CODE
    lines = [_key_value("Health Status", health), _key_value("Error Code", error_code),
             _key_value("Error Information", "NA")]
    return "\n".join(lines) + "\n"


# Written by the sandbox's Ascend Docker Runtime into each container it gives NPUs: their logical ids.
CONTAINER_DEVICES_FILE = "/run/ascend-sandbox/visible-devices"


def visible_hardware(hardware, devices_file=CONTAINER_DEVICES_FILE):
    """The hardware as this process may see it: in a container the runtime gave some NPUs (it
    names their logical ids in ``devices_file``), only those chips, each keeping its logical id,
    and the NPUs they belong to; elsewhere (a node) the whole hardware, whatever /dev holds."""
    try:
        with open(devices_file) as handle:
            visible = set(int(field) for field in handle.read().split())
    except (IOError, OSError):
        return hardware
    # A static vNPU (id 100 and up) shows as the chip it is cut from (phy id (id - 100) // 16): our
    # choice, no public output shows npu-smi in a vNPU container.
    visible |= set((number - 100) // 16 for number in visible if number >= 100)
    given = [chip for chip in ascend_sim.hardware_chips(hardware) if chip["logic_id"] in visible]
    npus = []
    for npu in hardware.get("npus", []):
        npu_id = npu.get("npu_id", 0)
        kept = [dict((key, value) for key, value in chip.items() if key != "npu_id")
                for chip in given if chip["npu_id"] == npu_id]
        if kept:
            npus.append(dict(npu, chips=kept))
    return dict(hardware, npus=npus)


USAGE = """Usage: npu-smi info [-l | -m | -t board|health|spod-info -i id [-c chip_id]]
       npu-smi info -t info-vnpu -i id -c chip_id | -t template-info|vnpu-mode|vnpu-cfg-recover
       npu-smi set -t vnpu-mode|vnpu-cfg-recover -d 0|1
       npu-smi set -t create-vnpu -i id -c chip_id -f template [-v vnpu_id] [-g vgroup_id]
       npu-smi set -t destroy-vnpu -i id -c chip_id -v vnpu_id
(sandbox npu-smi: only these queries are simulated)
"""


def _option_value(argv, flag):
    if flag not in argv:
        return None
    position = argv.index(flag)
    try:
        return int(argv[position + 1])
    except (IndexError, ValueError):
        raise NpuSmiFailure("The input parameter %s is invalid." % flag)


def run(argv, hardware, faults):
    """Returns the output text of ``npu-smi argv`` on this node; raises NpuSmiFailure."""
    if not argv or argv[0] in ("-h", "--help"):
        return USAGE
    if argv[0] not in ("info", "set"):
        raise NpuSmiFailure("Invalid command: %s. Use 'npu-smi -h' to see the supported commands." % argv[0])
    error_code = faults.get("npu_smi_error")
    if error_code:
        raise NpuSmiFailure("dcmi module initialize failed. ret is %s" % error_code)
    driver_version = ascend_sim.installed_driver_version()
    if driver_version is None or ascend_sim.driver_reboot_pending():
        raise NpuSmiFailure("dcmi module initialize failed. ret is %d" % DCMI_NOT_READY)
    unhealthy = faults.get("unhealthy_chips") or []
    options = argv[1:]
    if argv[0] == "set" or (len(options) >= 2 and options[0] == "-t" and options[1] in VNPU_QUERIES):
        return run_vnpu(argv, hardware, faults, driver_version)
    if not options:
        return render_info(hardware, driver_version, unhealthy=unhealthy)
    if options == ["-l"]:
        return render_info_list(hardware)
    if options == ["-m"]:
        return render_info_mapping(hardware)
    if options[0] == "-t" and len(options) >= 2:
        npu_id = _option_value(options, "-i")
        if npu_id is None:
            raise NpuSmiFailure("The input parameter -i is missing.")
        chip_id = _option_value(options, "-c")
        if options[1] == "board":
            firmware_version = ascend_sim.running_firmware_version(hardware)
            driver_info = ascend_sim.read_key_values(
                os.path.join(ascend_sim.driver_install_path(), "driver", "version.info"))
            # The NOK spelling is ours: no sample shows an incompatible pair.
            compatible = ascend_sim.in_compat_ranges(firmware_version, driver_info.get("compatible_version_fw", ""))
            return render_board(hardware, driver_version, firmware_version, npu_id, chip_id,
                                "OK" if compatible else "NOK")
        if options[1] == "health":
            return render_health(hardware, npu_id, chip_id, unhealthy)
        if options[1] == "spod-info":
            return render_spod_info(hardware, npu_id, chip_id)
    raise NpuSmiFailure("Invalid command: info %s. Use 'npu-smi -h' to see the supported commands."
                        % " ".join(options))


# --- static vNPUs (docs/vnpu.md; MindCluster "Creating vNPUs", "Virtualization Rules") ------
# The sentences npu-smi prints, with exit status 0, where a vNPU command cannot run (VM mode, a chip
# without vNPUs), the answers to the set commands, the vnpu-mode values (docker/VM) and the table
# layouts are those of Huawei's npu-smi source (docs/huawei-sources.md, "Static vNPUs"). Not backed
# by a public source, so chosen by us (see sandbox/README.md): the reason line after "create vnpu
# failed." / "destroy vnpu N failed.", the order in which ids and vGroups are given out, that
# /dev/davinci<vnpu id> appears with the vNPU, the 310P's 24 GB, the legacy 910's template memory
# and AI CPUs, that drivers from 26.0.rc1 print no table header on a chip without vNPUs (one public
# capture shows it), and that a vNPU counts as in use while a container the Ascend Docker Runtime
# gave it exists.

VNPU_QUERIES = ("info-vnpu", "template-info", "vnpu-mode", "vnpu-cfg-recover")
VNPU_STATE_FILE = os.path.join(ascend_sim.STATE_DIR, "vnpu.json")
# Bundles of running containers (containerd's runc shim keeps one per task): the sandbox's
# Ascend Docker Runtime leaves the ids it gave each in ascend-sandbox-visible-devices.
CONTAINER_BUNDLES = "/run/containerd/io.containerd.runtime.v2.task"
UNSPECIFIED_VNPU_ID = 4294967295
DEVICE_DIR = "/dev"
make_device_node = ascend_sim._mknod  # pylint: disable=protected-access  # the driver's own helper
# Template -> (AI cores, memory GB, AI CPUs, VPC, VENC, JPEGD, PNGD, VDEC, JPEGE).
_VNPU_TEMPLATES = {
    "310P": [("vir01", 1, 3, 1, 1, 0, 2, 0, 1, 1), ("vir02", 2, 6, 2, 3, 1, 4, 0, 3, 2),
             ("vir02_1c", 2, 6, 1, 3, 0, 4, 0, 3, 2), ("vir04", 4, 12, 4, 6, 2, 8, 0, 6, 4),
             ("vir04_3c", 4, 12, 3, 6, 1, 8, 0, 6, 4), ("vir04_3c_ndvpp", 4, 12, 3, 0, 0, 0, 0, 0, 0),
             ("vir04_4c_dvpp", 4, 12, 4, 12, 3, 16, 0, 12, 8)],
    "910B4": [("vir10_3c_16g", 10, 16, 3, 4, 0, 12, 0, 1, 2), ("vir10_4c_16g_m", 10, 16, 4, 9, 0, 24, 0, 2, 4),
              ("vir10_3c_16g_nm", 10, 16, 3, 0, 0, 0, 0, 0, 0), ("vir05_1c_8g", 5, 8, 1, 2, 0, 6, 0, 0, 1)],
    "910B3": [("vir10_3c_32g", 10, 32, 3, 4, 0, 12, 0, 1, 2), ("vir05_1c_16g", 5, 16, 1, 2, 0, 6, 0, 0, 1)],
    "910B-training": [("vir12_3c_32g", 12, 32, 3, 4, 0, 12, 0, 1, 2), ("vir06_1c_16g", 6, 16, 1, 2, 0, 6, 0, 0, 1)],
    # Atlas A3, per die (MindCluster "Virtualization Templates": A3 training vir06_1c_16g and
    # vir12_3c_32g, A3 inference vir05_1c_16g and vir10_3c_32g); the media engines are the A2's
    # templates of the same name (ours: no public A3 template-info).
    "A3-training": [("vir12_3c_32g", 12, 32, 3, 4, 0, 12, 0, 1, 2), ("vir06_1c_16g", 6, 16, 1, 2, 0, 6, 0, 0, 1)],
    "A3-inference": [("vir10_3c_32g", 10, 32, 3, 4, 0, 12, 0, 1, 2), ("vir05_1c_16g", 5, 16, 1, 2, 0, 6, 0, 0, 1)],
    # Legacy 910: the four templates of MindCluster's table and npu-smi's create-vnpu help; the
    # memory, AI CPUs and media engines are ours.
    "910": [("vir02", 2, 2, 1, 0, 0, 0, 0, 0, 0), ("vir04", 4, 4, 1, 0, 0, 0, 0, 0, 0),
            ("vir08", 8, 8, 2, 0, 0, 0, 0, 0, 0), ("vir16", 16, 16, 4, 0, 0, 0, 0, 0, 0)],
}
# (AI cores, memory GB, AI CPUs, vNPU ids per chip, vGroups) of a whole chip per template set.
_VNPU_CHIPS = {"310P": (8, 24, 8, 8, True), "910B4": (20, 32, 7, 16, False), "910B3": (20, 64, 7, 16, False),
               "910B-training": (24, 64, 7, 16, False), "910": (30, 32, 14, 16, False),
               # An A3 die: 24 AI cores on the training servers, 20 on the inference ones (MindCluster's
               # "48 / 40 AICores" per NPU of two dies), 64 GB of HBM; its AI CPUs (7) are the A2's: ours.
               "A3-training": (24, 64, 7, 16, False), "A3-inference": (20, 64, 7, 16, False)}
# The A3 servers whose dies take the inference templates (MindCluster: "Atlas A3 inference"); every
# other A3 takes the training ones.
A3_INFERENCE_PRODUCTS = ("Atlas 800I A3",)
# Legacy 910 chip names as npu-smi prints them ("910B" alone is the legacy chip, not an A2 910B1-B4).
LEGACY_910_NAMES = ("910A", "910B", "910PROA", "910PROB", "910PREMIUMA")
# From this driver on, info-vnpu prints no table header on a chip without vNPUs (a public 26.0.rc1 capture).
NO_EMPTY_VNPU_HEADER_FROM = "26.0.rc1"


def _vnpu_kind(hardware):
    """The template set of the node's chips, or None for chips without static vNPUs."""
    name = str(hardware.get("chip_name", "")).upper()
    if _layout(hardware) == "a3":
        # npu-smi names every A3 die Ascend910: the server says which templates its dies take.
        return "A3-inference" if hardware.get("product") in A3_INFERENCE_PRODUCTS else "A3-training"
    if name.startswith("310P"):
        return "310P"
    if name in ("910B3", "910B4"):
        return name
    if name.startswith("910B1") or name.startswith("910B2"):
        return "910B-training"
    if name in LEGACY_910_NAMES:
        return "910"
    return None


def _set_answer(message, ok=True):
    status = "OK" if ok else "Fail"
    return "\t%s : %s\n\t%s : %s\n" % ("Status".ljust(30), status, "Message".ljust(30), message)


def _vnpu_failure(first_line, reason):
    """npu-smi's first line of a refused create or destroy, then our reason (unverified)."""
    return NpuSmiFailure("%s\n%s" % (first_line, reason))


def _refused(what, command):
    """What npu-smi prints, with exit status 0, where a vNPU command cannot run (Huawei's source)."""
    return "%s\n" % what.replace("<command>", command)


NOT_DOCKER_MODE = "The vnpu is not in docker mode, does not support <verb> <command>."
NOT_SUPPORTED = "This device does not support <verb> <command>."


def _in_container():
    return os.path.exists(CONTAINER_DEVICES_FILE)


def load_vnpu_state(hardware):
    """The vNPU state; after a reboot it is kept when config recovery is on, else emptied."""
    state = ascend_sim.read_json(VNPU_STATE_FILE) or (replayed_vnpu_state(hardware) if ascend_sim.replaying() else {})
    state.setdefault("mode", "docker")
    state.setdefault("recover", True)
    state.setdefault("vnpus", [])
    if _in_container():
        return state
    boot = ascend_sim.boot_marker()
    if state.get("boot") != boot:
        if not state["recover"]:
            state["vnpus"] = []
        state["boot"] = boot
        save_vnpu_state(state, hardware)
    return state


def save_vnpu_state(state, hardware):
    """Writes the state and makes /dev/davinci<vnpu id> match the vNPUs that exist."""
    ascend_sim.write_json_atomic(VNPU_STATE_FILE, state)
    wanted = set(vnpu["vnpu_id"] for vnpu in state["vnpus"])
    for name in os.listdir(DEVICE_DIR):
        if name.startswith("davinci") and name[7:].isdigit() and int(name[7:]) >= 100 and int(name[7:]) not in wanted:
            os.remove(os.path.join(DEVICE_DIR, name))
    for vnpu_id in wanted:
        path = os.path.join(DEVICE_DIR, "davinci%d" % vnpu_id)
        if not os.path.exists(path):
            make_device_node(path, ascend_sim.DEVICE_MAJORS["davinci"], vnpu_id)


def vnpus_in_use(faults):
    """vNPU id -> container id: containers that hold one (their bundle names it), and the
    vnpu_in_use fault (ids)."""
    used = {}
    for vnpu_id in faults.get("vnpu_in_use") or []:
        used[int(vnpu_id)] = "5a17b0c0ffee"
    try:
        namespaces = os.listdir(CONTAINER_BUNDLES)
    except OSError:
        namespaces = []
    for namespace in namespaces:
        try:
            containers = os.listdir(os.path.join(CONTAINER_BUNDLES, namespace))
        except OSError:
            continue
        for container in containers:
            path = os.path.join(CONTAINER_BUNDLES, namespace, container, "ascend-sandbox-visible-devices")
            try:
                with open(path) as handle:
                    ids = [int(field) for field in handle.read().split()]
            except (IOError, OSError, ValueError):
                continue
            for vnpu_id in ids:
                if vnpu_id >= 100:
                    used[vnpu_id] = container[:12]
    return used


def render_template_info(kind):
    rule = "+" + "-" * 90 + "+"
    lines = [rule, "|" + "NPU instance template info is:".ljust(90) + "|",
             "|" + "Name".ljust(20) + "AICORE".ljust(10) + "Memory".ljust(10) + "AICPU".ljust(10) + "VPC".ljust(15)
             + "VENC".ljust(15) + "JPEGD".ljust(10) + "|",
             "|" + "".ljust(31) + "GB".ljust(19) + "PNGD".ljust(15) + "VDEC".ljust(15) + "JPEGE".ljust(10) + "|",
             "|" + "=" * 90 + "|"]
    for name, cores, memory, cpus, vpc, venc, jpegd, pngd, vdec, jpege in _VNPU_TEMPLATES[kind]:
        lines.append("|" + name.ljust(20) + str(cores).ljust(10) + str(memory).ljust(10) + str(cpus).ljust(10)
                     + str(vpc).ljust(15) + str(venc).ljust(15) + str(jpegd).ljust(10) + "|")
        lines.append("|" + "".ljust(50) + str(pngd).ljust(15) + str(vdec).ljust(15) + str(jpege).ljust(10) + "|")
        lines.append(rule)
    return "\n".join(lines) + "\n"


def _template(kind, name):
    for entry in _VNPU_TEMPLATES[kind]:
        if entry[0] == name:
            return entry
    return None


def _chip_vnpus(state, npu_id, chip_id):
    return [vnpu for vnpu in state["vnpus"] if vnpu["npu_id"] == npu_id and vnpu["chip_id"] == chip_id]


def _vgroup_cost(kind, vnpus):
    """(vGroups, AI cores) the vNPUs take: on a 310P every vNPU but vir01 has a vGroup of its own,
    two vir01 share one 2-core vGroup."""
    if kind != "310P":
        return 0, sum(_template(kind, vnpu["template"])[1] for vnpu in vnpus)
    vir01 = len([vnpu for vnpu in vnpus if vnpu["template"] == "vir01"])
    others = [vnpu for vnpu in vnpus if vnpu["template"] != "vir01"]
    shared = (vir01 + 1) // 2
    return len(others) + shared, sum(_template(kind, vnpu["template"])[1] for vnpu in others) + 2 * shared


def render_info_vnpu(kind, vnpus, used, header_when_empty=True):
    cores, memory, cpus = _VNPU_CHIPS[kind][:3]
    _groups, used_cores = _vgroup_cost(kind, vnpus)
    used_memory = sum(_template(kind, vnpu["template"])[2] for vnpu in vnpus)
    used_cpus = sum(_template(kind, vnpu["template"])[3] for vnpu in vnpus)
    rule = "+" + "-" * 79 + "+"

    def row(text):
        return "| " + text.ljust(78) + "|"

    cells = ["%d/%d" % (cores - used_cores, cores), "%d/%d" % (memory - used_memory, memory),
             "%d/%d" % (cpus - used_cpus, cpus)]
    lines = [rule, row("NPU resource static info as follow:"),
             row("Format:Free/Total".ljust(36) + "NA: Currently, query is not supported."),
             row("AICORE    Memory    AICPU    VPC    VENC    VDEC    JPEGD    JPEGE    PNGD"),
             row("           GB"), "|" + "=" * 79 + "|",
             row(cells[0].ljust(10) + cells[1].ljust(10) + cells[2].ljust(9)
                 + "NA/NA  NA/NA   NA/NA   NA/NA    NA/NA    NA/NA"), rule,
             row("Total number of vnpu: %d" % len(vnpus)), rule]
    if not vnpus and not header_when_empty:
        return "\n".join(lines) + "\n"
    lines += ["|  Vnpu ID  |  Vgroup ID     |  Container ID  |  Status  |  Template Name       |", rule]
    for vnpu in sorted(vnpus, key=lambda item: item["vnpu_id"]):
        container = used.get(vnpu["vnpu_id"])
        lines.append("|  %s|  %s|  %s|  %s|  %s|" % (
            str(vnpu["vnpu_id"]).ljust(9), str(vnpu["vgroup_id"]).ljust(14),
            (container or "000000000000").ljust(14), ("1" if container else "0").ljust(8),
            vnpu["template"].ljust(20)))
        lines.append(rule)
    return "\n".join(lines) + "\n"


def _free_vgroup(kind, vnpus, template):
    if template == "vir01":
        for vnpu in vnpus:
            partners = [other for other in vnpus if other["vgroup_id"] == vnpu["vgroup_id"]]
            if vnpu["template"] == "vir01" and len(partners) == 1:
                return vnpu["vgroup_id"]
    taken = set(vnpu["vgroup_id"] for vnpu in vnpus)
    for vgroup in range(4 if kind == "310P" else 16):
        if vgroup not in taken:
            return vgroup
    return None


def create_vnpu(state, kind, chip, template, vnpu_id, vgroup_id):
    entry = _template(kind, template)
    if entry is None:
        raise _vnpu_failure("create vnpu failed.", "The template %s is not supported by this device." % template)
    cores, memory, cpus, ids_per_chip, has_vgroups = _VNPU_CHIPS[kind]
    first = 100 + 16 * chip["logic_id"]
    vnpus = _chip_vnpus(state, chip["npu_id"], chip.get("chip_id", 0))
    taken = set(vnpu["vnpu_id"] for vnpu in state["vnpus"])
    if vnpu_id is None or vnpu_id == UNSPECIFIED_VNPU_ID:
        free = [number for number in range(first, first + ids_per_chip) if number not in taken]
        if not free:
            raise _vnpu_failure("create vnpu failed.", "No vnpu id is left on this chip.")
        vnpu_id = free[0]
    elif not first <= vnpu_id < first + ids_per_chip:
        raise _vnpu_failure("create vnpu failed.", "The vnpu id %d is out of range [%d, %d]."
                            % (vnpu_id, first, first + ids_per_chip - 1))
    elif vnpu_id in taken:
        raise _vnpu_failure("create vnpu failed.", "The vnpu id %d already exists." % vnpu_id)
    if vgroup_id is not None and not has_vgroups:
        raise _vnpu_failure("create vnpu failed.", "The parameter -g is not supported by this device.")
    if vgroup_id is not None and not 0 <= vgroup_id <= 3:
        raise _vnpu_failure("create vnpu failed.", "The vgroup id %d is out of range [0, 3]." % vgroup_id)
    if vgroup_id is None:
        vgroup_id = _free_vgroup(kind, vnpus, template)
    new = {"npu_id": chip["npu_id"], "chip_id": chip.get("chip_id", 0), "vnpu_id": vnpu_id,
           "vgroup_id": vgroup_id, "template": template}
    groups, used_cores = _vgroup_cost(kind, vnpus + [new])
    used_memory = sum(_template(kind, vnpu["template"])[2] for vnpu in vnpus + [new])
    if vgroup_id is None or (has_vgroups and groups > 4) or used_cores > cores or used_memory > memory:
        raise _vnpu_failure("create vnpu failed.", "The resources of the device are not enough.")
    state["vnpus"].append(new)
    return "Create vnpu success"


def destroy_vnpu(state, chip, vnpu_id, faults):
    vnpus = _chip_vnpus(state, chip["npu_id"], chip.get("chip_id", 0))
    found = [vnpu for vnpu in vnpus if vnpu["vnpu_id"] == vnpu_id]
    if not found:
        raise _vnpu_failure("destroy vnpu %d failed." % vnpu_id, "The vnpu does not exist.")
    container = vnpus_in_use(faults).get(vnpu_id)
    if container:
        raise _vnpu_failure("destroy vnpu %d failed." % vnpu_id, "The vnpu is in use by container %s." % container)
    state["vnpus"].remove(found[0])
    return "Destroy vnpu %d success" % vnpu_id


def run_vnpu(argv, hardware, faults, driver_version=None):
    """``npu-smi set -t vnpu-mode|vnpu-cfg-recover|create-vnpu|destroy-vnpu`` and ``npu-smi info
    -t info-vnpu|template-info|vnpu-mode|vnpu-cfg-recover``."""
    options = argv[1:]
    what = options[1] if len(options) >= 2 and options[0] == "-t" else None
    verb = "querying" if argv[0] == "info" else "setting"
    kind = _vnpu_kind(hardware)
    if kind is None:
        # Printed, with exit status 0, by npu-smi's environment check (its source).
        return _refused(NOT_SUPPORTED.replace("<verb>", verb), what or "")
    state = load_vnpu_state(hardware)
    if argv[0] == "info":
        if what == "template-info":
            # "-i id" asks for one card's templates (all cards of a sandbox node are alike).
            return render_template_info(kind)
        if what == "vnpu-mode":
            return "\t%s : %s\n" % ("vnpu-mode".ljust(30), "VM" if state["mode"] == "vm" else "docker")
        if what == "vnpu-cfg-recover":
            return "\t%s : %s\n" % ("VNPU config recover mode".ljust(30), "Enable" if state["recover"] else "Disable")
        npu_id = _option_value(options, "-i")
        chip_id = _option_value(options, "-c")
        if npu_id is None or chip_id is None:
            raise NpuSmiFailure("The input parameter -i or -c is missing.")
        chip = _chip(hardware, npu_id, chip_id)
        if state["mode"] != "docker":
            return _refused(NOT_DOCKER_MODE.replace("<verb>", verb), what)
        header = driver_version is None or ascend_sim.version_key(driver_version) < ascend_sim.version_key(
            NO_EMPTY_VNPU_HEADER_FROM)
        return render_info_vnpu(kind, _chip_vnpus(state, chip["npu_id"], chip_id), vnpus_in_use(faults), header)
    if what in ("vnpu-mode", "vnpu-cfg-recover"):
        value = _option_value(options, "-d")
        if value not in (0, 1):
            raise NpuSmiFailure("The input parameter -d is invalid.")
        if what == "vnpu-mode":
            mode = "docker" if value == 0 else "vm"
            if mode != state["mode"] and state["vnpus"]:
                raise NpuSmiFailure(_set_answer("The vNPU(s) in another mode already exist. Destroy them before "
                                                "switching the mode", ok=False).rstrip("\n"))
            state["mode"] = mode
            message = "Set vnpu %s mode success" % mode
        else:
            state["recover"] = value == 1
            message = "The VNPU config recover mode %s is set successfully." % ("Enable" if value else "Disable")
        save_vnpu_state(state, hardware)
        return _set_answer(message)
    if what in ("create-vnpu", "destroy-vnpu"):
        npu_id = _option_value(options, "-i")
        chip_id = _option_value(options, "-c")
        if npu_id is None or chip_id is None:
            raise NpuSmiFailure("The input parameter -i or -c is missing.")
        chip = _chip(hardware, npu_id, chip_id)
        if state["mode"] != "docker":
            return _refused(NOT_DOCKER_MODE.replace("<verb>", verb), what)
        if what == "create-vnpu":
            if "-f" not in options or options.index("-f") + 1 >= len(options):
                raise NpuSmiFailure("Must input parameter of -f.")
            message = create_vnpu(state, kind, chip, options[options.index("-f") + 1], _option_value(options, "-v"),
                                  _option_value(options, "-g"))
        else:
            vnpu_id = _option_value(options, "-v")
            if vnpu_id is None:
                raise NpuSmiFailure("The input parameter -v is missing.")
            message = destroy_vnpu(state, chip, vnpu_id, faults)
        save_vnpu_state(state, hardware)
        return _set_answer(message)
    raise NpuSmiFailure("Invalid command: %s. Use 'npu-smi -h' to see the supported commands." % " ".join(argv))


def simulate(argv):
    try:
        sys.stdout.write(run(argv, visible_hardware(ascend_sim.load_hardware()), ascend_sim.load_faults()))
    except NpuSmiFailure as failure:
        print(failure.message)
        return failure.exit_code
    return 0


# --- replay of a collected bundle (ascend_sim.REPLAY_DIR) -----------------------------------

REPLAY_VNPU_SCOPE = "npu-smi vnpu"
_REPLAY_VNPU_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+|NA|-)?\s*\|\s*([0-9a-fA-F]+)\s*\|\s*(\d+)\s*\|\s*(\S+)\s*\|\s*$")


def _vnpu_command(argv):
    options = argv[1:]
    return argv[:1] == ["set"] or (len(options) >= 2 and options[0] == "-t" and options[1] in VNPU_QUERIES)


def replayed_vnpu_state(hardware):
    """The vNPU state the bundle shows (each chip's info-vnpu, the mode and recovery setting): where the
    simulator starts from when a vNPU is first changed on a replayed node."""
    state = {"vnpus": [], "boot": ascend_sim.boot_marker()}
    mode = ascend_sim.replay_text("npu-smi", ["info", "-t", "vnpu-mode"]) or ""
    if ":" in mode:
        state["mode"] = mode.rsplit(":", 1)[1].strip() or "docker"
    recover = ascend_sim.replay_text("npu-smi", ["info", "-t", "vnpu-cfg-recover"]) or ""
    if ":" in recover:
        state["recover"] = recover.rsplit(":", 1)[1].strip().lower() == "enable"
    for chip in ascend_sim.hardware_chips(hardware):
        text = ascend_sim.replay_text("npu-smi", ["info", "-t", "info-vnpu", "-i", str(chip["npu_id"]),
                                                  "-c", str(chip.get("chip_id", 0))]) or ""
        for line in text.splitlines():
            row = _REPLAY_VNPU_ROW.match(line.strip())
            if row:
                vgroup = row.group(2)
                state["vnpus"].append({"npu_id": chip["npu_id"], "chip_id": chip.get("chip_id", 0),
                                       "vnpu_id": int(row.group(1)), "template": row.group(5),
                                       "vgroup_id": int(vgroup) if vgroup and vgroup.isdigit() else None})
    return state


def replay_main(argv):
    """On a node that replays a bundle: a recorded read answers verbatim; a set goes to the simulator (its
    vNPU state seeded from the bundle), after which the vNPU reads come from the simulator too."""
    if argv[:1] == ["set"]:
        status = simulate(argv)
        if status == 0:
            ascend_sim.mark_replay_diverged(REPLAY_VNPU_SCOPE)
        return status
    if _vnpu_command(argv) and ascend_sim.replay_diverged(REPLAY_VNPU_SCOPE):
        return simulate(argv)
    return ascend_sim.print_replay(ascend_sim.replay_answer("npu-smi", argv))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if ascend_sim.replaying():
        return replay_main(argv)
    return simulate(argv)


if __name__ == "__main__":
    sys.exit(main())
