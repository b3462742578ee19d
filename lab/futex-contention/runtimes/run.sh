#!/usr/bin/env bash
# usage: lab/futex-contention/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Java (issue 17): HotLock.java's 8 threads each apply 300 updates of ~60 us under one lock
# (more threads than the 2 cores: they contend). Compiles HotLock.java in a scratch dir (not
# traced) and runs it under `strace -o OUT FLAGS...` with an empty environment.
#   java-synchronized  one synchronized (LOCK) block (HotSpot object monitor)
#   java-reentrant     one java.util.concurrent.locks.ReentrantLock
#   java-sharded       GOOD: a lock per thread
# Bounded: 8 x 300 updates, `timeout 120`.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
for t in "$STRACE" java javac; do
    command -v "$t" >/dev/null || { echo "run.sh: $t is required" >&2; exit 3; }
done
case "$VARIANT" in
java-synchronized|java-reentrant|java-sharded) MODE="${VARIANT#java-}" ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
WORK="$(mktemp -d /tmp/syslint-lab-futex-java.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
javac -d "$WORK" "$HERE/HotLock.java"
cd "$WORK"
env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" java -Xshare:auto -XX:-UsePerfData -cp "$WORK" HotLock "$MODE" 8 300 >/dev/null
