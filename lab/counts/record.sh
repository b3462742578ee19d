#!/usr/bin/env bash
# record.sh [LAB...]: for one BAD and one GOOD variant of every lab (the pairs below), record
# the tables of counts people paste instead of a trace, each a real run of the lab's run.sh
# with tracer.sh standing in for strace: lab/<lab>/counts/<variant>.<tool>.txt for the tools
# strace-c (strace -c -f), strace-cw (strace -c -w -f), perf (perf trace -s) and syscount
# (libbpf-tools syscount -L). Nothing is edited afterwards. Needs root (perf, syscount).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LAB="$(dirname "$HERE")"
# lab BAD GOOD
pairs=(
    "accept-herd c-procs c-procs-reuseport"
    "busy-poll c-poll0 c-timeout"
    "connection-churn py-new-conn py-keepalive"
    "failed-lookup-storm c-search-bad c-search-good"
    "fd-close-sweep c-close c-range"
    "fsync-storm c-fsync-each c-fsync-batch"
    "keepalive-stall py-eof py-length"
    "repeated-dns py-resolve-each py-resolve-once"
    "small-io py-oswrite py-buffered"
    # the second wave (issue 17)
    "yield-spin c-spin c-mutex"
    "clock-syscalls c-syscall c-vdso"
    "timer-polling c-select20 c-block"
    "epoll-ctl-churn c-mod c-et"
    "stat-storm php-nocache php-cache"
    "reopen-churn py-config-each py-config-once"
    "spawn-per-task sh-date-each sh-date-once"
    "retry-storm c-now c-backoff"
    # the second wave, parts B and C (issue 17)
    "userspace-copy c-readwrite c-sendfile"
    "dns-timeout getent-aaaa-race getent-single-request-reopen"
    "nagle-delay c-two-writes c-nodelay"
    "futex-contention c-global c-sharded"
    "memory-map-churn c-64m-each c-64m-reuse"
    "fs-walk-loop py-walk-follow py-walk-nofollow"
    # issue 28
    "ioctl-poll c-eof c-poll"
    "inotify-per-file c-per-file c-per-dir"
    # issue 28's new pathologies
    "madvise-storm c-dontneed c-keep"
    "sigmask-storm c-wrap c-once"
    "fault-signal-loop c-pipe-loop c-guard"
)
want=("$@")
for p in "${pairs[@]}"; do
    read -r lab bad good <<<"$p"
    if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $lab "* ]]; then continue; fi
    mkdir -p "$LAB/$lab/counts"
    for v in "$bad" "$good"; do
        for tool in strace-c strace-cw perf syscount; do
            echo "recording $lab $v $tool" >&2
            out="$LAB/$lab/counts/$v.$tool.txt"
            STRACE="$HERE/tracer.sh" timeout 300 "$LAB/$lab/run.sh" "$v" "$out" "$tool" >/dev/null 2>&1 ||
                echo "  (exit $?)" >&2
            # the command line above the table, as a terminal shows it
            if [ -f "$out.cmd" ]; then cat "$out.cmd" "$out" > "$out.tmp" && mv "$out.tmp" "$out"; rm -f "$out.cmd"; fi
        done
    done
done
