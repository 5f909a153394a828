"""Builds one fake Huawei Ascend ``.run`` package for the sandbox (a real makeself archive).

    python3 sandbox/packages/build.py --component driver --chip 910b --version 25.0.rc1.1 \\
        --arch x86_64 --out .cache/sandbox/packages

prints the path of the archive it wrote. The archive is named exactly like Huawei's (from the
facts reference's package table, never from the collection's code), is made by Debian's
makeself with a SHA256 checksum, and runs the simulated installer in payload/ (see
sandbox/README.md, "Fake packages"). Builds are reproducible: the same arguments give the same
bytes.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PACKAGES_DIR = os.path.dirname(os.path.abspath(__file__))
PAYLOAD_DIR = os.path.join(PACKAGES_DIR, "payload")
MAKESELF_HEADER = "/usr/share/makeself/makeself-header.sh"
COMPONENTS = ("driver", "firmware", "toolkit", "kernels", "ops", "nnal", "docker_runtime")
HDK_COMPONENTS = ("driver", "firmware")
# A fixed packaging date keeps the archive bytes independent of when it was built.
PACKAGING_DATE = "Thu Jan  1 00:00:00 UTC 2026"
# How long Huawei's own installer takes on a real server, in seconds; each archive carries its
# component's figure (package.json huawei_install_seconds) and an install lasts that long times the
# install_time_scale fault (make bench sets it; without it, --install-seconds, default 0, applies).
# Sources and the judgements among them: docs/benchmarks.md, "Installer durations".
HUAWEI_INSTALL_SECONDS = {"driver": 300, "firmware": 300, "toolkit": 480, "kernels": 80, "ops": 80,
                          "nnal": 60, "docker_runtime": 60}


# ==========================================================================================
# File names, from the package table of the facts reference (section 1), not from the
# collection: the sandbox must not share the naming code it is there to test.
# ==========================================================================================

# x86 is spelled x86-64 in driver names and x86_64 everywhere else.
DRIVER_ARCH_SPELLING = {"x86_64": "x86-64", "aarch64": "aarch64"}
# Up to this release the kernels packages carry no architecture: ..._linux.run.
LAST_KERNELS_WITHOUT_ARCH = "8.0.RC2"


def package_file_name(component, chip, version, arch, soc):
    """The name Huawei gives the package; chip and arch are None where the name carries none."""
    soc_suffix = "-soc" if soc else ""
    if soc and (component not in HDK_COMPONENTS or chip != "310b"):
        raise SystemExit("build.py: only 310b driver and firmware packages come as -soc variants")
    # Atlas A3 HDKs carry the product line first (Huawei's OBS: Atlas-A3-hdk-npu-driver_25.3.rc1_linux-aarch64.run,
    # Atlas-A3-hdk-npu-firmware_7.8.0.2.212.run); its CANN ops package is Ascend-cann-A3-ops_<ver>_... below.
    if component == "firmware":
        if chip == "A3":
            return "Atlas-A3-hdk-npu-firmware_%s.run" % version
        return "Ascend-hdk-%s-npu-firmware%s_%s.run" % (chip, soc_suffix, version)
    if component == "driver":
        if chip == "A3":
            return "Atlas-A3-hdk-npu-driver_%s_linux-%s.run" % (version, DRIVER_ARCH_SPELLING[arch])
        return "Ascend-hdk-%s-npu-driver%s_%s_linux-%s.run" % (chip, soc_suffix, version, DRIVER_ARCH_SPELLING[arch])
    if component == "kernels":
        if chip == "A3":
            return "Atlas-A3-cann-kernels_%s_linux-%s.run" % (version, arch)
        if version_key(version) <= version_key(LAST_KERNELS_WITHOUT_ARCH):
            return "Ascend-cann-kernels-%s_%s_linux.run" % (chip, version)
        return "Ascend-cann-kernels-%s_%s_linux-%s.run" % (chip, version, arch)
    if component == "ops":
        return "Ascend-cann-%s-ops_%s_linux-%s.run" % (chip, version, arch)
    if component == "docker_runtime":
        return "Ascend-docker-runtime_%s_linux-%s.run" % (version, arch)
    return "Ascend-cann-%s_%s_linux-%s.run" % (component, version, arch)


def version_key(text):
    """The payload's own version ordering, so that build and install never disagree."""
    module = sys.modules.get("npu_ascend_payload_ascend_sim")
    if module is None:
        spec = importlib.util.spec_from_file_location("npu_ascend_payload_ascend_sim",
                                                      os.path.join(PAYLOAD_DIR, "ascend_sim.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[spec.name] = module
    return module.version_key(text)


def release_line(version):
    """``25.0.rc1.1`` -> (25, 0); the major.minor pair a compatibility table is keyed on."""
    numbers = re.findall(r"\d+", version)
    return int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0


# ==========================================================================================
# Version files. Where a real sample exists (tests/fixtures/samples/files) the table holds
# its exact values and tests/sandbox/test_packages_build.py checks the output against the
# sample; other versions get plausible values from the release line.
# ==========================================================================================

# version -> (ascendhal_version, Innerversion, compatible_version, compatible_version_fw)
DRIVER_SAMPLES = {
    "24.1.rc1": ("7.35.19", "V100R001C15SPC006B220", "[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17]",
                 "[7.0.0,7.2.99]"),
    # Huawei pairs 24.1.rc2 with firmware 7.3.0.1.231, yet its own file says [7.0.0,7.2.99]: kept as real.
    "24.1.rc2.2": ("7.35.23", "V100R001C18SPC001B233",
                   "[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]", "[7.0.0,7.2.99]"),
    "25.0.rc1.1": ("7.35.23", "V100R001C21SPC002B220",
                   "[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]", "[7.0.0,7.7.99]"),
    "25.3.rc1": ("7.35.23", "V100R001C23SPC002B212",
                 "[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C22],[V100R001C23]", "[7.0.0,8.9.9]"),
}
# release line -> (CANN-era C number, compatible_version_fw) for versions without a sample
DRIVER_LINES = {
    (23, 0): (13, "[6.4.0,7.1.99]"),
    (24, 1): (18, "[7.0.0,7.5.99]"),
    (25, 0): (21, "[7.0.0,7.7.99]"),
    (25, 2): (22, "[7.0.0,7.7.99]"),
    (25, 3): (23, "[7.0.0,8.9.9]"),
    (25, 5): (25, "[7.0.0,8.9.9]"),
}


def driver_version_info(version):
    if version in DRIVER_SAMPLES:
        hal, inner, compatible, firmware_range = DRIVER_SAMPLES[version]
    else:
        c_number, firmware_range = DRIVER_LINES.get(release_line(version), (26, "[7.0.0,9.9.9]"))
        hal = "7.35.23"
        inner = "V100R001C%dSPC001B220" % c_number
        compatible = ",".join("[V100R001C%d]" % number for number in range(c_number - 4, c_number + 1))
    lines = ["Version=" + version, "ascendhal_version=" + hal, "aicpu_version=1.0", "tdt_version=1.0",
             "log_version=1.0", "prof_version=2.0", "dvppkernels_version=1.1", "tsfw_version=1.0",
             "Innerversion=" + inner, "compatible_version=" + compatible, "compatible_version_fw=" + firmware_range]
    # package_version appears from 24.1.rc2 on (absent from the real 24.1.rc1 file).
    if version_key(version) >= version_key("24.1.rc2"):
        lines.append("package_version=" + version)
    return "\n".join(lines) + "\n"


# firmware version -> (package_version, compatible_version_drv)
FIRMWARE_SAMPLES = {
    "7.1.0.11.220": ("23.0.7", "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]"),
    "7.7.0.1.231": ("25.0.rc1.1", "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]"),
}
# firmware -> the HDK release it ships in (facts reference section 10 and the transcripts)
FIRMWARE_HDK = {
    "6.3.0.1.241": "23.0.rc1", "6.4.0.4.220": "23.0.rc3", "7.1.0.4.220": "23.0.1", "7.1.0.5.220": "23.0.3",
    "7.1.0.6.220": "24.1.rc1", "7.3.0.1.231": "24.1.rc2", "7.5.0.2.220": "24.1.0", "7.7.0.2.220": "25.2.0",
}


def firmware_compatible_drivers(version):
    line = release_line(version)
    if line[0] < 7:
        return "[23.0.rc1,23.0.rc1.],[23.0.rc2,23.0.rc2.],[23.0.rc3,23.0.rc3.]"
    if line <= (7, 2):
        return "[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.],[24.1,24.1.]"
    if line <= (7, 6):
        return "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]"
    if line == (7, 7):
        return "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.],[25.2,25.2.]"
    return "[24.1,24.1.],[25.0,25.0.],[25.2,25.2.],[25.3,25.3.],[25.5,25.5.],[26.0,26.0.]"


def firmware_version_info(version):
    if version in FIRMWARE_SAMPLES:
        package_version, drivers = FIRMWARE_SAMPLES[version]
    else:
        package_version, drivers = FIRMWARE_HDK.get(version), firmware_compatible_drivers(version)
    lines = ["Version=" + version, "firmware_version=1.0"]
    if package_version:
        lines.append("package_version=" + package_version)
    lines.append("compatible_version_drv=" + drivers)
    return "\n".join(lines) + "\n"


# CANN version -> (innerversion, compatible_version) from the real ascend_toolkit_install.info samples
TOOLKIT_SAMPLES = {
    "8.0.0": ("V100R001C20SPC001B251", "[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20]"),
    "8.1.RC1": ("V100R001C21SPC001B238",
                "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]"),
    "8.2.RC1": ("V100R001C22SPC001B231",
                "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]"),
    "8.5.0": ("V100R001C25SPC001B212",
              "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]"),
}
CANN_C_NUMBERS = {"8.0.RC1": 17, "8.0.RC2": 18, "8.0.RC3": 19, "8.0.0": 20, "8.1.RC1": 21, "8.2.RC1": 22,
                  "8.3.RC1": 23, "8.5.0": 25, "9.0.0": 26}
# CANN version -> the numeric build version its files carry (samples: opp_kernel and version.cfg)
CANN_BUILD_VERSIONS = {"8.2.RC1": "8.2.0.0.201", "8.2.RC2": "8.2.0.2.220"}
# version -> (ATB build, branch date, commit) from the real nnal sample
NNAL_SAMPLES = {"8.2.RC1": ("8.2.RC1.B150", "20251226", "f10dc20391d8af04c3f8024aca0e0dfa94d2a0a5")}
# opp_kernel timestamp of the real 8.2.RC1 sample
KERNEL_TIMESTAMPS = {"8.2.RC1": "20250724_194044950"}


def cann_build_version(version):
    if version in CANN_BUILD_VERSIONS:
        return CANN_BUILD_VERSIONS[version]
    major, minor = release_line(version)
    rc = re.search(r"rc(\d+)", version, re.I)
    return "%d.%d.0.%d.220" % (major, minor, int(rc.group(1)) if rc else 0)


def toolkit_install_info(version, arch):
    if version in TOOLKIT_SAMPLES:
        inner, compatible = TOOLKIT_SAMPLES[version]
    else:
        c_number = CANN_C_NUMBERS.get(version, 24)
        inner = "V100R001C%dSPC001B220" % c_number
        compatible = ",".join("[V100R001C%d]" % number for number in (15, 18, 19, 20, 21) if number <= c_number)
    # @PATH@ becomes <install path>/.../<arch>-linux at install time.
    return ("package_name=Ascend-cann-toolkit\nversion=%s\ninnerversion=%s\ncompatible_version=%s\n"
            "arch=%s\nos=linux\npath=@PATH@\n" % (version, inner, compatible, arch))


def toolkit_version_cfg(version):
    pair = "[%s:%s]" % (cann_build_version(version), version)
    parts = ("runtime", "compiler", "hccl", "opp", "toolkit", "aoe", "ncs")
    lines = ["# version: 1.0"]
    for kind in ("running", "upgrade", "installed"):
        lines += ["%s_%s_version=%s" % (part, kind, pair) for part in parts]
    return "\n".join(lines) + "\n"


def opp_kernel_version_info(version):
    build = cann_build_version(version)
    major, minor = release_line(version)
    timestamp = KERNEL_TIMESTAMPS.get(version, "20260101_000000000")
    required = '">=7.6, <=%d.%d"' % (major, minor)
    lines = ["Version=" + build, "version_dir=" + version, "timestamp=" + timestamp, "ops_version=" + build,
             "adk_version=" + build]
    for part in ("amct_acl", "aoe", "compiler", "fwkplugin", "hccl", "nca", "ncs", "opp", "runtime", "toolkit"):
        lines.append("required_package_%s_version=%s" % (part, required))
    return "\n".join(lines) + "\n"


def nnal_version_info(version, arch):
    if version in NNAL_SAMPLES:
        build, branch_date, commit = NNAL_SAMPLES[version]
    else:
        build, branch_date = version + ".B100", "20260101"
        commit = hashlib.sha1(("Ascend-cann-atb " + version).encode()).hexdigest()
    lines = ["Ascend-cann-atb : " + version, "Ascend-cann-atb Version : " + build, "Platform : " + arch,
             "branch : br_release_cann_%s_%s" % (version, branch_date), "commit id : " + commit]
    return "".join("    %s\n" % line for line in lines)


def set_env_script(component, version):
    if component == "nnal":
        return ("# Environment of the simulated NNAL/ATB %s (ascend-sandbox)\n"
                "export ATB_HOME_PATH=@INSTALL_PATH@/nnal/atb/latest/atb\n"
                "export LD_LIBRARY_PATH=$ATB_HOME_PATH/lib:$LD_LIBRARY_PATH\n" % version)
    # The variables and paths of Huawei's toolkit set_env.sh (docs/development.md, "set_env.sh and
    # import acl"): 8.2 points ASCEND_TOOLKIT_HOME at ascend-toolkit/latest, 8.5+ at cann-<version>.
    if version_key(version) >= version_key("8.5.0"):
        home = "@INSTALL_PATH@/cann-%s" % version
    else:
        home = "@INSTALL_PATH@/ascend-toolkit/latest"
    return ("# Environment of the simulated CANN toolkit %s (ascend-sandbox)\n"
            "export ASCEND_TOOLKIT_HOME=%s\n"
            "export LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:${ASCEND_TOOLKIT_HOME}/lib64/plugin/opskernel:"
            "${ASCEND_TOOLKIT_HOME}/lib64/plugin/nnengine:"
            "${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/$(arch):$LD_LIBRARY_PATH\n"
            # unverified: whether set_env.sh itself adds the driver's libraries (Huawei's guides add them
            # to the login profile); without them `import acl` cannot find libascend_hal.so.
            "export LD_LIBRARY_PATH=@INSTALL_PATH@/driver/lib64/common:@INSTALL_PATH@/driver/lib64/driver:"
            "$LD_LIBRARY_PATH\n"
            "export PYTHONPATH=${ASCEND_TOOLKIT_HOME}/python/site-packages:"
            "${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe:$PYTHONPATH\n"
            "export PATH=${ASCEND_TOOLKIT_HOME}/bin:${ASCEND_TOOLKIT_HOME}/compiler/ccec_compiler/bin:"
            "${ASCEND_TOOLKIT_HOME}/tools/profiler/bin:$PATH\n"
            "export ASCEND_AICPU_PATH=${ASCEND_TOOLKIT_HOME}\n"
            "export ASCEND_OPP_PATH=${ASCEND_TOOLKIT_HOME}/opp\n"
            "export TOOLCHAIN_HOME=${ASCEND_TOOLKIT_HOME}/toolkit\n"
            "export ASCEND_HOME_PATH=${ASCEND_TOOLKIT_HOME}\n" % (version, home))


# The toolkit's Python binding (pyACL). The real one is a C extension that loads libascendcl.so,
# which needs the driver's libascend_hal.so: this stand-in looks both up on LD_LIBRARY_PATH the way
# the dynamic loader would and fails with the loader's message when one is missing.
ACL_MODULE = '''"""Simulated pyACL of CANN %s (ascend-sandbox): importable only where the real one would load."""
import os


def _find(library):
    for directory in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if directory and os.path.isfile(os.path.join(directory, library)):
            return os.path.join(directory, library)
    raise ImportError("%%s: cannot open shared object file: No such file or directory" %% library)


_LIBRARIES = [_find("libascendcl.so"), _find("libascend_hal.so")]
__version__ = "%s"
'''


EULA_TEXT = ("This simulated package stands in for Huawei's CANN in the npu.ascend sandbox;\n"
             "Huawei's end user license agreement is not reproduced here.\n")

DOCKER_BASE_LIST = ("/usr/local/Ascend/driver/lib64\n/usr/local/Ascend/driver/include\n/usr/local/dcmi\n"
                    "/usr/local/bin/npu-smi\n")


def payload_files(component, version, arch):
    """The component's data files (files/<name> in the archive)."""
    if component == "driver":
        return {"version.info": driver_version_info(version)}
    if component == "firmware":
        return {"version.info": firmware_version_info(version)}
    if component == "toolkit":
        return {"ascend_toolkit_install.info": toolkit_install_info(version, arch),
                "version.cfg": toolkit_version_cfg(version), "set_env.sh": set_env_script(component, version),
                "acl.py": ACL_MODULE % (version, version), "eula.txt": EULA_TEXT}
    if component in ("kernels", "ops"):
        return {"opp_kernel_version.info": opp_kernel_version_info(version), "eula.txt": EULA_TEXT}
    if component == "nnal":
        return {"nnal_version.info": nnal_version_info(version, arch), "set_env.sh": set_env_script(component, version),
                "eula.txt": EULA_TEXT}
    return {"base.list": DOCKER_BASE_LIST}


def makeself_label(component, chip, soc):
    # Driver and firmware labels are the transcripts'; the others are our guess (unverified).
    if component == "driver":
        return "ASCEND DRIVER RUN PACKAGE"
    if component == "firmware":
        return "ASCEND-HDK-%s-NPU%s FIRMWARE RUN PACKAGE" % (chip.upper(), "-SOC" if soc else "")
    if component in ("kernels", "ops"):
        return "ASCEND-CANN-%s-%s RUN PACKAGE" % (component.upper(), chip.upper())
    return "ASCEND-%s RUN PACKAGE" % component.upper()


# ==========================================================================================
# makeself header. Huawei's archives take the installer options directly (``./x.run --full
# --quiet``) where stock makeself stops at "Unrecognized flag", and their ``--check`` runs the
# installer's own check after makeself's (transcripts *_check.txt). We derive our header from
# the installed makeself's at build time and change only the option loop.
# ==========================================================================================

FORWARD_DEFINITION = r'''
fwd_count=0
MS_Forward()
{
    fwd_count=\`expr \$fwd_count + 1\`
    eval "fwd_\$fwd_count=\\\$1"
}
'''

FORWARD_APPLY = r'''
fwd_list=""
fwd_index=1
while test \$fwd_index -le \$fwd_count; do
    fwd_list="\$fwd_list \\"\\\$fwd_\$fwd_index\\""
    fwd_index=\`expr \$fwd_index + 1\`
done
eval "set -- \$fwd_list \\"\\\$@\\""
'''

HEADER_EDITS_ALL = (
    # Every option makeself does not know goes to the installer, in order, as with Huawei's.
    ('    -*)\n\techo Unrecognized flag : "\\$1" >&2\n\tMS_Help\n\texit 1\n\t;;\n',
     '    --extract=*)\n\tkeep=y\n\ttargetdir="\\${1#--extract=}"\n\tscript=""\n\tcleanup_script=""\n\tshift\n\t;;\n'
     '    -*)\n\tMS_Forward "\\$1"\n\tshift\n\t;;\n'),
    ('initargs="\\$@"\n', 'initargs="\\$@"\n' + FORWARD_DEFINITION),
    ('    *)\n\tbreak ;;\n    esac\ndone\n', '    *)\n\tbreak ;;\n    esac\ndone\n' + FORWARD_APPLY),
)
HEADER_EDITS_INSTALLER_HELP_AND_QUIET = (
    # --help and --quiet belong to Huawei's installers too: makeself keeps its quiet mode and passes them on.
    ('    -h | --help)\n\tMS_Help\n\texit 0\n\t;;\n', '    -h | --help)\n\tMS_Forward "\\$1"\n\tshift\n\t;;\n'),
    ('    -q | --quiet)\n\tquiet=y\n\tnoprogress=y\n\tshift\n',
     '    -q | --quiet)\n\tquiet=y\n\tnoprogress=y\n\tMS_Forward "\\$1"\n\tshift\n'),
)
HEADER_EDITS_CANN_CHECK = (
    # Huawei's --check prints no "does not contain an embedded MD5/CRC" notes (facts reference section 1).
    ('    --check)\n\tMS_Check "\\$0" y\n\texit 0\n\t;;\n', '    --check)\n\tMS_Check "\\$0"\n\texit 0\n\t;;\n'),
)
HEADER_EDITS_HDK_CHECK = (
    ('    --check)\n\tMS_Check "\\$0" y\n\texit 0\n\t;;\n',
     '    --check)\n\tmkdir -p "\\$HOME/log/makeself"\n'
     '\techo "Makeself logfile: \\$HOME/log/makeself/makeself.log"\n'
     '\techo "\\`date\\` \\$0 --check" >> "\\$HOME/log/makeself/makeself.log"\n'
     '\tMS_Check "\\$0"\n\tMS_Forward "\\$1"\n\tshift\n\t;;\n'),
)


def write_header(component, path):
    with open(MAKESELF_HEADER) as handle:
        header = handle.read()
    edits = list(HEADER_EDITS_ALL)
    if component != "docker_runtime":
        edits += HEADER_EDITS_INSTALLER_HELP_AND_QUIET
    edits += HEADER_EDITS_HDK_CHECK if component in HDK_COMPONENTS else HEADER_EDITS_CANN_CHECK
    for old, new in edits:
        if header.count(old) != 1:
            raise SystemExit("build.py: %s does not look like the makeself 2.4 header this builder patches "
                             "(missing: %r); install Debian's makeself 2.4.x (make deps)" % (MAKESELF_HEADER, old))
        header = header.replace(old, new)
    with open(path, "w") as handle:
        handle.write(header)


def stage_payload(stage_dir, component, package):
    os.makedirs(os.path.join(stage_dir, "files"))
    only_for = {"npu_smi.py": "driver", "upgrade_tool.py": "driver", "hccn_tool.py": "driver", "docker_runtime.py": "docker_runtime",
                "msprof.py": "toolkit"}
    for name in ("install.sh", "installer.py", "ascend_sim.py", "npu_smi.py", "upgrade_tool.py", "docker_runtime.py",
                 "msprof.py", "hccn_tool.py"):
        if only_for.get(name, component) != component:
            continue
        shutil.copyfile(os.path.join(PAYLOAD_DIR, name), os.path.join(stage_dir, name))
        os.chmod(os.path.join(stage_dir, name), 0o755 if name == "install.sh" else 0o644)
    with open(os.path.join(stage_dir, "package.json"), "w") as handle:
        json.dump(package, handle, indent=2, sort_keys=True)
        handle.write("\n")
    for name, content in sorted(payload_files(component, package["version"], package["arch"]).items()):
        with open(os.path.join(stage_dir, "files", name), "w") as handle:
            handle.write(content)
    for root, directories, files in os.walk(stage_dir):
        for name in directories:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            if name != "install.sh":
                os.chmod(os.path.join(root, name), 0o644)


def build(component, chip, version, arch, soc, out_dir, install_seconds=0.0):
    if shutil.which("makeself") is None:
        raise SystemExit("build.py: makeself is not installed; run `make deps` (Debian package makeself)")
    if component not in COMPONENTS:
        raise SystemExit("build.py: unknown component %r (one of %s)" % (component, ", ".join(COMPONENTS)))
    name_chip = chip if component in ("driver", "firmware", "kernels", "ops") else None
    name_arch = None if component == "firmware" else arch
    filename = package_file_name(component, name_chip, version, name_arch, soc)
    package = {"component": component, "chip": chip, "version": version, "arch": arch, "soc": bool(soc),
               "filename": filename, "install_seconds": float(install_seconds),
               "huawei_install_seconds": HUAWEI_INSTALL_SECONDS[component]}
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="npu-ascend-build-") as work:
        stage_name = "ascend-%s-%s" % (component, version)
        stage_payload(os.path.join(work, stage_name), component, package)
        write_header(component, os.path.join(work, "header.sh"))
        command = ["makeself", "--sha256", "--nomd5", "--nocrc", "--nox11", "--export-conf",
                   "--header", "./header.sh", "--packaging-date", PACKAGING_DATE,
                   "--tar-extra", "--mtime=@0 --sort=name --owner=0 --group=0 --numeric-owner",
                   stage_name, filename, makeself_label(component, chip, soc), "./install.sh"]
        # gzip -n keeps the compressed stream free of names and times.
        environment = dict(os.environ, LC_ALL="C", GZIP="-n", TZ="UTC")
        result = subprocess.run(command, cwd=work, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        if result.returncode != 0:
            raise SystemExit("build.py: makeself failed for %s:\n%s" % (filename, result.stdout))
        target = os.path.join(out_dir, filename)
        shutil.move(os.path.join(work, filename), target + ".tmp")
        os.chmod(target + ".tmp", 0o755)
        os.replace(target + ".tmp", target)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--component", required=True, choices=COMPONENTS)
    parser.add_argument("--chip", default="910b", help="910, 910b, 310p, 310b or A3 (default 910b)")
    parser.add_argument("--version", required=True, help="package version as Huawei writes it")
    parser.add_argument("--arch", default="x86_64", choices=("x86_64", "aarch64"))
    parser.add_argument("--soc", action="store_true", help="the 310B -soc variant (driver/firmware)")
    parser.add_argument("--install-seconds", type=float, default=0.0,
                        help="simulated install duration baked into the package (faults.json overrides)")
    parser.add_argument("--out", required=True, help="directory to write the .run into")
    args = parser.parse_args(argv)
    print(build(args.component, args.chip, args.version, args.arch, args.soc, args.out, args.install_seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
