"""The client (not traced): fetch.py PORT N [tls]: connect N times, read the header line and then
the announced bytes, discard them."""
import socket
import ssl
import sys

port, n = int(sys.argv[1]), int(sys.argv[2])
ctx = None
if len(sys.argv) > 3 and sys.argv[3] == "tls":
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    if ctx:
        s = ctx.wrap_socket(s, server_hostname="localhost")
    f = s.makefile("rb")
    want = int(f.readline().split()[1])
    got = 0
    while got < want:
        b = f.read(min(1 << 20, want - got))
        if not b:
            raise SystemExit(f"fetch: short read {got} of {want}")
        got += len(b)
    s.close()
