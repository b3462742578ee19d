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

# nginx with TLS and HTTP/2 on a free 127.0.0.1 port (single process, foreground); sets $port
start_nginx() {
    local ngx; ngx="$(command -v nginx || echo /usr/sbin/nginx)"
    [ -x "$ngx" ] || { echo "run.sh: nginx is required for $variant (scripts/test.sh installs it)" >&2; exit 3; }
    need openssl
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1
    mkdir -p "$work/ngx/tmp"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    cat > "$work/ngx/nginx.conf" <<NGX
daemon off;
master_process off;
worker_processes 1;
pid $work/ngx/nginx.pid;
error_log $work/ngx/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $work/ngx/tmp;
    proxy_temp_path $work/ngx/tmp;
    fastcgi_temp_path $work/ngx/tmp;
    uwsgi_temp_path $work/ngx/tmp;
    scgi_temp_path $work/ngx/tmp;
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        location / { return 200 "<feed>lab</feed>\n"; }
    }
}
NGX
    "$ngx" -p "$work/ngx" -c "$work/ngx/nginx.conf" -e "$work/ngx/error.log" &
    srv=$!
    for _ in $(seq 100); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2).close()" 2>/dev/null && return 0
        kill -0 "$srv" 2>/dev/null || { echo "run.sh: nginx died: $(cat "$work/ngx/error.log")" >&2; exit 1; }
        sleep 0.1
    done
    echo "run.sh: nginx did not start" >&2; exit 1
}

# trace_server PROGRAM...: a server under strace in the background (clean environment, from
# the scratch dir); sets $srv to strace's pid. stop_server ends it by signalling strace's child.
trace_server() {
    (cd "$work" && exec env -i PATH=/usr/bin:/bin HOME="$work" "${STRACE:-strace}" -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null) &
    srv=$!
}
stop_server() {
    local sig="$1" child size=-1
    # let the traced server finish what the client left it (the last close, read after the
    # client's last answer): on a loaded machine the signal could otherwise come first.
    # Settled when the trace stops growing for 0.2 s; 5 s at most.
    for _ in $(seq 25); do
        [ "$(stat -c %s "$out" 2>/dev/null || echo 0)" = "$size" ] && break
        size="$(stat -c %s "$out" 2>/dev/null || echo 0)"
        sleep 0.2
    done
    child="$(pgrep -P "$srv" | head -n1 || true)"
    [ -n "$child" ] && kill "-$sig" "$child" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    srv=""
}
wait_port() {
    for _ in $(seq 150); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 0.2).close()" 2>/dev/null && return 0
        kill -0 "$srv" 2>/dev/null || { echo "run.sh: the traced server died" >&2; exit 1; }
        sleep 0.1
    done
    echo "run.sh: the traced server did not start" >&2; exit 1
}
# srv_py [server.py args]: server.py traced; sets $port
srv_py() {
    trace_server python3 "$HERE/server.py" "$work/port" --max-seconds 120 "$@"
    for _ in $(seq 150); do [ -s "$work/port" ] && break; sleep 0.1; done
    [ -s "$work/port" ] || { echo "run.sh: server did not start" >&2; exit 1; }
    port="$(head -n1 "$work/port" | cut -d' ' -f2)"
}
# srv_nginx KEEPALIVE_TIMEOUT: nginx (plain HTTP, one process) traced; sets $port
srv_nginx() {
    local ngx; ngx="$(command -v nginx || echo /usr/sbin/nginx)"
    [ -x "$ngx" ] || { echo "run.sh: nginx is required for $variant (scripts/test.sh installs it)" >&2; exit 3; }
    mkdir -p "$work/ngx/tmp"
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    cat > "$work/ngx/nginx.conf" <<NGX
daemon off;
master_process off;
worker_processes 1;
pid $work/ngx/nginx.pid;
error_log $work/ngx/error.log;
events { worker_connections 256; }
http {
    access_log off;
    keepalive_timeout $1;
    client_body_temp_path $work/ngx/tmp;
    proxy_temp_path $work/ngx/tmp;
    fastcgi_temp_path $work/ngx/tmp;
    uwsgi_temp_path $work/ngx/tmp;
    scgi_temp_path $work/ngx/tmp;
    server {
        listen 127.0.0.1:$port;
        location / { return 200 "<feed>lab</feed>\n"; }
    }
}
NGX
    trace_server "$ngx" -p "$work/ngx" -c "$work/ngx/nginx.conf" -e "$work/ngx/error.log"
    wait_port "$port"
}

# the traced program runs with a clean environment, from the scratch dir
trace() { (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" "${STRACE:-strace}" -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null); }
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
    py-parallel-new-conn)
        start_server; trace python3 "$client" parallel-new-conn 40 "127.0.0.1:$port" ;;
    curl-parallel-h1|curl-parallel-h2)
        need curl; start_nginx
        urls=(); for i in $(seq 0 19); do urls+=(-o /dev/null "https://127.0.0.1:$port/feed/$i"); done
        if [ "$variant" = curl-parallel-h1 ]; then proto=--http1.1; else proto=--http2; fi
        trace curl -sS --no-progress-meter --cacert "$work/cert.pem" --parallel --parallel-max 20 "$proto" "${urls[@]}" ;;
    php-tls-fresh)      need php; tls; trace php "$php_client" fresh 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    php-tls-reuse)      need php; tls; trace php "$php_client" reuse 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    php-tls-share)      need php; tls; trace php "$php_client" share 30 "https://127.0.0.1:$port" "$work/cert.pem" ;;
    # the server side: the server is traced, the client is not
    srv-py-new-conn)    srv_py; python3 "$client" new-conn 40 "127.0.0.1:$port" >/dev/null; stop_server TERM ;;
    srv-py-http10)      srv_py --http10; python3 "$client" keepalive 40 "127.0.0.1:$port" >/dev/null; stop_server TERM ;;
    srv-py-keepalive)   srv_py; python3 "$client" keepalive 40 "127.0.0.1:$port" >/dev/null; stop_server TERM ;;
    srv-nginx-ka-off)   srv_nginx 0; python3 "$client" keepalive 40 "127.0.0.1:$port" >/dev/null; stop_server QUIT ;;
    srv-nginx-keepalive) srv_nginx 65; python3 "$client" keepalive 40 "127.0.0.1:$port" >/dev/null; stop_server QUIT ;;
    srv-nginx-few-clients)
        # near-miss: 6 clients, one keep-alive connection each, 40 requests in all
        srv_nginx 65
        for i in 1 2 3 4 5 6; do python3 "$client" keepalive 7 "127.0.0.1:$port" >/dev/null; done
        stop_server QUIT ;;
    *) echo "run.sh: unknown variant $variant (see README.md)" >&2; exit 2 ;;
esac
