#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]
#
# Starts nginx on 127.0.0.1 (random free port, keepalive_timeout 2s, a 4 MiB /body.bin and a
# /poll stream), runs VARIANT under `strace -o OUT FLAGS...`, stops nginx by its PID.
# Bounded: every client ends within ~4 s (nginx closes idle connections after 2 s) and the
# whole variant is killed after 60 s. Variants (README.md):
#   BAD       py-eof py-timeout py-eof-fork php-feof server-py-eof (nginx traced as well)
#   GOOD      py-length py-close php-length php-close php-wrapper
#   near-miss py-reuse py-poll curl
#   runtimes  go-raw java-raw node-raw (BAD), go-http java-http node-http (GOOD): runtimes/
set -euo pipefail

VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac

for tool in strace nginx python3 php curl; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
[ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] ||
    { echo "run.sh: the nginx echo module is missing (Debian: libnginx-mod-http-echo)" >&2; exit 3; }

DIR="$(mktemp -d /tmp/syslint-lab-keepalive.XXXXXX)"
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

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$DIR/www" "$DIR/tmp"
head -c 4194304 /dev/zero >"$DIR/www/body.bin"
sed -e "s|@DIR@|$DIR|g" -e "s|@PORT@|$PORT|g" "$HERE/nginx.conf.in" >"$DIR/nginx.conf"
cp "$HERE/client.py" "$HERE/client.php" "$DIR/"

if [ "$VARIANT" != "server-py-eof" ]; then
    nginx -p "$DIR" -c "$DIR/nginx.conf" >"$DIR/nginx.out" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 1 50); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
        kill -0 "$NGINX_PID" 2>/dev/null || { cat "$DIR/nginx.out" "$DIR/error.log" >&2 2>/dev/null; exit 1; }
        sleep 0.1
    done
    # the probe connection above is idle now; wait until nginx has dropped it
    sleep 0.2
fi

cd "$DIR"
URL="http://127.0.0.1:$PORT/body.bin"
case "$VARIANT" in
    py-eof) CMD=(python3 ./client.py "$PORT" eof) ;;
    py-timeout) CMD=(python3 ./client.py "$PORT" timeout) ;;
    py-eof-fork) CMD=(python3 ./client.py "$PORT" eof 3) ;;
    php-feof) CMD=(php -n ./client.php "$PORT" feof) ;;
    py-length) CMD=(python3 ./client.py "$PORT" length) ;;
    py-close) CMD=(python3 ./client.py "$PORT" close) ;;
    php-length) CMD=(php -n ./client.php "$PORT" length) ;;
    php-close) CMD=(php -n ./client.php "$PORT" close) ;;
    php-wrapper) CMD=(php -n ./client.php "$PORT" wrapper) ;;
    py-reuse) CMD=(python3 ./client.py "$PORT" reuse) ;;
    py-poll) CMD=(python3 ./client.py "$PORT" poll) ;;
    curl) CMD=(curl -sS -o /dev/null -o /dev/null "$URL" "$URL") ;;
    go-raw|go-http)
        GO="$(command -v go || echo /usr/local/go/bin/go)"
        [ -x "$GO" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
        GOTOOLCHAIN=local GOFLAGS=-trimpath "$GO" build -o get "$HERE/runtimes/get.go"
        CMD=(./get "${VARIANT#go-}" "$PORT") ;;
    java-raw|java-http)
        command -v javac >/dev/null || { echo "run.sh: java/javac are required for $VARIANT" >&2; exit 3; }
        javac -d "$DIR" "$HERE/runtimes/Get.java"
        CMD=(java -Xshare:auto -XX:-UsePerfData -cp "$DIR" Get "${VARIANT#java-}" "$PORT") ;;
    node-raw|node-http)
        command -v node >/dev/null || { echo "run.sh: node is required for $VARIANT" >&2; exit 3; }
        CMD=(node "$HERE/runtimes/get.js" "${VARIANT#node-}" "$PORT") ;;
    # nginx traced too: the client stalls, the server's own idle wait (epoll_wait, then close)
    # must not count; sh starts nginx, waits for it, runs the client, stops nginx by its PID
    server-py-eof)
        CMD=(sh -c '"$3" -p "$1" -c "$1/nginx.conf" & n=$!
            for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
                [ -s "$1/nginx.pid" ] && break; sleep 0.1
            done
            python3 ./client.py "$2" eof; s=$?; kill "$n"; wait "$n"; exit "$s"' sh "$DIR" "$PORT" "$(command -v nginx)") ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
timeout 60 env -i PATH=/usr/bin:/bin "${STRACE:-strace}" -o "$OUT" "$@" "${CMD[@]}" >"$DIR/client.out"
