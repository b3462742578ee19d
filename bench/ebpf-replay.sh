#!/bin/sh
# eBPF path: how many records one analysis core takes (decode, +format, +analysis), this
# checkout against another revision, on the same .slr recording. The example
# (crates/analyze/examples/ebpf_replay.rs) is copied into the other revision, so it can be one
# from before the example existed. Runs alternate between the two builds; prints each run's
# table and the medians of the `+analysis` records/s with their ratio (this / base).
#
#   bench/ebpf-replay.sh REC.slr [BASE_REV] [RUNS] [ROUNDS]
#
# REC.slr: `syslint trace -o REC.slr -- COMMAND` (bench/README.md). BASE_REV defaults to
# 7b24d3a (before the raw arguments), RUNS to 5, ROUNDS (inside each run) to 5.
set -eu
rec=${1:?usage: bench/ebpf-replay.sh REC.slr [BASE_REV] [RUNS] [ROUNDS]}
base=${2:-7b24d3a}
runs=${3:-5}
rounds=${4:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${TMPDIR:-/tmp}/syslint-ebpf-replay-$base
mkdir -p "$work/src"
if [ ! -f "$work/src/Cargo.toml" ]; then
    git -C "$here" archive "$base" | tar -x -C "$work/src"
fi
mkdir -p "$work/src/crates/analyze/examples/common"
cp "$here/crates/analyze/examples/ebpf_replay.rs" "$work/src/crates/analyze/examples/"
cp "$here/crates/analyze/examples/common/rounds.rs" "$work/src/crates/analyze/examples/common/"
echo "building $base and this checkout (release)..." >&2
(cd "$work/src" && CARGO_TARGET_DIR="$work/target" cargo build -q --release -p syslint-analyze --example ebpf_replay)
(cd "$here" && cargo build -q --release -p syslint-analyze --example ebpf_replay)
a="$work/target/release/examples/ebpf_replay"
b="$here/target/release/examples/ebpf_replay"
: > "$work/base.txt"
: > "$work/this.txt"
: > "$work/base.log"
: > "$work/this.log"
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    echo "run $i/$runs: $base" >&2
    "$a" "$rec" "$rounds" | tee -a "$work/base.log" | awk -F'|' '/\+analysis/ { print $4 }' >> "$work/base.txt"
    echo "run $i/$runs: this checkout" >&2
    "$b" "$rec" "$rounds" | tee -a "$work/this.log" | awk -F'|' '/\+analysis/ { print $4 }' >> "$work/this.txt"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mb=$(med "$work/base.txt")
mt=$(med "$work/this.txt")
echo "tables: $work/base.log, $work/this.log"
echo "| build | +analysis records/s (median of $runs runs) |"
echo "|---|---:|"
echo "| $base | $mb |"
echo "| this checkout | $mt |"
awk -v a="$mb" -v b="$mt" 'BEGIN { printf "ratio this/%s: %.2f\n", "'"$base"'", b / a }'
