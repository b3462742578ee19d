#!/usr/bin/env bash
# Benchmark syslint against simple baselines on the same strace log (warm cache).
#
# Usage: bench/run.sh [-n RUNS] [--cut100] [LOG]
#   LOG       strace log to measure (default bench/data/big.strace)
#   -n RUNS   runs per tool, median is reported (default 5, env RUNS)
#   --cut100  also cut a 100 MB prefix (at a line boundary) to
#             bench/data/big100.strace and report syslint peak RSS for
#             100 MB vs the full LOG
# Env: SYSLINT (default target/dist/syslint, the shipped build that scripts/build-dist.sh makes
# with PGO; target/release/syslint when that is not built), RUNS. When both are built, the
# plain release build is measured too, in the same rounds.
#
# Prints machine info and Markdown table fragments for bench/RESULTS.md.
# 1 MB = 2^20 bytes. All tools run with LC_ALL=C. Runs are interleaved
# (round-robin over tools) so that all tools see the same machine state.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${RUNS:-5}
CUT100=0
LOG=
while [ $# -gt 0 ]; do
    case "$1" in
        -n) RUNS=$2; shift 2 ;;
        --cut100) CUT100=1; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) LOG=$1; shift ;;
    esac
done
LOG=${LOG:-$HERE/data/big.strace}
PLAIN=$ROOT/target/release/syslint
if [ -z "${SYSLINT:-}" ]; then
    SYSLINT=$ROOT/target/dist/syslint
    if [ ! -x "$SYSLINT" ]; then
        echo "note: $SYSLINT not built (scripts/build-dist.sh): measuring the plain release build" >&2
        SYSLINT=$PLAIN
    fi
fi
[ -f "$LOG" ] || { echo "no log at $LOG; run bench/gen-log.sh first" >&2; exit 1; }
if [ ! -x /usr/bin/time ]; then
    echo "installing GNU time for peak RSS" >&2
    apt-get install -y time >/dev/null
fi

TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# Per-syscall-name count: skip optional pid and timestamp (-t/-tt/-ttt),
# take the token before "(". Resumed/signal/exit lines have no "name(" token
# and are not counted (an interrupted call counts once, at its unfinished line).
MAWK_PROG='{
    i = 1
    if ($1 ~ /^[0-9]+$/) i = 2
    if ($i ~ /^[0-9]+[.:][0-9.:]*$/) i++
    p = index($i, "(")
    if (p > 1) n[substr($i, 1, p - 1)]++
}
END { for (k in n) print n[k], k }'

# The platform issue's anchor, exactly as issue 26 names it: mawk merely counting syscall
# names, the third field up to "(" (on a -f -tt log: pid, time, name(...)). Lines whose third
# field is not a call (resumed halves, signals) count nothing. The ratio column "vs simple"
# compares against it.
MAWK_SIMPLE_PROG='{ i = index($3, "("); if (i > 1) c[substr($3, 1, i - 1)]++ } END { for (k in c) print c[k], k }'

cmd_wc=(wc -l)
cmd_grep=(grep -c ' = ')
cmd_mawk=(mawk "$MAWK_PROG")
cmd_mawks=(mawk "$MAWK_SIMPLE_PROG")
cmd_syslint=("$SYSLINT" analyze --format json)
# the same on one core (SYSLINT_THREADS=1), to show what the second core adds
cmd_syslint1=(env SYSLINT_THREADS=1 "$SYSLINT" analyze --format json)
# the reader, model and summary alone (every detector ignored), one core
ALL_DETECTORS=$("$SYSLINT" detectors --format json 2>/dev/null | grep '"name"' | sed 's/.*: "\(.*\)".*/\1/' | paste -sd, -)
cmd_syslint0=(env SYSLINT_THREADS=1 "$SYSLINT" analyze --format json --ignore "$ALL_DETECTORS")
# the plain `cargo build --release` (no PGO, thin LTO), when SYSLINT is another build
cmd_plain=("$PLAIN" analyze --format json)
cmd_plain1=(env SYSLINT_THREADS=1 "$PLAIN" analyze --format json)

TOOLS=(wc grep mawk mawks)
if [ -x "$SYSLINT" ]; then
    TOOLS+=(syslint syslint1 syslint0)
    if [ -x "$PLAIN" ] && [ "$(realpath "$PLAIN")" != "$(realpath "$SYSLINT")" ]; then TOOLS+=(plain plain1); fi
else
    echo "note: $SYSLINT not found; syslint skipped (build with cargo build --release or set SYSLINT=)" >&2
fi
label() {
    case "$1" in
        wc) echo '`wc -l`' ;;
        grep) echo "\`grep -c ' = '\`" ;;
        mawk) echo '`mawk` syscall-name count' ;;
        mawks) echo '`mawk` simple count (`$3` up to `(`: the issue-26 anchor)' ;;
        syslint) echo '`syslint analyze --format json` (all cores)' ;;
        syslint1) echo '`syslint analyze --format json`, one core (`SYSLINT_THREADS=1`)' ;;
        syslint0) echo 'the same, one core, without detectors (reader, model, summary)' ;;
        plain) echo 'plain `cargo build --release` (no PGO), all cores' ;;
        plain1) echo 'plain `cargo build --release` (no PGO), one core' ;;
    esac
}

# run_one TOOL FILE -> appends "seconds" to $TMPD/TOOL.t and "rss_kb" to $TMPD/TOOL.m
run_one() {
    local tool=$1 file=$2 t0 t1 rc=0
    local -n cmd="cmd_$tool"
    t0=$(date +%s%N)
    /usr/bin/time -f %M -o "$TMPD/rss" "${cmd[@]}" "$file" > "$TMPD/$tool.out" 2> "$TMPD/$tool.err" || rc=$?
    t1=$(date +%s%N)
    if [ "$rc" -ne 0 ]; then
        echo "warning: $tool exited with $rc on $file: $(grep -v 'Command exited' "$TMPD/$tool.err" | head -n 3)" >&2
        echo "$rc" > "$TMPD/$tool.rc"
    fi
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >> "$TMPD/$tool.t"
    tail -n 1 "$TMPD/rss" >> "$TMPD/$tool.m"
    case "$tool" in syslint*|plain*) : > "$TMPD/$tool.out" ;; esac   # output not kept
    return 0
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxval() { sort -n "$1" | tail -n 1; }
fmt_rss() { awk -v k="$1" 'BEGIN { if (k >= 1048576) printf "%.2f GB", k / 1048576; else printf "%.1f MB", k / 1024 }'; }

bytes=$(stat -c %s "$LOG")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')

echo "warming page cache for $LOG ($mb MB)" >&2
cat "$LOG" > /dev/null
for tool in "${TOOLS[@]}"; do run_one "$tool" "$LOG"; : > "$TMPD/$tool.t"; : > "$TMPD/$tool.m"; done  # warm-up run, discarded
for r in $(seq 1 "$RUNS"); do
    echo "run $r/$RUNS" >&2
    for tool in "${TOOLS[@]}"; do run_one "$tool" "$LOG"; done
done

# ---------------------------------------------------------------- report
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "### Machine"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- cpu: ${cpu:-unknown}; nproc: $(nproc); RAM: $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)"
echo "- kernel: $(uname -srm)"
echo "- os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
echo "- tools: $(wc --version | head -n 1); $(grep --version | head -n 1); $(mawk -W version 2>&1 | head -n 1)"
if [ -x "$SYSLINT" ]; then echo "- syslint: $("$SYSLINT" --version 2>/dev/null | head -n 1 || echo unknown), \`${SYSLINT#"$ROOT"/}\`"; fi
echo "- log: \`$(basename "$LOG")\`, $bytes bytes ($mb MB), $(cat "$TMPD/wc.out" | awk '{ print $1 }') lines"
echo "- method: warm page cache, $RUNS runs per tool (interleaved, after 1 discarded warm-up), median wall time; LC_ALL=C; 1 MB = 2^20 bytes; peak RSS = max \`/usr/bin/time -f %M\`"
echo
mawk_med=$(median "$TMPD/mawk.t")
simple_med=$(median "$TMPD/mawks.t")
echo "| tool | median s | MB/s | speed vs mawk | vs simple mawk | peak RSS |"
echo "|---|---:|---:|---:|---:|---:|"
for tool in "${TOOLS[@]}"; do
    med=$(median "$TMPD/$tool.t")
    note=
    [ -f "$TMPD/$tool.rc" ] && note=" (exit $(cat "$TMPD/$tool.rc"))"
    awk -v l="$(label "$tool")$note" -v m="$med" -v mb="$mb" -v base="$mawk_med" -v simple="$simple_med" -v rss="$(fmt_rss "$(maxval "$TMPD/$tool.m")")" \
        'BEGIN { printf "| %s | %.3f | %.0f | %.2fx | %.2fx | %s |\n", l, m, mb / m, base / m, simple / m, rss }'
done
[ -x "$SYSLINT" ] || echo "| \`syslint analyze --format json\` | _TODO (binary not built)_ | | | | |"
echo
echo "Sanity: grep count $(cat "$TMPD/grep.out"); mawk distinct syscall names $(wc -l < "$TMPD/mawk.out"), top: $(sort -rn "$TMPD/mawk.out" | head -n 5 | awk '{ printf "%s%s=%s", (NR > 1 ? ", " : ""), $2, $1 }')"

if [ "$CUT100" = 1 ]; then
    CUT=$HERE/data/big100.strace
    if [ "$(realpath "$LOG")" != "$(realpath -m "$CUT")" ]; then   # always re-cut (takes < 1 s)
        N=$((100 * 1048576))
        head -c "$N" "$LOG" > "$CUT.tmp"
        if [ "$(tail -c 1 "$CUT.tmp" | od -An -c | tr -d ' ')" != '\n' ]; then
            partial=$(tail -n 1 "$CUT.tmp" | wc -c)
            truncate -s $(( $(stat -c %s "$CUT.tmp") - partial )) "$CUT.tmp"
        fi
        mv "$CUT.tmp" "$CUT"
        echo "wrote $CUT ($(stat -c %s "$CUT") bytes)" >&2
    fi
    echo
    echo "#### Peak RSS vs input size"
    echo
    if [ -x "$SYSLINT" ]; then
        echo "| input | size | syslint median s | syslint peak RSS | mawk peak RSS |"
        echo "|---|---:|---:|---:|---:|"
        for f in "$CUT" "$LOG"; do
            for t in syslint mawk; do : > "$TMPD/$t.t"; : > "$TMPD/$t.m"; done
            cat "$f" > /dev/null
            for r in 1 2 3; do run_one syslint "$f"; done
            run_one mawk "$f"
            awk -v n="$(basename "$f")" -v s="$(stat -c %s "$f")" -v m="$(median "$TMPD/syslint.t")" \
                -v r="$(fmt_rss "$(maxval "$TMPD/syslint.m")")" -v a="$(fmt_rss "$(maxval "$TMPD/mawk.m")")" \
                'BEGIN { printf "| `%s` | %.1f MB | %.3f | %s | %s |\n", n, s / 1048576, m, r, a }'
        done
    else
        echo "_syslint not built: RSS for 100 MB ($CUT) vs full log to be filled in._"
    fi
fi
