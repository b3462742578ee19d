#!/usr/bin/env python3
"""A tiny DNS responder for the lab (UDP, loopback only, bounded).

usage: dnsd.py ADDRFILE [--max-seconds 120] [--max-queries 2000]

Binds UDP port 53 on a free loopback address 127.53.X.Y (so parallel runs do not collide),
writes that address to ADDRFILE, and answers: A queries for names under lab.test with
127.0.0.1 (TTL 60), AAAA queries for them with no data (NOERROR, no answer), anything else
with NXDOMAIN. Stops after --max-seconds or --max-queries.
"""
import random
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


def main():
    args = sys.argv[1:]
    addrfile = args.pop(0)
    max_s, max_q = 120.0, 2000
    while args:
        a = args.pop(0)
        if a == "--max-seconds":
            max_s = float(args.pop(0))
        elif a == "--max-queries":
            max_q = int(args.pop(0))
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
    import os

    os.rename(addrfile + ".tmp", addrfile)
    deadline = time.monotonic() + max_s
    n = 0
    while n < max_q and time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            data, peer = s.recvfrom(512)
        except socket.timeout:
            break
        n += 1
        if len(data) < 17 or data[2] & 0x80:
            continue
        end = question_end(data)
        qtype = struct.unpack(">H", data[end - 4 : end - 2])[0]
        name = qname(data)
        question = data[12:end]
        qid = data[:2]
        if name == "lab.test" or name.endswith(".lab.test"):
            if qtype == 1:
                answer = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton("127.0.0.1")
                resp = qid + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + question + answer
            else:
                resp = qid + struct.pack(">HHHHH", 0x8180, 1, 0, 0, 0) + question
        else:
            resp = qid + struct.pack(">HHHHH", 0x8183, 1, 0, 0, 0) + question
        s.sendto(resp, peer)


if __name__ == "__main__":
    main()
