#!/usr/bin/env bash
# usage: lab/fd-close-sweep/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# How Go, Java and Node start a child, with a soft nofile limit of NOFILE (default 16,384, as
# the C variants): spawn.go (os/exec), Spawn.java (ProcessBuilder), spawn.js
# (child_process.spawnSync), each starting /bin/true 3 times. Builds the Go and Java programs
# first (not traced), runs the variant under `strace -o OUT FLAGS...` with an empty environment.
#   go-exec java-processbuilder node-spawn
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
NOFILE="${NOFILE:-16384}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $VARIANT" >&2; exit 3; }; }
need strace
DIR="$(mktemp -d /tmp/syslint-lab-fdsweep-rt.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
for fdpath in /proc/$$/fd/*; do
    fd="${fdpath##*/}"
    if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done
cd "$DIR"
case "$VARIANT" in
    go-exec)
        go="$(command -v go || echo /usr/local/go/bin/go)"
        [ -x "$go" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
        GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o spawn "$HERE/spawn.go"
        CMD=(./spawn) ;;
    java-processbuilder) need java; need javac; javac -d "$DIR" "$HERE/Spawn.java"; CMD=(java -Xshare:auto -XX:-UsePerfData -cp "$DIR" Spawn) ;;
    node-spawn) need node; CMD=(node "$HERE/spawn.js") ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
ulimit -S -n "$NOFILE"
env -i PATH=/usr/bin:/bin timeout 60 "${STRACE:-strace}" -o "$OUT" "$@" -- "${CMD[@]}" </dev/null >/dev/null
