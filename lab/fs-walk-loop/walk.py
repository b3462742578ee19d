"""walk.py MODE TOP: list every file under TOP, as a backup, indexer or build tool would.

  follow    os.walk(TOP, followlinks=True): follows symbolic links to directories, with no
            record of where it has been
  nofollow  os.walk(TOP) (followlinks=False, the default): a link is listed, not entered
  glob      glob.glob(TOP + "/**", recursive=True): Python's recursive glob, which follows links
            to directories too

Prints how many names it found."""
import glob
import os
import sys

mode, top = sys.argv[1], sys.argv[2]
if mode == "glob":
    print(len(glob.glob(top + "/**", recursive=True)))
elif mode in ("follow", "nofollow"):
    n = 0
    for _dir, _dirs, files in os.walk(top, followlinks=mode == "follow"):
        n += len(files)
    print(n)
else:
    sys.exit("walk.py: unknown mode " + mode)
