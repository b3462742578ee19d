#!/usr/bin/env bash
# The crates as they would be published: `cargo package --workspace` packs each crate as
# crates.io would receive it (only the files it lists, path dependencies replaced by versions)
# and builds every package from its .crate alone, the others served from a local registry of
# the packed ones: the "published-style layout" of `cargo install syslint` (issue 30). A crate
# that needs a file outside itself (a header, the repository's rustfmt.toml, git) fails here.
#
# Usage: scripts/test-package.sh      (test.sh runs it in the whole suite; ~2 min after
#                                      `cargo test --workspace`, whose target/ it shares)
#
# Cargo treats a registry crate as immutable, so a packed crate changed under the same version
# would be taken from before: the unpacked copies of the local registry (~/.cargo/registry/*/-HASH,
# the directories cargo names for path registries) and the build of the packed syslint crates
# in target/ are removed first. Uncommitted changes are packed too (--allow-dirty): what is
# tested is the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
for d in "$CARGO_HOME"/registry/src/-* "$CARGO_HOME"/registry/cache/-* "$CARGO_HOME"/registry/index/-*; do
    [ -e "$d" ] || continue
    # only local registries holding syslint's crates
    if [ -n "$(find "$d" -maxdepth 1 -name 'syslint-*' -print -quit)" ] || [ "${d#*/index/}" != "$d" ]; then
        rm -rf "$d"
    fi
done
TARGET=${CARGO_TARGET_DIR:-target}
for p in "$TARGET"/debug/build/syslint-* "$TARGET"/debug/.fingerprint/syslint-*; do
    [ -e "$p" ] || continue
    # the packed crates' builds only: a path crate's fingerprint names its path
    if grep -rqs 'tmp-registry\|registry/src/-' "$p" 2> /dev/null; then
        rm -rf "$p"
    fi
done
rm -rf "$TARGET/package"
mkdir -p "$TARGET"
if ! cargo package --workspace --locked --allow-dirty > "$TARGET/package.log" 2>&1; then
    grep -v -e '^warning: manifest has no' -e '^  |$' -e '= note: see https://doc.rust-lang.org/cargo/reference/manifest.html' \
        "$TARGET/package.log" | tail -n 40 >&2
    echo "test-package: cargo package --workspace failed (whole log: $TARGET/package.log)" >&2
    exit 1
fi
crates=$(ls "$TARGET"/package/*.crate | wc -l)
[ "$crates" -ge 8 ] || { echo "test-package: only $crates crates packed" >&2; exit 1; }
# the binary built last is the packed syslint crate's: it runs, has both backends and reads
# the demo trace
BIN=$TARGET/debug/syslint
"$BIN" --version | grep -q '^backends: ebpf, strace' || { echo "test-package: the packed build has no eBPF backend" >&2; exit 1; }
rc=0
"$BIN" analyze --format json demo/fetch.strace.gz > "$TARGET/package-demo.json" 2> /dev/null || rc=$?
[ "$rc" -le 1 ] && grep -q '"connection-churn"' "$TARGET/package-demo.json" ||
    { echo "test-package: the packed build did not analyse the demo trace (exit $rc)" >&2; exit 1; }
echo "test-package: $crates crates packed and each built from its .crate alone in $(($(date +%s) - t0)) s"
