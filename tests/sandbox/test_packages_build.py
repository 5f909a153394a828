"""Fast contract tests of the fake-package builder that need no sandbox node.

They run the archives on the host only for what cannot touch it: ``--version`` (the installer
refuses anything else outside a sandbox node) and makeself's own ``--check``.
"""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("makeself") is None, reason="makeself is not installed (make deps)")

builder = testing.load_builder()
version_files = collection_code.load_module_utils("packages.version_files")
ascend_package = collection_code.load_module_utils("packages.package_names")

# (component, chip, version, arch, soc) -> the name Huawei gives that package (facts reference section 1)
REAL_NAMES = [
    (("driver", "910b", "25.0.rc1.1", "x86_64", False), "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-x86-64.run"),
    (("driver", "910b", "25.0.rc1.1", "aarch64", False), "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run"),
    (("driver", "310p", "23.0.rc3", "x86_64", False), "Ascend-hdk-310p-npu-driver_23.0.rc3_linux-x86-64.run"),
    (("driver", "310b", "25.0.rc1.1", "aarch64", True), "Ascend-hdk-310b-npu-driver-soc_25.0.rc1.1_linux-aarch64.run"),
    (("firmware", "910b", "7.7.0.1.231", "x86_64", False), "Ascend-hdk-910b-npu-firmware_7.7.0.1.231.run"),
    (("firmware", "310b", "7.7.0.1.231", "aarch64", True), "Ascend-hdk-310b-npu-firmware-soc_7.7.0.1.231.run"),
    (("toolkit", None, "8.2.RC1", "x86_64", False), "Ascend-cann-toolkit_8.2.RC1_linux-x86_64.run"),
    (("toolkit", None, "8.0.RC1", "aarch64", False), "Ascend-cann-toolkit_8.0.RC1_linux-aarch64.run"),
    (("kernels", "910b", "8.2.RC1", "x86_64", False), "Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64.run"),
    (("ops", "910b", "8.5.0", "x86_64", False), "Ascend-cann-910b-ops_8.5.0_linux-x86_64.run"),
    (("nnal", None, "8.2.RC1", "x86_64", False), "Ascend-cann-nnal_8.2.RC1_linux-x86_64.run"),
    (("docker_runtime", None, "7.3.0", "x86_64", False), "Ascend-docker-runtime_7.3.0_linux-x86_64.run"),
    (("docker_runtime", None, "6.0.0.SPC1", "aarch64", False), "Ascend-docker-runtime_6.0.0.SPC1_linux-aarch64.run"),
]


def build(out_dir, component, chip, version, arch="x86_64", soc=False):
    return builder.build(component, chip or "910b", version, arch, soc, str(out_dir))


def run_archive(path, *args, home):
    # HOME and TMPDIR inside the test's own directory: makeself extracts there.
    environment = dict(os.environ, LC_ALL="C", HOME=str(home), TMPDIR=str(home))
    # One stream, as a terminal shows it: makeself writes its progress to stderr mid-line.
    return subprocess.run([path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=environment, stdin=subprocess.DEVNULL, check=False)


@pytest.mark.parametrize("spec, expected", REAL_NAMES, ids=[name for _spec, name in REAL_NAMES])
def test_archive_is_named_like_huaweis_and_round_trips(tmp_path, spec, expected):
    component, chip, version, arch, soc = spec
    path = build(tmp_path, component, chip, version, arch, soc)
    assert os.path.basename(path) == expected
    parsed = ascend_package.parse_package_name(path)
    assert parsed["component"] == component
    assert parsed["version"] == version
    assert parsed["soc"] == soc
    assert parsed["arch"] == (None if component == "firmware" else arch)
    if chip is not None:
        assert parsed["chip"] == chip


def test_builds_are_fast_and_reproducible(tmp_path):
    outputs = []
    for attempt in ("first", "second"):
        started = time.monotonic()
        outputs.append(build(tmp_path / attempt, "driver", "910b", "25.0.rc1.1"))
        assert time.monotonic() - started < 1.0
    with open(outputs[0], "rb") as first, open(outputs[1], "rb") as second:
        assert first.read() == second.read()


@pytest.mark.parametrize("component, chip, version, expected", [
    ("driver", "910b", "25.0.rc1.1", "25.0.rc1.1"),
    ("firmware", "910b", "7.7.0.1.231", "7.7.0.1.231"),
    ("toolkit", None, "8.2.RC1", "8.2.RC1"),
    ("docker_runtime", None, "7.3.0", "ascend-docker-runtime version: 7.3.0"),
])
def test_version_option_prints_the_package_version(tmp_path, component, chip, version, expected):
    path = build(tmp_path, component, chip, version)
    result = run_archive(path, "--version", home=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == expected


def test_makeself_check_verifies_the_archive(tmp_path):
    path = build(tmp_path, "toolkit", None, "8.2.RC1")
    result = run_archive(path, "--check", home=tmp_path)
    assert result.returncode == 0
    shown = testing.terminal_text(result.stdout)
    assert shown == "Verifying archive integrity...  100%   SHA256 checksums are OK. All good.\n"


def test_corrupt_archive_fails_makeselfs_own_check(tmp_path):
    path = build(tmp_path, "toolkit", None, "8.2.RC1")
    with open(path, "r+b") as handle:
        handle.seek(-200, os.SEEK_END)
        data = bytearray(handle.read(16))
        handle.seek(-200, os.SEEK_END)
        handle.write(bytes(byte ^ 0xFF for byte in data))
    result = run_archive(path, "--check", home=tmp_path)
    assert result.returncode == 2
    assert "Error in SHA256 checksums:" in result.stdout
    assert "is different from" in result.stdout


def test_makeself_header_patch_fails_loudly_on_an_unknown_makeself(tmp_path, monkeypatch):
    fake_header = tmp_path / "header.sh"
    fake_header.write_text("cat << EOF > \"$archname\"\n#!/bin/sh\nEOF\n")
    monkeypatch.setattr(builder, "MAKESELF_HEADER", str(fake_header))
    with pytest.raises(SystemExit) as failure:
        builder.write_header("driver", str(tmp_path / "out.sh"))
    assert "makeself 2.4" in str(failure.value)


# --- version files: where a real sample exists, the builder must write it byte for byte ---

@pytest.mark.parametrize("version", ["24.1.rc1", "24.1.rc2.2", "25.0.rc1.1", "25.3.rc1"])
def test_driver_version_info_equals_the_real_file(version):
    assert builder.driver_version_info(version) == testing.read_sample_file(
        "files", "driver_version.info_%s.txt" % version)


@pytest.mark.parametrize("version", ["7.1.0.11.220", "7.7.0.1.231"])
def test_firmware_version_info_equals_the_real_file(version):
    assert builder.firmware_version_info(version) == testing.read_sample_file(
        "files", "firmware_version.info_%s.txt" % version)


@pytest.mark.parametrize("version", ["8.0.0", "8.1.RC1", "8.2.RC1", "8.5.0"])
def test_toolkit_install_info_equals_the_real_file(version):
    if version == "8.5.0":
        path = "/usr/local/Ascend/cann-8.5.0/aarch64-linux"
    else:
        path = "/usr/local/Ascend/ascend-toolkit/%s/aarch64-linux" % version
    generated = builder.toolkit_install_info(version, "aarch64").replace("@PATH@", path)
    assert generated == testing.read_sample_file("files", "ascend_toolkit_install.info_%s_aarch64.txt" % version)


def test_opp_kernel_and_nnal_version_files_equal_the_real_files():
    assert builder.opp_kernel_version_info("8.2.RC1") == testing.read_sample_file(
        "files", "opp_kernel_version.info_8.2.RC1.txt")
    assert builder.nnal_version_info("8.2.RC1", "aarch64") == testing.read_sample_file(
        "files", "nnal_atb_version.info_8.2.RC1.txt")


# --- drift guard: the collection's parsers read what the fake packages write ---------------

@pytest.mark.parametrize("version, package_version, firmware_range", [
    ("24.1.rc1", None, "[7.0.0,7.2.99]"),
    ("25.0.rc1.1", "25.0.rc1.1", "[7.0.0,7.7.99]"),
    ("25.5.0", "25.5.0", "[7.0.0,8.9.9]"),
    ("23.0.3", None, "[6.4.0,7.1.99]"),
])
def test_driver_version_info_parses(version, package_version, firmware_range):
    parsed = version_files.parse_driver_version_info(builder.driver_version_info(version))
    assert parsed["version"] == version
    assert parsed["package_version"] == package_version
    assert parsed["compatible_version_fw"] == firmware_range


@pytest.mark.parametrize("version, package_version", [("7.7.0.1.231", "25.0.rc1.1"), ("7.3.0.1.231", "24.1.rc2"),
                                                      ("7.9.0.1.100", None)])
def test_firmware_version_info_parses(version, package_version):
    parsed = version_files.parse_firmware_version_info(builder.firmware_version_info(version))
    assert parsed["version"] == version
    assert parsed["package_version"] == package_version
    assert parsed["compatible_version_drv"].startswith("[")


def test_cann_version_files_parse():
    toolkit = version_files.parse_toolkit_install_info(
        builder.toolkit_install_info("8.3.RC1", "x86_64").replace("@PATH@", "/opt/x"))
    assert toolkit == {"version": "8.3.RC1", "arch": "x86_64", "path": "/opt/x",
                       "inner_version": "V100R001C23SPC001B220"}
    kernels = version_files.parse_opp_kernel_version_info(builder.opp_kernel_version_info("8.3.RC1"))
    assert kernels == {"version": "8.3.RC1", "ops_version": "8.3.0.1.220"}
    nnal = version_files.parse_nnal_version_info(builder.nnal_version_info("8.5.0", "x86_64"))
    assert nnal == {"version": "8.5.0", "full_version": "8.5.0.B100", "platform": "x86_64"}
    config = version_files.parse_toolkit_version_cfg(builder.toolkit_version_cfg("8.2.RC1"))
    assert config["toolkit_installed_version"] == [{"inner_version": "8.2.0.0.201", "version": "8.2.RC1"}]


def test_extract_and_list_are_makeselfs_own(tmp_path):
    path = build(tmp_path, "driver", "910b", "25.0.rc1.1")
    target = tmp_path / "extracted"
    result = run_archive(path, "--extract=%s" % target, home=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (target / "install.sh").exists() and (target / "npu_smi.py").exists()
    assert '"component": "driver"' in (target / "package.json").read_text()
    listing = run_archive(path, "--list", home=tmp_path)
    assert listing.returncode == 0
    assert "./installer.py" in listing.stdout
    info = run_archive(path, "--info", home=tmp_path)
    assert "Identification: ASCEND DRIVER RUN PACKAGE" in info.stdout


def load_payload_sim():
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_test_ascend_sim", os.path.join(builder.PAYLOAD_DIR, "ascend_sim.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_archive_carries_huaweis_install_duration(tmp_path):
    assert set(builder.HUAWEI_INSTALL_SECONDS) == set(builder.COMPONENTS)
    path = build(tmp_path, "toolkit", None, "8.2.RC1")
    target = tmp_path / "extracted"
    assert run_archive(path, "--extract=%s" % target, home=tmp_path).returncode == 0
    package = json.loads((target / "package.json").read_text())
    assert package["huawei_install_seconds"] == builder.HUAWEI_INSTALL_SECONDS["toolkit"]
    assert package["install_seconds"] == 0.0


@pytest.mark.parametrize("faults, expected", [
    ({}, 2.0),                                                    # the archive's --install-seconds
    ({"install_time_scale": 0.5}, 240.0),                         # half of Huawei's 480 s
    ({"install_time_scale": 0}, 0.0),                             # a scale of 0 is honoured, not "unset"
    ({"install_seconds": 7, "install_time_scale": 0.5}, 7.0),     # the flat fault wins over the scale
    ({"install_seconds": 0, "install_time_scale": 0.5}, 0.0),
])
def test_install_duration_precedence(faults, expected):
    sim = load_payload_sim()
    package = {"component": "toolkit", "install_seconds": 2.0, "huawei_install_seconds": 480}
    assert sim.Faults("toolkit", data=faults).install_seconds(package) == expected


def test_an_archive_built_before_the_table_lasts_zero_under_a_scale():
    sim = load_payload_sim()
    assert sim.Faults("driver", data={"install_time_scale": 1}).install_seconds({"install_seconds": 0}) == 0.0
