#!/usr/bin/env bash
# Print the path of a go command that can build a module whose go.mod asks for go VERSION.
#
#   scripts/go.sh 1.26.0
#
# A go of 1.21 or newer gets a newer toolchain itself when a go.mod asks for one
# (GOTOOLCHAIN=auto: from the module proxy, as the module golang.org/toolchain): it is printed
# as it is, and callers run it with GOTOOLCHAIN=auto (Go's own tarball sets `local` in its
# go.env). Debian 12's go is 1.19, which cannot: for it this fetches that module with
# `go mod download` (the same proxy and checksum database) into
# ${SYSLINT_CACHE:-/var/cache/syslint}/go-VERSION once and prints the go in it.
# Used by scripts/otelcol.sh and scripts/helm.sh. Exit status 3: no go, or no toolchain.
set -euo pipefail
want=${1:?usage: scripts/go.sh VERSION (e.g. 1.26.0)}
die() { echo "go.sh: $*" >&2; exit 3; }
go=
for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go/bin/go; do
    [[ -n "$g" && -x "$g" ]] && { go=$g; break; }
done
[[ -n "$go" ]] || die "go not found (scripts/test.sh installs golang-go)"
gover="$("$go" env GOVERSION 2>/dev/null)" || die "$go does not run"
minor="$(sed -E 's/^go1\.([0-9]+).*/\1/' <<<"$gover")"
[[ "$minor" =~ ^[0-9]+$ ]] || die "cannot read the version of $go ($gover)"
if ((minor >= 21)); then
    echo "$go"
    exit 0
fi
cache="$("$(dirname "${BASH_SOURCE[0]}")"/cache-dir.sh)" || die "cannot create a cache directory"
dir="$cache/go-$want"
if [[ ! -x "$dir/bin/go" ]]; then
    mkdir -p "$cache"
    exec 9>"$cache/.go-$want.lock"
    flock 9 || die "cannot lock $cache/.go-$want.lock"
    if [[ ! -x "$dir/bin/go" ]]; then
        os="$("$go" env GOHOSTOS)" arch="$("$go" env GOHOSTARCH)"
        mod="golang.org/toolchain@v0.0.1-go$want.$os-$arch"
        echo "go.sh: $gover predates GOTOOLCHAIN: fetching $mod from the module proxy..." >&2
        tmp="$(mktemp -d "$cache/.go.XXXXXX")"
        trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
        root="$(cd "$tmp" && GOMODCACHE="$tmp/mod" GOFLAGS=-modcacherw GO111MODULE=on \
            "$go" mod download -json "$mod" | sed -nE 's/^\s*"Dir": "(.*)",?$/\1/p')" ||
            die "go mod download $mod failed"
        [[ -n "$root" && -f "$root/bin/go" ]] || die "no Go toolchain in $mod"
        # module zips keep no mode bits: the commands must be made executable again
        chmod +x "$root/bin/"* "$root/pkg/tool/"*/*
        rm -rf "$dir"
        mv "$root" "$dir"
        "$dir/bin/go" env GOVERSION > /dev/null || die "the fetched go$want does not run"
    fi
fi
echo "$dir/bin/go"
