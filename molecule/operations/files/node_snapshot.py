"""Prints, as JSON, what a node holds that the NPU stack could touch: every file (sha256 and
mode), directory and symlink under the trees below, and the users and groups. Run on the node
before the stack is installed and after uninstall.yml; verify.yml compares the two.

Left out, each for a reason: apt's and dpkg's state (distribution packages the roles install,
python3-tomlkit, the kernel headers and the DKMS toolchain, are the operator's OS, not ours),
containerd's and Docker's image stores and systemd's runtime state (they change whenever
containers run), /var/log and /root/log (Huawei's installers keep their logs by design: the
driver's and firmware's under /var/log/ascend_seclog, makeself's --check log under
~/log/makeself), the sandbox's simulated hardware state under /var/lib/ascend-sandbox (the fake
firmware's "running" record), /etc/hccn.conf (the NPUs' network configuration the driver writes,
which uninstall keeps on purpose: docs/operations.md), the shadow files' "-" backups that useradd and userdel rewrite, Ansible's own
temporary directories (~/.ansible of root and of the login user ops),
and the dynamic linker's cache, rebuilt by every ldconfig.

"packaged" lists the paths that belong to an installed distribution package, so that the
comparison can tell the files of packages the roles installed (for example the kernel headers'
/lib/modules/<kernel>/build) from files of ours.
"""
import glob
import grp
import hashlib
import json
import os
import pwd
import stat
import sys

TREES = ['/etc', '/usr/local', '/opt', '/home', '/root', '/var/lib', '/var/cache/npu_ascend', '/lib/modules']
SKIPPED = ['/var/lib/apt', '/var/lib/dpkg', '/var/lib/containerd', '/var/lib/docker', '/var/lib/systemd',
           '/var/lib/ucf', '/etc/ld.so.cache', '/root/.ansible', '/var/lib/dhcp', '/var/lib/private',
           '/root/.cache', '/var/lib/ascend-sandbox', '/root/log', '/home/ops/.ansible', '/etc/hccn.conf']
BACKUPS = ['/etc/passwd-', '/etc/group-', '/etc/shadow-', '/etc/gshadow-', '/etc/subuid-', '/etc/subgid-']


def describe(path):
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return 'link -> ' + os.readlink(path)
    if stat.S_ISDIR(info.st_mode):
        return 'dir %o' % stat.S_IMODE(info.st_mode)
    if not stat.S_ISREG(info.st_mode):
        return 'special %o' % info.st_mode
    digest = hashlib.sha256()
    with open(path, 'rb') as stream:
        for block in iter(lambda: stream.read(1 << 20), b''):
            digest.update(block)
    return 'file %o %s' % (stat.S_IMODE(info.st_mode), digest.hexdigest())


def packaged_paths():
    paths = set()
    for listing in glob.glob('/var/lib/dpkg/info/*.list'):
        with open(listing, encoding='utf-8', errors='surrogateescape') as stream:
            paths.update(line.rstrip('\n') for line in stream)
    return paths


def main():
    entries = {}
    for tree in TREES:
        for root, directories, files in os.walk(tree):
            directories[:] = sorted(name for name in directories
                                    if os.path.join(root, name) not in SKIPPED)
            # os.walk neither enters nor lists symlinks to directories: they are entries of their own.
            links = [name for name in directories if os.path.islink(os.path.join(root, name))]
            for name in [None] + sorted(files + links):
                path = root if name is None else os.path.join(root, name)
                if path in SKIPPED or path in BACKUPS or '/__pycache__' in path:
                    continue
                entries[path] = describe(path)
    packaged = packaged_paths()
    snapshot = {
        'files': entries,
        'packaged': sorted(path for path in entries if path in packaged),
        'users': sorted(user.pw_name for user in pwd.getpwall()),
        'groups': sorted(group.gr_name for group in grp.getgrall()),
    }
    json.dump(snapshot, sys.stdout, sort_keys=True)


main()
