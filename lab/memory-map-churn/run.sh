#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build req.c in a fresh temp dir (or take req.py), run
# VARIANT under `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-64m-each c-64m-nommap c-64m-reuse c-64m-tuned c-256k-each c-256k-fixed py-64m-each py-64m-reuse
#
# c-64m-*: 30 requests with a 64 MiB buffer each (above glibc's largest mmap threshold, 32 MiB):
#  each    malloc/free per request: an mmap and a munmap per request
#  nommap  the same with GLIBC_TUNABLES=glibc.malloc.mmap_max=0: the heap grows and shrinks
#		(brk up and down) per request instead
#  reuse   one buffer for all requests
#  tuned   malloc/free per request with mmap_max=0 and trim_threshold=256 MiB: the heap keeps
#		the memory, no system call per request
# c-256k-*: 1000 requests with a 256 KiB buffer each:
#  each    glibc's dynamic threshold: the first free of an mmapped block raises the threshold
#		above 256 KiB, so one mmap/munmap and then the heap
#  fixed   GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 (a fixed threshold turns the
#		dynamic one off): an mmap and a munmap per request
# py-64m-*: req.py, the same as c-64m-each / c-64m-reuse in CPython (bytearray per request).
# Bounded: req.c calls alarm(60); strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
PY=/usr/bin/python3
tun=()
case "$VARIANT" in
c-64m-each) cmd=(./req each 65536 30) ;;
c-64m-nommap) cmd=(./req each 65536 30); tun=(GLIBC_TUNABLES=glibc.malloc.mmap_max=0) ;;
c-64m-reuse) cmd=(./req reuse 65536 30) ;;
c-64m-tuned) cmd=(./req each 65536 30); tun=(GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=268435456) ;;
c-256k-each) cmd=(./req each 256 1000) ;;
c-256k-fixed) cmd=(./req each 256 1000); tun=(GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072) ;;
py-64m-each) cmd=("$PY" "$HERE/req.py" each 65536 30) ;;
py-64m-reuse) cmd=("$PY" "$HERE/req.py" reuse 65536 30) ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$CC" "$PY"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-memory-map-churn.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/req" "$HERE/req.c"
cd "$WORK"
env -i PATH=/usr/bin:/bin "${tun[@]}" timeout 120 "$STRACE" -o "$OUT" "$@" "${cmd[@]}"
