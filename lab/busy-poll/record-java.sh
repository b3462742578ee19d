#!/usr/bin/env bash
# record-java.sh [SYSLINT]: records traces/java-hello.slr, a JVM (java Hello.java: starts,
# sleeps 200 ms, prints a line) traced with eBPF. Under eBPF its threads' bursts of a few
# hundred gettid() calls take a few milliseconds (under strace they are spread out by ptrace
# and never looked like a spin). Needs root (eBPF) and a JDK. Bounded: killed after 120 s.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SYSLINT="${1:-$HERE/../../target/release/syslint}"
command -v java >/dev/null || { echo "record-java.sh: java is not installed" >&2; exit 3; }
WORK="$(mktemp -d /tmp/syslint-lab-java.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/Hello.java" "$WORK/"
cd "$WORK"
timeout 120 "$SYSLINT" trace --backend ebpf -o "$HERE/traces/java-hello.slr" -- java Hello.java >/dev/null
