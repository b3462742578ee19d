#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, find a TCP
# port on 127.0.0.1 where nothing listens, run the client under `strace -o OUT FLAGS...`
# against it, remove the temp dir. Exit status: 0 (the clients fail by design: nothing listens).
#
# Variants (README.md says what each shows and what syslint reports):
#   c-now c-nonblock c-backoff py-loop py-urllib3 py-urllib3-backoff near-c-few near-nscd-probes
#
# ATTEMPTS (default 600) bounds the BAD clients' attempts; the GOOD ones stop after SECONDS_MAX
# (default 2) seconds or 10 retries. Only loopback, and nothing is started: nothing to stop.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
ATTEMPTS="${ATTEMPTS:-600}"
export SECONDS_MAX="${SECONDS_MAX:-2}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"
[ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
WORK="$(mktemp -d /tmp/syslint-lab-retry-storm.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# a port the kernel just handed out and took back: nothing listens on it
PORT="$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
trace() { env -i PATH=/usr/bin:/bin SECONDS_MAX="$SECONDS_MAX" "$STRACE" -o "$OUT" "$@" || true; }
case "$VARIANT" in
c-now|c-nonblock|c-backoff|near-c-few)
    need cc
    cc -g -O1 -Wall -o "$WORK/client" "$HERE/client.c"
    case "$VARIANT" in
        c-now) trace "$@" ./client now "$PORT" "$ATTEMPTS" ;;
        c-nonblock) trace "$@" ./client nonblock "$PORT" "$ATTEMPTS" ;;
        c-backoff) trace "$@" ./client backoff "$PORT" "$ATTEMPTS" ;;
        near-c-few) trace "$@" ./client few "$PORT" 8 ;;
    esac 2>/dev/null ;;
py-loop)
    trace "$@" "$PY" "$HERE/retry.py" loop "$PORT" "$ATTEMPTS" ;;
py-urllib3)
    "$PY" -c 'import urllib3' 2>/dev/null || { echo "run.sh: python3-urllib3 is missing" >&2; exit 3; }
    trace "$@" "$PY" "$HERE/retry.py" urllib3 "$PORT" "$ATTEMPTS" 2>/dev/null ;;
py-urllib3-backoff)
    "$PY" -c 'import urllib3' 2>/dev/null || { echo "run.sh: python3-urllib3 is missing" >&2; exit 3; }
    trace "$@" "$PY" "$HERE/retry.py" urllib3-backoff "$PORT" 10 2>/dev/null ;;
near-nscd-probes)
    # 40 runs of id(1): each glibc lookup first asks nscd's socket (absent: ENOENT), once, and
    # falls back to the files; 160 failed connects over 40 processes, none retrying itself
    # (issue 27: 200 exim4 runs were called a retry storm). The recording shows the ENOENTs
    # (recorded where nscd does not run)
    need id
    trace "$@" sh -c 'i=0; while [ $i -lt 40 ]; do id root >/dev/null; i=$((i+1)); done' ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
