#!/usr/bin/env bash
# Build (once) helm v3.22.0 from its Go module (the Go module proxy: no github.com download)
# and print the binary's path on stdout. crates/cli/tests/deploy.rs lints and renders the
# chart in deploy/helm/syslint-agent with it. The build is cached in
#   ${SYSLINT_CACHE:-/var/cache/syslint}/helm-v3.22.0/helm
#
# Usage:
#   scripts/helm.sh              print the path of the (built) binary
#   scripts/helm.sh ARGS...      build if needed, then exec helm with ARGS
#                                (e.g. version, lint deploy/helm/syslint-agent)
#
# The Go toolchain: helm v3.22.0's go.mod says `go 1.26.0`; scripts/go.sh finds a go that
# builds it (a go of 1.21 or newer fetches a newer toolchain itself; for Debian 12's 1.19 it
# fetches the toolchain module from the module proxy once).
# The first build took 193 s (2 cores, another build running; Go's module and build caches
# empty: the downloads included); then it is the cached binary's path at once.
#
# Exit status: 3 if helm cannot be built (no go, no proxy, build failure).
set -euo pipefail

version=v3.22.0
toolchain=go1.26.0   # helm v3.22.0's go.mod: go 1.26.0
# as helm's Makefile sets them for a release: its version, and the Kubernetes version its
# client-go is for (v0.37.0: 1.37), which `helm template` reports as the cluster's and
# `helm lint` checks deprecated APIs against (without them, v3.22 and Kubernetes 1.20)
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version -X helm.sh/helm/v3/internal/version.metadata="
for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=37"
done

die() { echo "helm.sh: $*" >&2; exit 3; }

cache="$("$(dirname "${BASH_SOURCE[0]}")"/cache-dir.sh)" || die "cannot create a cache directory"
dir="$cache/helm-$version"
bin="$dir/helm"

# run in a subshell: its EXIT trap removes the build directory $tmp (not a local: the trap
# runs after the function returned)
build() {
    local go gover start
    go="$("$(dirname "${BASH_SOURCE[0]}")/go.sh" "${toolchain#go}")" || die "no go to build helm with (scripts/go.sh)"
    gover="$("$go" env GOVERSION 2>/dev/null)" || die "$go does not run"
    tmp="$(mktemp -d "$dir/.build.XXXXXX")"
    trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
    start=$SECONDS
    echo "helm.sh: building helm $version with $gover into $dir (the first build takes minutes)..." >&2
    if ! (cd "$tmp" && GOBIN="$tmp" GOTOOLCHAIN=auto GOFLAGS= CGO_ENABLED=0 \
            "$go" install -trimpath -ldflags="$ldflags" "helm.sh/helm/v3/cmd/helm@$version") >&2; then
        die "go install helm.sh/helm/v3/cmd/helm@$version failed"
    fi
    [[ -x "$tmp/helm" ]] || die "go install made no helm binary"
    mv -f "$tmp/helm" "$bin"   # atomic: other callers see a complete binary or none
    echo "helm.sh: built $bin in $((SECONDS - start))s" >&2
}

if [[ ! -x "$bin" ]]; then
    mkdir -p "$dir" || die "cannot create $dir"
    # one build at a time: scripts/test.sh's and a test's may ask together; the second waits
    exec 9>"$dir/.lock"
    flock 9 || die "cannot lock $dir/.lock"
    [[ -x "$bin" ]] || (build)
    exec 9>&-
    [[ -x "$bin" ]] || exit 3
fi

if [[ $# -gt 0 ]]; then
    exec "$bin" "$@"
fi
echo "$bin"
