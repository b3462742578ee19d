#!/usr/bin/env python3
"""An HTTP/1.1 keep-alive client and server on loopback, for Nagle meeting the delayed ACK.

usage: post.py server PORTFILE           serve POSTs on 127.0.0.1 (a free port, written to
                                        PORTFILE) for 120 s at most; each answer goes out in one
                                        write, so only the client's writes matter
       post.py client MODE PORT N       N POSTs of a 200-byte JSON body on one connection with
                                        http.client; MODE:
         file-body   the body as a file object: http.client sends the headers, then the body
                     (two small sends: BAD)
         bytes-body  the body as bytes: http.client sends headers and body in one send (GOOD)
"""
import http.client
import http.server
import io
import os
import socketserver
import sys
import time

BODY = b'{"order": 1234, "items": [' + b", ".join(b'{"sku": "A-%03d", "qty": 1}' % i for i in range(6)) + b"]}"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        body = b'{"ok": true}'
        self.wfile.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )

    def log_message(self, *args):
        pass


def server(portfile):
    srv = socketserver.TCPServer(("127.0.0.1", 0), Handler)
    srv.timeout = 120
    with open(portfile + ".tmp", "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.rename(portfile + ".tmp", portfile)
    srv.handle_request()  # one keep-alive connection, all its requests


def client(mode, port, n):
    c = http.client.HTTPConnection("127.0.0.1", port)
    total = 0.0
    for _ in range(n):
        t = time.monotonic()
        body = io.BytesIO(BODY) if mode == "file-body" else BODY
        c.request("POST", "/orders", body=body, headers={"Content-Type": "application/json", "Content-Length": str(len(BODY))})
        r = c.getresponse()
        r.read()
        total += time.monotonic() - t
    c.close()
    print(f"{mode}: {n} requests, mean round trip {total / n * 1000:.2f} ms")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "server":
        server(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "client":
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
