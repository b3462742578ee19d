#!/usr/bin/env bash
# Install what users download (scripts/package-dist.sh's .deb and tarball) on a clean Debian 12
# and run it there: `dpkg -i` with no other package, `syslint --version`, `syslint analyze` on
# the demo trace the .deb carries, `syslint trace -- /bin/true` with eBPF, the man pages and
# completions where man and the shells look, `dpkg -r`; then the tarball's binary, unpacked in
# the same bare system, analyses and traces too.
#
# Usage: scripts/test-install.sh [--update]     (after scripts/build-dist.sh)
#
# The first run makes a `debootstrap --variant=minbase bookworm` tree (about 1-2 minutes from
# Debian's mirror, ~250 MB) in $SYSLINT_BOOKWORM_ROOT (default /var/cache/syslint/bookworm-
# minbase) and reuses it after; `--update` remakes it. Each run works on a fresh copy of it
# (cp --reflink=auto, a few seconds), so nothing one run installs reaches the next.
#
# Tracing inside the chroot: the kernel program needs the host's /sys (BTF at
# /sys/kernel/btf/vmlinux, the tracepoints' BTF ids) and /proc (the traced processes, the pid
# checks); /dev is bound for /dev/null and the terminal. The copy gets /proc, /sys and /dev
# bind-mounted read-only where it can (/sys, and /proc's own mount is private to the chroot),
# and root: no debugfs or tracefs is needed (tp_btf programs attach by BTF id).
#
# Exit 3 when it cannot run (not root, no debootstrap, no mirror, no eBPF here): the caller
# says so in one visible line; any failed check exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TREE="${SYSLINT_BOOKWORM_ROOT:-/var/cache/syslint/bookworm-minbase}"
MIRROR="${SYSLINT_BOOKWORM_MIRROR:-http://deb.debian.org/debian}"
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
DEB=$ROOT/target/dist/syslint_${VERSION}-1_amd64.deb
TARBALL=$ROOT/target/dist/syslint-$VERSION-x86_64-linux.tar.gz

skip() { echo "test-install: SKIPPED: $*" >&2; exit 3; }
fail() { echo "test-install: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root (debootstrap, chroot, mounts, eBPF)"

make_tree() {
    command -v debootstrap > /dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
    local tmp="$TREE.new.$$"
    rm -rf "$tmp"
    mkdir -p "$(dirname "$TREE")"
    echo "test-install: making a Debian 12 minbase tree in $TREE (about 1-2 minutes)" >&2
    if ! debootstrap --variant=minbase bookworm "$tmp" "$MIRROR" > "$tmp.log" 2>&1; then
        rm -rf "$tmp"
        skip "debootstrap failed; its log: $tmp.log"
    fi
    rm -f "$tmp.log"
    rm -rf "$TREE"
    mv "$tmp" "$TREE"
}
if [ "${1:-}" = "--update" ] || [ ! -x "$TREE/usr/bin/dpkg" ]; then
    make_tree
fi
[ -f "$DEB" ] || fail "no $DEB: run scripts/build-dist.sh (or scripts/package-dist.sh) first"
[ -f "$TARBALL" ] || fail "no $DEB or $TARBALL: run scripts/build-dist.sh (or scripts/package-dist.sh) first"

t0=$(date +%s)
WORK=$(mktemp -d /var/tmp/syslint-install.XXXXXX)
C=$WORK/root
MOUNTS=()
cleanup() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount -l "${MOUNTS[i]}" 2> /dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
cp -a --reflink=auto "$TREE" "$C"
bind() { # bind SRC in the copy, read-only when asked
    mkdir -p "$C$1"
    mount --bind "$1" "$C$1"
    MOUNTS+=("$C$1")
    if [ "${2:-}" = ro ]; then mount -o remount,bind,ro "$C$1" 2> /dev/null || true; fi
}
mount -t proc proc "$C/proc"
MOUNTS+=("$C/proc")
bind /sys ro
bind /dev
cp "$DEB" "$TARBALL" "$C/tmp/"
in_root() { chroot "$C" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

# --- the .deb ---
in_root dpkg -i "/tmp/$(basename "$DEB")" > "$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i"; }
in_root syslint --version > "$WORK/version" || fail "syslint --version"
grep -q "^syslint $VERSION " "$WORK/version" || fail "--version says: $(cat "$WORK/version")"
grep -q '^backends: ebpf, strace' "$WORK/version" || fail "--version has no eBPF backend: $(cat "$WORK/version")"
for f in /usr/share/man/man1/syslint.1.gz /usr/share/man/man1/syslint-trace.1.gz \
    /usr/share/bash-completion/completions/syslint /usr/share/zsh/vendor-completions/_syslint \
    /usr/share/fish/vendor_completions.d/syslint.fish /usr/share/doc/syslint/copyright \
    /usr/share/doc/syslint/examples/fetch.strace.gz /usr/share/doc/syslint/THIRD-PARTY.md \
    /usr/share/doc/syslint/licenses/zlib /usr/share/doc/syslint/licenses/libbpf-BSD-2-Clause; do
    [ -s "$C$f" ] || fail "the .deb did not install $f"
done
# what is linked in is named with its version, and the relinking the LGPL asks for is explained
grep -q '^| libelf (elfutils) | Debian libelf-dev [0-9]' "$C/usr/share/doc/syslint/THIRD-PARTY.md" \
    || fail "THIRD-PARTY.md names no libelf version"
grep -q 'LIBBPF_SYS_LIBRARY_PATH=DIR scripts/build-dist.sh' "$C/usr/share/doc/syslint/THIRD-PARTY.md" \
    || fail "THIRD-PARTY.md does not say how to relink"
grep -q 'Jean-loup Gailly' "$C/usr/share/doc/syslint/licenses/zlib" || fail "licenses/zlib is not zlib's licence"
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$C/usr/share/doc/syslint/copyright" \
    || fail "copyright is not in Debian's machine-readable format"
zcat "$C/usr/share/man/man1/syslint.1.gz" | grep -q '^\.TH syslint 1' || fail "syslint.1.gz is not a man page"
grep -q '_syslint' "$C/usr/share/bash-completion/completions/syslint" || fail "the bash completion has no function"

# analyze: the demo trace has connection churn and repeated DNS lookups (exit 0: info findings)
check_analyze() { # BINARY LABEL TRACE
    local rc=0
    in_root "$1" analyze --format json "$3" > "$WORK/analyze.json" 2> "$WORK/analyze.err" || rc=$?
    [ "$rc" -le 1 ] || { cat "$WORK/analyze.err" >&2; fail "$2: analyze exited $rc"; }
    grep -q '"connection-churn"' "$WORK/analyze.json" || fail "$2: analyze found no connection-churn in the demo trace"
    grep -q '"repeated-dns"' "$WORK/analyze.json" || fail "$2: analyze found no repeated-dns in the demo trace"
}
# trace: eBPF (the bare system has no strace to fall back on), /bin/true's execve seen. The
# report goes to stderr (stdout is the traced program's).
check_trace() { # BINARY LABEL
    local rc=0
    in_root "$1" trace --backend ebpf --format json -o /tmp/true.slr -- /bin/true > "$WORK/trace.out" 2> "$WORK/trace.err" || rc=$?
    if [ "$rc" -gt 1 ]; then
        cat "$WORK/trace.err" >&2
        fail "$2: trace --backend ebpf -- /bin/true exited $rc"
    fi
    grep -q '"backend": "ebpf"' "$WORK/trace.err" || { head -n 20 "$WORK/trace.err" >&2; fail "$2: trace did not use eBPF"; }
    [ -s "$C/tmp/true.slr" ] || fail "$2: trace kept no recording"
    in_root "$1" export /tmp/true.slr > "$WORK/true.strace" 2> /dev/null || fail "$2: export of the recording"
    grep -q 'execve(' "$WORK/true.strace" || fail "$2: the recording of /bin/true has no execve"
}
check_analyze syslint .deb /usr/share/doc/syslint/examples/fetch.strace.gz
check_trace syslint .deb
in_root dpkg -r syslint > "$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -r"; }
[ ! -e "$C/usr/bin/syslint" ] || fail "dpkg -r left /usr/bin/syslint"

# --- the tarball, in the same bare system ---
mkdir -p "$C/opt"
tar -xzf "$TARBALL" -C "$C/opt"
B=/opt/syslint-$VERSION-x86_64-linux/syslint
in_root "$B" --version | grep -q '^backends: ebpf, strace' || fail "tarball: --version"
cp "$ROOT/demo/fetch.strace.gz" "$C/tmp/"
check_analyze "$B" tarball /tmp/fetch.strace.gz
check_trace "$B" tarball
for f in man/man1/syslint.1 completions/syslint.bash completions/_syslint completions/syslint.fish LICENSE-MIT LICENSE-APACHE README.md CHANGELOG.md \
    THIRD-PARTY.md licenses/LGPL-3.0 licenses/GPL-3.0 licenses/libbpf-BSD-2-Clause licenses/zlib; do
    [ -s "$C/opt/syslint-$VERSION-x86_64-linux/$f" ] || fail "the tarball has no $f"
done

echo "test-install: the .deb and the tarball install and run on a clean Debian 12 (dpkg -i, --version, analyze, trace with eBPF, man pages, completions, dpkg -r) in $(( $(date +%s) - t0 )) s" >&2
