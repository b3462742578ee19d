#!/usr/bin/env python3
"""cut.py [LAB...]: cut the excerpts people paste from the labs' recorded traces.

For one BAD and one GOOD variant of every lab (the pairs in lab/counts/record.sh), take its
recorded trace with the fewest flags (`.f.strace`, else `.f-tt`, else `.f-tt-T-yy`), keep the
lines of the process with the most lines, and from its steady state (centred at four fifths
of them, past the start-up) cut 10, 30 and 100 lines
into lab/<lab>/excerpts/<variant>.<N>.txt, with the pid and timestamp columns stripped as a
person copying lines from a terminal would have them. Nothing else is changed: the excerpts are
derived from the recordings, not written by hand. Deterministic: run it again, get the same files.
"""
import gzip
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.dirname(HERE)
PAIRS = [
    ("accept-herd", "c-procs", "c-procs-reuseport"),
    ("busy-poll", "c-poll0", "c-timeout"),
    ("connection-churn", "py-new-conn", "py-keepalive"),
    ("failed-lookup-storm", "c-search-bad", "c-search-good"),
    ("fd-close-sweep", "c-close", "c-range"),
    ("fsync-storm", "c-fsync-each", "c-fsync-batch"),
    ("keepalive-stall", "py-eof", "py-length"),
    ("repeated-dns", "py-resolve-each", "py-resolve-once"),
    ("small-io", "py-oswrite", "py-buffered"),
    # the second wave (issue 17)
    ("yield-spin", "c-spin", "c-mutex"),
    ("clock-syscalls", "c-syscall", "c-vdso"),
    ("timer-polling", "c-select20", "c-block"),
    ("epoll-ctl-churn", "c-mod", "c-et"),
    ("stat-storm", "php-nocache", "php-cache"),
    ("reopen-churn", "py-config-each", "py-config-once"),
    ("spawn-per-task", "sh-date-each", "sh-date-once"),
    ("retry-storm", "c-now", "c-backoff"),
    ("futex-contention", "c-global", "c-sharded"),
    ("memory-map-churn", "c-64m-each", "c-64m-reuse"),
    ("fs-walk-loop", "py-walk-follow", "py-walk-nofollow"),
    # issue 28's new pathologies
    ("madvise-storm", "c-dontneed", "c-keep"),
    ("sigmask-storm", "c-wrap", "c-once"),
    ("userspace-copy", "c-readwrite", "c-sendfile"),
    ("dns-timeout", "getent-aaaa-race", "getent-single-request-reopen"),
    ("nagle-delay", "c-two-writes", "c-nodelay"),
    # issue 28
    ("ioctl-poll", "c-eof", "c-poll"),
    ("inotify-per-file", "c-per-file", "c-per-dir"),
    ("fault-signal-loop", "c-pipe-loop", "c-guard"),
]
SIZES = (10, 30, 100)
# Labs whose pattern shows in the signal lines (`--- SIGSEGV {...} ---`): kept in their excerpts,
# as the people pasting such loops keep them (npm#13833).
KEEP_SIGNALS = {"fault-signal-loop"}
# Labs whose pattern is a time (a delayed ACK): their excerpts are cut a second time from the
# `-f -tt -T -yy` trace into <variant>.T.<N>.txt, keeping -T's durations and -yy's fd targets
# (pids and timestamps stripped as above), as a person pasting `strace -T -yy` lines has them.
TIMED = [
    ("nagle-delay", "c-two-writes", "c-nodelay"),
]
# `1234 ` or `[pid  1234] ` then an optional `10:00:00.123456 ` / `1700000000.123456 `
HEAD = re.compile(r"^(?:\[pid\s+(\d+)\]\s+|(\d+)\s+)?(?:\d\d:\d\d:\d\d(?:\.\d+)?\s+|\d{9,}\.\d+\s+)?")


def trace_of(lab, variant, order=("f", "f-tt", "f-tt-T-yy")):
    for flags in order:
        for ext in (".strace", ".strace.gz"):
            p = os.path.join(LAB, lab, "traces", f"{variant}.{flags}{ext}")
            if os.path.exists(p):
                return p
    return None


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()


def cut(lab, variant, timed=False):
    path = trace_of(lab, variant, ("f-tt-T-yy",) if timed else ("f", "f-tt", "f-tt-T-yy"))
    if path is None:
        print(f"cut.py: no trace for {lab} {variant}", file=sys.stderr)
        return
    per_pid = {}
    for line in read(path):
        m = HEAD.match(line)
        pid = m.group(1) or m.group(2) or "0"
        body = line[m.end():]
        if not body or body.startswith("+++") or (body.startswith("---") and lab not in KEEP_SIGNALS):
            continue
        per_pid.setdefault(pid, []).append(body)
    pid, lines = max(per_pid.items(), key=lambda kv: (len(kv[1]), kv[0]))
    out = os.path.join(LAB, lab, "excerpts")
    os.makedirs(out, exist_ok=True)
    for n in SIZES:
        start = max(0, min(len(lines) - n, len(lines) * 4 // 5 - n // 2))
        part = lines[start:start + n]
        name = os.path.join(out, f"{variant}.T.{n}.txt" if timed else f"{variant}.{n}.txt")
        with open(name, "w", encoding="utf-8") as f:
            f.write("\n".join(part) + "\n")
        print(f"{name}: {len(part)} lines of pid {pid} from {os.path.relpath(path, LAB)}", file=sys.stderr)


def main():
    want = set(sys.argv[1:])
    for lab, bad, good in PAIRS:
        if want and lab not in want:
            continue
        for v in (bad, good):
            cut(lab, v)
    for lab, bad, good in TIMED:
        if want and lab not in want:
            continue
        for v in (bad, good):
            cut(lab, v, timed=True)


if __name__ == "__main__":
    main()
