//! What `syslint --version` (and `-V`) says: the version, the commit the binary was built from
//! (build.rs), and the capture backends compiled in.
//!
//! ```text
//! syslint 0.1.0 (commit ef7e744-dirty)
//! backends: ebpf, strace
//! ```

use std::sync::OnceLock;

/// The capture backends this binary holds. strace is always there (it reads logs and runs
/// strace); eBPF only when syslint-capture's `ebpf` feature is compiled in.
pub fn backends() -> Vec<&'static str> {
    let mut b = Vec::new();
    if syslint_capture::EBPF_COMPILED {
        b.push("ebpf");
    }
    b.push("strace");
    b
}

/// The text after `syslint ` in `syslint --version`.
pub fn text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let commit = match env!("SYSLINT_COMMIT") {
            "" => "unknown commit".to_string(),
            c => format!("commit {c}"),
        };
        format!("{} ({commit})\nbackends: {}", env!("CARGO_PKG_VERSION"), backends().join(", "))
    })
}
