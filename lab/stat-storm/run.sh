#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, run it
# under `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   php-nocache php-cache c-localtime c-tz near-git-status near-localtime-few node-mkdir-each node-mkdir-once
#
# Also (not recorded by record.sh: its traces are large; recorded with -f -tt -T -yy only):
#   npm-install   npm 9+ installing a local tarball of FILES files offline, with a private cache
#
# REQUESTS (default 300) sets the PHP requests, LINES (default 25000) the log lines of the C
# logger, FILES (default 3000; npm-install 300) the files the Node program and npm write. Bounded: stamp.c calls alarm(60); PHP stops after its requests.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
REQUESTS="${REQUESTS:-300}"
LINES="${LINES:-25000}"
FILES_SET="${FILES:-}"
FILES="${FILES:-3000}"
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"
WORK="$(mktemp -d /tmp/syslint-lab-stat-storm.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# a clean environment (no TZ unless a variant sets it), so the traces do not depend on the caller's
trace() { env -i PATH=/usr/bin:/bin "$@"; }

php_setup() {
    need php
    cp "$HERE/app.php" "$WORK/app.php"
    local d="$WORK/src/Vendor/Package/Component/Http/Message/Stream"
    mkdir -p "$d"
    for i in 0 1 2 3 4 5 6 7; do printf '<?php return %d;\n' "$i" > "$d/part$i.php"; done
}
c_setup() {
    need cc
    cc -g -O1 -Wall -o "$WORK/stamp" "$HERE/stamp.c"
}

case "$VARIANT" in
php-nocache)
    php_setup
    trace "$STRACE" -o "$OUT" "$@" php -n -d realpath_cache_size=0 app.php "$REQUESTS" >/dev/null ;;
php-cache)
    php_setup
    trace "$STRACE" -o "$OUT" "$@" php -n app.php "$REQUESTS" >/dev/null ;;
c-localtime)
    c_setup
    trace "$STRACE" -o "$OUT" "$@" ./stamp "$LINES" >/dev/null ;;
c-tz)
    c_setup
    trace TZ=:/etc/localtime "$STRACE" -o "$OUT" "$@" ./stamp "$LINES" >/dev/null ;;
near-localtime-few)
    # the same logger writing 300 lines: 300 stats of /etc/localtime, under the thresholds
    c_setup
    trace "$STRACE" -o "$OUT" "$@" ./stamp 300 >/dev/null ;;
near-git-status)
    # git status twice in a repository of 1,500 files: thousands of successful lstats, each
    # path twice (once per run): a scan, not a storm
    need git
    mkdir repo && cd repo
    git init -q
    for d in $(seq 0 14); do mkdir "d$d"; for f in $(seq 0 99); do echo "$d $f" > "d$d/f$f.txt"; done; done
    git add . && git -c user.name=lab -c user.email=lab@localhost commit -qm files
    trace "$STRACE" -o "$OUT" "$@" sh -c 'git status --porcelain; git status --porcelain' >/dev/null ;;
node-mkdir-each|node-mkdir-once)
    need node
    trace "$STRACE" -o "$OUT" "$@" node "$HERE/mkdir.js" "${VARIANT#node-mkdir-}" "$WORK/out" "$FILES" ;;
npm-install)
    # a package of FILES/20 directories of 20 files, packed, then installed from the tarball:
    # nothing from the network (--offline), npm's cache in the temp dir
    need npm
    mkdir pkg app
    n=$(( ${FILES_SET:-300} / 20 ))
    for d in $(seq 1 "$n"); do
        mkdir -p "pkg/lib/d$((d % 5))/s$d"
        for f in $(seq 1 20); do echo "module.exports = $f;" > "pkg/lib/d$((d % 5))/s$d/f$f.js"; done
    done
    printf '{"name": "labpkg", "version": "1.0.0", "main": "lib/d1/s1/f1.js"}\n' > pkg/package.json
    printf '{"name": "app", "version": "1.0.0"}\n' > app/package.json
    (cd pkg && trace HOME="$WORK" npm pack --silent --cache "$WORK/cache" >/dev/null)
    cd app
    trace HOME="$WORK" "$STRACE" -o "$OUT" "$@" npm install --offline --no-audit --no-fund --ignore-scripts \
        --cache "$WORK/cache" ../pkg/labpkg-1.0.0.tgz >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
