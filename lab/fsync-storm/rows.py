"""rows: insert ROWS rows into an SQLite table with Python's sqlite3 module.

    python3 rows.py autocommit|batch|wal DB ROWS

autocommit: every INSERT is its own transaction (isolation_level=None), so each one
            creates the rollback journal, syncs it and the database, and deletes it
batch:      all INSERTs in one transaction (`with db:` commits once at the end)
wal:        autocommit as above, but PRAGMA journal_mode=WAL and synchronous=NORMAL:
            commits append to the -wal file and only checkpoints sync
"""
import sqlite3
import sys

mode, path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode not in ("autocommit", "batch", "wal"):
    sys.exit("usage: rows.py autocommit|batch|wal DB ROWS")
db = sqlite3.connect(path, isolation_level=None)
if mode == "wal":
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
if mode == "batch":
    db.execute("BEGIN")
    db.executemany("INSERT INTO t (v) VALUES (?)", (("row %d" % i,) for i in range(rows)))
    db.execute("COMMIT")
else:
    for i in range(rows):
        db.execute("INSERT INTO t (v) VALUES (?)", ("row %d" % i,))
n = db.execute("SELECT count(*) FROM t").fetchone()[0]
db.close()
sys.exit(0 if n == rows else 1)
