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
#   syslint-VERSION-x86_64-linux.tar.gz   the binary, README, CHANGELOG, LICENSE-*, THIRD-PARTY.md
#                                         and licenses/ (what is linked in, its licence texts),
#                                         man pages (man/man1) and completions (bash, zsh, fish)
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

# 3b. what the binary links in and under which terms (docs/design.md, "Licences of what is
# linked in"). libelf is taken under the LGPL-3.0-or-later; its section 4 lets a combined work
# carry other terms when it names the library, ships the licence texts and lets users relink
# with a modified library: syslint's whole source is public and build-dist.sh relinks.
LICENSES=$WORK/licenses
mkdir -p "$LICENSES"
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2> /dev/null || echo "unknown (not from a Debian package)"; }
ELF_VERSION=$(pkg_version libelf-dev)
ZLIB_VERSION=$(pkg_version zlib1g-dev)
BPF_VERSION=$(awk '$0 == "name = \"libbpf-sys\"" {getline; gsub(/"/, "", $3); print $3}' Cargo.lock)
[ -n "$BPF_VERSION" ] || { echo "package-dist: no libbpf-sys in Cargo.lock" >&2; exit 1; }
# the crate's source, where cargo unpacked it for the build
BPF_SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"libbpf-sys-$BPF_VERSION" 2> /dev/null | head -n 1 || true)
for need in /usr/share/common-licenses/LGPL-3 /usr/share/common-licenses/GPL-3 /usr/include/zlib.h \
    "$BPF_SRC/libbpf/LICENSE.BSD-2-Clause"; do
    [ -s "$need" ] || { echo "package-dist: $need is missing (a licence text the packages must carry)" >&2; exit 1; }
done
install -m 644 /usr/share/common-licenses/LGPL-3 "$LICENSES/LGPL-3.0"
install -m 644 /usr/share/common-licenses/GPL-3 "$LICENSES/GPL-3.0"
install -m 644 "$BPF_SRC/libbpf/LICENSE.BSD-2-Clause" "$LICENSES/libbpf-BSD-2-Clause"
# zlib's licence is the first comment of zlib.h
sed -n '1,/\*\//p' /usr/include/zlib.h > "$LICENSES/zlib"
ZLIB_COPYRIGHT=$(grep -m 1 -o 'Copyright (C) [0-9-]* .*' "$LICENSES/zlib")
cat > "$WORK/THIRD-PARTY.md" << EOF
# What the syslint binary contains besides syslint

syslint's own code is under MIT OR Apache-2.0 (LICENSE-MIT, LICENSE-APACHE). This binary
(syslint $VERSION, built by scripts/build-dist.sh) also contains, linked statically:

| library | version | licence it is used under | source |
|---|---|---|---|
| libbpf | $BPF_VERSION (the copy vendored in the libbpf-sys crate) | BSD-2-Clause (it is LGPL-2.1 OR BSD-2-Clause): licenses/libbpf-BSD-2-Clause | https://crates.io/crates/libbpf-sys/$BPF_VERSION |
| libelf (elfutils) | Debian libelf-dev $ELF_VERSION | LGPL-3.0-or-later (it is GPL-2.0-or-later OR LGPL-3.0-or-later): licenses/LGPL-3.0, which adds to licenses/GPL-3.0 | Debian source package elfutils $ELF_VERSION (\`apt-get source elfutils=$ELF_VERSION\`, or snapshot.debian.org) |
| zlib | Debian zlib1g-dev $ZLIB_VERSION | Zlib ($ZLIB_COPYRIGHT): licenses/zlib | Debian source package zlib $ZLIB_VERSION, or https://zlib.net/ |

and the Rust crates listed in the Cargo.lock of syslint's source, each under the licence its
crate states.

**Relinking with another libelf (LGPL-3.0, section 4).** syslint's complete source is public
under MIT OR Apache-2.0; \`syslint --version\` names the commit this binary was built from. To
make this binary with a modified libelf, put your libelf.a (and libz.a) in a directory DIR and
run \`LIBBPF_SYS_LIBRARY_PATH=DIR scripts/build-dist.sh\` in that checkout: it links them in
place of Debian's. You may also build syslint with libelf linked dynamically
(\`cargo build --release -p syslint\`, which uses the system's libelf.so).
EOF
chmod 644 "$WORK/THIRD-PARTY.md" "$LICENSES"/*

# 4. the tarball: syslint-VERSION-x86_64-linux/...
NAME=syslint-$VERSION-x86_64-linux
T=$WORK/$NAME
mkdir -p "$T"
install -m 755 "$S" "$T/syslint"
install -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$WORK/THIRD-PARTY.md" "$T/"
cp -r "$LICENSES" "$T/"
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
install -m 644 LICENSE-MIT LICENSE-APACHE "$WORK/THIRD-PARTY.md" "$DOC/"
install -D -m 644 "$LICENSES/libbpf-BSD-2-Clause" "$DOC/licenses/libbpf-BSD-2-Clause"
install -m 644 "$LICENSES/zlib" "$DOC/licenses/zlib"
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
 - libbpf $BPF_VERSION (libbpf-sys's vendored copy; Linux tools/lib/bpf), LGPL-2.1 or
   BSD-2-Clause, used under BSD-2-Clause (licenses/libbpf-BSD-2-Clause);
 - libelf (elfutils $ELF_VERSION, from Debian's libelf-dev), GPL-2+ or LGPL-3+, used under the
   LGPL-3+: THIRD-PARTY.md says how to relink the binary with a modified libelf;
 - zlib $ZLIB_VERSION (from Debian's zlib1g-dev), $ZLIB_COPYRIGHT, Zlib licence (licenses/zlib);
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
DEBUG_INFO="no syslint.debug: packaged as it came"
[ ! -e "$OUT/syslint.debug" ] || DEBUG_INFO="+ syslint.debug $(size "$OUT/syslint.debug")"
echo "package-dist: syslint $(size "$S") stripped ($DEBUG_INFO), $NAME.tar.gz $(size "$OUT/$NAME.tar.gz"), $(basename "$DEB") $(size "$DEB"); needs glibc >= $GLIBC" >&2
