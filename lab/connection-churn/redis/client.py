"""A Redis client doing N requests (SET then GET of one key each) against 127.0.0.1:PORT.

  new-client  a new redis.Redis() per request, as a handler that builds its client inside
              the request does: each one opens its own connection (and drops it when the
              client goes away)
  one-client  one redis.Redis() for the whole program: its connection pool keeps one
              connection and every request reuses it (the fix connection-churn names)

usage: client.py MODE PORT N
"""
import sys

import redis

mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if mode == "new-client":
    for i in range(n):
        r = redis.Redis(host="127.0.0.1", port=port)
        r.set(f"k{i}", "v")
        r.get(f"k{i}")
elif mode == "one-client":
    r = redis.Redis(host="127.0.0.1", port=port)
    for i in range(n):
        r.set(f"k{i}", "v")
        r.get(f"k{i}")
else:
    sys.exit(f"unknown mode {mode}")
