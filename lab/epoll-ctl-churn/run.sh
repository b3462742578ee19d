#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build echo.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-mod c-et c-oneshot c-conn py-sock py-streams
#
# REQUESTS (default 1000) round trips on 127.0.0.1, server and client in one traced program
# (the C client is a forked child). Bounded: echo.c calls alarm(30); the Python program ends
# after REQUESTS round trips.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
REQUESTS="${REQUESTS:-1000}"
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-epoll-ctl-churn.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
case "$VARIANT" in
c-mod|c-et|c-oneshot|c-conn)
    "$CC" -g -O1 -Wall -o "$WORK/echo" "$HERE/echo.c"
    cmd=(./echo "${VARIANT#c-}" "$REQUESTS") ;;
py-sock|py-streams)
    cp "$HERE/aecho.py" "$WORK/"
    cmd=(/usr/bin/python3 -I aecho.py "${VARIANT#py-}" "$REQUESTS") ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
