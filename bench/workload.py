#!/usr/bin/env python3
"""Python part of the syslint benchmark workload (run under strace by workload.sh).

File work plus loopback-only socket work: http.client against the private nginx,
a threaded TCP echo server on 127.0.0.1, a UDP round trip, and a child process.
Usage: workload.py PORT WORKDIR
"""
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

port = int(sys.argv[1])
work = sys.argv[2]
deadline = time.monotonic() + 20


def http_part():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    sizes = {}
    for i in range(60):
        if time.monotonic() > deadline:
            break
        path = ["/", "/docs/", f"/docs/page{i % 40 + 1}.html", "/blob.bin", "/missing/x", "/nope.html"][i % 6]
        try:
            conn.request("GET", path, headers={"Connection": "keep-alive"})
            resp = conn.getresponse()
            body = resp.read()
            sizes[path] = (resp.status, len(body))
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.close()
    return sizes


def echo_server(srv, stop):
    srv.settimeout(0.5)
    while not stop.is_set():
        try:
            c, _ = srv.accept()
        except socket.timeout:
            continue
        with c:
            while True:
                data = c.recv(4096)
                if not data:
                    break
                c.sendall(data)


def tcp_part():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()
    threads = [threading.Thread(target=echo_server, args=(srv, stop)) for _ in range(2)]
    for t in threads:
        t.start()
    total = 0
    for i in range(20):
        with socket.create_connection(srv.getsockname(), timeout=5) as c:
            msg = os.urandom(512 + i * 64)
            c.sendall(msg)
            got = b""
            while len(got) < len(msg):
                chunk = c.recv(65536)
                if not chunk:
                    break
                got += chunk
            total += len(got)
    stop.set()
    for t in threads:
        t.join(timeout=5)
    srv.close()
    # UDP round trip on loopback
    u1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u1.bind(("127.0.0.1", 0))
    u2.settimeout(1)
    for i in range(10):
        u2.sendto(b"ping %d" % i, u1.getsockname())
        data, addr = u1.recvfrom(100)
        u1.sendto(data.upper(), addr)
        u2.recvfrom(100)
    u1.close()
    u2.close()
    # socketpair
    a, b = socket.socketpair()
    a.sendall(b"x" * 1000)
    b.recv(1000)
    a.close()
    b.close()
    return total


def file_part():
    d = os.path.join(work, "py")
    os.makedirs(d, exist_ok=True)
    h = hashlib.sha256()
    for i in range(30):
        p = os.path.join(d, f"f{i}.tmp")
        with open(p, "wb") as f:
            f.write(os.urandom(2048 * (i % 5 + 1)))
            f.flush()
            if i % 10 == 0:
                os.fsync(f.fileno())
        os.stat(p)
        with open(p, "rb") as f:
            h.update(f.read())
        os.rename(p, p + ".old")
    entries = sorted(e.name for e in os.scandir(d))
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump(entries, f)
    try:
        open("/nonexistent/really/not/here")
    except OSError:
        pass
    for root, _dirs, files in os.walk("/usr/share/zoneinfo/Europe"):
        for name in files[:20]:
            try:
                os.lstat(os.path.join(root, name))
            except OSError:
                pass
    shutil.rmtree(d)
    subprocess.run(["ls", "-l", work], stdout=subprocess.DEVNULL, timeout=5)
    return h.hexdigest()


if __name__ == "__main__":
    print(http_part())
    print(tcp_part())
    print(file_part())
