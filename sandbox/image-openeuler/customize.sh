# shellcheck shell=sh
# Run by sandbox/fleet.py inside the debootstrapped root (chroot) of the openEuler node, after
# sandbox/image/customize.sh and after this recipe's rootfs/ overlay has been copied in; the
# recipe's other files are in /var/tmp/sandbox-recipe. Part of the image recipe: any change here
# makes a new image. The repository it builds is left in /srv/sandbox-repository for fleet.py
# to take out of the image.
set -eu
recipe=/var/tmp/sandbox-recipe
# The kernel release of openEuler 22.03 LTS as released (uname -r on such a server:
# 5.10.0-60.18.0.50.oe2203.x86_64); the architecture part comes from the running kernel.
kernel_release_prefix=5.10.0-60.18.0.50.oe2203

# /etc/os-release stays a link to /usr/lib/os-release, as on openEuler.
install -m 0644 /etc/os-release /usr/lib/os-release.new
mv /usr/lib/os-release.new /usr/lib/os-release
ln -sf ../usr/lib/os-release /etc/os-release
# The base recipe's Ubuntu identity is not this node's: openEuler ships no lsb-release, and
# Ansible would read Ubuntu (and apt) from it before it looked at os-release.
rm -f /etc/debian_version /etc/lsb-release

install -d /usr/local/lib/ascend-sandbox
gcc -O2 -Wall -Werror -shared -fPIC -DKERNEL_RELEASE_PREFIX="\"$kernel_release_prefix\"" \
    -o /usr/local/lib/ascend-sandbox/libkernelrelease.so "$recipe/kernel_release.c" -ldl
echo /usr/local/lib/ascend-sandbox/libkernelrelease.so > /etc/ld.so.preload
case "$(uname -r)" in
    "$kernel_release_prefix".*) ;;
    *) echo "the simulated kernel release did not take: uname -r says $(uname -r)" >&2; exit 1 ;;
esac

python3 "$recipe/build_rpms.py" /srv/sandbox-repository

# No apt on an openEuler server: a role that used it would fail here as it would there.
dpkg --purge --force-depends --force-remove-essential --force-remove-protected \
    apt python3-apt createrepo-c
rm -rf /etc/apt /var/lib/apt /var/cache/apt
rpm -q kernel openEuler-release pciutils net-tools
rm -rf "$recipe"
