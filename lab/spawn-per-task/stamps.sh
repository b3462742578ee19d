#!/bin/bash
# stamps.sh each|once FILE: print the date of each epoch timestamp in FILE (one per line).
#   each: a `date` process per line, as a shell loop does (command substitution, one fork and
#         exec per line)
#   once: one `date -f FILE` reading every line itself
#   helper: a `bash -c` helper per line that forks a child of its own (a subshell for its
#         command substitution, no exec), as a mail or backup helper forks its worker
set -eu
case "$1" in
each)
    while read -r ts; do
        d=$(date -u -d "@$ts" +%F)
        echo "$ts $d"
    done < "$2" ;;
helper)
    while read -r ts; do
        bash -c 'd=$(printf "%(%F)T" "$1"); echo "$1 $d"' helper "$ts"
    done < "$2" ;;
once)
    paste -d' ' "$2" <(date -u -f <(sed 's/^/@/' "$2") +%F) ;;
*) echo "usage: stamps.sh each|once|helper FILE" >&2; exit 2 ;;
esac
