#!/usr/bin/env python3
"""A request loop that resolves a name per request (glibc reads /etc/hosts again each time: no
nscd) and sends an 8 KiB response on a socket; the other end of a socketpair reads it.

usage: hosts.py REQUESTS
"""
import socket
import sys

n = int(sys.argv[1])
page = b"x" * 8192
a, b = socket.socketpair()
for _ in range(n):
    socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)
    a.sendall(page)
    got = 0
    while got < len(page):
        got += len(b.recv(65536))
print(f"{n} responses sent")
