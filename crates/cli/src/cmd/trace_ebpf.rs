//! `syslint trace` on the eBPF backend: the kernel program records the target's syscalls,
//! this loop turns records into events for the analysis (one thread: when the analysis falls
//! behind, the ring buffer fills and the kernel drops and counts, it never waits).

use super::analyze::{detectors_for, emit, exit_code, finish};
use super::trace::{status_line, Interval};
use super::{EXIT_ERROR, EXIT_FINDINGS};
use crate::cli::TraceArgs;
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syslint_analyze::Analyzer;
use syslint_capture::ebpf::{self, format::strace_line, EbpfSession, Options, Target};
use syslint_capture::CaptureInfo;
use syslint_event::{Event, EventKind};

/// Start the eBPF session; the error is returned as is so `auto` can fall back.
pub fn start(a: &TraceArgs, target: &Target) -> Result<EbpfSession, ebpf::BpfError> {
    let opts = Options { summary_only: a.summary_only, ..Options::default() };
    let slr = a.record.as_deref().filter(|p| p.extension().is_some_and(|e| e == "slr"));
    EbpfSession::start(target, &opts, slr)
}

pub fn run(a: TraceArgs, mut session: EbpfSession, sigint: Arc<AtomicBool>, sigterm: Arc<AtomicBool>) -> Result<u8> {
    let r = &a.report;
    let detectors = if a.summary_only { Vec::new() } else { detectors_for(&r.select, &r.ignore, r.config.as_deref())? };
    let attach = session.child_pid().is_none();
    // -o FILE that is not .slr: strace text of what was captured
    let mut text = match a.record.as_deref().filter(|p| p.extension().is_none_or(|e| e != "slr")) {
        Some(p) => Some(
            syslint_capture::live::text_writer(p).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?,
        ),
        None => None,
    };
    let offset = ebpf::slr::realtime_offset_ns();
    let events = Arc::new(AtomicU64::new(0));
    let so_far = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let status = if !r.quiet && std::io::stderr().is_terminal() {
        Some(status_line(format!("{} (eBPF)", session.what), events.clone(), so_far.clone(), done.clone()))
    } else {
        None
    };
    let mut analyzer = Analyzer::new(detectors);
    let mut interval = a.interval.filter(|&n| n > 0).map(|n| Interval::new(Duration::from_secs(n)));
    let live = status.is_some();
    let mut next_count = Instant::now() + Duration::from_secs(1);
    let deadline = a.duration.map(|d| Instant::now() + d);
    let mut line = String::new();
    let mut text_error: Option<String> = None;
    let mut sink = |ev: &Event| {
        let n = events.fetch_add(1, Ordering::Relaxed);
        if let EventKind::Syscall(sc) = &ev.kind {
            if let Some(iv) = interval.as_mut() {
                iv.add(sc);
            }
        }
        if let Some(w) = text.as_mut() {
            line.clear();
            strace_line(&mut line, ev, offset);
            if let Err(e) = w.write_all(line.as_bytes()) {
                text_error = Some(e.to_string());
                text = None;
            }
        }
        analyzer.on_event(ev);
        if live && n % 4096 == 0 && Instant::now() >= next_count {
            so_far.store(analyzer.findings_so_far(), Ordering::Relaxed);
            next_count = Instant::now() + Duration::from_secs(1);
        }
    };

    let mut why = 0; // 0 ended by itself, 1 --for, 2 SIGINT, 3 SIGTERM
    let mut status_of_child = None;
    let mut failure = None;
    loop {
        if let Err(e) = session.pump(Duration::from_millis(100), &mut sink) {
            failure = Some(e.to_string());
            break;
        }
        if sigterm.load(Ordering::Relaxed) {
            why = 3;
        } else if attach && sigint.load(Ordering::Relaxed) {
            why = 2;
        } else if deadline.is_some_and(|d| Instant::now() >= d) {
            why = 1;
        }
        if why != 0 {
            break;
        }
        if attach {
            if session.all_gone() {
                break;
            }
        } else if let Some(st) = session.child_status() {
            status_of_child = Some(st);
            break;
        }
    }
    if let Err(e) = session.drain(&mut sink) {
        failure.get_or_insert(e.to_string());
    }
    done.store(true, Ordering::Relaxed);
    if let Some(h) = status {
        let _ = h.join();
    }
    let lost = session.lost();
    let mut info = CaptureInfo { sources: vec![format!("ebpf: {}", session.what)], ..Default::default() };
    info.stats.events = session.events();
    info.stats.syscalls = session.syscalls();
    info.stats.clock = syslint_event::Clock::Monotonic;
    info.stats.with_duration = session.syscalls();
    if let Some(e) = session.finish_recording() {
        info.warnings.push(format!("the recording is incomplete: {e}"));
    }
    drop(sink);
    if let Some(mut w) = text.take() {
        if let Err(e) = w.flush() {
            text_error.get_or_insert(e.to_string());
        }
    }
    if let Some(e) = text_error {
        info.warnings.push(format!("the recording stopped early: {e}"));
    }
    if let Some(e) = failure {
        info.warnings.push(format!("the capture stopped early: {e}"));
    }
    if lost.records > 0 {
        info.warnings.push(format!(
            "the kernel buffer overflowed: {} records ({} syscalls) lost; counts are lower bounds",
            lost.records, lost.syscalls
        ));
    }
    match why {
        1 => info
            .warnings
            .push(format!("stopped after {:?} (--for); the traced processes run on", a.duration.unwrap_or_default())),
        2 => info.warnings.push("stopped by Ctrl-C; the traced processes run on".into()),
        3 => info.warnings.push("stopped by SIGTERM; the traced processes run on".into()),
        _ => {}
    }
    if attach && why == 0 {
        info.warnings.push("every traced process exited".into());
    }
    let summary = a.summary_only.then(|| session.summary());
    drop(session); // detaches the kernel program
    let mut report = finish(analyzer, info, "ebpf");
    report.capture.lost_events = lost.syscalls;
    if let Some(rows) = summary {
        summary_rows(&mut report, rows);
    }
    emit(&report, r)?;
    let code = exit_code(&report, r.fail_on);
    if code == EXIT_FINDINGS {
        return Ok(code);
    }
    if !attach && why == 0 {
        if let Some(st) = status_of_child {
            if let Some(c) = st.code() {
                return Ok(c.clamp(0, 255) as u8);
            }
            if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&st) {
                return Ok((128 + sig).clamp(0, 255) as u8);
            }
        }
        return Ok(EXIT_ERROR);
    }
    Ok(code)
}

/// Summary-only: the kernel's counters are the syscall table.
fn summary_rows(report: &mut syslint_report::Report, rows: Vec<(String, u64, u64, u64)>) {
    let window = report.capture.window.map_or(0.0, |w| w.duration_s);
    let mut stats: Vec<syslint_report::SyscallStats> = rows
        .into_iter()
        .filter(|r| r.1 > 0)
        .map(|(name, calls, errors, ns)| {
            let total = ns as f64 / 1e9;
            syslint_report::SyscallStats {
                name,
                calls,
                errors,
                timed_calls: calls,
                total_s: total,
                avg_s: total / calls.max(1) as f64,
                wall_share: if window > 0.0 { total / window } else { 0.0 },
                ..Default::default()
            }
        })
        .collect();
    stats.sort_by(|a, b| b.total_s.total_cmp(&a.total_s).then(b.calls.cmp(&a.calls)));
    report.capture.syscalls = stats.iter().map(|s| s.calls).sum();
    report.summary.syscalls = stats;
    report
        .capture
        .warnings
        .push("summary only: syscalls were counted in the kernel; no detector ran (percentiles unknown)".into());
}

/// Why eBPF could not start, and what to do about it, in one line.
pub fn fallback_line(e: &ebpf::BpfError) -> String {
    match e {
        ebpf::BpfError::PermissionDenied(_) => {
            "syslint: eBPF is not permitted here; tracing with strace instead (slower). \
             To use eBPF: run as root, or sudo setcap cap_bpf,cap_perfmon+ep $(command -v syslint)"
                .to_string()
        }
        _ => format!("syslint: eBPF is not available here ({e}); tracing with strace instead (slower)"),
    }
}
