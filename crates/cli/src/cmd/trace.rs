//! `syslint trace`: run a command or attach to processes, stream the trace into the analysis,
//! report when the program ends, when `--for` passes, or on Ctrl-C/SIGTERM.

use super::analyze::{detectors_for, emit, exit_code, finish};
use super::trace_ebpf;
use super::{EXIT_ERROR, EXIT_FINDINGS};
use crate::cli::{Backend, TraceArgs};
use anyhow::{bail, Result};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syslint_analyze::summary::SyscallTable;
use syslint_analyze::Analyzer;
use syslint_capture::live::{pids_by_name, StraceSession, Target, Tee};
use syslint_capture::{parallel, CaptureInfo};
use syslint_event::{Event, EventKind};

pub fn run(a: TraceArgs) -> Result<u8> {
    let target = target_of(&a)?;
    if a.summary_only && a.backend == Backend::Strace {
        bail!("--summary-only counts in the kernel: it needs the eBPF backend (--backend ebpf or auto)");
    }
    // signals: remember them, act where the capture runs
    let sigint = Arc::new(AtomicBool::new(false));
    let sigterm = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, sigint.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, sigterm.clone())?;

    if a.backend != Backend::Strace {
        match trace_ebpf::start(&a, &target) {
            Ok(session) => return trace_ebpf::run(a, session, sigint, sigterm),
            Err(e) if a.backend == Backend::Auto && !a.summary_only && syslint_capture::ebpf::can_fall_back(&e) => {
                eprintln!("{}", trace_ebpf::fallback_line(&e));
            }
            Err(e) => bail!("eBPF backend: {e}"),
        }
    }
    if a.record.as_deref().is_some_and(|p| p.extension().is_some_and(|e| e == "slr")) {
        bail!("a .slr recording needs the eBPF backend; with strace, record text (-o run.strace.gz)");
    }
    let r = &a.report;
    let detectors = detectors_for(&r.select, &r.ignore, r.config.as_deref())?;

    let mut session = StraceSession::start(&target)?;
    let attach = matches!(target, Target::Pids(_));
    let fifo = match session.output() {
        Ok(f) => f,
        Err(e) => bail!("{e}"),
    };
    let events = Arc::new(AtomicU64::new(0));
    let so_far = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let stopped_by = Arc::new(AtomicUsize::new(0)); // 0 running, 1 --for, 2 SIGINT, 3 SIGTERM

    let status = if !r.quiet && std::io::stderr().is_terminal() {
        Some(status_line(session.what.clone(), events.clone(), so_far.clone(), done.clone()))
    } else {
        None
    };

    let mut analyzer = Analyzer::new(detectors);
    let mut tee = Tee::new(fifo, a.record.as_deref())?;
    let started = Instant::now();
    let deadline = a.duration.map(|d| started + d);
    let what = session.what.clone();

    let mut info = std::thread::scope(|scope| {
        // control: --for, Ctrl-C, SIGTERM
        let (done_c, stopped_c) = (done.clone(), stopped_by.clone());
        let (sigint_c, sigterm_c) = (sigint.clone(), sigterm.clone());
        let session_ref = &session;
        scope.spawn(move || {
            let mut stopped = false;
            while !done_c.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                if stopped {
                    continue;
                }
                let why = if sigterm_c.load(Ordering::Relaxed) {
                    3
                } else if attach && sigint_c.load(Ordering::Relaxed) {
                    // with -- CMD, Ctrl-C reached the command itself: let it decide
                    2
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    1
                } else {
                    0
                };
                if why != 0 {
                    stopped_c.store(why, Ordering::Relaxed);
                    session_ref.detach();
                    stopped = true;
                }
            }
        });

        let mut interval = a.interval.filter(|&n| n > 0).map(|n| Interval::new(Duration::from_secs(n)));
        let live = status.is_some();
        let mut next_count = Instant::now() + Duration::from_secs(1);
        let mut sink = |ev: &Event| {
            let n = events.fetch_add(1, Ordering::Relaxed);
            if let EventKind::Syscall(sc) = &ev.kind {
                if let Some(iv) = interval.as_mut() {
                    iv.add(sc);
                }
            }
            analyzer.on_event(ev);
            // findings so far, for the status line: about once a second
            if live && n % 4096 == 0 && Instant::now() >= next_count {
                so_far.store(analyzer.findings_so_far(), Ordering::Relaxed);
                next_count = Instant::now() + Duration::from_secs(1);
            }
        };
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let o = parallel::read_parallel(&mut tee, &what, workers, parallel::CHUNK, 4 << 20, &mut sink);
        done.store(true, Ordering::Relaxed);
        let mut info = CaptureInfo { sources: vec![format!("strace: {what}")], ..Default::default() };
        info.bytes = o.bytes;
        info.cut_lines = o.cut_lines;
        if let Some(e) = &o.error {
            info.warnings.push(format!("trace stream ended early: {e}"));
        }
        info.stats = o.stats;
        info
    });
    if let Some(h) = status {
        let _ = h.join();
    }
    let st = session.wait()?;
    let msgs = session.messages();
    if let Err(e) = tee.finish() {
        info.warnings.push(format!("the recording is incomplete: {e}"));
    }
    if let Some(e) = tee.error.take() {
        info.warnings.push(format!("the recording stopped early: {e}"));
    }
    let why = stopped_by.load(Ordering::Relaxed);
    stop_warnings(why, attach, a.duration, &mut info.warnings);
    for l in msgs.lines().filter(|l| l.contains("strace:") && !l.contains("attached") && !l.contains("detached")) {
        info.warnings.push(l.trim().to_string());
    }
    let report = finish(analyzer, info, "strace");
    emit(&report, r)?;
    let code = exit_code(&report, r.fail_on);
    if code == EXIT_FINDINGS {
        return Ok(code);
    }
    if !attach && why == 0 {
        return Ok(command_status(Some(st)));
    }
    Ok(code)
}

/// Why tracing stopped (0 the program ended, 1 --for, 2 SIGINT, 3 SIGTERM), as report warnings.
pub(crate) fn stop_warnings(why: usize, attach: bool, duration: Option<Duration>, w: &mut Vec<String>) {
    match why {
        1 => w.push(format!("stopped after {:?} (--for); the traced processes run on", duration.unwrap_or_default())),
        2 => w.push("stopped by Ctrl-C; the traced processes run on".into()),
        3 => w.push("stopped by SIGTERM; the traced processes run on".into()),
        _ => {}
    }
    if attach && why == 0 {
        w.push("every traced process exited".into());
    }
}

/// The traced command's own exit status as ours (128 + signal when killed), as strace passes
/// it on; 2 when it is unknown.
pub(crate) fn command_status(st: Option<std::process::ExitStatus>) -> u8 {
    let Some(st) = st else { return EXIT_ERROR };
    if let Some(c) = st.code() {
        return c.clamp(0, 255) as u8;
    }
    match std::os::unix::process::ExitStatusExt::signal(&st) {
        Some(sig) => (128 + sig).clamp(0, 255) as u8,
        None => EXIT_ERROR,
    }
}

fn target_of(a: &TraceArgs) -> Result<Target> {
    let modes = [!a.command.is_empty(), !a.pids.is_empty(), a.comm.is_some()].iter().filter(|x| **x).count();
    if modes == 0 {
        bail!("nothing to trace: give a command after --, or -p PID, or --comm NAME (see syslint trace --help)");
    }
    if modes > 1 {
        bail!("give only one of: a command after --, -p PID, --comm NAME");
    }
    if !a.command.is_empty() {
        // the same clear error whichever backend starts it
        let prog = a.command[0].to_string_lossy().into_owned();
        let found = if prog.contains('/') {
            std::path::Path::new(&prog).is_file()
        } else {
            syslint_capture::live::which(&prog).is_some()
        };
        if !found {
            bail!("command not found: {prog}");
        }
        return Ok(Target::Command(a.command.clone()));
    }
    if let Some(name) = &a.comm {
        let pids = pids_by_name(name);
        if pids.is_empty() {
            bail!("no process named {name:?} is running");
        }
        return Ok(Target::Pids(pids));
    }
    Ok(Target::Pids(a.pids.clone()))
}

/// Events per second on one line of stderr, a few times a second.
pub(crate) fn status_line(
    what: String,
    events: Arc<AtomicU64>,
    so_far: Arc<AtomicUsize>,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut last = (t0, 0u64);
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(250));
            let n = events.load(Ordering::Relaxed);
            let now = Instant::now();
            let rate = (n - last.1) as f64 / now.duration_since(last.0).as_secs_f64().max(1e-3);
            last = (now, n);
            let mut e = std::io::stderr().lock();
            let f = so_far.load(Ordering::Relaxed);
            let _ = write!(
                e,
                "\rsyslint: tracing {what}: {n} events, {rate:.0}/s, {f} finding{} so far, {:.0}s  (Ctrl-C to stop) ",
                if f == 1 { "" } else { "s" },
                t0.elapsed().as_secs_f64()
            );
            let _ = e.flush();
        }
        let mut e = std::io::stderr().lock();
        let _ = write!(e, "\r{}\r", " ".repeat(100));
        let _ = e.flush();
    })
}

/// `--interval`: per-interval syscall summaries on stderr.
pub(crate) struct Interval {
    every: Duration,
    next: Instant,
    table: SyscallTable,
    n: u64,
}

impl Interval {
    pub(crate) fn new(every: Duration) -> Interval {
        Interval { every, next: Instant::now() + every, table: SyscallTable::default(), n: 0 }
    }

    pub(crate) fn add(&mut self, sc: &syslint_event::Syscall) {
        self.table.add(sc);
        self.n += 1;
        if Instant::now() >= self.next {
            self.print();
            self.table = SyscallTable::default();
            self.n = 0;
            self.next += self.every;
        }
    }

    fn print(&self) {
        let secs = self.every.as_secs_f64();
        let mut rows = self.table.stats(secs);
        rows.sort_by(|a, b| b.calls.cmp(&a.calls));
        let top: Vec<String> = rows
            .iter()
            .take(8)
            .map(|s| {
                let err = if s.errors > 0 { format!(" ({} err)", s.errors) } else { String::new() };
                format!("{} {}{err}", s.name, s.calls)
            })
            .collect();
        eprintln!(
            "\rsyslint: last {secs:.0}s: {} syscalls ({:.0}/s): {}",
            self.n,
            self.n as f64 / secs,
            top.join(", ")
        );
    }
}
