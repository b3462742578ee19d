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
