# Sandbox simulation of ascend-docker-runtime, the runc wrapper of Huawei's Ascend Docker Runtime.
#
# The real runtime adds a prestart hook to the container's OCI spec; the hook then gives the
# container the NPUs named by ASCEND_VISIBLE_DEVICES and mounts the driver files of base.list.
# This stand-in edits the spec directly to the same effect (device nodes, device cgroup rules,
# read-only bind mounts), then hands over to runc, so that a container started through it sees
# the NPU devices and one started through plain runc does not.
import json
import os
import stat
import sys

BASE_LIST = "/etc/ascend-docker-runtime.d/base.list"
# Every NPU container gets the management devices with its davinci<N>.
SHARED_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
# Sandbox only: the driver's kernel side. On a server, npu-smi in a container learns the chips, their
# health and the driver's version from the kernel module through /dev/davinci_manager; the
# sandbox's kernel module is these files (the simulated hardware, its faults and state, and the
# version files the fake npu-smi reads), so containers given NPUs get them read-only as well.
INSTALL_INFO = "/etc/ascend_install.info"
SIMULATED_KERNEL = ("/etc/ascend-sandbox", "/var/lib/ascend-sandbox", INSTALL_INFO)
# The same path as the fake npu-smi's CONTAINER_DEVICES_FILE (the runtime is packed on its own).
CONTAINER_DEVICES_FILE = "/run/ascend-sandbox/visible-devices"


def parse_device_ids(value):
    """'0,1' or '0-3' or '0-1,4' -> [0, 1, ...]."""
    value = value.strip()
    if not value:
        return []
    ids = []
    for part in value.split(","):
        first, _dash, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return ids


def device_entry(path):
    info = os.stat(path)
    if not stat.S_ISCHR(info.st_mode):
        raise SystemExit("ascend-docker-runtime: %s is not a character device" % path)
    return {"path": path, "type": "c", "major": os.major(info.st_rdev), "minor": os.minor(info.st_rdev),
            "fileMode": stat.S_IMODE(info.st_mode), "uid": 0, "gid": 0}


def add_npus(spec, bundle):
    env = dict(item.split("=", 1) for item in spec.get("process", {}).get("env", []) if "=" in item)
    if "ASCEND_VISIBLE_DEVICES" not in env:
        return
    visible = parse_device_ids(env["ASCEND_VISIBLE_DEVICES"])
    paths = ["/dev/davinci%d" % npu for npu in visible]
    missing = [path for path in paths if not os.path.exists(path)]
    if missing:
        # The real hook fails container start the same way when the driver has no such device.
        raise SystemExit("ascend-docker-runtime: ASCEND_VISIBLE_DEVICES=%s names %s, which the driver "
                         "does not provide" % (env["ASCEND_VISIBLE_DEVICES"], ", ".join(missing)))
    options = env.get("ASCEND_RUNTIME_OPTIONS", "").upper().split(",")
    if "NODRV" not in options:
        paths += [path for path in SHARED_DEVICES if os.path.exists(path)]
    linux = spec.setdefault("linux", {})
    devices = linux.setdefault("devices", [])
    rules = linux.setdefault("resources", {}).setdefault("devices", [])
    for path in paths:
        entry = device_entry(path)
        devices.append(entry)
        rules.append({"allow": True, "type": "c", "major": entry["major"], "minor": entry["minor"],
                      "access": "rwm"})
    if "NODRV" in options or not os.path.exists(BASE_LIST):
        return
    with open(BASE_LIST) as handle:
        sources = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    mounts = spec.setdefault("mounts", [])
    for source in sources + list(SIMULATED_KERNEL) + [driver_version_file()]:
        if os.path.exists(source):
            mounts.append({"destination": source, "type": "bind", "source": source,
                           "options": ["rbind", "ro", "nosuid", "nodev"]})
    # What the kernel module knows of a container and the fake npu-smi cannot tell from /dev
    # (a node may lack a device file and still have the chip): the NPUs this container was given.
    devices_file = os.path.abspath(os.path.join(bundle, "ascend-sandbox-visible-devices"))
    with open(devices_file, "w") as handle:
        handle.write("".join("%d\n" % npu for npu in visible))
    mounts.append({"destination": CONTAINER_DEVICES_FILE, "type": "bind", "source": devices_file,
                   "options": ["rbind", "ro", "nosuid", "nodev"]})


def driver_version_file():
    install_path = "/usr/local/Ascend"
    if os.path.exists(INSTALL_INFO):
        with open(INSTALL_INFO) as handle:
            for line in handle:
                key, _equals, value = line.strip().partition("=")
                if key == "Driver_Install_Path_Param" and value:
                    install_path = value
    return os.path.join(install_path, "driver", "version.info")


def bundle_dir(argv):
    for index, arg in enumerate(argv):
        if arg in ("--bundle", "-b") and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--bundle="):
            return arg.split("=", 1)[1]
    return os.getcwd()


def main(argv):
    if "create" in argv:
        config = os.path.join(bundle_dir(argv[argv.index("create") + 1:]), "config.json")
        with open(config) as handle:
            spec = json.load(handle)
        add_npus(spec, os.path.dirname(config))
        with open(config + ".tmp", "w") as handle:
            json.dump(spec, handle)
        os.rename(config + ".tmp", config)
    os.execvp("runc", ["runc"] + argv)


if __name__ == "__main__":
    main(sys.argv[1:])
