#!/usr/bin/env bash
# Attach syslint to a running threaded server under a bounded loopback load and print what it
# says about processes, threads and fds (issue 15, "attach loses identity").
#
#   lab/attach/run.sh [go|c] [ebpf|strace] [SYSLINT]
#
# go: server.go (net/http; needs the Go toolchain), c: tests/fixtures/programs/threaded_server.c
# (4 worker threads). The server is started, syslint attaches with `trace -p PID --for 3s`,
# 200 requests are made on 127.0.0.1, then the server is stopped by its PID.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../.."
KIND="${1:-c}" BACKEND="${2:-ebpf}" SYSLINT="${3:-$ROOT/target/release/syslint}"
WORK="$(mktemp -d /tmp/syslint-attach-lab.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
case "$KIND" in
    go) (cd "$HERE" && GOFLAGS=-mod=mod go build -o "$WORK/server" server.go) ;;
    c) cc -O2 -pthread -o "$WORK/server" "$ROOT/tests/fixtures/programs/threaded_server.c" ;;
    *) echo "usage: $0 [go|c] [ebpf|strace] [SYSLINT]" >&2; exit 2 ;;
esac
if [ "$KIND" = go ]; then "$WORK/server" "$WORK/port" "$WORK/log" & else "$WORK/server" "$WORK/port" "$WORK/log" 4 & fi
SERVER=$!
for _ in $(seq 200); do [ -s "$WORK/port" ] && break; sleep 0.05; done
"$SYSLINT" trace --backend "$BACKEND" -p "$SERVER" --for 3s >"$WORK/report" 2>&1 &
TRACER=$!
sleep 1.2
python3 - "$WORK/port" <<'PY'
import socket, sys
port = int(open(sys.argv[1]).read())
for _ in range(200):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET / HTTP/1.0\r\n\r\n")
    c.recv(1000)
    c.close()
PY
wait "$TRACER" || true
kill "$SERVER" 2>/dev/null || true
wait "$SERVER" 2>/dev/null || true
grep -E 'syscalls from|^(info|warning)' "$WORK/report" || true
sed -n '/^processes/,/^$/p' "$WORK/report"
grep 'opened before trace' "$WORK/report" || echo "(no fd opened before trace)"
