//! Probes what the integration tests need from the machine and tells them with cfg flags, so a
//! test that cannot run here is marked `#[ignore = "why"]` and reported as ignored by
//! `cargo test`, never counted as passed (see tests/tests.rs):
//! - `syslint_bpf`: the `ebpf` feature, root and a kernel with BTF (`/sys/kernel/btf/vmlinux`),
//!   unless `SYSLINT_TEST_NO_BPF` is set;
//! - `syslint_corpus`: the real-world strace corpus, `SYSLINT_SHARED/strace-corpus` or
//!   `../shared/strace-corpus` beside the checkout; its path is passed as `SYSLINT_CORPUS_DIR`;
//! - `syslint_root`: running as root.
//!
//! The binary itself does not look at these.

use std::path::PathBuf;

fn main() {
    for c in ["syslint_bpf", "syslint_corpus", "syslint_root"] {
        println!("cargo::rustc-check-cfg=cfg({c})");
    }
    println!("cargo::rerun-if-env-changed=SYSLINT_TEST_NO_BPF");
    println!("cargo::rerun-if-env-changed=SYSLINT_SHARED");
    println!("cargo::rerun-if-changed=build.rs");

    let root = euid_is_root();
    if root {
        println!("cargo::rustc-cfg=syslint_root");
    }
    let btf = "/sys/kernel/btf/vmlinux";
    println!("cargo::rerun-if-changed={btf}");
    let ebpf = std::env::var_os("CARGO_FEATURE_EBPF").is_some();
    if ebpf && root && std::path::Path::new(btf).exists() && std::env::var_os("SYSLINT_TEST_NO_BPF").is_none() {
        println!("cargo::rustc-cfg=syslint_bpf");
    }

    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let shared = match std::env::var_os("SYSLINT_SHARED") {
        Some(s) => PathBuf::from(s),
        None => manifest.join("../../../shared"),
    };
    let corpus = shared.join("strace-corpus");
    // a path that does not exist makes cargo rerun this script every build: cheap, and the
    // corpus appearing later is then noticed
    println!("cargo::rerun-if-changed={}", corpus.display());
    if corpus.is_dir() {
        println!("cargo::rustc-cfg=syslint_corpus");
        println!("cargo::rustc-env=SYSLINT_CORPUS_DIR={}", corpus.display());
    } else {
        println!("cargo::rustc-env=SYSLINT_CORPUS_DIR=");
    }
}

/// Effective uid 0, from /proc (no libc dependency in a build script).
fn euid_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            .is_some_and(|euid| euid == "0")
    })
}
