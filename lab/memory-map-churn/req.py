"""req.py: the same loop in Python: REQUESTS requests, each building a SIZE_KIB buffer
(bytes(SIZE) * 1 copied into a bytearray, as a response assembled in memory would be) and reading
it back; `each` makes a new buffer per request, `reuse` one buffer for all.

usage: python3 req.py each|reuse SIZE_KIB REQUESTS"""
import resource
import sys
import time

mode, size, n = sys.argv[1], int(sys.argv[2]) * 1024, int(sys.argv[3])
if mode not in ("each", "reuse"):
    sys.exit("req.py: unknown mode " + mode)
t0 = time.monotonic()
total = 0
kept = bytearray(size) if mode == "reuse" else None
for i in range(n):
    buf = kept if kept is not None else bytearray(size)
    buf[::4096] = bytes([i & 0xFF]) * len(range(0, size, 4096))  # the request fills its buffer
    total += sum(buf[::65536])
    del buf
ru = resource.getrusage(resource.RUSAGE_SELF)
print(f"{mode} {size // 1024} KiB x {n}: sum {total} wall {time.monotonic() - t0:.3f} s "
      f"user {ru.ru_utime:.3f} s sys {ru.ru_stime:.3f} s minor faults {ru.ru_minflt}", file=sys.stderr)
