#!/usr/bin/env bash
# PostgreSQL under pgbench (4 clients, 5 s, on 127.0.0.1), attached by name:
#   lab/attach/postgres.sh [ebpf|strace] [SYSLINT]
# Makes a throw-away cluster in a scratch dir (port 54329, run as user postgres), traces
# `syslint trace --comm postgres --for 3s` while pgbench runs, then stops the cluster and
# removes it. Needs PostgreSQL 15 (postgresql) and pgbench (postgresql-contrib), root.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BACKEND="${1:-ebpf}" SYSLINT="${2:-$HERE/../../target/release/syslint}"
PGB="$(ls -d /usr/lib/postgresql/*/bin | tail -1)"
PORT=54329
D="$(mktemp -d /tmp/syslint-attach-pg.XXXXXX)"
chown postgres "$D"
pg() { runuser -u postgres -- "$@"; }
cleanup() { pg "$PGB/pg_ctl" -D "$D/data" stop -m fast >/dev/null 2>&1 || true; rm -rf "$D"; }
trap cleanup EXIT
pg "$PGB/initdb" -D "$D/data" -A trust >/dev/null
pg "$PGB/pg_ctl" -D "$D/data" -o "-p $PORT -k $D -c listen_addresses=127.0.0.1" -l "$D/log" -w start >/dev/null
pg pgbench -h 127.0.0.1 -p "$PORT" -i -s 1 postgres >/dev/null 2>&1
pg pgbench -h 127.0.0.1 -p "$PORT" -c 4 -T 5 postgres >"$D/pgbench.out" 2>&1 &
BENCH=$!
sleep 1
# (--comm postgres also finds any other PostgreSQL running on the machine)
"$SYSLINT" trace --backend "$BACKEND" --comm postgres --for 3s >"$D/report" 2>&1 || true
wait "$BENCH" || true
grep -E 'syscalls from|^(info|warning)' "$D/report" | cut -c1-160 || true
sed -n '/^processes/,/^$/p' "$D/report"
