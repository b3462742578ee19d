#!/usr/bin/env python3
"""Resolve each NAME once with glibc's getaddrinfo (socket.getaddrinfo), as a client about to
connect to several services does, and print how long each lookup took.

usage: resolve.py NAME [NAME...]
"""
import socket
import sys
import time

for name in sys.argv[1:]:
    t = time.monotonic()
    try:
        addrs = sorted({a[4][0] for a in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)})
        result = ",".join(addrs)
    except socket.gaierror as e:
        result = f"error: {e.strerror}"
    print(f"{name}: {result} in {(time.monotonic() - t) * 1000:.1f} ms", flush=True)
