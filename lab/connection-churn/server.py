#!/usr/bin/env python3
"""A small HTTP/1.1 keep-alive server for the lab (loopback only, bounded in time).

usage: server.py PORTFILE [--tls CERT KEY] [--addr 127.0.0.1 ...] [--max-seconds 120] [--http10]

Binds port 0 on every --addr (default 127.0.0.1), writes "ADDR PORT" lines to PORTFILE once
listening, serves GET with a 2 KB body and Content-Length (so clients may keep the
connection), and exits after --max-seconds. --http10 answers as HTTP/1.0 (http.server's own
default: the server closes the connection after every answer). The client variants trace only
the clients; the srv-* variants trace this server.
"""
import http.server
import socketserver
import ssl
import sys
import threading
import time

BODY = b"<feed>" + b"x" * 2048 + b"</feed>\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive unless the client says otherwise
    wbufsize = 1 << 16  # headers and body leave in one send
    disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls after TLS session tickets

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def main():
    args = sys.argv[1:]
    portfile = args.pop(0)
    addrs, tls, max_s = [], None, 120.0
    while args:
        a = args.pop(0)
        if a == "--tls":
            tls = (args.pop(0), args.pop(0))
        elif a == "--addr":
            addrs.append(args.pop(0))
        elif a == "--max-seconds":
            max_s = float(args.pop(0))
        elif a == "--http10":
            Handler.protocol_version = "HTTP/1.0"
        else:
            sys.exit(f"server.py: unknown argument {a}")
    addrs = addrs or ["127.0.0.1"]
    for a in addrs:
        if not a.startswith("127."):
            sys.exit("server.py: loopback addresses only")
    servers = []
    port = 0
    for a in addrs:
        srv = Server((a, port), Handler)
        port = srv.server_address[1]  # the same port on every address
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
        servers.append(srv)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    with open(portfile + ".tmp", "w") as f:
        for s in servers:
            f.write(f"{s.server_address[0]} {s.server_address[1]}\n")
    import os
    os.rename(portfile + ".tmp", portfile)
    time.sleep(max_s)


if __name__ == "__main__":
    main()
