"""Contract tests of the fake CANN packages (toolkit, kernels, ops, nnal) inside a sandbox node.

Expected texts come from the facts reference (section 3) and the transcripts
toolkit_8.1.RC1_install_summary_310b-soc.txt and kernels_310b_8.1.RC1_devel.txt.
"""
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "sandbox", "packages"))
import testing  # noqa: E402
import collection_code  # noqa: E402
from testing import DRIVER, TOOLKIT, ARM_TOOLKIT, TOOLKIT_85, KERNELS, OPS, NNAL  # noqa: E402

version_files = collection_code.load_module_utils("packages.version_files")

INSTALL = ("--nox11", "--install", "--quiet", "--install-for-all")
CANN_PREFIX = re.compile(r"^\[(Toolkit|kernels_910b|ops_910b|NNAL)\] \[\d{8}-\d\d:\d\d:\d\d\] (?=\[(INFO|WARNING|ERROR)\] )")
TOOLKIT_INFO = "/usr/local/Ascend/ascend-toolkit/8.2.RC1/x86_64-linux/ascend_toolkit_install.info"


@pytest.fixture
def node(sandbox_node, node_packages):
    sandbox_node.reset()
    return sandbox_node


def message(line):
    return CANN_PREFIX.sub("", line)


def test_unknown_option_is_rejected(node):
    run = testing.run_package(node, TOOLKIT, "--nox11", "--instal", expect=1)
    assert CANN_PREFIX.match(run.lines[-1]) and "[ERROR]" in run.lines[-1]
    assert "--instal" in run.lines[-1]


def test_kernels_have_no_upgrade(node):
    run = testing.run_package(node, KERNELS, "--nox11", "--upgrade", "--quiet", expect=1)
    assert "--upgrade" in run.lines[-1]


def test_eula_is_asked_without_quiet_and_no_leaves_the_node_untouched(node):
    run = testing.run_package(node, TOOLKIT, "--nox11", "--install", input="N\n", expect=0)
    assert run.stdout.rstrip().endswith("Do you accept the EULA to install CANN?[Y/N]")
    assert not testing.node_path_exists(node, "/usr/local/Ascend")
    run = testing.run_package(node, TOOLKIT, "--nox11", "--install", input="y\n", expect=0)
    assert "Do you accept the EULA to install CANN?[Y/N]" in run.stdout
    assert testing.node_path_exists(node, TOOLKIT_INFO)


def test_toolkit_install_prints_the_summary_and_writes_the_documented_files(node):
    run = testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    assert message(run.lines[0]) == ("[INFO] Ascend-cann-toolkit_8.2.RC1_linux-x86_64 install success, "
                                     "installed in /usr/local/Ascend.")
    assert "Toolkit:  Ascend-cann-toolkit_8.2.RC1_linux-x86_64 install success, installed in /usr/local/Ascend." \
        in run.lines
    assert run.lines[-1] == ("-  To take effect for current user, you can exec command below: source "
                             "/usr/local/Ascend/ascend-toolkit/set_env.sh or add \"source "
                             "/usr/local/Ascend/ascend-toolkit/set_env.sh\" to ~/.bashrc.")
    info = version_files.parse_toolkit_install_info(testing.read_node_file(node, TOOLKIT_INFO))
    assert info == {"version": "8.2.RC1", "arch": "x86_64",
                    "path": "/usr/local/Ascend/ascend-toolkit/8.2.RC1/x86_64-linux",
                    "inner_version": "V100R001C22SPC001B231"}
    assert node.exec(["readlink", "/usr/local/Ascend/ascend-toolkit/latest"]).stdout.strip() == "8.2.RC1"
    config = version_files.parse_toolkit_version_cfg(
        testing.read_node_file(node, "/usr/local/Ascend/ascend-toolkit/latest/version.cfg"))
    assert config["toolkit_running_version"][0]["version"] == "8.2.RC1"
    sourced = node.exec(["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && "
                                       "echo $ASCEND_TOOLKIT_HOME"]).stdout.strip()
    assert sourced == "/usr/local/Ascend/ascend-toolkit/latest"
    mode = node.exec(["stat", "-c", "%U %a", "/usr/local/Ascend"]).stdout.strip()
    assert mode == "root 755"


def test_kernels_need_the_toolkit_then_install_into_it(node):
    run = testing.run_package(node, KERNELS, *INSTALL, expect=1)
    assert "[ERROR]" in run.lines[-1]
    run = testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    run = testing.run_package(node, KERNELS, *INSTALL, expect=0)
    # transcript kernels_310b_8.1.RC1_devel.txt
    assert message(run.lines[-1]) == ("[INFO] Ascend-cann-kernels-910b_8.2.RC1_linux-x86_64 install success. "
                                      "The installation path is /usr/local/Ascend/ascend-toolkit.")
    assert run.lines[-1].startswith("[kernels_910b] [")
    kernel_info = testing.read_node_file(node, "/usr/local/Ascend/ascend-toolkit/8.2.RC1/opp_kernel/version.info")
    assert kernel_info == testing.read_sample_file("files", "opp_kernel_version.info_8.2.RC1.txt")
    assert version_files.parse_opp_kernel_version_info(kernel_info)["version"] == "8.2.RC1"
    testing.run_package(node, KERNELS, "--nox11", "--uninstall", "--quiet", expect=0)
    assert not testing.node_path_exists(node, "/usr/local/Ascend/ascend-toolkit/8.2.RC1/opp_kernel")


def test_ops_need_a_toolkit_of_8_5_or_later(node):
    testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    run = testing.run_package(node, OPS, *INSTALL, expect=1)
    assert "8.5.0" in run.lines[-1] and "[ERROR]" in run.lines[-1]
    run = testing.run_package(node, TOOLKIT_85, "--nox11", "--upgrade", "--quiet", expect=0)
    assert '"source /usr/local/Ascend/cann/set_env.sh"' in run.stdout
    assert node.exec(["readlink", "/usr/local/Ascend/cann"]).stdout.strip() == "cann-8.5.0"
    info = version_files.parse_toolkit_install_info(
        testing.read_node_file(node, "/usr/local/Ascend/cann/x86_64-linux/ascend_toolkit_install.info"))
    assert (info["version"], info["path"]) == ("8.5.0", "/usr/local/Ascend/cann-8.5.0/x86_64-linux")
    run = testing.run_package(node, OPS, *INSTALL, expect=0)
    assert message(run.lines[-1]) == ("[INFO] Ascend-cann-910b-ops_8.5.0_linux-x86_64 install success. "
                                      "The installation path is /usr/local/Ascend/cann-8.5.0.")
    ops_info = version_files.parse_opp_kernel_version_info(
        testing.read_node_file(node, "/usr/local/Ascend/cann-8.5.0/opp_kernel/version.info"))
    assert ops_info["version"] == "8.5.0"


def test_upgrade_to_8_5_moves_to_the_cann_tree_and_takes_the_old_kernels_with_it(node):
    # Huawei's CANN 8.5.0 installation and upgrade guides (docs/cann-8.5.md): from an earlier
    # release, --upgrade (or uninstall first); kernels installed with a toolkit go when it is upgraded.
    for package in (TOOLKIT, KERNELS):
        testing.run_package(node, package, *INSTALL, expect=0)
    run = testing.run_package(node, TOOLKIT_85, *INSTALL, expect=1)
    assert "[ERROR]" in run.lines[-1] and "--upgrade" in run.lines[-1] and "8.2.RC1" in run.lines[-1]
    assert not testing.node_path_exists(node, "/usr/local/Ascend/cann-8.5.0")
    assert testing.node_path_exists(node, "/usr/local/Ascend/ascend-toolkit/8.2.RC1/opp_kernel/version.info")

    run = testing.run_package(node, TOOLKIT_85, "--nox11", "--upgrade", "--quiet", expect=0)
    assert any("8.2.RC1" in line and "--install" in line for line in run.lines if "[INFO]" in line)
    assert not testing.node_path_exists(node, "/usr/local/Ascend/ascend-toolkit")
    assert node.exec(["readlink", "/usr/local/Ascend/cann"]).stdout.strip() == "cann-8.5.0"
    sourced = node.exec(["bash", "-c", "source /usr/local/Ascend/cann/set_env.sh && echo $ASCEND_TOOLKIT_HOME"])
    # set_env.sh names the version directory (docs/development.md, "set_env.sh")
    assert sourced.stdout.strip() == "/usr/local/Ascend/cann-8.5.0"
    assert not testing.node_path_exists(node, "/usr/local/Ascend/cann-8.5.0/opp_kernel")
    testing.run_package(node, OPS, *INSTALL, expect=0)
    assert testing.node_path_exists(node, "/usr/local/Ascend/cann-8.5.0/opp_kernel/version.info")


def test_nnal_needs_the_toolkit_and_writes_its_version_file(node):
    run = testing.run_package(node, NNAL, *INSTALL, expect=1)
    assert "[ERROR]" in run.lines[-1]
    testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    testing.run_package(node, NNAL, *INSTALL, expect=0)
    parsed = version_files.parse_nnal_version_info(
        testing.read_node_file(node, "/usr/local/Ascend/nnal/atb/latest/version.info"))
    assert parsed == {"version": "8.2.RC1", "full_version": "8.2.RC1.B150", "platform": "x86_64"}
    assert testing.node_path_exists(node, "/usr/local/Ascend/nnal/atb/set_env.sh")


def test_environment_checks(node):
    run = testing.run_package(node, ARM_TOOLKIT, *INSTALL, expect=1)
    assert message(run.lines[-1]) == ("[ERROR] The architecture of the package (aarch64) does not match the "
                                      "system (x86_64).")
    node.exec(["sh", "-c", "mkdir -p /usr/local/Ascend && chmod 777 /usr/local/Ascend"])
    run = testing.run_package(node, TOOLKIT, *INSTALL, expect=1)
    assert "/usr/local/Ascend" in run.lines[-1] and "755" in run.lines[-1]
    node.exec(["chmod", "755", "/usr/local/Ascend"])
    node.set_faults({"disk_full": True})
    run = testing.run_package(node, TOOLKIT, *INSTALL, expect=1)
    assert "10G" in run.lines[-1]
    assert not testing.node_path_exists(node, "/usr/local/Ascend/ascend-toolkit")


def test_killed_toolkit_install_leaves_no_version_file(node):
    node.set_faults({"installer_killed_midway": "toolkit"})
    testing.run_package(node, TOOLKIT, *INSTALL, expect=137)
    assert testing.node_path_exists(node, "/usr/local/Ascend/ascend-toolkit/8.2.RC1")
    assert not testing.node_path_exists(node, TOOLKIT_INFO)
    node.set_faults({"installer_exit_code": {"toolkit": 2}})
    testing.run_package(node, TOOLKIT, *INSTALL, expect=2)
    assert testing.node_path_exists(node, TOOLKIT_INFO)


@pytest.mark.parametrize("packages, scripts", [
    ((TOOLKIT, KERNELS, NNAL), ("/usr/local/Ascend/nnal/atb/latest/script/uninstall.sh",
                                "/usr/local/Ascend/ascend-toolkit/8.2.RC1/x86_64-linux/script/uninstall.sh")),
    ((TOOLKIT_85, OPS), ("/usr/local/Ascend/cann-8.5.0/x86_64-linux/script/uninstall.sh",)),
])
def test_uninstall_scripts_remove_everything(node, packages, scripts):
    for package in packages:
        testing.run_package(node, package, *INSTALL, expect=0)
    testing.run_package(node, packages[1], "--nox11", "--uninstall", "--quiet", expect=0)
    for script in scripts:
        result = node.exec([script])
        assert "uninstall success" in result.stdout
    assert not testing.node_path_exists(node, "/usr/local/Ascend")


ENVIRONMENT = ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH", "ASCEND_AICPU_PATH", "ASCEND_OPP_PATH", "TOOLCHAIN_HOME",
               "PYTHONPATH")


def sourced_environment(node, set_env):
    script = "source %s && for v in %s; do echo \"$v=${!v}\"; done" % (set_env, " ".join(ENVIRONMENT))
    lines = node.exec(["env", "-i", "PATH=/usr/bin:/bin", "bash", "-c", script]).stdout.splitlines()
    return dict(line.split("=", 1) for line in lines)


def import_acl(node, set_env, user=None):
    argv = ["env", "-i", "PATH=/usr/bin:/bin", "bash", "-c", "source %s && python3 -c 'import acl'" % set_env]
    if user is not None:
        argv = ["setpriv", "--reuid=" + user[0], "--regid=" + user[1], "--clear-groups"] + argv
    return node.exec(argv, check=False)


@pytest.mark.parametrize("package, set_env, home", [
    (TOOLKIT, "/usr/local/Ascend/ascend-toolkit/set_env.sh", "/usr/local/Ascend/ascend-toolkit/latest"),
    (TOOLKIT_85, "/usr/local/Ascend/cann/set_env.sh", "/usr/local/Ascend/cann-8.5.0"),
])
def test_set_env_sets_huaweis_variables_and_acl_imports_once_the_driver_is_there(node, package, set_env, home):
    testing.run_package(node, package, *INSTALL, expect=0)
    assert sourced_environment(node, set_env) == {
        "ASCEND_TOOLKIT_HOME": home, "ASCEND_HOME_PATH": home, "ASCEND_AICPU_PATH": home,
        "ASCEND_OPP_PATH": home + "/opp", "TOOLCHAIN_HOME": home + "/toolkit",
        "PYTHONPATH": "%s/python/site-packages:%s/opp/built-in/op_impl/ai_core/tbe:" % (home, home)}
    for path in ("/opp/built-in/op_impl/ai_core/tbe", "/toolkit", "/lib64/libascendcl.so"):
        assert testing.node_path_exists(node, home + path)
    # Without set_env.sh there is no acl; without the driver pyACL cannot load libascend_hal.so.
    bare = node.exec(["env", "-i", "PATH=/usr/bin:/bin", "python3", "-c", "import acl"], check=False)
    assert bare.returncode == 1 and "No module named 'acl'" in bare.stderr
    no_driver = import_acl(node, set_env)
    assert no_driver.returncode == 1
    assert no_driver.stderr.strip().splitlines()[-1] == (
        "ImportError: libascend_hal.so: cannot open shared object file: No such file or directory")
    testing.prepare_driver_prerequisites(node)
    testing.run_package(node, DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    assert import_acl(node, set_env).returncode == 0
    assert import_acl(node, set_env, user=testing.UNPRIVILEGED).returncode == 0


DEBIAN_12 = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'


def test_installers_refuse_a_system_off_huaweis_list_and_uninstall_still_works(node):
    testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    node.exec(["sh", "-c", "cp /usr/lib/os-release /tmp/os-release.kept && printf '%s' \"$0\" > /usr/lib/os-release",
               DEBIAN_12])
    try:
        for package, args in ((TOOLKIT_85, INSTALL), (DRIVER, ("--nox11", "--full", "--quiet"))):
            run = testing.run_package(node, package, *args, expect=1)
            [refusal] = [line for line in run.lines if "[ERROR]" in line]
            assert "The OS Debian_12_x86_64 is not supported by %s" % package in refusal
        testing.run_package(node, TOOLKIT, "--nox11", "--uninstall", "--quiet", expect=0)
        assert not testing.node_path_exists(node, TOOLKIT_INFO)
    finally:
        node.exec(["cp", "/tmp/os-release.kept", "/usr/lib/os-release"])
    testing.run_package(node, TOOLKIT_85, *INSTALL, expect=0)


def test_msprof_is_on_the_path_of_set_env_and_profiles_for_the_device_group_only(node):
    testing.prepare_driver_prerequisites(node)
    testing.run_package(node, testing.DRIVER, "--nox11", "--full", "--quiet", "--install-for-all", expect=0)
    # The device files, as the driver's module makes them at boot (HwHiAiUser's, 0660).
    node.exec(["python3", "/usr/local/libexec/ascend-sandbox/boot", "--load-driver"])
    testing.run_package(node, TOOLKIT, *INSTALL, expect=0)
    node.exec(["sh", "-c", "useradd -m -s /bin/bash prof-member && usermod -aG HwHiAiUser prof-member && "
                           "useradd -m -s /bin/bash prof-outsider"])
    profile = ('. /usr/local/Ascend/ascend-toolkit/set_env.sh && command -v msprof && cd "$HOME" && '
               'msprof --output="$HOME" npu-smi info')
    member = node.exec(["runuser", "-u", "prof-member", "--", "bash", "-c", profile], check=False)
    assert member.returncode == 0, member.stderr
    assert member.stdout.splitlines()[0] == "/usr/local/Ascend/ascend-toolkit/latest/tools/profiler/bin/msprof"
    assert "NPU     Name" in member.stdout or "NPU   Name" in member.stdout  # npu-smi's own output
    listing = node.exec(["sh", "-c", "cd /home/prof-member && find PROF_* | sort"]).stdout.split()
    prof = listing[0]
    assert re.match(r"^PROF_000001_\d{17}_[A-Z]{16}$", prof)
    assert {prof + "/host/data", prof + "/device_0/data", prof + "/device_7/data",
            prof + "/mindstudio_profiler_output/README.txt"} <= set(listing)
    assert [name for name in listing if re.match(re.escape(prof) + r"/mindstudio_profiler_output/msprof_\d{17}\.json$",
                                                 name)]
    outsider = node.exec(["runuser", "-u", "prof-outsider", "--", "bash", "-c", profile], check=False)
    assert outsider.returncode == 1
    assert "permission denied on /dev/davinci_manager" in outsider.stderr
    assert node.exec(["sh", "-c", "ls /home/prof-outsider | grep -c PROF_"], check=False).stdout.strip() == "0"
    node.exec(["sh", "-c", "userdel -r prof-member; userdel -r prof-outsider"], check=False)
