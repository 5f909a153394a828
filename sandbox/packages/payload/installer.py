"""Entry point of every fake Huawei ``.run`` package (sandbox only).

makeself extracts the archive into a temporary directory and runs ``install.sh`` there,
which runs this file with the installer options the user gave. ``package.json`` (written by
sandbox/packages/build.py) says which package this is. Installed uninstall scripts run a
copy of this file with ASCEND_SIM_ENTRY=uninstall-script.

Options, messages, exit codes and written files follow the facts reference (sections 2, 3,
4, 8) and the transcripts in tests/fixtures/samples/installer. Where Huawei's text is not
known, the message is marked "unverified" here and listed in sandbox/README.md.
"""

import errno
import grp
import json
import os
import platform
import pwd
import shutil
import subprocess
import sys
import time

import ascend_sim

PAYLOAD_DIR = os.path.dirname(os.path.abspath(__file__))
ALL_USERS_MODE = 0o755


def split_options(argv, options, value_options, flag_options, operations):
    """Record argv's known options in ``options``; return the operations given and the first unknown argument.

    Every installer kind reads its options this way and rejects an unknown one in its own words.
    """
    for argument in argv:
        name = argument.split("=", 1)[0]
        if "=" in argument and name in value_options:
            options[name] = argument.split("=", 1)[1]
        elif argument in flag_options or argument in operations:
            options[argument] = True
        else:
            return [], argument
    return [argument for argument in argv if argument in operations], None


class InstallerExit(Exception):
    def __init__(self, code):
        Exception.__init__(self, code)
        self.code = code


def load_package():
    with open(os.path.join(PAYLOAD_DIR, "package.json")) as handle:
        return json.load(handle)


def payload_text(name):
    with open(os.path.join(PAYLOAD_DIR, "files", name)) as handle:
        return handle.read()


def run_file_name(package):
    bundle = os.environ.get("MS_BUNDLE")
    return os.path.basename(bundle) if bundle else package["filename"]


def command_exists(name):
    return shutil.which(name) is not None


def machine_arch():
    return platform.machine()


def require_supported_os(console, package):
    """Installs go only onto a system on Huawei's support list (facts reference section 7)."""
    unsupported = ascend_sim.unsupported_os(machine_arch())
    if unsupported:
        # unverified wording: the rule and the <Name>_<version>_<arch> name are Huawei's deployer's.
        console.error("The OS %s is not supported by %s; install on a supported OS (Ubuntu 22.04, "
                      "openEuler 22.03 LTS, Kylin V10, ...)." % (unsupported, run_file_name(package)))
        raise InstallerExit(1)


def read_answer():
    try:
        answer = sys.stdin.readline()
    except (IOError, OSError):
        return ""
    return answer.strip()


def free_bytes(path):
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


class Progress(object):
    """Spreads the simulated install duration over the installer's progress steps."""

    def __init__(self, total_seconds, steps):
        self.pause = total_seconds / max(steps, 1)

    def step(self):
        if self.pause > 0:
            time.sleep(self.pause)


def copy_runtime(recorder, directory, entry):
    """Installs what an uninstall script needs to run this package's code later."""
    for name in ("installer.py", "ascend_sim.py", "package.json"):
        recorder.copy(os.path.join(PAYLOAD_DIR, name), os.path.join(directory, name), 0o644)
    files_dir = os.path.join(PAYLOAD_DIR, "files")
    for name in sorted(os.listdir(files_dir)):
        recorder.copy(os.path.join(files_dir, name), os.path.join(directory, "files", name), 0o644)
    recorder.write(os.path.join(directory, "uninstall.sh"),
                   "#!/bin/sh\n"
                   "# Uninstalls this package (sandbox simulation of Huawei's script).\n"
                   "ASCEND_SIM_ENTRY=%s exec python3 -B \"$(dirname \"$0\")/installer.py\" \"$@\"\n" % entry,
                   0o755)


def install_script(recorder, name, path):
    """Installs a payload Python file as a command (the payload copies carry no shebang)."""
    with open(os.path.join(PAYLOAD_DIR, name)) as handle:
        recorder.write(path, "#!/usr/bin/python3\n" + handle.read(), 0o755)


# ==========================================================================================
# Driver and firmware (facts reference section 2)
# ==========================================================================================

class HdkInstaller(object):
    operations = ()
    value_options = ()
    flag_options = ()
    console_name = ""
    component = ""

    def __init__(self, package, argv):
        self.package = package
        self.argv = argv
        self.version = package["version"]
        self.console = ascend_sim.Console(self.console_name, "hdk", log_enabled=os.geteuid() == 0)
        self.faults = ascend_sim.Faults(self.component)
        self.hardware = ascend_sim.load_hardware()
        self.options = {}
        self.operation = None

    # --- options --------------------------------------------------------------------------
    def reject(self, argument):
        self.console.error("ERR_NO:0x0004;ERR_DES: Unrecognized parameters: %s. Try './%s --help' for more "
                           "information." % (argument, run_file_name(self.package)))
        raise InstallerExit(1)

    def parse(self):
        chosen, unknown = split_options(self.argv, self.options, self.value_options, self.flag_options, self.operations)
        if unknown is not None:
            self.reject(unknown)
        if len(chosen) > 1:
            # unverified: Huawei's text for two operations at once is not known.
            self.console.error("ERR_NO:0x0004;ERR_DES: Only one of %s can be given, got %s."
                               % (", ".join(self.operations), " ".join(chosen)))
            raise InstallerExit(1)
        self.operation = chosen[0] if chosen else None

    @property
    def install_path(self):
        return self.options.get("--install-path") or ascend_sim.DEFAULT_INSTALL_PATH

    @property
    def quiet(self):
        return bool(self.options.get("--quiet"))

    def usage(self):
        # unverified: Huawei's --help text is not known; this lists the options we accept.
        print("Usage: ./%s [options]" % run_file_name(self.package))
        print("Options: " + " ".join(list(self.operations) + list(self.flag_options)
                                     + [name + "=<value>" for name in self.value_options]))

    # --- common steps -----------------------------------------------------------------------
    def begin(self):
        start = time.strftime("%Y-%m-%d %H:%M:%S")
        self.console.info("Start time: " + start)
        self.console.info("LogFile: " + ascend_sim.INSTALL_LOG)
        self.console.info("OperationLogFile: " + ascend_sim.OPERATION_LOG)
        self.console.operation("%s %s start, package %s" % (self.component, self.operation, self.version))

    def end(self):
        self.console.info("End time: " + time.strftime("%Y-%m-%d %H:%M:%S"))

    def require_root(self):
        if os.geteuid() != 0:
            self.console.error("ERR_NO:0x0093;ERR_DES:do not have root permission, operation failed, "
                               "please use root permission!")
            raise InstallerExit(1)

    def require_tools(self):
        missing = [tool for tool in ("lspci", "ifconfig") if not command_exists(tool)]
        if missing:
            self.console.error("The list of missing tools: %s," % ",".join(missing))
            raise InstallerExit(1)

    def chip_count(self):
        return len(ascend_sim.hardware_chips(self.hardware))

    def main(self):
        self.parse()
        if self.options.get("--help"):
            self.usage()
            return 0
        if self.options.get("--version"):
            # unverified: the real --version output format is not in the samples.
            print(self.version)
            return 0
        self.require_root()
        if self.operation == "--check":
            self.begin()
            self.end()
            return 0
        if self.operation is None:
            # unverified: what Huawei prints when no operation is given.
            self.console.error("ERR_NO:0x0004;ERR_DES: One of %s is required. Try './%s --help' for more "
                               "information." % (", ".join(self.operations), run_file_name(self.package)))
            return 1
        self.begin()
        if self.operation != "--uninstall":
            require_supported_os(self.console, self.package)
        try:
            code = self.uninstall() if self.operation == "--uninstall" else self.install()
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            self.console.error("%s: %s" % (self.failure_text(), error.strerror))
            return 1
        return code

    def failure_text(self):
        return "Failed to install %s package" % self.component

    def finish(self):
        self.end()
        override = self.faults.exit_code()
        return 0 if override is None else int(override)


class DriverInstaller(HdkInstaller):
    operations = ("--full", "--run", "--devel", "--docker", "--upgrade", "--uninstall", "--check")
    value_options = ("--install-username", "--install-usergroup", "--install-path")
    flag_options = ("--version", "--quiet", "--install-for-all", "--help")
    console_name = "Driver"
    component = "driver"

    def __init__(self, package, argv):
        if package.get("soc"):
            # The SoC driver has no --install-for-all (facts reference section 2).
            self.flag_options = tuple(option for option in self.flag_options if option != "--install-for-all")
        HdkInstaller.__init__(self, package, argv)

    @property
    def driver_dir(self):
        return os.path.join(self.install_path, "driver")

    @property
    def manifest(self):
        return os.path.join(self.driver_dir, "script", "filelist")

    def require_arch(self):
        if machine_arch() != self.package["arch"]:
            # unverified: the real driver's wording for a package of the other architecture.
            self.console.error("The architecture of the package (%s) does not match the system (%s)."
                               % (self.package["arch"], machine_arch()))
            raise InstallerExit(1)

    def require_user(self):
        user = self.options.get("--install-username", "HwHiAiUser")
        group = self.options.get("--install-usergroup", "HwHiAiUser")
        for name, lookup in ((user, pwd.getpwnam), (group, grp.getgrnam)):
            try:
                lookup(name)
            except KeyError:
                self.console.error("ERR_NO:0x0091;ERR_DES:%s not exists! Please add %s" % (name, name))
                raise InstallerExit(1)
        return user, group

    # Facts reference section 13: the installer builds through DKMS only when dkms, gcc and the running
    # kernel's headers are there; otherwise it copies its prebuilt modules to /lib/modules/$(uname -r)/updates,
    # for that kernel only. The DKMS module's name is the sandbox's own (Huawei's is not known).
    DKMS_MODULE = "ascend_driver"
    KERNEL_MODULES = ("drv_pcie_hdc_host", "drv_seclib_host")

    def dkms_ready(self):
        build_dir = "/lib/modules/%s/build" % os.uname().release
        return os.path.exists(build_dir) and command_exists("dkms") and command_exists("gcc")

    @property
    def dkms_source(self):
        return "/usr/src/%s-%s" % (self.DKMS_MODULE, self.version)

    def install_kernel_modules(self, recorder, dkms):
        """None, or why the module build failed (that goes to the install log only)."""
        if self.faults.dkms_failure:
            return "dkms build of the driver module failed (injected fault driver_dkms_failure)"
        release = os.uname().release
        if not dkms:
            self.console.log("[Driver] [%s] [INFO]not detect driver dkms dependence " % self.console.timestamp())
            for name in self.KERNEL_MODULES:
                recorder.write("/lib/modules/%s/updates/%s.ko" % (release, name),
                               "simulated prebuilt kernel module %s of driver %s, vermagic %s (ascend-sandbox)\n"
                               % (name, self.version, release))
            return None
        # A registration left by an earlier install of this version goes first, as a reinstall's would.
        self.remove_kernel_modules()
        recorder.write(os.path.join(self.dkms_source, "dkms.conf"), "".join(
            ['PACKAGE_NAME="%s"\n' % self.DKMS_MODULE, 'PACKAGE_VERSION="%s"\n' % self.version,
             'MAKE[0]="sh ./build.sh ${kernelver}"\n', 'CLEAN="true"\n', 'AUTOINSTALL="yes"\n']
            + ['BUILT_MODULE_NAME[%d]="%s"\nDEST_MODULE_LOCATION[%d]="/updates"\nSTRIP[%d]="no"\n'
               % (index, name, index, index) for index, name in enumerate(self.KERNEL_MODULES)]))
        recorder.write(os.path.join(self.dkms_source, "build.sh"), "".join(
            'echo "simulated kernel module %s of driver %s, built for $1 (ascend-sandbox)" > %s.ko\n'
            % (name, self.version, name) for name in self.KERNEL_MODULES))
        recorder.save()
        for argv in (["dkms", "add", "-m", self.DKMS_MODULE, "-v", self.version],
                     ["dkms", "install", "-m", self.DKMS_MODULE, "-v", self.version, "-k", release]):
            result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    universal_newlines=True, check=False)
            self.console.log("[Driver] [%s] [INFO]%s: %s"
                             % (self.console.timestamp(), " ".join(argv), result.stdout.strip()))
            if result.returncode != 0:
                return "%s failed (rc=%d)" % (" ".join(argv), result.returncode)
        return None

    def remove_kernel_modules(self):
        """DKMS forgets the driver's module (every kernel); the prebuilt modules go with the manifest."""
        tree = "/var/lib/dkms/%s" % self.DKMS_MODULE
        if os.path.isdir(tree) and command_exists("dkms"):
            for version in sorted(os.listdir(tree)):
                if os.path.isdir(os.path.join(tree, version, "source")) or os.path.islink(os.path.join(tree, version, "source")):
                    subprocess.run(["dkms", "remove", "-m", self.DKMS_MODULE, "-v", version, "--all"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            shutil.rmtree("/var/lib/dkms/%s" % self.DKMS_MODULE, ignore_errors=True)

    def remove_leftovers(self):
        """A driver dir without version.info is the remains of a failed or killed install."""
        if os.path.isdir(self.driver_dir) and not os.path.exists(os.path.join(self.driver_dir, "version.info")):
            ascend_sim.remove_tree(self.driver_dir)

    def install(self):
        installed = ascend_sim.installed_driver_version(self.install_path)
        if self.operation == "--upgrade" and installed is None:
            # unverified: Huawei's text for --upgrade on a node without a driver.
            self.console.error("Driver package is not installed on the path %s, use --full to install it."
                               % self.install_path)
            return 1
        self.require_arch()
        self.require_tools()
        user, group = self.require_user()
        if installed is not None and self.operation != "--upgrade" and not self.quiet:
            # Transcript driver_25.0.rc1.1_310b-soc_full-over-23.0.rc3.txt.
            sys.stdout.write(self.console.format(
                "INFO", "Driver package has been installed on the path %s, the version is %s, and the version "
                        "of this package is %s,do you want to continue?  [y/n] "
                        % (self.install_path, installed, self.version)))
            sys.stdout.flush()
            if read_answer().lower() not in ("y", "yes"):
                return 0
        if installed is not None:
            self.console.info("base version is %s." % installed)
        self.console.warning("Do not power off or restart the system during the installation/upgrade")
        self.console.info("set username and usergroup, %s:%s" % (user, group))
        if installed is not None:
            self.remove_installed(quiet=True)
        self.remove_leftovers()
        dkms = self.dkms_ready()
        if dkms:
            self.console.info("driver install type: DKMS")
        progress = Progress(self.faults.install_seconds(self.package), 5)
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        self.console.info("upgradePercentage:10%")
        progress.step()
        self.write_libraries(recorder)
        self.console.info("upgradePercentage:30%")
        progress.step()
        if self.faults.killed_midway:
            self.faults.kill_now()
        self.write_tools(recorder)
        self.console.info("upgradePercentage:40%")
        progress.step()
        problem = self.install_kernel_modules(recorder, dkms)
        if problem:
            recorder.save()
            self.console.log("[Driver] [%s] [ERROR]%s" % (self.console.timestamp(), problem))
            self.console.error("Dkms install failed, details in : var/log/ascend_seclog/ascend_install.log.")
            self.console.error("Failed to install driver package, please retry after uninstall and reboot!")
            return 1
        self.console.info("upgradePercentage:90%")
        progress.step()
        recorder.write(os.path.join(self.driver_dir, "version.info"), payload_text("version.info"), 0o444)
        recorder.save()
        ascend_sim.update_install_info({
            "UserName": user, "UserGroup": group,
            "Driver_Install_Type": self.operation.lstrip("-"),
            "Driver_Install_Path_Param": self.install_path,
            "Driver_Install_For_All": "yes" if self.options.get("--install-for-all") else "no",
            "Driver_Install_Mode": "normal",
        })
        hot_reset = bool(self.hardware.get("hot_reset"))
        if hot_reset:
            self.console.info("Waiting for device startup...")
            ascend_sim.forget_pending_reboot("driver")
            ascend_sim.load_driver_devices()
            self.console.info("Device startup success")
        else:
            ascend_sim.record_pending_reboot("driver", self.version)
        progress.step()
        self.console.info("upgradePercentage:100%")
        if hot_reset:
            self.console.info("Driver package installed successfully! The new version takes effect immediately.")
        else:
            self.console.info("Driver package installed successfully! Reboot needed for installation/upgrade to "
                              "take effect!")
        self.console.operation("driver %s succeeded, version %s" % (self.operation, self.version))
        return self.finish()

    def write_libraries(self, recorder):
        lib_dir = os.path.join(self.driver_dir, "lib64")
        for relative in ("driver/libascend_hal.so", "driver/libdrvdsmi_host.so", "common/libc_sec.so",
                         "common/libmmpa.so"):
            recorder.write(os.path.join(lib_dir, relative),
                           "simulated %s of driver %s (ascend-sandbox)\n"
                           % (os.path.basename(relative), self.version))
        recorder.write(os.path.join(self.driver_dir, "include", "dsmi_common_interface.h"),
                       "/* simulated header of driver %s (ascend-sandbox) */\n" % self.version)
        recorder.write(os.path.join(self.driver_dir, "kernel", "drv_davinci_host.ko"),
                       "simulated kernel module of driver %s (ascend-sandbox)\n" % self.version)

    def write_tools(self, recorder):
        install_script(recorder, "upgrade_tool.py", os.path.join(self.driver_dir, "tools", "upgrade-tool"))
        install_script(recorder, "npu_smi.py", ascend_sim.NPU_SMI_PATH)
        recorder.symlink(ascend_sim.NPU_SMI_PATH, ascend_sim.NPU_SMI_LINK)
        recorder.copy(os.path.join(PAYLOAD_DIR, "ascend_sim.py"),
                      os.path.join(ascend_sim.DCMI_DIR, "ascend_sim.py"), 0o644)
        recorder.write(os.path.join(ascend_sim.DCMI_DIR, "dcmi_interface_api.h"),
                       "/* simulated DCMI header of driver %s (ascend-sandbox) */\n" % self.version)
        copy_runtime(recorder, os.path.join(self.driver_dir, "script"), "driver-uninstall-script")
        self.write_hccn_tool(recorder)

    def write_hccn_tool(self, recorder):
        """hccn_tool, its PATH link, the boot unit that runs ``-cfg recovery`` and an empty
        /etc/hccn.conf (root:root 0640) when there is none; the file is configuration and stays
        at an uninstall or upgrade (docs/hccn.md)."""
        tool = os.path.join(self.driver_dir, "tools", "hccn_tool")
        install_script(recorder, "hccn_tool.py", tool)
        recorder.symlink(tool, ascend_sim.HCCN_TOOL_LINK)
        recorder.write(ascend_sim.HCCN_RECOVERY_UNIT, ascend_sim.hccn_recovery_unit(tool))
        recorder.symlink(ascend_sim.HCCN_RECOVERY_UNIT, ascend_sim.HCCN_RECOVERY_WANTS)
        if not os.path.exists(ascend_sim.HCCN_CONF):
            with open(ascend_sim.HCCN_CONF, "w"):
                pass
            os.chmod(ascend_sim.HCCN_CONF, 0o640)
            os.chown(ascend_sim.HCCN_CONF, 0, 0)

    def remove_installed(self, quiet=False):
        self.remove_kernel_modules()
        ascend_sim.remove_recorded(self.manifest, self.install_path)
        for path in (ascend_sim.NPU_SMI_PATH, ascend_sim.NPU_SMI_LINK):
            if os.path.lexists(path):
                os.remove(path)
        ascend_sim.prune_empty_parents(ascend_sim.DCMI_DIR, ascend_sim.DCMI_DIR)
        removals = ["Driver_Install_Type", "Driver_Install_Path_Param", "Driver_Install_For_All",
                    "Driver_Install_Mode"]
        if not quiet:
            if not os.path.exists(os.path.join(self.install_path, "firmware", "version.info")):
                removals += ["UserName", "UserGroup"]
            ascend_sim.update_install_info({}, removals)
            ascend_sim.forget_pending_reboot("driver")

    def uninstall(self, script_style=False):
        installed = ascend_sim.installed_driver_version(self.install_path)
        if installed is None and not os.path.exists(self.manifest):
            # unverified: Huawei's text when there is nothing to uninstall.
            self.console.warning("Driver package is not installed on the path %s, nothing to uninstall."
                                 % self.install_path)
            return 0
        hot_reset = bool(self.hardware.get("hot_reset"))
        self.remove_installed()
        if hot_reset:
            ascend_sim.unload_driver_devices()
            text = "Driver package uninstalled successfully! Uninstallation takes effect immediately."
        else:
            text = "Driver package uninstalled successfully! Reboot needed for uninstallation to take effect!"
        if script_style:
            # The installed uninstall.sh prints without the [Driver] prefix (driver_uninstall_script_force.txt).
            print("[INFO]" + text)
            self.console.log(self.console.format("INFO", text))
        else:
            self.console.info(text)
        if not script_style:
            self.end()
        return 0


class FirmwareInstaller(HdkInstaller):
    operations = ("--full", "--upgrade", "--uninstall", "--check")
    value_options = ("--install-path",)
    flag_options = ("--version", "--quiet", "--help")
    console_name = "Firmware"
    component = "firmware"

    @property
    def firmware_dir(self):
        return os.path.join(self.install_path, "firmware")

    @property
    def manifest(self):
        return os.path.join(self.firmware_dir, "script", "filelist")

    def install(self):
        self.require_tools()
        upgrade_tool = os.path.join(ascend_sim.driver_install_path(), "driver", "tools", "upgrade-tool")
        if not os.access(upgrade_tool, os.X_OK):
            # unverified: the firmware flashes through the driver's upgrade-tool; Huawei's text is not known.
            self.console.error("The driver is not installed (%s not found), install the driver package first."
                               % upgrade_tool)
            return 1
        self.console.warning("Do not power off or restart the system during the installation/upgrade")
        installed = ascend_sim.read_key_values(os.path.join(self.firmware_dir, "version.info")).get("Version")
        if os.path.isdir(self.firmware_dir):
            if not ascend_sim.remove_recorded(self.manifest, self.install_path):
                ascend_sim.remove_tree(self.firmware_dir)
        progress = Progress(self.faults.install_seconds(self.package), 3)
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        self.console.info("upgradePercentage: 0%")
        progress.step()
        copy_runtime(recorder, os.path.join(self.firmware_dir, "script"), "firmware-uninstall-script")
        if self.faults.killed_midway:
            self.faults.kill_now()
        self.console.info("upgradePercentage: 90%")
        progress.step()
        recorder.write(os.path.join(self.firmware_dir, "version.info"), payload_text("version.info"), 0o444)
        recorder.save()
        ascend_sim.write_json_atomic(ascend_sim.FIRMWARE_STAGED_FILE,
                                     {"version": self.version, "previous": installed})
        ascend_sim.record_pending_reboot("firmware", self.version)
        ascend_sim.update_install_info({"Firmware_Install_Type": self.operation.lstrip("-"),
                                        "Firmware_Install_Path_Param": self.install_path})
        progress.step()
        self.console.info("upgradePercentage: 100%")
        self.console.info("The firmware of [%d] chips are successfully upgraded." % self.chip_count())
        self.console.info("Firmware package installed successfully! Reboot now or after driver installation for "
                          "the installation/upgrade to take effect.")
        self.console.operation("firmware %s succeeded, version %s" % (self.operation, self.version))
        return self.finish()

    def uninstall(self, script_style=False):
        version = ascend_sim.read_key_values(os.path.join(self.firmware_dir, "version.info")).get("Version")
        if version is None and not os.path.exists(self.manifest):
            # unverified: Huawei's text when there is nothing to uninstall.
            self.console.warning("Firmware package is not installed on the path %s, nothing to uninstall."
                                 % self.install_path)
            return 0
        self.console.info("base version is %s." % version)
        ascend_sim.remove_recorded(self.manifest, self.install_path)
        removals = ["Firmware_Install_Type", "Firmware_Install_Path_Param"]
        if not os.path.exists(os.path.join(ascend_sim.driver_install_path(), "driver", "version.info")):
            removals += ["UserName", "UserGroup"]
        ascend_sim.update_install_info({}, removals)
        # A flashed firmware stays on the card; only a staged, not yet booted one is dropped.
        if os.path.exists(ascend_sim.FIRMWARE_STAGED_FILE):
            os.remove(ascend_sim.FIRMWARE_STAGED_FILE)
        ascend_sim.forget_pending_reboot("firmware")
        self.console.info("Firmware package uninstalled successfully! Uninstallation takes effect immediately.")
        if not script_style:
            self.end()
        return 0


# ==========================================================================================
# CANN: toolkit, kernels, ops, nnal (facts reference section 3)
# ==========================================================================================

MIN_FREE_BYTES = 10 * 1024 ** 3


class CannInstaller(object):
    operations = ("--install", "--upgrade", "--uninstall", "--devel")
    value_options = ("--install-path", "--whitelist")
    flag_options = ("--version", "--quiet", "--install-for-all", "--help", "--check")

    def __init__(self, package, argv):
        self.package = package
        self.argv = argv
        self.version = package["version"]
        self.arch = package["arch"]
        self.component = package["component"]
        self.console = ascend_sim.Console(self.console_name(), "cann", log_enabled=os.geteuid() == 0)
        self.faults = ascend_sim.Faults(self.component)
        self.options = {}
        self.operation = None

    def console_name(self):
        component = self.package["component"]
        if component == "toolkit":
            return "Toolkit"
        if component in ("kernels", "ops"):
            return "%s_%s" % (component, self.package["chip"])
        return component.upper()

    @property
    def package_label(self):
        return os.path.splitext(self.package["filename"])[0]

    @property
    def install_path(self):
        if self.options.get("--install-path"):
            return self.options["--install-path"]
        if os.geteuid() != 0:
            # Huawei's CANN installs for the current user in ~/Ascend when not run as root.
            return os.path.join(os.path.expanduser("~"), "Ascend")
        return ascend_sim.DEFAULT_INSTALL_PATH

    def parse(self):
        chosen, unknown = split_options(self.argv, self.options, self.value_options, self.flag_options, self.operations)
        if unknown is not None:
            # unverified: the CANN wording for an unknown option.
            self.console.error("Unrecognized parameters: %s. Try './%s --help' for more information."
                               % (unknown, run_file_name(self.package)))
            raise InstallerExit(1)
        if len(chosen) > 1:
            self.console.error("Only one of %s can be given, got %s." % (", ".join(self.operations), " ".join(chosen)))
            raise InstallerExit(1)
        self.operation = chosen[0] if chosen else None

    # --- layout ---------------------------------------------------------------------------
    def new_layout(self, version=None):
        return ascend_sim.version_at_least(version or self.version, "8.5.0")

    def version_dir(self, version=None):
        version = version or self.version
        if self.new_layout(version):
            return os.path.join(self.install_path, "cann-" + version)
        return os.path.join(self.install_path, "ascend-toolkit", version)

    def set_env_path(self, version=None):
        if self.new_layout(version):
            return os.path.join(self.install_path, "cann", "set_env.sh")
        return os.path.join(self.install_path, "ascend-toolkit", "set_env.sh")

    def installed_toolkits(self):
        found = []
        toolkit_root = os.path.join(self.install_path, "ascend-toolkit")
        candidates = []
        if os.path.isdir(toolkit_root):
            candidates += [os.path.join(toolkit_root, name) for name in os.listdir(toolkit_root)]
        if os.path.isdir(self.install_path):
            candidates += [os.path.join(self.install_path, name) for name in os.listdir(self.install_path)
                           if name.startswith("cann-")]
        for candidate in candidates:
            info = os.path.join(candidate, "%s-linux" % self.arch, "ascend_toolkit_install.info")
            version = ascend_sim.read_key_values(info).get("version")
            if version and not os.path.islink(candidate):
                found.append(version)
        return sorted(found, key=ascend_sim.version_key)

    # --- checks -----------------------------------------------------------------------------
    def fail(self, text):
        self.console.error(text)
        raise InstallerExit(1)

    def accept_eula(self):
        if self.quiet:
            return True
        sys.stdout.write(payload_text("eula.txt"))
        sys.stdout.write("Do you accept the EULA to install CANN?[Y/N]")
        sys.stdout.flush()
        return read_answer().lower() in ("y", "yes")

    @property
    def quiet(self):
        return bool(self.options.get("--quiet"))

    def check_environment(self):
        require_supported_os(self.console, self.package)
        if machine_arch() != self.arch:
            # unverified: the CANN wording for a package of the other architecture.
            self.fail("The architecture of the package (%s) does not match the system (%s)."
                      % (self.arch, machine_arch()))
        if os.geteuid() == 0 and os.path.isdir(self.install_path):
            status = os.stat(self.install_path)
            if status.st_uid != 0 or (status.st_mode & 0o777) != ALL_USERS_MODE:
                # unverified wording; the rule (owned by root, mode 755) is from the facts reference.
                self.fail("The owner of %s must be root and its permission 755." % self.install_path)
        if self.faults.disk_full or free_bytes("/") < MIN_FREE_BYTES:
            # unverified wording; the 10 GB rule is from the facts reference.
            self.fail("The free space of / is less than 10G, please clean up the disk and try again.")

    def ensure_install_root(self, recorder):
        if not os.path.isdir(self.install_path):
            recorder.mkdir(self.install_path, ALL_USERS_MODE)

    # --- flow ---------------------------------------------------------------------------------
    def main(self):
        self.parse()
        if self.options.get("--help"):
            # unverified: Huawei's --help text is not known.
            print("Usage: ./%s [options]" % run_file_name(self.package))
            print("Options: " + " ".join(list(self.operations) + list(self.flag_options)
                                         + [name + "=<value>" for name in self.value_options]))
            return 0
        if self.options.get("--version"):
            # unverified: the real --version output format is not in the samples.
            print(self.version)
            return 0
        if self.operation is None:
            if self.options.get("--check"):
                return 0
            self.console.error("One of %s is required. Try './%s --help' for more information."
                               % (", ".join(self.operations), run_file_name(self.package)))
            return 1
        if self.operation == "--uninstall":
            return self.uninstall()
        if not self.accept_eula():
            # N (or no answer) leaves the node untouched; unverified: Huawei may print a line here.
            return 0
        self.check_environment()
        self.check_prerequisites()
        try:
            return self.install()
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            self.fail("%s install failed: %s" % (self.package_label, error.strerror))

    def check_prerequisites(self):
        pass

    def finish(self):
        override = self.faults.exit_code()
        return 0 if override is None else int(override)

    def progress(self):
        return Progress(self.faults.install_seconds(self.package), 2)

    def installed_location(self):
        """Where the package is (or would be) installed, as its messages name it."""
        return self.install_path

    def manifest_root(self):
        """The directory the paths in the package's manifest are relative to."""
        return self.install_path

    def uninstall(self):
        if not os.path.exists(self.manifest):
            # unverified wording.
            self.console.warning("%s is not installed in %s, nothing to uninstall."
                                 % (self.package_label, self.installed_location()))
            return 0
        ascend_sim.remove_recorded(self.manifest, self.manifest_root())
        self.console.info("%s uninstall success." % self.package_label)
        return 0


class ToolkitInstaller(CannInstaller):
    @property
    def info_path(self):
        return os.path.join(self.version_dir(), "%s-linux" % self.arch, "ascend_toolkit_install.info")

    @property
    def manifest(self):
        return os.path.join(self.version_dir(), "%s-linux" % self.arch, "script", "filelist")

    def check_prerequisites(self):
        installed = self.installed_toolkits()
        if self.operation == "--upgrade" and not installed:
            # unverified wording.
            self.fail("No installed Ascend-cann-toolkit was found in %s, use --install." % self.install_path)
        older_layout = [version for version in installed if not self.new_layout(version)]
        if self.operation == "--install" and self.new_layout() and older_layout:
            # Huawei: from an earlier release to 8.5.0, upgrade with --upgrade or uninstall every
            # earlier version first, otherwise the install can fail (docs/cann-8.5.md). The
            # sandbox always fails, so that the wrong path cannot pass here. Unverified wording.
            self.fail("Ascend-cann-toolkit %s is installed in %s; use --upgrade, or uninstall it before "
                      "installing %s." % (", ".join(older_layout), self.install_path, self.package_label))

    def install(self):
        progress = self.progress()
        if self.operation == "--upgrade":
            for version in self.installed_toolkits():
                if version != self.version:
                    self.remove_operator_kernels_of(version)
                    ascend_sim.remove_recorded(self.manifest_of(version), self.install_path)
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        self.ensure_install_root(recorder)
        version_dir = self.version_dir()
        arch_dir = os.path.join(version_dir, "%s-linux" % self.arch)
        recorder.write(os.path.join(arch_dir, "lib64", "libascendcl.so"),
                       "simulated libascendcl of CANN %s (ascend-sandbox)\n" % self.version)
        recorder.write(os.path.join(arch_dir, "bin", "atc"),
                       "#!/bin/sh\necho 'ATC of simulated CANN %s: not functional in the sandbox' >&2\nexit 1\n"
                       % self.version, 0o755)
        # Where Huawei's toolkit has msprof; set_env.sh puts the directory on PATH.
        install_script(recorder, "msprof.py", os.path.join(version_dir, "tools", "profiler", "bin", "msprof"))
        progress.step()
        if self.faults.killed_midway:
            self.faults.kill_now()
        copy_runtime(recorder, os.path.join(arch_dir, "script"), "cann-uninstall-script")
        recorder.write(os.path.join(version_dir, "version.cfg"), payload_text("version.cfg"))
        # What set_env.sh points at (ASCEND_TOOLKIT_HOME is the version directory in both layouts):
        # lib64 leads to the architecture's libraries, PYTHONPATH to pyACL and the TBE op_impl tree.
        recorder.symlink("%s-linux/lib64" % self.arch, os.path.join(version_dir, "lib64"))
        recorder.write(os.path.join(version_dir, "python", "site-packages", "acl.py"), payload_text("acl.py"))
        recorder.write(os.path.join(version_dir, "opp", "built-in", "op_impl", "ai_core", "tbe", "impl",
                                    "__init__.py"), "# simulated TBE op_impl of CANN %s (ascend-sandbox)\n" % self.version)
        recorder.mkdir(os.path.join(version_dir, "toolkit"))
        set_env = payload_text("set_env.sh").replace("@INSTALL_PATH@", self.install_path)
        if self.new_layout():
            recorder.symlink("cann-" + self.version, os.path.join(self.install_path, "cann"))
            recorder.write(os.path.join(version_dir, "set_env.sh"), set_env, 0o755)
        else:
            recorder.symlink(self.version, os.path.join(self.install_path, "ascend-toolkit", "latest"))
            recorder.write(self.set_env_path(), set_env, 0o755)
        recorder.write(self.info_path, payload_text("ascend_toolkit_install.info")
                       .replace("@PATH@", arch_dir), 0o444)
        recorder.save()
        progress.step()
        self.console.info("%s install success, installed in %s." % (self.package_label, self.install_path))
        self.print_summary()
        return self.finish()

    def manifest_of(self, version):
        return os.path.join(self.version_dir(version), "%s-linux" % self.arch, "script", "filelist")

    def remove_operator_kernels_of(self, version):
        # Huawei: kernels (ops from 8.5.0) installed with a toolkit are uninstalled when that
        # toolkit is upgraded; they are installed again with --install (docs/cann-8.5.md).
        kernels_manifest = os.path.join(self.version_dir(version), "opp_kernel", "script", "filelist")
        if ascend_sim.remove_recorded(kernels_manifest, self.version_dir(version)):
            # unverified wording.
            self.console.info("The operator kernels installed with Ascend-cann-toolkit %s were uninstalled "
                              "with it; install the operator kernels package of %s with --install."
                              % (version, self.version))

    def print_summary(self):
        # Transcript toolkit_8.1.RC1_install_summary_310b-soc.txt.
        set_env = self.set_env_path()
        lines = ["===========", "= Summary =", "===========", ""]
        driver_path = os.path.join(ascend_sim.driver_install_path(), "driver")
        if os.path.exists(os.path.join(driver_path, "version.info")):
            lines.append("Driver:   Installed in %s." % driver_path)
        lines.append("Toolkit:  %s install success, installed in %s." % (self.package_label, self.install_path))
        lines += ["", "Please make sure that the environment variables have been configured.",
                  '-  To take effect for all users, you can add "source %s" to /etc/profile.' % set_env,
                  '-  To take effect for current user, you can exec command below: source %s or add "source %s" '
                  'to ~/.bashrc.' % (set_env, set_env)]
        print("\n".join(lines))


class KernelsInstaller(CannInstaller):
    operations = ("--install", "--uninstall", "--devel")

    @property
    def kernel_dir(self):
        return os.path.join(self.version_dir(), "opp_kernel")

    @property
    def manifest(self):
        return os.path.join(self.kernel_dir, "script", "filelist")

    @property
    def toolkit_home(self):
        if self.new_layout():
            return self.version_dir()
        return os.path.join(self.install_path, "ascend-toolkit")

    def check_prerequisites(self):
        installed = self.installed_toolkits()
        if self.component == "ops" and not any(ascend_sim.version_at_least(v, "8.5.0") for v in installed):
            # unverified wording; the rule (ops >= 8.5.0 need toolkit >= 8.5.0) is from the facts reference.
            self.fail("Ascend-cann-toolkit >= 8.5.0 is required by %s, found: %s."
                      % (self.package_label, ", ".join(installed) or "none"))
        if self.version not in installed:
            # unverified wording.
            self.fail("Ascend-cann-toolkit %s is not installed in %s, install it before %s."
                      % (self.version, self.install_path, self.package_label))

    def install(self):
        progress = self.progress()
        if os.path.exists(self.manifest):
            ascend_sim.remove_recorded(self.manifest, self.version_dir())
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        recorder.write(os.path.join(self.kernel_dir, "op_impl", "built-in", "kernel.bin"),
                       "simulated operator kernels %s (ascend-sandbox)\n" % self.version)
        progress.step()
        if self.faults.killed_midway:
            self.faults.kill_now()
        recorder.write(os.path.join(self.kernel_dir, "version.info"), payload_text("opp_kernel_version.info"),
                       0o444)
        recorder.save()
        progress.step()
        # Transcript kernels_310b_8.1.RC1_devel.txt.
        self.console.info("%s install success. The installation path is %s."
                          % (self.package_label, self.toolkit_home))
        return self.finish()

    def installed_location(self):
        return self.toolkit_home

    def manifest_root(self):
        return self.version_dir()


class NnalInstaller(CannInstaller):
    @property
    def atb_root(self):
        return os.path.join(self.install_path, "nnal", "atb")

    @property
    def manifest(self):
        return os.path.join(self.atb_root, self.version, "script", "filelist")

    def check_prerequisites(self):
        if not self.installed_toolkits():
            # unverified wording; NNAL runs on top of an installed toolkit.
            self.fail("Ascend-cann-toolkit is not installed in %s, install it before %s."
                      % (self.install_path, self.package_label))

    def install(self):
        progress = self.progress()
        for name in (os.listdir(self.atb_root) if os.path.isdir(self.atb_root) else []):
            old_manifest = os.path.join(self.atb_root, name, "script", "filelist")
            if self.operation == "--upgrade" or name == self.version:
                ascend_sim.remove_recorded(old_manifest, self.install_path)
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        version_dir = os.path.join(self.atb_root, self.version)
        recorder.write(os.path.join(version_dir, "atb", "lib", "libatb.so"),
                       "simulated ATB library %s (ascend-sandbox)\n" % self.version)
        progress.step()
        if self.faults.killed_midway:
            self.faults.kill_now()
        copy_runtime(recorder, os.path.join(version_dir, "script"), "cann-uninstall-script")
        recorder.symlink(self.version, os.path.join(self.atb_root, "latest"))
        recorder.write(os.path.join(self.atb_root, "set_env.sh"),
                       payload_text("set_env.sh").replace("@INSTALL_PATH@", self.install_path), 0o755)
        recorder.write(os.path.join(version_dir, "version.info"), payload_text("nnal_version.info"), 0o444)
        recorder.save()
        progress.step()
        # unverified wording (modelled on the toolkit summary line).
        self.console.info("%s install success, installed in %s."
                          % (self.package_label, os.path.join(self.install_path, "nnal")))
        return self.finish()

    def installed_location(self):
        return self.atb_root


# ==========================================================================================
# Ascend Docker Runtime (facts reference section 8)
# ==========================================================================================

class DockerRuntimeInstaller(object):
    operations = ("--install", "--uninstall", "--upgrade")
    value_options = ("--install-path", "--install-scene", "--injection-mode", "--config-file-path", "--install-type")
    flag_options = ("--version",)
    scenes = ("docker", "containerd", "crio", "isula")

    def __init__(self, package, argv):
        self.package = package
        self.argv = argv
        self.version = package["version"]
        self.faults = ascend_sim.Faults("docker_runtime")
        self.options = {}
        self.operation = None

    def say(self, level, text):
        print("[%s] %s" % (level, text), flush=True)

    def fail(self, text):
        self.say("ERROR", text)
        raise InstallerExit(1)

    def parse(self):
        chosen, unknown = split_options(self.argv, self.options, self.value_options, self.flag_options, self.operations)
        if unknown is not None:
            self.fail("failed, unsupported parameters: %s" % unknown)
        if len(chosen) > 1:
            self.fail("failed, unsupported parameters: %s" % chosen[1])
        self.operation = chosen[0] if chosen else None
        scene = self.options.get("--install-scene", "docker")
        if scene not in self.scenes:
            self.fail("failed, unsupported parameters: --install-scene=%s" % scene)

    @property
    def root(self):
        return os.path.join(self.options.get("--install-path", ascend_sim.DEFAULT_INSTALL_PATH),
                            "Ascend-Docker-Runtime")

    @property
    def runtime_binary(self):
        return os.path.join(self.root, "ascend-docker-runtime")

    @property
    def manifest(self):
        return os.path.join(self.root, "script", "filelist")

    def main(self):
        self.parse()
        if self.options.get("--version"):
            print("ascend-docker-runtime version: %s" % self.version)
            return 0
        if self.operation is None:
            self.fail("failed, unsupported parameters: no --install, --upgrade or --uninstall given")
        if os.geteuid() != 0:
            # unverified wording.
            self.fail("please run as root")
        if self.operation == "--uninstall":
            return self.uninstall()
        if ascend_sim.version_at_least(self.version, "26.1"):
            sys.stdout.write("Do you accept the EULA to install Ascend-docker-runtime?[Y/N]")
            sys.stdout.flush()
            if read_answer().lower() not in ("y", "yes"):
                print("install cancelled, user declined EULA")
                return 0
        if machine_arch() != self.package["arch"]:
            # unverified wording.
            self.fail("the architecture of the package (%s) does not match the system (%s)"
                      % (self.package["arch"], machine_arch()))
        return self.install()

    def install(self):
        if os.path.exists(self.manifest):
            self.remove_files()
        # Like the other installers, the install lasts as long as Faults.install_seconds says: the
        # fault rows need a runtime install slow enough to be met while it runs.
        progress = Progress(self.faults.install_seconds(self.package), 2)
        recorder = ascend_sim.Recorder(self.faults, self.manifest)
        try:
            install_script(recorder, "docker_runtime.py", self.runtime_binary)
            progress.step()
            if self.faults.killed_midway:
                self.faults.kill_now()
            copy_runtime(recorder, os.path.join(self.root, "script"), "docker-runtime-uninstall-script")
            progress.step()
            recorder.write(os.path.join(self.root, "ascend_docker_runtime_install.info"),
                           "version=v%s\narch=%s\ninstall-scene=%s\n"
                           % (self.version, self.package["arch"], self.scene), 0o644)
            recorder.write("/etc/ascend-docker-runtime.d/base.list", payload_text("base.list"))
            recorder.save()
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            self.fail("install failed: %s" % error.strerror)
        self.configure_engine()
        self.say("INFO", "ascend-docker-runtime install success")
        self.say("INFO", "please reboot daemon and container engine to take effect")
        override = self.faults.exit_code()
        return 0 if override is None else int(override)

    @property
    def scene(self):
        if self.options.get("--install-scene"):
            return self.options["--install-scene"]
        info = ascend_sim.read_key_values(os.path.join(self.root, "ascend_docker_runtime_install.info"))
        return info.get("install-scene", "docker")

    def config_file(self):
        default = {"docker": "/etc/docker/daemon.json", "containerd": "/etc/containerd/config.toml"}
        return self.options.get("--config-file-path") or default.get(self.scene)

    def configure_engine(self, remove=False):
        path = self.config_file()
        if self.scene == "docker":
            update_docker_daemon_json(path, self.runtime_binary, remove)
        elif self.scene == "containerd":
            update_containerd_config(path, self.runtime_binary, remove)

    def remove_files(self):
        ascend_sim.remove_recorded(self.manifest, os.path.dirname(self.root))

    def uninstall(self):
        if not os.path.isdir(self.root):
            self.say("WARNING", "uninstall skipping, the specified install path does not exist")
            return 0
        self.configure_engine(remove=True)
        self.remove_files()
        if os.path.isdir(self.root):
            ascend_sim.remove_tree(self.root)
        # unverified wording.
        self.say("INFO", "ascend-docker-runtime uninstall success")
        return 0


def update_docker_daemon_json(path, runtime_binary, remove):
    try:
        with open(path) as handle:
            config = json.load(handle)
    except (IOError, OSError):
        config = {}
    runtimes = config.setdefault("runtimes", {})
    if remove:
        runtimes.pop("ascend", None)
        if not runtimes:
            config.pop("runtimes")
        if config.get("default-runtime") == "ascend":
            config.pop("default-runtime")
    else:
        runtimes["ascend"] = {"path": runtime_binary, "runtimeArgs": []}
        config["default-runtime"] = "ascend"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as handle:
        json.dump(config, handle, indent=4)
        handle.write("\n")
    os.chmod(path + ".tmp", 0o600)
    os.replace(path + ".tmp", path)


def update_containerd_config(path, runtime_binary, remove):
    """Adds (or removes) the ``ascend`` runtime in containerd's config.toml, line by line.

    Python's tomllib only reads TOML, so the edit works on the text: it keeps every other
    line as it is, as a hand edit would.
    """
    if not os.path.exists(path):
        if remove:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        default = subprocess.run(["containerd", "config", "default"], stdout=subprocess.PIPE, check=True,
                                 universal_newlines=True, env=dict(os.environ, LC_ALL="C")).stdout
        with open(path, "w") as handle:
            handle.write(default)
    with open(path) as handle:
        lines = handle.read().splitlines()
    version = 2
    for line in lines:
        if line.strip().startswith("version") and "=" in line and not line.startswith((" ", "\t")):
            version = int(line.split("=", 1)[1].strip())
            break
    cri_plugins = {1: "cri", 2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}
    plugin = cri_plugins.get(version, "io.containerd.grpc.v1.cri")
    containerd_table = '[plugins."%s".containerd]' % plugin
    runtime_prefix = '[plugins."%s".containerd.runtimes.' % plugin
    ascend_table = runtime_prefix + 'ascend]'
    ascend_options = runtime_prefix + 'ascend.options]'

    def table_name(line):
        stripped = line.strip()
        return stripped if stripped.startswith("[") else None

    # Drop an existing ascend table (re-install, or uninstall).
    kept, skipping = [], False
    for line in lines:
        name = table_name(line)
        if name is not None:
            skipping = name in (ascend_table, ascend_options)
        if not skipping:
            kept.append(line)
    lines = kept

    runc_values = {"runtime_type": '"io.containerd.runc.v2"', "SystemdCgroup": "true"}
    current = None
    for line in lines:
        name = table_name(line)
        if name is not None:
            current = name
            continue
        if current in (runtime_prefix + "runc]", runtime_prefix + "runc.options]") and "=" in line:
            key, value = [part.strip() for part in line.split("=", 1)]
            if key in runc_values:
                runc_values[key] = value

    def set_default(lines, value):
        result, current, done = [], None, False
        for line in lines:
            name = table_name(line)
            if name is not None:
                if current == containerd_table and not done:
                    result.append("  default_runtime_name = %s" % value)
                    done = True
                current = name
            elif current == containerd_table and line.strip().startswith("default_runtime_name"):
                indent = line[:len(line) - len(line.lstrip())]
                line = "%sdefault_runtime_name = %s" % (indent, value)
                done = True
            result.append(line)
        if not done:
            result += ["", containerd_table, "  default_runtime_name = %s" % value]
        return result

    if remove:
        lines = set_default(lines, '"runc"')
    else:
        lines = set_default(lines, '"ascend"')
        lines += ["", ascend_table, "  runtime_type = %s" % runc_values["runtime_type"], "", ascend_options,
                  '  BinaryName = "%s"' % runtime_binary, "  SystemdCgroup = %s" % runc_values["SystemdCgroup"]]
    with open(path + ".tmp", "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


# ==========================================================================================

INSTALLERS = {
    "driver": DriverInstaller,
    "firmware": FirmwareInstaller,
    "toolkit": ToolkitInstaller,
    "kernels": KernelsInstaller,
    "ops": KernelsInstaller,
    "nnal": NnalInstaller,
    "docker_runtime": DockerRuntimeInstaller,
}


def run_uninstall_script(package, argv):
    """The installed ``script/uninstall.sh`` of a package."""
    component = package["component"]
    if component == "driver":
        installer = DriverInstaller(package, [])
        installer.require_root()
        installer.options["--install-path"] = os.path.dirname(os.path.dirname(PAYLOAD_DIR))
        return installer.uninstall(script_style=True)
    if component == "firmware":
        installer = FirmwareInstaller(package, [])
        installer.require_root()
        installer.options["--install-path"] = os.path.dirname(os.path.dirname(PAYLOAD_DIR))
        return installer.uninstall(script_style=True)
    if component == "docker_runtime":
        installer = DockerRuntimeInstaller(package, [])
        installer.options["--install-path"] = os.path.dirname(os.path.dirname(PAYLOAD_DIR))
        return installer.uninstall()
    installer = INSTALLERS[component](package, argv)
    installer.operation = "--uninstall"
    # Climb from the script directory to the install path: <ip>/ascend-toolkit/<ver>/<arch>-linux/script,
    # <ip>/cann-<ver>/<arch>-linux/script, <ip>/nnal/atb/<ver>/script.
    levels = 3 if component == "toolkit" and installer.new_layout() else 4
    root = PAYLOAD_DIR
    for _level in range(levels):
        root = os.path.dirname(root)
    installer.options["--install-path"] = root
    return installer.uninstall()


def main(argv):
    package = load_package()
    if not os.path.exists(ascend_sim.HARDWARE_FILE) and not set(argv) <= {"--version", "--help"}:
        # A guard for the developer's own machine: these packages write to /usr/local, /etc and /var/log.
        print("[ERROR] %s is a simulated package of the npu.ascend sandbox and runs only on a sandbox node "
              "(%s is missing)." % (package["filename"], ascend_sim.HARDWARE_FILE))
        return 1
    try:
        if os.environ.get("ASCEND_SIM_ENTRY", "").endswith("uninstall-script"):
            return run_uninstall_script(package, argv)
        return INSTALLERS[package["component"]](package, argv).main()
    except InstallerExit as stop:
        return stop.code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
