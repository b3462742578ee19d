#!/usr/bin/env bash
# Workload run under ONE strace session by gen-log.sh:
#   strace -f -tt -T -yy -s 128 -o OUT bash bench/workload.sh
# It loops over real workloads (tar+gzip, find, grep -r, nginx+wrk, php, python)
# until OUT reaches SIZE_MB (checked between rounds), a hard cap of rounds, or a
# wall-clock deadline. All network traffic is on 127.0.0.1. Every step is bounded
# by `timeout`. nginx is started per round as a child of this shell (daemon off)
# and always stopped (trap EXIT).
set -u

OUT=${BENCH_OUT:?BENCH_OUT must name the strace output file}
SIZE_MB=${BENCH_SIZE_MB:-1024}
MAX_ROUNDS=${BENCH_MAX_ROUNDS:-400}
MAX_SECONDS=${BENCH_MAX_SECONDS:-5400}
PORT=${BENCH_PORT:-18473}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${BENCH_PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

WORK=$(mktemp -d /tmp/syslint-bench.XXXXXX)
chmod 755 "$WORK"
NGINX_PID=

stop_nginx() {
    if [ -n "$NGINX_PID" ]; then
        kill -QUIT "$NGINX_PID" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            sleep 0.3
        done
        kill -KILL "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
        NGINX_PID=
    fi
}
cleanup() {
    stop_nginx
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- static site + private nginx config -----------------------------------
mkdir -p "$WORK/www/docs" "$WORK/nginx/tmp" "$WORK/files"
for i in $(seq 1 40); do
    head -c $(( (i * 997) % 20000 + 100 )) /usr/share/common-licenses/GPL-3 > "$WORK/www/docs/page$i.html" 2>/dev/null \
        || head -c 5000 /dev/zero | tr '\0' 'x' > "$WORK/www/docs/page$i.html"
done
echo '<html><body>syslint bench</body></html>' > "$WORK/www/index.html"
head -c 262144 /dev/urandom > "$WORK/www/blob.bin"
chmod -R a+rX "$WORK/www"
cat > "$WORK/nginx/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 2;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 256; }
http {
    access_log $WORK/nginx/access.log;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    include /etc/nginx/mime.types;
    sendfile on;
    keepalive_timeout 5;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
        autoindex on;
        location /missing/ { return 404; }
    }
}
CONF

start_nginx() {
    nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" &
    NGINX_PID=$!
    for _ in $(seq 1 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        kill -0 "$NGINX_PID" 2>/dev/null || { echo "nginx failed to start" >&2; NGINX_PID=; return 1; }
        sleep 0.1
    done
    return 1
}

size_mb() { echo $(( $(stat -c %s "$OUT" 2>/dev/null || echo 0) / 1048576 )); }

STAT_TREES=(/usr/lib/x86_64-linux-gnu /usr/lib/python3 /usr/lib /usr/share/locale /usr/lib/gcc)
TREES=(/usr/share/doc /usr/include /usr/share/perl5 /usr/lib/python3 /usr/share/man /etc)
GREP_PATTERNS=(define license 'int main' error static)
start=$SECONDS
round=0
while :; do
    round=$((round + 1))
    [ "$round" -gt "$MAX_ROUNDS" ] && { echo "round cap $MAX_ROUNDS reached" >&2; break; }
    [ $((SECONDS - start)) -ge "$MAX_SECONDS" ] && { echo "time cap reached" >&2; break; }
    cur=$(size_mb)
    [ "$cur" -ge "$SIZE_MB" ] && break
    echo "round $round: ${cur} MB of ${SIZE_MB} MB" >&2
    tree=${TREES[$(( round % ${#TREES[@]} ))]}
    stat_tree=${STAT_TREES[$(( round % ${#STAT_TREES[@]} ))]}
    pat=${GREP_PATTERNS[$(( round % ${#GREP_PATTERNS[@]} ))]}

    # 1. tar + gzip a tree into a temp file (pipe between two processes)
    timeout 60 tar -cf - "$tree" 2>/dev/null | timeout 60 gzip -1 > "$WORK/files/tree.tar.gz"
    timeout 20 tar -tzf "$WORK/files/tree.tar.gz" 2>/dev/null | timeout 20 wc -l > /dev/null

    # 2. find: early-closed pipe (SIGPIPE) and stat-heavy traversal
    timeout 20 find /usr -name '*.h' 2>/dev/null | head -n 20 > /dev/null
    touch -d '-30 days' "$WORK/files/stamp"
    timeout 30 find "$stat_tree" -newer "$WORK/files/stamp" -printf '%p %s %TY\n' 2>/dev/null | tail -n 3 > /dev/null
    timeout 30 find "$tree" -maxdepth 3 -type f -printf '%m %u %s %p\n' 2>/dev/null > "$WORK/files/listing.txt"
    timeout 10 stat -c '%n %s %y' /usr/bin/* > /dev/null 2>&1

    # 3. grep -r over a tree (plus a failing open for ENOENT)
    timeout 30 grep -rIl -- "$pat" "$tree" 2>/dev/null | timeout 5 sort | head -n 50 > /dev/null
    timeout 5 grep -c x /nonexistent/file 2>/dev/null

    # 4. nginx + wrk + php + python against it
    if start_nginx; then
        timeout 15 wrk -t2 -c20 -d2s "http://127.0.0.1:$PORT/docs/page$((round % 40 + 1)).html" > /dev/null 2>&1
        timeout 60 php "$HERE/workload.php" "$PORT" "$WORK/files" > /dev/null 2>&1
        timeout 60 "$PY" "$HERE/workload.py" "$PORT" "$WORK/files" > /dev/null 2>&1
        timeout 5 curl -s -o /dev/null "http://127.0.0.1:$PORT/missing/x" 2>/dev/null
        stop_nginx
    fi

    # 5. misc short-lived processes
    timeout 5 sh -c 'ls -la /proc/self/fd; cat /proc/self/status | wc -l' > /dev/null 2>&1
    timeout 1 sleep 5   # killed by SIGTERM from timeout
    rm -f "$WORK/files/"*.tmp
done
echo "finished after $((round - 1)) rounds, $(size_mb) MB" >&2
