#!/usr/bin/env bash
# How `syslint analyze` merges an `strace -ff` set whose files all overlap in time (a JVM, Go
# or thread-pool program traced with -ff): N files written at the same time, their lines'
# timestamps round-robin across files, plain and gzipped.
#
# Usage: bench/ff-merge.sh [ROUNDS] [BIN...]
#   ROUNDS: interleaved rounds per case (default 3); BIN: binaries to compare side by side
#   (default target/release/syslint). Sets: 600 files x 2,000 lines and 5,000 x 400.
# Env: BENCH_LIMIT (900): seconds a run may take before it is stopped and shown as ">900".
# The lines are those of a real thread's -ff file (recorded here once with strace -ff -tt -T
# of a Python thread pool), cycled, with new timestamps; each set is made once in
# bench/data/ff/ and reused. Prints a table of median wall time and peak RSS per binary and
# case; paste it into bench/RESULTS.md with the machine and date.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
ROUNDS=${1:-3}
LIMIT=${BENCH_LIMIT:-900}   # seconds one run may take (the old merge took minutes)
shift || true
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$ROOT/target/release/syslint")
DATA=$HERE/data/ff
mkdir -p "$DATA"

# one real thread's lines, the template
if [ ! -s "$DATA/template" ]; then
    rec=$(mktemp -d)
    strace -ff -tt -T -o "$rec/t" python3 -c '
import os, threading
def w():
    for i in range(400):
        os.stat("/etc/hostname")
        with open("/etc/passwd", "rb") as f: f.read(100)
        try: os.stat("/nonexistent/%d" % i)
        except OSError: pass
ts = [threading.Thread(target=w) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]' 2>/dev/null
    # the biggest thread file is a worker's; drop its stamps (new ones are written below)
    big=$(ls -S "$rec"/t.* | head -1)
    sed -E 's/^[0-9:.]+ //' "$big" | grep -v '^+++' > "$DATA/template"
    rm -rf "$rec"
fi

make_set() { # NAME FILES LINES
    local dir=$DATA/$1
    [ -f "$dir.done" ] && return 0
    rm -rf "$dir" "$dir.gz" && mkdir -p "$dir" "$dir.gz"
    python3 - "$DATA/template" "$dir" "$2" "$3" <<'PY'
import sys
tpl = [l.rstrip("\n") for l in open(sys.argv[1])]
out, n, lines = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for k in range(n):
    with open(f"{out}/trace.{100000 + k}", "w") as f:
        for j in range(lines):
            us = 36000 * 10**6 + j * n + k   # from 10:00:00, file k's j-th line at j*n+k us
            s, u = divmod(us, 10**6)
            f.write(f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{u:06d} {tpl[(j + k) % len(tpl)]}\n")
PY
    for f in "$dir"/trace.*; do gzip -c "$f" > "$dir.gz/$(basename "$f").gz"; done
    touch "$dir.done"
}
make_set ff600 600 2000
make_set ff5000 5000 400

printf '%-40s %-14s %10s %10s\n' binary case "median s" "peak MiB"
for case in ff600 ff600.gz ff5000 ff5000.gz; do
    declare -A times=() rss=()
    for r in $(seq "$ROUNDS"); do
        for b in "${BINS[@]}"; do
            /usr/bin/time -o "$DATA/time" -f '%e %M %x' timeout "$LIMIT" "$b" analyze --format json "$DATA/$case" \
                >/dev/null 2>&1 || true
            read -r secs kib rc < <(tail -1 "$DATA/time")
            # timeout's 124: stopped at the limit (the time is then a lower bound)
            [ "$rc" = 124 ] && secs=">$LIMIT"
            out="$secs $kib"
            times[$b]+="${out% *} "
            rss[$b]+="${out#* } "
        done
    done
    for b in "${BINS[@]}"; do
        med=$(echo "${times[$b]}" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        [[ "${times[$b]}" == *">"* ]] && med=">$LIMIT (in $(echo "${times[$b]}" | grep -o '>' | wc -l) of $ROUNDS)"
        mem=$(echo "${rss[$b]}" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {printf "%.0f", a[int((NR+1)/2)]/1024}')
        printf '%-40s %-14s %10s %10s\n' "$b" "$case" "$med" "$mem"
    done
    unset times rss
done
