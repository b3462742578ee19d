"""A file server on 127.0.0.1 in Python: syslint lab userspace-copy (README.md). It answers N
connections one after another with the whole of FILE after a short header, then exits.

  serve.py sendall  FILE N PORTFILE   conn.sendall(f.read(65536)) until EOF (BAD: a copy in user space)
  serve.py sendfile FILE N PORTFILE   conn.sendfile(f) (GOOD: os.sendfile in the kernel)
  serve.py tls      FILE N PORTFILE CERT KEY   the same bytes over TLS, read and sent with sendall
                                      (near miss: encryption needs them in user space)
  serve.py gzip     FILE N PORTFILE   the file compressed with zlib per connection, then sent
                                      (near miss: the bytes sent are not the bytes read)
Bounded: N connections and a 120 s alarm.
"""
import os
import signal
import socket
import ssl
import sys
import zlib

mode, path, n, portfile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
signal.alarm(120)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
ctx = None
if mode == "tls":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[5], sys.argv[6])
with open(portfile, "w") as p:
    p.write(f"{ls.getsockname()[1]}\n")
for _ in range(n):
    conn, _ = ls.accept()
    if ctx:
        conn = ctx.wrap_socket(conn, server_side=True)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if mode == "gzip":
            z = zlib.compressobj(6)
            out = b"".join(z.compress(chunk) for chunk in iter(lambda: f.read(65536), b"")) + z.flush()
            conn.sendall(b"LEN %d\n" % len(out))
            conn.sendall(out)
        else:
            conn.sendall(b"LEN %d\n" % size)
            if mode == "sendfile":
                conn.sendfile(f)
            else:
                while chunk := f.read(65536):
                    conn.sendall(chunk)
    conn.close()
