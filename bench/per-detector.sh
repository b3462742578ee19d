#!/usr/bin/env bash
# What each detector costs in wall time on one log: the whole analysis, then the same with one
# detector left out (`--ignore NAME`), for every stable detector, interleaved round by round.
#
# Usage: N=5 THREADS=1 bench/per-detector.sh [LOG] [BINARY]
#   LOG     a strace log (default bench/data/big.strace: bench/gen-log.sh 300 makes it)
#   BINARY  the syslint to time (default target/release/syslint)
# Prints, per detector, the median with it left out and what leaving it out saved against the
# median of the whole analysis, most saved first; with mawk's simple program (issue 26's anchor)
# timed in every round for scale. The machine is noisy: a few milliseconds either way is noise
# (the whole run's spread is printed); quote medians over N >= 5 rounds.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOG=${1:-$HERE/data/big.strace}
BIN=${2:-$HERE/../target/release/syslint}
N=${N:-5}
THREADS=${THREADS:-1}
[ -f "$LOG" ] || { echo "no log at $LOG; run bench/gen-log.sh 300 first" >&2; exit 1; }
[ -x "$BIN" ] || { echo "no syslint at $BIN; cargo build --release -p syslint" >&2; exit 1; }
names=$("$BIN" detectors | awk '$1 ~ /^SL[0-9]+$/ && $4 == "stable" { print $2 }')
[ -n "$names" ] || { echo "$BIN lists no stable detectors" >&2; exit 1; }
cat "$LOG" > /dev/null
ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
for _ in $(seq "$N"); do
    echo "(all) $(SYSLINT_THREADS=$THREADS ms "$BIN" analyze --format json "$LOG")"
    for n in $names; do
        echo "$n $(SYSLINT_THREADS=$THREADS ms "$BIN" analyze --format json --ignore "$n" "$LOG")"
    done
    echo "(mawk) $(ms mawk '{ i = index($3, "("); if (i > 1) c[substr($3, 1, i - 1)]++ }' "$LOG")"
done | python3 -c '
import sys, statistics, collections
d = collections.OrderedDict()
for l in sys.stdin:
    k, v = l.split()
    d.setdefault(k, []).append(int(v))
whole = statistics.median(d["(all)"])
print("whole analysis: median %d ms (runs %s); mawk %d ms" % (whole, " ".join(map(str, d["(all)"])), statistics.median(d["(mawk)"])))
rows = [(k, statistics.median(v)) for k, v in d.items() if not k.startswith("(")]
rows.sort(key=lambda r: r[1])
total = 0
for k, m in rows:
    total += whole - m
    print("%-22s left out %6d ms  saves %5d ms  %5.1f%%" % (k, m, whole - m, 100.0 * (whole - m) / whole))
print("sum of the savings: %d ms (%.0f%% of the whole)" % (total, 100.0 * total / whole))
'
