#!/usr/bin/env bash
# What `syslint trace --backend ebpf --comm NAME` costs HAProxy's throughput, beside what it costs
# nginx serving the same page alone. Set-up as tests/fixtures/servers/ordinary/record-haproxy.sh:
# nginx (one worker, master_process off, no access log, keepalive_requests 10000, sendfile)
# serves index.html (617 bytes) on 127.0.0.1; HAProxy (Debian's, -db, default nbthread = cores)
# in http mode with `option http-keep-alive` and `http-reuse safe` in front of it on 127.0.0.1.
# Both are started once; every round runs every (target, configuration) pair once, round-robin,
# so machine noise hits all alike; medians of RUNS rounds and the median of per-round ratios
# traced/untraced (the untraced run of the same target in the same round).
#
# Targets: haproxy = wrk -> haproxy -> nginx, tracer --comm haproxy (nginx untraced);
#          nginx   = wrk -> nginx, tracer --comm nginx.
# Each run: [tracer started at nice -10 (as record-haproxy.sh), ATTACH_WAIT s to attach], then
# `wrk -t1 -c8 -d${WRK_SECS}s` (bounded), then the tracer is stopped with SIGINT (it reports).
# Each run holds the machine-wide recording lock /tmp/syslint-record.lock (flock) while it runs.
#
# Usage: bench/tracing-overhead-haproxy.sh     (as root: eBPF)
# Env:
#   RUNS=5  WRK_SECS=3  ATTACH_WAIT=1.5  TARGETS="haproxy nginx"
#   CONFIGS="untraced full summary"   rows; untraced always runs (baseline). More rows:
#       pb0    full detail with --payload-bytes 0 (needs a build that has the option: $SYSLINT_NEW)
#       pb64   full detail with --payload-bytes 64 from $SYSLINT_NEW (same build as pb0, default
#              payload length: separates the option from the build)
#   SYSLINT     the build measured (default target/dist/syslint if built by scripts/build-dist.sh,
#               else target/release/syslint)
#   SYSLINT_NEW the build for pb0/pb64 (default target/release/syslint)
#   PIN="" | "split"   split: nginx and wrk pinned to CPU 1, haproxy to CPU 0 (tracer unpinned)
#   QUIET_BUSY=0.10 QUIET_MAX=900   before each run (lock held), wait until the two CPUs were at
#               most 10% busy over 1 s (other work on a 2-core VM would be measured as tracing
#               cost), at most QUIET_MAX s, then measure anyway (the busy share is logged)
#   FOREIGN_MAX=30   ticks (1/100 s) of CPU that processes outside the run may use during it
#               (machine busy ticks less haproxy's, nginx's, wrk's and the tracer's); more and
#               the run is made again (up to TRIES=3 tries; the last one is kept, and counted
#               in the report's last line)
#   NBTHREAD=N  haproxy's nbthread (default: unset, HAProxy's default of one per CPU)
#   KEEP=dir    keep every run's JSON report and wrk output there
# Output: Markdown on stdout; progress on stderr. Per run it also records, from the tracer's JSON
# report, syscalls (sum of summary.syscalls[].calls: in-kernel counts with --summary-only),
# lost events, and the top syscalls; and CPU ticks
# (utime+stime, /proc) of the traced server, nginx and the tracer over the run.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in -h|--help) sed -n "2,/^set -euo/p" "$0" | sed "$ d"; exit 0 ;; esac
RUNS=${RUNS:-5}
WRK_SECS=${WRK_SECS:-3}
ATTACH_WAIT=${ATTACH_WAIT:-1.5}
TARGETS=${TARGETS:-haproxy nginx}
CONFIGS=${CONFIGS:-untraced full summary}
if [ -z "${SYSLINT:-}" ]; then
    if [ -x "$ROOT/target/dist/syslint" ]; then SYSLINT=$ROOT/target/dist/syslint; else SYSLINT=$ROOT/target/release/syslint; fi
fi
SYSLINT_NEW=${SYSLINT_NEW:-$ROOT/target/release/syslint}
PIN=${PIN:-}
NBTHREAD=${NBTHREAD:-}
QUIET_BUSY=${QUIET_BUSY:-0.10}
QUIET_MAX=${QUIET_MAX:-900}
FOREIGN_MAX=${FOREIGN_MAX:-30}
TRIES=${TRIES:-3}
KEEP=${KEEP:-}
LOCK=/tmp/syslint-record.lock
for t in haproxy nginx wrk curl python3 jq taskset flock; do
    command -v "$t" > /dev/null || { echo "tracing-overhead-haproxy.sh: needs $t" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "tracing-overhead-haproxy.sh: needs root (eBPF)" >&2; exit 3; }
log() { echo "[$(date -u +%T)] $*" >&2; }

DIR=$(mktemp -d /tmp/syslint-haproxy-bench.XXXXXX)
chmod 755 "$DIR"
H=""; NG=""; W=""; TR=""
cleanup() {
    [ -n "$W" ] && kill "$W" 2> /dev/null || true
    [ -n "$TR" ] && kill -INT "$TR" 2> /dev/null || true
    [ -n "$H" ] && kill "$H" 2> /dev/null || true
    [ -n "$NG" ] && kill -QUIT "$NG" 2> /dev/null || true
    wait 2> /dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p "$DIR/htdocs" "$DIR/nginx/tmp" "$DIR/res"
python3 -c 'print("<!DOCTYPE html>\n<html><head><title>syslint</title></head><body>" + "static page " * 45 + "</body></html>", end="")' > "$DIR/htdocs/index.html"
BPORT=$(port)
cat > "$DIR/nginx/nginx.conf" <<NGX
daemon off;
master_process off;
worker_processes 1;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $DIR/nginx/tmp;
    proxy_temp_path $DIR/nginx/tmp;
    fastcgi_temp_path $DIR/nginx/tmp;
    uwsgi_temp_path $DIR/nginx/tmp;
    scgi_temp_path $DIR/nginx/tmp;
    sendfile on;
    keepalive_requests 10000;
    server {
        listen 127.0.0.1:$BPORT;
        root $DIR/htdocs;
    }
}
NGX
PIN_NG=(); PIN_H=(); PIN_W=()
if [ "$PIN" = split ]; then PIN_NG=(taskset -c 1); PIN_H=(taskset -c 0); PIN_W=(taskset -c 1); fi
"${PIN_NG[@]}" nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/error.log" &
NG=$!
HPORT=$(port)
cat > "$DIR/haproxy.cfg" <<CFG
global
    maxconn 1024
$( [ -n "$NBTHREAD" ] && echo "    nbthread $NBTHREAD")
    pidfile $DIR/haproxy.pid
defaults
    mode http
    option http-keep-alive
    http-reuse safe
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 5s
frontend fe
    bind 127.0.0.1:$HPORT
    default_backend be
backend be
    server s1 127.0.0.1:$BPORT
CFG
"${PIN_H[@]}" haproxy -db -f "$DIR/haproxy.cfg" &
H=$!
for p in $HPORT $BPORT; do
    for _ in $(seq 1 100); do (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null && break; sleep 0.1; done
done
curl -fsS "http://127.0.0.1:$HPORT/index.html" > /dev/null
curl -fsS "http://127.0.0.1:$BPORT/index.html" > /dev/null
HTHREADS=$(ls /proc/$H/task | wc -l)
log "nginx $NG on $BPORT, haproxy $H ($HTHREADS threads) on $HPORT; $(wc -c < "$DIR/htdocs/index.html") byte page"

# wait (lock held) until the machine is quiet: other helpers' builds on a 2-core VM would
# otherwise be measured as tracing cost. Busy share of both CPUs over 1 s, at most QUIET_BUSY.
quiet() {
    local waited=0 b
    while :; do
        b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; sleep 1; awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
        b=$(echo $b | awk '{ bu = $3 - $1; id = $4 - $2; printf "%.2f", bu / (bu + id) }')
        awk -v b="$b" -v q="$QUIET_BUSY" 'BEGIN { exit !(b <= q) }' && break
        [ "$waited" -ge "$QUIET_MAX" ] && { log "  machine still busy ($b) after ${waited}s: measuring anyway"; break; }
        [ $(( waited % 60 )) = 0 ] && log "  machine busy ($b of 2 CPUs): waiting ($(ps -eo pcpu=,comm= --sort=-pcpu | head -n 2 | tr -s ' ' | paste -sd,))"
        sleep 4; waited=$(( waited + 5 ))
    done
    BUSY=$b
}
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null || echo 0; }
idle() { awk '/^cpu / { print $5 + $6 }' /proc/stat; }
# user+nice+system+irq+softirq (no steal: the hypervisor's), less the kernel's softirq threads
# (ksoftirqd runs loopback traffic's deferred work: part of the run)
busyticks() { echo $(( $(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat) - $(cat /proc/[0-9]*/stat 2> /dev/null | awk '$2 ~ /^\(ksoftirqd/ { s += $14 + $15 } END { print s + 0 }') )); }
childticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }   # $$: the shell that waits for wrk and the tracer

run() {   # run TARGET CONFIG ROUND: one_run, made again (up to 3 tries) when foreign CPU use
    local try
    for try in $(seq 1 "$TRIES"); do
        one_run "$@"
        [ "$FOREIGN" -le "$FOREIGN_MAX" ] && break
        log "  round $3 $1/$2: other processes used $FOREIGN ticks during the run: made again"
        echo "$3 $1 $2 $FOREIGN" >> "$DIR/res/redone"
    done
    cat "$DIR/res/cur" >> "$DIR/res/all"
}
one_run() {   # one_run TARGET CONFIG ROUND
    local tgt=$1 c=$2 r=$3 url pid cmd=() j=$DIR/cur.json e=$DIR/cur.err
    if [ "$tgt" = haproxy ]; then url="http://127.0.0.1:$HPORT/index.html"; pid=$H; else url="http://127.0.0.1:$BPORT/index.html"; pid=$NG; fi
    case $c in
        untraced) ;;
        full) cmd=("$SYSLINT" trace --backend ebpf) ;;
        summary) cmd=("$SYSLINT" trace --backend ebpf --summary-only) ;;
        pb0) cmd=("$SYSLINT_NEW" trace --backend ebpf --payload-bytes 0) ;;
        pb64) cmd=("$SYSLINT_NEW" trace --backend ebpf --payload-bytes 64) ;;
        *) echo "unknown config $c" >&2; exit 2 ;;
    esac
    rm -f "$j" "$e"
    exec 9> "$LOCK"
    flock 9
    quiet
    local t0 ng0 i0 b0 c0 tr=0
    t0=$(ticks "$pid"); ng0=$(ticks "$NG"); i0=$(idle); b0=$(busyticks); c0=$(childticks)
    if [ ${#cmd[@]} -gt 0 ]; then
        # background jobs of a script ignore SIGINT: give it back so the tracer can be stopped
        env --default-signal=INT nice -n -10 "${cmd[@]}" --comm "$tgt" -q --format json --output-file "$j" \
            --for "$(( WRK_SECS + 20 ))s" 2> "$e" &
        TR=$!
        sleep "$ATTACH_WAIT"
        kill -0 "$TR" 2> /dev/null || { log "tracer exited early: $(head -n 3 "$e")"; exit 1; }
    fi
    "${PIN_W[@]}" timeout -k 5 $(( WRK_SECS + 30 )) wrk -t1 -c8 -d"${WRK_SECS}s" "$url" > "$DIR/wrk.out" 2>&1
    local t1 ng1 i1 b1 c1
    t1=$(ticks "$pid"); ng1=$(ticks "$NG"); i1=$(idle); b1=$(busyticks)
    if [ -n "$TR" ]; then
        tr=$(ticks "$TR")
        kill -INT "$TR"
        wait "$TR" || true
        TR=""
    fi
    c1=$(childticks)
    # CPU that no process of this run used (another helper's build started mid-run): the
    # machine's busy ticks less haproxy's, nginx's and this script's children's (wrk, the tracer;
    # the tracer's own ticks up to the end of wrk are in $tr, its report after that in c1 - c0)
    local ours foreign
    if [ "$tgt" = haproxy ]; then ours=$(( t1 - t0 + ng1 - ng0 + c1 - c0 )); else ours=$(( t1 - t0 + c1 - c0 )); fi
    foreign=$(( b1 - b0 - ours ))
    FOREIGN=$foreign
    flock -u 9
    exec 9>&-
    local rps reqs sys=- lost=- top=-
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$DIR/wrk.out")
    reqs=$(awk '/requests in/ { print $1 }' "$DIR/wrk.out")
    grep -q 'Non-2xx\|Socket errors' "$DIR/wrk.out" && log "  note: $(grep 'Non-2xx\|Socket errors' "$DIR/wrk.out")"
    if [ -n "${cmd[*]:-}" ]; then
        [ -s "$j" ] || { log "no report from the tracer: $(head -n 3 "$e")"; exit 1; }
        sys=$(jq '[.summary.syscalls[].calls] | add' "$j")
        lost=$(jq '.capture.lost_events' "$j")
        top=$(jq -r '[.summary.syscalls | sort_by(-.calls)[:8][] | "\(.name)=\(.calls)"] | join(",")' "$j")
    fi
    [ -n "$KEEP" ] && { mkdir -p "$KEEP"; cp "$DIR/wrk.out" "$KEEP/$tgt.$c.$r.wrk"; [ -s "$j" ] && cp "$j" "$KEEP/$tgt.$c.$r.json"; }
    # round target config rps requests syscalls lost server_ticks nginx_ticks tracer_ticks idle_ticks top
    echo "$r $tgt $c $rps $reqs $sys $lost $((t1 - t0)) $((ng1 - ng0)) $tr $((i1 - i0)) $top $BUSY $foreign" > "$DIR/res/cur"
    log "  round $r $tgt/$c: $rps req/s, syscalls $sys, lost $lost, ticks server $((t1 - t0)) nginx $((ng1 - ng0)) tracer $tr idle $((i1 - i0)) (busy before: $BUSY, foreign ticks: $foreign)"
}

# warm-up, discarded
for tgt in $TARGETS; do wrk -t1 -c8 -d1s "http://127.0.0.1:$([ "$tgt" = haproxy ] && echo $HPORT || echo $BPORT)/index.html" > /dev/null; done
CONF=(untraced $(echo "$CONFIGS" | tr ' ' '\n' | grep -vx untraced || true))
for r in $(seq 1 "$RUNS"); do
    for tgt in $TARGETS; do
        for c in "${CONF[@]}"; do run "$tgt" "$c" "$r"; done
    done
done
HTHREADS_END=$(ls /proc/$H/task | wc -l)

# ---------------------------------------------------------------- report
A=$DIR/res/all
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "#### \`wrk -t1 -c8 -d${WRK_SECS}s\`, $RUNS rounds interleaved, $(date -u '+%F %H:%M') UTC"
echo
echo "- machine: $(nproc) vCPUs ($(lscpu | sed -n 's/^Model name: *//p'), $(lscpu | sed -n 's/^Hypervisor vendor: *//p')), kernel $(uname -r)"
echo "- $(haproxy -v | head -n 1 | cut -d' ' -f1-3), $HTHREADS threads (nbthread default; $HTHREADS_END at the end); $(nginx -v 2>&1 | sed 's/.*: //'), 1 worker; $(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }')"
echo "- syslint: $SYSLINT$( [ -n "$(echo "$CONFIGS" | grep -w 'pb0\|pb64' || true)" ] && echo "; pb rows: $SYSLINT_NEW")"
echo "- pinning: ${PIN:-none}; haproxy nbthread: ${NBTHREAD:-default}; quiet check: at most $QUIET_BUSY busy before each run (busiest seen: $(awk '{ print $13 }' "$DIR/res/all" | sort -g | tail -n 1))"
echo
echo "| target | configuration | median req/s | traced/untraced (ratio of medians) | median of per-round ratios | syscalls / request | server CPU ms / request | tracer CPU ms / request | lost events |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
HZ=$(getconf CLK_TCK)
for tgt in $TARGETS; do
    base=$(awk -v t="$tgt" '$2 == t && $3 == "untraced" { print $4 }' "$A" | med)
    for c in "${CONF[@]}"; do
        m=$(awk -v t="$tgt" -v c="$c" '$2 == t && $3 == c { print $4 }' "$A" | med)
        rr=$(awk -v t="$tgt" -v c="$c" '$2 == t && $3 == "untraced" { u[$1] = $4 } $2 == t && $3 == c { x[$1] = $4 } END { for (r in x) if (u[r] > 0) print x[r] / u[r] }' "$A" | med)
        spr=$(awk -v t="$tgt" -v c="$c" '$2 == t && $3 == c && $6 != "-" && $5 > 0 { print $6 / $5 }' "$A" | med)
        scpu=$(awk -v t="$tgt" -v c="$c" -v hz="$HZ" '$2 == t && $3 == c && $5 > 0 { print $8 * 1000 / hz / $5 }' "$A" | med)
        tcpu=$(awk -v t="$tgt" -v c="$c" -v hz="$HZ" '$2 == t && $3 == c && $5 > 0 && $3 != "untraced" { print $10 * 1000 / hz / $5 }' "$A" | med)
        lost=$(awk -v t="$tgt" -v c="$c" '$2 == t && $3 == c && $7 != "-" { s += $7; n++ } END { print n ? s : "-" }' "$A")
        printf "| %s | %s | %.0f | %.3f | %.3f | %s | %s | %s | %s |\n" "$tgt" "$c" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')" "$rr" \
            "$( [ "$spr" = - ] && echo - || printf %.1f "$spr")" "$(printf %.4f "$scpu")" "$( [ "$tcpu" = - ] && echo - || printf %.4f "$tcpu")" "$lost"
    done
done
echo
echo "Raw req/s per round:"
echo
for tgt in $TARGETS; do
    for c in "${CONF[@]}"; do
        echo "- $tgt / $c: $(awk -v t="$tgt" -v c="$c" '$2 == t && $3 == c { printf "%s ", $4 }' "$A")"
    done
done
echo
echo "Top syscalls per request (first traced round of each, from the tracer's report):"
echo
for tgt in $TARGETS; do
    for c in "${CONF[@]}"; do
        [ "$c" = untraced ] && continue
        awk -v t="$tgt" -v c="$c" '$2 == t && $3 == c && !done { n = split($12, a, ","); s = ""; for (i = 1; i <= n; i++) { split(a[i], kv, "="); s = s sprintf("%s %.2f, ", kv[1], kv[2] / $5) } sub(/, $/, "", s); print "- " t " / " c ": " s; done = 1 }' "$A"
    done
done
echo
echo "Runs made again because other processes used CPU during them: $(cat "$DIR/res/redone" 2> /dev/null | wc -l); foreign ticks in the kept runs: median $(awk '{ print $14 }' "$A" | med), max $(awk '{ print $14 }' "$A" | sort -g | tail -n 1); kept runs over FOREIGN_MAX: $(awk -v m="$FOREIGN_MAX" '$14 > m' "$A" | wc -l)"
[ -n "$KEEP" ] && cp "$A" "$KEEP/all.txt"
exit 0
