#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build mask.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-wrap c-once c-critical c-jmp
#
#  c-wrap      BAD: 2000 small writes to /dev/null, each between rt_sigprocmask(SIG_BLOCK, all)
#		and rt_sigprocmask(SIG_SETMASK, old) (a wrapper protecting each call)
#  c-once      GOOD: the same writes with the signals blocked once before them, restored after
#  c-critical  NEAR: 3000 writes, every 10th inside a block/restore critical section (300 sections)
#  c-jmp       BAD through glibc: 2000 writes each entered through sigsetjmp(env, 1), which saves
#		the signal mask with rt_sigprocmask every time
# Bounded: mask.c calls alarm(60); strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
case "$VARIANT" in
c-wrap) cmd=(./mask wrap 2000) ;;
c-once) cmd=(./mask once 2000) ;;
c-critical) cmd=(./mask critical 3000 10) ;;
c-jmp) cmd=(./mask jmp 2000) ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-sigmask-storm.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/mask" "$HERE/mask.c"
cd "$WORK"
env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
