#!/usr/bin/env bash
# Re-records traces/<variant>.<flagset>.strace.gz by running each variant through run.sh under
# the machine's strace (recorded with strace 6.1, Debian 12, x86_64). Needs cc, nginx, php-cli,
# python3 (scripts/test.sh installs them). Takes about two minutes and up to 300 MB of /tmp
# for a moment (sparse inputs, real outputs, removed by run.sh).
#
# Flag sets: f-tt-T-yy (-f -tt -T -yy), f-tt (-f -tt: no durations, no decoded fds),
# f (-f: no time at all), tt-T (-tt -T without -f: no pid column).
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

for v in c-4k php-file php-http py-oswrite py-logging py-oswrite-fork; do
    rec "$v" f-tt-T-yy -f -tt -T -yy
    rec "$v" f-tt -f -tt
    rec "$v" f -f
done
for v in c-4k py-oswrite; do
    rec "$v" tt-T -tt -T
done
for v in c-1m php-file-big php-http-big py-buffered cat-small cp-small dd-1m py-sock py-sock-trickle py-tty nginx-keepalive gunicorn-responses; do
    rec "$v" f-tt-T-yy -f -tt -T -yy
    rec "$v" f-tt -f -tt
done
echo "done: $(ls "$OUT" | wc -l) traces in $OUT" >&2
