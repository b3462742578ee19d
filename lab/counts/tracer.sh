#!/usr/bin/env bash
# tracer.sh: a stand-in for strace in a lab's run.sh, to record the tables of counts people
# paste instead of a trace. A lab's run.sh runs `"$STRACE" -o OUT FLAGS... CMD...`; with
# STRACE=lab/counts/tracer.sh and FLAGS = one TOOL word it runs CMD counted by that tool:
#   strace-c    strace -c -f
#   strace-cw   strace -c -w -f
#   perf        perf trace -s (children followed)
#   syscount    libbpf-tools syscount -L over a cgroup holding CMD (its children included)
# OUT gets the tool's own output, byte for byte; OUT.cmd the command line as a terminal would
# show it (record.sh puts it above the table). The tool (or, for syscount, CMD itself) keeps
# this script's pid, so run.sh's `ps --ppid` finds the server as its child and its kill
# reaches what it means to. Needs root for perf and syscount (tracefs is mounted if it is not).
set -euo pipefail
[ "${1:-}" = -o ] && [ $# -ge 4 ] || { echo "usage: tracer.sh -o OUT TOOL CMD..." >&2; exit 2; }
OUT="$2"; TOOL="$3"; shift 3
[ "${1:-}" = -- ] && shift
case "$TOOL" in
strace-c|strace-cw)
    flags=(-c -f); [ "$TOOL" = strace-cw ] && flags=(-c -w -f)
    printf '$ strace %s -o %s %s\n' "${flags[*]}" "$(basename "$OUT")" "$*" > "$OUT.cmd"
    exec /usr/bin/strace "${flags[@]}" -o "$OUT" "$@" ;;
perf)
    [ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
    printf '$ perf trace -s -o %s -- %s\n' "$(basename "$OUT")" "$*" > "$OUT.cmd"
    exec /usr/bin/perf trace -s -o "$OUT" -- "$@" ;;
syscount)
    [ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
    cg="/sys/fs/cgroup/unified/syslint-counts-$$"
    mkdir "$cg"
    printf '$ syscount -L -T 40 -c %s\n' "$cg" > "$OUT.cmd"
    # syscount is not this script's child (run.sh looks for the traced program among them)
    ( /usr/bin/stdbuf -oL /usr/sbin/syscount -L -T 40 -c "$cg" > "$OUT" 2>&1 & echo $! > "$OUT.pid" )
    sc="$(cat "$OUT.pid")"; rm -f "$OUT.pid"
    for _ in $(seq 100); do grep -q Tracing "$OUT" 2>/dev/null && break; sleep 0.1; done
    ( echo "$BASHPID" > "$cg/cgroup.procs"; exec "$@" ) &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
    status=0
    wait "$child" || status=$?
    # a trapped signal interrupts the first wait
    kill -0 "$child" 2>/dev/null && { wait "$child" || status=$?; }
    sleep 0.2
    kill -INT "$sc"
    for _ in $(seq 100); do kill -0 "$sc" 2>/dev/null || break; sleep 0.1; done
    # the cgroup is empty once CMD and its children ended
    for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
    exit "$status" ;;
*) echo "tracer.sh: unknown tool $TOOL" >&2; exit 2 ;;
esac
