#!/usr/bin/env python3
"""HTTP/1.1 download over a raw socket, the way hand-written clients do it.

usage: client.py PORT MODE [PROCS]

  eof      BAD: keep-alive request, then recv() until the server closes: the response is
           complete long before, the client waits for the server's keep-alive timeout
  timeout  BAD: the same loop with a 1.5 s socket timeout: it ends when the timeout fires
  length   GOOD: reads the headers, then exactly Content-Length bytes, and closes
  close    GOOD: sends "Connection: close"; reading until EOF ends when the data ends
  reuse    near-miss: five requests on one keep-alive connection, each read to its
           Content-Length, the next sent right away, then close
  poll     near-miss: an HTTP/1.0 stream (/poll) whose lines arrive every 0.6 s; the server
           ends it by closing 0.6 s after the last line; read until EOF. The wait before the
           EOF is as long as the waits between the lines: the pace of the stream, no stall

PROCS > 1 forks that many children, each doing one download (multi-process traces).
"""

import os
import socket
import sys

HOST = "127.0.0.1"


def request(path, close=False, version="1.1"):
    conn = "close" if close else "keep-alive"
    return f"GET {path} HTTP/{version}\r\nHost: {HOST}\r\nConnection: {conn}\r\n\r\n".encode()


def read_headers(s, buf):
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit("connection closed in the headers")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    return length, rest


def read_framed(s, buf=b""):
    """One response, read to its Content-Length; returns (body length, leftover)."""
    length, body = read_headers(s, buf)
    while len(body) < length:
        chunk = s.recv(min(65536, length - len(body)))
        if not chunk:
            raise SystemExit("connection closed in the body")
        body += chunk
    return length, body[length:]


def read_to_eof(s):
    total = 0
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return total
        total += len(chunk)


def download(port, mode):
    s = socket.create_connection((HOST, port))
    try:
        if mode == "eof":
            s.sendall(request("/body.bin"))
            n = read_to_eof(s)
        elif mode == "timeout":
            s.settimeout(1.5)
            s.sendall(request("/body.bin"))
            n = 0
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    n += len(chunk)
            except socket.timeout:
                pass
        elif mode == "length":
            s.sendall(request("/body.bin"))
            n, _ = read_framed(s)
        elif mode == "close":
            s.sendall(request("/body.bin", close=True))
            n = read_to_eof(s)
        elif mode == "reuse":
            n, left = 0, b""
            for _ in range(5):
                s.sendall(request("/body.bin"))
                got, left = read_framed(s, left)
                n += got
        elif mode == "poll":
            # HTTP/1.0: no chunked framing, the server ends the body by closing
            s.sendall(request("/poll", close=True, version="1.0"))
            n = read_to_eof(s)
        else:
            raise SystemExit(f"unknown mode {mode}")
    finally:
        s.close()
    print(f"{mode}: {n} bytes")


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if procs <= 1:
        download(port, mode)
        return
    kids = []
    for _ in range(procs):
        pid = os.fork()
        if pid == 0:
            try:
                download(port, mode)
            finally:
                os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
