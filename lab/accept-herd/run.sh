#!/usr/bin/env bash
# accept-herd lab: run one server variant under strace while a bounded local load hits it.
#
#   run.sh VARIANT OUT [STRACE FLAGS...]
#
# Variants (README.md has what each does and what syslint reports):
#   c-procs c-threads                       BAD   herd.c: workers share one listener, plain epoll
#   c-procs-exclusive c-threads-exclusive   GOOD  the same with EPOLLEXCLUSIVE
#   c-procs-reuseport                       GOOD  one SO_REUSEPORT listener per worker
#   c-single                                NEAR  one worker, accept until EAGAIN
#   py-shared                               BAD   Python asyncio pre-fork, one shared listener
#   py-reuseport                            GOOD  asyncio create_server(reuse_port=True) per worker
#   nginx                                   GOOD  nginx, 4 workers, accept_mutex off, epoll: nginx
#                                                 registers the listener with EPOLLEXCLUSIVE itself
#   nginx-reuseport                         GOOD  nginx `listen ... reuseport`
#   nginx-mutex                             GOOD  nginx `accept_mutex on`
#   uwsgi                                   BAD   uWSGI (Debian's), 4 pre-forked workers, defaults
#   uwsgi-thunder-lock                      GOOD  the same with --thunder-lock (accept serialised)
#   uwsgi-reuseport                         ?     the same with --reuse-port (README.md says)
# Environment: WORKERS (4), CONNECTIONS (100 sequential connections from load.c, untraced),
# PAUSE_MS (2, between connections). Loopback only; servers are stopped by PID; herd.c and
# herd_asyncio.py exit after 30 s whatever happens, load.c after 60 s.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
variant="$1"
out="$(realpath -m "$2")"
shift 2
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
WORKERS="${WORKERS:-4}"
CONNECTIONS="${CONNECTIONS:-100}"
PAUSE_MS="${PAUSE_MS:-2}"

for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 3; }
done

WORK="$(mktemp -d /tmp/syslint-lab-accept-herd.XXXXXX)"
strace_pid=""
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; fi
    if [ -n "$strace_pid" ]; then
        for _ in $(seq 50); do
            kill -0 "$strace_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill "$strace_pid" 2>/dev/null || true
        wait "$strace_pid" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

"$CC" -g -O1 -Wall -o "$WORK/load" "$HERE/load.c"

# wait_for FILE: until FILE is non-empty (10 s at most)
wait_for() {
    for _ in $(seq 200); do
        [ -s "$1" ] && return 0
        kill -0 "$strace_pid" 2>/dev/null || { echo "run.sh: the server died" >&2; exit 1; }
        sleep 0.05
    done
    echo "run.sh: the server did not start" >&2
    exit 1
}

# the traced server is strace's only child
child_of_strace() {
    ps -o pid= --ppid "$strace_pid" | head -n1 | tr -d ' '
}

cd "$WORK"
case "$variant" in
c-procs | c-procs-exclusive | c-procs-reuseport | c-threads | c-threads-exclusive | c-single)
    "$CC" -g -O1 -pthread -Wall -o "$WORK/herd" "$HERE/herd.c"
    "$STRACE" -o "$out" "$@" ./herd "${variant#c-}" "$WORKERS" "$WORK/port" &
    strace_pid=$!
    wait_for "$WORK/port"
    server_pid="$(child_of_strace)"
    port="$(cat "$WORK/port")"
    ;;
py-shared | py-reuseport)
    # the interpreter itself, not a wrapper script (pyenv shims would be traced too)
    py="$(python3 -c 'import sys; print(sys.executable)')"
    "$STRACE" -o "$out" "$@" "$py" "$HERE/herd_asyncio.py" "${variant#py-}" "$WORKERS" "$WORK/port" &
    strace_pid=$!
    wait_for "$WORK/port"
    server_pid="$(child_of_strace)"
    port="$(cat "$WORK/port")"
    ;;
nginx | nginx-reuseport | nginx-mutex)
    command -v nginx >/dev/null || { echo "run.sh: nginx is not installed" >&2; exit 3; }
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    mutex=off
    reuse=""
    [ "$variant" = nginx-mutex ] && mutex=on
    [ "$variant" = nginx-reuseport ] && reuse=" reuseport"
    mkdir -p "$WORK/logs"
    cat >"$WORK/nginx.conf" <<CONF
worker_processes $WORKERS;
daemon off;
master_process on;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections 256; accept_mutex $mutex; }
http {
    access_log off;
    client_body_temp_path $WORK/cb; proxy_temp_path $WORK/px; fastcgi_temp_path $WORK/fc;
    uwsgi_temp_path $WORK/uw; scgi_temp_path $WORK/sc;
    server {
        listen 127.0.0.1:$port$reuse;
        location / { return 200 "ok\n"; }
    }
}
CONF
    "$STRACE" -o "$out" "$@" nginx -p "$WORK" -c "$WORK/nginx.conf" &
    strace_pid=$!
    wait_for "$WORK/nginx.pid"
    server_pid="$(cat "$WORK/nginx.pid")"
    # the workers start after the pid file is written; the listener already queues connections
    sleep 0.5
    ;;
uwsgi | uwsgi-thunder-lock | uwsgi-reuseport)
    command -v uwsgi >/dev/null || { echo "run.sh: uwsgi is not installed (apt-get install uwsgi-core uwsgi-plugin-python3)" >&2; exit 3; }
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    printf 'def application(env, start_response):\n    start_response("200 OK", [("Content-Type", "text/plain")])\n    return [b"ok\\n"]\n' >"$WORK/app.py"
    extra=()
    [ "$variant" = uwsgi-thunder-lock ] && extra=(--thunder-lock)
    [ "$variant" = uwsgi-reuseport ] && extra=(--reuse-port)
    # --die-on-term: SIGTERM stops uWSGI 2.0 (it would reload); --harakiri-free, bounded by the
    # load; the master is traced with its workers
    "$STRACE" -o "$out" "$@" uwsgi --plugin python3 --master --processes "$WORKERS" --die-on-term \
        --http-socket "127.0.0.1:$port" --wsgi-file "$WORK/app.py" --pidfile "$WORK/uwsgi.pid" \
        --disable-logging "${extra[@]}" >"$WORK/uwsgi.log" 2>&1 &
    strace_pid=$!
    wait_for "$WORK/uwsgi.pid"
    server_pid="$(cat "$WORK/uwsgi.pid")"
    # the workers are forked after the pid file is written; the listener already queues
    sleep 1
    ;;
*)
    echo "run.sh: unknown variant $variant" >&2
    exit 2
    ;;
esac

"$WORK/load" "$port" "$CONNECTIONS" "$PAUSE_MS"
kill -TERM "$server_pid"
server_pid=""
wait "$strace_pid" || true
strace_pid=""
