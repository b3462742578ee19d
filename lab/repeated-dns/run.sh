#!/usr/bin/env bash
# usage: lab/repeated-dns/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Starts a local HTTP/1.1 server on 127.0.0.1 and, for the DNS variants, a tiny DNS
# responder (dnsd.py) on UDP port 53 of a free loopback address 127.53.X.Y that answers
# *.lab.test with 127.0.0.1. The client then runs under `strace -o OUT FLAGS...` inside a
# private mount namespace (unshare -m) in which /etc/resolv.conf is bind-mounted to a file
# naming that responder, so glibc's resolver asks it; nothing outside the namespace changes.
# The *hosts* variants bind-mount a private /etc/hosts naming feed.lab.test instead (lookups
# answered from the file, no DNS); py-hosts-each needs no namespace (localhost).
# Loopback only; every loop is bounded; servers are stopped by PID on exit.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
variant="$1"; out="$2"; shift 2
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
FLAGS=("$@")

need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $variant (scripts/test.sh installs it)" >&2; exit 3; }; }
need strace; need python3

work="$(mktemp -d /tmp/syslint-lab-dns.XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# wait_file FILE PID: until the server wrote FILE
wait_file() {
    for _ in $(seq 100); do
        [ -s "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || { echo "run.sh: server died" >&2; exit 1; }
        sleep 0.1
    done
    echo "run.sh: server did not start" >&2; exit 1
}

python3 "$HERE/server.py" "$work/port" --max-seconds 120 &
pids+=($!); wait_file "$work/port" "$!"
port="$(cat "$work/port")"

# dns: start the responder, point a private resolv.conf at it
dns() {
    need unshare; need mount
    [ "$(id -u)" -eq 0 ] || { echo "run.sh: $variant needs root (port 53, mount namespace)" >&2; exit 3; }
    python3 "$HERE/dnsd.py" "$work/dnsaddr" --max-seconds 120 &
    pids+=($!); wait_file "$work/dnsaddr" "$!"
    printf 'nameserver %s\noptions attempts:1 timeout:2\n' "$(cat "$work/dnsaddr")" > "$work/resolv.conf"
    NS=(unshare -m --propagation private -- sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$work/resolv.conf")
}
NS=()

# hosts: a private /etc/hosts naming feed.lab.test (no DNS server): lookups answered from the file
hosts() {
    need unshare; need mount
    [ "$(id -u)" -eq 0 ] || { echo "run.sh: $variant needs root (mount namespace)" >&2; exit 3; }
    printf '127.0.0.1 localhost\n127.0.0.1 feed.lab.test\n' > "$work/hosts"
    NS=(unshare -m --propagation private -- sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$work/hosts")
}

# the traced program runs with a clean environment, from the scratch dir
trace() {
    (cd "$work" && "${NS[@]}" env -i PATH=/usr/bin:/bin HOME="$work" "${STRACE:-strace}" -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null)
}

# trace_env: the same with GODEBUG passed through (go-cgo-each)
trace_env() {
    (cd "$work" && "${NS[@]}" env -i PATH=/usr/bin:/bin HOME="$work" GODEBUG="${GODEBUG:-}" "${STRACE:-strace}" -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null)
}

client="$HERE/client.py"
php_client="$HERE/fetch.php"
RT="$HERE/runtimes"
# go_build SRC: builds SRC (one file) into $work/prog with the Go toolchain (not traced)
go_build() {
    local go; go="$(command -v go || echo /usr/local/go/bin/go)"
    [ -x "$go" ] || { echo "run.sh: go is required for $variant" >&2; exit 3; }
    (cd "$work" && GOTOOLCHAIN=local GOFLAGS=-trimpath "$go" build -o prog "$1")
}
java_build() { need javac; need java; javac -d "$work" "$1"; }
case "$variant" in
    py-resolve-each)     dns; trace python3 "$client" resolve-each 30 feed.lab.test "$port" ;;
    py-resolve-once)     dns; trace python3 "$client" resolve-once 30 feed.lab.test "$port" ;;
    py-long-name)        dns; trace python3 "$client" resolve-each 30 a-rather-long-feed-name.lab.test "$port" ;;
    py-few-names)        dns; trace python3 "$client" few-names 5 feed.lab.test "$port" ;;
    py-single)           dns; trace python3 "$client" single 1 feed.lab.test "$port" ;;
    py-hosts-each)       trace python3 "$client" hosts-each 40 localhost "$port" ;;
    curl-per-url)
        need curl; dns
        trace sh -c 'i=0; while [ $i -lt 15 ]; do curl -sS -o /dev/null "$1/feed/$i"; i=$((i+1)); done' \
            sh "http://feed.lab.test:$port" ;;
    curl-one-invocation)
        need curl; dns
        urls=(); for i in $(seq 0 14); do urls+=(-o /dev/null "http://feed.lab.test:$port/feed/$i"); done
        trace curl -sS "${urls[@]}" ;;
    curl-hosts-per-url)
        need curl; hosts
        trace sh -c 'i=0; while [ $i -lt 15 ]; do curl -sS -o /dev/null "$1/feed/$i"; i=$((i+1)); done' \
            sh "http://feed.lab.test:$port" ;;
    php-hosts-fresh)     need php; hosts; trace php "$php_client" fresh 20 "http://feed.lab.test:$port" ;;
    php-fresh)           need php; dns; trace php "$php_client" fresh 20 "http://feed.lab.test:$port" ;;
    php-reuse)           need php; dns; trace php "$php_client" reuse 20 "http://feed.lab.test:$port" ;;
    php-share-dns)       need php; dns; trace php "$php_client" share-dns 20 "http://feed.lab.test:$port" ;;
    go-each)             go_build "$RT/fetch.go"; dns; trace "$work/prog" each 20 feed.lab.test "$port" ;;
    go-shared)           go_build "$RT/fetch.go"; dns; trace "$work/prog" shared 20 feed.lab.test "$port" ;;
    go-cgo-each)         go_build "$RT/fetch.go"; dns; GODEBUG=netdns=cgo trace_env "$work/prog" each 20 feed.lab.test "$port" ;;
    java-ttl0)           java_build "$RT/Fetch.java"; dns; trace java -Xshare:auto -Dsun.net.inetaddr.ttl=0 -cp "$work" Fetch 20 feed.lab.test "$port" ;;
    java-default)        java_build "$RT/Fetch.java"; dns; trace java -Xshare:auto -cp "$work" Fetch 20 feed.lab.test "$port" ;;
    node-fresh)          need node; dns; trace node "$RT/fetch.js" fresh 20 feed.lab.test "$port" ;;
    node-keepalive)      need node; dns; trace node "$RT/fetch.js" keepalive 20 feed.lab.test "$port" ;;
    node-cached-lookup)  need node; dns; trace node "$RT/fetch.js" cached 20 feed.lab.test "$port" ;;
    *) echo "run.sh: unknown variant $variant (see README.md)" >&2; exit 2 ;;
esac
