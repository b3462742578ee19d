#!/usr/bin/env bash
# Re-records lab/accept-herd/traces/: every variant under strace 6.1 with three flag sets
#   f-tt-T-yy  -f -tt -T -yy   (sockets decorated with their addresses: TCP:[127.0.0.1:PORT])
#   f-tt       -f -tt          (no -T, no decorations: the listener is found by fd inheritance)
#   f-ttt-T-y  -f -ttt -T -y   (sockets decorated with inode numbers only: socket:[N])
# Traces larger than 64 KiB are gzipped. Never edit the traces by hand: re-run this script.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/traces"
mkdir -p "$OUT"
variants="${*:-c-procs c-procs-exclusive c-procs-reuseport c-threads c-threads-exclusive c-single py-shared py-reuseport nginx nginx-reuseport nginx-mutex}"
for v in $variants; do
    for set in f-tt-T-yy f-tt f-ttt-T-y; do
        case "$set" in
        f-tt-T-yy) flags=(-f -tt -T -yy) ;;
        f-tt) flags=(-f -tt) ;;
        f-ttt-T-y) flags=(-f -ttt -T -y) ;;
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
