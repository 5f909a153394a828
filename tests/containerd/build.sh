#!/usr/bin/env bash
# Build the containerd releases the unit tests validate generated configs against, from the Go
# module proxy, into ~/.cache/npu-ascend/containerd/<version>/bin/containerd.
#
# Debian bookworm ships containerd 1.6 only; config version 2 with 1.7's defaults and config
# version 3 (containerd 2.x) can only be checked against binaries we build ourselves. A version
# whose binary is already cached and answers `--version` is not rebuilt, so running this again
# costs nothing.
#
# It also builds runc, which with containerd 1.7's runc shim is what an aarch64 sandbox node runs
# natively (sandbox/README.md, "aarch64 nodes").
#
# Usage: tests/containerd/build.sh [version | runc ...]   (default: every pinned version and runc)
#        tests/containerd/build.sh --paths   print NAME=path of the binaries a node uses (no build)
# Needs Go >= 1.21 on PATH (or in /usr/local/go/bin); with GOTOOLCHAIN=auto an older-than-needed Go
# fetches the toolchain the module asks for from the same proxy.
set -euo pipefail

# Pinned releases: the newest 1.7 patch (config version 2) and a 2.x release (config version 3).
PINNED_VERSIONS=(v1.7.35 v2.4.2)

# runc's newest release; static, with cgo for its nsenter part and without seccomp (which would
# need libseccomp's static library; nothing the sandbox runs asks runc for a seccomp profile).
RUNC_VERSION=v1.5.3

CACHE_ROOT="${NPU_ASCEND_CACHE:-$HOME/.cache/npu-ascend}/containerd"
RUNC_BINARY="$CACHE_ROOT/runc-$RUNC_VERSION/bin/runc"

if [ "${1:-}" = "--paths" ]; then
    echo "SHIM_RUNC_V2=$CACHE_ROOT/${PINNED_VERSIONS[0]}/bin/containerd-shim-runc-v2"
    echo "SHIM_RUNC_V2_VERSION=${PINNED_VERSIONS[0]}"
    echo "RUNC=$RUNC_BINARY"
    echo "RUNC_VERSION=$RUNC_VERSION"
    exit 0
fi

# btrfs, devmapper and zfs snapshotters need C headers and cgo; the tests only run
# `config default` and `config dump`, which never touch a snapshotter, so leave them out and
# build a static binary that needs nothing from the host.
BUILD_TAGS="no_btrfs,no_devmapper,no_zfs"

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: Go is not installed (need Go >= 1.21 to build containerd)" >&2
    exit 1
fi

module_for() {
    case "$1" in
        v1.*) echo "github.com/containerd/containerd/cmd/containerd" ;;
        v2.*) echo "github.com/containerd/containerd/v2/cmd/containerd" ;;
        *) echo "build.sh: unsupported containerd version $1" >&2; return 1 ;;
    esac
}

build_one() {
    local version="$1" bin_dir binary module
    bin_dir="$CACHE_ROOT/$version/bin"
    binary="$bin_dir/containerd"
    # `--version` prints e.g. "containerd github.com/containerd/containerd v1.7.35 ..."; a
    # half-written or foreign binary fails this check and is rebuilt.
    # The client and the runc shim come with it: a node running this containerd needs both,
    # Debian's 1.6 ones cannot start containers through a 2.x daemon.
    if [ -x "$binary" ] && "$binary" --version 2>/dev/null | grep -F " $version" >/dev/null \
        && [ -x "$bin_dir/ctr" ] && [ -x "$bin_dir/containerd-shim-runc-v2" ]; then
        echo "build.sh: containerd $version already cached at $binary"
        return 0
    fi
    module="$(module_for "$version")"
    echo "build.sh: building containerd $version ($module)"
    mkdir -p "$bin_dir"
    # `go install pkg@version` refuses modules whose go.mod has replace/exclude directives, which
    # containerd's has; so fetch the module source through the proxy and build it as the main
    # module, with its own go.mod and go.sum. The module cache is read-only, hence the copy.
    local source_dir work_dir version_pkg
    source_dir="$(go mod download -json "${module%/cmd/containerd}@$version" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    if [ -z "$source_dir" ] || [ ! -d "$source_dir" ]; then
        echo "build.sh: could not download ${module%/cmd/containerd}@$version" >&2
        return 1
    fi
    work_dir="$(mktemp -d "${TMPDIR:-/tmp}/containerd-build.XXXXXX")"
    # shellcheck disable=SC2064  # expand now: work_dir is local
    trap "rm -rf '$work_dir'" RETURN
    cp -R "$source_dir/." "$work_dir/"
    chmod -R u+w "$work_dir"
    # Stamp the version in as containerd's Makefile does, so `containerd --version` reports it.
    version_pkg="${module%/cmd/containerd}/version"
    # Module zips carry no vendor/ directory: -mod=mod resolves dependencies from go.sum.
    (cd "$work_dir" && env CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" \
        GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" \
        go build -trimpath -tags "$BUILD_TAGS" \
        -ldflags "-s -w -X $version_pkg.Version=$version -X $version_pkg.Package=github.com/containerd/containerd" \
        -o "$work_dir/out/" ./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2)
    local name
    for name in containerd-shim-runc-v2 ctr containerd; do
        mv -f "$work_dir/out/$name" "$bin_dir/$name"
    done
    "$binary" --version
}

build_runc() {
    # `runc --version` prints "runc version 1.5.3" first.
    if [ -x "$RUNC_BINARY" ] && "$RUNC_BINARY" --version 2>/dev/null | grep -Fx "runc version ${RUNC_VERSION#v}" >/dev/null; then
        echo "build.sh: runc $RUNC_VERSION already cached at $RUNC_BINARY"
        return 0
    fi
    echo "build.sh: building runc $RUNC_VERSION"
    local source_dir work_dir
    source_dir="$(go mod download -json "github.com/opencontainers/runc@$RUNC_VERSION" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    if [ -z "$source_dir" ] || [ ! -d "$source_dir" ]; then
        echo "build.sh: could not download github.com/opencontainers/runc@$RUNC_VERSION" >&2
        return 1
    fi
    work_dir="$(mktemp -d "${TMPDIR:-/tmp}/runc-build.XXXXXX")"
    # shellcheck disable=SC2064  # expand now: work_dir is local
    trap "rm -rf '$work_dir'" RETURN
    cp -R "$source_dir/." "$work_dir/"
    chmod -R u+w "$work_dir"
    mkdir -p "$(dirname "$RUNC_BINARY")"
    # The version comes from the module's VERSION file (embedded), as in runc's own builds.
    (cd "$work_dir" && env CGO_ENABLED=1 GOFLAGS="-mod=mod -buildvcs=false" \
        GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" \
        go build -trimpath -tags "netgo osusergo" \
        -ldflags "-s -w -extldflags -static" -o "$work_dir/runc" .)
    mv -f "$work_dir/runc" "$RUNC_BINARY"
    "$RUNC_BINARY" --version
}

# One build at a time per cache: `make test` starts this in the background while lint runs,
# and the unit stage's own call then waits here and finds the binaries cached.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.build.lock"
flock 9

versions=("$@")
if [ "${#versions[@]}" -eq 0 ]; then
    versions=("${PINNED_VERSIONS[@]}" runc)
fi
for version in "${versions[@]}"; do
    if [ "$version" = runc ]; then
        build_runc
    else
        build_one "$version"
    fi
done
