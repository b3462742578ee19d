#!/usr/bin/env bash
# record-variants.sh LABDIR [VARIANT...]: record every variant of lab LABDIR (those its run.sh
# lists on its "#   " lines), or those named, under strace 6.1 into
# traces/<variant>.<flagset>.strace (gzipped when over 256 KiB), with the flag sets
#   f-tt-T-yy  -f -tt -T -yy   (timestamps, durations, fd paths and sockets)
#   f-tt       -f -tt          (timestamps only)
#   f          -f              (neither: count-based rules only)
# Each recording is a real run of run.sh; nothing is edited afterwards.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: record-variants.sh LABDIR [VARIANT...]" >&2; exit 2; }
HERE="$(cd "$1" && pwd)"
shift
STRACE="${STRACE:-strace}"
case "$("$STRACE" -V | head -n1)" in
    *"version 6.1"*) ;;
    *) echo "record.sh: warning: the traces were made with strace 6.1, you have: $("$STRACE" -V | head -n1)" >&2 ;;
esac
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=($(sed -n 's/^#   //p' "$HERE/run.sh"))
mkdir -p "$HERE/traces"
for v in "${variants[@]}"; do
    for set in f-tt-T-yy f-tt f; do
        case "$set" in
            f-tt-T-yy) flags=(-f -tt -T -yy) ;;
            f-tt) flags=(-f -tt) ;;
            f) flags=(-f) ;;
        esac
        out="$HERE/traces/$v.$set.strace"
        rm -f "$out" "$out.gz"
        echo "recording $v.$set" >&2
        "$HERE/run.sh" "$v" "$out" "${flags[@]}"
        if [ "$(stat -c %s "$out")" -gt 262144 ]; then gzip -9n "$out"; fi
    done
done
