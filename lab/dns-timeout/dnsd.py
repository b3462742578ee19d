#!/usr/bin/env python3
"""A tiny DNS responder for the dns-timeout lab (UDP, loopback only, bounded).

usage: dnsd.py ADDRFILE [--aaaa answer|drop|race] [--silent] [--delay-ms N]
                        [--max-seconds 120] [--max-queries 2000]

Binds UDP port 53 on a free loopback address 127.53.X.Y (parallel runs do not collide) and
writes that address to ADDRFILE. Answers A queries for names under lab.test with 127.0.0.1
(TTL 60) and anything else with NXDOMAIN (the search-list candidates
feed.lab.test.ns.svc.cluster.local and the like). AAAA queries for lab.test names:
  answer  NOERROR with no data (the name has no IPv6 address): the healthy case
  drop    never answered (a server or middlebox that drops AAAA)
  race    the second of two queries that arrive together from one source port is dropped,
          as the Linux conntrack race drops glibc's parallel A+AAAA pair in Kubernetes;
          a query from a new port (single-request-reopen) or sent after the first was
          answered (single-request) is answered
--silent: answers nothing at all (a nameserver that is down: the queries are lost).
--delay-ms: waits before each answer (a resolver that far away).
Stops after --max-seconds or --max-queries.
"""
import os
import random
import select
import socket
import struct
import sys
import time


def question_end(data):
    i = 12
    while i < len(data) and data[i] != 0:
        i += 1 + data[i]
    return i + 5  # the zero label, QTYPE, QCLASS


def qname(data):
    labels, i = [], 12
    while i < len(data) and data[i] != 0:
        labels.append(data[i + 1 : i + 1 + data[i]].decode("ascii", "replace").lower())
        i += 1 + data[i]
    return ".".join(labels)


def answer(data, aaaa):
    """The response to one query, or None to drop it."""
    end = question_end(data)
    qtype = struct.unpack(">H", data[end - 4 : end - 2])[0]
    name = qname(data)
    question, qid = data[12:end], data[:2]
    if name == "lab.test" or name.endswith(".lab.test"):
        if qtype == 1:
            rr = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton("127.0.0.1")
            return qid + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + question + rr
        if qtype == 28 and aaaa == "drop":
            return None
        return qid + struct.pack(">HHHHH", 0x8180, 1, 0, 0, 0) + question
    return qid + struct.pack(">HHHHH", 0x8183, 1, 0, 0, 0) + question


def main():
    args = sys.argv[1:]
    addrfile = args.pop(0)
    max_s, max_q, aaaa, silent, delay = 120.0, 2000, "answer", False, 0.0
    while args:
        a = args.pop(0)
        if a == "--max-seconds":
            max_s = float(args.pop(0))
        elif a == "--max-queries":
            max_q = int(args.pop(0))
        elif a == "--aaaa":
            aaaa = args.pop(0)
        elif a == "--silent":
            silent = True
        elif a == "--delay-ms":
            delay = float(args.pop(0)) / 1000
        else:
            sys.exit(f"dnsd.py: unknown argument {a}")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(50):
        addr = f"127.53.{random.randint(1, 254)}.{random.randint(1, 254)}"
        try:
            s.bind((addr, 53))
            break
        except OSError:
            continue
    else:
        sys.exit("dnsd.py: no free 127.53.x.y:53")
    with open(addrfile + ".tmp", "w") as f:
        f.write(addr + "\n")
    os.rename(addrfile + ".tmp", addrfile)
    deadline = time.monotonic() + max_s
    n = 0
    while n < max_q and time.monotonic() < deadline:
        r, _, _ = select.select([s], [], [], max(0.1, deadline - time.monotonic()))
        if not r:
            break
        # what arrived together: the first datagram and any already queued behind it
        # (in race mode: whatever arrives within 20 ms of it, the "together" of the race; a
        # pair sent by one sendmmsg arrives microseconds apart, a query sent after the
        # answer to the first cannot be in the window)
        batch = [s.recvfrom(512)]
        gather = 0.02 if aaaa == "race" else 0.0
        while len(batch) < 64 and select.select([s], [], [], gather)[0]:
            batch.append(s.recvfrom(512))
        seen = set()
        for data, peer in batch:
            n += 1
            if silent or len(data) < 17 or data[2] & 0x80:
                continue
            racing = peer in seen
            seen.add(peer)
            if aaaa == "race" and racing:
                continue
            resp = answer(data, aaaa)
            if resp is None:
                continue
            if delay:
                time.sleep(delay)
            s.sendto(resp, peer)


if __name__ == "__main__":
    main()
