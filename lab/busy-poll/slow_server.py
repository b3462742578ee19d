#!/usr/bin/env python3
"""A slow HTTP server on 127.0.0.1: answers every GET after DELAY seconds.

usage: slow_server.py PORTFILE DELAY MAX_REQUESTS LIFETIME
Binds 127.0.0.1:0, writes the port to PORTFILE, serves at most MAX_REQUESTS requests and
exits after LIFETIME seconds whatever happens (bounded: it is a lab server).
"""
import http.server
import os
import sys
import threading
import time

portfile, delay, max_requests, lifetime = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])


class Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        time.sleep(delay)
        body = b"slow answer\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Slow)
tmp = portfile + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, portfile)
# the lifetime bound: exit even if nobody comes
threading.Timer(lifetime, lambda: os._exit(0)).start()
for _ in range(max_requests):
    srv.handle_request()
os._exit(0)
