#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build timer.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-select20 c-wait20 c-block c-pidfd c-tick100 c-server20 py-wait
#
# The awaited event comes after DELAY_MS (default 2000). Bounded: timer.c calls alarm(30); the
# Python variant waits at most 60 s for a child that sleeps DELAY_MS.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
DELAY_MS="${DELAY_MS:-2000}"
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-timer-polling.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
case "$VARIANT" in
c-select20|c-wait20|c-block|c-pidfd|c-tick100|c-server20)
    "$CC" -g -O1 -Wall -o "$WORK/timer" "$HERE/timer.c"
    cmd=(./timer "${VARIANT#c-}" "$DELAY_MS") ;;
py-wait)
    cp "$HERE/pywait.py" "$WORK/"
    cmd=(/usr/bin/python3 -I pywait.py "$(awk "BEGIN { print $DELAY_MS / 1000 }")") ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
