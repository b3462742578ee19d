#!/usr/bin/env bash
# record.sh [VARIANT...]: record every variant (or those named) into traces/ with the flag sets
# f-tt-T-yy, f-tt and f (../record-variants.sh says how), then gzip them all (a Python start-up
# alone is 100 KiB of trace). Needs root (port 53, mount namespace).
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$HERE/../record-variants.sh" "$HERE" "$@" || exit
for f in "$HERE"/traces/*.strace; do [ -e "$f" ] && gzip -9nf "$f"; done
exit 0
