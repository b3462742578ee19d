#!/usr/bin/env bash
# Re-record the bundled demo trace (needs strace and python3).
set -euo pipefail
cd "$(dirname "$0")"
env -i PATH=/usr/bin:/bin strace -f -tt -T -yy -s 64 -o fetch.strace python3 fetch.py
gzip -9 -f -k fetch.strace
rm fetch.strace
ls -l fetch.strace.gz
