#!/usr/bin/env bash
# Build, pin and cache the Kubernetes control plane the tests run on loopback (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler), kwok (which stands in for the
# kubelets of the sandbox nodes) and Prometheus's promtool, all from their Go modules, into
#   ~/.cache/npu-ascend/k8s/<component>-<version>/bin/<binary>
#
# No container registry and no release download site is reachable here, only the Go module
# proxy, so every binary is compiled from source. A component whose binaries are cached and
# report the pinned version through `--version` is not rebuilt, so running this again costs
# nothing. A lock serialises concurrent runs: the second one waits and then finds the cache full.
#
# Usage: tests/k8s/build.sh            build whatever is missing
#        tests/k8s/build.sh --paths    print NAME=path for every binary (no build, no lock)
# Needs Go /usr/local/go/bin/go (or on PATH) new enough for the pinned modules (go 1.26.x).
set -euo pipefail

# Pinned versions. Kubernetes 1.37 is the newest release whose go.mod asks for go 1.26.0, which
# the installed Go 1.26.8 satisfies without fetching another toolchain; etcd 3.7 is the server
# line Kubernetes 1.37 is built and tested against; kwok 0.8 is the newest served release.
ETCD_VERSION=v3.7.3
KUBERNETES_VERSION=v1.37.2
KWOK_VERSION=v0.8.0
# Prometheus publishes its Go module as v0.3MM.P for release 3.MM.P.
PROMETHEUS_MODULE_VERSION=v0.316.0
# For real kubelets in the sandbox nodes: the CNI plugins' newest release (its go.mod asks for go
# 1.26.8, the installed Go); the pause program's tag from k8s.io/kubernetes' build/pause/Makefile.
CNI_PLUGINS_VERSION=v1.10.0
PAUSE_VERSION=3.10.2
# The newest node_exporter release the module proxy serves (its go.mod asks for go 1.25.0).
NODE_EXPORTER_VERSION=v1.12.1
# The CNCF distribution registry (roles/images' registry mode is pushed to it in tests/k8s); its
# go.mod asks for go 1.26.0.
DISTRIBUTION_VERSION=v3.1.2

CACHE_ROOT="${NPU_ASCEND_CACHE:-$HOME/.cache/npu-ascend}/k8s"

etcd_dir="$CACHE_ROOT/etcd-$ETCD_VERSION/bin"
kubernetes_dir="$CACHE_ROOT/kubernetes-$KUBERNETES_VERSION/bin"
kwok_dir="$CACHE_ROOT/kwok-$KWOK_VERSION/bin"
kwok_stages_dir="$CACHE_ROOT/kwok-$KWOK_VERSION/stages"
promtool_dir="$CACHE_ROOT/promtool-$PROMETHEUS_MODULE_VERSION/bin"
kubelet_dir="$CACHE_ROOT/kubelet-$KUBERNETES_VERSION/bin"
cni_dir="$CACHE_ROOT/cni-plugins-$CNI_PLUGINS_VERSION/bin"
pause_dir="$CACHE_ROOT/pause-$PAUSE_VERSION/bin"
DEVICE_PLUGIN_SOURCE="$(cd "$(dirname "$0")/../../sandbox/device-plugin" && pwd)"
# One directory per digest of the stand-in's sources: worktrees with different sources (CI, several
# checkouts on one machine) each run their own build instead of replacing each other's binary.
DEVICE_PLUGIN_DIGEST="$(cat "$DEVICE_PLUGIN_SOURCE"/go.mod "$DEVICE_PLUGIN_SOURCE"/go.sum "$DEVICE_PLUGIN_SOURCE"/*.go \
    | sha256sum | cut -c1-16)"
device_plugin_dir="$CACHE_ROOT/device-plugin-standin-$DEVICE_PLUGIN_DIGEST/bin"
CNI_PLUGINS=(main/bridge main/loopback ipam/host-local)
prometheus_dir="$CACHE_ROOT/prometheus-$PROMETHEUS_MODULE_VERSION/bin"
node_exporter_dir="$CACHE_ROOT/node_exporter-$NODE_EXPORTER_VERSION/bin"
registry_dir="$CACHE_ROOT/distribution-$DISTRIBUTION_VERSION/bin"
KUBERNETES_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler)

print_paths() {
    echo "ETCD=$etcd_dir/etcd"
    echo "ETCD_VERSION=$ETCD_VERSION"
    local binary
    for binary in "${KUBERNETES_BINARIES[@]}"; do
        echo "$(echo "$binary" | tr 'a-z-' 'A-Z_')=$kubernetes_dir/$binary"
    done
    echo "KUBERNETES_VERSION=$KUBERNETES_VERSION"
    echo "KWOK=$kwok_dir/kwok"
    echo "KWOK_VERSION=$KWOK_VERSION"
    echo "KWOK_STAGES_DIR=$kwok_stages_dir"
    echo "PROMTOOL=$promtool_dir/promtool"
    echo "PROMTOOL_VERSION=$(promtool_release)"
    echo "KUBELET=$kubelet_dir/kubelet"
    echo "CNI_PLUGINS_DIR=$cni_dir"
    echo "CNI_PLUGINS_VERSION=$CNI_PLUGINS_VERSION"
    echo "PAUSE=$pause_dir/pause"
    echo "PAUSE_VERSION=$PAUSE_VERSION"
    echo "DEVICE_PLUGIN_STANDIN=$device_plugin_dir/device-plugin"
    echo "PROMETHEUS=$prometheus_dir/prometheus"
    echo "NODE_EXPORTER=$node_exporter_dir/node_exporter"
    echo "NODE_EXPORTER_VERSION=$NODE_EXPORTER_VERSION"
    echo "REGISTRY=$registry_dir/registry"
    echo "REGISTRY_VERSION=$DISTRIBUTION_VERSION"
}

promtool_release() {
    local minor_patch="${PROMETHEUS_MODULE_VERSION#v0.3}"
    echo "3.$((10#${minor_patch%%.*})).${minor_patch#*.}"
}

if [ "${1:-}" = "--paths" ]; then
    print_paths
    exit 0
fi
if [ "$#" -ne 0 ]; then
    echo "usage: $0 [--paths]" >&2
    exit 2
fi

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
    echo "build.sh: Go is not installed (need Go 1.26 at /usr/local/go/bin/go)" >&2
    exit 1
fi

# Static binaries that need nothing from the host; never fetch another Go toolchain behind the
# caller's back (a module that needs one fails here, visibly). -mod=mod lets the throw-away
# modules below record their go.sum as they resolve.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.build.lock"
flock 9

# True when every named binary is executable and its `--version` output holds the wanted text;
# a half-written or foreign binary fails this and its component is rebuilt.
cached() {
    local wanted="$1" binary
    shift
    for binary in "$@"; do
        [ -x "$binary" ] || return 1
        # grep -q would stop reading early and, under pipefail, fail the pipeline with SIGPIPE.
        "$binary" --version 2>&1 | grep -F -- "$wanted" >/dev/null || return 1
    done
}

# A scratch module under the cache root (same filesystem as the output, removed on return).
new_work_dir() {
    mktemp -d "$CACHE_ROOT/.build-$1.XXXXXX"
}

build_etcd() {
    if cached "etcd Version: ${ETCD_VERSION#v}" "$etcd_dir/etcd"; then
        echo "build.sh: etcd $ETCD_VERSION already cached in $etcd_dir"
        return 0
    fi
    echo "build.sh: building etcd $ETCD_VERSION"
    local work_dir
    work_dir="$(new_work_dir etcd)"
    # shellcheck disable=SC2064  # expand now: work_dir is local
    trap "rm -rf '$work_dir'" RETURN
    # The server module's go.mod replaces its sibling modules with relative paths that a
    # module download does not contain, so it cannot be `go install`ed; a module of our own
    # that requires it resolves those siblings at the released versions instead.
    (cd "$work_dir" \
        && go mod init npu-ascend-build/etcd >/dev/null 2>&1 \
        && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" \
        && go build -trimpath -ldflags "-s -w" -o "$work_dir/etcd" go.etcd.io/etcd/server/v3)
    mkdir -p "$etcd_dir"
    mv -f "$work_dir/etcd" "$etcd_dir/etcd"
    "$etcd_dir/etcd" --version
}

# build_kubernetes OUTPUT_DIR BINARY...: the named k8s.io/kubernetes commands into OUTPUT_DIR.
build_kubernetes() {
    local output_dir="$1" binary paths=() packages=()
    shift
    for binary in "$@"; do
        paths+=("$output_dir/$binary")
        packages+=("k8s.io/kubernetes/cmd/$binary")
    done
    if cached "Kubernetes $KUBERNETES_VERSION" "${paths[@]}"; then
        echo "build.sh: $* $KUBERNETES_VERSION already cached in $output_dir"
        return 0
    fi
    echo "build.sh: building $* $KUBERNETES_VERSION"
    local work_dir gomod staging_version minor
    work_dir="$(new_work_dir kubernetes)"
    # shellcheck disable=SC2064  # expand now: work_dir is local
    trap "rm -rf '$work_dir'" RETURN
    gomod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" \
        | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
    if [ -z "$gomod" ] || [ ! -f "$gomod" ]; then
        echo "build.sh: could not download k8s.io/kubernetes@$KUBERNETES_VERSION" >&2
        return 1
    fi
    # k8s.io/kubernetes requires its staging modules as v0.0.0 and replaces them with
    # ./staging/..., which its module download leaves out. Each staging module is published on
    # its own as v0.<minor>.<patch> of the same release: replace every v0.0.0 requirement with it.
    staging_version="v0.${KUBERNETES_VERSION#v1.}"
    minor="${KUBERNETES_VERSION#v1.}"
    minor="${minor%%.*}"
    {
        echo "module npu-ascend-build/kubernetes"
        echo
        echo "go $(sed -n 's/^go \([0-9.]*\)$/\1/p' "$gomod")"
        echo
        echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
        echo
        echo "replace ("
        sed -n 's/^[[:space:]]*\(k8s\.io\/[^[:space:]]*\) v0\.0\.0\([[:space:]].*\)\{0,1\}$/\1/p' "$gomod" \
            | sort -u | while read -r staging_module; do
                echo "	$staging_module => $staging_module $staging_version"
            done
        echo ")"
    } >"$work_dir/go.mod"
    # The version stamps Kubernetes' own build sets: `--version` and the apiserver's /version
    # report them, and the emulation-version logic reads the major/minor.
    local ldflags="-s -w" version_package
    for version_package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ldflags+=" -X $version_package.gitVersion=$KUBERNETES_VERSION"
        ldflags+=" -X $version_package.gitMajor=1 -X $version_package.gitMinor=$minor"
        ldflags+=" -X $version_package.gitTreeState=clean"
    done
    # One `go build` for all the commands, so the packages they share compile once.
    (cd "$work_dir" \
        && go mod download k8s.io/kubernetes \
        && go build -trimpath -ldflags "$ldflags" -o "$work_dir/bin/" "${packages[@]}")
    mkdir -p "$output_dir"
    for binary in "$@"; do
        mv -f "$work_dir/bin/$binary" "$output_dir/$binary"
        "$output_dir/$binary" --version
    done
}

# The CNI plugins a kubelet node's containerd wires pods with: a bridge per node, host-local
# addresses, loopback. The release is stamped so that `--version` shows it.
build_cni_plugins() {
    local plugin paths=() packages=()
    for plugin in "${CNI_PLUGINS[@]}"; do
        paths+=("$cni_dir/${plugin#*/}")
        packages+=("github.com/containernetworking/plugins/plugins/$plugin@$CNI_PLUGINS_VERSION")
    done
    # `bridge --version` prints "CNI bridge plugin v1.10.0".
    if cached "plugin $CNI_PLUGINS_VERSION" "${paths[@]}"; then
        echo "build.sh: CNI plugins $CNI_PLUGINS_VERSION already cached in $cni_dir"
        return 0
    fi
    echo "build.sh: building CNI plugins ${CNI_PLUGINS[*]} $CNI_PLUGINS_VERSION"
    mkdir -p "$cni_dir"
    GOBIN="$cni_dir" go install -trimpath \
        -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
        "${packages[@]}"
    "${paths[0]}" --version
}

# The pod sandbox's pause program, compiled from k8s.io/kubernetes' own build/pause/linux/pause.c
# with the flags of its Makefile (static, so the image needs nothing else).
build_pause() {
    # pause knows only -v (anything else and it pauses): not the --version of cached().
    if [ -x "$pause_dir/pause" ] && "$pause_dir/pause" -v 2>&1 | grep -F -- "pause.c v$PAUSE_VERSION" >/dev/null; then
        echo "build.sh: pause $PAUSE_VERSION already cached in $pause_dir"
        return 0
    fi
    local source_dir
    source_dir="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    echo "build.sh: compiling pause $PAUSE_VERSION from $source_dir/build/pause/linux/pause.c"
    mkdir -p "$pause_dir"
    gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-npu-ascend" \
        -o "$pause_dir/pause.partial" "$source_dir/build/pause/linux/pause.c"
    mv -f "$pause_dir/pause.partial" "$pause_dir/pause"
    "$pause_dir/pause" -v
}

# sandbox/device-plugin, the stand-in for Huawei's device plugin. Rebuilt when its sources change
# (their digest is stamped into the binary and printed by -version).
build_device_plugin_standin() {
    local digest="$DEVICE_PLUGIN_DIGEST"
    if cached "device-plugin stand-in $digest" "$device_plugin_dir/device-plugin"; then
        echo "build.sh: device plugin stand-in $digest already cached in $device_plugin_dir"
        return 0
    fi
    echo "build.sh: testing and building the device plugin stand-in $digest"
    mkdir -p "$device_plugin_dir"
    # Its tests run whenever its sources change: a binary is cached only for sources that passed.
    (cd "$DEVICE_PLUGIN_SOURCE" \
        && GOFLAGS="-mod=readonly -buildvcs=false" go test ./... \
        && GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
            -ldflags "-s -w -X main.version=$digest" -o "$device_plugin_dir/device-plugin.partial" .)
    mv -f "$device_plugin_dir/device-plugin.partial" "$device_plugin_dir/device-plugin"
    "$device_plugin_dir/device-plugin" --version
}

# The `kwok` controller (unlike `kwokctl`) ships no default behaviour: it needs Stage objects
# in its --config. These are the release's own default stages (what kwokctl loads), taken from
# the same module download so that they always match the binary.
KWOK_STAGE_FILES=(
    node/fast/node-initialize.yaml
    node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml
    pod/fast/pod-complete.yaml
    pod/fast/pod-delete.yaml
)

kwok_stages_cached() {
    local stage
    for stage in "${KWOK_STAGE_FILES[@]}"; do
        [ -s "$kwok_stages_dir/$(basename "$stage")" ] || return 1
    done
}

build_kwok() {
    if cached "kwok version v${KWOK_VERSION#v}" "$kwok_dir/kwok"; then
        echo "build.sh: kwok $KWOK_VERSION already cached in $kwok_dir"
    else
        echo "build.sh: building kwok $KWOK_VERSION"
        mkdir -p "$kwok_dir"
        # kwok's go.mod has no replace directives and its release version is compiled in.
        GOBIN="$kwok_dir" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
        "$kwok_dir/kwok" --version
    fi
    if kwok_stages_cached; then
        return 0
    fi
    mkdir -p "$kwok_stages_dir"
    local source_dir stage
    source_dir="$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    for stage in "${KWOK_STAGE_FILES[@]}"; do
        install -m 0644 "$source_dir/kustomize/stage/$stage" "$kwok_stages_dir/$(basename "$stage")"
    done
    echo "build.sh: kwok $KWOK_VERSION stages copied to $kwok_stages_dir"
}

build_promtool() {
    local release
    release="$(promtool_release)"
    if cached "promtool, version $release" "$promtool_dir/promtool"; then
        echo "build.sh: promtool $release already cached in $promtool_dir"
        return 0
    fi
    echo "build.sh: building promtool $release (github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION)"
    mkdir -p "$promtool_dir"
    local version_package=github.com/prometheus/common/version
    GOBIN="$promtool_dir" go install -trimpath \
        -ldflags "-s -w -X $version_package.Version=$release -X $version_package.Branch=release-${release%.*} -X $version_package.BuildUser=npu-ascend" \
        "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION"
    "$promtool_dir/promtool" --version
}

# The Prometheus server, from the same module as promtool (so both share the compiled packages).
# Its web UI's assets are built by npm and not in the module: the server serves the HTTP API,
# which is all the tests use, and answers the UI's pages with an error.
build_prometheus() {
    local release
    release="$(promtool_release)"
    if cached "prometheus, version $release" "$prometheus_dir/prometheus"; then
        echo "build.sh: prometheus $release already cached in $prometheus_dir"
        return 0
    fi
    echo "build.sh: building prometheus $release (github.com/prometheus/prometheus $PROMETHEUS_MODULE_VERSION)"
    mkdir -p "$prometheus_dir"
    local version_package=github.com/prometheus/common/version
    GOBIN="$prometheus_dir" go install -trimpath \
        -ldflags "-s -w -X $version_package.Version=$release -X $version_package.Branch=release-${release%.*} -X $version_package.BuildUser=npu-ascend" \
        "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION"
    "$prometheus_dir/prometheus" --version
}

# node_exporter for the sandbox nodes (static, amd64 like the nodes of the scenarios that run it).
build_node_exporter() {
    if cached "node_exporter, version ${NODE_EXPORTER_VERSION#v}" "$node_exporter_dir/node_exporter"; then
        echo "build.sh: node_exporter $NODE_EXPORTER_VERSION already cached in $node_exporter_dir"
        return 0
    fi
    echo "build.sh: building node_exporter $NODE_EXPORTER_VERSION"
    mkdir -p "$node_exporter_dir"
    local version_package=github.com/prometheus/common/version
    GOBIN="$node_exporter_dir" go install -trimpath \
        -ldflags "-s -w -X $version_package.Version=${NODE_EXPORTER_VERSION#v} -X $version_package.Branch=release-$(echo "${NODE_EXPORTER_VERSION#v}" | cut -d. -f1,2) -X $version_package.BuildUser=npu-ascend" \
        "github.com/prometheus/node_exporter@$NODE_EXPORTER_VERSION"
    "$node_exporter_dir/node_exporter" --version
}

# The distribution registry; its release is stamped as its own release build does, so that
# `registry --version` prints it (a module build would say v3.1.2+unknown).
build_registry() {
    if cached "registry github.com/distribution/distribution/v3 $DISTRIBUTION_VERSION" "$registry_dir/registry"; then
        echo "build.sh: registry $DISTRIBUTION_VERSION already cached in $registry_dir"
        return 0
    fi
    echo "build.sh: building the distribution registry $DISTRIBUTION_VERSION"
    mkdir -p "$registry_dir"
    GOBIN="$registry_dir" go install -trimpath \
        -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$DISTRIBUTION_VERSION" \
        "github.com/distribution/distribution/v3/cmd/registry@$DISTRIBUTION_VERSION"
    "$registry_dir/registry" --version
}

build_etcd
build_kubernetes "$kubernetes_dir" "${KUBERNETES_BINARIES[@]}"
build_kwok
build_promtool
# Real kubelets (molecule/kubelet): a separate output directory, so that the control plane's
# cache stays valid without them.
build_kubernetes "$kubelet_dir" kubelet
build_cni_plugins
build_pause
build_device_plugin_standin
build_prometheus
build_node_exporter
build_registry
