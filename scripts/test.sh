#!/usr/bin/env bash
# Run syslint's whole test suite. Installs what the tests need first when it is missing
# (Debian packages; needs root or sudo), then runs every test in the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v strace >/dev/null 2>&1 || need+=(strace)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v gzip >/dev/null 2>&1 || need+=(gzip)
command -v zstd >/dev/null 2>&1 || need+=(zstd)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# lab/failed-lookup-storm and lab/fsync-storm: php-cli (with its opcache), the sqlite3 CLI,
# Debian's own /usr/bin/python3 (the labs run it by that path)
command -v php >/dev/null 2>&1 || need+=(php-cli)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
[ -x /usr/bin/python3 ] || need+=(python3)
# lab/busy-poll (PHP curl_multi) and lab/accept-herd (nginx, ps) live tests
{ command -v php >/dev/null 2>&1 && php -m 2>/dev/null | grep -qx curl; } || need+=(php-curl)
command -v nginx >/dev/null 2>&1 || need+=(nginx)
command -v ps >/dev/null 2>&1 || need+=(procps)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v mount >/dev/null 2>&1 || need+=(mount)
{ command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } || need+=(nginx)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test dependencies: ${need[*]}"
  sudo_=""
  [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }

cargo test --workspace --locked --no-fail-fast "$@"
