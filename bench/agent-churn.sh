#!/usr/bin/env bash
# The agent's own memory and CPU over a long run while short-lived processes come and go
# (issue 32, "Performance": agent RSS and CPU over a 30-minute run with 2,000 short-lived
# processes).
#
# `syslint agent --cgroup /TOP` with its defaults (2 s windows every 60 s, budgets 5% of a core
# and 256 MiB) runs for DURATION seconds while PROCS processes start, one every
# DURATION/PROCS seconds, each in one of 10 cgroups below TOP: in turn a timer-polling BAD
# (lab/timer-polling/timer.c `select20`: select() with a 20 ms timeout), a GOOD (`block`), each
# living 1-5 s, and `true`. Every 100 processes the cgroups that are empty are removed and made
# again, so the agent sees cgroups come and go too. Every 10 s the agent's resident size and CPU
# seconds are sampled; at the end its peak (VmHWM, /usr/bin/time), total CPU, windows and
# findings. A leak shows as resident size growing from the first third to the end.
#
# Usage: bench/agent-churn.sh            (as root: eBPF and cgroups need it)
# Env:   DURATION=1800 PROCS=2000 SYSLINT=target/dist/syslint (scripts/build-dist.sh builds it)
# Output: Markdown on stdout and in bench/data/agent-churn-<date>.md, the samples beside it
# (.csv); progress on stderr. Bounded: the agent's --for, timer.c's alarm(30), and every
# process started is killed by pid at exit.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,19p' "$0"; exit 0 ;; esac
DURATION=${DURATION:-1800}
PROCS=${PROCS:-2000}
SYSLINT=${SYSLINT:-$ROOT/target/dist/syslint}
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" >&2; }
die() { echo "agent-churn: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (eBPF, cgroups)"
[ -x "$SYSLINT" ] || die "$SYSLINT is not built (scripts/build-dist.sh, or SYSLINT=target/release/syslint)"
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (apt-get install time)"
command -v cc > /dev/null || die "cc is not installed"
CG=/sys/fs/cgroup
[ -f "$CG/cgroup.procs" ] || CG=/sys/fs/cgroup/unified
[ -f "$CG/cgroup.procs" ] || die "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified"

WORK=$(mktemp -d /tmp/syslint-agent-churn.XXXXXX)
TOP=syslint-bench-churn-$$
mkdir "$CG/$TOP"
kids=()
AGENT=
cleanup() {
    [ -n "$AGENT" ] && kill "$AGENT" 2> /dev/null || true
    for p in "${kids[@]}"; do kill "$p" 2> /dev/null || true; done
    wait 2> /dev/null || true
    for d in "$CG/$TOP"/c*; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done
    rmdir "$CG/$TOP" 2> /dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -o "$WORK/timer" "$ROOT/lab/timer-polling/timer.c"
for i in $(seq 0 9); do mkdir "$CG/$TOP/c$i"; done

/usr/bin/time -o "$WORK/agent.time" -f "%M %U %S %e" \
    "$SYSLINT" agent --cgroup "/$TOP" --metrics-listen 127.0.0.1:0 --for "${DURATION}s" \
    2> "$WORK/agent.err" &
AGENT=$!
sleep 1
apid=$(pgrep -P "$AGENT" -x syslint || true)
[ -n "$apid" ] || { cat "$WORK/agent.err" >&2; die "the agent did not start"; }
log "agent pid $apid, cgroup /$TOP, $PROCS processes over $DURATION s"

DATA_DIR="$ROOT/bench/data"
mkdir -p "$DATA_DIR"
STAMP=$(date -u +%Y-%m-%d-%H%M)
CSV="$DATA_DIR/agent-churn-$STAMP.csv"
echo "seconds,rss_kb,cpu_s" > "$CSV"
(
    t0=$(date +%s)
    while kill -0 "$apid" 2> /dev/null; do
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$apid/status" 2> /dev/null || true)
        cpu=$(awk '{ sub(/.*\) /, ""); printf "%.2f", ($12 + $13) / 100 }' "/proc/$apid/stat" 2> /dev/null || true)
        [ -n "$rss" ] && echo "$(( $(date +%s) - t0 )),$rss,$cpu" >> "$CSV"
        sleep 10
    done
) &
SAMPLER=$!

gap=$(awk -v d="$DURATION" -v n="$PROCS" 'BEGIN { printf "%.3f", d / n }')
started=0 remade=0
for i in $(seq 1 "$PROCS"); do
    kill -0 "$apid" 2> /dev/null || { log "the agent ended early"; break; }
    d="$CG/$TOP/c$(( i % 10 ))"
    [ -d "$d" ] || mkdir "$d"
    delay=$(( 1000 + (i * 397) % 4000 ))
    case $(( i % 3 )) in
        0) cmd=("$WORK/timer" select20 "$delay") ;;
        1) cmd=("$WORK/timer" block "$delay") ;;
        *) cmd=(/bin/true) ;;
    esac
    sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$d" "${cmd[@]}" > /dev/null 2>&1 &
    kids+=($!)
    started=$((started + 1))
    if (( i % 100 == 0 )); then
        # the cgroups empty now go and come back
        for c in "$CG/$TOP"/c*; do
            if [ ! -s "$c/cgroup.procs" ] && rmdir "$c" 2> /dev/null; then
                mkdir "$c"
                remade=$((remade + 1))
            fi
        done
        # reap the ended ones so the list stays short
        alive=()
        for p in "${kids[@]}"; do kill -0 "$p" 2> /dev/null && alive+=("$p"); done
        kids=("${alive[@]}")
        log "$i processes started, $remade cgroups removed and made again"
    fi
    sleep "$gap"
done
log "all started; waiting for the agent's --for"
wait "$AGENT" || true
AGENT=
kill "$SAMPLER" 2> /dev/null || true
read -r maxrss user sys wall < "$WORK/agent.time"
closing=$(grep -E '^syslint agent: [0-9]+ windows? \(' "$WORK/agent.err" | tail -1)
findings=$(grep -cE '^  (\(gone\) )?[a-z-]+ (info|warning|error) in ' "$WORK/agent.err" || true)
third() { awk -F, -v at="$1" 'NR > 1 && $1 >= at { print $2; exit }' "$CSV"; }
rss_third=$(third $((DURATION / 3)))
rss_end=$(awk -F, 'NR > 1 { r = $2 } END { print r }' "$CSV")
out="$DATA_DIR/agent-churn-$STAMP.md"
{
    echo "## The agent over $((DURATION / 60)) minutes of short-lived processes ($(date -u '+%Y-%m-%d %H:%M') UTC)"
    echo
    echo "Machine: $(uname -r), $(nproc) cores; commit $(git -C "$ROOT" rev-parse --short HEAD); binary $SYSLINT."
    echo "\`syslint agent --cgroup /$TOP --for ${DURATION}s\` (defaults: 2 s windows every 60 s, budgets 5% of a core and 256 MiB);"
    echo "$started processes started (timer-polling BAD, GOOD, \`true\`, one every $gap s, 1-5 s each) in 10 cgroups, $remade cgroups removed and made again."
    echo
    echo "| agent | value |"
    echo "|---|---|"
    echo "| windows | ${closing:-?} |"
    echo "| findings kept (listed at exit) | $findings |"
    echo "| peak resident (VmHWM) | $((maxrss / 1024)) MiB |"
    echo "| resident at a third of the run / at the end | $(( ${rss_third:-0} / 1024 )) MiB / $(( ${rss_end:-0} / 1024 )) MiB |"
    echo "| CPU (user + system) | $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f s", u + s }') |"
    echo "| CPU, share of one core over the run | $(awk -v u="$user" -v s="$sys" -v w="$wall" 'BEGIN { printf "%.2f%%", 100 * (u + s) / w }') |"
    echo
    echo "Samples (every 10 s): $(basename "$CSV")."
} | tee "$out"
log "written: $out"
