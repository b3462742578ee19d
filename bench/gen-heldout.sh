#!/usr/bin/env bash
# A second benchmark log, from a workload unlike bench/workload.sh's and unlike anything
# scripts/build-dist.sh trains on: Python byte-compiling a copy of its packages four times,
# git over this repository (status, log -p, grep), ls -laR. For checking that the profile-
# guided build's gain holds on logs it never saw (bench/RESULTS.md).
# Usage: bench/gen-heldout.sh [OUT]   (default bench/data/heldout.strace, ~90 MB, ~20 s)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
OUT=${1:-$HERE/data/heldout.strace}
mkdir -p "$(dirname "$OUT")"
for t in strace python3 git; do
    command -v "$t" >/dev/null || { echo "missing tool: $t" >&2; exit 1; }
done
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
PKGS=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ -d /usr/lib/python3/dist-packages ] && PKGS=/usr/lib/python3/dist-packages
cp -r "$PKGS" "$SRC/"
timeout 600 strace -f -tt -T -yy -s 128 -o "$OUT" sh -c '
    for i in 1 2 3 4; do python3 -m compileall -f -q -j 0 "$1" > /dev/null 2>&1; done
    cd "$2"
    git status > /dev/null; git log -p -n 2000 > /dev/null; git grep -c fn > /dev/null
    ls -laR /usr/share/doc > /dev/null
    for i in 1 2 3; do git status > /dev/null; done' sh "$SRC" "$ROOT"
echo "wrote $OUT: $(stat -c %s "$OUT") bytes, $(wc -l < "$OUT") lines" >&2
