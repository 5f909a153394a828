"""Contract tests of the fake driver and firmware packages, run inside a sandbox node.

Expected texts come from the facts reference (section 2) and the transcripts in
tests/fixtures/samples/installer; the parsers of plugins/module_utils read what they write.
"""
import os
import re
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402
from testing import DRIVER, FIRMWARE, OLD_DRIVER, ARM_DRIVER, SOC_DRIVER  # noqa: E402

version_files = collection_code.load_module_utils("packages.version_files")
builder = testing.load_builder()

FULL = ("--nox11", "--full", "--quiet", "--install-for-all")
DRIVER_PREFIX = re.compile(r"^\[Driver\] \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[(INFO|WARNING|ERROR)\]")
FIRMWARE_PREFIX = re.compile(r"^\[Firmware\] \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[(INFO|WARNING|ERROR)\]")


@pytest.fixture
def node(sandbox_node, node_packages):
    sandbox_node.reset()
    testing.prepare_driver_prerequisites(sandbox_node)
    return sandbox_node


def driver_installed(node):
    return testing.node_path_exists(node, "/usr/local/Ascend/driver/version.info")


# --- options --------------------------------------------------------------------------------

@pytest.mark.parametrize("package", [DRIVER, FIRMWARE])
def test_unknown_option_is_rejected_with_huaweis_error(node, package):
    run = testing.run_package(node, package, "--nox11", "--fulll", expect=1)
    assert run.messages()[-1] == ("[ERROR]ERR_NO:0x0004;ERR_DES: Unrecognized parameters: --fulll. Try './%s "
                                  "--help' for more information." % package)
    assert DRIVER_PREFIX.match(run.lines[-1]) or FIRMWARE_PREFIX.match(run.lines[-1])


def test_firmware_rejects_driver_only_options(node):
    run = testing.run_package(node, FIRMWARE, "--full", "--install-for-all", expect=1)
    assert "Unrecognized parameters: --install-for-all." in run.lines[-1]


def test_soc_driver_rejects_install_for_all(node):
    run = testing.run_package(node, SOC_DRIVER, "--nox11", "--full", "--install-for-all", expect=1)
    assert "ERR_NO:0x0004;ERR_DES: Unrecognized parameters: --install-for-all. Try './%s --help'" % SOC_DRIVER \
        in run.lines[-1]


@pytest.mark.parametrize("package, version", [(DRIVER, "25.0.rc1.1"), (FIRMWARE, "7.7.0.1.231")])
def test_version_option(node, package, version):
    run = testing.run_package(node, package, "--version", expect=0)
    assert run.lines[-1] == version


@pytest.mark.parametrize("package, name, label", [
    (DRIVER, "Driver", "ASCEND DRIVER RUN PACKAGE"),
    (FIRMWARE, "Firmware", "ASCEND-HDK-910B-NPU FIRMWARE RUN PACKAGE"),
])
def test_check_prints_the_transcripts_lines(node, package, name, label):
    run = testing.run_package(node, package, "--check", expect=0)
    # transcripts driver_25.0.rc1.1_910b_check.txt and firmware_7.7.0.1.231_910b_check.txt
    assert run.lines[0] == "Makeself logfile: /root/log/makeself/makeself.log"
    assert run.lines[1:3] == ["Verifying archive integrity...  100%   SHA256 checksums are OK. All good."] * 2
    assert run.lines[3].rstrip() == "Uncompressing %s  100%%" % label
    assert run.messages()[4:] == ["[INFO]Start time: " + run.lines[4].split("Start time: ")[1],
                                  "[INFO]LogFile: /var/log/ascend_seclog/ascend_install.log",
                                  "[INFO]OperationLogFile: /var/log/ascend_seclog/operation.log",
                                  "[INFO]End time: " + run.lines[7].split("End time: ")[1]]
    assert all(line.startswith("[%s] [" % name) for line in run.lines[4:])
    assert not driver_installed(node)


# --- prerequisites --------------------------------------------------------------------------

def test_not_root_is_refused(node):
    run = testing.run_package(node, DRIVER, *FULL, user=testing.UNPRIVILEGED, expect=1)
    assert run.messages()[-1] == ("[ERROR]ERR_NO:0x0093;ERR_DES:do not have root permission, operation failed, "
                                  "please use root permission!")


def test_missing_hwhiaiuser_is_refused_unless_another_user_is_named(node):
    node.exec(["sh", "-c", "userdel -r HwHiAiUser; getent group HwHiAiUser && groupdel HwHiAiUser; true"])
    run = testing.run_package(node, DRIVER, *FULL, expect=1)
    assert run.messages()[-1] == "[ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not exists! Please add HwHiAiUser"
    assert not driver_installed(node)

    run = testing.run_package(node, DRIVER, "--full", "--quiet", "--install-username=root",
                              "--install-usergroup=root", expect=0)
    assert "[INFO]set username and usergroup, root:root" in run.messages()
    info = version_files.parse_install_info(testing.read_node_file(node, "/etc/ascend_install.info"))
    assert (info["UserName"], info["UserGroup"], info["Driver_Install_For_All"]) == ("root", "root", "no")


@pytest.mark.parametrize("hidden, listed", [(("lspci",), "lspci,"), (("lspci", "ifconfig"), "lspci,ifconfig,"),
                                            (("ifconfig",), "ifconfig,")])
def test_missing_tools_are_listed(node, hidden, listed):
    run = testing.run_package(node, DRIVER, *FULL, path=testing.path_without(node, *hidden), expect=1)
    assert run.messages()[-1] == "[ERROR]The list of missing tools: %s" % listed
    assert not driver_installed(node)


def test_without_kernel_headers_the_prebuilt_modules_are_copied_for_the_running_kernel(node):
    # Facts reference section 13: no DKMS without dkms, gcc and the running kernel's headers.
    node.exec(["sh", "-c", "apt-get remove -y -q linux-headers-$(uname -r) >/dev/null; "
                           "dkms remove -m ascend_driver --all >/dev/null 2>&1; rm -rf /var/lib/dkms/ascend_driver"])
    try:
        testing.run_package(node, DRIVER, *FULL, expect=0)
        assert driver_installed(node)
        release = node.exec(["uname", "-r"]).stdout.strip()
        assert testing.node_path_exists(node, "/lib/modules/%s/updates/drv_pcie_hdc_host.ko" % release)
        assert not testing.node_path_exists(node, "/var/lib/dkms/ascend_driver")
        log = testing.read_node_file(node, "/var/log/ascend_seclog/ascend_install.log")
        assert "[INFO]not detect driver dkms dependence" in log
        testing.run_package(node, DRIVER, "--uninstall", expect=0)
        assert not testing.node_path_exists(node, "/lib/modules/%s/updates/drv_pcie_hdc_host.ko" % release)
    finally:
        testing.prepare_driver_prerequisites(node)


def test_with_dkms_the_modules_are_built_for_every_kernel_that_gets_headers(node):
    testing.run_package(node, DRIVER, *FULL, expect=0)
    release = node.exec(["uname", "-r"]).stdout.strip()
    status = node.exec(["dkms", "status"]).stdout
    assert "ascend_driver/25.0.rc1.1, %s" % release in status and "installed" in status
    assert testing.node_path_exists(node, "/lib/modules/%s/updates/dkms/drv_pcie_hdc_host.ko" % release)
    # The kernel upgrade: a second kernel, its headers installed with it; DKMS's hook builds for it.
    node.exec(["sh", "-c", "apt-get install -y -q linux-image-sandbox-update linux-headers-sandbox-update >/dev/null"])
    try:
        upgraded = node.exec(["sh", "-c", "ls /boot | sed -n 's/^vmlinuz-//p'"]).stdout.split()
        assert len(upgraded) == 1 and upgraded[0] != release
        assert testing.node_path_exists(node, "/lib/modules/%s/updates/dkms/drv_pcie_hdc_host.ko" % upgraded[0])
        testing.run_package(node, DRIVER, "--uninstall", expect=0)
        assert not testing.node_path_exists(node, "/var/lib/dkms/ascend_driver")
        assert not testing.node_path_exists(node, "/lib/modules/%s/updates/dkms/drv_pcie_hdc_host.ko" % upgraded[0])
    finally:
        node.exec(["sh", "-c", "apt-get purge -y -q linux-image-sandbox-update linux-headers-sandbox-update "
                               "$(dpkg-query -W -f '${Package}\\n' 'linux-image-[0-9]*' 'linux-headers-[0-9]*' "
                               "2>/dev/null | grep -v \"$(uname -r)\") >/dev/null; true"])


def test_package_for_the_other_architecture_fails(node):
    run = testing.run_package(node, ARM_DRIVER, *FULL, expect=1)
    assert run.messages()[-1] == "[ERROR]The architecture of the package (aarch64) does not match the system (x86_64)."
    assert not driver_installed(node)


def test_corrupt_archive_is_stopped_by_makeself(node):
    node.exec(["sh", "-c", "cp {d}/{p} /tmp/corrupt.run && size=$(stat -c %s /tmp/corrupt.run) && "
                           "printf 'XXXXXXXXXXXXXXXX' | dd of=/tmp/corrupt.run bs=1 seek=$((size - 300)) conv=notrunc "
                           "2>/dev/null".format(d=testing.NODE_PACKAGE_DIR, p=DRIVER)])
    result = node.exec(["/tmp/corrupt.run", "--nox11", "--full", "--quiet"], check=False)
    assert result.returncode == 2
    assert "Error in SHA256 checksums:" in result.stderr
    assert not testing.node_path_exists(node, "/usr/local/Ascend")


# --- a full install ---------------------------------------------------------------------------

def test_full_install_prints_the_transcript_and_writes_the_documented_files(node):
    run = testing.run_package(node, DRIVER, "--nox11", "--full", "--install-for-all", expect=0)
    assert run.lines[0] == "Verifying archive integrity...  100%   SHA256 checksums are OK. All good."
    assert run.lines[1].rstrip() == "Uncompressing ASCEND DRIVER RUN PACKAGE  100%"
    assert all(DRIVER_PREFIX.match(line) for line in run.lines[2:])
    # transcript driver_25.0.rc1.1_910b_full.txt on a machine without hot reset
    assert run.messages()[5:] == [
        "[WARNING]Do not power off or restart the system during the installation/upgrade",
        "[INFO]set username and usergroup, HwHiAiUser:HwHiAiUser",
        "[INFO]driver install type: DKMS",
        "[INFO]upgradePercentage:10%", "[INFO]upgradePercentage:30%", "[INFO]upgradePercentage:40%",
        "[INFO]upgradePercentage:90%", "[INFO]upgradePercentage:100%",
        "[INFO]Driver package installed successfully! Reboot needed for installation/upgrade to take effect!",
        "[INFO]End time: " + run.lines[-1].split("End time: ")[1]]

    version_info = testing.read_node_file(node, "/usr/local/Ascend/driver/version.info")
    assert version_info == testing.read_sample_file("files", "driver_version.info_25.0.rc1.1.txt")
    parsed = version_files.parse_driver_version_info(version_info)
    assert (parsed["version"], parsed["compatible_version_fw"]) == ("25.0.rc1.1", "[7.0.0,7.7.99]")
    assert version_files.parse_install_info(testing.read_node_file(node, "/etc/ascend_install.info")) == {
        "UserName": "HwHiAiUser", "UserGroup": "HwHiAiUser", "Driver_Install_Type": "full",
        "Driver_Install_Path_Param": "/usr/local/Ascend", "Driver_Install_For_All": "yes",
        "Driver_Install_Mode": "normal"}
    # base.list of the Ascend Docker Runtime mounts /usr/local/bin/npu-smi into containers.
    assert node.exec(["readlink", "/usr/local/bin/npu-smi"]).stdout == "/usr/local/sbin/npu-smi\n"
    for path in ("/usr/local/sbin/npu-smi", "/usr/local/dcmi", "/usr/local/Ascend/driver/tools/upgrade-tool",
                 "/usr/local/Ascend/driver/script/uninstall.sh", "/usr/local/Ascend/driver/lib64/driver",
                 "/usr/local/Ascend/driver/lib64/common"):
        assert testing.node_path_exists(node, path), path
    log = testing.read_node_file(node, "/var/log/ascend_seclog/ascend_install.log")
    assert "Driver package installed successfully!" in log
    assert testing.read_node_file(node, "/var/log/ascend_seclog/operation.log").strip()


def test_full_over_an_installed_driver_asks_and_quiet_proceeds(node):
    testing.run_package(node, OLD_DRIVER, *FULL, expect=0)
    run = testing.run_package(node, DRIVER, "--nox11", "--full", "--install-for-all", input="n\n", expect=0)
    assert run.lines[-1].endswith("[INFO]Driver package has been installed on the path /usr/local/Ascend, the version "
                                  "is 24.1.rc2.2, and the version of this package is 25.0.rc1.1,do you want to "
                                  "continue?  [y/n] ")
    assert "Version=24.1.rc2.2" in testing.read_node_file(node, "/usr/local/Ascend/driver/version.info")

    run = testing.run_package(node, DRIVER, *FULL, expect=0)
    assert "[INFO]base version is 24.1.rc2.2." in run.messages()
    assert "Version=25.0.rc1.1" in testing.read_node_file(node, "/usr/local/Ascend/driver/version.info")


def test_upgrade_replaces_the_installed_driver(node):
    run = testing.run_package(node, DRIVER, "--nox11", "--upgrade", "--quiet", expect=1)
    assert not driver_installed(node)
    testing.run_package(node, OLD_DRIVER, *FULL, expect=0)
    run = testing.run_package(node, DRIVER, "--nox11", "--upgrade", "--quiet", expect=0)
    assert "[INFO]base version is 24.1.rc2.2." in run.messages()
    assert "Reboot needed for installation/upgrade to take effect!" in run.lines[-2]
    parsed = version_files.parse_driver_version_info(
        testing.read_node_file(node, "/usr/local/Ascend/driver/version.info"))
    assert parsed["version"] == "25.0.rc1.1"
    info = version_files.parse_install_info(testing.read_node_file(node, "/etc/ascend_install.info"))
    assert info["Driver_Install_Type"] == "upgrade"


# --- faults -------------------------------------------------------------------------------------

def test_dkms_failure_fault_leaves_a_node_that_a_rerun_repairs(node):
    node.set_faults({"driver_dkms_failure": True})
    run = testing.run_package(node, DRIVER, *FULL, expect=1)
    assert run.messages()[-2:] == [
        "[ERROR]Dkms install failed, details in : var/log/ascend_seclog/ascend_install.log.",
        "[ERROR]Failed to install driver package, please retry after uninstall and reboot!"]
    # half-installed: files copied, no version file, no install record
    assert testing.node_path_exists(node, "/usr/local/Ascend/driver/lib64")
    assert not driver_installed(node)
    assert not testing.node_path_exists(node, "/etc/ascend_install.info")
    node.set_faults({})
    testing.run_package(node, DRIVER, *FULL, expect=0)
    assert driver_installed(node)


def test_killed_installer_leaves_half_written_files_and_a_rerun_repairs(node):
    node.set_faults({"installer_killed_midway": "driver"})
    run = testing.run_package(node, DRIVER, *FULL, expect=137)
    # The shell running the installer reports the SIGKILL, as on a real node.
    assert run.messages()[-2:] == ["[INFO]upgradePercentage:30%", "Killed"]
    assert testing.node_path_exists(node, "/usr/local/Ascend/driver/lib64/driver/libascend_hal.so")
    assert not driver_installed(node)
    node.set_faults({})
    testing.run_package(node, DRIVER, *FULL, expect=0)
    assert driver_installed(node)


def test_disk_full_fails_the_driver_write(node):
    node.set_faults({"disk_full": True})
    run = testing.run_package(node, DRIVER, *FULL, expect=1)
    assert run.messages()[-1] == "[ERROR]Failed to install driver package: No space left on device"
    assert not driver_installed(node)


def test_exit_code_fault_and_install_duration(node):
    node.set_faults({"installer_exit_code": {"driver": 2}, "install_seconds": 2})
    started = time.monotonic()
    run = testing.run_package(node, DRIVER, *FULL, expect=2)
    assert time.monotonic() - started >= 2
    assert "Driver package installed successfully!" in run.stdout
    assert driver_installed(node)


# --- firmware and uninstall --------------------------------------------------------------------

def test_firmware_needs_the_driver(node):
    run = testing.run_package(node, FIRMWARE, "--nox11", "--full", "--quiet", expect=1)
    assert FIRMWARE_PREFIX.match(run.lines[-1])
    assert "[ERROR]" in run.lines[-1]
    assert not testing.node_path_exists(node, "/usr/local/Ascend/firmware")


def test_firmware_install_prints_the_transcript_and_stages_the_version(node):
    testing.run_package(node, DRIVER, *FULL, expect=0)
    run = testing.run_package(node, FIRMWARE, "--nox11", "--full", "--quiet", expect=0)
    # transcript firmware_7.7.0.1.231_910b_full.txt
    assert run.messages()[3:] == [
        "[WARNING]Do not power off or restart the system during the installation/upgrade",
        "[INFO]upgradePercentage: 0%", "[INFO]upgradePercentage: 90%", "[INFO]upgradePercentage: 100%",
        "[INFO]The firmware of [8] chips are successfully upgraded.",
        "[INFO]Firmware package installed successfully! Reboot now or after driver installation for the "
        "installation/upgrade to take effect.",
        "[INFO]End time: " + run.lines[-1].split("End time: ")[1]]
    version_info = testing.read_node_file(node, "/usr/local/Ascend/firmware/version.info")
    assert version_info == testing.read_sample_file("files", "firmware_version.info_7.7.0.1.231.txt")
    assert version_files.parse_firmware_version_info(version_info)["version"] == "7.7.0.1.231"
    info = version_files.parse_install_info(testing.read_node_file(node, "/etc/ascend_install.info"))
    assert (info["Firmware_Install_Type"], info["Firmware_Install_Path_Param"]) == ("full", "/usr/local/Ascend")
    assert '"7.7.0.1.231"' in testing.read_node_file(node, "/var/lib/ascend-sandbox/firmware-staged.json")


def test_uninstall_scripts_remove_everything_the_installs_wrote(node):
    testing.run_package(node, DRIVER, *FULL, expect=0)
    testing.run_package(node, FIRMWARE, "--nox11", "--full", "--quiet", expect=0)
    firmware = node.exec(["/usr/local/Ascend/firmware/script/uninstall.sh"])
    # transcript firmware_7.1.0.3.220_uninstall_script.txt
    assert [re.sub(r"^\[Firmware\] \[[0-9: -]+\] ", "", line) for line in firmware.stdout.splitlines()] == [
        "[INFO]base version is 7.7.0.1.231.",
        "[INFO]Firmware package uninstalled successfully! Uninstallation takes effect immediately."]
    driver = node.exec(["/usr/local/Ascend/driver/script/uninstall.sh"])
    # transcript driver_uninstall_script_force.txt
    assert driver.stdout == "[INFO]Driver package uninstalled successfully! Reboot needed for uninstallation to " \
                            "take effect!\n"
    for path in ("/usr/local/Ascend", "/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi", "/usr/local/dcmi",
                 "/etc/ascend_install.info"):
        assert not testing.node_path_exists(node, path), path
    # Huawei keeps its logs after an uninstall.
    assert testing.node_path_exists(node, "/var/log/ascend_seclog/ascend_install.log")


def test_uninstall_option_of_the_package(node):
    testing.run_package(node, DRIVER, *FULL, expect=0)
    run = testing.run_package(node, DRIVER, "--nox11", "--uninstall", "--quiet", expect=0)
    assert "[INFO]Driver package uninstalled successfully! Reboot needed for uninstallation to take effect!" \
        in run.messages()
    assert not testing.node_path_exists(node, "/usr/local/Ascend")
