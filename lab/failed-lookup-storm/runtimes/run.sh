#!/usr/bin/env bash
# usage: lab/failed-lookup-storm/runtimes/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Search paths in Go, Java and Node. Generates the projects (gen.sh) and builds what the
# variant needs in a scratch dir (not traced), then runs it under `strace -o OUT FLAGS...`.
#   go-lookpath-bad   run_true.go bad 60: PATH = 30 missing dirs + /usr/bin:/bin, exec.Command("true")
#   go-lookpath-good  run_true.go good 60: exec.LookPath once, then the absolute path
#   java-cp-bad       200 classes loaded from classes/, with 30 existing empty dirs before it on -cp
#   java-cp-good      the same, classes/ first on -cp (the 30 empty dirs after it)
#   node-require      near-miss: 200 require('mN') from app/src/lib/deep/, node_modules 4 levels up
set -euo pipefail
VARIANT="${1:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
OUT="${2:?usage: run.sh VARIANT OUT [STRACE FLAGS...]}"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
case "$OUT" in /*) ;; *) OUT="$PWD/$OUT" ;; esac
need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $VARIANT" >&2; exit 3; }; }
need strace
DIR="$(mktemp -d /tmp/syslint-lab-fls-rt.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
ENVP=/usr/bin:/bin
case "$VARIANT" in
    go-lookpath-bad|go-lookpath-good)
        go="$(command -v go || echo /usr/local/go/bin/go)"
        [ -x "$go" ] || { echo "run.sh: go is required for $VARIANT" >&2; exit 3; }
        GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o run_true "$HERE/run_true.go"
        ENVP=""; for i in $(seq 0 29); do ENVP="$ENVP$DIR/missing$i/bin:"; done; ENVP="${ENVP}/usr/bin:/bin"
        CMD=(./run_true "${VARIANT#go-lookpath-}" 60) ;;
    java-cp-bad|java-cp-good)
        need java; need javac
        "$HERE/gen.sh" "$DIR"
        javac -d "$DIR/java/classes" "$DIR"/java/src/app/*.java
        EMPTY=""; for i in $(seq 0 29); do mkdir -p "$DIR/java/empty$i"; EMPTY="$EMPTY:$DIR/java/empty$i"; done
        EMPTY="${EMPTY#:}"
        if [ "$VARIANT" = java-cp-bad ]; then CP="$EMPTY:$DIR/java/classes"; else CP="$DIR/java/classes:$EMPTY"; fi
        CMD=(java -Xshare:auto -XX:-UsePerfData -cp "$CP" app.Main) ;;
    node-require)
        need node
        "$HERE/gen.sh" "$DIR"
        cd "$DIR/node/app/src/lib/deep"
        CMD=(node main.js) ;;
    *) echo "run.sh: unknown variant $VARIANT" >&2; exit 2 ;;
esac
env -i PATH="$ENVP" timeout 120 "${STRACE:-strace}" -o "$OUT" "$@" -- "${CMD[@]}" </dev/null >/dev/null
