#!/usr/bin/env bash
# What tracing costs the traced program: the same workloads untraced, under `syslint trace`
# (eBPF with full detail, eBPF --summary-only, strace backend) and under strace -c, perf trace -s
# a bpftrace count map and (nginx only) libbpf-tools' syscount, side by side in one run. Runs are interleaved (each round runs every
# configuration once, round-robin, so machine noise hits all alike); medians of RUNS rounds.
#
# Usage: bench/ebpf-overhead.sh            (as root: eBPF, perf and attaching need it)
# Env:
#   RUNS=5               rounds (median of RUNS per configuration)
#   WORKLOADS="getppid dd stat nginx"   subset and order of the workloads (columns)
#   CONFIGS="untraced ebpf ebpf-summary syslint-strace strace-c perf bpftrace syscount"   rows
#                        to run (untraced is always run: it is the baseline). syscount is the
#                        libbpf port of BCC's syscount (Debian: libbpf-tools), the reference of
#                        the nginx target; it counts every process on the host (it has no
#                        process-tree filter), so it runs on nginx only
#   SLOW_SCALE=20        the three slow tracers (syslint-strace, strace-c, perf) run the
#                        getppid/dd/stat workloads with 1/SLOW_SCALE of the calls and their time
#                        is multiplied by SLOW_SCALE (marked with a dagger); 1 = full size, but a
#                        round then takes ~15 min on a 2-core VM (25-100 us a traced call)
#                        instead of ~2 min (RUNS=5, all workloads: ~10-12 min)
#   WRK_SECS=5 ATTACH_WAIT=2 PORT=18431 (first free port from there)
#   RUN_TIMEOUT=900      seconds; any single run is killed after this
#   SYSLINT=target/release/syslint   (not built by this script: cargo build --release)
#   agent                `syslint agent -p PIDS --window AGENT_WINDOW --every AGENT_EVERY` (2s, 60s by
#                        default) attached for the whole wrk run (nginx only): its cost averaged
#                        over the run; make WRK_SECS a multiple of AGENT_EVERY; its CPU seconds
#                        are in the progress log
#   agent-nice           the same under `nice -n 19`
#   agent-count          the same agent with --count-between (in-kernel counting 2 s of every
#                        10 s between windows)
#   agent-host           `syslint agent` watching the whole host (no process named: every
#                        cgroup's processes, wrk's included, in one window a cycle), as the agent
#                        issue's target names it
#   agent-host-count     the same with --count-between
#   AGENT_LOGS=DIR       keep each agent run's stderr there (its windows, findings, shedding)
#   AGENT_ARGS="..."     more `syslint agent` options for the agent rows (e.g. --cpu-budget 2%)
#   alt-NAME             extra rows for A/B runs of other builds or settings: CONFIGS="untraced
#                        ebpf alt-new" with ALT_new_BIN=/path/to/syslint (default $SYSLINT),
#                        ALT_new_ENV="VAR=value ..." (its environment) and ALT_new_ARGS="..."
#                        (more `syslint trace` options); it runs `syslint trace --backend ebpf`
#
# Workloads (C sources in bench/workloads/, built with gcc -O2 into a temp dir):
#   getppid  2,000,000 getppid()            dd     dd bs=512 count=2000000 /dev/zero -> /dev/null
#   stat     500,000 stat(), alternating /etc/hostname and /nonexistent/x (ENOENT)
#   nginx    nginx, 2 workers on 127.0.0.1, loaded by wrk -t2 -c32 -d5s; tracers attach to the
#            running master and workers, wrk starts ATTACH_WAIT s later, tracer stopped after wrk
# For getppid/dd/stat the time is the program's own: the workload clocks its loop (dd reports
# its copy time), so tracer start-up, BPF loading and the final report are not counted; the
# end-to-end wall time of the whole command is shown beside it.
#
# Rows 2-4 need the syslint binary; when `syslint trace --backend ebpf` (or --summary-only)
# is not available yet, the script says so and skips those rows: re-run it once it is, e.g.
#   CONFIGS="untraced ebpf ebpf-summary" WORKLOADS="getppid dd" RUNS=3 bench/ebpf-overhead.sh
# Output: Markdown on stdout and in bench/data/ebpf-overhead-<date>.md; progress on stderr.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,54p' "$0"; exit 0 ;; esac

RUNS=${RUNS:-5}
WORKLOADS=${WORKLOADS:-getppid dd stat nginx}
CONFIGS=${CONFIGS:-untraced ebpf ebpf-summary syslint-strace strace-c perf bpftrace syscount}
SLOW_SCALE=${SLOW_SCALE:-20}
WRK_SECS=${WRK_SECS:-5}
ATTACH_WAIT=${ATTACH_WAIT:-2}
PORT=${PORT:-18431}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
AGENT_WINDOW=${AGENT_WINDOW:-2s}
AGENT_EVERY=${AGENT_EVERY:-60s}
# perf, bpftrace and syscount attach to tracepoints by name: they need tracefs, which this
# machine does not mount by default (syslint's own tp_btf programs do not)
case " $CONFIGS " in *" perf "*|*" bpftrace "*|*" syscount "*)
    if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
        mount -t tracefs nodev /sys/kernel/tracing || echo "warning: could not mount tracefs: perf, bpftrace and syscount will fail" >&2
    fi ;;
esac
SYSLINT=${SYSLINT:-$ROOT/target/release/syslint}
N_GETPPID=2000000 N_DD=2000000 N_STAT=500000
DD=$(command -v dd)
START=$(date +%s)

log() { echo "[$(( $(date +%s) - START ))s] $*" >&2; }
die() { echo "ebpf-overhead: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || echo "warning: not root; eBPF, perf trace, bpftrace and attaching will likely fail" >&2
# the tools of the configurations and workloads asked for
tools="gcc timeout"
case " $CONFIGS " in *" syslint-strace "*|*" strace-c "*) tools="$tools strace" ;; esac
case " $CONFIGS " in *" perf "*) tools="$tools perf" ;; esac
case " $CONFIGS " in *" bpftrace "*) tools="$tools bpftrace" ;; esac
case " $WORKLOADS " in *" nginx "*) tools="$tools nginx wrk" ;; esac
for t in $tools; do
    command -v "$t" > /dev/null || die "$t not installed"
done

TMPD=$(mktemp -d /tmp/ebpf-overhead.XXXXXX)
NGINX_PID=
CUR_TRACER=
stop_nginx() {
    [ -n "$NGINX_PID" ] || return 0
    local kids i
    kids=$(pgrep -P "$NGINX_PID" || true)
    kill -TERM "$NGINX_PID" 2> /dev/null || true
    for i in $(seq 1 50); do kill -0 "$NGINX_PID" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$NGINX_PID" $kids 2> /dev/null || true
    wait "$NGINX_PID" 2> /dev/null || true
    NGINX_PID=
}
cleanup() {
    # a tracer still running (only the one this script started: timeout and its child)
    if [ -n "$CUR_TRACER" ]; then stop_bg "$CUR_TRACER" TERM 5; fi
    stop_nginx
    rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- build workloads
W=$TMPD/bin
mkdir -p "$W"
gcc -O2 -Wall -o "$W/getppid" "$HERE/workloads/getppid.c"
gcc -O2 -Wall -o "$W/statloop" "$HERE/workloads/statloop.c"

# ---------------------------------------------------------------- which rows can run
want() { case " $CONFIGS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
ROWS=(untraced)
declare -A SKIP=()
probe_syslint() {   # probe_syslint CONFIG : can its `syslint trace ... -- true` run?
    local name=$1 rc=0
    syslint_cmd "$name"
    timeout -k 5 60 "${SCMD[@]}" -q --format json --output-file "$TMPD/probe.json" -- true \
        > "$TMPD/probe.out" 2> "$TMPD/probe.err" || rc=$?
    if [ "$rc" -ge 2 ] || [ ! -s "$TMPD/probe.json" ]; then
        SKIP[$name]="\`${SCMD[*]}\` not available yet (exit $rc: $(head -c 300 "$TMPD/probe.err" | tr '\n' ' '))"
        rm -f "$TMPD/probe.json"
        return 1
    fi
    rm -f "$TMPD/probe.json"
}
is_syslint() { case $1 in ebpf|ebpf-summary|syslint-strace|alt-*) return 0 ;; *) return 1 ;; esac; }
for a in agent agent-nice agent-count agent-host agent-host-count; do
    if want "$a"; then
        [ "$WORKLOADS" = nginx ] || die "the $a row runs on nginx only (WORKLOADS=nginx)"
        ROWS+=("$a")
    fi
done
syslint_cmd() {   # syslint_cmd CONFIG -> sets SCMD: the `syslint trace ...` of a syslint row
    local v
    case $1 in
        ebpf) SCMD=("$SYSLINT" trace --backend ebpf) ;;
        ebpf-summary) SCMD=("$SYSLINT" trace --backend ebpf --summary-only) ;;
        syslint-strace) SCMD=("$SYSLINT" trace --backend strace) ;;
        alt-*)
            v=${1#alt-}
            local bin="ALT_${v}_BIN" env="ALT_${v}_ENV" args="ALT_${v}_ARGS"
            # word splitting of the ENV and ARGS lists is wanted
            # shellcheck disable=SC2206
            SCMD=(env ${!env:-} "${!bin:-$SYSLINT}" trace --backend ebpf ${!args:-}) ;;
    esac
}
for c in $CONFIGS; do
    is_syslint "$c" || continue
    syslint_cmd "$c"
    if [ ! -x "${SCMD[0]}" ] && [ "${SCMD[0]}" != env ]; then
        SKIP[$c]="no syslint binary at ${SCMD[0]} (cargo build --release)"
        continue
    fi
    probe_syslint "$c" && ROWS+=("$c")
done
for c in strace-c perf bpftrace; do want "$c" && ROWS+=("$c"); done
if want syscount; then
    if command -v syscount > /dev/null; then ROWS+=(syscount); else SKIP[syscount]="syscount not installed (apt install libbpf-tools)"; fi
fi
for c in "${!SKIP[@]}"; do log "skipping $c: ${SKIP[$c]}"; done

label() {
    case $1 in
        untraced) echo 'untraced' ;;
        ebpf) echo '`syslint trace --backend ebpf` (full detail)' ;;
        ebpf-summary) echo '`syslint trace --backend ebpf --summary-only` (in-kernel counts)' ;;
        syslint-strace) echo '`syslint trace --backend strace`' ;;
        strace-c) echo '`strace -c -f`' ;;
        perf) echo '`perf trace -s`' ;;
        bpftrace) echo 'bpftrace count map' ;;
        syscount) echo '`syscount` (libbpf-tools, BCC'"'"'s in-kernel counting, whole host)' ;;
        alt-*) syslint_cmd "$1"; echo "\`${SCMD[*]}\`" ;;
        agent) echo "\`syslint agent --window $AGENT_WINDOW --every $AGENT_EVERY${AGENT_ARGS:+ $AGENT_ARGS}\` (averaged over the run)" ;;
        agent-nice) echo "the same agent under \`nice -n 19\`" ;;
        agent-count) echo "the same agent with \`--count-between\`" ;;
        agent-host) echo "\`syslint agent --window $AGENT_WINDOW --every $AGENT_EVERY${AGENT_ARGS:+ $AGENT_ARGS}\` watching the whole host" ;;
        agent-host-count) echo "the same host-wide agent with \`--count-between\`" ;;
    esac
}
is_slow() { case $1 in syslint-strace|strace-c|perf) return 0 ;; *) return 1 ;; esac; }

# bpftrace: count every syscall of the command and of its children (the children join @track at
# fork; pid is the tgid, so threads are in too)
BT_PROG='BEGIN { @track[cpid] = 1; }
tracepoint:sched:sched_process_fork /@track[pid]/ { @track[args->child_pid] = 1; }
tracepoint:raw_syscalls:sys_enter /@track[pid]/ { @n[args->id] = count(); }
END { clear(@track); }'

# ---------------------------------------------------------------- result helpers
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxval() { sort -n "$1" | tail -n 1; }
json_get() {   # json_get FILE KEY (under .capture)
    if command -v jq > /dev/null; then jq -r ".capture.$2 // empty" "$1" 2> /dev/null || true
    else python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["capture"].get(sys.argv[2], ""))' "$1" "$2" 2> /dev/null || true; fi
}
# record_extra CONFIG KEY RESULT-FILES... : events lost and syscalls seen for one run
record_extra() {
    local c=$1 key=$2 j=$3 o=$4 e=$5 lost= seen=
    case $c in
        ebpf|ebpf-summary|syslint-strace|alt-*)
            if [ -s "$j" ]; then lost=$(json_get "$j" lost_events); seen=$(json_get "$j" syscalls); fi ;;
        perf)
            lost=$(cat "$o" "$e" 2> /dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == "LOST" && $(i + 1) ~ /^[0-9]+$/) s += $(i + 1) } END { print s + 0 }'; true)
            # summary rows: "   name  calls  errors  total ..."
            seen=$(cat "$o" 2> /dev/null | awk '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ { s += $2 } END { print s + 0 }'; true) ;;
        bpftrace)
            seen=$(cat "$o" 2> /dev/null | awk -F': ' '/^@n\[/ { s += $2 } END { print s + 0 }'; true) ;;
    esac
    [ -n "$lost" ] && echo "$lost" >> "$TMPD/$key.lost"
    [ -n "$seen" ] && echo "$seen" >> "$TMPD/$key.seen"
    return 0
}

# ---------------------------------------------------------------- getppid / dd / stat
workload_cmd() {   # workload_cmd NAME N -> sets WCMD
    case $1 in
        getppid) WCMD=("$W/getppid" "$2") ;;
        stat) WCMD=("$W/statloop" "$2") ;;
        dd) WCMD=("$DD" bs=512 count="$2" if=/dev/zero of=/dev/null) ;;   # full path: bpftrace -c wants one
    esac
}
full_n() { case $1 in getppid) echo $N_GETPPID ;; dd) echo $N_DD ;; stat) echo $N_STAT ;; esac; }

run_batch() {   # run_batch WORKLOAD CONFIG
    local w=$1 c=$2 key="$1.$2" n scale=1 j=$TMPD/cur.json o=$TMPD/cur.out e=$TMPD/cur.err
    [ "$c" = syscount ] && { echo "nginx only" > "$TMPD/$key.rc"; return 0; }
    n=$(full_n "$w")
    if is_slow "$c" && [ "$SLOW_SCALE" -gt 1 ]; then scale=$SLOW_SCALE; n=$(( n / scale )); fi
    echo "$scale" > "$TMPD/$key.scale"
    workload_cmd "$w" "$n"
    local cmd
    case $c in
        untraced) cmd=("${WCMD[@]}") ;;
        ebpf|ebpf-summary|syslint-strace|alt-*)
            syslint_cmd "$c"
            cmd=("${SCMD[@]}" -q --format json --output-file "$j" -- "${WCMD[@]}") ;;
        strace-c) cmd=(strace -c -f -o /dev/null "${WCMD[@]}") ;;
        perf) cmd=(perf trace -s -o "$o" -- "${WCMD[@]}") ;;
        bpftrace) cmd=(bpftrace -o "$o" -e "$BT_PROG" -c "${WCMD[*]}") ;;
    esac
    rm -f "$j" "$o" "$e"
    local t0 t1 rc=0 secs
    t0=$(date +%s%N)
    timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" > /dev/null 2> "$e" || rc=$?
    t1=$(date +%s%N)
    if [ "$w" = dd ]; then
        secs=$(sed -n 's/.* copied, \([0-9.e+-]*\) s,.*/\1/p' "$e" | tail -n 1)
    else
        secs=$(sed -n 's/^workload-elapsed: \([0-9.]*\).*/\1/p' "$e" | tail -n 1)
    fi
    # syslint exits 1 when it has findings: only >= 2 (or no time from the workload) is a failure
    if [ -z "$secs" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; } || { [ "$rc" = 1 ] && ! is_syslint "$c"; }; then
        log "warning: $c on $w: exit $rc, no time: $(grep -v -e 'workload-elapsed' -e 'RLIMIT_MEMLOCK' "$e" | head -n 3 | tr '\n' ' ')"
        echo "$rc" > "$TMPD/$key.rc"
        return 0
    fi
    awk -v s="$secs" -v k="$scale" 'BEGIN { printf "%.6f\n", s * k }' >> "$TMPD/$key.t"
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >> "$TMPD/$key.e2e"
    record_extra "$c" "$key" "$j" "$o" "$e"
    log "  $w / $c: $(tail -n 1 "$TMPD/$key.t") s$( [ "$scale" -gt 1 ] && echo " (1/$scale run, x$scale)")"
}

# ---------------------------------------------------------------- nginx
NG=$TMPD/nginx
port_free() { ! ss -Hltn "sport = :$1" 2> /dev/null | grep -q .; }
start_nginx() {
    local i p
    mkdir -p "$NG/www" "$NG/tmp" "$NG/logs"
    chmod 755 "$TMPD" "$NG" "$NG/www"
    # a small static file (4 KiB)
    head -c 3072 /dev/urandom | base64 -w 76 > "$NG/www/index.html"
    chmod 644 "$NG/www/index.html"
    for i in $(seq 0 19); do p=$((PORT + i)); port_free "$p" && break; done
    port_free "$p" || die "no free port in $PORT..$((PORT + 19))"
    NGINX_PORT=$p
    cat > "$NG/nginx.conf" <<EOF
worker_processes 2;
daemon off;
master_process on;
pid $NG/nginx.pid;
error_log $NG/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $NG/tmp/body;
    proxy_temp_path $NG/tmp/proxy;
    fastcgi_temp_path $NG/tmp/fastcgi;
    uwsgi_temp_path $NG/tmp/uwsgi;
    scgi_temp_path $NG/tmp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $NG/www;
        location / { }
    }
}
EOF
    nginx -p "$NG" -c "$NG/nginx.conf" -e "$NG/logs/error.log" > "$NG/logs/stdout" 2>&1 &
    NGINX_PID=$!
    for i in $(seq 1 100); do
        [ "$(pgrep -P "$NGINX_PID" | wc -l)" -ge 2 ] && ! port_free "$NGINX_PORT" && break
        kill -0 "$NGINX_PID" 2> /dev/null || break
        sleep 0.1
    done
    [ "$(pgrep -P "$NGINX_PID" | wc -l)" -ge 2 ] || die "nginx did not start: $(cat "$NG/logs/error.log" "$NG/logs/stdout" 2> /dev/null | tail -n 3)"
    log "nginx master $NGINX_PID, workers $(pgrep -P "$NGINX_PID" | paste -sd, -), port $NGINX_PORT"
}
ensure_nginx() {
    if [ -z "$NGINX_PID" ] || ! kill -0 "$NGINX_PID" 2> /dev/null || [ "$(pgrep -P "$NGINX_PID" | wc -l)" -lt 2 ]; then
        [ -n "$NGINX_PID" ] && log "nginx gone or lost workers: restarting"
        stop_nginx
        start_nginx
    fi
}
stop_bg() {   # stop_bg PID SIGNAL [SECS]: signal `timeout` (it passes the signal on), wait, then kill it and its child
    local p=$1 sig=$2 secs=${3:-30} i kids
    kids=$(pgrep -P "$p" || true)
    kill "-$sig" "$p" 2> /dev/null || true
    for i in $(seq 1 $(( secs * 10 ))); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    if kill -0 "$p" 2> /dev/null; then
        log "warning: tracer $p still running $secs s after SIG$sig: killing"
        kill -KILL $kids "$p" 2> /dev/null || true
    fi
    wait "$p" 2> /dev/null || true
    CUR_TRACER=
}
run_nginx() {   # run_nginx CONFIG
    local c=$1 key="nginx.$1" j=$TMPD/cur.json o=$TMPD/cur.out e=$TMPD/cur.err
    ensure_nginx
    local workers pids csv filt
    workers=$(pgrep -P "$NGINX_PID" | sort -n)
    pids="$NGINX_PID $workers"
    csv=$(echo $pids | tr ' ' ',')
    filt=$(for p in $pids; do printf 'pid == %s || ' "$p"; done | sed 's/ || $//')
    local bound=$(( ATTACH_WAIT + WRK_SECS + 10 )) cmd=() sig=INT
    case $c in
        untraced) ;;
        ebpf|ebpf-summary|syslint-strace|alt-*)
            syslint_cmd "$c"
            cmd=("${SCMD[@]}" -q --format json --output-file "$j" -p "$csv" --for "${bound}s") ;;
        agent|agent-nice|agent-count|agent-host|agent-host-count)
            # its CPU time (user, system) goes to the progress log
            cmd=(/usr/bin/time -f "agent-cpu %U %S" "$SYSLINT" agent --window "$AGENT_WINDOW" --every "$AGENT_EVERY" --for "${bound}s")
            case $c in agent-host*) ;; *) cmd+=(-p "$csv") ;; esac
            [ "$c" = agent-nice ] && cmd=(nice -n 19 "${cmd[@]}")
            case $c in *-count) cmd+=(--count-between) ;; esac
            # shellcheck disable=SC2206 # AGENT_ARGS is split into words on purpose
            cmd+=(${AGENT_ARGS:-}) ;;
        strace-c) cmd=(strace -c -f -o /dev/null); for p in $pids; do cmd+=(-p "$p"); done; sig=TERM ;;
        perf) cmd=(perf trace -s -o "$o" -p "$csv") ;;
        bpftrace) cmd=(bpftrace -o "$o" -e "tracepoint:raw_syscalls:sys_enter /$filt/ { @n[args->id] = count(); }") ;;
        syscount) cmd=(syscount) ;;
    esac
    rm -f "$j" "$o" "$e" "$TMPD/wrk.out"
    local tp=
    if [ ${#cmd[@]} -gt 0 ]; then
        # background jobs of a script ignore SIGINT: give it back so the tracer can be stopped
        env --default-signal=INT,QUIT timeout -k 10 "$RUN_TIMEOUT" "${cmd[@]}" > /dev/null 2> "$e" &
        tp=$!
        CUR_TRACER=$tp
        sleep "$ATTACH_WAIT"
        if [ "$c" = bpftrace ]; then   # wait for "Attaching N probes" (compiling can be slow)
            local i
            for i in $(seq 1 100); do grep -q Attaching "$o" "$e" 2> /dev/null && break; sleep 0.1; done
        fi
        if ! kill -0 "$tp" 2> /dev/null; then
            log "warning: $c on nginx: tracer exited early: $(grep -v RLIMIT_MEMLOCK "$e" | head -n 3 | tr '\n' ' ')"
            echo fail > "$TMPD/$key.rc"
            stop_bg "$tp" TERM 5
            return 0
        fi
    fi
    local rc=0
    timeout -k 5 $(( WRK_SECS + 30 )) wrk -t2 -c32 -d"${WRK_SECS}s" "http://127.0.0.1:$NGINX_PORT/" > "$TMPD/wrk.out" 2>&1 || rc=$?
    # timeout sends the tracer's signal on: syslint and perf/bpftrace stop on SIGINT, strace on SIGTERM
    [ -n "$tp" ] && stop_bg "$tp" "$sig"
    CUR_TRACER=
    local rps
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$TMPD/wrk.out")
    if [ "$rc" -ne 0 ] || [ -z "$rps" ]; then
        log "warning: wrk under $c: exit $rc: $(tail -n 3 "$TMPD/wrk.out" | tr '\n' ' ')"
        echo "$rc" > "$TMPD/$key.rc"
        return 0
    fi
    if grep -q 'Non-2xx' "$TMPD/wrk.out"; then log "warning: wrk under $c: $(grep Non-2xx "$TMPD/wrk.out")"; echo non2xx > "$TMPD/$key.rc"; fi
    grep -q 'Socket errors' "$TMPD/wrk.out" && log "  note: $(grep 'Socket errors' "$TMPD/wrk.out")"
    echo "$rps" >> "$TMPD/$key.t"
    record_extra "$c" "$key" "$j" "$o" "$e"
    log "  nginx / $c: $rps req/s$(grep -h '^agent-cpu' "$e" 2> /dev/null | awk '{ printf "; agent CPU %.1f s", $2 + $3 }')$(grep -c 'a window at once' "$e" 2> /dev/null | awk '$1 > 0 { printf "; %d windows started by counts", $1 }')"
    case $c in agent*)
        { grep -h 'a window at once\|not counting' "$e" 2> /dev/null || true; } | sort | uniq -c | sed 's/^/    /' >&2
        # AGENT_LOGS=DIR keeps each agent run's own messages (windows, findings, shedding)
        if [ -n "${AGENT_LOGS:-}" ]; then mkdir -p "$AGENT_LOGS"; cp "$e" "$AGENT_LOGS/$key.$(date +%H%M%S).err"; fi ;;
    esac
}

# ---------------------------------------------------------------- run
WL=($WORKLOADS)
for w in "${WL[@]}"; do
    case $w in getppid|dd|stat|nginx) ;; *) die "unknown workload $w (getppid dd stat nginx)" ;; esac
done
log "rows: ${ROWS[*]}; workloads: ${WL[*]}; rounds: $RUNS; slow tracers at 1/$SLOW_SCALE"
# warm-up, discarded: each workload once untraced (page cache, binaries, nginx's first requests)
for w in "${WL[@]}"; do
    if [ "$w" = nginx ]; then
        ensure_nginx
        timeout -k 5 30 wrk -t2 -c32 -d1s "http://127.0.0.1:$NGINX_PORT/" > /dev/null 2>&1 || true
    else
        workload_cmd "$w" "$(full_n "$w")"; "${WCMD[@]}" > /dev/null 2>&1 || true
    fi
done
for r in $(seq 1 "$RUNS"); do
    log "round $r/$RUNS"
    for w in "${WL[@]}"; do
        for c in "${ROWS[@]}"; do
            if [ "$w" = nginx ]; then run_nginx "$c"; else run_batch "$w" "$c"; fi
        done
    done
done
stop_nginx

# ---------------------------------------------------------------- report
REPORT=$TMPD/report.md
{
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "### Tracing overhead ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "- machine: ${cpu:-unknown}; nproc: $(nproc); RAM: $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo); kernel: $(uname -srm); $(. /etc/os-release 2> /dev/null && echo "$PRETTY_NAME")"
echo "- tools: $(strace -V | head -n 1); $(perf --version); bpftrace $(command -v bpftrace > /dev/null && bpftrace --version | awk '{ print $2 }'); $(nginx -v 2>&1 | sed 's/.*: //'); $(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }')"
[ -x "$SYSLINT" ] && echo "- syslint: $("$SYSLINT" --version 2> /dev/null | head -n 1) ($(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null)$(git -C "$ROOT" diff --quiet 2> /dev/null || echo ', uncommitted changes'))"
echo "- method: $RUNS round(s), every configuration once per round (round-robin, interleaved), median; 1 discarded untraced warm-up per workload; all on loopback"
echo "- time = the workload's own clock around its syscall loop (dd: its copy time), so tracer start-up and report are not in it; end-to-end = wall time of the whole command (median)"
for c in "${!SKIP[@]}"; do echo "- **skipped** $(label "$c"): ${SKIP[$c]}"; done
if [ ${#SKIP[@]} -gt 0 ]; then
    echo "- re-run the skipped rows once available: \`CONFIGS=\"untraced ${!SKIP[*]}\" WORKLOADS=\"$WORKLOADS\" bench/ebpf-overhead.sh\`"
fi
echo
for w in "${WL[@]}"; do
    if [ "$w" = nginx ]; then
        echo "#### nginx, 2 workers, \`wrk -t2 -c32 -d${WRK_SECS}s\` (tracers attached to master and workers)"
        echo
        echo "| configuration | median req/s | throughput lost vs untraced | events lost (max) | syscalls seen (median) |"
        echo "|---|---:|---:|---:|---:|"
    else
        workload_cmd "$w" "$(full_n "$w")"
        case $w in
            getppid) echo "#### getppid: $N_GETPPID \`getppid()\` in a C loop" ;;
            dd) echo "#### dd: \`${WCMD[*]}\`" ;;
            stat) echo "#### stat: $N_STAT \`stat()\`, alternating /etc/hostname and /nonexistent/x" ;;
        esac
        echo
        echo "| configuration | median s | vs untraced | end-to-end s | events lost (max) | syscalls seen (median) |"
        echo "|---|---:|---:|---:|---:|---:|"
    fi
    base=$( [ -s "$TMPD/$w.untraced.t" ] && median "$TMPD/$w.untraced.t" || true)
    dagger=0
    for c in "${ROWS[@]}"; do
        key="$w.$c"
        note=
        if [ -f "$TMPD/$key.rc" ]; then
            if [ "$(cat "$TMPD/$key.rc")" = "nginx only" ]; then note=" (nginx only)"; else note=" (failed: $(cat "$TMPD/$key.rc"))"; fi
        fi
        if [ ! -s "$TMPD/$key.t" ]; then
            echo "| $(label "$c")$note | - | - | - | - |$( [ "$w" = nginx ] || echo ' - |')"
            continue
        fi
        med=$(median "$TMPD/$key.t")
        lost=$( [ -s "$TMPD/$key.lost" ] && maxval "$TMPD/$key.lost" || echo n/a)
        seen=$( [ -s "$TMPD/$key.seen" ] && median "$TMPD/$key.seen" | awk '{ printf "%.0f", $1 }' || echo n/a)
        if [ "$w" = nginx ]; then
            awk -v l="$(label "$c")$note" -v m="$med" -v b="$base" -v lo="$lost" -v se="$seen" 'BEGIN {
                pct = (b > 0) ? sprintf("%.1f%%", (1 - m / b) * 100) : "-"
                printf "| %s | %.0f | %s | %s | %s |\n", l, m, pct, lo, se }'
        else
            scale=$(cat "$TMPD/$key.scale")
            mark=; [ "$scale" -gt 1 ] && { mark=" †"; dagger=$scale; seen="$seen (1/$scale run)"; }
            awk -v l="$(label "$c")$note" -v m="$med" -v b="$base" -v e="$(median "$TMPD/$key.e2e")" -v mk="$mark" -v k="$scale" \
                -v lo="$lost" -v se="$seen" 'BEGIN {
                r = (b > 0) ? sprintf("%.2fx", m / b) : "-"
                ee = (k > 1) ? sprintf("%.2f (1/%d run)", e, k) : sprintf("%.2f", e)
                printf "| %s | %.3f%s | %s | %s | %s | %s |\n", l, m, mk, r, ee, lo, se }'
        fi
    done
    if [ "$w" != nginx ] && [ -s "$TMPD/$w.ebpf.t" ] && [ -s "$TMPD/$w.ebpf-summary.t" ]; then
        echo
        awk -v a="$(median "$TMPD/$w.ebpf.t")" -v b="$(median "$TMPD/$w.ebpf-summary.t")" 'BEGIN {
            printf "Full detail vs in-kernel counting (eBPF row 2 / row 3): **%.2fx** (target <= 1.5x: %s)\n", a / b, (a / b <= 1.5) ? "met" : "NOT met" }'
    fi
    if [ "${dagger:-0}" -gt 1 ]; then
        echo
        echo "† ran 1/$dagger of the calls and multiplied the time by $dagger (tracing cost is per call; SLOW_SCALE=1 for full size)."
    fi
    echo
done
echo "Rows: untraced = the command alone; syslint rows: \`syslint trace --backend B [--summary-only] -q --format json --output-file F -- CMD\` (attach: \`-p PIDS --for $(( ATTACH_WAIT + WRK_SECS + 10 ))s\` as a bound, stopped by SIGINT after wrk); \`strace -c -f -o /dev/null CMD\` (attach: \`-p\` each pid, SIGTERM); \`perf trace -s -o F CMD\` (attach: \`-p PIDS\`, SIGINT; LOST lines summed); bpftrace: \`tracepoint:raw_syscalls:sys_enter\` count map keyed by syscall id for the command and its children (attach: \`pid ==\` master and workers, SIGINT); \`syscount\`: libbpf-tools' syscount with no options (counts every process's syscalls, SIGINT), nginx only."
echo
echo "Total runtime: $(( $(date +%s) - START )) s."
} > "$REPORT"
cat "$REPORT"
mkdir -p "$HERE/data"
OUT=$HERE/data/ebpf-overhead-$(date -u +%Y%m%d-%H%M%S).md
{
    cat "$REPORT"
    echo
    echo "Raw values per round (s, or req/s for nginx; † rows already scaled):"
    echo
    for w in "${WL[@]}"; do
        for c in "${ROWS[@]}"; do
            [ -s "$TMPD/$w.$c.t" ] && echo "- $w / $c: $(paste -sd' ' "$TMPD/$w.$c.t")"
        done
    done
} > "$OUT"
log "wrote $OUT"
