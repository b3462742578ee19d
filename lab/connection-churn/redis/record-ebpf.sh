#!/usr/bin/env bash
# usage: lab/connection-churn/redis/record-ebpf.sh [SYSLINT]
#
# What a redis-py client with a new redis.Redis() per request loses natively, against what
# connection-churn prices it at from an eBPF recording (issue 27: "connection churn counts the
# whole connection life it causes"). A redis-server on a free 127.0.0.1 port (no persistence,
# a scratch dir, stopped by its PID at the end); client.py with N=2000 requests (a SET and a
# GET each) run natively 5 times per mode, new-client and one-client interleaved, then each
# mode once under `syslint trace --backend ebpf`. Writes ../traces/redis-{new,one}-client.slr
# and ../traces/redis-native.txt (the wall times, seconds, one line per run). Holds
# /tmp/syslint-record.lock around the timed part. Needs root (eBPF), redis-server,
# python3-redis.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SYSLINT="${1:-$HERE/../../../target/release/syslint}"
TRACES="$HERE/../traces"
N=2000
command -v redis-server >/dev/null || { echo "record-ebpf.sh: redis-server is not installed" >&2; exit 3; }
/usr/bin/python3 -c 'import redis' 2>/dev/null || { echo "record-ebpf.sh: python3-redis is required" >&2; exit 3; }
DIR="$(mktemp -d /tmp/syslint-lab-churn-redis.XXXXXX)"
SERVER=""
cleanup() {
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT
PORT="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$DIR" --daemonize no \
    --logfile "$DIR/redis.log" &
SERVER=$!
for _ in $(seq 100); do
    /usr/bin/python3 -c "import redis; redis.Redis(host='127.0.0.1', port=$PORT).ping()" 2>/dev/null && break
    sleep 0.05
done
exec 9>/tmp/syslint-record.lock
flock 9
: >"$DIR/native.txt"
for round in 1 2 3 4 5; do
    for mode in new-client one-client; do
        s="$(date +%s.%N)"
        timeout 60 /usr/bin/python3 "$HERE/client.py" "$mode" "$PORT" "$N" 9>&-
        e="$(date +%s.%N)"
        echo "$mode $round $(echo "$e - $s" | bc)" >>"$DIR/native.txt"
    done
done
for mode in new-client one-client; do
    timeout 120 "$SYSLINT" trace --backend ebpf -o "$TRACES/redis-$mode.slr" --format json -- \
        /usr/bin/python3 "$HERE/client.py" "$mode" "$PORT" "$N" >/dev/null 9>&-
done
flock -u 9
exec 9>&-
{
    echo "# redis-py, $N requests (SET + GET) against redis-server on 127.0.0.1, untraced; mode round seconds"
    cat "$DIR/native.txt"
} >"$TRACES/redis-native.txt"
cat "$TRACES/redis-native.txt"
ls -l "$TRACES"/redis-*.slr
