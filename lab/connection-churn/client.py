#!/usr/bin/env python3
"""Fetch loop clients for connection-churn (Python's http.client, loopback only, bounded).

usage: client.py MODE N HOST:PORT [HOST:PORT ...] [--tls CAFILE]

  new-conn   BAD: a new HTTPConnection (TCP connect, and a TLS handshake with --tls) for each
             of the N requests, closed after the response
  keepalive  GOOD: one HTTPConnection reused for all N requests (HTTP/1.1 keep-alive)
  two-conns  near-miss: two keep-alive connections, N requests alternating between them
  few-hosts  near-miss: one request to each endpoint given (a handful of different hosts)
  parallel-new-conn
             BAD: N requests from 8 threads, a new HTTPConnection for each request
  pool       BAD (idle pool): opens N connections up front to one endpoint, then sends
             3*N requests one at a time round-robin over them (one request in flight)
"""
import http.client
import ssl
import sys


def connect(endpoint, ctx):
    host, port = endpoint.rsplit(":", 1)
    if ctx:
        return http.client.HTTPSConnection(host, int(port), timeout=10, context=ctx)
    return http.client.HTTPConnection(host, int(port), timeout=10)


def fetch(conn, path):
    conn.request("GET", path)
    resp = conn.getresponse()
    return len(resp.read())


def main():
    args = sys.argv[1:]
    ctx = None
    if "--tls" in args:
        i = args.index("--tls")
        ctx = ssl.create_default_context(cafile=args[i + 1])
        del args[i : i + 2]
    mode, n, endpoints = args[0], min(int(args[1]), 200), args[2:]
    total = 0
    if mode == "new-conn":
        for i in range(n):
            c = connect(endpoints[0], ctx)
            total += fetch(c, f"/feed/{i}")
            c.close()
    elif mode == "keepalive":
        c = connect(endpoints[0], ctx)
        for i in range(n):
            total += fetch(c, f"/feed/{i}")
        c.close()
    elif mode == "two-conns":
        cs = [connect(endpoints[0], ctx), connect(endpoints[0], ctx)]
        for i in range(n):
            total += fetch(cs[i % 2], f"/feed/{i}")
        for c in cs:
            c.close()
    elif mode == "few-hosts":
        for i, ep in enumerate(endpoints):
            c = connect(ep, ctx)
            total += fetch(c, f"/feed/{i}")
            c.close()
    elif mode == "parallel-new-conn":
        from concurrent.futures import ThreadPoolExecutor

        def one(i):
            c = connect(endpoints[0], ctx)
            try:
                return fetch(c, f"/feed/{i}")
            finally:
                c.close()

        with ThreadPoolExecutor(max_workers=8) as pool:
            total = sum(pool.map(one, range(n)))
    elif mode == "pool":
        cs = [connect(endpoints[0], ctx) for _ in range(n)]
        for c in cs:
            c.connect()
        for i in range(3 * n):
            total += fetch(cs[i % n], f"/feed/{i}")
        for c in cs:
            c.close()
    else:
        sys.exit(f"client.py: unknown mode {mode}")
    print(f"{mode}: fetched {total} bytes")


if __name__ == "__main__":
    main()
