//! Probes what the integration tests need from the machine and tells them with cfg flags, so a
//! test that cannot run here is marked `#[ignore = "why"]` and reported as ignored by
//! `cargo test`, never counted as passed (see tests/tests.rs):
//! - `syslint_bpf`: the `ebpf` feature, root and a kernel with BTF (`/sys/kernel/btf/vmlinux`),
//!   unless `SYSLINT_TEST_NO_BPF` is set;
//! - `syslint_corpus`: the real-world strace corpus, `SYSLINT_SHARED/strace-corpus` or
//!   `../shared/strace-corpus` beside the checkout; its path is passed as `SYSLINT_CORPUS_DIR`;
//! - `syslint_root`: running as root.
//!
//! The binary itself does not look at these. It does use one thing found here: the commit it is
//! built from, for `syslint --version` (`SYSLINT_COMMIT`, see [`commit`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

    let commit = commit(&manifest).unwrap_or_default();
    println!("cargo::rustc-env=SYSLINT_COMMIT={commit}");
}

/// The commit this source is, for `syslint --version`: git's short hash, with `-dirty` when the
/// files that make the binary (crates/, Cargo.toml, Cargo.lock) differ from it, tracked or new.
/// None when that cannot be known: git absent, or this crate not tracked by the repository
/// around it (a source tarball unpacked in someone's home directory under git, cargo's
/// target/package). A crate packaged by `cargo package` names its commit in
/// .cargo_vcs_info.json, which is read then.
///
/// Tells cargo to run this again when the answer may change: HEAD, the branch it points to, the
/// index (a commit, `git add`) and the files the dirty check looks at. In a worktree `.git` is
/// a file, so the paths come from git itself (`--git-dir` holds HEAD and the index,
/// `--git-common-dir` the branches).
fn commit(manifest: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        // GIT_OPTIONAL_LOCKS=0: `git status` must not rewrite the index it is watched by (a
        // rewrite would make cargo run this script again on the next build, and so on)
        let out = Command::new("git")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .arg("-C")
            .arg(manifest)
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    if git(&["ls-files", "--error-unmatch", "--", "build.rs"]).is_none() {
        return vcs_info(manifest);
    }
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    let common = git(&["rev-parse", "--git-common-dir"]).map(|d| manifest.join(d))?;
    println!("cargo::rerun-if-changed={}", git_dir.join("HEAD").display());
    println!("cargo::rerun-if-changed={}", git_dir.join("index").display());
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        // a branch packed into packed-refs has no file of its own until its next commit
        // writes one: watched anyway (a path that does not exist reruns this script every
        // build, which is cheap and never stale)
        println!("cargo::rerun-if-changed={}", common.join(&branch).display());
        let packed = common.join("packed-refs");
        if packed.exists() {
            println!("cargo::rerun-if-changed={}", packed.display());
        }
    }
    let root = manifest.join("../..");
    for p in ["crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={}", root.join(p).display());
    }
    let hash = git(&["rev-parse", "--short", "HEAD"])?;
    let changed = git(&["status", "--porcelain", "--", ":/crates", ":/Cargo.toml", ":/Cargo.lock"])?;
    Some(if changed.is_empty() { hash } else { format!("{hash}-dirty") })
}

/// The commit `cargo package` wrote into .cargo_vcs_info.json (`{"git": {"sha1": "...",
/// "dirty": true}, ...}`), read without a JSON parser: the build script has no dependencies.
fn vcs_info(manifest: &Path) -> Option<String> {
    let path = manifest.join(".cargo_vcs_info.json");
    let text = std::fs::read_to_string(&path).ok()?;
    println!("cargo::rerun-if-changed={}", path.display());
    let sha = text.split("\"sha1\"").nth(1)?.split('"').nth(1)?;
    if sha.len() < 7 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let dirty = text.split("\"dirty\"").nth(1).is_some_and(|r| r.trim_start_matches([':', ' ']).starts_with("true"));
    Some(format!("{}{}", &sha[..7], if dirty { "-dirty" } else { "" }))
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
