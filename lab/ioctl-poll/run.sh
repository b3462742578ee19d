#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build poller.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-eof c-sleep c-tcgets c-poll c-tty-start py-eof
#
#  eof        BAD: 6 pipes at EOF, 300 rounds of poll (at once) + per fd FIONREAD -> 0 + read -> 0
#  sleep      BAD: an idle pty asked FIONREAD every millisecond, 1,000 times
#  tcgets     BAD: an idle pty's mode read with tcgetattr (TCGETS) every millisecond, 1,000 times
#  poll       GOOD: the pipes' EOF taken as EOF (closed, dropped), then poll(100 ms) on the pty
#  tty-start  NEAR: an interactive program's start: TCGETS, TCSETS (raw), TIOCGWINSZ, 3 waits
# py-eof: poller.py, c-eof's loop in CPython (select, fcntl.ioctl FIONREAD, os.read), 300 rounds
# Bounded: poller.c calls alarm(60); strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
case "$VARIANT" in
c-eof) cmd=(./poller eof 300) ;;
c-sleep) cmd=(./poller sleep 1000) ;;
c-tcgets) cmd=(./poller tcgets 1000) ;;
c-poll) cmd=(./poller poll 300) ;;
c-tty-start) cmd=(./poller tty-start 1) ;;
py-eof) cmd=(/usr/bin/python3 "$HERE/poller.py" 300) ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-ioctl-poll.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/poller" "$HERE/poller.c" -lutil
cd "$WORK"
env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
