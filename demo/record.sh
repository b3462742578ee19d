#!/usr/bin/env bash
# Re-record the bundled demo traces.
#
#   demo/record.sh          fetch.strace.gz: strace -f -tt -T -yy of fetch.py (needs strace, python3)
#   demo/record.sh slr      fetch.slr, what scripts/demo.sh analyses: `syslint trace` with eBPF
#                           and sampled stacks, so its findings name their call sites in fetch.py
#
# The .slr is recorded with Python 3.12 or later and `-X perf` (the interpreter writes the perf
# map syslint names Python functions from; Debian 12's Python is 3.11): Debian sid's, in the
# tree scripts/strace-sid.sh makes, with its standard library (libpython3.X-stdlib) installed
# there. The program runs chrooted in that tree, with the demo directory at /demo and this
# machine's /tmp at /tmp (where the perf map goes and syslint reads it): needs root, eBPF and a
# release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" != slr ]; then
    env -i PATH=/usr/bin:/bin strace -f -tt -T -yy -s 64 -o fetch.strace python3 fetch.py
    gzip -9 -f -k fetch.strace
    rm fetch.strace
    ls -l fetch.strace.gz
    exit 0
fi
ROOT=${SYSLINT_SID_ROOT:-/var/cache/syslint/sid-strace}
SYSLINT=${SYSLINT:-../target/release/syslint}
../scripts/strace-sid.sh -V > /dev/null
PY=$(find "$ROOT/usr/bin" -maxdepth 1 -name 'python3.[0-9]*' ! -name '*-config' -type f -printf '%f\n' | sort -V | tail -1)
[ -n "$PY" ] || { echo "no python3.N in $ROOT: run scripts/python-sid.sh -V first" >&2; exit 1; }
if ! chroot "$ROOT" "$PY" -c 'import http.client' 2> /dev/null; then
    chroot "$ROOT" apt-get -o Acquire::Check-Valid-Until=false update -qq
    chroot "$ROOT" apt-get install -y -qq --no-install-recommends "lib$PY-stdlib"
fi
mkdir -p "$ROOT/demo"
mount --bind "$PWD" "$ROOT/demo"
mount --bind /tmp "$ROOT/tmp"
trap 'umount "$ROOT/tmp"; umount "$ROOT/demo"' EXIT
rc=0
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$SYSLINT" trace -q -o fetch.slr -- chroot "$ROOT" "$PY" -X perf /demo/fetch.py > /dev/null || rc=$?
# 1: findings, which is what the demo is for
[ "$rc" -le 1 ] || exit "$rc"
ls -l fetch.slr
