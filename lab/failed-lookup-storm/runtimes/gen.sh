#!/usr/bin/env bash
# gen.sh DIR: writes the Java and Node projects used by run.sh into DIR (generated, so the lab
# keeps no hundreds of tiny files):
#   DIR/java/src/app/C0..C199.java, DIR/java/src/app/Main.java (loads the 200 classes)
#   DIR/node/node_modules/m0..m199/index.js (from package dirs), DIR/node/app/src/lib/deep/main.js
set -euo pipefail
D="$1"
mkdir -p "$D/java/src/app" "$D/node/app/src/lib/deep"
for i in $(seq 0 199); do
    printf 'package app;\npublic class C%d { public static int v() { return %d; } }\n' "$i" "$i" >"$D/java/src/app/C$i.java"
    mkdir -p "$D/node/node_modules/m$i"
    printf 'module.exports = %d;\n' "$i" >"$D/node/node_modules/m$i/index.js"
done
{
    printf 'package app;\npublic class Main { public static void main(String[] a) { long s = 0;\n'
    for i in $(seq 0 199); do printf 's += C%d.v();\n' "$i"; done
    printf 'System.out.println(s); } }\n'
} >"$D/java/src/app/Main.java"
{
    printf "'use strict';\nlet s = 0;\n"
    for i in $(seq 0 199); do printf "s += require('m%d');\n" "$i"; done
    printf 'console.log(s);\n'
} >"$D/node/app/src/lib/deep/main.js"
