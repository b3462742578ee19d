//! The analyze-only build (`--no-default-features`): syslint without the eBPF backend, for a
//! laptop or a CI container that analyses logs, pastes and recordings. Its point is what it does
//! not need to build: no clang, libelf, zlib or libbpf. (scripts/test.sh lints it and runs the
//! unit tests of the crates that differ without the feature.)

use crate::common::*;

/// Crates whose builds need clang, libelf or libbpf: the eBPF backend's.
const C_BUILT: &[&str] = &["libbpf-sys", "libbpf-rs", "libbpf-cargo", "bindgen", "clang-sys", "libz-sys"];

/// The packages the build of syslint compiles (dependencies and build dependencies), by name.
fn built(features: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = std::process::Command::new(cargo)
        .args(["tree", "-p", "syslint", "--edges", "normal,build", "--prefix", "none", "--locked", "--offline"])
        .args(features)
        .current_dir(root())
        .output()
        .expect("cargo tree");
    assert!(o.status.success(), "cargo tree {features:?}: {}", stderr(&o));
    let mut names: Vec<String> =
        stdout(&o).lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_analyze_only_build_needs_no_c_toolchain_for_ebpf() {
    let full = built(&[]);
    // the check can fail: the default build does pull them in
    assert!(full.iter().any(|n| n == "libbpf-sys"), "the default build has no libbpf-sys? {full:?}");
    let lean = built(&["--no-default-features"]);
    let bad: Vec<&String> = lean.iter().filter(|n| C_BUILT.contains(&n.as_str())).collect();
    assert!(bad.is_empty(), "the analyze-only build still compiles {bad:?}");
    // it still reads recordings: the record format is there, without the loader
    assert!(lean.iter().any(|n| n == "syslint-bpf"), "{lean:?}");
}
