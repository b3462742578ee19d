#!/usr/bin/env bash
# Tracing overhead of `syslint trace` on a workload: wall time untraced, under plain strace
# (same flags syslint uses, output discarded), under `syslint trace --backend strace` and
# `syslint trace --backend ebpf`, interleaved round-robin so all see the same machine state;
# medians of RUNS runs. (bench/ebpf-overhead.sh compares more tracers on more workloads.)
# Usage: bench/trace-overhead.sh [RUNS] [-- CMD ARGS...]   (default: the demo workload)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-7}
shift || true
[ "${1:-}" = "--" ] && shift
CMD=("$@")
[ ${#CMD[@]} -eq 0 ] && CMD=(python3 demo/fetch.py)
SYSLINT=${SYSLINT:-target/release/syslint}
[ -x "$SYSLINT" ] || cargo build --release -q
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
run() { local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
for i in $(seq 1 "$RUNS"); do
  run "${CMD[@]}" >> "$T/plain"
  run strace -f -q -tt -T -yy -s 64 -o /dev/null "${CMD[@]}" >> "$T/strace"
  run "$SYSLINT" trace --backend strace -q -- "${CMD[@]}" >> "$T/syslint"
  run "$SYSLINT" trace --backend ebpf -q -- "${CMD[@]}" >> "$T/ebpf"
done
med() { sort -n "$1" | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
p=$(med "$T/plain"); s=$(med "$T/strace"); y=$(med "$T/syslint"); b=$(med "$T/ebpf")
echo "workload: ${CMD[*]}  ($RUNS runs each, interleaved, median wall ms; $(date -u +%F) on $(nproc) cores)"
echo "| run | median ms | vs untraced |"
echo "|---|---:|---:|"
awk -v p="$p" -v s="$s" -v y="$y" -v b="$b" 'BEGIN {
  printf "| untraced | %d | 1.00x |\n", p
  printf "| strace -f -tt -T -yy -o /dev/null | %d | %.2fx |\n", s, s / p
  printf "| syslint trace --backend strace | %d | %.2fx |\n", y, y / p
  printf "| syslint trace --backend ebpf | %d | %.2fx |\n", b, b / p }'
