#!/usr/bin/env bash
# usage: lab/busy-poll/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# busy-poll in Go, Java and Node: a program waits for a line that arrives after 0.3 s, by
# retrying a non-blocking read on EAGAIN (BAD) or by the wait its runtime offers (GOOD). For
# Go and Node the line comes through a FIFO in a scratch dir: this script holds the FIFO open
# for writing (so the reader gets EAGAIN, not end of file) and writes the line 0.3 s after the
# program started; Java's Wait.java sends it through its own java.nio Pipe. Builds the Go and
# Java programs first (not traced). Bounded: 10,000,000 tries at most, `timeout 60`.
#   go-spin go-wait java-spin java-wait node-spin node-wait
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $VARIANT" >&2; exit 3; }; }
need strace
DIR="$(mktemp -d /tmp/syslint-lab-busypoll-rt.XXXXXX)"
WRITER=""
cleanup() {
    if [ -n "$WRITER" ]; then kill "$WRITER" 2>/dev/null || true; wait "$WRITER" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT
go_build() {
    local go; go="$(command -v go || echo /usr/local/go/bin/go)"
    [ -x "$go" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
    (cd "$DIR" && GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o wait "$HERE/wait.go")
}
cd "$DIR"
case "$VARIANT" in
    go-spin|go-wait) go_build; CMD=(./wait "${VARIANT#go-}" "$DIR/fifo") ;;
    node-spin|node-wait) need node; CMD=(node "$HERE/wait.js" "${VARIANT#node-}" "$DIR/fifo") ;;
    java-spin|java-wait) need java; need javac; javac -d "$DIR" "$HERE/Wait.java"; CMD=(java -Xshare:auto -XX:-UsePerfData -cp "$DIR" Wait "${VARIANT#java-}") ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
if [ "${VARIANT%%-*}" != java ]; then
    mkfifo "$DIR/fifo"
    # the writer opens it read-write (does not block), waits 0.3 s, writes a line, keeps it
    # open a moment longer
    (exec 3<>"$DIR/fifo"; sleep 0.3; echo hello >&3; sleep 2) &
    WRITER=$!
    sleep 0.05
fi
env -i PATH=/usr/bin:/bin timeout 60 "${STRACE:-strace}" -o "$OUT" "$@" -- "${CMD[@]}" >/dev/null
