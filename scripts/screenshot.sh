#!/usr/bin/env bash
# Screenshots of syslint's HTML pages, for a person to look at: an analysis report and a
# before/after diff of lab recordings, rendered by headless Chromium.
#   scripts/screenshot.sh [OUTDIR]        (default: target/screenshots)
# Any report works too:  syslint analyze --format html --output-file x.html TRACE
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/screenshots}
mkdir -p "$out"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "needs chromium (apt-get install chromium)" >&2; exit 2; }
cargo build --release -q
bin=target/release/syslint
shot() { # page.html image.png height
  "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --hide-scrollbars \
    --window-size=1300,"$3" --screenshot="$2" "file://$(realpath "$1")" >/dev/null 2>&1
  echo "$2"
}
set +e   # analyze exits 1 when it finds something
$bin analyze --format html --output-file "$out/accept-herd.html" lab/accept-herd/traces/c-procs.f-tt-T-yy.strace.gz
$bin analyze --format html --output-file "$out/demo.html" demo/fetch.strace.gz
$bin diff --format html --output-file "$out/diff-busy-poll.html" \
  lab/busy-poll/traces/c-poll0.f-tt-T-yy.strace.gz lab/busy-poll/traces/c-timeout.f-tt-T-yy.strace
set -e
shot "$out/accept-herd.html" "$out/accept-herd.png" 2400
shot "$out/demo.html" "$out/demo.png" 2400
shot "$out/diff-busy-poll.html" "$out/diff-busy-poll.png" 1900
