#!/usr/bin/env bash
# usage: lab/small-io/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# small-io in Go, Java and Node: 3,000 log lines of ~65 bytes written to a file in a scratch
# dir under /tmp (removed afterwards), one write per line (BAD) or through the buffer the fix
# hint recommends (GOOD). Builds the Go and Java programs first (not traced), then runs one
# variant under `strace -o OUT FLAGS...`.
#   go-unbuffered   lines.go: fmt.Fprintf(f, ...) on an *os.File per line      BAD
#   go-bufio64k     lines.go: bufio.NewWriterSize(f, 64<<10), Flush at the end GOOD
#   java-unbuffered Lines.java: FileOutputStream.write(byte[]) per line      BAD
#   java-buffered64k Lines.java: new BufferedOutputStream(out, 1 << 16)      GOOD
#   node-writesync  lines.js: fs.writeSync(fd, line) per line                BAD
#   node-stream     lines.js: fs.createWriteStream(path).write(line)         GOOD
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
N=3000
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $VARIANT" >&2; exit 3; }; }
need strace
DIR="$(mktemp -d /tmp/syslint-lab-smallio-rt.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
# close fds inherited from the caller so traces start at fd 3
for fdpath in /proc/$$/fd/*; do
    fd="${fdpath##*/}"
    if [ "$fd" -gt 2 ] && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done
exec </dev/null
go_build() {
    local go; go="$(command -v go || echo /usr/local/go/bin/go)"
    [ -x "$go" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
    (cd "$DIR" && GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o lines "$HERE/lines.go")
}
java_build() { need javac; need java; javac -d "$DIR" "$HERE/Lines.java"; }
cd "$DIR"
case "$VARIANT" in
    go-unbuffered)    go_build; CMD=(./lines unbuffered "$N" app.log) ;;
    go-bufio64k)      go_build; CMD=(./lines bufio64k "$N" app.log) ;;
    java-unbuffered)  java_build; CMD=(java -cp "$DIR" Lines unbuffered "$N" app.log) ;;
    java-buffered64k) java_build; CMD=(java -cp "$DIR" Lines buffered64k "$N" app.log) ;;
    node-writesync)   need node; CMD=(node "$HERE/lines.js" writesync "$N" app.log) ;;
    node-stream)      need node; CMD=(node "$HERE/lines.js" stream "$N" app.log) ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
"${STRACE:-strace}" -o "$OUT" "$@" -- "${CMD[@]}" >/dev/null
