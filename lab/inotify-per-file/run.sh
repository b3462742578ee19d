#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build watch.c and a tree of 3,000 empty files in 65
# directories in a fresh temp dir, run VARIANT on the tree under `strace -o OUT FLAGS...`,
# remove the temp dir. Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   c-per-file c-onlydir c-per-dir c-few tail-few
#
#  per-file  BAD: inotify_add_watch on every file and directory (3,065 watches)
#  onlydir   BAD: every entry offered with IN_ONLYDIR: 3,000 ENOTDIR, 65 watches (powerline#581)
#  per-dir   GOOD: a watch per directory only (65)
#  few       NEAR: an editor watching its 20 open files
# tail-few: NEAR, a real tool: GNU `tail -f` following 20 files of the tree for 1 s (a watch each)
# Bounded: watch.c calls alarm(60) and walks the tree once; strace runs under timeout 120.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
CC="${CC:-cc}"
case "$VARIANT" in
c-per-file) mode=per-file ;;
c-onlydir) mode=onlydir ;;
c-per-dir) mode=per-dir ;;
c-few) mode=few ;;
tail-few) mode=tail ;;
*) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
for tool in "$STRACE" "$CC"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (scripts/test.sh installs it)" >&2; exit 3; }
done
WORK="$(mktemp -d /tmp/syslint-lab-inotify-per-file.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
"$CC" -g -O1 -Wall -o "$WORK/watch" "$HERE/watch.c"
# the tree: 4 x 15 directories of 50 files each
for a in 1 2 3 4; do
    for b in $(seq -w 1 15); do
        d="$WORK/tree/a$a/b$b"
        mkdir -p "$d"
        (cd "$d" && touch $(seq -f 'f%02g.txt' 1 50))
    done
done
cd "$WORK"
if [ "$mode" = tail ]; then
    # tail exits at the signal: its status is timeout's 124, which is the expected end here
    env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" timeout 1 tail -q -f tree/a1/b01/f0{1..9}.txt tree/a1/b01/f1{0..9}.txt tree/a1/b01/f20.txt >/dev/null || [ $? = 124 ]
else
    env -i PATH=/usr/bin:/bin timeout 120 "$STRACE" -o "$OUT" "$@" ./watch "$mode" tree
fi
