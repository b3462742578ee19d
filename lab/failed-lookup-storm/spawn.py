"""spawn: a Python service that runs a helper program once per request with
subprocess.run, the way many services shell out to gzip, convert or git.

    python3 spawn.py bad|good ROOT REQUESTS

bad:  PATH lists 30 directories (none exists) before /usr/bin and the helper is named
      by bare name, so every spawn searches PATH: the child tries execve() in each
      directory before the one that holds it
good: the helper is resolved once (shutil.which) and run by absolute path
"""
import os
import shutil
import subprocess
import sys

mode, root, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.environ["PATH"] = os.pathsep.join([os.path.join(root, "bin%d" % i) for i in range(30)] + ["/usr/bin", "/bin"])
helper = "true"
if mode == "good":
    helper = shutil.which("true")
elif mode != "bad":
    sys.exit("usage: spawn.py bad|good ROOT REQUESTS")
for _ in range(requests):
    subprocess.run([helper], check=True)
