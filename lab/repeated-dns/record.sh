#!/usr/bin/env bash
# Re-records traces/<variant>.<flagset>.strace.gz for every variant with the machine's strace
# (fixtures were made with strace 6.1, Debian 12: glibc 2.36, Python 3.11, curl 7.88.1, PHP 8.2
# with php-curl). Needs root (port 53, mount namespace for the DNS variants). Flag sets:
# f-tt-T-yy (-f -tt -T -yy), f-tt (-f -tt), f (-f, no timestamps) for three BAD variants, and
# f-tt-T-yy-s256 (-s 256) for py-long-name, whose name the default -s 32 cuts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/traces"
mkdir -p "$OUT"
case "$(strace -V | head -n1)" in
    *"version 6.1"*) ;;
    *) echo "record.sh: warning: fixtures were made with strace 6.1, you have: $(strace -V | head -n1)" >&2 ;;
esac
VARIANTS=(py-resolve-each py-resolve-once py-long-name py-few-names py-single py-hosts-each
    curl-per-url curl-one-invocation php-fresh php-reuse php-share-dns curl-hosts-per-url php-hosts-fresh)
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
for v in py-resolve-each py-hosts-each curl-per-url; do
    rec "$v" f -f
done
rec py-long-name f-tt-T-yy-s256 -f -tt -T -yy -s 256
echo "done: $(ls "$OUT" | wc -l) traces in $OUT" >&2
