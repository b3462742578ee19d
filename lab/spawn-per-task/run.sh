#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: prepare VARIANT's input in a fresh temp dir, run it under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   sh-date-each sh-date-once sh-helper-forks py-sha-each py-sha-once near-make near-sh-date-few
#
# ITEMS (default 300) sets the lines or files. Bounded: every program stops after its items.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
ITEMS="${ITEMS:-300}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"
WORK="$(mktemp -d /tmp/syslint-lab-spawn.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
trace() { env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@"; }

case "$VARIANT" in
sh-date-each|sh-date-once)
    seq 1700000000 86400 $((1700000000 + 86400 * (ITEMS - 1))) > ts.txt
    trace "$@" bash "$HERE/stamps.sh" "${VARIANT#sh-date-}" ts.txt >/dev/null ;;
sh-helper-forks)
    # a helper per line that forks a child of its own (no exec): still a task per line; half
    # the items (two processes a line under strace are slow)
    seq 1700000000 86400 $((1700000000 + 86400 * (ITEMS / 2 - 1))) > ts.txt
    trace "$@" bash "$HERE/stamps.sh" helper ts.txt >/dev/null ;;
near-sh-date-few)
    # the same loop over 40 lines: a script that runs a helper a few dozen times
    seq 1700000000 86400 $((1700000000 + 86400 * 39)) > ts.txt
    trace "$@" bash "$HERE/stamps.sh" each ts.txt >/dev/null ;;
py-sha-each|py-sha-once)
    [ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
    mkdir files
    for i in $(seq 1 "$ITEMS"); do echo "item $i" > "files/f$i.txt"; done
    trace "$@" "$PY" "$HERE/digest.py" "${VARIANT#py-sha-}" files >/dev/null ;;
near-make)
    need make; need cc
    cp "$HERE/Makefile.lab" Makefile
    printf '#define VERSION "@VERSION@"\n' > template.h.in
    printf '#include "gen.h"\nint a(void) { return 1; }\n' > a.c
    printf '#include "gen.h"\nint b(void) { return 2; }\n' > b.c
    printf '#include <stdio.h>\n#include "gen.h"\nint a(void); int b(void);\nint main(void) { printf("%%s %%d\\n", VERSION, a() + b()); return 0; }\n' > main.c
    trace "$@" make -s >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
