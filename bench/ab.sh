#!/usr/bin/env bash
# Interleaved A/B timing of syslint builds or settings on one log, with mawk in every round.
#
# Usage: N=5 bench/ab.sh [LOG] -- 'LABEL|ENV=V ...|BINARY' ...
#   e.g. bench/ab.sh bench/data/big200.strace -- \
#          'old|SYSLINT_THREADS=2|/tmp/syslint-old' 'new|SYSLINT_THREADS=2|target/release/syslint'
# Each round runs every spec once (`BINARY analyze --format json LOG`) and then the mawk
# baseline of bench/run.sh; prints each spec's median, its ratio to mawk's median, and every run.
# Quote only rounds where mawk is steady: the machine's second vCPU is noisy at times.
# ANCHOR=simple times issue 26's anchor instead, mawk merely counting syscall names
# (`$3` up to `(` on a -f -tt log) at about 1.6x the speed of the default program.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOG=$HERE/data/big200.strace
if [ $# -gt 0 ] && [ "$1" != "--" ]; then LOG=$1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { sed -n '2,10p' "$0"; exit 1; }
[ -f "$LOG" ] || { echo "no log at $LOG; run bench/gen-log.sh first" >&2; exit 1; }
N=${N:-5}
MAWK_PROG='{ i = 1; if ($1 ~ /^[0-9]+$/) i = 2; if ($i ~ /^[0-9]+[.:][0-9.:]*$/) i++; p = index($i, "("); if (p > 1) n[substr($i, 1, p - 1)]++ } END { for (k in n) print n[k], k }'
[ "${ANCHOR:-}" = simple ] && MAWK_PROG='{ i = index($3, "("); if (i > 1) c[substr($3, 1, i - 1)]++ }'
cat "$LOG" > /dev/null
now() { date +%s.%N; }
for _ in $(seq "$N"); do
    for spec in "$@"; do
        IFS='|' read -r label envs bin <<< "$spec"
        s=$(now); env $envs "$bin" analyze --format json "$LOG" > /dev/null || true; e=$(now)
        echo "$label $(echo "$e - $s" | bc)"
    done
    s=$(now); mawk "$MAWK_PROG" "$LOG" > /dev/null; e=$(now)
    echo "mawk $(echo "$e - $s" | bc)"
done | python3 -c '
import sys, statistics, collections
d = collections.OrderedDict()
for l in sys.stdin:
    k, v = l.split()
    d.setdefault(k, []).append(float(v))
m = statistics.median(d["mawk"])
for k, v in d.items():
    print("%-16s median %.3f s  %.2fx mawk  runs %s" % (k, statistics.median(v), m / statistics.median(v), " ".join("%.3f" % x for x in v)))
'
