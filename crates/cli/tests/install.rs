//! What a user installing syslint gets: a minimum Rust version every crate declares (so an old
//! cargo stops with its own one-line message instead of a compile error deep in the build),
//! and the README saying the same.

use crate::common::*;

/// The workspace's `rust-version`, read from the root Cargo.toml.
fn workspace_msrv() -> String {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("read Cargo.toml");
    let doc: toml::Table = toml::from_str(&text).expect("Cargo.toml is TOML");
    doc.get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("rust-version"))
        .and_then(toml::Value::as_str)
        .expect("[workspace.package] rust-version")
        .to_string()
}

/// Every crate under crates/ (members or not: a new crate must not forget it) inherits the
/// workspace's rust-version; without it cargo checks nothing for that crate.
#[test]
fn every_crate_inherits_the_workspace_rust_version() {
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("crates")).expect("read crates/") {
        let manifest = entry.expect("dir entry").path().join("Cargo.toml");
        if !manifest.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&manifest).expect("read a crate's Cargo.toml");
        let doc: toml::Table = toml::from_str(&text).expect("a crate's Cargo.toml is TOML");
        let rv = doc.get("package").and_then(|p| p.get("rust-version"));
        let inherits = rv.and_then(|v| v.get("workspace")).and_then(toml::Value::as_bool) == Some(true);
        assert!(
            inherits,
            "{} does not inherit the workspace's rust-version (add `rust-version.workspace = true` under [package]); it has {rv:?}",
            manifest.display()
        );
        seen += 1;
    }
    assert!(seen >= 8, "only {seen} crates found under crates/");
}

/// The declared minimum is at least what the code is known to need (`u64::is_multiple_of`,
/// stable since 1.87; clap 4.6 needs 1.85), and the README's Install section states it.
#[test]
fn the_minimum_rust_version_is_declared_and_documented() {
    let msrv = workspace_msrv();
    let parts: Vec<u32> = msrv.split('.').map(|p| p.parse().expect("a numeric rust-version")).collect();
    assert!(parts.len() >= 2 && (parts[0], parts[1]) >= (1, 87), "rust-version {msrv} is below 1.87");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let install = readme.split("## Install").nth(1).expect("README has an Install section");
    let install = install.split("\n## ").next().unwrap_or(install);
    assert!(install.contains(&format!("Rust {msrv} or newer")), "README's Install section does not say Rust {msrv}");
    assert!(install.contains("cargo install --locked --path crates/cli"), "README's Install section: no cargo install");
}

/// `git ARGS` in the source tree, or None when git is absent or fails.
fn git(args: &[&str]) -> Option<String> {
    let o = std::process::Command::new("git").arg("-C").arg(root()).args(args).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `syslint --version` and `-V` name the commit the binary was built from (in a checkout: the
/// source tree's HEAD, `-dirty` when crates/ or the manifests differ from it) and the backends
/// compiled in; outside a checkout they say `unknown commit`.
#[test]
fn version_names_the_commit_and_the_backends() {
    let checkout = git(&["ls-files", "--error-unmatch", "--", "crates/cli/build.rs"]).is_some();
    let want = if checkout {
        let hash = git(&["rev-parse", "--short", "HEAD"]).expect("git rev-parse --short HEAD");
        let changed =
            git(&["status", "--porcelain", "--", ":/crates", ":/Cargo.toml", ":/Cargo.lock"]).expect("git status");
        format!("(commit {hash}{})", if changed.is_empty() { "" } else { "-dirty" })
    } else {
        eprintln!(
            "NOTE: the source tree is not a git checkout (or git is not installed): --version must say unknown commit"
        );
        "(unknown commit)".to_string()
    };
    for flag in ["--version", "-V"] {
        let o = run(&[flag]);
        assert!(o.status.success(), "syslint {flag}: {}", stderr(&o));
        let out = stdout(&o);
        let mut lines = out.lines();
        let first = lines.next().unwrap_or_default();
        assert_eq!(first, format!("syslint {} {want}", env!("CARGO_PKG_VERSION")), "syslint {flag}:\n{out}");
        let backends = lines.next().and_then(|l| l.strip_prefix("backends: ")).unwrap_or_else(|| {
            panic!("syslint {flag}: no `backends:` line:\n{out}");
        });
        let backends: Vec<&str> = backends.split(", ").collect();
        assert!(backends.contains(&"strace"), "syslint {flag}: strace is always compiled in:\n{out}");
        // this test is built with the binary's features: eBPF is listed exactly when compiled
        assert_eq!(backends.contains(&"ebpf"), syslint_capture::EBPF_COMPILED, "syslint {flag}:\n{out}");
    }
}
