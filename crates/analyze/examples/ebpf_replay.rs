//! How many eBPF records one analysis core takes: an `.slr` recording (decompressed once into
//! memory) replayed again and again through the steps of the live analysis thread:
//! `decode` (records parsed from the recording's encoding, as the live path decodes encoded
//! chunks), `+format` (the formatter turns them into events) and `+analysis` (every stable
//! detector, the model and the summary). Rounds are interleaved; medians are printed.
//!
//!   cargo run --release -p syslint-analyze --example ebpf_replay -- REC.slr [ROUNDS]
//!
//! Make a recording with `syslint trace -o REC.slr -- COMMAND` (bench/README.md).

#[path = "common/rounds.rs"]
mod rounds;

use syslint_analyze::{registry, Analyzer};
use syslint_capture::ebpf::{format::Formatter, slr};
use syslint_report::Capture;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: ebpf_replay REC.slr [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5).max(1);
    // decompressed once, so each round measures the decoding, not zstd
    let body = match slr::decompress(std::path::Path::new(path)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let open = || match slr::Recording::from_decompressed(body.clone(), None) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let configs = ["decode", "+format", "+analysis"];
    let (mut records, mut events) = (0u64, 0u64);
    let meds = rounds::medians(configs.len(), rounds, |i| {
        let mut n = 0u64;
        let mut rec = open();
        match configs[i] {
            "decode" => {
                rec.replay(&mut |r| {
                    std::hint::black_box(&r);
                    n += 1;
                });
            }
            "+format" => {
                let mut f = Formatter::new(rec.known.clone());
                rec.replay(&mut |r| {
                    n += 1;
                    f.on_record(&r, &mut |ev| {
                        std::hint::black_box(ev);
                    });
                });
                events = f.events;
            }
            _ => {
                let mut f = Formatter::new(rec.known.clone());
                let detectors = registry::build(&[], &[], &toml::Table::new()).unwrap_or_default();
                let mut a = Analyzer::new(detectors);
                rec.replay(&mut |r| {
                    n += 1;
                    f.on_record(&r, &mut |ev| a.on_event(ev));
                });
                let report = a.finish(Capture::default());
                std::hint::black_box(report.findings.len());
            }
        }
        records = n;
    });
    println!("records: {records}, events: {events}, rounds: {rounds} (interleaved, medians)");
    println!("| step | median s | records/s | ns/record | ns/record over the step before |");
    println!("|---|---:|---:|---:|---:|");
    for (i, c) in configs.iter().enumerate() {
        let prev = if i == 0 { 0.0 } else { meds[i - 1] };
        println!(
            "| {c} | {:.3} | {:.0} | {:.0} | {:.0} |",
            meds[i],
            records as f64 / meds[i],
            meds[i] * 1e9 / records as f64,
            (meds[i] - prev) * 1e9 / records as f64
        );
    }
}
