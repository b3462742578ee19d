#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build nagle.c in a fresh temp dir, start its server on
# 127.0.0.1 (one connection, alarm(120), killed by PID at the end) or post.py's, and run the
# variant's client under `strace -o OUT FLAGS...` (only the client is traced). Exit status: the
# client's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-two-writes c-nodelay c-writev c-msg-more py-two-sends py-nodelay py-one-send near-slow-server near-http-client
#
# REQUESTS (default 60) sets the requests per run. Loopback only; bounded.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
REQUESTS="${REQUESTS:-60}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"; need cc; need python3
WORK="$(mktemp -d /tmp/syslint-lab-nagle-delay.XXXXXX)"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK"
cc -g -O1 -Wall -o nagle "$HERE/nagle.c"
# start SERVER... and wait for its port file
serve() {
    "$@" &
    SERVER=$!
    for _ in $(seq 100); do [ -s port ] && return 0; kill -0 "$SERVER" 2>/dev/null || break; sleep 0.05; done
    echo "run.sh: the server did not start" >&2; exit 1
}
trace() { env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@"; }

case "$VARIANT" in
c-two-writes|c-nodelay|c-writev|c-msg-more)
    serve ./nagle server port
    trace "$@" ./nagle client "${VARIANT#c-}" "$(cat port)" "$REQUESTS" >/dev/null ;;
py-two-sends|py-nodelay|py-one-send)
    serve ./nagle server port
    trace "$@" python3 "$HERE/client.py" "${VARIANT#py-}" "$(cat port)" "$REQUESTS" >/dev/null ;;
near-slow-server)
    # one write per request; the server takes 40 ms to answer each
    serve ./nagle server port 40
    trace "$@" ./nagle client one-write "$(cat port)" "$REQUESTS" >/dev/null ;;
near-http-client)
    # Python's http.client sends the headers and a file body in two sends, but sets TCP_NODELAY
    serve python3 "$HERE/post.py" server port
    trace "$@" python3 "$HERE/post.py" client file-body "$(cat port)" "$REQUESTS" >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
wait "$SERVER" 2>/dev/null || true
SERVER=""
