#!/usr/bin/env python3
"""A slow HTTP server for the socket near-miss: one connection, then exit.

usage: trickle.py PORTFILE

Listens on 127.0.0.1 (a free port, written to PORTFILE), accepts one connection, reads the
request and sends a 2 MiB body in 1 KiB pieces with TCP_NODELAY and a short pause between
them, so the client's large recv() calls mostly return 1 KiB: small returns that are not the
client's fault. Gives up after 30 s.
"""

import socket
import sys
import time

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
srv.settimeout(30)
with open(sys.argv[1], "w") as f:
    f.write(str(srv.getsockname()[1]))
conn, _ = srv.accept()
conn.settimeout(30)
conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
req = b""
while b"\r\n\r\n" not in req:
    chunk = conn.recv(4096)
    if not chunk:
        break
    req += chunk
size = 2 * 1024 * 1024
conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n".encode())
piece = b"x" * 1024
deadline = time.monotonic() + 30
for _ in range(size // len(piece)):
    conn.sendall(piece)
    time.sleep(0.0003)
    if time.monotonic() > deadline:
        break
conn.close()
srv.close()
