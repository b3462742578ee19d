#!/bin/sh
# Builds the proof program the way Debian builds packages (-g -O2, no -fno-omit-frame-pointer)
# into OUT (default: this directory): `spin` with its debug information and symbols, and
# `spin-stripped`, the same binary after `strip` (no .symtab, no DWARF; .eh_frame stays, as in
# every stripped distribution binary).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
gcc -g -O2 -o "$out/spin.tmp.$$" "$here/spin.c"
mv "$out/spin.tmp.$$" "$out/spin"
strip -o "$out/spin-stripped.tmp.$$" "$out/spin"
mv "$out/spin-stripped.tmp.$$" "$out/spin-stripped"
