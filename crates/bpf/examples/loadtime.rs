//! How long loading the eBPF programs takes (almost all of it is the verifier), median of R
//! loads, and the verifier's `verified_insns` per program as `bpftool prog show` reports them.
//! Needs root.
//!
//! cargo run --release -p syslint-bpf --example loadtime [R] [nobtf]

use std::time::Instant;

use syslint_bpf::{Options, Probe};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let opts = Options { force_no_btf: args.next().as_deref() == Some("nobtf"), ..Options::default() };
    let mut ms = Vec::new();
    for i in 0..runs {
        let start = Instant::now();
        let probe = Probe::load(&opts)?;
        ms.push(start.elapsed().as_secs_f64() * 1e3);
        if i == 0 {
            // the programs this process loaded: the newest of each name
            let mut newest = std::collections::BTreeMap::new();
            for p in libbpf_rs::query::ProgInfoIter::default() {
                let name = p.name.to_string_lossy().into_owned();
                if name.starts_with("sl_") && newest.get(&name).is_none_or(|&(id, _)| id < p.id) {
                    newest.insert(name, (p.id, p.verified_insns));
                }
            }
            for (name, (_, v)) in newest {
                println!("{name:<20} verified_insns {v}");
            }
        }
        drop(probe);
    }
    let mut sorted = ms.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "load (btf={}) median {:.1} ms  runs {:?}",
        !opts.force_no_btf,
        sorted[sorted.len() / 2],
        ms.iter().map(|v| v.round() as u64).collect::<Vec<_>>()
    );
    Ok(())
}
