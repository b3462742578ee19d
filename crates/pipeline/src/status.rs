//! What a run shows on stderr while it goes: a progress bar for large inputs, a status line
//! for live traces (both only on a terminal).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs at least this large get a progress bar.
pub const THRESHOLD: u64 = 50 * 1024 * 1024;

pub struct Progress {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Progress {
    /// Start drawing if `total` is large and stderr is a terminal; otherwise do nothing. The
    /// readers count bytes in `done`; a thread hands the count to an indicatif bar a few times
    /// a second (indicatif draws, rate-limits and clears it).
    pub fn start(done: Arc<AtomicU64>, total: Option<u64>, quiet: bool) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let show = !quiet && total.is_some_and(|t| t >= THRESHOLD) && std::io::stderr().is_terminal();
        let handle = show.then(|| {
            let stop = stop.clone();
            let total = total.unwrap_or(1).max(1);
            std::thread::spawn(move || {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                if let Ok(style) = ProgressStyle::with_template(
                    "[{bar:24}] {percent:>3}% {decimal_bytes}/{decimal_total_bytes}, {decimal_bytes_per_sec}, {eta} left",
                ) {
                    bar.set_style(style.progress_chars("#>-"));
                }
                while !stop.load(Ordering::Relaxed) {
                    bar.set_position(done.load(Ordering::Relaxed).min(total));
                    std::thread::sleep(Duration::from_millis(200));
                }
                bar.finish_and_clear();
            })
        });
        Progress { stop, handle }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The counters a status line shows, shared with the sink that feeds them.
#[derive(Default)]
struct Counters {
    events: AtomicU64,
    findings: AtomicUsize,
    done: AtomicBool,
}

/// Events per second and findings so far on one line of stderr, a few times a second, until
/// dropped.
pub struct StatusLine {
    counters: Arc<Counters>,
    handle: Option<JoinHandle<()>>,
}

impl StatusLine {
    /// A status line for tracing `what`, when stderr is a terminal and `quiet` is off.
    pub fn start(what: String, quiet: bool) -> Option<StatusLine> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let counters = Arc::new(Counters::default());
        let c = counters.clone();
        let handle = std::thread::spawn(move || {
            // one line indicatif redraws and clears: the message is the whole status
            let line = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{msg}") {
                line.set_style(style);
            }
            let t0 = Instant::now();
            let mut last = (t0, 0u64);
            while !c.done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let n = c.events.load(Ordering::Relaxed);
                let now = Instant::now();
                let rate = (n - last.1) as f64 / now.duration_since(last.0).as_secs_f64().max(1e-3);
                last = (now, n);
                let f = c.findings.load(Ordering::Relaxed);
                line.set_message(format!(
                    "syslint: tracing {what}: {n} events, {rate:.0}/s, {f} finding{} so far, {:.0}s  (Ctrl-C to stop)",
                    if f == 1 { "" } else { "s" },
                    t0.elapsed().as_secs_f64()
                ));
            }
            line.finish_and_clear();
        });
        Some(StatusLine { counters, handle: Some(handle) })
    }

    /// The handle a sink counts events and findings with ([`crate::Analysis::with_status`]).
    pub fn feed(&self) -> StatusFeed {
        StatusFeed { counters: self.counters.clone(), next: Instant::now() + Duration::from_secs(1) }
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.counters.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Counts for a [`StatusLine`], from the thread that sees the events.
pub struct StatusFeed {
    counters: Arc<Counters>,
    next: Instant,
}

impl StatusFeed {
    /// One more event; how many before it.
    pub fn count(&mut self) -> u64 {
        self.counters.events.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether a second has passed since the findings were last set.
    pub fn due(&self) -> bool {
        Instant::now() >= self.next
    }

    pub fn set_findings(&mut self, n: usize) {
        self.counters.findings.store(n, Ordering::Relaxed);
        self.next = Instant::now() + Duration::from_secs(1);
    }
}
