#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build lock.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-spin c-mutex c-adaptive
#
# THREADS (default 8: more threads than the 2 cores the traces were recorded on) take the lock
# ITERS times each (default 30) and hold it 500 us each time: the run lasts about
# THREADS*ITERS*0.5 ms (0.12 s) whatever the tracer, and the waiters wait all of it. Bounded:
# lock.c calls alarm(60).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
ITERS="${ITERS:-30}"
THREADS="${THREADS:-8}"
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
case "$VARIANT" in
c-spin|c-mutex|c-adaptive) mode="${VARIANT#c-}" ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
WORK="$(mktemp -d /tmp/syslint-lab-yield-spin.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -pthread -o "$WORK/lock" "$HERE/lock.c"
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" ./lock "$mode" "$THREADS" "$ITERS"
