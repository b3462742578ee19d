"""cputime.py ITEMS: measure each item's CPU time with time.process_time() (a CPU-time clock:
clock_gettime(CLOCK_PROCESS_CPUTIME_ID), which no vDSO serves) and log it, buffered, to
/dev/null. The clock reads are system calls whatever the clocksource: clock-syscalls reports them
as info at most (the program asked for a clock only the kernel can read)."""
import os
import sys
import time

items = int(sys.argv[1])
with open(os.devnull, "w") as log:
    for i in range(items):
        t0 = time.process_time()
        x = i
        for _ in range(50):
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        log.write(f"item {i} cpu {time.process_time() - t0:.9f} {x & 0xff}\n")
