#!/bin/sh
# ProxyCommand of the scale lane's nodes (bench/scale.py writes it into its inventory): appends the
# node's name to the counter file, one line per SSH connection Ansible opens, then becomes the
# sandbox's own proxy (sandbox/inventory/sandbox_nodes.yml): `sshd -i` in the node.
#   ssh_proxy_count.sh COUNTER_FILE REPO_DIR HOST
set -eu
printf '%s\n' "$3" >> "$1"
exec "$2/sandbox/podman.sh" exec -i "$3" /usr/sbin/sshd -i
