//! What tracing costs a socket-heavy program shaped like nginx (tests/programs/sockloop.c: per
//! iteration 19 calls: socket, setsockopt, connect, write, epoll_wait, accept4, setsockopt,
//! epoll_ctl, epoll_wait, recvfrom, openat, newfstatat, pread64, close, writev, epoll_ctl,
//! close, read, close), untraced, summary-only and full detail (coalescing on), R rounds
//! interleaved (one run of each mode per round, a fresh probe per run), medians.
//!
//! Besides the loop's own ns per syscall it reads the kernel's per-program statistics
//! (kernel.bpf_stats_enabled is switched on for the run and restored after): run_time_ns /
//! run_cnt of sl_sys_enter and sl_sys_exit, the most direct measure of the kernel program's
//! cost. run_cnt counts every syscall on the host (the `traced` filter is inside the program):
//! before each traced run the probe sits 300 ms attached with nothing traced, which gives the
//! cost of a run for another process's syscall, and the traced calls' ns/run is the run time
//! minus that many other runs at that cost, over the loop's calls.
//! Needs root and `cc`.
//!
//! cargo run --release -p syslint-bpf --example sockbench [N] [R] [MODES] [LOOP]
//!
//! MODES: which of u(ntraced), s(ummary-only), f(ull) to run, default `usf`. LOOP: the
//! program, `sockloop` or `mixloop` (cheap calls that never coalesce: getppid, epoll_ctl on a
//! bad fd, a socketpair write and read, openat of a missing path; the kernel program's cost
//! with little else around).

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use libbpf_rs::query::ProgInfoIter;
use syslint_bpf::{Options, Probe};

const STATS: &str = "/proc/sys/kernel/bpf_stats_enabled";

/// (run_time_ns, run_cnt) of sl_sys_enter and sl_sys_exit among programs not in `old`.
fn prog_stats(old: &HashSet<u32>) -> [(u64, u64); 2] {
    let mut out = [(0, 0); 2];
    for p in ProgInfoIter::default() {
        if old.contains(&p.id) {
            continue;
        }
        let i = match p.name.to_str() {
            Some("sl_sys_enter") => 0,
            Some("sl_sys_exit") => 1,
            _ => continue,
        };
        out[i].0 += p.run_time_ns;
        out[i].1 += p.run_cnt;
    }
    out
}

#[derive(Default)]
struct Mode {
    ns_per_call: Vec<f64>,
    enter_ns_run: Vec<f64>,
    exit_ns_run: Vec<f64>,
    prog_ns_call: Vec<f64>,
    untraced_ns_run: Vec<f64>,
    foreign_share: Vec<f64>,
    records: u64,
    lost: u64,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20_000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(7);
    let which = args.next().unwrap_or_else(|| "usf".into());
    let loop_name = args.next().unwrap_or_else(|| "sockloop".into());
    let dir = std::env::temp_dir().join(format!("syslint-sockbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let prog = dir.join(&loop_name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/programs/{loop_name}.c"));
    if !Command::new("cc").args(["-O2", "-o"]).arg(&prog).arg(&src).status()?.success() {
        return Err("cc failed".into());
    }
    let out = dir.join("ns");
    let argv: Vec<OsString> = vec![prog.clone().into(), n.to_string().into(), out.clone().into()];
    let read_out = || -> Result<(u64, u64), Box<dyn std::error::Error>> {
        let s = std::fs::read_to_string(&out)?;
        let mut it = s.split_whitespace().map(str::parse::<u64>);
        Ok((it.next().ok_or("no ns")??, it.next().ok_or("no calls")??))
    };
    let stats_before = std::fs::read_to_string(STATS)?;
    std::fs::write(STATS, "1")?;

    let names = ["untraced", "summary-only", "full (coalescing)"];
    let mut modes: Vec<Mode> = (0..names.len()).map(|_| Mode::default()).collect();
    let result = (|| -> Result<(), Box<dyn std::error::Error>> {
        for _ in 0..rounds {
            for (i, m) in modes.iter_mut().enumerate() {
                if !which.contains(&names[i][..1]) {
                    continue;
                }
                if i == 0 {
                    if !Command::new(&prog).args(&argv[1..]).status()?.success() {
                        return Err("the loop failed".into());
                    }
                    let (ns, calls) = read_out()?;
                    m.ns_per_call.push(ns as f64 / calls as f64);
                    continue;
                }
                let opts = Options { summary_only: i == 1, ..Options::default() };
                let old: HashSet<u32> = ProgInfoIter::default().map(|p| p.id).collect();
                let mut probe = Probe::load(&opts)?;
                // the cost of a run for a syscall of another process (the filter's miss), measured
                // while nothing is traced, to take other processes' syscalls out of the numbers
                let idle0 = prog_stats(&old);
                std::thread::sleep(Duration::from_millis(300));
                let before = prog_stats(&old);
                let foreign = |k: usize| {
                    let (t, r) = (before[k].0 - idle0[k].0, before[k].1 - idle0[k].1);
                    if r == 0 {
                        0.0
                    } else {
                        t as f64 / r as f64
                    }
                };
                let (u_en, u_ex) = (foreign(0), foreign(1));
                let mut child = probe.spawn(&argv)?;
                while child.try_wait()?.is_none() {
                    m.records += probe.poll(Duration::from_millis(100), &mut |_| {})? as u64;
                }
                m.records += probe.poll(Duration::ZERO, &mut |_| {})? as u64;
                let after = prog_stats(&old);
                if !child.wait()?.success() {
                    return Err("the loop failed".into());
                }
                let (ns, calls) = read_out()?;
                m.ns_per_call.push(ns as f64 / calls as f64);
                let d = |k: usize| (after[k].0 - before[k].0, (after[k].1 - before[k].1).max(1));
                let (en_ns, en_cnt) = d(0);
                let (ex_ns, ex_cnt) = d(1);
                // runs for the traced calls: all runs minus the other processes' (each costing
                // what a run cost while nothing was traced)
                let traced = |ns: u64, cnt: u64, u: f64| {
                    let others = cnt.saturating_sub(calls) as f64;
                    (ns as f64 - others * u) / calls as f64
                };
                let (en, ex) = (traced(en_ns, en_cnt, u_en), traced(ex_ns, ex_cnt, u_ex));
                m.enter_ns_run.push(en);
                m.exit_ns_run.push(ex);
                m.prog_ns_call.push(en + ex);
                m.untraced_ns_run.push(u_en + u_ex);
                m.foreign_share.push(1.0 - calls as f64 / en_cnt as f64);
                m.lost += probe.lost().syscalls;
            }
        }
        Ok(())
    })();
    let _ = std::fs::write(STATS, stats_before.trim());
    let _ = std::fs::remove_dir_all(&dir);
    result?;

    println!("{loop_name}: {n} iterations, {rounds} rounds interleaved, medians");
    println!("ns/call: the loop's wall time per syscall; enter/exit ns/run: run_time_ns per run of");
    println!("sl_sys_enter/sl_sys_exit for the traced calls (other processes' runs taken out);");
    println!("miss ns: enter+exit per run for another process's syscall; other: their share of runs");
    println!(
        "{:<20} {:>10} {:>14} {:>13} {:>12} {:>9} {:>7} {:>12} {:>6}",
        "mode", "ns/call", "enter ns/run", "exit ns/run", "enter+exit", "miss ns", "other", "records/run", "lost"
    );
    for (name, m) in names.iter().zip(&modes) {
        if m.ns_per_call.is_empty() {
            continue;
        }
        println!(
            "{:<20} {:>10.1} {:>14.1} {:>13.1} {:>12.1} {:>9.1} {:>6.0}% {:>12} {:>6}",
            name,
            median(&m.ns_per_call),
            median(&m.enter_ns_run),
            median(&m.exit_ns_run),
            median(&m.prog_ns_call),
            median(&m.untraced_ns_run),
            median(&m.foreign_share) * 100.0,
            m.records / rounds as u64,
            m.lost
        );
        let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(" ");
        println!("    ns/call runs: {}", fmt(&m.ns_per_call));
        if !m.exit_ns_run.is_empty() {
            println!("    exit ns/run runs: {}", fmt(&m.exit_ns_run));
        }
    }
    Ok(())
}
