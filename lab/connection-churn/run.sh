#!/usr/bin/env bash
# usage: lab/connection-churn/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Starts a local HTTP/1.1 keep-alive server (server.py, plain or TLS with a self-signed
# certificate made by openssl now) on 127.0.0.1, then runs the client VARIANT under
# `strace -o OUT FLAGS...` (only the client is traced). Loopback only; every loop is bounded;
# the server is stopped by PID on exit. Variants: see README.md.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
variant="$1"; out="$2"; shift 2
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $variant (scripts/test.sh installs it)" >&2; exit 3; }; }
need strace; need python3

work="$(mktemp -d /tmp/syslint-lab-churn.XXXXXX)"
srv=""
cleanup() {
    if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# start_server [server.py args...]: waits until it listens; sets $port
start_server() {
    python3 "$HERE/server.py" "$work/port" --max-seconds 120 "$@" &
    srv=$!
    for _ in $(seq 100); do
        [ -s "$work/port" ] && break
        kill -0 "$srv" 2>/dev/null || { echo "run.sh: server died" >&2; exit 1; }
        sleep 0.1
    done
    [ -s "$work/port" ] || { echo "run.sh: server did not start" >&2; exit 1; }
    port="$(head -n1 "$work/port" | cut -d' ' -f2)"
}

tls() {
    need openssl
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
    start_server --tls "$work/cert.pem" "$work/key.pem"
}

# the traced program runs with a clean environment, from the scratch dir
trace() { (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" strace -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null); }
FLAGS=("$@")

client="$HERE/client.py"
php_client="$HERE/fetch.php"
case "$variant" in
    py-new-conn)        start_server; trace python3 "$client" new-conn 40 "127.0.0.1:$port" ;;
    py-keepalive)       start_server; trace python3 "$client" keepalive 40 "127.0.0.1:$port" ;;
    py-two-conns)       start_server; trace python3 "$client" two-conns 40 "127.0.0.1:$port" ;;
    py-few-hosts)
        start_server --addr 127.0.0.1 --addr 127.0.0.2 --addr 127.0.0.3 --addr 127.0.0.4 --addr 127.0.0.5
        eps=(); while read -r a p; do eps+=("$a:$p"); done < "$work/port"
        trace python3 "$client" few-hosts 5 "${eps[@]}" ;;
    py-pool)            start_server; trace python3 "$client" pool 12 "127.0.0.1:$port" ;;
    py-tls-new-conn)    tls; trace python3 "$client" new-conn 30 "127.0.0.1:$port" --tls "$work/cert.pem" ;;
    py-tls-keepalive)   tls; trace python3 "$client" keepalive 30 "127.0.0.1:$port" --tls "$work/cert.pem" ;;
    curl-per-url)
        need curl; tls
        trace sh -c 'i=0; while [ $i -lt 20 ]; do curl -sS --cacert "$1" -o /dev/null "$2/feed/$i"; i=$((i+1)); done' \
            sh "$work/cert.pem" "https://127.0.0.1:$port" ;;
    curl-one-invocation)
        need curl; tls
        urls=(); for i in $(seq 0 19); do urls+=(-o /dev/null "https://127.0.0.1:$port/feed/$i"); done
        trace curl -sS --cacert "$work/cert.pem" "${urls[@]}" ;;
    php-tls-fresh)      need php; tls; trace php "$php_client" fresh 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    php-tls-reuse)      need php; tls; trace php "$php_client" reuse 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    php-tls-share)      need php; tls; trace php "$php_client" share 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    *) echo "run.sh: unknown variant $variant (see README.md)" >&2; exit 2 ;;
esac
