//! What sampled stacks cost: a loop of N getppid calls (crates/bpf/tests/programs/getppid_loop.c,
//! timed by the program itself) traced with the default capture (streaming, coalescing) without
//! stacks, with sampled stacks (the defaults: first 8 per thread and syscall per second, then 1
//! in 1000), and with a stack on every call (the kernel cost of one stack copy), the three
//! interleaved round by round; medians. Then the bytes per stack record, and the collector's
//! unwinding and symbolization time per stack. Needs root and `cc`.
//!
//! cargo run --release -p syslint-stacks --example stackbench [N] [ROUNDS]

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use syslint_bpf::{Options, Probe, StackOptions};
use syslint_stacks::{Collector, Limits, StackTable};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One traced run: (ns the loop took, the stack table when stacks were on).
fn run(prog: &Path, n: u64, out: &Path, stacks: Option<StackOptions>) -> Res<(u64, Option<StackTable>)> {
    let mut probe = Probe::load(&Options { stacks, ..Options::default() })?;
    let collector = match probe.take_stack_ring()? {
        Some(ring) => Some(Collector::start(ring, Limits::default())?),
        None => None,
    };
    let argv: Vec<OsString> = vec![prog.into(), n.to_string().into(), out.into()];
    let mut child = probe.spawn(&argv)?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait()?.is_none() {
        probe.poll(Duration::from_millis(100), &mut |_| {})?;
        if Instant::now() > deadline {
            return Err("the loop did not finish in 120 s".into());
        }
    }
    probe.poll(Duration::ZERO, &mut |_| {})?;
    let table = match collector {
        Some(c) => {
            let mut t = c.finish()?;
            t.kernel = Some(probe.stack_stats());
            Some(t)
        }
        None => None,
    };
    let ns: u64 = std::fs::read_to_string(out)?.trim().parse()?;
    Ok((ns, table))
}

fn median(v: &mut [u64]) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1_000_000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(7);
    let dir = std::env::temp_dir().join(format!("syslint-stackbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let prog = dir.join("getppid_loop");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bpf/tests/programs/getppid_loop.c");
    if !Command::new("cc").args(["-O2", "-o"]).arg(&prog).arg(&src).status()?.success() {
        return Err("cc failed".into());
    }
    let out = dir.join("ns");
    let sampled = StackOptions::default();
    let every = StackOptions { first: u32::MAX, spacing: std::time::Duration::ZERO, ..StackOptions::default() };
    // the budget's own cost: every call counted, none sampled after each syscall's first
    let budget = StackOptions { first: 0, every: 0, ..StackOptions::default() };
    let modes: [(&str, Option<StackOptions>); 4] = [
        ("no stacks", None),
        ("budget only, no stacks taken", Some(budget)),
        ("sampled stacks", Some(sampled)),
        ("a stack on every call", Some(every)),
    ];
    let mut ns: Vec<Vec<u64>> = vec![Vec::new(); modes.len()];
    let mut tables: Vec<Vec<StackTable>> = vec![Vec::new(); modes.len()];
    for round in 0..rounds {
        for (i, (_, opts)) in modes.iter().enumerate() {
            let (t, table) = run(&prog, n, &out, opts.clone())?;
            ns[i].push(t);
            tables[i].extend(table);
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    let base = median(&mut ns[0].clone()) as f64;
    println!("{n} getppid calls per run, {rounds} rounds interleaved, medians:");
    for (i, (name, _)) in modes.iter().enumerate() {
        let med = median(&mut ns[i].clone()) as f64;
        let mut line = format!(
            "  {name:<29} {:>8.1} ms  {:>6.1} ns/call  x{:.3}  runs {:?} ms",
            med / 1e6,
            med / n as f64,
            med / base,
            ns[i].iter().map(|v| v / 1_000_000).collect::<Vec<_>>()
        );
        let t = &tables[i];
        if !t.is_empty() {
            let sent: u64 = t.iter().filter_map(|x| x.kernel).map(|k| k.sent).sum();
            let lost: u64 = t.iter().filter_map(|x| x.kernel).map(|k| k.lost).sum();
            let bytes: u64 = t.iter().filter_map(|x| x.kernel).map(|k| k.bytes).sum();
            let received: u64 = t.iter().map(|x| x.stats.received).sum();
            let unwind: u64 = t.iter().map(|x| x.stats.unwind_ns).sum();
            let mut sym: Vec<u64> = t.iter().map(|x| x.stats.symbolize_ns / (x.stacks.len().max(1) as u64)).collect();
            line.push_str(&format!(
                "\n      stacks per run {:.0}, lost {lost}, {:.0} bytes per stack record, unwinding {:.1} us per stack, \
                 symbolization {:.1} ms per distinct stack (median of runs; {:.1} stacks per run)",
                sent as f64 / t.len() as f64,
                bytes as f64 / sent.max(1) as f64,
                unwind as f64 / received.max(1) as f64 / 1e3,
                median(&mut sym) as f64 / 1e6,
                t.iter().map(|x| x.stacks.len()).sum::<usize>() as f64 / t.len() as f64,
            ));
        }
        println!("{line}");
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
