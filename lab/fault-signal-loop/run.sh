#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build fault.c (and recover.go for go-recover) in a fresh
# temp dir, run VARIANT under `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the
# tracee's (c-reset ends with SIGSEGV by design: 139 is its expected end).
#
# Variants (README.md says what each shows and what syslint reports):
#   c-pipe-loop c-bare-loop c-recover go-recover c-guard c-reset c-timer
#
#  pipe-loop  BAD: a libuv-style SIGSEGV handler (pipe lock, report to a full pipe) returns to
#  the faulting load: 2,000 passes (npm#13833)
#  bare-loop  BAD: the same with a handler making no call
#  recover    BAD: 2,000 null loads each caught and left with siglongjmp (fault as exception)
#  go-recover BAD, a real runtime: Go recovering 2,000 nil dereferences (runtime's handler)
#  guard      GOOD: 2,000 faults on 2,000 pages, each made readable with mprotect
#  reset      GOOD, the fix: SA_RESETHAND, reported once; the second fault ends the program
#  timer      NEAR: 1 s of CPU under a 1 ms ITIMER_PROF (SIGPROF and rt_sigreturn, no fault)
# Bounded: fault.c calls alarm(60); every loop has a count; strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
case "$VARIANT" in
c-pipe-loop) cmd=(./fault pipe-loop 2000) ;;
c-bare-loop) cmd=(./fault bare-loop 2000) ;;
c-recover) cmd=(./fault recover 2000) ;;
go-recover) cmd=(./recover 2000) ;;
c-guard) cmd=(./fault guard 2000) ;;
c-reset) cmd=(./fault reset 1) ;;
c-timer) cmd=(./fault timer 1000) ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
tools=("$STRACE" "$CC")
[ "$VARIANT" = go-recover ] && tools+=(go)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-fault-signal-loop.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/fault" "$HERE/fault.c"
if [ "$VARIANT" = go-recover ]; then
    cp "$HERE/recover.go" "$WORK/"
    (cd "$WORK" && GOFLAGS= GO111MODULE=off go build -o recover recover.go)
fi
cd "$WORK"
if [ "$VARIANT" = c-reset ]; then
    env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}" 2>/dev/null || [ $? = 139 ]
else
    env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}" >/dev/null
fi
