#!/usr/bin/env bash
# Check the container build file (Containerfile) and, where podman runs, build its image and run
# syslint in it: --version, analyze on a mounted trace, trace with eBPF given the documented
# capabilities, and the strace fallback (with the one-line reason) without --pid=host.
#
# Usage: scripts/test-container.sh [--check-only]     (the image step: after build-dist.sh)
#
# 1. Always: the file is read as a build would read it: stages build, prebuilt, dist, runtime;
#    every COPY --from names an earlier stage; every COPY source from the context exists (or is
#    what build-dist.sh makes: target/dist/*.deb) and is not excluded by .dockerignore, nor is
#    anything build-dist.sh needs (scripts/, crates/, lab/ and tests/ traces, Cargo.lock).
# 2. With podman and root (exit 3, a visible skip, otherwise): no registry is reachable here,
#    so rust:bookworm and debian:bookworm-slim cannot be pulled. The runtime stage is built
#    FROM the Debian 12 minbase tree scripts/test-install.sh caches (imported with `podman
#    import`), with `--build-arg DIST=prebuilt` (the .deb build-dist.sh made, not the `build`
#    stage) and `--isolation chroot`; strace comes from Debian's mirror (STRACE=0 to skip).
#    The `build` stage itself is not built here.
#
# Environment quirks of the machine this was written on (no CAP_SYS_RESOURCE, cgroup v1/v2
# hybrid): crun cannot start containers, runc can when the ulimits are below the hard ones;
# SYSLINT_PODMAN_RUN overrides the run command.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CF=$ROOT/Containerfile
fail() { echo "test-container: FAILED: $*" >&2; exit 1; }
skip() { echo "test-container: SKIPPED (the Containerfile was checked, no image built): $*" >&2; exit 3; }

# --- 1. the file ---
[ -f "$CF" ] || fail "no Containerfile"
stages=$(sed -n 's/^FROM .* AS \([a-z]*\)$/\1/p' "$CF" | tr '\n' ' ')
[ "$stages" = "build prebuilt dist runtime " ] || fail "stages are '$stages', want 'build prebuilt dist runtime'"
seen=""
while read -r kw rest; do
    case $kw in
    FROM) seen="$seen $(sed -n 's/.* AS \([a-z]*\)$/\1/p' <<< "$rest")" ;;
    COPY)
        if [[ $rest == --from=* ]]; then
            from=${rest#--from=}
            from=${from%% *}
            [[ " $seen " == *" $from "* ]] || fail "COPY --from=$from names no earlier stage"
        else
            read -r -a words <<< "$rest"
            unset 'words[${#words[@]}-1]' # the destination
            for src in "${words[@]}"; do
                [ "$src" = . ] && continue
                case $src in
                target/dist/syslint_\*_amd64.deb) grep -q '^!target/dist/syslint_\*_amd64.deb$' .dockerignore \
                    || fail ".dockerignore excludes $src" ;;
                *) compgen -G "$src" > /dev/null || fail "COPY source $src does not exist" ;;
                esac
            done
        fi
        ;;
    esac
done < <(grep -E '^(FROM|COPY) ' "$CF")
for needed in scripts crates lab tests demo Cargo.lock Cargo.toml README.md LICENSE-MIT; do
    grep -q -E "^/?$needed/?$" .dockerignore && fail ".dockerignore excludes $needed, which the build stage needs"
done
grep -q '^RUN scripts/build-dist.sh' "$CF" || fail "the build stage does not run scripts/build-dist.sh"
grep -q '^ENTRYPOINT \["syslint"\]' "$CF" || fail "the entrypoint is not syslint"
for doc in pid=host CAP_BPF CAP_PERFMON CAP_SYS_PTRACE /sys/kernel/btf seccomp; do
    grep -q -- "$doc" "$CF" || fail "the Containerfile does not document $doc"
done
echo "test-container: Containerfile checked (stages, COPY sources, .dockerignore, documented capabilities)" >&2
[ "${1:-}" = "--check-only" ] && exit 0

# --- 2. the image ---
[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v podman > /dev/null || skip "podman is not installed (apt-get install podman runc)"
TREE="${SYSLINT_BOOKWORM_ROOT:-/var/cache/syslint/bookworm-minbase}"
[ -x "$TREE/usr/bin/dpkg" ] || skip "no Debian 12 tree at $TREE (scripts/test-install.sh makes it)"
compgen -G "$ROOT/target/dist/syslint_*_amd64.deb" > /dev/null || fail "no target/dist/*.deb: run scripts/build-dist.sh first"
t0=$(date +%s)
BASE=localhost/syslint-test/bookworm-minbase:latest
if ! podman image exists "$BASE" || [ "$TREE" -nt "$ROOT/target/.bookworm-minbase-imported" ]; then
    tar -C "$TREE" -c . | podman import -q - "$BASE" > /dev/null || skip "podman import failed"
    touch "$ROOT/target/.bookworm-minbase-imported"
fi
IMAGE=localhost/syslint:test
podman build -q --isolation chroot -f "$CF" --build-arg DIST=prebuilt --build-arg BASE="$BASE" \
    --build-arg STRACE="${STRACE:-1}" -t "$IMAGE" "$ROOT" > /dev/null || fail "podman build"
read -r -a RUN <<< "${SYSLINT_PODMAN_RUN:-podman $(command -v runc > /dev/null && echo --runtime runc) run --rm --ulimit nofile=1024:1024 --ulimit nproc=4096:4096}"
"${RUN[@]}" "$IMAGE" --version | grep -q '^backends: ebpf, strace' || fail "syslint --version in the image"
rc=0
"${RUN[@]}" -v "$ROOT/demo:/w:ro" "$IMAGE" analyze --format json /w/fetch.strace.gz > "$ROOT/target/container-analyze.json" || rc=$?
if [ "$rc" -gt 1 ] || ! grep -q '"connection-churn"' "$ROOT/target/container-analyze.json"; then
    fail "analyze in the image (exit $rc)"
fi
# trace as documented: host pids, CAP_BPF and CAP_PERFMON, and (podman 4.3's seccomp profile
# predates CAP_BPF and allows bpf(2) only with CAP_SYS_ADMIN) seccomp=unconfined
out=$("${RUN[@]}" --pid=host --cap-add=BPF --cap-add=PERFMON --security-opt seccomp=unconfined \
    "$IMAGE" trace --backend ebpf --format json -- /bin/true 2>&1) || fail "trace with eBPF in the image: $out"
grep -q '"backend": "ebpf"' <<< "$out" || fail "trace in the image did not use eBPF: $(head -n 5 <<< "$out")"
# without --pid=host: the one-line reason, then strace (when the image has it)
if [ "${STRACE:-1}" = 1 ]; then
    out=$("${RUN[@]}" "$IMAGE" trace --format json -- /bin/true 2>&1) || fail "trace with strace in the image: $out"
    if ! grep -q 'PID namespace of its own' <<< "$out" || ! grep -q '"backend": "strace"' <<< "$out"; then
        fail "trace without --pid=host did not fall back to strace saying why: $(head -n 3 <<< "$out")"
    fi
fi
# the agent as the DaemonSet runs it (deploy/kubernetes/daemonset.yaml): the host's pids,
# exactly its five capabilities, a read-only root, seccomp unconfined, BTF mounted. It finds
# the timer-polling lab's BAD program running on the host (bounded: 8 s, its own alarm(30),
# killed by pid) and prints what it kept when its --for ends
cc -O1 -o "$ROOT/target/ctimerbad" "$ROOT/lab/timer-polling/timer.c" || fail "cc lab/timer-polling/timer.c"
"$ROOT/target/ctimerbad" select20 8000 > /dev/null &
tpid=$!
rc=0
out=$("${RUN[@]}" --pid=host --read-only --cap-drop=ALL \
    --cap-add=BPF --cap-add=PERFMON --cap-add=SYS_PTRACE --cap-add=DAC_READ_SEARCH --cap-add=SYS_RESOURCE \
    --security-opt seccomp=unconfined -v /sys/kernel/btf:/sys/kernel/btf:ro \
    "$IMAGE" agent --comm ctimerbad --window 2s --every 3s --for 3s 2>&1) || rc=$?
kill "$tpid" 2> /dev/null || true
wait "$tpid" 2> /dev/null || true
[ "$rc" -le 1 ] || fail "the agent in the image with the DaemonSet's privileges (exit $rc): $(tail -n 5 <<< "$out")"
grep -q 'timer-polling' <<< "$out" || fail "the agent in the image found nothing in ctimerbad: $(tail -n 5 <<< "$out")"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "test-container: image built (runtime stage, from the local Debian 12 tree) and run: --version, analyze, trace with eBPF, the strace fallback, the agent with the DaemonSet's privileges; $((size / 1000000)) MB; $(( $(date +%s) - t0 )) s" >&2
