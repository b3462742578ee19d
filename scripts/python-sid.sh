#!/usr/bin/env bash
# Runs Debian sid's Python 3 (3.12 or later, whose `-X perf` writes the perf map syslint names
# Python functions from; Debian 12 has 3.11): `scripts/python-sid.sh ARGS...` is
# `python3 ARGS...` with sid's interpreter, for the call-site test of Python functions.
#
# It lives in the Debian sid tree scripts/strace-sid.sh makes ($SYSLINT_SID_ROOT, default
# /var/cache/syslint/sid-strace; that script includes python3-minimal in a new tree, and this
# one installs it into an older tree once, with the tree's apt). Like sid's strace, it runs
# through sid's own dynamic loader and libraries on this machine's paths: no chroot is entered,
# so the program's files and /tmp (where the perf map goes) are this machine's.
#
# Exit 3 when the tree or its Python cannot be made (no debootstrap, no root, no mirror).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="${SYSLINT_SID_ROOT:-/var/cache/syslint/sid-strace}"
"$HERE/strace-sid.sh" -V >/dev/null || exit 3
py() { find "$ROOT/usr/bin" -maxdepth 1 -name 'python3.[0-9]*' ! -name '*-config' -type f 2>/dev/null | sort -V | tail -1; }
if [ -z "$(py)" ]; then
    echo "python-sid.sh: installing python3-minimal into $ROOT" >&2
    # sid's Release files of the mirror may be past their Valid-Until: the packages still are
    if ! { chroot "$ROOT" apt-get -o Acquire::Check-Valid-Until=false update -qq &&
        chroot "$ROOT" apt-get install -y -qq --no-install-recommends python3-minimal; } >"$ROOT.python.log" 2>&1; then
        echo "python-sid.sh: could not install python3-minimal; its log: $ROOT.python.log" >&2
        exit 3
    fi
    rm -f "$ROOT.python.log"
fi
PY="$(py)"
[ -n "$PY" ] || { echo "python-sid.sh: no python3.N in $ROOT/usr/bin" >&2; exit 3; }
export PYTHONHOME="$ROOT/usr"
exec "$ROOT/lib64/ld-linux-x86-64.so.2" \
    --library-path "$ROOT/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu" \
    "$PY" "$@"
