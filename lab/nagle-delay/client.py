#!/usr/bin/env python3
"""A request/response client in Python over a plain socket (the wire format of nagle.c's
server: an 8-byte header "%7d\\n" with the body length, then the body; a 16-byte answer).

usage: client.py MODE PORT N
  two-sends  sock.sendall(header); sock.sendall(body)       (BAD: Nagle holds the body)
  nodelay    the same with TCP_NODELAY set                   (GOOD)
  one-send   sock.sendall(header + body)                     (GOOD)
"""
import socket
import sys
import time

mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = b'{"get": "user:1234", "fields": ["name", "email", "plan"]}'
header = b"%7d\n" % len(body)
s = socket.create_connection(("127.0.0.1", port))
if mode == "nodelay":
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
total = 0.0
for _ in range(n):
    t = time.monotonic()
    if mode == "one-send":
        s.sendall(header + body)
    else:
        s.sendall(header)
        s.sendall(body)
    got = b""
    while len(got) < 16:
        d = s.recv(16 - len(got))
        if not d:
            sys.exit("client.py: the server closed the connection")
        got += d
    total += time.monotonic() - t
s.close()
print(f"{mode}: {n} requests, mean round trip {total / n * 1000:.2f} ms")
