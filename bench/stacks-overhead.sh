#!/bin/sh
# What sampled user stacks cost the traced program (issue 31): N getppid calls traced by the
# eBPF backend without stacks, with sampled stacks (the defaults) and with a stack on every
# call, interleaved round by round, medians and ratios; bytes per stack record; the collector's
# unwinding and symbolization time per stack. Needs root (or CAP_BPF+CAP_PERFMON) and cc.
#
# usage: bench/stacks-overhead.sh [N] [ROUNDS]   (default 1000000 calls, 7 rounds)
set -eu
cd "$(dirname "$0")/.."
echo "machine: $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git rev-parse --short HEAD), date: $(date -u '+%Y-%m-%d %H:%M UTC')"
cargo build --release --locked -q -p syslint-stacks --example stackbench
./target/release/examples/stackbench "${1:-1000000}" "${2:-7}"
