//! syslint's pipeline as a library: a [`Source`] (strace logs, a `.slr` recording, live strace,
//! live eBPF) pushes events, in time order, into a [`Sink`] (the analysis, a recorder,
//! interval summaries, the status line) and says why it stopped ([`StopReason`]). The binary
//! only parses arguments, picks a source, wires sinks to it, prints and maps the outcome to an
//! exit code.
//!
//! Models: ripgrep's `Sink` (the searcher pushes, the sink decides what to keep) and tracing's
//! `Layer` (small observers composed around one another: here tuples and `Option`s of sinks).

pub mod agent;
pub mod baseline;
pub mod budget;
pub mod config;
#[cfg(feature = "ebpf")]
pub mod ebpf;
pub mod live;
pub mod log;
pub mod perfetto;
pub mod sink;
pub mod status;
pub mod strace;

pub use config::{detectors, Config, ConfigError, Discovery};
#[cfg(feature = "ebpf")]
pub use ebpf::EbpfSource;
pub use log::{open_inputs, open_stream, LogSource, RecordingSource, Stream};
pub use sink::{Analysis, Interval, StraceText};
pub use strace::StraceSource;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use syslint_analyze::registry::Detector;
pub use syslint_analyze::Captured;
use syslint_capture::CaptureInfo;
use syslint_event::Event;
use syslint_report::Backend;
use syslint_report::Report;

/// Where events go. A sink sees every event of a source in time order, on one thread (for a
/// live eBPF capture, the analysis thread: hence `Send`).
pub trait Sink {
    fn on_event(&mut self, ev: &Event<'_>);
    /// The source has stopped: no more events. Problems the sink had (a recording it could
    /// not write) go to `warnings`, which become the report's.
    fn on_stop(&mut self, _warnings: &mut Vec<String>) {}
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn on_event(&mut self, ev: &Event<'_>) {
        (**self).on_event(ev);
    }
    fn on_stop(&mut self, w: &mut Vec<String>) {
        (**self).on_stop(w);
    }
}

impl<S: Sink> Sink for Option<S> {
    fn on_event(&mut self, ev: &Event<'_>) {
        if let Some(s) = self {
            s.on_event(ev);
        }
    }
    fn on_stop(&mut self, w: &mut Vec<String>) {
        if let Some(s) = self {
            s.on_stop(w);
        }
    }
}

impl<A: Sink, B: Sink> Sink for (A, B) {
    fn on_event(&mut self, ev: &Event<'_>) {
        self.0.on_event(ev);
        self.1.on_event(ev);
    }
    fn on_stop(&mut self, w: &mut Vec<String>) {
        self.0.on_stop(w);
        self.1.on_stop(w);
    }
}

/// Where events come from. `run` pushes every event into the sink until the source ends or
/// `stop` asks it to, and says why it stopped.
pub trait Source {
    /// What is read or traced, for messages and the status line.
    fn name(&self) -> String;
    fn run(self: Box<Self>, sink: &mut (dyn Sink + Send), stop: &StopWhen) -> Result<Outcome, Error>;
}

/// Why a source stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// It ran out: the input ended, the traced command exited, every attached process exited.
    Ended,
    /// `--for` elapsed (the duration asked for); the traced processes run on.
    Elapsed(Duration),
    /// The capture reached its bound of records (this many; an agent's window on a busy
    /// host); the traced processes run on.
    Bounded(u64),
    /// SIGINT while attached; the traced processes run on.
    Interrupted,
    /// SIGTERM; the traced processes run on.
    Terminated,
    /// Reading the capture failed part-way (the reason is also among the report's warnings).
    Failed(String),
}

impl StopReason {
    /// Whether syslint stopped the capture (rather than the traced program, or the input,
    /// ending it): then the traced processes run on, and a command's exit status is unknown.
    pub fn requested(&self) -> bool {
        matches!(
            self,
            StopReason::Elapsed(_) | StopReason::Bounded(_) | StopReason::Interrupted | StopReason::Terminated
        )
    }

    /// What the report says about the stop: notes, not warnings (a stop asked for, or every
    /// process gone, is how a trace normally ends).
    pub fn notes(&self, attached: bool, w: &mut Vec<String>) {
        match self {
            StopReason::Elapsed(d) => w.push(format!("stopped after {d:?} (--for); the traced processes run on")),
            StopReason::Bounded(n) => {
                w.push(format!("stopped after {n} records (the window's bound); the traced processes run on"));
            }
            StopReason::Interrupted => w.push("stopped by Ctrl-C; the traced processes run on".into()),
            StopReason::Terminated => w.push("stopped by SIGTERM; the traced processes run on".into()),
            StopReason::Ended | StopReason::Failed(_) => {}
        }
        // as before the stop reason was explicit: a failed capture of attached processes also
        // says this (the failure itself is a warning of its own)
        if attached && !self.requested() {
            w.push("every traced process exited".into());
        }
    }
}

/// The note on processes given to attach to that had exited by then (skipped), if any.
pub(crate) fn gone_note(gone: &[u32]) -> Option<String> {
    let list: Vec<String> = gone.iter().map(u32::to_string).collect();
    (!list.is_empty()).then(|| {
        format!(
            "not traced: pid{} {} exited before the attach",
            if list.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    })
}

/// When a live source should stop on its own: the signal flags (set by the binary's signal
/// handlers) and `--for`. Sources that read files ignore it.
#[derive(Clone, Debug, Default)]
pub struct StopWhen {
    /// SIGINT arrived. It stops only an attached trace: with a command, Ctrl-C reached the
    /// command itself, which decides.
    pub interrupt: Arc<AtomicBool>,
    /// SIGTERM arrived.
    pub terminate: Arc<AtomicBool>,
    /// `--for`.
    pub after: Option<Duration>,
}

impl StopWhen {
    /// The `--for` deadline of a capture starting now.
    pub fn deadline(&self) -> Option<Instant> {
        self.after.map(|d| Instant::now() + d)
    }

    /// Whether to stop now, and why.
    pub fn check(&self, deadline: Option<Instant>, attached: bool) -> Option<StopReason> {
        self.check_at(Instant::now(), deadline, attached)
    }

    fn check_at(&self, now: Instant, deadline: Option<Instant>, attached: bool) -> Option<StopReason> {
        if self.terminate.load(Ordering::Relaxed) {
            Some(StopReason::Terminated)
        } else if attached && self.interrupt.load(Ordering::Relaxed) {
            Some(StopReason::Interrupted)
        } else if deadline.is_some_and(|d| now >= d) {
            Some(StopReason::Elapsed(self.after.unwrap_or_default()))
        } else {
            None
        }
    }
}

/// What a source did.
#[derive(Debug)]
pub struct Outcome {
    pub stop: StopReason,
    /// It attached to running processes (rather than running a command or reading files).
    pub attached: bool,
    /// The traced command's exit status, when it ran one and it is known.
    pub exit_status: Option<ExitStatus>,
    pub capture: Captured,
    /// One message per input in which no strace line was recognised (each is also among the
    /// capture's warnings).
    pub not_strace: Vec<String>,
    /// Where a live eBPF capture's time went (zero for the other sources).
    pub phases: Phases,
}

/// Where a live eBPF capture's time went, from its first read of the ring buffer to the
/// programs' detach (the agent reports them: what a window costs beyond its length).
#[derive(Clone, Copy, Debug, Default)]
pub struct Phases {
    /// Recording new calls, until the deadline (or the end).
    pub traced: Duration,
    /// After the deadline, waiting for the calls under way to return (`settle`), hooks still on.
    pub settling: Duration,
    /// Detaching the programs, then emptying the ring buffer and waiting for the analysis to
    /// catch up.
    pub catching_up: Duration,
    /// Freeing the programs and their maps.
    pub detaching: Duration,
}

/// The typed seam from a source to the analysis: what the reader knew, in the report's form,
/// and what it carries for the report. Raw rows from the readers travel as it gives them;
/// [`Analyzer::finish`](syslint_analyze::Analyzer::finish) builds the report from it.
pub(crate) fn captured(backend: Backend, mut info: CaptureInfo) -> Captured {
    let c_table = std::mem::take(&mut info.stats.strace_c_table);
    let counts = info.counts.take();
    let stacks = info.stats.stacks.take();
    Captured {
        backend: Some(backend),
        counts,
        c_table,
        stacks,
        capture: info.into_capture(backend),
        ..Default::default()
    }
}

/// Why a pipeline could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Input(#[from] syslint_capture::input::InputError),
    #[error("cannot read {}", path.display())]
    ReadRecording {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Record {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("a .slr recording needs the eBPF backend; with strace, record text (-o run.strace.gz)")]
    SlrNeedsEbpf,
    #[error("--summary-only counts in the kernel: it needs the eBPF backend (--backend ebpf or auto)")]
    SummaryNeedsEbpf,
    /// `--backend ebpf` or `--summary-only` asked of a build without the eBPF backend.
    #[error("this syslint was built without the eBPF backend (the `ebpf` feature: an analyze-only build); trace with --backend strace, or install a build with it")]
    NoEbpf,
    #[error(transparent)]
    Live(#[from] syslint_capture::live::LiveError),
    /// strace started but its trace stream could not be opened (it could not attach, ...).
    #[error("{0}")]
    StraceStream(syslint_capture::live::LiveError),
    /// The eBPF backend did not start ([`syslint_capture::ebpf::can_fall_back`] says whether
    /// strace may do instead).
    #[error("eBPF backend: {0}")]
    Bpf(syslint_capture::ebpf::BpfError),
    #[error("the analysis thread failed")]
    AnalysisThread,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Read strace logs (files, a directory of `-ff` files, `-` for stdin) or one `.slr`
/// recording, analyse them with `detectors`, and return the report. `progress`: a progress
/// bar on a terminal for large inputs.
pub fn analyze_inputs(inputs: &[PathBuf], progress: bool, detectors: Vec<Box<dyn Detector>>) -> Result<Report, Error> {
    Ok(analyze_logs(inputs, progress, detectors)?.report)
}

/// A report, and the inputs that were not strace logs.
#[derive(Debug)]
pub struct Analyzed {
    pub report: Report,
    /// One message per input in which no strace line was recognised (empty, binary, other
    /// text), naming it; each is also among the report's warnings. The other inputs were
    /// analysed.
    pub not_strace: Vec<String>,
}

/// [`analyze_inputs`], saying which inputs were not strace logs at all.
pub fn analyze_logs(inputs: &[PathBuf], progress: bool, detectors: Vec<Box<dyn Detector>>) -> Result<Analyzed, Error> {
    let source = open_inputs(inputs, progress)?;
    let mut analysis = Analysis::new(detectors);
    let outcome = source.run(&mut analysis, &StopWhen::default())?;
    Ok(Analyzed { report: analysis.finish(outcome.capture), not_strace: outcome.not_strace })
}

/// A `.slr` path asks for eBPF's compact recording; any other recording is strace text.
fn is_slr_name(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "slr")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_in_their_order() {
        let s = StopWhen { after: Some(Duration::from_secs(2)), ..Default::default() };
        let now = Instant::now();
        let deadline = Some(now + Duration::from_secs(2));
        assert_eq!(s.check_at(now, deadline, true), None);
        assert_eq!(
            s.check_at(now + Duration::from_secs(2), deadline, true),
            Some(StopReason::Elapsed(Duration::from_secs(2)))
        );
        // Ctrl-C stops an attached trace; with a command it is the command's
        s.interrupt.store(true, Ordering::Relaxed);
        assert_eq!(s.check_at(now, deadline, true), Some(StopReason::Interrupted));
        assert_eq!(s.check_at(now, deadline, false), None);
        // SIGTERM first, always
        s.terminate.store(true, Ordering::Relaxed);
        assert_eq!(s.check_at(now, deadline, false), Some(StopReason::Terminated));
        assert_eq!(s.check_at(now + Duration::from_secs(9), deadline, true), Some(StopReason::Terminated));
        assert_eq!(StopWhen::default().check_at(now, None, true), None);
    }

    #[test]
    fn stop_notes() {
        let w = |r: StopReason, attached| {
            let mut w = Vec::new();
            r.notes(attached, &mut w);
            w
        };
        assert_eq!(
            w(StopReason::Elapsed(Duration::from_millis(1500)), true),
            ["stopped after 1.5s (--for); the traced processes run on"]
        );
        assert_eq!(
            w(StopReason::Bounded(200_000), true),
            ["stopped after 200000 records (the window's bound); the traced processes run on"]
        );
        assert!(StopReason::Bounded(1).requested());
        assert_eq!(w(StopReason::Interrupted, true), ["stopped by Ctrl-C; the traced processes run on"]);
        assert_eq!(w(StopReason::Terminated, false), ["stopped by SIGTERM; the traced processes run on"]);
        assert_eq!(w(StopReason::Ended, true), ["every traced process exited"]);
        assert!(w(StopReason::Ended, false).is_empty());
        assert!(w(StopReason::Failed("x".into()), false).is_empty());
        assert!(StopReason::Terminated.requested() && !StopReason::Ended.requested());
    }
}
