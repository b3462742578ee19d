#!/usr/bin/env bash
# Package the binary scripts/build-dist.sh built (target/dist/syslint, profile-guided, libbpf,
# libelf and zlib linked in) into what users download. Takes seconds; build-dist.sh runs it last.
#
# Usage: scripts/package-dist.sh [BINARY]     (default target/dist/syslint)
#
# Makes, in target/dist/:
#   syslint                               stripped, with a .gnu_debuglink to syslint.debug
#   syslint.debug                         its debug info (objcopy --only-keep-debug): gdb and perf
#                                         find it beside the binary, or in /usr/lib/debug
#   syslint-VERSION-x86_64-linux.tar.gz   the binary, README, CHANGELOG, LICENSE-*, man pages
#                                         (man/man1) and completions (bash, zsh, fish)
#   syslint_VERSION-1_amd64.deb           the same for Debian/Ubuntu: /usr/bin/syslint, man pages
#                                         in /usr/share/man/man1 (gzipped), completions where
#                                         bash-completion, zsh and fish look, the docs and a
#                                         Debian-format copyright file in /usr/share/doc/syslint,
#                                         the demo trace in /usr/share/doc/syslint/examples
# The .deb is made with dpkg-deb from a staged tree (no cargo-deb: nothing to install or
# compile in CI, and the binary packed is the PGO one build-dist.sh made, not a rebuild).
#
# The project names no maintainer address or homepage yet: DEB_MAINTAINER sets the control file's
# Maintainer (default "syslint authors <syslint@invalid>", a reserved placeholder domain).
#
# The binary must need nothing but glibc (ldd: libc, libm, libgcc_s, the loader): anything else
# fails the script, as would a .deb that dpkg-deb or lintian-style checks below reject.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/dist
BIN=${1:-$OUT/syslint}
[ -x "$BIN" ] || { echo "package-dist: no binary at $BIN (run scripts/build-dist.sh)" >&2; exit 1; }
for tool in objcopy objdump readelf dpkg-deb; do
    command -v "$tool" > /dev/null || { echo "package-dist: $tool is missing (binutils, dpkg)" >&2; exit 1; }
done

# 1. only glibc at run time
libs=$(ldd "$BIN" | awk '{print $1}' | grep -v -E '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1)$' || true)
if [ -n "$libs" ]; then
    echo "package-dist: $BIN links more than glibc (build it with --features static): $libs" >&2
    exit 1
fi
VERSION=$("$BIN" --version | awk 'NR == 1 {print $2}')
if ! "$BIN" --version | grep -q 'backends: ebpf'; then
    echo "package-dist: $BIN has no eBPF backend ($("$BIN" --version | tail -n 1))" >&2
    exit 1
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# 2. strip, keeping the debug info beside it. The stripped file replaces target/dist/syslint by
# rename: cargo hard-links that name to target/dist/deps/syslint-HASH, which must stay whole.
if readelf -S "$BIN" | grep -q '\.gnu_debuglink'; then
    echo "package-dist: $BIN is stripped already (it has a debuglink); packaging it as it is" >&2
    cp "$BIN" "$WORK/syslint"
else
    objcopy --only-keep-debug "$BIN" "$WORK/syslint.debug"
    objcopy --strip-debug --strip-unneeded "$BIN" "$WORK/syslint"
    (cd "$WORK" && objcopy --add-gnu-debuglink=syslint.debug syslint)
    chmod 644 "$WORK/syslint.debug"
    mv -f "$WORK/syslint.debug" "$OUT/syslint.debug"
    if [ "$BIN" = "$OUT/syslint" ]; then
        rm -f "$OUT/syslint"
        cp "$WORK/syslint" "$OUT/syslint"
    fi
fi
S=$WORK/syslint
"$S" --version > /dev/null

# 3. man pages and completions, from the binary itself
"$S" man --dir "$WORK/man/man1" > /dev/null
mkdir -p "$WORK/completions"
"$S" completions bash > "$WORK/completions/syslint.bash"
"$S" completions zsh > "$WORK/completions/_syslint"
"$S" completions fish > "$WORK/completions/syslint.fish"

# 4. the tarball: syslint-VERSION-x86_64-linux/...
NAME=syslint-$VERSION-x86_64-linux
T=$WORK/$NAME
mkdir -p "$T"
install -m 755 "$S" "$T/syslint"
install -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$T/"
cp -r "$WORK/man" "$WORK/completions" "$T/"
chmod -R u=rwX,go=rX "$T"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || echo 0)}" \
    -C "$WORK" -czf "$OUT/$NAME.tar.gz" "$NAME"

# 5. the .deb
D=$WORK/deb
install -D -m 755 "$S" "$D/usr/bin/syslint"
mkdir -p "$D/usr/share/man/man1"
for page in "$WORK"/man/man1/*.1; do
    name=$(basename "$page")
    gzip -9n < "$page" > "$D/usr/share/man/man1/$name.gz"
done
install -D -m 644 "$WORK/completions/syslint.bash" "$D/usr/share/bash-completion/completions/syslint"
install -D -m 644 "$WORK/completions/_syslint" "$D/usr/share/zsh/vendor-completions/_syslint"
install -D -m 644 "$WORK/completions/syslint.fish" "$D/usr/share/fish/vendor_completions.d/syslint.fish"
DOC=$D/usr/share/doc/syslint
install -D -m 644 README.md "$DOC/README.md"
install -m 644 LICENSE-MIT LICENSE-APACHE "$DOC/"
gzip -9n < CHANGELOG.md > "$DOC/changelog.gz"
install -D -m 644 demo/fetch.strace.gz "$DOC/examples/fetch.strace.gz"
YEAR=$(date -u +%Y)
YEARS=2026
[ "$YEAR" = 2026 ] || YEARS=2026-$YEAR # the first commit's year
cat > "$DOC/copyright" << EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: syslint
Comment: syslint's own code is under MIT OR Apache-2.0 (the texts: LICENSE-MIT, LICENSE-APACHE
 in this directory). The binary links in, statically:
 - libbpf (libbpf-sys's vendored copy; Linux tools/lib/bpf), LGPL-2.1 or BSD-2-Clause;
 - libelf (elfutils, from Debian's libelf-dev), GPL-2+ or LGPL-3+;
 - zlib (from Debian's zlib1g-dev), Copyright (C) 1995-2024 Jean-loup Gailly and Mark Adler,
   Zlib licence;
 and the Rust crates listed in the source's Cargo.lock, each under the licence its crate states.
 On Debian systems the GPL and LGPL texts are in /usr/share/common-licenses/.

Files: *
Copyright: $YEARS the syslint developers
License: MIT or Apache-2.0

License: MIT
 $(sed -e 's/^$/./' -e '2,$s/^/ /' LICENSE-MIT)

License: Apache-2.0
 On Debian systems the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0 (and LICENSE-APACHE in this directory).

EOF
chmod 644 "$DOC/copyright"

# the oldest glibc the binary asks for: Depends says it, so dpkg refuses a system too old
GLIBC=$(objdump -T "$S" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
SIZE=$(du -sk --exclude=DEBIAN "$D" | cut -f1)
mkdir -p "$D/DEBIAN"
cat > "$D/DEBIAN/control" << EOF
Package: syslint
Version: $VERSION-1
Architecture: amd64
Maintainer: ${DEB_MAINTAINER:-syslint authors <syslint@invalid>}
Installed-Size: $SIZE
Depends: libc6 (>= $GLIBC), libgcc-s1
Section: devel
Priority: optional
Description: find syscall-level waste in Linux programs
 syslint reads how a program talks to the kernel - live with eBPF (or strace), or from the
 strace logs people already have - and turns millions of syscalls into a summary that says
 where the time goes, per syscall, per process and per file or socket, and names the
 pathology, its cost and its fix: busy polling, connection churn, repeated DNS lookups, small
 I/O, fsync storms and more.
 .
 This build is profile-guided and links libbpf, libelf and zlib in; it needs only glibc.
EOF
(cd "$D" && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod -R u=rwX,go=rX "$D"
DEB=$OUT/syslint_${VERSION}-1_amd64.deb
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2> /dev/null || echo 0)} \
    dpkg-deb --root-owner-group -Zxz --build "$D" "$DEB" > /dev/null
dpkg-deb --info "$DEB" > /dev/null
dpkg-deb --contents "$DEB" | grep ' ./usr/bin/syslint$' > /dev/null || { echo "package-dist: $DEB has no /usr/bin/syslint" >&2; exit 1; }

size() { du -h "$1" | cut -f1; }
echo "package-dist: syslint $(size "$S") stripped (+ syslint.debug $(size "$OUT/syslint.debug")), $NAME.tar.gz $(size "$OUT/$NAME.tar.gz"), $(basename "$DEB") $(size "$DEB"); needs glibc >= $GLIBC" >&2
