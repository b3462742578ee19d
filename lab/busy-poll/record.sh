#!/usr/bin/env bash
# Re-records lab/busy-poll/traces/: every variant under strace 6.1 with three flag sets
#   f-tt-T-yy  -f -tt -T -yy   (timestamps, durations, socket endpoints)
#   f-tt       -f -tt          (timestamps only: no -T, no -yy)
#   f          -f              (no timestamps at all: count-based)
# Traces larger than 64 KiB are gzipped. Never edit the traces by hand: re-run this script.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/traces"
mkdir -p "$OUT"
variants="${*:-c-poll0 c-epoll0 c-select0 c-eagain c-yield c-timeout c-fewpolls c-epoll php-spin php-select curl-parallel}"
for v in $variants; do
    for set in f-tt-T-yy f-tt f; do
        case "$set" in
        f-tt-T-yy) flags=(-f -tt -T -yy) ;;
        f-tt) flags=(-f -tt) ;;
        f) flags=(-f) ;;
        esac
        file="$OUT/$v.$set.strace"
        rm -f "$file" "$file.gz"
        echo "recording $v.$set" >&2
        "$HERE/run.sh" "$v" "$file" "${flags[@]}"
        if [ "$(stat -c %s "$file")" -gt 65536 ]; then
            gzip -n -9 "$file"
        fi
    done
done
echo "done: $(ls "$OUT" | wc -l) files in $OUT" >&2
# java-hello.slr (eBPF) is recorded by record-java.sh
