"""The Python call-site proof (issue 31): a failed-lookup storm made by a named function.

probe_missing looks for N paths in directories that do not exist (a plugin or module search
that never finds anything), through the standard library's os.path.exists as such searches
do. Run with Python 3.12 or later and `-X perf`, the interpreter writes /tmp/perf-PID.map
naming each Python function's trampoline, and syslint's call site for the storm is
probe_missing in this file: genericpath.exists, the innermost Python function, is the
runtime's.

usage: python3 -X perf probe.py N      (bounded: 1 <= N <= 1,000,000)
"""
import os
import sys


def probe_missing(n):
    misses = 0
    for i in range(n):
        if not os.path.exists(f"/nonexistent-syslint-proof/dir{i % 50}/module.py"):  # the calls the finding is about
            misses += 1
    return misses


if __name__ == "__main__":
    n = int(sys.argv[1])
    if not 1 <= n <= 1_000_000:
        sys.exit("usage: probe.py N (1 <= N <= 1,000,000)")
    print(probe_missing(n))
