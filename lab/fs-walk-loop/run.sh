#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build a small tree in a fresh temp dir, run VARIANT's walk
# of it under `strace -o OUT FLAGS...`, remove the temp dir. Exit status: the tracee's (find's
# status 1 for the loop it reports is taken as success).
#
# Variants (README.md says what each shows and what syslint reports):
#   py-walk-follow py-glob py-walk-nofollow find-L find near-deep near-ls-twice
#
# The tree (`tree/`): a/ and b/ with 50 files each, and a/up -> .. (a link back to the top: a
# cycle, as a "current" link to a parent, a bind mount or a home directory linked into itself
# makes). near-deep walks `deep/`: 30 nested directories, 5 files each, no link. Bounded: a walk
# that follows the cycle ends when the kernel refuses the 41st link in one path (ELOOP); every
# command runs under timeout 60.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
case "$VARIANT" in
py-walk-follow) cmd=("$PY" "$HERE/walk.py" follow tree) ;;
py-glob) cmd=("$PY" "$HERE/walk.py" glob tree) ;;
py-walk-nofollow) cmd=("$PY" "$HERE/walk.py" nofollow tree) ;;
find-L) cmd=(find -L tree) ;;
find) cmd=(find tree) ;;
near-deep) cmd=("$PY" "$HERE/walk.py" follow deep) ;;
near-ls-twice) cmd=(sh -c 'ls -R tree; ls -R tree') ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$PY" find; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-fs-walk-loop.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
mkdir -p tree/a tree/b
for i in $(seq 1 50); do : > "tree/a/f$i"; : > "tree/b/f$i"; done
ln -s .. tree/a/up
d=deep
for i in $(seq 1 30); do d="$d/d$i"; mkdir -p "$d"; for j in 1 2 3 4 5; do : > "$d/f$j"; done; done
status=0
env -i PATH=/usr/bin:/bin timeout 60 "$STRACE" -o "$OUT" "$@" "${cmd[@]}" >/dev/null 2>&1 || status=$?
# find reports the loop it detected with status 1; anything else is a failure
if [ "$status" -ne 0 ] && ! { [ "$VARIANT" = find-L ] && [ "$status" -eq 1 ]; }; then exit "$status"; fi
exit 0
