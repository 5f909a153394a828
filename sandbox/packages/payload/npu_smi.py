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
        lines = [
            _key_value("NPU ID", npu_id),
            _key_value("Chip ID", chip_id),
            _key_value("Chip Type", "Ascend"),
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
    given = [chip for chip in ascend_sim.hardware_chips(hardware) if chip["logic_id"] in visible]
    npus = []
    for npu in hardware.get("npus", []):
        npu_id = npu.get("npu_id", 0)
        kept = [dict((key, value) for key, value in chip.items() if key != "npu_id")
                for chip in given if chip["npu_id"] == npu_id]
        if kept:
            npus.append(dict(npu, chips=kept))
    return dict(hardware, npus=npus)


USAGE = """Usage: npu-smi info [-l | -m | -t board|health -i id [-c chip_id]]
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
    if argv[0] != "info":
        raise NpuSmiFailure("Invalid command: %s. Use 'npu-smi -h' to see the supported commands." % argv[0])
    error_code = faults.get("npu_smi_error")
    if error_code:
        raise NpuSmiFailure("dcmi module initialize failed. ret is %s" % error_code)
    driver_version = ascend_sim.installed_driver_version()
    if driver_version is None or ascend_sim.driver_reboot_pending():
        raise NpuSmiFailure("dcmi module initialize failed. ret is %d" % DCMI_NOT_READY)
    unhealthy = faults.get("unhealthy_chips") or []
    options = argv[1:]
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
    raise NpuSmiFailure("Invalid command: info %s. Use 'npu-smi -h' to see the supported commands."
                        % " ".join(options))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        sys.stdout.write(run(argv, visible_hardware(ascend_sim.load_hardware()), ascend_sim.load_faults()))
    except NpuSmiFailure as failure:
        print(failure.message)
        return failure.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
