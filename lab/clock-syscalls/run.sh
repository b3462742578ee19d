#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build clock.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-syscall c-vdso c-few py-cputime
#
# ITEMS (default 3000) items, each timestamped twice. Bounded: clock.c calls alarm(60); the
# Python loop ends after ITEMS items.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
ITEMS="${ITEMS:-3000}"
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-clock-syscalls.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
case "$VARIANT" in
c-syscall|c-vdso|c-few)
    "$CC" -g -O1 -Wall -o "$WORK/clock" "$HERE/clock.c"
    cmd=(./clock "${VARIANT#c-}" "$ITEMS") ;;
py-cputime)
    cp "$HERE/cputime.py" "$WORK/"
    cmd=(/usr/bin/python3 -I cputime.py "$ITEMS") ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
