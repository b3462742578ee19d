#!/usr/bin/env bash
# usage: lab/connection-churn/redis/run.sh VARIANT OUT [STRACE FLAGS...]
#
# connection-churn with a Redis client (redis-py): a redis-server on a free 127.0.0.1 port
# (no persistence, a scratch dir, killed by its PID at the end), and client.py under strace
# doing N requests (N=200 by default, at most 2,000): a new client per request (BAD) or one
# client for all (GOOD).
#   redis-new-client redis-one-client
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
N="${N:-200}"
[ "$N" -le 2000 ] || N=2000
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required (scripts/test.sh installs it)" >&2; exit 3; }; }
need strace
need redis-server
/usr/bin/python3 -c 'import redis' 2>/dev/null || { echo "run.sh: python3-redis is required" >&2; exit 3; }
case "$VARIANT" in
    redis-new-client|redis-one-client) MODE="${VARIANT#redis-}" ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
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
    /usr/bin/python3 -c "import redis,sys; redis.Redis(host='127.0.0.1', port=$PORT).ping()" 2>/dev/null && break
    sleep 0.05
done
strace -o "$OUT" "$@" timeout 60 /usr/bin/python3 "$HERE/client.py" "$MODE" "$PORT" "$N"
