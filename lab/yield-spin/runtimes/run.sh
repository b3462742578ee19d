#!/usr/bin/env bash
# usage: lab/yield-spin/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Go (issue 17): spin.go's goroutines spinning on a CAS lock with runtime.Gosched() after each
# failed try (64 goroutines, 1,000 critical sections each), with GOMAXPROCS far above the
# cores or equal to them, and the same goroutines on a sync.Mutex. Builds spin.go in a scratch
# dir (not traced), runs it under `strace -o OUT FLAGS...` with an empty environment.
#   go-gosched-p64  GOMAXPROCS=64 on 2 cores: runtime.Gosched() spin lock
#   go-gosched-p2   GOMAXPROCS=2 (= the cores): the same program
#   go-mutex-p64    GOMAXPROCS=64, sync.Mutex
# Bounded: 64 x 1,000 critical sections, `timeout 120`.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
GO="$(command -v go || echo /usr/local/go/bin/go)"
[ -x "$GO" ] || { echo "run.sh: go is required" >&2; exit 3; }
command -v "$STRACE" >/dev/null || { echo "run.sh: strace is required" >&2; exit 3; }
case "$VARIANT" in
go-gosched-p64) P=64 MODE=spinlock ;;
go-gosched-p2) P=2 MODE=spinlock ;;
go-mutex-p64) P=64 MODE=mutex ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
WORK="$(mktemp -d /tmp/syslint-lab-yield-spin-go.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && GOTOOLCHAIN=local GOFLAGS=-trimpath "$GO" build -o spin "$HERE/spin.go")
cd "$WORK"
env -i PATH=/usr/bin:/bin GOMAXPROCS="$P" timeout 120 "$STRACE" -o "$OUT" "$@" ./spin "$MODE" 64 1000 >/dev/null
