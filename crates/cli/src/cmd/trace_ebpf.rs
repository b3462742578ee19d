//! `syslint trace` on the eBPF backend: the kernel program records the target's syscalls,
//! this loop turns records into events for the analysis (one thread: when the analysis falls
//! behind, the ring buffer fills and the kernel drops and counts, it never waits).

use super::analyze::{detectors_for, emit, exit_code, finish};
use super::trace::{command_status, status_line, stop_warnings, Interval};
use super::EXIT_FINDINGS;
use crate::cli::TraceArgs;
use anyhow::Result;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syslint_analyze::Analyzer;
use syslint_capture::ebpf::{self, format::strace_line, Chunk, Consumer, EbpfSession, Options, Target};
use syslint_capture::CaptureInfo;
use syslint_event::{Event, EventKind};

/// Start the eBPF session; the error is returned as is so `auto` can fall back.
pub fn start(a: &TraceArgs, target: &Target) -> Result<EbpfSession, ebpf::BpfError> {
    let mut opts = Options { summary_only: a.summary_only, ..Options::default() };
    // tests shrink the kernel buffer to provoke drops
    if let Some(b) = std::env::var("SYSLINT_RING_BYTES").ok().and_then(|v| v.parse().ok()) {
        opts.ring_bytes = b;
    }
    EbpfSession::start(target, &opts)
}

/// Records waiting for the analysis, at most: an eighth of the memory available when the
/// trace starts, between these bounds (or SYSLINT_QUEUE_BYTES, which tests use to provoke a
/// full queue). Beyond it the capture thread stops reading the ring buffer, and the kernel
/// drops and counts: the traced program never waits. nginx under a saturating load on the
/// 2-core development VM queued 180-205 MB in a 7 s trace (about 130 bytes a record while the
/// analysis was starved at nice 19), and one run of the benchmark lost 9,827 records with the
/// former fixed 256 MiB.
const QUEUE_MIN: usize = 64 << 20;
const QUEUE_MAX: usize = 1 << 30;
/// Where /proc/meminfo cannot be read.
const QUEUE_DEFAULT: usize = 256 << 20;

fn queue_limit() -> usize {
    if let Some(b) = std::env::var("SYSLINT_QUEUE_BYTES").ok().and_then(|v| v.parse().ok()) {
        return b;
    }
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| mem_available(&m))
        .map_or(QUEUE_DEFAULT, |avail| (avail / 8).clamp(QUEUE_MIN, QUEUE_MAX))
}

/// MemAvailable of a /proc/meminfo text, in bytes.
fn mem_available(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The most one handover holds (buffers of this size are reused).
const CHUNK_BYTES: usize = 1 << 20;
/// Emptied buffers kept for reuse (a fresh one costs a page fault per page).
const FREE_BUFFERS: usize = 64;

pub fn run(a: TraceArgs, mut session: EbpfSession, sigint: Arc<AtomicBool>, sigterm: Arc<AtomicBool>) -> Result<u8> {
    let r = &a.report;
    // checked now, used in the analysis thread
    detectors_for(&r.select, &r.ignore, r.config.as_deref())?;
    let attach = session.child_pid().is_none();
    let slr_path = a.record.as_deref().filter(|p| p.extension().is_some_and(|e| e == "slr"));
    let writer = match slr_path {
        Some(p) => {
            Some(Consumer::recording(p, &session).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?)
        }
        None => None,
    };
    // -o FILE that is not .slr: strace text of what was captured
    let text = match a.record.as_deref().filter(|p| p.extension().is_none_or(|e| e != "slr")) {
        Some(p) => Some(
            syslint_capture::live::text_writer(p).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?,
        ),
        None => None,
    };
    let events = Arc::new(AtomicU64::new(0));
    let so_far = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let status = if !r.quiet && std::io::stderr().is_terminal() {
        Some(status_line(format!("{} (eBPF)", session.what), events.clone(), so_far.clone(), done.clone()))
    } else {
        None
    };
    let deadline = a.duration.map(|d| Instant::now() + d);
    let known = session.known().clone();
    let (tx, rx) = std::sync::mpsc::channel::<Chunk>();
    // emptied buffers go back to the capture thread
    let (free_tx, free_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(FREE_BUFFERS);
    let queued = Arc::new(AtomicUsize::new(0));
    let queue_max = queue_limit();
    // the capture thread hands records over as they lay in the ring buffer (one copy, the least
    // CPU taken from the traced program) while the queue is shorter than this; beyond, the
    // analysis is falling behind (a busy machine starves it at nice 19) and it encodes them,
    // about 2.5 times smaller (~40 bytes a record without payloads), so the queue holds more
    // before anything is lost
    let compact_from = queue_max / 2;
    // how long the ring buffer was left unread because the queue was full
    let mut full_for = Duration::ZERO;

    let (mut why, mut status_of_child, mut failure) = (0, None, None); // why: 0 ended, 1 --for, 2 SIGINT, 3 SIGTERM
    let analysis = std::thread::scope(|scope| {
        // analysis: records -> events -> analyzer, at the lowest CPU priority
        let worker = {
            let (events, so_far, live, queued) = (events.clone(), so_far.clone(), status.is_some(), queued.clone());
            let a = &a;
            scope.spawn(move || analyse(a, rx, free_tx, queued, known, writer, text, events, so_far, live))
        };
        // capture: poll the ring buffer, hand chunks over
        let fresh = || free_rx.try_recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES));
        let mut raw = fresh();
        loop {
            let q = queued.load(Ordering::Relaxed);
            if q < queue_max {
                if let Err(e) = session.pump(Duration::from_millis(100), &mut raw, CHUNK_BYTES) {
                    failure = Some(e.to_string());
                    break;
                }
            } else {
                // the analysis is far behind: let the ring buffer fill (the kernel counts drops)
                const PAUSE: Duration = Duration::from_millis(20);
                std::thread::sleep(PAUSE);
                full_for += PAUSE;
            }
            if !raw.is_empty() {
                let chunk = if q >= compact_from {
                    let mut enc = fresh();
                    if let Err(e) = session.compact(&raw, &mut enc) {
                        failure.get_or_insert(format!("reading the ring buffer: {e}"));
                    }
                    raw.clear();
                    Chunk::Encoded(enc)
                } else {
                    Chunk::Raw(std::mem::replace(&mut raw, fresh()))
                };
                queued.fetch_add(chunk.len(), Ordering::Relaxed);
                if tx.send(chunk).is_err() {
                    break;
                }
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
        match session.drain() {
            Ok(chunks) => {
                for c in chunks {
                    let _ = tx.send(c);
                }
            }
            Err(e) => {
                failure.get_or_insert(e.to_string());
            }
        }
        drop(tx);
        worker.join()
    });
    done.store(true, Ordering::Relaxed);
    if let Some(h) = status {
        let _ = h.join();
    }
    let Ok(Analysis { analyzer, mut consumer, mut info }) = analysis else {
        anyhow::bail!("the analysis thread failed");
    };
    let lost = session.lost();
    if let Some(e) = consumer.finish(lost) {
        info.warnings.push(format!("the recording is incomplete: {e}"));
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
    if !full_for.is_zero() {
        info.warnings.push(format!(
            "the analysis fell behind: its queue reached its limit ({}, an eighth of the memory available) \
             and the kernel buffer was not read for {:.1} s",
            if queue_max >= 1 << 20 { format!("{} MiB", queue_max >> 20) } else { format!("{queue_max} bytes") },
            full_for.as_secs_f64()
        ));
    }
    stop_warnings(why, attach, a.duration, &mut info.warnings);
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
        return Ok(command_status(status_of_child));
    }
    Ok(code)
}

struct Analysis {
    analyzer: Analyzer,
    consumer: Consumer,
    info: CaptureInfo,
}

/// The analysis thread: chunks of records until the capture side hangs up.
#[allow(clippy::too_many_arguments)]
fn analyse(
    a: &TraceArgs,
    rx: std::sync::mpsc::Receiver<Chunk>,
    free: std::sync::mpsc::SyncSender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
    known: syslint_capture::ebpf::format::Known,
    writer: Option<syslint_capture::ebpf::slr::Writer>,
    mut text: Option<Box<dyn Write + Send>>,
    events: Arc<AtomicU64>,
    so_far: Arc<AtomicUsize>,
    live: bool,
) -> Analysis {
    ebpf::lower_thread_priority();
    let r = &a.report;
    let detectors = if a.summary_only {
        Vec::new()
    } else {
        detectors_for(&r.select, &r.ignore, r.config.as_deref()).unwrap_or_default()
    };
    let mut analyzer = Analyzer::new(detectors);
    let mut consumer = Consumer::new(known, writer);
    consumer.formatter.decorate = text.is_some();
    let mut interval = a.interval.filter(|&n| n > 0).map(|n| Interval::new(Duration::from_secs(n)));
    let offset = ebpf::slr::realtime_offset_ns();
    let mut next_count = Instant::now() + Duration::from_secs(1);
    let mut line = String::new();
    let mut text_error: Option<String> = None;
    let mut damaged: Option<String> = None;
    for chunk in rx {
        queued.fetch_sub(chunk.len(), Ordering::Relaxed);
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
        if let Err(e) = consumer.feed(&chunk, &mut sink) {
            damaged.get_or_insert(e);
        }
        // a full pool: the buffer is freed instead
        let _ = free.try_send(chunk.into_buffer());
    }
    if let Some(mut w) = text.take() {
        if let Err(e) = w.flush() {
            text_error.get_or_insert(e.to_string());
        }
    }
    let mut info = CaptureInfo { sources: vec!["ebpf".to_string()], ..Default::default() };
    let f = &consumer.formatter;
    info.stats.events = f.events;
    info.stats.syscalls = f.syscalls;
    info.stats.clock = syslint_event::Clock::Monotonic;
    info.stats.with_duration = f.syscalls;
    if let Some(e) = text_error {
        info.warnings.push(format!("the recording stopped early: {e}"));
    }
    if let Some(e) = damaged {
        info.warnings.push(format!("internal: {e}"));
    }
    Analysis { analyzer, consumer, info }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_limit_follows_available_memory() {
        let m = "MemTotal:       24641536 kB\nMemFree:         1000 kB\nMemAvailable:   2097152 kB\n";
        assert_eq!(mem_available(m), Some(2 << 30));
        assert_eq!(mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots kB\n"), None);
        // the real machine: within the bounds
        let q = queue_limit();
        assert!((QUEUE_MIN..=QUEUE_MAX).contains(&q) || std::env::var_os("SYSLINT_QUEUE_BYTES").is_some(), "{q}");
    }
}
