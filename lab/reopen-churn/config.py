"""config: a request handler that needs a setting from a JSON config file.

    python3 config.py each|once|reload CONFIG REQUESTS

each:   every request opens, reads and parses the config again (json.load(open(...)))
once:   read at start, kept in memory
reload: read again every 100th request (a periodic reload: a near miss)
"""
import json
import sys

mode, path, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode not in ("each", "once", "reload"):
    sys.exit("usage: config.py each|once|reload CONFIG REQUESTS")


def load():
    with open(path) as f:
        return json.load(f)


cfg = load()
total = 0
for i in range(requests):
    if mode == "each" or (mode == "reload" and i % 100 == 0):
        cfg = load()
    total += cfg["limits"]["max_body"] + len(cfg["name"])
print(requests, total)
