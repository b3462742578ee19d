#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build storm.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-dontneed c-keep c-phase c-jemalloc-nodecay c-jemalloc
#
#  c-dontneed          BAD: 2000 ops writing a 128 KiB region, each followed by
#		madvise(MADV_DONTNEED) of it: every op faults its 32 pages in again
#  c-keep              GOOD: the same ops, the region kept
#  c-phase             NEAR: 8 phases writing 64 MiB, each ending with one madvise(MADV_DONTNEED)
#  c-jemalloc-nodecay  BAD, a real allocator: 2000 malloc(128 KiB)/write/free under jemalloc
#		(LD_PRELOAD) with MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0: each free
#		purges the extent at once with madvise(MADV_DONTNEED)
#  c-jemalloc          GOOD: the same under jemalloc's default decay (10 s): freed extents are
#		reused, nothing purged
# Bounded: storm.c calls alarm(60); strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
env_=()
case "$VARIANT" in
c-dontneed) cmd=(./storm dontneed 2000 128) ;;
c-keep) cmd=(./storm keep 2000 128) ;;
c-phase) cmd=(./storm phase 8 64) ;;
c-jemalloc-nodecay) cmd=(./storm malloc 2000 128); env_=(LD_PRELOAD=$JEMALLOC MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0) ;;
c-jemalloc) cmd=(./storm malloc 2000 128); env_=(LD_PRELOAD=$JEMALLOC) ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
case "$VARIANT" in c-jemalloc*) [ -e "$JEMALLOC" ] || { echo "run.sh: $JEMALLOC is missing (Debian: libjemalloc2)" >&2; exit 3; } ;; esac
WORK="$(mktemp -d /tmp/syslint-lab-madvise-storm.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/storm" "$HERE/storm.c"
cd "$WORK"
env -i PATH=/usr/bin:/bin "${env_[@]}" timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
