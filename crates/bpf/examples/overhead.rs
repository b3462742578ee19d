//! What tracing costs the traced program: a loop of N getppid calls timed by the program itself,
//! untraced and under each capture mode, median of R runs. Needs root and `cc`.
//!
//! cargo run --release -p syslint-bpf --example overhead [N] [R]

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use syslint_bpf::{Counter, Options, Probe};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map(|a| a.parse()).transpose()?.unwrap_or(2_000_000);
    let runs: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let dir = std::env::temp_dir().join(format!("syslint-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let prog = dir.join("getppid_loop");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/getppid_loop.c");
    if !Command::new("cc").args(["-O2", "-o"]).arg(&prog).arg(&src).status()?.success() {
        return Err("cc failed".into());
    }
    let out = dir.join("ns");
    let argv: Vec<OsString> = vec![prog.clone().into(), n.to_string().into(), out.clone().into()];
    let read_ns = || -> Result<u64, Box<dyn std::error::Error>> { Ok(std::fs::read_to_string(&out)?.trim().parse()?) };

    let report = |name: &str, mut ns: Vec<u64>, extra: String| {
        ns.sort_unstable();
        let med = ns[ns.len() / 2];
        println!(
            "{name:<28} median {:>8.1} ms  {:>6.1} ns/call  runs {:?} ms{extra}",
            med as f64 / 1e6,
            med as f64 / n as f64,
            ns.iter().map(|v| v / 1_000_000).collect::<Vec<_>>()
        );
    };

    let mut ns = Vec::new();
    for _ in 0..runs {
        if !Command::new(&prog).args(&argv[1..]).status()?.success() {
            return Err("the loop failed".into());
        }
        ns.push(read_ns()?);
    }
    report("untraced", ns, String::new());

    {
        // the cost every other process on the host pays while a probe is attached
        let _probe = Probe::load(&Options::default())?;
        let mut ns = Vec::new();
        for _ in 0..runs {
            if !Command::new(&prog).args(&argv[1..]).status()?.success() {
                return Err("the loop failed".into());
            }
            ns.push(read_ns()?);
        }
        report("attached, not traced", ns, String::new());
    }

    {
        // the counting program (sys_exit only, no thread state): the cost for a process it
        // does not count, and for one it counts
        for watched in [false, true] {
            let mut counter = Counter::load()?;
            let mut ns = Vec::new();
            let mut calls = 0;
            for _ in 0..runs {
                // the loop starts after its pid is watched: the shell sleeps, then execs it
                let mut child = Command::new("sh")
                    .arg("-c")
                    .arg(format!("sleep 0.2; exec {} {n} {}", prog.display(), out.display()))
                    .spawn()?;
                if watched {
                    counter = Counter::load()?;
                    counter.watch(&[vec![child.id()]])?;
                }
                if !child.wait()?.success() {
                    return Err("the loop failed".into());
                }
                ns.push(read_ns()?);
                calls += counter.take().iter().flatten().map(|(_, c)| c.calls).sum::<u64>();
            }
            let name = if watched { "counter, counting it" } else { "counter, not counting it" };
            report(name, ns, format!("  calls counted/run {}", calls / runs as u64));
        }
    }

    let modes = [
        ("summary-only", Options { summary_only: true, ..Options::default() }),
        ("streaming, coalescing", Options::default()),
        ("streaming, no coalescing", Options { coalesce: false, ..Options::default() }),
    ];
    for (name, opts) in modes {
        let mut probe = Probe::load(&opts)?;
        let mut ns = Vec::new();
        let mut records = 0usize;
        for _ in 0..runs {
            let mut child = probe.spawn(&argv)?;
            while child.try_wait()?.is_none() {
                records += probe.poll(Duration::from_millis(100), &mut |_| {})?;
            }
            records += probe.poll(Duration::ZERO, &mut |_| {})?;
            if !child.wait()?.success() {
                return Err("the loop failed".into());
            }
            ns.push(read_ns()?);
        }
        let lost = probe.lost();
        report(name, ns, format!("  records/run {}  lost {}", records / runs, lost.syscalls));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
