#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, start the
# file server under `strace -o OUT FLAGS...` on 127.0.0.1 (an ephemeral port), fetch the file
# REQUESTS times with an untraced Python client, wait for the server to exit (it stops after
# REQUESTS connections; alarm(120) bounds it otherwise), remove the temp dir.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-readwrite c-sendfile py-sendall py-sendfile near-py-tls near-py-gzip near-c-small
#
# SIZE (default 4 MiB) is the file served, REQUESTS (default 80) the connections; near-c-small
# serves a 4 KiB file, near-py-tls a quarter of REQUESTS (its encrypted payloads do not compress:
# the traces stay small).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
SIZE="${SIZE:-4194304}"
REQUESTS="${REQUESTS:-80}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"
[ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
WORK="$(mktemp -d /tmp/syslint-lab-userspace-copy.XXXXXX)"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK"
[ "$VARIANT" = near-c-small ] && SIZE=4096
# a text file (compressible, for the gzip variant; the same for all)
"$PY" -c 'import sys
n = int(sys.argv[1]); out = bytearray(); i = 0
while len(out) < n:
    out += b"%08d the quick brown fox jumps over the lazy dog, request log line\n" % i; i += 1
open("page.txt", "wb").write(out[:n])' "$SIZE"
client_args=()
case "$VARIANT" in
c-readwrite|c-sendfile|near-c-small)
    need cc
    cc -g -O1 -Wall -o serve "$HERE/serve.c"
    mode=readwrite; [ "$VARIANT" = c-sendfile ] && mode=sendfile
    env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" ./serve "$mode" page.txt "$REQUESTS" port & SERVER=$! ;;
py-sendall|py-sendfile|near-py-gzip)
    mode="${VARIANT#py-}"; mode="${mode#near-py-}"
    env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" "$PY" "$HERE/serve.py" "$mode" page.txt "$REQUESTS" port & SERVER=$! ;;
near-py-tls)
    need openssl
    REQUESTS=$((REQUESTS / 4))
    openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null
    env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" "$PY" "$HERE/serve.py" tls page.txt "$REQUESTS" port cert.pem key.pem & SERVER=$!
    client_args=(tls) ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for _ in $(seq 200); do [ -s port ] && break; sleep 0.05; done
[ -s port ] || { echo "run.sh: the server did not start" >&2; exit 1; }
"$PY" "$HERE/fetch.py" "$(cat port)" "$REQUESTS" "${client_args[@]}"
wait "$SERVER"
SERVER=""
