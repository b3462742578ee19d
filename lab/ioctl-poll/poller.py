"""poller.py: rdpadd's loop (rivendell#1004) in CPython: 6 pipes whose writers are gone, each
round select() on all 6 (returns at once: a pipe at EOF is readable), then per fd
fcntl.ioctl(FIONREAD) -> 0 and os.read() -> b"" (EOF, ignored), the fd kept in the set.

    python3 poller.py ROUNDS
"""
import array
import fcntl
import os
import select
import signal
import sys
import termios

signal.alarm(60)
rounds = int(sys.argv[1])
fds = []
for _ in range(6):
    r, w = os.pipe()
    os.close(w)  # the writer is gone: the read end is at EOF
    fds.append(r)
avail = array.array("i", [0])
for _ in range(rounds):
    ready, _, _ = select.select(fds, [], [], 1.0)
    for fd in ready:
        fcntl.ioctl(fd, termios.FIONREAD, avail, True)
        if avail[0] > 0:
            continue  # never: at EOF
        os.read(fd, 4096)  # b"": EOF, ignored
