"""pywait.py SECONDS: start `sleep SECONDS` and wait for it with Popen.wait(timeout=60).

CPython (3.11 here) waits for a child with a timeout by polling: waitpid(WNOHANG), then a sleep
that doubles from 0.5 ms up to 50 ms, again and again (Lib/subprocess.py, Popen._wait). Without a
timeout it blocks in waitpid() instead."""
import subprocess
import sys

p = subprocess.Popen(["/bin/sleep", sys.argv[1]])
sys.exit(p.wait(timeout=60))
