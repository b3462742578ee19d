#!/usr/bin/env bash
# Build (once) the minimal OpenTelemetry Collector in tools/otelcol and print
# the binary's path on stdout. The build is cached in
#   ${SYSLINT_CACHE:-/var/cache/syslint}/otelcol-<hash>/otelcol
# keyed by a hash of tools/otelcol/{go.mod,go.sum,main.go}.
#
# Usage:
#   scripts/otelcol.sh              print the path of the (built) binary
#   scripts/otelcol.sh ARGS...      build if needed, then exec the binary with ARGS
#                                   (e.g. --version, --config=/tmp/otelcol.yaml)
#
# Exit status: 3 if the collector cannot be built (no go, build failure).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/tools/otelcol"

die() { echo "otelcol.sh: $*" >&2; exit 3; }

for f in go.mod go.sum main.go; do
    [[ -f "$src/$f" ]] || die "missing $src/$f"
done

hash="$(cd "$src" && cat go.mod go.sum main.go | sha256sum | cut -c1-16)"

cache="$("$(dirname "${BASH_SOURCE[0]}")"/cache-dir.sh)" || die "cannot create a cache directory"
dir="$cache/otelcol-$hash"
bin="$dir/otelcol"

if [[ ! -x "$bin" ]]; then
    # a go that builds a module asking for the go version in go.mod (Debian 12's is 1.19)
    want="$(sed -nE 's/^go ([0-9.]+)$/\1/p' "$src/go.mod")"
    go="$("$root/scripts/go.sh" "$want")" || die "no go to build the OpenTelemetry Collector with (scripts/go.sh)"
    mkdir -p "$dir" || die "cannot create $dir"
    tmp="$(mktemp "$dir/.otelcol.XXXXXX")"
    trap 'rm -f "$tmp"' EXIT
    echo "otelcol.sh: building collector ($("$go" env GOVERSION)) into $dir (first run takes a few minutes)..." >&2
    start=$SECONDS
    if ! (cd "$src" && GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=auto \
            "$go" build -trimpath -ldflags='-s -w' -o "$tmp" .) >&2; then
        die "go build failed in $src"
    fi
    chmod 0755 "$tmp"
    mv -f "$tmp" "$bin"   # atomic: concurrent callers see a complete binary or none
    trap - EXIT
    echo "otelcol.sh: built $bin in $((SECONDS - start))s" >&2
fi

if [[ $# -gt 0 ]]; then
    exec "$bin" "$@"
fi
echo "$bin"
