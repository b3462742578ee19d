#!/usr/bin/env bash
# How an eBPF attach copes with a server that churns connections: nginx (one worker) in front of
# php-fpm (4 children) with a new FastCGI connection per request, under wrk on 127.0.0.1, which
# leaves tens of thousands of TIME_WAIT sockets. Each binary given runs
# `trace --backend ebpf -p <nginx and php-fpm pids> --for 400ms`, interleaved round by round,
# each round on a freshly started server pair (the first attach after a start is the one the
# live server test makes). Prints per run: the wall time, the traced window (first to last
# event, s), the syscalls seen and lost; then the medians per binary.
#
# usage: bench/attach-churn.sh [ROUNDS] SYSLINT...   (default 5 rounds; e.g. an older build
#        beside target/release/syslint). Needs root (eBPF), nginx, php-fpm, wrk, python3.
# All traffic stays on 127.0.0.1; wrk's load is bounded (-d20s) and every process started here
# is stopped by PID.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
ROUNDS=5
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then ROUNDS=$1; shift; fi
[ $# -ge 1 ] || { echo "usage: $0 [ROUNDS] SYSLINT..." >&2; exit 2; }
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
FPM="$(ls /usr/sbin/php-fpm* 2>/dev/null | head -n1)"
[ -x "$NGINX" ] && [ -n "$FPM" ] && command -v wrk >/dev/null || { echo "attach-churn.sh: needs nginx, php-fpm, wrk" >&2; exit 3; }
echo "machine: $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'), date: $(date -u '+%Y-%m-%d %H:%M UTC')"
DIR="$(mktemp -d /tmp/syslint-attach.XXXXXX)"
chmod 755 "$DIR"
NG=""; FP=""; W=""
stop() {
    [ -n "$W" ] && kill "$W" 2>/dev/null || true
    [ -n "$NG" ] && kill -QUIT "$NG" 2>/dev/null || true
    [ -n "$FP" ] && kill -QUIT "$FP" 2>/dev/null || true
    wait 2>/dev/null || true
    NG=""; FP=""; W=""
}
trap 'stop; rm -rf "$DIR"' EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
echo '<?php echo "hello from php-fpm\n";' >"$DIR/index.php"
start() {
    local fport nport
    fport="$(port)"; nport="$(port)"
    cat >"$DIR/fpm.conf" <<FPMCONF
[global]
pid = $DIR/fpm.pid
error_log = $DIR/fpm.log
daemonize = no
[www]
user = www-data
group = www-data
listen = 127.0.0.1:$fport
pm = static
pm.max_children = 4
FPMCONF
    "$FPM" -y "$DIR/fpm.conf" -n &
    FP=$!
    mkdir -p "$DIR/ng/tmp"
    cat >"$DIR/ng/nginx.conf" <<NGX
daemon off;
master_process off;
worker_processes 1;
pid $DIR/ng/nginx.pid;
error_log $DIR/ng/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $DIR/ng/tmp;
    fastcgi_temp_path $DIR/ng/tmp;
    server {
        listen 127.0.0.1:$nport;
        location / {
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $DIR/index.php;
            fastcgi_pass 127.0.0.1:$fport;
        }
    }
}
NGX
    "$NGINX" -p "$DIR/ng" -c "$DIR/ng/nginx.conf" -e "$DIR/ng/error.log" &
    NG=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$nport") 2>/dev/null && break; sleep 0.1; done
    curl -fsS "http://127.0.0.1:$nport/" >/dev/null
    wrk -t2 -c8 -d20s "http://127.0.0.1:$nport/" >/dev/null 2>&1 &
    W=$!
    sleep 2.5
}
for r in $(seq 1 "$ROUNDS"); do
    for bin in "$@"; do
        start
        pids="$NG,$(pgrep -d, -P "$FP"),$FP"
        tw="$(ss -tan state time-wait | tail -n +2 | wc -l)"
        t0=$(date +%s.%N)
        "$bin" trace --backend ebpf -p "$pids" --for 400ms --format json >"$DIR/out.json" 2>/dev/null || true
        t1=$(date +%s.%N)
        python3 - "$bin" "$r" "$t0" "$t1" "$tw" "$DIR/out.json" <<'PY'
import json, sys
bin, r, t0, t1, tw, path = sys.argv[1:]
c = json.load(open(path))["capture"]
w = (c.get("window") or {}).get("duration_s") or 0.0
print(f"run {bin} round {r}: wall {float(t1) - float(t0):.2f} s, window {w:.2f} s, "
      f"{c['syscalls']} syscalls, {c['lost_events']} lost, {tw} TIME_WAIT sockets")
PY
        stop
    done
done | tee "$DIR/runs.txt"
python3 - "$DIR/runs.txt" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r"run (\S+) round \d+: wall ([\d.]+) s, window ([\d.]+) s, (\d+) syscalls, (\d+) lost", line)
    if m:
        rows.setdefault(m[1], []).append(tuple(float(x) for x in m.groups()[1:]))
for b, v in rows.items():
    med = [statistics.median(x[i] for x in v) for i in range(4)]
    print(f"median {b}: wall {med[0]:.2f} s, window {med[1]:.2f} s, {med[2]:.0f} syscalls, {med[3]:.0f} lost ({len(v)} runs)")
PY
