#!/usr/bin/env bash
# usage: lab/fsync-storm/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# fsync-storm in Go, Java and Node: 300 records of ~33 bytes appended to a log file in a fresh
# /var/tmp directory (a disk file system; removed afterwards), flushed after every record (BAD)
# or once after the batch (GOOD). Builds the Go and Java programs first (not traced).
#   go-each go-batch java-each java-batch node-each node-batch
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
N=300
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $VARIANT" >&2; exit 3; }; }
need strace
DIR="$(mktemp -d /var/tmp/syslint-lab-fsync-rt.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
mode="${VARIANT#*-}"
case "$VARIANT" in
    go-each|go-batch)
        go="$(command -v go || echo /usr/local/go/bin/go)"
        [ -x "$go" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
        GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o records "$HERE/records.go"
        CMD=(./records "$mode" "$N" records.log) ;;
    java-each|java-batch) need java; need javac; javac -d "$DIR" "$HERE/Records.java"; CMD=(java -Xshare:auto -XX:-UsePerfData -cp "$DIR" Records "$mode" "$N" records.log) ;;
    node-each|node-batch) need node; CMD=(node "$HERE/records.js" "$mode" "$N" records.log) ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
env -i PATH=/usr/bin:/bin timeout 120 "${STRACE:-strace}" -o "$OUT" "$@" -- "${CMD[@]}" </dev/null >/dev/null
