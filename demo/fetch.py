#!/usr/bin/env python3
"""The demo workload: a small feed fetcher with the habits syslint exists to find.

It starts an HTTP server on 127.0.0.1 (a thread in the same process) and fetches 40 URLs
from it the naive way: a new connection and a fresh name lookup per request, 512-byte reads.
Loopback only, bounded: 40 requests, then it stops.
"""
import http.client
import http.server
import socket
import threading

BODY = b"<item>" + b"x" * 20000 + b"</item>\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = srv.server_address[1]
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    total = 0
    for i in range(40):
        # a new lookup and a new connection for every feed: what connection reuse avoids
        addr = socket.getaddrinfo("localhost", port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
        conn = http.client.HTTPConnection(addr[0], addr[1], timeout=5)
        conn.request("GET", f"/feed/{i}")
        resp = conn.getresponse()
        while True:
            chunk = resp.read(512)
            if not chunk:
                break
            total += len(chunk)
        conn.close()
    srv.shutdown()
    print(f"fetched {total} bytes")


if __name__ == "__main__":
    main()
