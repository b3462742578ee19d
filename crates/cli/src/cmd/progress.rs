//! A progress bar on stderr for large inputs, when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Inputs at least this large get a progress bar.
pub const THRESHOLD: u64 = 50 * 1024 * 1024;

pub struct Progress {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Progress {
    /// Start drawing if `total` is large and stderr is a terminal; otherwise do nothing.
    pub fn start(done: Arc<AtomicU64>, total: Option<u64>, quiet: bool) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let show = !quiet && total.is_some_and(|t| t >= THRESHOLD) && std::io::stderr().is_terminal();
        let handle = show.then(|| {
            let stop = stop.clone();
            let total = total.unwrap_or(1).max(1);
            std::thread::spawn(move || {
                let t0 = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let d = done.load(Ordering::Relaxed).min(total);
                    let frac = d as f64 / total as f64;
                    let cells = 30;
                    let full = (frac * cells as f64) as usize;
                    let rate = d as f64 / t0.elapsed().as_secs_f64().max(1e-3) / 1e6;
                    let bar: String = "#".repeat(full) + &"-".repeat(cells - full);
                    let mut e = std::io::stderr().lock();
                    let _ = write!(
                        e,
                        "\r[{bar}] {:3.0}% {} / {} MB, {rate:.0} MB/s ",
                        frac * 100.0,
                        d / 1_000_000,
                        total / 1_000_000
                    );
                    let _ = e.flush();
                }
                let mut e = std::io::stderr().lock();
                let _ = write!(e, "\r{}\r", " ".repeat(72));
                let _ = e.flush();
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
