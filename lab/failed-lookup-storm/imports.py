"""imports: Python imports 30 modules with a long sys.path (30 empty directories and 30
missing ones in front of the directory that holds them). Python's import system caches
directory listings (importlib's FileFinder) and remembers missing entries in
sys.path_importer_cache, so even this long path costs only a few failed lookups: a
near-miss that must stay quiet.

    python3 imports.py ROOT
"""
import importlib
import os
import sys

root = sys.argv[1]
sys.path[:0] = [os.path.join(root, "empty%d" % i) for i in range(30)] + [
    os.path.join(root, "missing%d" % i) for i in range(30)
]
sys.path.append(os.path.join(root, "mods"))
total = 0
for i in range(30):
    total += importlib.import_module("mod%d" % i).VALUE
sys.exit(0 if total == sum(range(30)) else 1)
