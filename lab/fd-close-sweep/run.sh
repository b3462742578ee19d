#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build sweep.c in a fresh temp dir, run VARIANT under
# `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-close c-fcntl c-range c-procfd c-few
#
# The nofile limit is set to NOFILE (default 16384; lowered to the hard limit where that is
# smaller, so on such a machine the sweeps are shorter than in the recorded traces): every
# child of the BAD variants sweeps up to it. SPAWNS (default 7) children run one after
# another. Bounded: sweep.c calls alarm(60).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
NOFILE="${NOFILE:-16384}"
SPAWNS="${SPAWNS:-7}"
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-fd-close-sweep.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/sweep" "$HERE/sweep.c"
case "$VARIANT" in
c-close|c-fcntl|c-range|c-procfd|c-few) mode="${VARIANT#c-}" ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
cd "$WORK"
env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@" ./sweep "$mode" "$NOFILE" "$SPAWNS"
