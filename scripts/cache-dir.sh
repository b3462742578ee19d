#!/usr/bin/env bash
# Print the directory where the test tools built once are kept (the collector, helm, a Go
# toolchain): ${SYSLINT_CACHE:-/var/cache/syslint}, made if missing, or, where that cannot be
# written, ${XDG_CACHE_HOME:-~/.cache}/syslint. Exit status 3: neither can be made.
set -euo pipefail
cache="${SYSLINT_CACHE:-/var/cache/syslint}"
if ! mkdir -p "$cache" 2>/dev/null || [[ ! -w "$cache" ]]; then
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/syslint"
    mkdir -p "$cache" || { echo "cache-dir.sh: cannot create a cache directory" >&2; exit 3; }
fi
echo "$cache"
