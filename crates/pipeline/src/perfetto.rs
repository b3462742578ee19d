//! `syslint export --format perfetto`: a trace as the Chrome Trace Event Format's JSON (what
//! ui.perfetto.dev and chrome://tracing open), written while it is read, with the analysis of
//! the same pass and its findings as annotations at the end.
//!
//! - every syscall is a complete event (`"ph": "X"`) on its thread's track (`pid` = the thread
//!   group, `tid` = the thread), named after the call, with the call rendered as report
//!   evidence is (payload strings as their length, arguments cut at 200 characters) and its
//!   return value in `args`;
//! - signals are instant events on their thread;
//! - process and thread names (the program, as the analysis knows it) are metadata events
//!   (`"ph": "M"`), written when a thread is first seen and when its program changes (execve);
//! - each finding is a complete event over its window on a track of its own in a synthetic
//!   process named "syslint findings" (pid [`FINDINGS_PID`], above any real pid), with its
//!   severity, detector, message, cost and fix in `args`, and a global instant marker at the
//!   window's start.
//!
//! Times are microseconds (`ts`, `dur`) from the first timed event, with nanosecond decimals.
//! Events are written as they arrive: memory holds one call per thread (its duration is cut
//! at the thread's next call, so slices on a track nest: strace's rounding can make a call end
//! a microsecond after the next began) and the names written, never the trace.

use crate::{Analysis, Captured, Sink};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use syslint_analyze::kit::render_call_into;
use syslint_analyze::registry::Detector;
use syslint_event::{Class, Event, EventKind, Ret, Tid};
use syslint_report::{Finding, Report};

/// The pid of the findings' process: `PID_MAX_LIMIT` (2^22), which no Linux process can have.
/// Finding `i` is on thread `FINDINGS_PID + 1 + i`.
pub const FINDINGS_PID: u32 = 1 << 22;

/// One call held until its thread's next event (or the end).
struct Held {
    pid: u32,
    ts_ns: i64,
    dur_ns: Option<u64>,
    name: String,
    call: String,
    ret: String,
}

/// The JSON document being written: its separators, its clock, the first write error.
struct Writer<W: Write> {
    out: Option<W>,
    error: Option<std::io::Error>,
    /// Events written (for the separators).
    written: u64,
    /// The first timed event's time: `ts` 0.
    t0: Option<i64>,
    buf: String,
}

impl<W: Write> Writer<W> {
    /// Write `buf` as the next element of `traceEvents` (the document's head first).
    fn emit(&mut self) {
        let Some(out) = self.out.as_mut() else { return };
        let head: &[u8] = if self.written == 0 { b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" } else { b",\n" };
        let r = out.write_all(head).and_then(|()| out.write_all(self.buf.as_bytes()));
        self.written += 1;
        if let Err(e) = r {
            self.error = Some(e);
            self.out = None;
        }
    }

    /// `ns` after the first event, as microseconds with three decimals (exact, no float).
    fn us(&self, ns: i64) -> String {
        let rel = ns.saturating_sub(self.t0.unwrap_or(ns));
        let sign = if rel < 0 { "-" } else { "" };
        let a = rel.unsigned_abs();
        format!("{sign}{}.{:03}", a / 1000, a % 1000)
    }

    fn meta(&mut self, what: &str, pid: u32, tid: u32, args: &str) {
        self.buf.clear();
        let _ = write!(self.buf, "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"args\":{args}}}");
        self.emit();
    }

    fn name(&mut self, what: &str, pid: u32, tid: u32, name: &str) {
        self.meta(what, pid, tid, &format!("{{\"name\":{}}}", json(name)));
    }
}

/// The Perfetto writer and the analysis, fed from one read. Writing stops at the first error,
/// which [`Perfetto::finish`] returns.
pub struct Perfetto<W: Write> {
    w: Writer<W>,
    analysis: Analysis,
    /// Syscalls written as slices.
    slices: u64,
    /// Syscalls without a timestamp (skipped).
    untimed: u64,
    /// A timestamp with a fraction of a second was seen (`-t` has none).
    subsecond: bool,
    held: HashMap<Tid, Held>,
    /// The (process, program) each thread was last named with.
    threads: HashMap<Tid, (u32, Option<String>)>,
    /// The program each process was last named with.
    procs: HashMap<u32, String>,
}

/// What the export wrote, and the report of the analysis that ran beside it.
pub struct Exported {
    pub report: Report,
    /// Syscalls written as slices.
    pub slices: u64,
    /// Syscalls skipped for want of a timestamp.
    pub untimed: u64,
    /// The trace has timestamps only to the second (strace -t).
    pub whole_seconds: bool,
}

/// Why there is no trace.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("no timestamps: a Perfetto trace needs strace's -tt or -ttt timestamps (record with strace -f -tt -T -yy -o FILE, or syslint trace -o FILE.slr){}", untimed_note(*.untimed))]
    NoTimestamps { untimed: u64 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

fn untimed_note(n: u64) -> String {
    if n > 0 {
        format!("; its {n} calls have none")
    } else {
        String::new()
    }
}

impl<W: Write> Perfetto<W> {
    pub fn new(out: W, analysis: Analysis) -> Perfetto<W> {
        Perfetto {
            w: Writer { out: Some(out), error: None, written: 0, t0: None, buf: String::new() },
            analysis,
            slices: 0,
            untimed: 0,
            subsecond: false,
            held: HashMap::new(),
            threads: HashMap::new(),
            procs: HashMap::new(),
        }
    }

    /// Write the call held for `tid`, its duration cut where the thread's next event began.
    fn flush_held(&mut self, tid: Tid, next_ns: Option<i64>) {
        let Some(h) = self.held.remove(&tid) else { return };
        let mut dur = h.dur_ns.unwrap_or(0);
        // the next call of a thread begins after this one ended: cut what rounding added
        if let Some(n) = next_ns.filter(|&n| n >= h.ts_ns) {
            dur = dur.min((n - h.ts_ns) as u64);
        }
        let w = &mut self.w;
        let ts = w.us(h.ts_ns);
        w.buf.clear();
        let _ = write!(
            w.buf,
            "{{\"ph\":\"X\",\"cat\":\"syscall\",\"pid\":{},\"tid\":{},\"ts\":{ts},\"dur\":{}.{:03},\"name\":{},\"args\":{{\"call\":{},\"ret\":{}",
            h.pid,
            tid.0,
            dur / 1000,
            dur % 1000,
            json(&h.name),
            json(&h.call),
            json(&h.ret),
        );
        if h.dur_ns.is_none() {
            w.buf.push_str(",\"dur_known\":false");
        }
        w.buf.push_str("}}");
        w.emit();
        self.slices += 1;
    }

    /// Name the thread and its process when first seen or when its program changed.
    fn name(&mut self, tid: Tid, pid: u32) {
        let comm = self.analysis.model().comm(tid).map(str::to_string);
        if self.threads.get(&tid).is_some_and(|(p, c)| *p == pid && *c == comm) {
            return;
        }
        self.threads.insert(tid, (pid, comm.clone()));
        let Some(comm) = comm else { return };
        if (tid.0 == pid || !self.procs.contains_key(&pid)) && self.procs.get(&pid) != Some(&comm) {
            self.procs.insert(pid, comm.clone());
            self.w.name("process_name", pid, pid, &comm);
        }
        self.w.name("thread_name", pid, tid.0, &comm);
    }

    /// End the trace: the calls held, the findings of the analysis (given what the source
    /// knew, `c`), the document's tail. The report comes back with what was written.
    pub fn finish(mut self, c: Captured) -> Result<Exported, ExportError> {
        // in thread order: the same input gives the same file
        let mut tids: Vec<Tid> = self.held.keys().copied().collect();
        tids.sort_unstable_by_key(|t| t.0);
        for t in tids {
            self.flush_held(t, None);
        }
        let untimed = self.untimed;
        let Some(t0) = self.w.t0 else {
            return Err(ExportError::NoTimestamps { untimed });
        };
        let Perfetto { mut w, analysis, slices, subsecond, .. } = self;
        let report = analysis.finish(c);
        if !report.findings.is_empty() {
            w.name("process_name", FINDINGS_PID, FINDINGS_PID, "syslint findings");
            w.meta("process_sort_index", FINDINGS_PID, FINDINGS_PID, "{\"sort_index\":-1}");
        }
        for (i, f) in report.findings.iter().enumerate() {
            finding(&mut w, FINDINGS_PID + 1 + i as u32, f, t0);
        }
        if let Some(out) = w.out.as_mut() {
            let tail: &[u8] = if w.written == 0 { b"{\"traceEvents\":[]}\n" } else { b"\n]}\n" };
            if let Err(e) = out.write_all(tail).and_then(|()| out.flush()) {
                w.error.get_or_insert(e);
            }
        }
        if let Some(e) = w.error.take() {
            return Err(e.into());
        }
        Ok(Exported { slices, untimed, whole_seconds: !subsecond, report })
    }
}

/// A finding on track `tid` of the findings' process: over its window, with a global marker
/// where the window begins (at the trace's start when it has none).
fn finding<W: Write>(w: &mut Writer<W>, tid: u32, f: &Finding, t0: i64) {
    let label = format!("{} {} ({})", f.code, f.detector, f.severity.as_str());
    w.name("thread_name", FINDINGS_PID, tid, &label);
    let ns = |s: f64| (s * 1e9).round() as i64;
    let (start, end) = f.window.as_ref().map_or((t0, t0), |win| (ns(win.start_s), ns(win.end_s).max(ns(win.start_s))));
    let mut args = serde_json::json!({
        "severity": f.severity.as_str(),
        "code": f.code,
        "detector": f.detector,
        "message": f.message,
        "subject": f.subject,
        "fix": f.fix,
        "evidence": f.evidence,
    });
    if let Some(c) = &f.cost {
        args["cost"] = c.clone().into();
    }
    if let Some(c) = &f.confidence {
        args["confidence"] = serde_json::to_value(c).unwrap_or_default();
    }
    args["window_s"] = match &f.window {
        Some(win) => serde_json::json!([win.start_s, win.end_s]),
        None => "none: the finding is about the whole trace".into(),
    };
    let ts = w.us(start);
    let dur = (end - start).max(0) as u64;
    w.buf.clear();
    let _ = write!(
        w.buf,
        "{{\"ph\":\"X\",\"cat\":\"syslint.finding\",\"pid\":{FINDINGS_PID},\"tid\":{tid},\"ts\":{ts},\"dur\":{}.{:03},\"name\":{},\"args\":{args}}}",
        dur / 1000,
        dur % 1000,
        json(&format!("{}: {}", f.detector, f.message)),
    );
    w.emit();
    w.buf.clear();
    let _ = write!(
        w.buf,
        "{{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"syslint.finding\",\"pid\":{FINDINGS_PID},\"tid\":{tid},\"ts\":{ts},\"name\":{}}}",
        json(&format!("{}: {}", f.severity.as_str(), f.detector))
    );
    w.emit();
}

impl<W: Write> Sink for Perfetto<W> {
    fn on_event(&mut self, ev: &Event<'_>) {
        self.analysis.on_event(ev);
        let Some(ts) = ev.ts_ns else {
            if matches!(ev.kind, EventKind::Syscall(_)) {
                self.untimed += 1;
            }
            return;
        };
        match &ev.kind {
            EventKind::Syscall(sc) => {
                if self.w.t0.is_none() {
                    self.w.t0 = Some(ts);
                }
                self.subsecond |= ts % 1_000_000_000 != 0;
                let pid = self.analysis.model().tgid(ev.tid).0;
                self.flush_held(ev.tid, Some(ts));
                if !self.threads.contains_key(&ev.tid) || sc.sys.is(Class::EXEC) {
                    self.name(ev.tid, pid);
                }
                let mut call = String::new();
                render_call_into(sc, &mut call);
                let ret = match &sc.ret {
                    Ret::Ok { val, .. } if *val > 0xffff_ffff => format!("{val:#x}"),
                    Ret::Ok { val, .. } => val.to_string(),
                    Ret::Err { val, errno } => format!("{val} {errno}"),
                    Ret::Unknown => "?".into(),
                    Ret::Unfinished => "unfinished".into(),
                };
                let held = Held { pid, ts_ns: ts, dur_ns: sc.dur_ns, name: sc.name.to_string(), call, ret };
                self.held.insert(ev.tid, held);
            }
            EventKind::Signal { name, .. } if self.w.t0.is_some() => {
                let pid = self.analysis.model().tgid(ev.tid).0;
                self.flush_held(ev.tid, Some(ts));
                let w = &mut self.w;
                let t = w.us(ts);
                w.buf.clear();
                let _ = write!(
                    w.buf,
                    "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"signal\",\"pid\":{pid},\"tid\":{},\"ts\":{t},\"name\":{}}}",
                    ev.tid.0,
                    json(name)
                );
                w.emit();
            }
            EventKind::Exited { .. } | EventKind::Killed { .. } => self.flush_held(ev.tid, Some(ts)),
            _ => {}
        }
    }

    fn on_stop(&mut self, warnings: &mut Vec<String>) {
        if let Some(e) = &self.w.error {
            warnings.push(format!("the Perfetto trace stopped early: {e}"));
        }
    }
}

/// A JSON string literal (serde_json's escaping).
fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Read `inputs` (anything `syslint analyze` reads) once into a Perfetto trace written to
/// `out` and the analysis by `detectors`, whose findings end the trace. The outer error: the
/// inputs could not be opened; the inner: no trace (no timestamps, a write failed). Also the
/// inputs that were not strace logs, as [`crate::analyze_logs`] says them.
pub fn export<W: Write + Send>(
    inputs: &[PathBuf],
    progress: bool,
    detectors: Vec<Box<dyn Detector>>,
    out: W,
) -> Result<(Result<Exported, ExportError>, Vec<String>), crate::Error> {
    let source = crate::open_inputs(inputs, progress)?;
    let mut sink = Perfetto::new(out, Analysis::new(detectors));
    let outcome = source.run(&mut sink, &crate::StopWhen::default())?;
    Ok((sink.finish(outcome.capture), outcome.not_strace))
}
