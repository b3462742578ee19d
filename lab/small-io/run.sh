#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]
#
# Builds copy.c, creates the input files in a scratch dir under /tmp (sparse, removed
# afterwards), starts nginx on 127.0.0.1 for the HTTP variants (random free port, stopped by
# its PID), and runs VARIANT under `strace -o OUT FLAGS...`. Bounded: every variant moves at
# most 200 MiB and is killed after 120 s. Variants (README.md):
#   BAD       c-4k php-file php-http py-oswrite py-logging py-oswrite-fork
#   GOOD      c-1m php-file-big php-http-big py-buffered
#   near-miss cat-small cp-small dd-1m py-sock py-sock-trickle py-tty (info only)
#             nginx-keepalive (nginx itself traced, answering 1,500 small requests)
#             gunicorn-responses (gunicorn's one sync worker traced, 1,500 responses of 2 writes)
set -euo pipefail

VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

for tool in strace cc nginx python3 php; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done

DIR="$(mktemp -d /tmp/syslint-lab-smallio.XXXXXX)"
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$DIR"
}
trap cleanup EXIT

# close fds inherited from the caller (test harness, make jobserver) so traces start at fd 3
for fdpath in /proc/$$/fd/*; do
    fd="${fdpath##*/}"
    if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then
        eval "exec $fd>&-" 2>/dev/null || true
    fi
done
exec </dev/null

cc -g -O1 -Wall -o "$DIR/copy" "$HERE/copy.c"
cp "$HERE/log.py" "$HERE/read.php" "$HERE/sock.py" "$HERE/trickle.py" "$DIR/"
mkdir -p "$DIR/www" "$DIR/tmp"
truncate -s 100M "$DIR/www/big.bin"
truncate -s 200M "$DIR/www/huge.bin"
head -c 65536 /dev/zero >"$DIR/small.bin"

start_nginx() {
    PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    sed -e "s|@DIR@|$DIR|g" -e "s|@PORT@|$PORT|g" "$HERE/nginx.conf.in" >"$DIR/nginx.conf"
    nginx -p "$DIR" -c "$DIR/nginx.conf" >"$DIR/nginx.out" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 1 50); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then return; fi
        kill -0 "$NGINX_PID" 2>/dev/null || break
        sleep 0.1
    done
    cat "$DIR/nginx.out" "$DIR/error.log" >&2 2>/dev/null || true
    echo "run.sh: nginx did not start" >&2
    exit 1
}

# a slow one-connection server (trickle.py), for the socket near-miss
start_trickle() {
    python3 ./trickle.py "$DIR/trickle.port" &
    NGINX_PID=$!
    for _ in $(seq 1 50); do
        [ -s "$DIR/trickle.port" ] && { PORT="$(cat "$DIR/trickle.port")"; return; }
        sleep 0.1
    done
    echo "run.sh: trickle.py did not start" >&2
    exit 1
}

cd "$DIR"
case "$VARIANT" in
    c-4k) CMD=(./copy 4096 www/big.bin out.bin) ;;
    c-1m) CMD=(./copy 1048576 www/big.bin out.bin) ;;
    php-file) CMD=(php -n ./read.php www/huge.bin small) ;;
    php-file-big) CMD=(php -n ./read.php www/huge.bin big) ;;
    php-http) start_nginx; CMD=(php -n ./read.php "http://127.0.0.1:$PORT/huge.bin" small) ;;
    php-http-big) start_nginx; CMD=(php -n ./read.php "http://127.0.0.1:$PORT/big.bin" big) ;;
    py-oswrite) CMD=(python3 ./log.py oswrite 30000 app.log) ;;
    py-logging) CMD=(python3 ./log.py logging 30000 app.log) ;;
    py-oswrite-fork) CMD=(python3 ./log.py oswrite 25000 app.log 2) ;;
    py-buffered) CMD=(python3 ./log.py buffered 30000 app.log) ;;
    cat-small) CMD=(cat small.bin) ;;
    cp-small) CMD=(cp small.bin copy.bin) ;;
    dd-1m) CMD=(dd if=www/big.bin of=out.bin bs=1M) ;;
    py-sock) start_nginx; CMD=(python3 ./sock.py "$PORT" /big.bin 262144) ;;
    py-tty) CMD=() ;;
    py-sock-trickle) start_trickle; CMD=(python3 ./sock.py "$PORT" /slow 262144) ;;
    nginx-keepalive) CMD=() ;;
    gunicorn-responses) CMD=() ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
if [ "$VARIANT" = "nginx-keepalive" ]; then
    # the server side of request/response: nginx traced, curl sends 1,500 small requests on one
    # keep-alive connection; each recv(.., 1024) gets the whole request (~90 bytes)
    head -c 100 /dev/zero >"$DIR/www/small.txt"
    PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    sed -e "s|@DIR@|$DIR|g" -e "s|@PORT@|$PORT|g" "$HERE/nginx.conf.in" >"$DIR/nginx.conf"
    "${STRACE:-strace}" -o "$OUT" "$@" nginx -p "$DIR" -c "$DIR/nginx.conf" >"$DIR/nginx.out" 2>&1 &
    STRACE_PID=$!
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
        sleep 0.1
    done
    timeout 120 curl -s -o /dev/null "http://127.0.0.1:$PORT/small.txt?[1-1500]" || true
    kill "$(cat "$DIR/nginx.pid")"
    wait "$STRACE_PID" || true
    exit 0
fi
if [ "$VARIANT" = "gunicorn-responses" ]; then
    # gunicorn (Debian's, one sync worker) traced, curl sends 1,500 requests; the worker answers
    # each with two writes (headers, then the 4 KiB body) and closes the connection
    command -v gunicorn >/dev/null || { echo "run.sh: gunicorn is not installed" >&2; exit 3; }
    head -c 4096 /dev/zero >"$DIR/www/page.bin"
    cat >"$DIR/wsgi_app.py" <<'PY'
import os
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "www", "page.bin")
def app(environ, start_response):
    with open(PAGE, "rb") as f:
        body = f.read()
    start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(body)))])
    return [body]
PY
    PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "${STRACE:-strace}" -o "$OUT" "$@" gunicorn --chdir "$DIR" -w 1 -b "127.0.0.1:$PORT" --pid "$DIR/gunicorn.pid" wsgi_app:app \
        >"$DIR/gunicorn.out" 2>&1 &
    STRACE_PID=$!
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
        sleep 0.1
    done
    timeout 120 curl -s -o /dev/null "http://127.0.0.1:$PORT/?[1-1500]" || true
    kill "$(cat "$DIR/gunicorn.pid")" 2>/dev/null || true
    wait "$STRACE_PID" || true
    exit 0
fi
if [ "$VARIANT" = "py-tty" ]; then
    # 25,000 lines written one by one to a terminal: script(1) gives the program a pty
    command -v script >/dev/null || { echo "run.sh: script (bsdutils) is not installed" >&2; exit 3; }
    quoted="$(printf '%q ' "${STRACE:-strace}" -o "$OUT" "$@" python3 ./log.py oswrite 25000 /dev/tty)"
    timeout 120 env -i PATH=/usr/bin:/bin script -qec "$quoted" /dev/null >"$DIR/client.out" 2>"$DIR/client.err" ||
        { cat "$DIR/client.err" >&2; exit 1; }
    exit 0
fi
timeout 120 env -i PATH=/usr/bin:/bin "${STRACE:-strace}" -o "$OUT" "$@" "${CMD[@]}" >"$DIR/client.out" 2>"$DIR/client.err" ||
    { cat "$DIR/client.err" >&2; exit 1; }
