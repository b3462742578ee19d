#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, run it
# under `strace -o OUT FLAGS...`, remove the temp dir (and stop any server it started, by PID).
# Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   py-config-each py-config-once c-proc-reopen c-proc-pread py-tls-each py-tls-once node-append-each node-append-once near-py-config-reload near-git near-py-hosts-per-request
#
# REQUESTS (default 3000) sets the config requests, SAMPLES (default 5000) the /proc samples,
# TLS_REQUESTS (default 100) the HTTPS requests. Bounded: the programs stop after their
# requests; the TLS server has alarm(120) and is killed by PID at the end.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
REQUESTS="${REQUESTS:-3000}"
SAMPLES="${SAMPLES:-5000}"
TLS_REQUESTS="${TLS_REQUESTS:-100}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"
[ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
WORK="$(mktemp -d /tmp/syslint-lab-reopen-churn.XXXXXX)"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
cd "$WORK"
trace() { env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@"; }
config() {
    printf '{"name": "lab", "listen": "127.0.0.1:8080", "limits": {"max_body": 1048576, "timeout_s": 30},\n "upstreams": [%s]}\n' \
        "$(seq -s, -f '{"host": "10.0.0.%g", "port": 8000, "weight": 1}' 1 40)" > "$WORK/app.json"
}

case "$VARIANT" in
py-config-each|py-config-once)
    config
    trace "$@" "$PY" "$HERE/config.py" "${VARIANT#py-config-}" app.json "$REQUESTS" >/dev/null ;;
near-py-hosts-per-request)
    # /etc/hosts read again per request by glibc, 8 KiB sent per request: the file is reopened,
    # but what goes to the socket is not the file (issue 27: "sent to sockets (a file served
    # per request)" was said of /etc/hosts)
    trace "$@" "$PY" "$HERE/hosts.py" 3000 >/dev/null ;;
near-py-config-reload)
    config
    trace "$@" "$PY" "$HERE/config.py" reload app.json "$REQUESTS" >/dev/null ;;
c-proc-reopen|c-proc-pread)
    need cc
    cc -g -O1 -Wall -o "$WORK/sample" "$HERE/sample.c"
    trace "$@" ./sample "${VARIANT#c-proc-}" "$SAMPLES" >/dev/null ;;
py-tls-each|py-tls-once)
    need openssl
    [ -f /etc/ssl/certs/ca-certificates.crt ] || { echo "run.sh: the CA bundle is missing (ca-certificates)" >&2; exit 3; }
    openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost 2>/dev/null
    "$PY" "$HERE/tls.py" server cert.pem key.pem port &
    SERVER=$!
    for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
    [ -s port ] || { echo "run.sh: the TLS server did not start" >&2; exit 1; }
    trace "$@" "$PY" "$HERE/tls.py" "client-${VARIANT#py-tls-}" cert.pem "$(cat port)" "$TLS_REQUESTS" >/dev/null ;;
node-append-each|node-append-once)
    need node
    trace "$@" node "$HERE/append.js" "${VARIANT#node-append-}" "$WORK/access.log" "$REQUESTS" ;;
near-git)
    # git status and git log in a repository of 300 files and 20 commits: many files, each
    # opened once or a few times
    need git
    mkdir repo && cd repo && git init -q
    for c in $(seq 0 19); do
        for f in $(seq 0 14); do echo "$c $f" > "f$((c * 15 + f)).txt"; done
        git add . && git -c user.name=lab -c user.email=lab@localhost commit -qm "c$c"
    done
    trace "$@" sh -c 'git status --porcelain; git log --stat' >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
