#!/usr/bin/env bash
# Re-records traces/<variant>.<flagset>.strace.gz by running each variant through run.sh under
# the machine's strace (recorded with strace 6.1, Debian 12, x86_64). Needs nginx with the echo
# module, php-cli, python3, curl (scripts/test.sh installs them). Takes about a minute.
#
# Flag sets: f-tt-T-yy (-f -tt -T -yy), f-tt (-f -tt: no durations, no decoded fds),
# f-T (-f -T: durations, no timestamps), f (-f: no time at all: the detector must stay quiet),
# tt-T (-tt -T without -f: no pid column).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/traces"
mkdir -p "$OUT"
rm -f "$OUT"/*.strace "$OUT"/*.strace.gz

rec() { # rec VARIANT FLAGSET [strace flags...]
    local v="$1" set="$2"; shift 2
    echo "recording $v.$set" >&2
    "$HERE/run.sh" "$v" "$OUT/$v.$set.strace" "$@"
    gzip -9 -n "$OUT/$v.$set.strace"
}

for v in py-eof py-timeout py-eof-fork php-feof server-py-eof; do
    rec "$v" f-tt-T-yy -f -tt -T -yy
    rec "$v" f-tt -f -tt
    rec "$v" f-T -f -T
    rec "$v" f -f
done
for v in py-eof php-feof; do
    rec "$v" tt-T -tt -T
done
for v in py-length py-close php-length php-close php-wrapper py-reuse py-poll curl; do
    rec "$v" f-tt-T-yy -f -tt -T -yy
    rec "$v" f-tt -f -tt
done
echo "done: $(ls "$OUT" | wc -l) traces in $OUT" >&2
