#!/usr/bin/env bash
# Fuzz every reader and decoder for a bounded time (libFuzzer via cargo-fuzz, nightly Rust).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   default: 300 s each for strace_log recording report_json arguments config
#
# The corpora start from the recorded traces (every log under tests/fixtures and lab/, their
# starts and excerpts from their middles, and ../shared/strace-corpus when it is there), the
# .slr fixtures, JSON reports of the fixtures and real argument lists; they grow in
# fuzz/corpus/TARGET (not committed). A crash, hang or broken property leaves its input in
# fuzz/artifacts/TARGET/: copy it to fuzz/regressions/TARGET/ with the fix, and
# crates/fuzzing/tests/regressions.rs replays it in CI.
# Each run appends a line (target, seconds, executions, coverage, result) to fuzz/runs.log.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SECS=${1:-300}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(strace_log recording report_json arguments config)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
cd "$ROOT/fuzz"
cargo +nightly fuzz build -O -s none >/dev/null
cargo build --release --manifest-path "$ROOT/Cargo.toml" -p syslint >/dev/null
SYSLINT="$ROOT/target/release/syslint"

# the first 64 KiB of a trace (libFuzzer keeps the first -max_len bytes of each)
head64() { head -c 65536 | awk 'BEGIN{ORS=""} {print $0 "\n"}' | head -c 65536; }
traces() {
    # every recorded log: each strace option set, strace 7, terminal -f output, collectors'
    # prefixes, the pasted corpus, every lab
    find "$ROOT/tests/fixtures" "$ROOT/lab" -path '*/programs' -prune -o -type f \
        \( -name '*.strace*' -o -name '*.txt' -o -name '*.log' \) -print 2>/dev/null | sort
    local shared=${SYSLINT_SHARED:-$ROOT/../shared}/strace-corpus
    [ -d "$shared" ] && ls "$shared"/* 2>/dev/null
    true
}
cat_any() { case "$1" in *.gz) zcat "$1" ;; *) cat "$1" ;; esac; }

seed() {
    local t=$1 dir=corpus/$1
    mkdir -p "$dir"
    [ -n "$(ls -A "$dir")" ] && return 0
    case $t in
        strace_log)
            for f in $(traces); do
                cat_any "$f" | head64 > "$dir/$(basename "$f").seed" || true
                # and an excerpt from the middle, cut mid-line at both ends, as people paste
                # them (parallel and sequential reading must agree on those too)
                local size; size=$(cat_any "$f" | wc -c)
                [ "$size" -gt 20000 ] && cat_any "$f" | tail -c +$((size / 2 + 7)) | head -c 12000 \
                    > "$dir/$(basename "$f").mid" || true
            done ;;
        recording)
            for f in "$ROOT"/tests/fixtures/recordings/*.slr; do zstd -dc "$f" > "$dir/$(basename "$f").body"; done ;;
        report_json)
            for f in "$ROOT"/tests/fixtures/traces/*-tt-T-yy*.strace; do
                "$SYSLINT" analyze --format json "$f" > "$dir/$(basename "$f").json" 2>/dev/null || true
            done ;;
        arguments)
            for f in $(traces | head -40); do
                cat_any "$f" | grep -o '[a-z0-9_]*(.*) = .*' | head -20 | sed 's/^[a-z0-9_]*(\(.*\)) = \(.*\)$/\1\n\2/' \
                    | split -l 2 - "$dir/$(basename "$f")." || true
            done ;;
        config)
            printf '[busy-poll]\nmin_calls = 10\n' > "$dir/a.toml"
            printf '[small-io]\nmax_bytes = 64\n[fsync-storm]\n' > "$dir/b.toml" ;;
    esac
}

mkdir -p "$ROOT/fuzz/regressions"
for t in "${TARGETS[@]}"; do
    seed "$t"
    log=$(mktemp)
    set +e
    started=$SECONDS
    cargo +nightly fuzz run -O -s none "$t" "corpus/$t" -- -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -max_len=16384 -print_final_stats=1 -dict="$ROOT/fuzz/strace.dict" >"$log" 2>&1
    rc=$?
    ran=$((SECONDS - started))
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
    result=ok
    [ $rc -eq 0 ] || result="FAILED (exit $rc; see fuzz/artifacts/$t/ and $log)"
    # the time it ran (a failure stops it before the time asked), which counts towards the hour
    line="$(date -u +%Y-%m-%dT%H:%MZ) $t ${ran}s (of ${SECS}s asked) executions=$execs coverage=$cov $result"
    echo "$line" | tee -a "$ROOT/fuzz/runs.log"
    [ $rc -eq 0 ] && rm -f "$log"
done
