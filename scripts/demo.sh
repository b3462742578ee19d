#!/usr/bin/env bash
# Build syslint and analyse the bundled demo recording (demo/fetch.slr: `syslint trace` of
# demo/fetch.py with eBPF and sampled stacks, so its findings name their call sites; the same
# program's strace log, demo/fetch.strace.gz, reads the same way without them). Installs the build dependencies first when
# they are missing (Debian packages; needs root or sudo): clang compiles the eBPF program,
# libbpf-sys builds its vendored libbpf with make and pkg-config against libelf and zlib.
#   scripts/demo.sh [analyze options...]     e.g. scripts/demo.sh --format markdown
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have clang || need+=(clang)
have make || need+=(make)
have pkg-config || need+=(pkg-config)
have cc || need+=(gcc libc6-dev)
[ -f /usr/include/libelf.h ] || need+=(libelf-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing build dependencies: ${need[*]}"
  sudo_=""
  [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }
set +e
cargo run --release -q -- analyze demo/fetch.slr "$@"
st=$?
# 1 means "findings", which is what the demo is for
[ $st -eq 1 ] && exit 0
exit $st
