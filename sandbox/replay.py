"""A sandbox node made from a real server's diagnostics bundle (sandbox/README.md, "Replaying a server").

The bundle is what the collection's ``npu.ascend.collect`` writes for one node (docs/collect.md): its
``commands/`` hold the verbatim reads (``<tool> <args>.txt``, ``.stderr.txt``, ``.rc``), ``files/``
the version files, os-release and /etc/hccn.conf, ``system/uname.txt`` the kernel line. From it this
module derives what fleet.py needs to make the node: the simulated hardware (chips, bus ids and PCI
ids from the recorded npu-smi and lspci reads, RoCE ports when hccn_tool answered), the replay
directory the fake tools answer from, and the files put on the node before its first boot (the
bundle's version files at their paths, the fake npu-smi and hccn_tool). Like everything under
sandbox/ it reads the documented bundle format and never imports the collection's code.
"""

import importlib.util
import io
import json
import re
import sys
import tarfile
from pathlib import Path

PAYLOAD_DIR = Path(__file__).resolve().parent / "packages" / "payload"
COMMANDS = "commands/"
FILES = "files/"
# Where the node's fake tools find the replay directory (ascend_sim.REPLAY_DIR): the hardware
# directory fleet.py mounts at /etc/ascend-sandbox.
REPLAY_SUBDIR = "replay"
DEFAULT_INSTALL_PATH = "/usr/local/Ascend"
# What the fake driver installs (ascend_sim.NPU_SMI_PATH, NPU_SMI_LINK, DCMI_DIR, HCCN_TOOL_LINK).
NPU_SMI_PATH = "usr/local/sbin/npu-smi"
NPU_SMI_LINK = "usr/local/bin/npu-smi"
HCCN_TOOL_LINK = "usr/local/bin/hccn_tool"
DCMI_DIR = "usr/local/dcmi"
# Files of the bundle the node gets at their own path: what the probe, preflight and the report read
# of the installed software and the system. Logs, the engines' (redacted) configs and the
# collection's records stay in the bundle.
NODE_FILE_PATTERNS = (re.compile(r"^etc/ascend_install\.info$"), re.compile(r"^etc/os-release$"),
                      re.compile(r"^etc/hccn\.conf$"), re.compile(r"^.+/(version\.info|version\.cfg|"
                                                                  r"ascend_toolkit_install\.info|"
                                                                  r"ascend_docker_runtime_install\.info)$"))


class BundleError(Exception):
    """The bundle cannot make a node: the message names the bundle, what is missing and the fix."""


def _ascend_sim():
    """The fake tools' shared module (payload/ascend_sim.py), whose replay_name the tools answer by."""
    name = "npu_ascend_sandbox_replay_ascend_sim"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, str(PAYLOAD_DIR / "ascend_sim.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def replay_name(tool, args):
    """The record's name of ``tool args`` in commands/ (the bundle's naming, docs/collect.md), as the node's
    fake tools compute it."""
    return _ascend_sim().replay_name(tool, args)


# --- reading a bundle -------------------------------------------------------------------------

def _safe_name(name):
    """A member name relative to the bundle, or None for one that would leave it (``..``, absolute)."""
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if not parts or ".." in parts or name.startswith("/"):
        return None
    return "/".join(parts)


def _members_of_tar(archive):
    members = {}
    for member in archive.getmembers():
        name = _safe_name(member.name)
        if member.isfile() and name:
            members[name] = archive.extractfile(member).read()
    return members


def _node_bundles(members):
    """{node: bytes} of the node bundles in a fleet archive (npu-ascend-collect-<time>/<node>.tar.gz)."""
    found = {}
    for name, data in members.items():
        base = name.rsplit("/", 1)[-1]
        if base.endswith(".tar.gz") and name.count("/") <= 1:
            found[base[:-len(".tar.gz")]] = data
    return found


def read_bundle(source, node=None):
    """{member: bytes} of one node's bundle: a node bundle (.tar.gz), the fleet archive of a collect run
    (``node`` picks one of its bundles; without it the only one), or a bundle unpacked into a directory."""
    path = Path(source)
    if path.is_dir():
        members = {}
        for item in sorted(path.rglob("*")):
            if item.is_file() and not item.is_symlink():
                members[item.relative_to(path).as_posix()] = item.read_bytes()
    else:
        try:
            with tarfile.open(str(path)) as archive:
                members = _members_of_tar(archive)
        except (OSError, tarfile.TarError) as error:
            raise BundleError("%s cannot be read as a bundle (%s); fix: give the archive npu.ascend.collect wrote, "
                              "a <node>.tar.gz inside it, or a directory it was unpacked to" % (source, error))
    nodes = _node_bundles(members)
    if nodes and not any(name.startswith(COMMANDS) for name in members):
        if node is None and len(nodes) == 1:
            node = next(iter(nodes))
        if node not in nodes:
            raise BundleError("%s is a fleet archive with the bundles of %s; fix: name the node to replay "
                              "(sandbox_replay_node, or --bundle-node)" % (source, ", ".join(sorted(nodes)) or "no node"))
        with tarfile.open(fileobj=io.BytesIO(nodes[node])) as archive:
            members = _members_of_tar(archive)
    if not any(name.startswith(COMMANDS) for name in members):
        raise BundleError("%s holds no commands/ records: it was written by a collection older than the replay, or "
                          "is not a node's bundle; fix: collect the node again with npu.ascend.collect" % source)
    return members


def recorded(members, tool, args):
    """(exit status, stdout text) of a recorded read, or (None, '') when the bundle lacks it."""
    base = COMMANDS + replay_name(tool, args)
    if base + ".rc" not in members:
        return None, ""
    try:
        status = int(members[base + ".rc"].decode().strip())
    except ValueError:
        return None, ""
    return status, members.get(base + ".txt", b"").decode("utf-8", "replace")


# --- the hardware the bundle shows ------------------------------------------------------------

_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")


def chips_from_info(text):
    """[{npu_id, chip_id, name, health, bus_id}] from the chip table of ``npu-smi info``: its rows that start
    with a number, two per chip (NPU id, name, health; then chip id and bus id), up to the process table."""
    rows = []
    for line in text.splitlines():
        if "Process id" in line or "Process name" in line:
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and cells[0][:1].isdigit():
            rows.append(cells)
    chips = []
    for first, second in zip(rows[0::2], rows[1::2]):
        npu_id, _space, name = first[0].partition(" ")
        chip_id = second[0].split()[0]
        if not (npu_id.isdigit() and chip_id.isdigit()):
            continue
        chips.append({"npu_id": int(npu_id), "name": name.strip(), "health": first[1], "chip_id": int(chip_id),
                      "bus_id": second[1].upper() if _BUS_ID.match(second[1]) else None})
    return chips


def lspci_devices(text):
    """[{slot, device, svendor, sdevice, rev}] of ``lspci -vmm -nn -D``'s records."""
    devices = []
    for record in re.split(r"\n\s*\n", text.strip()):
        fields = {}
        for line in record.splitlines():
            key, _colon, value = line.partition(":")
            fields[key.strip()] = value.strip()
        if "Slot" not in fields:
            continue
        devices.append({"slot": fields["Slot"].lower(), "device": _pci_code(fields, "Device"),
                        "svendor": _pci_code(fields, "SVendor"), "sdevice": _pci_code(fields, "SDevice"),
                        "rev": fields.get("Rev")})
    return devices


def _pci_code(fields, key):
    """The 4-digit id in brackets at the end of an lspci -vmm -nn field (``Device [d802]``), lower case."""
    found = re.search(r"\[([0-9a-fA-F]{4})\]\s*$", fields.get(key, ""))
    return found.group(1).lower() if found else None


def _board_value(members, npu_id, key):
    status, text = recorded(members, "npu-smi", ["info", "-t", "board", "-i", str(npu_id)])
    if status != 0:
        return None
    for line in text.splitlines():
        name, _colon, value = line.partition(":")
        if name.strip().lower() == key.lower():
            return value.strip()
    return None


def chip_family(name):
    upper = name.upper().replace("ASCEND", "")
    for prefix, family in (("910B", "910b"), ("910_93", "a3"), ("910C", "a3"), ("910", "910"), ("310P", "310p"),
                           ("310B", "310b"), ("310", "310")):
        if upper.startswith(prefix):
            return family
    return upper.lower()


def arch_of(members):
    text = members.get("system/uname.txt", b"").decode("utf-8", "replace")
    return "aarch64" if re.search(r"\baarch64\b", text) else "x86_64"


def hardware(members, products, huawei_vendor="0x19e5"):
    """hardware.json of the replayed node (docs/development.md), with ``product`` the first of
    ``products`` (fleet.py's PRODUCTS) that has the bundle's PCI device and subsystem device, else
    ``Replayed <chip>``."""
    status, text = recorded(members, "npu-smi", ["info"])
    chips = chips_from_info(text) if status == 0 else []
    if not chips:
        raise BundleError("the bundle's npu-smi info (commands/%s.txt) %s, so the node's chips are unknown; fix: "
                          "collect the node again once npu-smi answers there"
                          % (replay_name("npu-smi", ["info"]), "lists no chip" if status == 0 else
                             "is missing" if status is None else "failed (exit %d)" % status))
    missing_bus = [chip for chip in chips if not chip["bus_id"]]
    if missing_bus:
        raise BundleError("npu-smi info in the bundle shows no PCI bus id for NPU %s (a 310B SoC?): a replayed "
                          "node needs one per chip for its PCI devices" % missing_bus[0]["npu_id"])
    status, lspci_text = recorded(members, "lspci", ["-vmm", "-nn", "-D", "-d", "19e5:"])
    by_slot = dict((device["slot"], device) for device in lspci_devices(lspci_text)) if status == 0 else {}
    first = by_slot.get(chips[0]["bus_id"].lower(), {})
    first_npu = chips[0]["npu_id"]
    pci_device = first.get("device") or (_board_value(members, first_npu, "PCI Device ID") or "").lower().replace("0x", "")
    subsystem_vendor = ("0x" + first["svendor"]) if first.get("svendor") else \
        (_board_value(members, first_npu, "Subsystem Vendor ID") or huawei_vendor).lower()
    subsystem_device = ("0x" + first["sdevice"]) if first.get("sdevice") else \
        (_board_value(members, first_npu, "Subsystem Device ID") or "").lower()
    if not re.match(r"^[0-9a-f]{4}$", pci_device or "") or not re.match(r"^0x[0-9a-f]{4}$", subsystem_device):
        raise BundleError("the bundle shows neither lspci -vmm -nn -D -d 19e5: nor the boards' PCI ids, so the "
                          "node's PCI devices are unknown; fix: collect the node again with lspci installed")
    revision = "0x" + (first.get("rev") or "20").lower().replace("0x", "")
    npus = []
    for chip in chips:
        if not npus or npus[-1]["npu_id"] != chip["npu_id"]:
            npus.append({"npu_id": chip["npu_id"], "chips": []})
        npus[-1]["chips"].append({"chip_id": chip["chip_id"], "bus_id": chip["bus_id"], "health": chip["health"],
                                  "name": chip["name"]})
    chips_per_npu = max(len(npu["chips"]) for npu in npus)
    product = None
    for name, model in sorted(products.items()):
        if model["pci_device"] == pci_device and model["subsystem_device"] == subsystem_device \
                and model["chips_per_npu"] == chips_per_npu:
            product = name
            break
    roce = any(name.startswith(COMMANDS + "hccn_tool ") and name.endswith(".rc") and data.strip() == b"0"
               for name, data in members.items())
    described = {
        "product": product or "Replayed %s" % chips[0]["name"],
        "chip_family": chip_family(chips[0]["name"]),
        "chip_name": chips[0]["name"],
        "pci_device": pci_device,
        "pci_revision": revision,
        "subsystem_vendor": subsystem_vendor,
        "subsystem_device": subsystem_device,
        "arch": arch_of(members),
        "hot_reset": False,
        "board_id": _board_value(members, first_npu, "Board ID"),
        "npus": npus,
        "replayed": True,
    }
    if roce:
        described["roce"] = True
    return described


# --- what the node gets -------------------------------------------------------------------------

def node_files(members):
    """{path on the node (relative to /): bytes} of the bundle's files the node carries."""
    chosen = {}
    for name, data in members.items():
        if name.startswith(FILES):
            path = name[len(FILES):]
            if any(pattern.match(path) for pattern in NODE_FILE_PATTERNS):
                chosen[path] = data
    return chosen


def install_path(members):
    for name in members:
        if name.startswith(FILES) and name.endswith("/driver/version.info"):
            return "/" + name[len(FILES):-len("/driver/version.info")]
    return DEFAULT_INSTALL_PATH


def _script(name):
    """A payload Python file as a command (as the fake driver installs it)."""
    return ("#!/usr/bin/python3\n" + (PAYLOAD_DIR / name).read_text()).encode()


# The modules the fake driver installs for the running kernel (installer.py KERNEL_MODULES); the boot
# service creates the device nodes only where they are.
KERNEL_MODULES = ("drv_pcie_hdc_host", "drv_seclib_host")


def overlay(members, described, kernel_release):
    """A tar stream (bytes) for ``podman cp - <node>:/`` before the first boot: the bundle's files at
    their paths, the fake npu-smi (and hccn_tool on a node with RoCE ports) and their DCMI stand-in, and,
    where the bundle's npu-smi answered (its driver was loaded), the driver's kernel modules for the
    running kernel ``kernel_release``, so that the node boots with its device nodes."""
    entries = dict(node_files(members))
    if recorded(members, "npu-smi", ["info"])[0] == 0:
        for module in KERNEL_MODULES:
            # /lib is a link to /usr/lib on the node (merged /usr): the tar names the directory itself.
            entries["usr/lib/modules/%s/updates/%s.ko" % (kernel_release, module)] = (
                "simulated kernel module %s of a replayed node (ascend-sandbox)\n" % module).encode()
    entries[NPU_SMI_PATH] = _script("npu_smi.py")
    entries[DCMI_DIR + "/ascend_sim.py"] = (PAYLOAD_DIR / "ascend_sim.py").read_bytes()
    links = {NPU_SMI_LINK: "/" + NPU_SMI_PATH}
    if described.get("roce"):
        tool = install_path(members).lstrip("/") + "/driver/tools/hccn_tool"
        entries[tool] = _script("hccn_tool.py")
        links[HCCN_TOOL_LINK] = "/" + tool
    if "etc/os-release" in entries:
        # The image's /etc/os-release is a link to /usr/lib/os-release; the bundle's replaces what it names.
        entries["usr/lib/os-release"] = entries.pop("etc/os-release")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        directories = set()
        for path in sorted(list(entries) + list(links)):
            parts = path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                directory = "/".join(parts[:depth])
                if directory not in directories:
                    directories.add(directory)
                    entry = tarfile.TarInfo(directory)
                    entry.type, entry.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(entry)
        for path, data in sorted(entries.items()):
            entry = tarfile.TarInfo(path)
            entry.size = len(data)
            entry.mode = 0o755 if path in (NPU_SMI_PATH,) or path.endswith("/hccn_tool") else \
                0o640 if path == "etc/hccn.conf" else 0o644
            archive.addfile(entry, io.BytesIO(data))
        for path, target in sorted(links.items()):
            entry = tarfile.TarInfo(path)
            entry.type, entry.linkname = tarfile.SYMTYPE, target
            archive.addfile(entry)
    return buffer.getvalue()


def write_replay_dir(members, directory):
    """The bundle's commands/ under ``directory``, which the node's fake tools answer from; beside it the
    bundle's index (for a reader) and the driver version the recorded reads belong to."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in members.items():
        if name.startswith(COMMANDS) and "/" not in name[len(COMMANDS):]:
            (directory / name[len(COMMANDS):]).write_bytes(data)
    if "index.json" in members:
        (directory.parent / "replay-index.json").write_bytes(members["index.json"])
    version = driver_version(members)
    if version:
        (directory.parent / "replay-driver.json").write_text(json.dumps({"version": version}) + "\n")


def driver_version(members):
    """``Version=`` of the bundle's driver version.info, or None."""
    for name, data in members.items():
        if name.startswith(FILES) and name.endswith("/driver/version.info"):
            found = re.search(r"^Version=(\S+)", data.decode("utf-8", "replace"), re.MULTILINE)
            if found:
                return found.group(1)
    return None


def digest(members):
    import hashlib
    hasher = hashlib.sha256()
    for name in sorted(members):
        hasher.update(name.encode() + b"\0" + members[name] + b"\0")
    return hasher.hexdigest()[:12]


def summary(members):
    """One line about the bundle, for fleet.py's log."""
    try:
        index = json.loads(members.get("index.json", b"[]").decode())
    except ValueError:
        index = []
    commands = len([name for name in members if name.startswith(COMMANDS) and name.endswith(".rc")])
    return "%d recorded reads, %d indexed pieces" % (commands, len(index))
