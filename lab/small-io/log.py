#!/usr/bin/env python3
"""Write N log lines of ~60 bytes to PATH.

usage: log.py MODE N PATH [PROCS]

  oswrite   BAD: os.write() per line: one write(2) of ~60 bytes per line
  logging   BAD: logging.FileHandler: the handler flushes after every record, one write(2) each
  buffered  GOOD: one file object with a 1 MiB buffer, lines written with f.write()

PROCS > 1 forks that many children, each writing N lines to the same file (O_APPEND).
"""

import logging
import os
import sys


def run(mode, n, path):
    pid = os.getpid()

    def line(i):
        return f"2024-01-01T00:00:00 worker={pid} request={i} status=200 bytes=1234\n"

    if mode == "oswrite":
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        for i in range(n):
            os.write(fd, line(i).encode())
        os.close(fd)
    elif mode == "logging":
        log = logging.getLogger("lab")
        log.setLevel(logging.INFO)
        handler = logging.FileHandler(path)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        log.addHandler(handler)
        for i in range(n):
            log.info("worker=%d request=%d status=200 bytes=1234", pid, i)
        handler.close()
    elif mode == "buffered":
        with open(path, "a", buffering=1 << 20) as f:
            for i in range(n):
                f.write(line(i))
    else:
        raise SystemExit(f"unknown mode {mode}")


def main():
    mode, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    procs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if procs <= 1:
        run(mode, n, path)
        return
    kids = []
    for _ in range(procs):
        pid = os.fork()
        if pid == 0:
            try:
                run(mode, n, path)
            finally:
                os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
