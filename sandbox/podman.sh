#!/bin/sh
# Every podman call of the project goes through here so that it uses the project's own
# containers.conf (cgroupfs + runc + explicit ulimits) and never the host's /etc/containers.
sandbox_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
exec env CONTAINERS_CONF="$sandbox_dir/podman/containers.conf" podman "$@"
