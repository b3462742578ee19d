#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, run
# it under `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   php-include-bad php-include-caches php-include-short php-include-good
#   c-search-bad c-search-good py-spawn-bad py-spawn-good
#   near-py-imports near-py-json near-gcc near-ls
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"

WORK="$(mktemp -d /tmp/syslint-lab-fls.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# a clean environment, so the traces do not depend on the caller's PATH or LD_* variables
trace() { env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@"; }

php_setup() {
    need php
    cp "$HERE/include.php" "$WORK/include.php"
    mkdir -p "$WORK/lib"
    for i in 0 1 2 3 4 5 6 7 8 9; do printf '<?php return %d;\n' "$i" > "$WORK/lib/part$i.php"; done
}

case "$VARIANT" in
php-include-bad|php-include-short|php-include-good)
    php_setup
    trace "$@" php -n include.php "${VARIANT#php-include-}" 50 ;;
php-include-caches)
    # the bad include_path with opcache on and a large, long-lived realpath cache
    php_setup
    php -n -d zend_extension=opcache.so -r 'exit(function_exists("opcache_get_status") ? 0 : 1);' \
        || { echo "run.sh: PHP's opcache extension does not load (php-opcache)" >&2; exit 3; }
    trace "$@" php -n -d zend_extension=opcache.so -d opcache.enable_cli=1 \
        -d realpath_cache_size=64M -d realpath_cache_ttl=3600 include.php bad 50 ;;
c-search-bad|c-search-good)
    need cc
    cc -g -O1 -Wall -o "$WORK/search" "$HERE/search.c"
    mkdir -p "$WORK/data"
    for i in 0 1 2 3 4 5 6 7; do echo "data $i" > "$WORK/data/name$i.dat"; done
    trace "$@" ./search "${VARIANT#c-search-}" "$WORK" 4 20 ;;
py-spawn-bad|py-spawn-good)
    [ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
    trace "$@" "$PY" "$HERE/spawn.py" "${VARIANT#py-spawn-}" "$WORK" 60 ;;
near-py-imports)
    [ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
    mkdir -p "$WORK/mods"
    for i in $(seq 0 29); do mkdir -p "$WORK/empty$i"; echo "VALUE = $i" > "$WORK/mods/mod$i.py"; done
    trace "$@" "$PY" -B "$HERE/imports.py" "$WORK" ;;
near-py-json)
    [ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
    trace "$@" "$PY" -c "import json" ;;
near-gcc)
    need gcc
    printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' > hello.c
    trace "$@" gcc -c hello.c ;;
near-ls)
    trace "$@" ls -la /usr/lib >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
