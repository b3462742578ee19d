#!/usr/bin/env bash
# busy-poll lab: run one variant under strace.
#
#   run.sh VARIANT OUT [STRACE FLAGS...]
#
# REQUESTS=N (the c- variants that wait 200 ms a request: 3 by default) spins longer, for a
# tracer whose stops slow each poll down on a loaded machine.
#
# Variants (README.md has what each does and what syslint reports):
#   c-poll0 c-epoll0 c-select0 c-eagain c-yield    BAD   spin.c spinning while a slow server answers
#   c-timeout                                      GOOD  spin.c waiting with a real timeout
#   c-fewpolls c-epoll                             NEAR  one zero-timeout check per request / blocking epoll
#   php-spin                                       BAD   PHP curl_multi_exec() loop without curl_multi_select()
#   php-select                                     GOOD  the same loop with curl_multi_select()
#   curl-parallel                                  NEAR  curl -Z fetching 200 URLs (50 at once) from
#                                                        python3 -m http.server: zero-timeout polls and
#                                                        rt_sigaction between real sends and receives
# spin.c forks its own server (so its traces are multi-process with -f); the PHP variants fetch
# from slow_server.py on 127.0.0.1 (answers after 0.5 s), started here and not traced.
# Everything is bounded: spin.c calls alarm(10), the server serves one request and exits after
# 15 s at the latest, and is killed by PID on exit.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
variant="$1"
out="$(realpath -m "$2")"
shift 2
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
PYTHON="${PYTHON:-python3}"

for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 3; }
done

WORK="$(mktemp -d /tmp/syslint-lab-busy-poll.XXXXXX)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

case "$variant" in
c-*)
    mode="${variant#c-}"
    case "$mode" in
    poll0 | epoll0 | select0 | eagain | yield | timeout | epoll) requests="${REQUESTS:-3}" delay_ms=200 ;;
    fewpolls) requests=20 delay_ms=20 ;;
    *) echo "run.sh: unknown variant $variant" >&2; exit 2 ;;
    esac
    "$CC" -g -O1 -pthread -Wall -o "$WORK/spin" "$HERE/spin.c"
    cd "$WORK"
    "$STRACE" -o "$out" "$@" ./spin "$mode" "$requests" "$delay_ms"
    ;;
php-*)
    mode="${variant#php-}"
    case "$mode" in
    spin | select) ;;
    *) echo "run.sh: unknown variant $variant" >&2; exit 2 ;;
    esac
    command -v php >/dev/null || { echo "run.sh: php is not installed (php-cli, php-curl)" >&2; exit 3; }
    php -r 'exit(function_exists("curl_multi_init") ? 0 : 1);' ||
        { echo "run.sh: PHP's curl extension is missing (php-curl)" >&2; exit 3; }
    "$PYTHON" "$HERE/slow_server.py" "$WORK/port" 0.5 1 15 &
    server_pid=$!
    for _ in $(seq 100); do
        [ -s "$WORK/port" ] && break
        sleep 0.05
    done
    [ -s "$WORK/port" ] || { echo "run.sh: the slow server did not start" >&2; exit 1; }
    port="$(cat "$WORK/port")"
    cd "$WORK"
    "$STRACE" -o "$out" "$@" php "$HERE/curl_multi.php" "$mode" "http://127.0.0.1:$port/"
    ;;
curl-parallel)
    command -v curl >/dev/null || { echo "run.sh: curl is not installed" >&2; exit 3; }
    mkdir -p "$WORK/www"
    head -c 2000 /dev/zero >"$WORK/www/f.txt"
    port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    timeout 60 "$PYTHON" -m http.server "$port" --bind 127.0.0.1 --directory "$WORK/www" >/dev/null 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
    done
    cd "$WORK"
    "$STRACE" -o "$out" "$@" curl -Z -s -o /dev/null "http://127.0.0.1:$port/f.txt?[1-200]"
    ;;
*)
    echo "run.sh: unknown variant $variant" >&2
    exit 2
    ;;
esac
