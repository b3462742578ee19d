"""tls: an HTTPS client and server on 127.0.0.1, the client making REQUESTS requests, each on a
new TLS connection (the server closes after each reply).

    python3 tls.py server CERT KEY PORTFILE     (serves until killed; bounded by an alarm)
    python3 tls.py client-each|client-once CAFILE PORT REQUESTS

client-each: ssl.create_default_context() per request, as code that builds its context in the
             request function does: the system CA bundle is opened, read and parsed every time
client-once: one context made at start, used for every connection
"""
import signal
import socket
import ssl
import sys

mode = sys.argv[1]
if mode == "server":
    cert, key, portfile = sys.argv[2:5]
    signal.alarm(120)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    with open(portfile, "w") as f:
        f.write(str(srv.getsockname()[1]))
    while True:
        c, _ = srv.accept()
        try:
            with ctx.wrap_socket(c, server_side=True) as s:
                s.recv(4096)
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        except (ssl.SSLError, OSError):
            pass
elif mode in ("client-each", "client-once"):
    cafile, port, requests = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    signal.alarm(120)

    def context():
        ctx = ssl.create_default_context()  # loads the system CA bundle
        ctx.load_verify_locations(cafile)  # and trusts the lab's own certificate
        return ctx

    shared = context() if mode == "client-once" else None
    got = 0
    for _ in range(requests):
        ctx = shared or context()
        with socket.create_connection(("127.0.0.1", port)) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                while True:
                    b = s.recv(4096)
                    if not b:
                        break
                    got += len(b)
    print(requests, got)
else:
    sys.exit("usage: tls.py server|client-each|client-once ...")
