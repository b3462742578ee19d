#!/usr/bin/env bash
# Runs the newest strace (Debian sid's, 7.x) on this machine: `scripts/strace-sid.sh ARGS...`
# is `strace ARGS...` with sid's binary. Made for recording fixtures and for the live tests of
# today's output forms (`-N`, `--color`).
#
# The first run makes a minimal sid tree with debootstrap (about 2 minutes from Debian's
# mirror, 230 MB) in $SYSLINT_SID_ROOT (default /var/cache/syslint/sid-strace) and reuses it
# after (with python3-minimal, for scripts/python-sid.sh); `scripts/strace-sid.sh --update`
# refreshes it. sid's strace runs through sid's own dynamic loader and libraries, so the traced
# program is this machine's, with its paths: no chroot is entered, and no copy of the program
# is needed.
#
# Exit 3 when the tree cannot be made (no debootstrap, no root, no mirror): callers say so.
set -euo pipefail
ROOT="${SYSLINT_SID_ROOT:-/var/cache/syslint/sid-strace}"
MIRROR="${SYSLINT_SID_MIRROR:-http://deb.debian.org/debian}"

make_tree() {
    command -v debootstrap >/dev/null || { echo "strace-sid.sh: debootstrap is not installed" >&2; exit 3; }
    local tmp="$ROOT.new.$$"
    rm -rf "$tmp"
    mkdir -p "$(dirname "$ROOT")"
    echo "strace-sid.sh: making a Debian sid tree with strace in $ROOT (about 2 minutes)" >&2
    if ! debootstrap --variant=minbase --include=strace,python3-minimal sid "$tmp" "$MIRROR" >"$tmp.log" 2>&1; then
        echo "strace-sid.sh: debootstrap failed; its log: $tmp.log" >&2
        rm -rf "$tmp"
        exit 3
    fi
    rm -f "$tmp.log"
    rm -rf "$ROOT"
    mv "$tmp" "$ROOT"
}

if [ "${1:-}" = "--update" ]; then
    make_tree
    exit 0
fi
[ -x "$ROOT/usr/bin/strace" ] || make_tree
exec "$ROOT/lib64/ld-linux-x86-64.so.2" \
    --library-path "$ROOT/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu" \
    "$ROOT/usr/bin/strace" "$@"
