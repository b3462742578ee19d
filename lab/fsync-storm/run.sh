#!/usr/bin/env bash
# run.sh VARIANT OUT [STRACE FLAGS...]: build what VARIANT needs in a fresh temp dir, run
# it under `strace -o OUT FLAGS...`, remove the temp dir (and every file the run wrote).
# Exit status: the tracee's.
#
# Variants (README.md says what each shows and what syslint reports):
#   sqlite-py-autocommit sqlite-py-batch sqlite-py-wal
#   sqlite-cli-autocommit sqlite-cli-batch
#   c-fsync-each c-fsync-batch c-osync near-save
#   dpkg-install
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: run.sh VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
VARIANT="$1"; OUT="$2"; shift 2
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
STRACE="${STRACE:-strace}"
PY=/usr/bin/python3
ROWS=500
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is not installed (scripts/test.sh installs it)" >&2; exit 3; }; }
need "$STRACE"

# under /var/tmp: a real disk file system on Debian (/tmp may be a tmpfs, where a flush
# costs nothing and the lab would show nothing of what it costs)
WORK="$(mktemp -d /var/tmp/syslint-lab-fsync.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
trace() { env -i PATH=/usr/bin:/bin "$STRACE" -o "$OUT" "$@"; }

# SQL for the sqlite3 CLI: ROWS INSERTs, each its own transaction or all in one
sql() {
    echo "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);"
    [ "$1" = batch ] && echo "BEGIN;"
    for i in $(seq 1 "$ROWS"); do echo "INSERT INTO t (v) VALUES ('row $i');"; done
    [ "$1" = batch ] && echo "COMMIT;"
    echo "SELECT count(*) FROM t;"
}

case "$VARIANT" in
sqlite-py-autocommit|sqlite-py-batch|sqlite-py-wal)
    [ -x "$PY" ] || { echo "run.sh: $PY is missing (python3)" >&2; exit 3; }
    trace "$@" "$PY" "$HERE/rows.py" "${VARIANT#sqlite-py-}" "$WORK/rows.db" "$ROWS" ;;
sqlite-cli-autocommit|sqlite-cli-batch)
    need sqlite3
    sql "${VARIANT#sqlite-cli-}" > "$WORK/rows.sql"
    trace "$@" sqlite3 -init /dev/null "$WORK/rows.db" ".read $WORK/rows.sql" > "$WORK/count"
    [ "$(cat "$WORK/count")" = "$ROWS" ] || { echo "run.sh: sqlite3 stored $(cat "$WORK/count") rows" >&2; exit 1; } ;;
c-fsync-each|c-fsync-batch|c-osync|near-save)
    need cc
    cc -g -O1 -Wall -o "$WORK/records" "$HERE/records.c"
    mode="${VARIANT#c-fsync-}"
    [ "$VARIANT" = c-osync ] && mode=osync
    [ "$VARIANT" = near-save ] && mode=save
    trace "$@" ./records "$mode" "$WORK" 2 300 ;;
dpkg-install)
    # dpkg installing a package of 150 small files into a scratch root (--root): per file a
    # sync_file_range(SYNC_FILE_RANGE_WRITE) to start writeback, then fsyncs of its database
    need dpkg; need dpkg-deb
    mkdir -p pkg/DEBIAN pkg/usr/share/syslint-lab root/var/lib/dpkg/updates root/var/lib/dpkg/info
    for i in $(seq 1 150); do echo "file $i" > "pkg/usr/share/syslint-lab/f$i.txt"; done
    printf 'Package: syslint-lab-files\nVersion: 1.0\nArchitecture: all\nMaintainer: lab <lab@example.com>\nDescription: 150 small files\n' > pkg/DEBIAN/control
    dpkg-deb --build --root-owner-group pkg lab.deb >/dev/null
    touch root/var/lib/dpkg/status
    trace "$@" dpkg --root="$WORK/root" --force-not-root --force-script-chrootless --force-bad-path -i lab.deb >/dev/null ;;
*)
    echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
