"""A client that needs a server on 127.0.0.1:PORT that is not there, through real libraries:
syslint lab retry-storm (README.md).

  retry.py loop    PORT N   socket.create_connection(timeout=1) in a loop, retried at once (BAD)
  retry.py urllib3 PORT N   urllib3 Retry(connect=N) with its default backoff_factor=0: every
                            connect retried at once (BAD: the library's default)
  retry.py urllib3-backoff PORT N  the same with backoff_factor=0.01 (exponential: 10, 20, 40 ms, ...,
                            capped at 0.32 s by backoff_max here so the lab stays short) (GOOD)
"""
import socket
import sys

mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if mode == "loop":
    for _ in range(n):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            sys.exit(0)
        except ConnectionRefusedError:
            continue
    sys.exit(1)

import urllib3
from urllib3.util.retry import Retry

factor = 0.01 if mode == "urllib3-backoff" else 0.0
retry = Retry(total=n, connect=n, read=0, backoff_factor=factor)
if factor:
    Retry.BACKOFF_MAX = 0.32  # urllib3 1.26's cap (120 s by default)
http = urllib3.PoolManager(retries=retry, timeout=1.0)
try:
    http.request("GET", f"http://127.0.0.1:{port}/health")
except urllib3.exceptions.MaxRetryError as e:
    print("gave up:", e.reason, file=sys.stderr)
    sys.exit(1)
