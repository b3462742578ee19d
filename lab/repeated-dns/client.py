#!/usr/bin/env python3
"""Fetch loop clients for repeated-dns (Python's http.client and socket.getaddrinfo, which is
glibc's getaddrinfo). Loopback only, bounded.

usage: client.py MODE N NAME PORT

  resolve-each  BAD: a new HTTPConnection(NAME, PORT) per request: http.client resolves NAME
                (getaddrinfo, A and AAAA) again for every one of the N requests
  hosts-each    BAD: socket.getaddrinfo(NAME, PORT, AF_INET) before each request, then a
                connection to the address (NAME answered from /etc/hosts, e.g. localhost)
  resolve-once  GOOD: one HTTPConnection(NAME, PORT): one lookup, N requests on one connection
  few-names     near-miss: one request to each of N different names a0.NAME, a1.NAME, ...
  single        near-miss: one lookup, one request
"""
import http.client
import socket
import sys


def get(conn, path):
    conn.request("GET", path)
    return len(conn.getresponse().read())


def main():
    mode, n, name, port = sys.argv[1], min(int(sys.argv[2]), 200), sys.argv[3], int(sys.argv[4])
    total = 0
    if mode == "resolve-each":
        for i in range(n):
            c = http.client.HTTPConnection(name, port, timeout=10)
            total += get(c, f"/feed/{i}")
            c.close()
    elif mode == "hosts-each":
        for i in range(n):
            addr = socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
            c = http.client.HTTPConnection(addr[0], addr[1], timeout=10)
            total += get(c, f"/feed/{i}")
            c.close()
    elif mode == "resolve-once":
        c = http.client.HTTPConnection(name, port, timeout=10)
        for i in range(n):
            total += get(c, f"/feed/{i}")
        c.close()
    elif mode == "few-names":
        for i in range(n):
            c = http.client.HTTPConnection(f"a{i}.{name}", port, timeout=10)
            total += get(c, f"/feed/{i}")
            c.close()
    elif mode == "single":
        c = http.client.HTTPConnection(name, port, timeout=10)
        total += get(c, "/feed/0")
        c.close()
    else:
        sys.exit(f"client.py: unknown mode {mode}")
    print(f"{mode}: fetched {total} bytes")


if __name__ == "__main__":
    main()
