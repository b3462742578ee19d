#!/usr/bin/env bash
# Build the binary syslint ships, target/dist/syslint: the `dist` profile (the release profile
# with fat LTO and one codegen unit) optimised with a profile of syslint's own work (PGO).
#
# Usage: scripts/build-dist.sh
#
# 1. an instrumented build (target/pgo-gen) analyses every trace recorded in this repository
#    (lab/*/traces, tests/fixtures/traces, the .slr recordings), on all cores and on one: the
#    runs train the optimiser on real programs' logs, never on the benchmark's log
#    (bench/gen-log.sh records that afresh from another workload);
# 2. llvm-profdata (rustup's llvm-tools component, installed when missing) merges the profiles;
# 3. the dist build uses them (-Cprofile-use).
# Then every trained-on trace is analysed again by the dist binary: its JSON reports must be
# identical to the instrumented build's from step 1, the same source and profile without the
# profile's guidance (the optimiser may change speed, never results; comparing with the build we
# already have saves the separate plain release build, ~5 of CI's minutes). Takes ~6 minutes on
# 2 cores. docs/design.md ("Speed, seventh session") says why PGO.
#
# Both PGO builds have the `static` feature: libbpf (libbpf-sys's vendored copy), libelf and
# zlib (the system's libelf.a and libz.a, from libelf-dev and zlib1g-dev) are linked in, so the
# binary needs only glibc (libc, libm, libgcc_s) at run time. Last, scripts/package-dist.sh
# strips it (debug info to target/dist/syslint.debug) and makes the tarball and the .deb
# (seconds); scripts/test-install.sh installs and runs both on a clean Debian 12.
# docs/design.md ("Shipping") says why glibc and not musl.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
HOST=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA=$(rustc --print sysroot)/lib/rustlib/$HOST/bin/llvm-profdata
if [ ! -x "$PROFDATA" ]; then
    echo "installing rustup's llvm-tools (llvm-profdata)" >&2
    rustup component add llvm-tools
fi
# libbpf-sys links libelf.a and libz.a from this directory (it searches only its own build dir).
# Given to the two static builds only: cargo reruns libbpf-sys's build when it changes.
MULTIARCH=$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)
STATIC_LIBS=${LIBBPF_SYS_LIBRARY_PATH:-/usr/lib/$MULTIARCH}
for lib in libelf.a libz.a; do
    [ -f "$STATIC_LIBS/$lib" ] || { echo "build-dist: no $STATIC_LIBS/$lib (apt-get install libelf-dev zlib1g-dev)" >&2; exit 1; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

inputs() {
    ls "$ROOT"/lab/*/traces/*.strace* "$ROOT"/tests/fixtures/traces/*.strace* "$ROOT"/tests/fixtures/recordings/*.slr
}
# analyse every input with BINARY (output to DIR/N.json when DIR is given); a crash fails
train() {
    local bin=$1 out=${2:-} n=0 rc f
    while read -r f; do
        n=$((n + 1))
        for threads in "" 1; do
            rc=0
            env ${threads:+SYSLINT_THREADS=$threads} "$bin" analyze --format json "$f" \
                > "${out:-/dev/null}${out:+/$n.$threads.json}" 2> /dev/null || rc=$?
            # 0: no finding, 1: findings, 2: not a log it can read (some fixtures are not)
            if [ "$rc" -gt 2 ]; then
                echo "build-dist: $bin exited with $rc on $f" >&2
                exit 1
            fi
        done
    done < <(inputs)
    echo "$n"
}

echo "1/3 instrumented build (target/pgo-gen)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$WORK/raw" CARGO_TARGET_DIR="$ROOT/target/pgo-gen" \
    LIBBPF_SYS_LIBRARY_PATH=$STATIC_LIBS cargo build --profile dist -p syslint --features static --locked
mkdir -p "$WORK/plain" "$WORK/dist"
n=$(train "$ROOT/target/pgo-gen/dist/syslint" "$WORK/plain")
echo "    trained on $n recorded traces, each on all cores and on one" >&2

echo "2/3 merging the profiles" >&2
"$PROFDATA" merge -o "$WORK/syslint.profdata" "$WORK/raw"

echo "3/3 optimised build (target/dist)" >&2
cp "$WORK/syslint.profdata" "$ROOT/target/syslint.profdata"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$ROOT/target/syslint.profdata" LIBBPF_SYS_LIBRARY_PATH=$STATIC_LIBS \
    cargo build --profile dist -p syslint --features static --locked

echo "checking: the optimised binary's reports equal the unguided (instrumented) build's" >&2
train "$ROOT/target/dist/syslint" "$WORK/dist" > /dev/null
if ! diff -rq "$WORK/plain" "$WORK/dist" > /dev/null; then
    echo "build-dist: the PGO build reports differently from the unguided build:" >&2
    diff -rq "$WORK/plain" "$WORK/dist" | head -n 5 >&2
    exit 1
fi
echo "target/dist/syslint: built with PGO; its $(ls "$WORK/dist" | wc -l) reports equal the unguided build's" >&2

t0=$(date +%s)
bash "$ROOT/scripts/package-dist.sh"
echo "packaged in $(( $(date +%s) - t0 )) s" >&2
