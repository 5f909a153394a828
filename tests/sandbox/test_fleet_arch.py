"""How sandbox/fleet.py makes a node of a foreign architecture look like the real server,
without starting one: the /proc/cpuinfo it is given, the image's extra packages, the probe image.

The aarch64 node itself runs in the host_stack_arm molecule scenario.
"""
import os

import pytest

from conftest import load_fleet_module

fleet = load_fleet_module()

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the sandbox simulates aarch64 on x86_64 hosts")


def cpuinfo_field(text, pattern):
    """The value of the first line whose key is pattern (case-insensitive), as containerd's
    platforms package reads /proc/cpuinfo to find arm64's variant; None when no line has it."""
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if separator and key.strip().lower() == pattern.lower():
            return value.strip()
    return None


def test_an_aarch64_node_is_given_the_cpuinfo_of_a_kunpeng_920():
    text = fleet.fake_cpuinfo("aarch64", cores=3)
    blocks = [block for block in text.split("\n\n") if block.strip()]
    assert len(blocks) == 3
    for index, block in enumerate(blocks):
        assert cpuinfo_field(block, "processor") == str(index)
        assert cpuinfo_field(block, "CPU implementer") == "0x48"  # HiSilicon
        assert cpuinfo_field(block, "CPU part") == "0xd01"  # TaiShan v110
        assert "atomics" in cpuinfo_field(block, "Features").split()
    # containerd's lookup: without this line it fails with "failure getting variant".
    assert cpuinfo_field(text, "Cpu architecture") == "8"


def test_the_host_cpuinfo_lacks_what_containerd_needs_on_arm64():
    # What an aarch64 node read before it was given its own file: the reason for the mount.
    with open("/proc/cpuinfo") as host:
        assert cpuinfo_field(host.read(), "Cpu architecture") is None


def test_the_fake_cpuinfo_lists_the_cores_the_node_may_use():
    text = fleet.fake_cpuinfo("aarch64")
    assert text.count("processor\t:") == len(os.sched_getaffinity(0))


def test_a_node_of_the_host_architecture_reads_the_host_cpuinfo():
    assert fleet.fake_cpuinfo("x86_64") is None


def test_only_the_aarch64_image_adds_busybox_for_its_probe_image():
    x86_64 = fleet.base_rootfs_packages(arch="x86_64")
    aarch64 = fleet.base_rootfs_packages(arch="aarch64")
    assert "busybox-static" not in x86_64
    assert aarch64 == x86_64 + ["busybox-static"]
    assert fleet.base_rootfs_hash("x86_64") != fleet.base_rootfs_hash("aarch64")


def test_the_cpu_is_part_of_an_aarch64_node_hardware_only():
    x86_64 = fleet.NodeSpec("t-x86", "Atlas 800I A2", arch="x86_64").hardware()
    aarch64 = fleet.NodeSpec("t-arm", "Atlas 800I A2", arch="aarch64").hardware()
    # An x86_64 node's fingerprint is what it was before aarch64 nodes had a CPU model.
    assert "cpu" not in x86_64
    assert aarch64["cpu"] == "Kunpeng 920"
    assert dict(aarch64, cpu=None, arch=None) == dict(x86_64, cpu=None, arch=None)


def test_each_architecture_has_its_own_image_archives():
    assert fleet.image_archive("probe", "x86_64").name == "probe-image.tar"
    assert fleet.image_archive("probe", "aarch64").name == "probe-image-aarch64.tar"
    assert fleet.image_archive("workload", "x86_64").name == "workload-image.tar"


def test_a_node_of_the_host_architecture_runs_its_own_runc():
    assert fleet.native_container_runtime_files("x86_64") == []


def _elf_machine_and_interpreter(path):
    """(e_machine, has PT_INTERP) of a 64-bit little-endian ELF file."""
    with open(path, "rb") as handle:
        data = handle.read(1 << 16)
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    machine = int.from_bytes(data[18:20], "little")
    program_headers = int.from_bytes(data[32:40], "little")
    entry_size = int.from_bytes(data[54:56], "little")
    count = int.from_bytes(data[56:58], "little")
    kinds = [int.from_bytes(data[program_headers + i * entry_size:program_headers + i * entry_size + 4], "little")
             for i in range(count)]
    return machine, 3 in kinds  # PT_INTERP


def test_an_emulated_node_gets_static_host_builds_of_runc_and_its_shim():
    files = dict((target, source) for source, target in fleet.native_container_runtime_files("aarch64"))
    assert set(files) == {"/usr/local/sbin/runc", "/usr/local/bin/containerd-shim-runc-v2"}
    for source in files.values():
        # x86_64 (EM_X86_64 = 62) and without a dynamic loader: the node has no x86_64 libc.
        assert _elf_machine_and_interpreter(source) == (62, False), source
