#!/bin/sh
# One view of the name=systemd cgroup hierarchy for the node's kubelet and runc.
#
# In a privileged podman node on this cgroup v1 host, systemd mounts the hierarchy's real root
# over the node's own /sys/fs/cgroup/systemd, so /sys/fs/cgroup/systemd shows one tree while
# /proc/self/cgroup and the mount below it describe another. The kubelet creates /kubepods in the
# first, runc computes paths in the second, and every pod container then fails with
# `stat /sys/fs/kubepods/...: no such file or directory`. With the node in a cgroup namespace of
# its own (fleet.py, sandbox_kubelet), detaching the upper mount leaves the namespaced one.
set -eu
if [ "$(grep -c ' /sys/fs/cgroup/systemd ' /proc/self/mountinfo)" -gt 1 ]; then
    if grep -q ' /sys/fs/cgroup/systemd/release_agent ' /proc/self/mountinfo; then
        umount /sys/fs/cgroup/systemd/release_agent
    fi
    umount --lazy /sys/fs/cgroup/systemd
fi
