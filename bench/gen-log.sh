#!/usr/bin/env bash
# Generate a large, realistic multi-process strace log.
# Usage: bench/gen-log.sh [SIZE_MB] [OUT]   (defaults: 1024, bench/data/big.strace)
# Env: BENCH_MAX_ROUNDS (400), BENCH_MAX_SECONDS (5400), BENCH_PORT (18473)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIZE_MB=${1:-1024}
OUT=${2:-$HERE/data/big.strace}
mkdir -p "$(dirname "$OUT")"
OUT=$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")
for t in strace nginx wrk php tar gzip find grep curl; do
    command -v "$t" >/dev/null || { echo "missing tool: $t (apt-get install strace nginx-light wrk php-cli curl)" >&2; exit 1; }
done
rm -f "$OUT"
echo "generating ~${SIZE_MB} MB strace log into $OUT" >&2
t0=$(date +%s)
# The log may overshoot SIZE_MB by up to one round (size is checked between rounds).
BENCH_OUT="$OUT" BENCH_SIZE_MB="$SIZE_MB" \
    strace -f -tt -T -yy -s 128 -o "$OUT" bash "$HERE/workload.sh"
t1=$(date +%s)
bytes=$(stat -c %s "$OUT")
echo "wrote $OUT: $bytes bytes, $(wc -l < "$OUT") lines in $((t1 - t0)) s" >&2
