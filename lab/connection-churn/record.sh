#!/usr/bin/env bash
# Re-records traces/<variant>.<flagset>.strace.gz for every variant with the machine's strace
# (fixtures were made with strace 6.1, Debian 12: Python 3.11, curl 7.88.1, PHP 8.2 with
# php-curl, OpenSSL 3.0, nginx 1.22). Flag sets: f-tt-T-yy (-f -tt -T -yy), f-tt (-f -tt), and f (-f, no
# timestamps at all) for three BAD variants. Default -s 32: the ClientHello bytes are visible.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/traces"
mkdir -p "$OUT"
case "$(strace -V | head -n1)" in
    *"version 6.1"*) ;;
    *) echo "record.sh: warning: fixtures were made with strace 6.1, you have: $(strace -V | head -n1)" >&2 ;;
esac
VARIANTS=(py-new-conn py-keepalive py-two-conns py-few-hosts py-pool py-tls-new-conn py-tls-keepalive
    curl-per-url curl-one-invocation php-tls-fresh php-tls-reuse php-tls-share
    py-parallel-new-conn curl-parallel-h1 curl-parallel-h2
    srv-py-new-conn srv-py-http10 srv-py-keepalive srv-nginx-ka-off srv-nginx-keepalive srv-nginx-few-clients)
rec() {
    local v="$1" set="$2"; shift 2
    echo "recording $v.$set" >&2
    "$HERE/run.sh" "$v" "$OUT/$v.$set.strace" "$@"
    gzip -9 -f "$OUT/$v.$set.strace"
}
for v in "${VARIANTS[@]}"; do
    rec "$v" f-tt-T-yy -f -tt -T -yy
    rec "$v" f-tt -f -tt
done
for v in py-new-conn py-tls-new-conn curl-per-url; do
    rec "$v" f -f
done
echo "done: $(ls "$OUT" | wc -l) traces in $OUT" >&2
