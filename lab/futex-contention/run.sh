#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build hot.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-global c-sharded c-pool go-idle
#
# THREADS (default 8) do ITERS updates each (default 300); an update holds its lock for about
# 60 us (10 us of arithmetic and a 50 us wait), so c-global lasts about THREADS*ITERS*60 us
# (0.15 s natively) and the waiters wait most of it. c-pool posts ITERS/6 tasks (50), one every
# 20 ms, to THREADS idle workers (1 s). go-idle (idle.go) is Go's runtime doing the same: 8
# goroutines wait on a channel for 50 jobs sent every 20 ms. Bounded: hot.c calls alarm(60),
# idle.go ends after its 50 jobs (run under `timeout 60`).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
ITERS="${ITERS:-300}"
THREADS="${THREADS:-8}"
GO="${GO:-go}"
case "$VARIANT" in
c-global|c-sharded|c-pool) mode="${VARIANT#c-}"; tools=("$STRACE" "$CC") ;;
go-idle) tools=("$STRACE" "$GO") ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-futex-contention.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
if [ "$VARIANT" = go-idle ]; then
    (cd "$WORK" && cp "$HERE/idle.go" . && GO111MODULE=off "$GO" build -o idle idle.go)
    cd "$WORK"
    env -i PATH=/usr/bin:/bin timeout 60 "$STRACE" -o "$OUT" "$@" ./idle
    exit
fi
"$CC" -g -O1 -Wall -pthread -o "$WORK/hot" "$HERE/hot.c"
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" ./hot "$mode" "$THREADS" "$ITERS"
