"""Fake ``upgrade-tool`` of the sandbox driver (installed as <ip>/driver/tools/upgrade-tool).

Reports the firmware the simulated cards *run* (it changes only after a reboot following a
firmware install), in the format of tests/fixtures/samples/files/upgrade-tool_version_*.txt.
"""

import sys

# Nothing may be left behind in /usr/local/dcmi for the driver uninstall to miss.
sys.dont_write_bytecode = True
sys.path.insert(0, "/usr/local/dcmi")

import ascend_sim  # noqa: E402

# Component types the sample lists for every device, in its order.
COMPONENTS = ((0, "nve"), (3, "uefi"), (8, "imu"), (9, "imp"))

USAGE = "Usage: upgrade-tool --device_index <id|-1> {--component <id|-1> --version | --system_version}\n"


def render_component_versions(device_ids, version):
    lines = ["{"]
    for device_id in device_ids:
        for component_type, name in COMPONENTS:
            lines.append("Get component version(%s) succeed for deviceId(%d), componentType(%d)."
                         % (version, device_id, component_type))
            lines.append('{"device_id":%d, "component":%s, "version":%s}' % (device_id, name, version))
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_system_versions(device_ids, version):
    # unverified: no sample of --system_version; same shape as the component query.
    lines = ["{"]
    for device_id in device_ids:
        lines.append("Get system version(%s) succeed, deviceId(%d)." % (version, device_id))
        lines.append('{"device_id":%d, "version":%s}' % (device_id, version))
    lines.append("}")
    return "\n".join(lines) + "\n"


def option(argv, name):
    if name not in argv:
        return None
    position = argv.index(name)
    if position + 1 >= len(argv):
        return None
    return argv[position + 1]


def main(argv):
    hardware = ascend_sim.load_hardware()
    device_index = option(argv, "--device_index")
    if device_index is None:
        sys.stdout.write(USAGE)
        return 1
    if ascend_sim.driver_reboot_pending():
        # unverified wording: the driver is not loaded yet, so no device answers.
        print("dcmi module initialize failed. ret is -8005")
        return 1
    device_ids = [chip["logic_id"] for chip in ascend_sim.hardware_chips(hardware)]
    if device_index != "-1":
        if not device_index.isdigit() or int(device_index) not in device_ids:
            print("Invalid device index %s." % device_index)
            return 1
        device_ids = [int(device_index)]
    version = ascend_sim.running_firmware_version(hardware)
    if "--system_version" in argv:
        sys.stdout.write(render_system_versions(device_ids, version))
        return 0
    if "--version" in argv and option(argv, "--component") is not None:
        sys.stdout.write(render_component_versions(device_ids, version))
        return 0
    sys.stdout.write(USAGE)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
