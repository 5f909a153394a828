"""Makes the openEuler node's package repository, inside the node image's root (chroot).

Every RPM is built with rpmbuild from real files: the Debian packages of the same software that
debootstrap installed (gcc, make, dkms, the kernel's userspace headers, pciutils, net-tools,
python3-tomlkit, dnf's versionlock plugin), or, for the kernel of the simulated openEuler
release, a kernel build tree for `uname -r` (which the image's ld.so.preload library makes
openEuler's). Then the image forgets what it must get from the repository, as a minimal
openEuler install lacks it: those Debian packages are purged, and the packages an openEuler
system has from its installer (kernel, release files, pciutils, net-tools) are registered in
the RPM database.

Run by customize.sh as `python3 build_rpms.py OUT_DIR`; OUT_DIR receives the RPMs and the
repository metadata (createrepo_c), which sandbox/fleet.py moves out of the image and mounts
read-only into every openEuler node (the controller serving the repository). Part of the
image recipe: any change here makes a new image.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

COMMAND_ENV = dict(os.environ, LC_ALL="C")
DIST_TAG = "oe2203"
# Where the installed files of a Debian package never matter on a node.
SKIPPED_PREFIXES = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/info/", "/usr/share/lintian/",
                    "/usr/share/bug/")
VERSIONLOCK_FILES = ["/usr/lib/python3/dist-packages/dnf-plugins/versionlock.py",
                     "/etc/dnf/plugins/versionlock.conf", "/etc/dnf/plugins/versionlock.list"]

# name: what the RPM holds and what the image does with it afterwards.
#   debs: the Debian packages whose files it carries (version taken from the first one)
#   files: individual files (taken from an installed Debian package, `version_of`)
#   generated: the kernel packages, made for the simulated kernel release (or `kernel_release`)
#   then: "repository" (the image loses those files; dnf puts them back) or "installed"
#         (registered in the RPM database, files stay)
PACKAGES = [
    {"name": "gcc", "debs": ["gcc", "gcc-12", "cpp", "cpp-12"], "then": "repository",
     "summary": "The GNU C compiler"},
    {"name": "make", "debs": ["make"], "then": "repository", "summary": "GNU make"},
    {"name": "dkms", "debs": ["dkms"], "then": "repository", "requires": ["gcc", "make"],
     "noarch": True, "summary": "Dynamic Kernel Module Support"},
    {"name": "python3-tomlkit", "debs": ["python3-tomlkit"], "then": "repository", "noarch": True,
     "summary": "Style preserving TOML library"},
    {"name": "python3-dnf-plugin-versionlock", "files": VERSIONLOCK_FILES, "version_of": "dnf-plugins-core",
     "config": VERSIONLOCK_FILES[1:], "then": "repository", "noarch": True,
     "summary": "Version lock plugin for dnf"},
    {"name": "kernel-headers", "debs": ["linux-libc-dev"], "kernel_version": True, "then": "repository",
     "summary": "Header files for the kernel for use by glibc"},
    {"name": "kernel-devel", "generated": "kernel-devel", "kernel_version": True, "then": "repository",
     "summary": "Development package for building kernel modules to match the kernel"},
    {"name": "kernel", "generated": "kernel", "kernel_version": True, "then": "installed",
     "summary": "The Linux kernel"},
    # A later kernel of the same release (its number is the sandbox's choice): what `dnf upgrade`
    # would move the node to, unless hdk_hold_kernel's versionlock holds the running one.
    {"name": "kernel", "generated": "kernel", "kernel_release": "5.10.0-60.139.0.166.oe2203", "then": "repository",
     "summary": "The Linux kernel"},
    {"name": "pciutils", "debs": ["pciutils"], "then": "installed", "summary": "PCI bus related utilities"},
    {"name": "net-tools", "debs": ["net-tools"], "then": "installed", "summary": "Basic networking tools"},
    {"name": "openEuler-release", "files": ["/etc/os-release", "/usr/lib/os-release", "/etc/openEuler-release"],
     "version": "22.03LTS", "release": "52", "then": "installed", "noarch": True,
     "provides": ["system-release", "system-release(releasever) = 22.03"],
     "config": ["/usr/lib/os-release", "/etc/openEuler-release"], "summary": "openEuler release files"},
]


def run(argv, **kwargs):
    result = subprocess.run(argv, check=False, env=COMMAND_ENV, stdout=subprocess.PIPE,
                            universal_newlines=True, **kwargs)
    if result.returncode != 0:
        sys.exit("build_rpms: `%s` exited %d:\n%s" % (" ".join(argv), result.returncode, result.stdout))
    return result.stdout


def kernel_release_of(package):
    """The `uname -r` a kernel package is for: the running kernel's unless it names another."""
    if "kernel_release" in package:
        return "%s.%s" % (package["kernel_release"], os.uname().machine)
    return os.uname().release


def kernel_version_release(kernel_release):
    """('5.10.0', '60.18.0.50.oe2203') from 5.10.0-60.18.0.50.oe2203.x86_64, as the kernel RPM's NEVRA has it."""
    match = re.match(r"^([^-]+)-(.+)\.([^.]+)$", kernel_release)
    if not match:
        sys.exit("build_rpms: uname -r is %r, not an openEuler kernel release; check the image's "
                 "/etc/ld.so.preload" % kernel_release)
    return match.group(1), match.group(2)


def rpm_field(text):
    """A Debian version part as an RPM version or release: no '-' (it separates them), no ':'."""
    return re.sub(r"[^A-Za-z0-9._+~]", ".", text)


def deb_version(package):
    """Debian `[epoch:]upstream[-revision]` as RPM version and release."""
    version = re.sub(r"^[0-9]+:", "", run(["dpkg-query", "-W", "-f=${Version}", package]))
    upstream, revision = version.rsplit("-", 1) if "-" in version else (version, "0")
    return rpm_field(upstream), "%s.%s" % (rpm_field(revision), DIST_TAG)


def deb_files(packages):
    files = []
    for package in packages:
        for path in run(["dpkg-query", "-L", package]).splitlines():
            if path.startswith(SKIPPED_PREFIXES) or not path.startswith("/"):
                continue
            # Directories are not listed (rpm makes them), nor merged-/usr links such as /bin.
            if os.path.isdir(path):
                continue
            if os.path.islink(path) or os.path.isfile(path):
                files.append(path)
    return sorted(set(files))


def deb_empty_dirs(packages):
    """Directories the Debian packages own with nothing of theirs inside, such as dkms's /var/lib/dkms
    (its tree, which `dkms add` refuses to create): rpm makes parent directories of files, not these."""
    listed = []
    for package in packages:
        listed += [path for path in run(["dpkg-query", "-L", package]).splitlines()
                   if path.startswith("/") and not path.startswith(SKIPPED_PREFIXES)]
    directories = [path for path in listed if os.path.isdir(path) and not os.path.islink(path)]
    return sorted(set(path for path in directories
                      if not any(other.startswith(path.rstrip("/") + "/") for other in listed)))


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)
    os.chmod(path, mode)


def generate_kernel_tree(kind, staging, kernel_release):
    """The kernel's own files: a build tree (kernel-devel) or the modules directory (kernel)."""
    config = ("# Linux/x86 kernel configuration of the simulated openEuler kernel (ascend-sandbox)\n"
              "CONFIG_MODULES=y\nCONFIG_PCI=y\nCONFIG_LOCALVERSION=\"\"\n")
    if kind == "kernel-devel":
        tree = os.path.join(staging, "usr/src/kernels", kernel_release)
        write(os.path.join(tree, "Makefile"),
              "# Simulated kernel build tree for %s (ascend-sandbox)\nKERNELRELEASE = %s\n"
              "modules modules_install clean:\n\t@true\n" % (kernel_release, kernel_release))
        write(os.path.join(tree, ".config"), config)
        write(os.path.join(tree, "Module.symvers"), "")
        write(os.path.join(tree, "include/config/kernel.release"), kernel_release + "\n")
        write(os.path.join(tree, "include/generated/utsrelease.h"),
              "#define UTS_RELEASE \"%s\"\n" % kernel_release)
        return
    # As openEuler's kernel package: the modules directory with the build and source links
    # (dangling until kernel-devel is installed) and the configuration in /boot.
    modules = os.path.join(staging, "lib/modules", kernel_release)
    os.makedirs(modules)
    for name in ("modules.dep", "modules.alias", "modules.symbols"):
        write(os.path.join(modules, name), "")
    os.symlink("/usr/src/kernels/" + kernel_release, os.path.join(modules, "build"))
    os.symlink("build", os.path.join(modules, "source"))
    write(os.path.join(staging, "boot", "config-" + kernel_release), config)


def spec_text(package, version, release, files, staging, file_list, empty_dirs=()):
    config = set(package.get("config", []))
    lines = [
        "%define _topdir /var/tmp/rpmbuild",
        "%define __os_install_post %{nil}",
        "%define __arch_install_post %{nil}",
        "%define debug_package %{nil}",
        "%define _build_id_links none",
        "%define _binary_payload w1.gzdio",
        "Name: %s" % package["name"],
        "Version: %s" % version,
        "Release: %s" % release,
        "Summary: %s" % package["summary"],
        "License: Distributable (repackaged from Debian bookworm by the npu.ascend sandbox)",
        "AutoReqProv: no",
    ]
    if package.get("noarch"):
        lines.append("BuildArch: noarch")
    lines += ["Requires: %s" % name for name in package.get("requires", [])]
    lines += ["Provides: %s" % name for name in package.get("provides", [])]
    lines += [
        "%description", package["summary"] + " (npu.ascend sandbox).",
        "%install",
        "mkdir -p %{buildroot}",
        "tar -C %s --no-recursion -cf - -T %s | tar -C %%{buildroot} -xf -" % (staging, file_list),
        "%files",
    ]
    lines += [('%%config(noreplace) "%s"' if path in config else '"%s"') % path for path in files]
    lines += ['%%dir "%s"' % path for path in empty_dirs]
    return "\n".join(lines) + "\n"


def build(package, out_dir, work):
    staging = "/"
    kernel_release = kernel_release_of(package)
    empty_dirs = []
    if package.get("generated"):
        staging = tempfile.mkdtemp(dir=work)
        generate_kernel_tree(package["generated"], staging, kernel_release)
        files = sorted("/" + os.path.relpath(os.path.join(root, name), staging)
                       for root, dirs, names in os.walk(staging) for name in names + dirs
                       if os.path.islink(os.path.join(root, name)) or os.path.isfile(os.path.join(root, name)))
    elif package.get("debs"):
        files = deb_files(package["debs"])
        empty_dirs = deb_empty_dirs(package["debs"])
    else:
        files = package["files"]
    if package.get("kernel_version") or package.get("generated"):
        version, release = kernel_version_release(kernel_release)
    elif "version" in package:
        version, release = package["version"], package["release"]
    else:
        version, release = deb_version(package.get("version_of") or package["debs"][0])
    spec = os.path.join(work, "%s-%s-%s.spec" % (package["name"], version, release))
    file_list = spec[:-len(".spec")] + ".files"
    write(file_list, "".join(path.lstrip("/") + "\n" for path in files + empty_dirs))
    write(spec, spec_text(package, version, release, files, staging, file_list, empty_dirs))
    run(["rpmbuild", "--quiet", "-bb", spec], stderr=subprocess.STDOUT)
    built = []
    for root, _dirs, names in os.walk("/var/tmp/rpmbuild/RPMS"):
        for name in names:
            shutil.move(os.path.join(root, name), os.path.join(out_dir, name))
            built.append(os.path.join(out_dir, name))
    print("build_rpms: %s (%d files)" % (", ".join(os.path.basename(path) for path in built), len(files)))
    return built, files


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir)
    work = tempfile.mkdtemp(prefix="build-rpms-")
    installed, leaving_debs, leaving_files = [], [], []
    for package in PACKAGES:
        built, files = build(package, out_dir, work)
        if package["then"] == "installed":
            installed.extend(built)
        elif package.get("debs"):
            leaving_debs.extend(package["debs"])
        elif package.get("files"):
            leaving_files.extend(files)
    run(["createrepo_c", "--quiet", "--general-compress-type=gz", out_dir])
    # The rest of the Debian system stays, unknown to rpm, as the base an openEuler installer lays down.
    run(["dpkg", "--purge", "--force-depends", "--force-remove-essential", "--force-remove-protected"]
        + leaving_debs, stderr=subprocess.STDOUT)
    for path in leaving_files:
        os.remove(path)
    run(["rpm", "--install", "--nodeps", "--replacefiles"] + installed)
    shutil.rmtree(work)
    shutil.rmtree("/var/tmp/rpmbuild")
    return 0


if __name__ == "__main__":
    sys.exit(main())
