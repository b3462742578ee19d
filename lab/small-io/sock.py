#!/usr/bin/env python3
"""Download http://127.0.0.1:PORT/PATH with a raw socket and recv(BUFSIZE) until EOF.

usage: sock.py PORT PATH BUFSIZE

Near-miss for small-io: with BUFSIZE 262144 each recv() asks for 256 KiB; on a socket many
return less because that is all that had arrived, which is not the program's fault.
"""

import socket
import sys

port, path, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
n = 0
while True:
    chunk = s.recv(size)
    if not chunk:
        break
    n += len(chunk)
s.close()
print(f"{n} bytes")
