#!/usr/bin/env bash
# Run syslint's whole test suite. Installs what the tests need first when it is missing
# (Debian packages; needs root or sudo), then runs every test in the workspace.
#
#   scripts/test.sh            the whole suite, what CI runs (about 25 minutes on 2 cores)
#   scripts/test.sh --fast     format, lints, unit and snapshot tests, the labs judged in-process
#                              by their manifests, fixtures and inputs (a few minutes); it says
#                              what it leaves to the whole suite
#   scripts/test.sh FILTER...  cargo test --workspace with these filters (no dist build)
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = "--fast" ]; then
  fast=1
  shift
fi
start=$(date +%s)
# This script installs every tool the tests use (below), so a test that finds one missing
# (chromium, a shell, groff, DevTools' trace engine) fails under it instead of printing a NOTE
# and passing, as it does under a bare `cargo test`: the tests ask $CI.
export CI="${CI:-true}"
# `tier NAME`: how long the run has taken so far, after each tier, for the times in README
tier() { echo "== $1 done at $(( $(date +%s) - start )) s"; }

need=()
have() { command -v "$1" >/dev/null 2>&1; }
# the reader's tests
have strace || need+=(strace)
have cc || need+=(gcc libc6-dev)
have gzip || need+=(gzip)
have zstd || need+=(zstd)
# the labs' live tests (lab/*/run.sh run real programs under strace)
[ -x /usr/bin/python3 ] || need+=(python3)          # labs run Debian's python3 by that path
have php || need+=(php-cli)                          # failed-lookup-storm, keepalive-stall, busy-poll
{ have php && php -m 2>/dev/null | grep -qx curl; } || need+=(php-curl)   # busy-poll, churn, dns
have sqlite3 || need+=(sqlite3)                      # fsync-storm
have git || need+=(git)                              # stat-storm, reopen-churn: git status as near misses
# the install tests (crates/cli/tests/install.rs): completion scripts parsed by their shells,
# man pages rendered by groff
have zsh || need+=(zsh)
have fish || need+=(fish)
have groff || need+=(groff-base)
/usr/bin/python3 -c 'import urllib3' 2>/dev/null || need+=(python3-urllib3)   # retry-storm: urllib3's Retry
have node || need+=(nodejs)                          # reopen-churn: fs.appendFileSync per request
have npm || need+=(npm)                              # stat-storm: npm install's mkdir EEXIST
have javac || need+=(default-jdk-headless)           # lab_runtimes: the Java variants of the labs
{ have go || [ -x /usr/local/go/bin/go ]; } || need+=(golang-go)   # lab_runtimes: the Go variants; scripts/otelcol.sh, scripts/helm.sh
have uwsgi || need+=(uwsgi-core uwsgi-plugin-python3)   # accept-herd: uwsgi variants (run.sh)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)   # reopen-churn: a CA bundle per connection
{ have nginx || [ -x /usr/sbin/nginx ]; } || need+=(nginx-light)   # accept-herd, keepalive-stall, churn
[ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] || need+=(libnginx-mod-http-echo)
have curl || need+=(curl)
have openssl || need+=(openssl)                      # connection-churn's TLS server certificate
have unshare || need+=(util-linux)                   # repeated-dns, dns-timeout: a private resolv.conf
have getent || need+=(libc-bin)                      # dns-timeout: getent ahosts
have mount || need+=(mount)
have ps || need+=(procps)
have script || need+=(bsdutils)                      # small-io: writes to a terminal
have debootstrap || need+=(debootstrap)              # strace 7.x from Debian sid (scripts/strace-sid.sh), the install test's Debian 12
have podman || need+=(podman)                        # the container image (scripts/test-container.sh)
have runc || need+=(runc)                            # ... where crun cannot start containers
have dpkg-deb || need+=(dpkg)                        # the .deb (scripts/package-dist.sh)
have objcopy || need+=(binutils)                     # the stripped binary and its split debug info
have chromium || need+=(chromium)                    # the HTML report in a headless browser
# the tables people paste, made afresh by the tools (pasted_labs::tables_the_installed_tools_make_now)
have perf || need+=(linux-perf)                      # perf trace -s
[ -x /usr/sbin/syscount ] || need+=(libbpf-tools)    # syscount -L
# the live server suite (crates/cli/tests/servers_live.rs: tests/fixtures/servers/record-*.sh)
have redis-server || need+=(redis-server)
have redis-benchmark || need+=(redis-tools)
{ have initdb || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || need+=(postgresql)
have pgbench || need+=(postgresql-contrib)
have memcached || need+=(memcached)
have gunicorn || need+=(gunicorn)
ls /usr/sbin/php-fpm* >/dev/null 2>&1 || need+=(php-fpm)
have wrk || need+=(wrk)
have prometheus || need+=(prometheus)                # syslint agent: a real server scrapes it (crates/cli/tests/agent.rs)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)   # deploy: the DaemonSet manifest is read (crates/cli/tests/deploy.rs)
have systemd-analyze || need+=(systemd)           # deploy: the systemd unit is verified
# madvise-storm's lab: jemalloc with and without its decay (lab/madvise-storm/run.sh)
[ -e /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ] || need+=(libjemalloc2)
# the eBPF backend (crates/bpf): clang compiles the BPF program, and its build script's bindgen
# loads libclang (Debian's clang depends on libclang1-N, so no -dev package); libbpf-sys builds
# its vendored libbpf with make and pkg-config and links the system libelf and zlib
have clang || need+=(clang)
have make || need+=(make)
have pkg-config || need+=(pkg-config)
[ -f /usr/include/libelf.h ] || need+=(libelf-dev)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing test dependencies: ${need[*]}"
  sudo_=""
  [ "$(id -u)" -eq 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi
# DevTools' trace engine (how Chrome's Performance panel reads Chrome trace JSON), from npm at a
# pinned version: crates/cli/tests/perfetto.rs loads the Perfetto export with it in Chromium
te=target/trace-engine
if [ ! -f "$te/node_modules/@paulirish/trace_engine/package.json" ]; then
  mkdir -p "$te"
  npm install --prefix "$te" --no-audit --no-fund --silent @paulirish/trace_engine@0.0.65 >/dev/null \
    || echo "npm could not install @paulirish/trace_engine: perfetto::devtools_ tests will fail" >&2
fi
# the SARIF 2.1.0 JSON Schema (OASIS; Microsoft's copy in @microsoft/jest-sarif, pinned):
# crates/cli/tests/sarif.rs validates every SARIF log syslint writes against it
ss=target/sarif-schema
if [ ! -f "$ss/package/lib/schemas/sarif-2.1.0-rtm.5.json" ]; then
  mkdir -p "$ss"
  (cd "$ss" && npm pack --silent @microsoft/jest-sarif@1.0.0-beta.0 >/dev/null && tar -xzf microsoft-jest-sarif-1.0.0-beta.0.tgz) \
    || echo "npm could not fetch @microsoft/jest-sarif: sarif:: tests will fail" >&2
fi
# the newest strace (Debian sid's) for the live tests of its output forms: made once (about 2
# minutes), kept in /var/cache/syslint/sid-strace for the next runs
t0=$(date +%s)
if [ $fast -eq 1 ]; then
  echo "fast tier: strace 7.x from Debian sid not made (its live tests are the whole suite's)"
elif scripts/strace-sid.sh -V >/dev/null; then
  echo "strace from Debian sid: $(scripts/strace-sid.sh -V | head -1) ($(( $(date +%s) - t0 )) s)"
  # and its Python (3.12+: -X perf), for the call-site test of Python functions
  scripts/python-sid.sh -V || echo "scripts/python-sid.sh could not install Python: call_sites::ebpf_names_a_python_function_from_its_perf_map will fail" >&2
else
  echo "scripts/strace-sid.sh could not make its Debian sid tree: strace7::live_ tests will fail" >&2
fi
# the Go-built tools the tests use, built once (about 3 minutes each) into /var/cache/syslint in
# the background while the lints run, and waited for before the tests: the OpenTelemetry
# Collector the agent's OTLP tests send to (tools/otelcol, the collector's Go modules) and helm,
# which lints and renders the chart in deploy/helm (crates/cli/tests/deploy.rs; v3.22.0 from its
# Go module)
declare -A tool_pid=()
build_tool() { # NAME: scripts/NAME.sh, its output in target/NAME-build.log
  [ $fast -eq 0 ] || return 0
  mkdir -p target
  scripts/"$1".sh >target/"$1"-build.log 2>&1 &
  tool_pid[$1]=$!
}
await_tool() { # NAME TESTS: the tests that fail without it
  [ -n "${tool_pid[$1]:-}" ] || return 0
  if wait "${tool_pid[$1]}"; then
    echo "$1: $(tail -1 target/"$1"-build.log)"
  else
    cat target/"$1"-build.log >&2
    echo "scripts/$1.sh could not build $1: $2 will fail" >&2
  fi
}
build_tool otelcol
build_tool helm
if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install Rust (https://rustup.rs) first" >&2; exit 2; }
# the Rust release just before the minimum (Cargo.toml's rust-version), for the test that an
# old rustc gets cargo's own one-line refusal (install::an_old_rustc_gets_cargos_msrv_message);
# a minimal profile, about 90 MB, kept by rustup for the next runs
OLD_RUST=$(awk -F'"' '/^rust-version/ {split($2, v, "."); print v[1] "." v[2] - 1; exit}' Cargo.toml)
if command -v rustup >/dev/null 2>&1 && ! rustup run "$OLD_RUST" rustc --version >/dev/null 2>&1; then
  rustup toolchain install "$OLD_RUST" --profile minimal >/dev/null 2>&1 ||
    echo "rustup could not install Rust $OLD_RUST: install::an_old_rustc_gets_cargos_msrv_message will fail" >&2
fi

# formatting and lints first (rustfmt.toml, workspace [lints] in Cargo.toml): a difference or a
# warning fails the run
if ! cargo clippy --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
  rustup component add clippy >/dev/null 2>&1 || true
fi
if ! cargo fmt --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt >/dev/null 2>&1 || true
fi
if cargo fmt --version >/dev/null 2>&1; then
  cargo fmt --all -- --check || { echo "formatting differs: run cargo fmt --all" >&2; exit 1; }
else
  echo "WARNING: cargo fmt is not available here (rustup component add rustfmt): the format check did not run" >&2
fi
# the fuzz targets are a workspace of their own (nightly, scripts/fuzz.sh): its lock file must
# follow the crates it uses, which only a resolve shows (no build: a tenth of a second once the
# crates are fetched)
(cd fuzz && cargo tree --locked --target x86_64-unknown-linux-gnu -e normal >/dev/null) ||
  { echo "fuzz/Cargo.lock is stale: run (cd fuzz && cargo update --workspace)" >&2; exit 1; }
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "WARNING: cargo clippy is not available here (rustup component add clippy): the lint step did not run" >&2
fi
tier "format and lints"

if [ $fast -eq 1 ]; then
  # what runs in-process or reads recorded traces only: no live program, no eBPF, no server
  cargo test --workspace --locked --lib --bins
  cargo test -p syslint-capture --test tests --locked
  cargo test -p syslint --test tests --locked -- labs:: fixtures:: inputs:: registry:: install:: \
    analyze_only:: process_models:: inert_reports:: secrets:: call_sites:: --skip live --skip ebpf_labs:: \
    --skip trace_labs:: --skip installed_tools
  tier "fast tier"
  echo "fast tier passed. Left to the whole suite (scripts/test.sh): live lab runs under strace and"
  echo "eBPF, the per-lab CLI tests (lab_*), hostile and enormous inputs, servers, the shared"
  echo "corpus, strace 7.x, the analyze-only build, diff and HTML in a browser, the dist build."
  exit 0
fi

# the analyze-only build (no eBPF backend: no clang, libelf or libbpf to build it) compiles
# without a warning, and the crates that differ without the feature pass their unit tests
# (reading .slr recordings, `trace` saying it has no eBPF)
if [ $# -eq 0 ]; then
  t0=$(date +%s)
  cargo clippy --workspace --all-targets --no-default-features --locked -- -D warnings
  cargo test --no-default-features --locked -p syslint-bpf -p syslint-capture -p syslint-pipeline --lib
  echo "analyze-only build: linted and unit-tested in $(( $(date +%s) - t0 )) s"
  tier "analyze-only build"
fi

await_tool otelcol "agent::an_opentelemetry_collector_receives_the_findings and agent::an_https_collector_with_a_private_ca_and_client_certificates_receives_the_findings"
await_tool helm "deploy::the_helm_chart_lints, deploy::the_helm_charts_daemonset_is_the_manifests, deploy::the_helm_charts_values_are_the_agents_flags and deploy::the_helm_charts_arguments_are_the_agents"
cargo test --workspace --locked --no-fail-fast "$@"
tier "cargo test --workspace"

# the crates as crates.io would get them, each built from its .crate alone (scripts/test-package.sh)
if [ $# -eq 0 ]; then
  bash scripts/test-package.sh
  tier "packaged crates"
fi

# the binary syslint ships and benchmarks (bench/): built with profile-guided optimisation, and
# its reports on every recorded trace must equal the unguided build's (scripts/build-dist.sh)
# (build-dist.sh ends by packaging it: stripped, the tarball, the .deb). Then what users download
# is installed and run on a clean Debian 12 (scripts/test-install.sh: ~5 s, ~70 s more the first
# time, which makes the tree) and the container image is built and run (scripts/test-container.sh:
# ~35 s). Either may skip (exit 3: no root, debootstrap, mirror or podman) saying so.
dist_test() {
  local rc=0 t0
  t0=$(date +%s)
  bash "scripts/$1.sh" || rc=$?
  if [ "$rc" -eq 3 ]; then
    echo "WARNING: scripts/$1.sh skipped (see above): not tested here" >&2
  elif [ "$rc" -ne 0 ]; then
    exit "$rc"
  else
    echo "scripts/$1.sh: passed in $(( $(date +%s) - t0 )) s"
  fi
}
if [ $# -eq 0 ]; then
  bash scripts/build-dist.sh
  dist_test test-install
  dist_test test-container
else
  echo "note: tests filtered ($*): the dist build and its report check did not run (scripts/build-dist.sh), nor the install and container tests" >&2
  bash scripts/test-container.sh --check-only
fi
tier "all"
