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
# lab tests of keepalive-stall and small-io (lab/keepalive-stall, lab/small-io)
command -v nginx >/dev/null 2>&1 || need+=(nginx-light)
[ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] || need+=(libnginx-mod-http-echo)
command -v php >/dev/null 2>&1 || need+=(php-cli)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v script >/dev/null 2>&1 || need+=(bsdutils)
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
