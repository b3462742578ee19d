#!/usr/bin/env bash
# usage: lab/dns-timeout/run.sh VARIANT OUT [STRACE FLAGS...]
#
# Starts dnsd.py (a tiny DNS responder on UDP port 53 of a free loopback address 127.53.X.Y,
# answering A for *.lab.test, NXDOMAIN for anything else, AAAA as the variant says) and, for
# the dead-server variants, a second one that answers nothing. The client then runs under
# `strace -o OUT FLAGS...` inside a private mount namespace (unshare -m) in which
# /etc/resolv.conf is bind-mounted to the variant's file, so glibc's resolver asks those
# servers with the variant's options; nothing outside the namespace changes.
# Loopback only; every loop is bounded; servers are stopped by PID on exit.
#
# Variants (README.md says what each shows and what syslint reports):
#   py-aaaa-dropped py-aaaa-race getent-aaaa-race py-dead-ns py-only-dead-ns py-repeat-aaaa-race py-ndots5 py-aaaa-answered py-single-request-reopen getent-single-request-reopen py-reachable-ns py-trailing-dot near-nxdomain near-slow-server
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: $0 VARIANT OUT [STRACE FLAGS...]" >&2; exit 2; }
variant="$1"; out="$2"; shift 2
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
FLAGS=("$@")

need() { command -v "$1" >/dev/null 2>&1 || { echo "run.sh: $1 is required for $variant (scripts/test.sh installs it)" >&2; exit 3; }; }
need "${STRACE:-strace}"; need python3; need unshare; need mount
[ "$(id -u)" -eq 0 ] || { echo "run.sh: $variant needs root (port 53, mount namespace)" >&2; exit 3; }

work="$(mktemp -d /tmp/syslint-lab-dns-timeout.XXXXXX)"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# server NAME [dnsd.py options]: start a responder, its address in $work/NAME
server() {
    local name="$1"; shift
    python3 "$HERE/dnsd.py" "$work/$name" --max-seconds 120 "$@" &
    pids+=($!)
    for _ in $(seq 100); do
        [ -s "$work/$name" ] && return 0
        kill -0 "${pids[-1]}" 2>/dev/null || { echo "run.sh: dnsd.py died" >&2; exit 1; }
        sleep 0.1
    done
    echo "run.sh: dnsd.py did not start" >&2; exit 1
}
ns() { echo "nameserver $(cat "$work/$1")"; }

# the traced program runs in the namespace with the private resolv.conf, a clean environment
trace() {
    (cd "$work" && unshare -m --propagation private -- sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' \
        sh "$work/resolv.conf" env -i PATH=/usr/bin:/bin HOME="$work" "${STRACE:-strace}" -o "$out" "${FLAGS[@]}" -- "$@" >/dev/null)
}

# three services a client talks to, each resolved once (so repeated-dns has nothing to say)
NAMES=(api.lab.test db.lab.test cache.lab.test)
# the Kubernetes search list of a pod in namespace "shop"
SEARCH="search shop.svc.cluster.local svc.cluster.local cluster.local"
client="$HERE/resolve.py"
case "$variant" in
    py-aaaa-dropped)
        server good --aaaa drop
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-aaaa-answered)
        server good --aaaa answer
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-aaaa-race)
        server good --aaaa race
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-single-request-reopen)
        server good --aaaa race
        { ns good; echo "options timeout:1 single-request-reopen"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    getent-aaaa-race|getent-single-request-reopen)
        need getent
        server good --aaaa race
        { ns good; echo "options timeout:1"; [ "$variant" = getent-single-request-reopen ] && echo "options single-request-reopen"; } > "$work/resolv.conf"
        trace sh -c 'for n in "$@"; do getent ahosts "$n"; done' sh "${NAMES[@]}" ;;
    py-dead-ns)
        server dead --silent
        server good
        { ns dead; ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-repeat-aaaa-race)
        # one name looked up 6 times, the AAAA of the first pair lost (asked again, answered):
        # repeated-dns and dns-timeout on the same lookups, the second of timeout charged once,
        # to dns-timeout
        server good --aaaa race
        { ns good; echo "options timeout:1 attempts:1"; } > "$work/resolv.conf"
        trace python3 "$client" api.lab.test api.lab.test api.lab.test api.lab.test api.lab.test api.lab.test ;;
    py-only-dead-ns)
        # the only nameserver answers nothing (sshd's stall on a dead resolver): every lookup
        # waits out timeout x attempts and fails
        server dead --silent
        { ns dead; echo "options timeout:1 attempts:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-reachable-ns)
        server good
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" "${NAMES[@]}" ;;
    py-ndots5|py-trailing-dot)
        # a resolver 20 ms away (each answer waits 20 ms), ten services
        server good --delay-ms 20
        { ns good; echo "$SEARCH"; echo "options ndots:5 timeout:1"; } > "$work/resolv.conf"
        names=(); for i in $(seq 0 9); do names+=("svc$i.lab.test"); done
        [ "$variant" = py-trailing-dot ] && names=("${names[@]/%/.}")
        trace python3 "$client" "${names[@]}" ;;
    near-nxdomain)
        server good
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" no-such-host.lab.invalid ;;
    near-slow-server)
        # answers that take 300 ms: slow, but every wait ends with the answer
        server good --delay-ms 300
        { ns good; echo "options timeout:1"; } > "$work/resolv.conf"
        trace python3 "$client" api.lab.test db.lab.test ;;
    *) echo "run.sh: unknown variant $variant (see README.md)" >&2; exit 2 ;;
esac
