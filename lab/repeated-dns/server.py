#!/usr/bin/env python3
"""A small HTTP/1.1 keep-alive server for the lab (127.0.0.1 only, bounded in time).

usage: server.py PORTFILE [--max-seconds 120]

Binds 127.0.0.1 port 0, writes the port to PORTFILE once listening, answers GET with a 2 KB
body and Content-Length, exits after --max-seconds. Not traced: only the clients are.
"""
import http.server
import os
import socketserver
import sys
import threading
import time

BODY = b"<feed>" + b"x" * 2048 + b"</feed>\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def server_bind(self):
        # plain TCPServer bind: HTTPServer's would look our own name up (getfqdn)
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]


def main():
    portfile = sys.argv[1]
    max_s = float(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--max-seconds" else 120.0
    srv = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.rename(portfile + ".tmp", portfile)
    time.sleep(max_s)


if __name__ == "__main__":
    main()
