//! `syslint trace`: live capture. The backends (strace child, eBPF) are not built yet; until
//! then this says exactly how to get the same result by hand.

use crate::cli::TraceArgs;
use anyhow::{bail, Result};

pub fn run(a: TraceArgs) -> Result<u8> {
    let target = if !a.command.is_empty() {
        a.command.join(" ")
    } else if !a.pids.is_empty() {
        format!("-p {}", a.pids.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(","))
    } else {
        "CMD".into()
    };
    bail!(
        "`syslint trace` is not available in this version yet. Record with strace and analyse \
         the log instead:\n  strace -f -tt -T -yy -o trace.strace {target}\n  syslint analyze trace.strace"
    )
}
