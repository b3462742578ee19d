#!/usr/bin/env bash
# Time to first finding (issue 32, "Performance": for each lab pathology started while the agent
# runs, at most 2 windows): how many of the agent's windows pass between a lab's BAD program
# starting and its finding appearing in the agent's /findings.
#
# One agent (`syslint agent --cgroup /TOP --window WINDOW --every EVERY`) runs throughout. Each
# lab with an `[[ebpf]]` pair in its manifest runs its first BAD variant through its own run.sh,
# in a cgroup of its own below TOP, again and again for HOLD seconds (the pathology persists, as
# a production one does), with a stand-in for strace that runs the lab's command untraced; the
# lab's servers, clients and resolvers are started by its run.sh as in the tests. (Repeating
# only the traced command left a server lab's server waiting for a client that had run once:
# userspace-copy and nagle-delay were "not found" for want of traffic.) The script polls /findings
# every 0.5 s for the lab's detector in that cgroup and reports the windows the agent made
# since the start (the only busy cgroup is the lab's, so they are the lab's windows) and the
# seconds; a lab not found within HOLD is "not found". The window count is the measure: EVERY
# only sets how long the run takes (the agent's default is 60 s; a window is a window).
#
# The CPU budget is scaled with the timeline: the default 5% of a core over 60 s cycles is
# 30% over 10 s ones (CPU_BUDGET overrides it), so the agent sheds here what it would shed at
# its defaults, not more.
#
# A busy host: BUSY=RATE runs bench/workloads/steady.c (RATE syscalls a second, none the kernel
# can fold) in a cgroup of its own below TOP for the whole run, so each window reaches the
# agent's bound of records (--window-records, 200,000 by default) early: at 330000 (what the
# saturated bench nginx and wrk made under full detail) a window lasts ~0.6 s, as there. The
# windows that ended at the bound are counted in the output.
#
# Usage: bench/agent-latency.sh [LAB...]    (as root; default: every lab with an [[ebpf]] pair)
# Env:   WINDOW=2s EVERY=10s (seconds) HOLD=45 CPU_BUDGET SYSLINT=target/dist/syslint BUSY=
# Output: Markdown on stdout and in bench/data/agent-latency-<date>.md; progress on stderr.
# Bounded: HOLD per lab, each lab's run.sh and its stand-in killed by pid, the agent killed at
# exit. Needs what each lab's run.sh needs (a lab that cannot start is reported as such).
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
case "${1:-}" in -h|--help) sed -n '2,30p' "$0"; exit 0 ;; esac
WINDOW=${WINDOW:-2s}
EVERY=${EVERY:-10s}
HOLD=${HOLD:-45}
BUSY=${BUSY:-}
every_s=${EVERY%s}
[[ "$every_s" =~ ^[0-9]+$ ]] || { echo "agent-latency: EVERY in seconds, e.g. 10s" >&2; exit 2; }
CPU_BUDGET=${CPU_BUDGET:-$(awk -v e="$every_s" 'BEGIN { printf "%g%%", 5 * 60 / e }')}
SYSLINT=${SYSLINT:-$ROOT/target/dist/syslint}
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" >&2; }
die() { echo "agent-latency: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "run as root (eBPF, cgroups)"
[ -x "$SYSLINT" ] || die "$SYSLINT is not built (scripts/build-dist.sh, or SYSLINT=target/release/syslint)"
for t in curl python3; do command -v "$t" > /dev/null || die "$t is not installed"; done
CG=/sys/fs/cgroup
[ -f "$CG/cgroup.procs" ] || CG=/sys/fs/cgroup/unified
[ -f "$CG/cgroup.procs" ] || die "no cgroup v2 hierarchy"

labs=("$@")
if [ ${#labs[@]} = 0 ]; then
    for m in "$ROOT"/lab/*/manifest.toml; do
        grep -q '^\[\[ebpf\]\]' "$m" && labs+=("$(basename "$(dirname "$m")")")
    done
fi

WORK=$(mktemp -d /tmp/syslint-agent-latency.XXXXXX)
TOP=syslint-bench-latency-$$
mkdir "$CG/$TOP"
AGENT= RUN= BUSY_PID=
cleanup() {
    [ -n "$RUN" ] && kill -- -"$RUN" 2> /dev/null || true
    [ -n "$BUSY_PID" ] && kill "$BUSY_PID" 2> /dev/null || true
    [ -n "$AGENT" ] && kill "$AGENT" 2> /dev/null || true
    wait 2> /dev/null || true
    for d in "$CG/$TOP"/*/; do [ -d "$d" ] && rmdir "$d" 2> /dev/null; done
    rmdir "$CG/$TOP" 2> /dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# the stand-in: `-o OUT [-flags] [--] CMD...` -> CMD, untraced
cat > "$WORK/strace" << 'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
    case $1 in -o) : > "$2"; shift 2 ;; --) shift; break ;; -*) shift ;; *) break ;; esac
done
exec "$@"
EOF
chmod +x "$WORK/strace"

if [ -n "$BUSY" ]; then
    [[ "$BUSY" =~ ^[0-9]+$ ]] || die "BUSY is a rate of syscalls a second, e.g. 330000"
    gcc -O2 -o "$WORK/steady" "$HERE/workloads/steady.c" || die "cannot build steady.c"
    mkdir -p "$CG/$TOP/busy"
    # bounded: every lab's HOLD and set-up, then it stops by itself (and is killed at exit)
    sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" "$4"' _ "$CG/$TOP/busy" "$WORK/steady" "$BUSY" \
        $(( ${#labs[@]} * (HOLD + 90) + 60 )) &
    BUSY_PID=$!
    log "busy neighbour $BUSY_PID: $BUSY syscalls a second in /$TOP/busy"
fi

"$SYSLINT" agent --cgroup "/$TOP" --window "$WINDOW" --every "$EVERY" --cpu-budget "$CPU_BUDGET" \
    --metrics-listen 127.0.0.1:0 \
    2> "$WORK/agent.err" &
AGENT=$!
for _ in $(seq 50); do grep -q 'serving http://' "$WORK/agent.err" && break; sleep 0.1; done
addr=$(sed -n 's|.*serving http://\([^/]*\)/metrics.*|\1|p' "$WORK/agent.err" | head -1)
[ -n "$addr" ] || { cat "$WORK/agent.err" >&2; die "the agent did not start"; }
log "agent $AGENT at $addr, windows of $WINDOW every $EVERY, cgroup /$TOP"
findings() { curl -s --max-time 5 "http://$addr/findings"; }
# windows that traced something (an idle one, with nothing to watch, counts in "windows" too)
windows() { findings | python3 -c 'import json,sys; d = json.load(sys.stdin); print(d["windows"] - d["idle_windows"])'; }
bounded() { curl -s --max-time 5 "http://$addr/metrics" | awk '$1 == "syslint_bounded_windows_total" { print $2 }'; }
found_in() { # detector cgroup -> 0 when an active finding of it is there
    findings | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(f["detector"] == sys.argv[1] and f.get("cgroup") == sys.argv[2] and f["active"] for f in d["findings"]) else 1)
' "$1" "$2"
}

rows=()
for lab in "${labs[@]}"; do
    m="$ROOT/lab/$lab/manifest.toml"
    [ -f "$m" ] || { rows+=("| $lab | - | - | no such lab |"); continue; }
    detector=$(sed -n 's/^detector = "\(.*\)"/\1/p' "$m" | head -1)
    variant=$(awk '/^\[\[ebpf\]\]/ { f = 1; next } f && /^bad/ { gsub(/"/, "", $3); print $3; exit }' "$m")
    cg="$CG/$TOP/$lab"
    mkdir -p "$cg"
    w0=$(windows)
    t0=$(date +%s.%N)
    # its own process group, in its cgroup, bounded by HOLD (+ the lab's set-up) and killed by pid
    # run.sh again and again until HOLD (each run bounded by HOLD + 60 s)
    setsid sh -c 'echo $$ > "$1/cgroup.procs" || exit 1; end=$(($(date +%s) + $2)); shift 2
        while [ "$(date +%s)" -lt "$end" ]; do timeout "$@" || true; done' _ "$cg" "$HOLD" $((HOLD + 60)) \
        env STRACE="$WORK/strace" "$ROOT/lab/$lab/run.sh" "$variant" "$WORK/$lab.out" \
        > "$WORK/$lab.log" 2>&1 &
    RUN=$!
    result=
    while :; do
        now=$(date +%s.%N)
        if found_in "$detector" "/$TOP/$lab"; then
            w=$(( $(windows) - w0 ))
            result="| $lab | $variant | $w | $(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.1f", b - a }') s |"
            break
        fi
        if ! kill -0 "$RUN" 2> /dev/null; then
            result="| $lab | $variant | - | ended after $(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.0f", b - a }') s, not found: $(tail -1 "$WORK/$lab.log" | cut -c1-80) |"
            break
        fi
        if awk -v a="$t0" -v b="$now" -v h="$HOLD" 'BEGIN { exit !(b - a > h) }'; then
            result="| $lab | $variant | - | not found in $HOLD s ($(( $(windows) - w0 )) windows) |"
            break
        fi
        sleep 0.5
    done
    kill -- -"$RUN" 2> /dev/null || true
    wait "$RUN" 2> /dev/null || true
    RUN=
    rmdir "$cg" 2> /dev/null || true
    log "$result"
    rows+=("$result")
done

out="$ROOT/bench/data/agent-latency-$(date -u +%Y-%m-%d-%H%M).md"
mkdir -p "$(dirname "$out")"
{
    echo "## Time to first finding ($(date -u '+%Y-%m-%d %H:%M') UTC)"
    echo
    echo "Machine: $(uname -r), $(nproc) cores; commit $(git -C "$ROOT" rev-parse --short HEAD); binary $SYSLINT."
    echo "\`syslint agent --cgroup /$TOP --window $WINDOW --every $EVERY --cpu-budget $CPU_BUDGET\`; each lab's first \`[[ebpf]]\` BAD variant"
    echo "through its run.sh, run again and again for $HOLD s in a cgroup of its own."
    if [ -n "$BUSY" ]; then
        echo "Beside a busy neighbour (bench/workloads/steady.c, $BUSY syscalls a second, in /$TOP/busy): $(bounded) of $(windows) windows ended at their bound of records."
    fi
    echo
    echo "| lab | BAD variant | windows until found | time |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} | tee "$out"
log "written: $out"
