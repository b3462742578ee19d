//! The sinks: the analysis, interval summaries, strace text.

use crate::status::StatusFeed;
use crate::{Captured, Sink};
use std::io::Write;
use std::time::{Duration, Instant};
use syslint_analyze::registry::Detector;
use syslint_analyze::summary::SyscallTable;
use syslint_analyze::Analyzer;
use syslint_capture::ebpf::format::strace_line;

use syslint_event::{Class, Event, EventKind};
use syslint_report::{CountRow, Report};

/// The analysis: the process/fd model, statistics and detectors, and in the end the report.
pub struct Analysis {
    analyzer: Analyzer,
    status: Option<StatusFeed>,
}

impl Analysis {
    pub fn new(detectors: Vec<Box<dyn Detector>>) -> Analysis {
        Analysis { analyzer: Analyzer::new(detectors), status: None }
    }

    /// Feed a status line: events counted, findings so far about once a second.
    pub fn with_status(mut self, feed: StatusFeed) -> Analysis {
        self.status = Some(feed);
        self
    }

    /// The processes and threads as the analysis knows them so far (for sinks that name them
    /// while the events go by: the Perfetto export).
    pub fn model(&self) -> &syslint_analyze::model::Model {
        self.analyzer.model()
    }

    /// The report of a finished capture (built by the analyzer, in one place).
    pub fn finish(self, c: Captured) -> Report {
        self.analyzer.finish(c)
    }
}

impl Sink for Analysis {
    fn on_event(&mut self, ev: &Event<'_>) {
        match self.status.as_mut() {
            None => self.analyzer.on_event(ev),
            Some(s) => {
                let n = s.count();
                self.analyzer.on_event(ev);
                // findings so far: about once a second (asking copies of the detectors costs)
                if n % 4096 == 0 && s.due() {
                    s.set_findings(self.analyzer.findings_so_far());
                }
            }
        }
    }
}

/// The `--interval` line from the kernel's counts (`--summary-only`): what `now` counted
/// beyond `last`, per syscall `(name, calls, errors, ns)`.
pub fn counts_line(secs: f64, now: &[CountRow], last: &[CountRow]) -> String {
    let mut rows: Vec<(&str, u64, u64)> = now
        .iter()
        .map(|r| {
            let (pc, pe) = last.iter().find(|l| l.name == r.name).map_or((0, 0), |l| (l.calls, l.errors));
            (r.name.as_str(), r.calls.saturating_sub(pc), r.errors.saturating_sub(pe))
        })
        .filter(|r| r.1 > 0)
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let n: u64 = rows.iter().map(|r| r.1).sum();
    interval_line(secs, n, &rows)
}

/// One `--interval` line: the calls of the interval, and its busiest syscalls (`rows`, most
/// frequent first: name, calls, errors).
fn interval_line(secs: f64, n: u64, rows: &[(&str, u64, u64)]) -> String {
    let top: Vec<String> = rows
        .iter()
        .take(8)
        .map(|(name, c, e)| if *e > 0 { format!("{name} {c} ({e} err)") } else { format!("{name} {c}") })
        .collect();
    format!("\rsyslint: last {}: {n} syscalls ({:.0}/s): {}", span(secs), n as f64 / secs, top.join(", "))
}

/// `300ms`, `1s`, `2.5s`, `60s`.
fn span(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.0}ms", secs * 1e3)
    } else if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}

/// `--interval`: a summary of the last interval's syscalls on stderr, every interval.
pub struct Interval {
    every: Duration,
    next: Instant,
    table: SyscallTable,
    n: u64,
}

impl Interval {
    pub fn new(every: Duration) -> Interval {
        Interval { every, next: Instant::now() + every, table: SyscallTable::default(), n: 0 }
    }

    fn add(&mut self, sc: &syslint_event::Syscall) {
        self.table.add(sc);
        self.n += 1;
        if Instant::now() >= self.next {
            eprintln!("{}", self.line());
            self.table = SyscallTable::default();
            self.n = 0;
            self.next += self.every;
        }
    }

    /// The summary of the interval so far (the most frequent syscalls first).
    fn line(&self) -> String {
        let secs = self.every.as_secs_f64();
        let mut rows = self.table.stats(secs);
        rows.sort_by_key(|r| std::cmp::Reverse(r.calls));
        let rows: Vec<(&str, u64, u64)> = rows.iter().map(|s| (s.name.as_str(), s.calls, s.errors)).collect();
        interval_line(secs, self.n, &rows)
    }
}

impl Sink for Interval {
    fn on_event(&mut self, ev: &Event<'_>) {
        if let EventKind::Syscall(sc) = &ev.kind {
            self.add(sc);
        }
    }
}

/// Events as strace text (`-f -tt -T` lines), for a recording or `syslint export`. Writing
/// stops at the first error, which [`StraceText::finish`] returns (or, as a sink, reports as
/// a warning: the analysis goes on without the recording).
pub struct StraceText<W: Write> {
    out: Option<W>,
    /// Monotonic to wall-clock time, in ns (eBPF timestamps are monotonic).
    offset: i64,
    line: String,
    raw: String,
    /// Keep the payload bytes the kernel program copied (up to 64 per buffer) in read, write
    /// and socket calls; by default their strings show only their length, as in reports.
    pub payloads: bool,
    error: Option<std::io::Error>,
}

impl<W: Write> StraceText<W> {
    /// Text with payload strings redacted (see [`StraceText::payloads`]).
    pub fn new(out: W, realtime_offset_ns: i64) -> StraceText<W> {
        StraceText {
            out: Some(out),
            offset: realtime_offset_ns,
            line: String::new(),
            raw: String::new(),
            payloads: false,
            error: None,
        }
    }

    /// Flush; the first error writing, if any.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            self.out = None;
            return Err(e);
        }
        match self.out.as_mut() {
            Some(o) => o.flush(),
            None => Ok(()),
        }
    }
}

impl<W: Write> Sink for StraceText<W> {
    fn on_event(&mut self, ev: &Event<'_>) {
        let Some(out) = self.out.as_mut() else { return };
        self.line.clear();
        let payload = match &ev.kind {
            EventKind::Syscall(sc) => sc.sys.is(Class::READ) || sc.sys.is(Class::WRITE) || sc.sys.is(Class::NET),
            _ => false,
        };
        if payload && !self.payloads {
            // what a program read or wrote (a token, a password) stays out of shared text;
            // addresses (sun_path, inet_addr) stay in
            self.raw.clear();
            strace_line(&mut self.raw, ev, self.offset);
            syslint_event::redact::redact_into(&self.raw, &mut self.line);
        } else {
            strace_line(&mut self.line, ev, self.offset);
        }
        if let Err(e) = out.write_all(self.line.as_bytes()) {
            self.error = Some(e);
            self.out = None;
        }
    }

    fn on_stop(&mut self, warnings: &mut Vec<String>) {
        if let Err(e) = self.finish() {
            warnings.push(format!("the recording stopped early: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_line_lists_the_most_frequent_first() {
        let mut iv = Interval::new(Duration::from_secs(3600));
        let mut p = syslint_capture::Parser::new("t");
        let text = "1 10:00:00.000000 read(3, \"\", 1) = 0 <0.000001>\n\
                    1 10:00:00.000001 close(3) = -1 EBADF (Bad file descriptor) <0.000001>\n\
                    1 10:00:00.000002 close(4) = 0 <0.000001>\n";
        for (i, l) in text.lines().enumerate() {
            p.parse_line(l, i as u64 + 1, None, &mut |ev: &Event| iv.on_event(ev));
        }
        assert_eq!(iv.n, 3);
        assert_eq!(iv.line(), "\rsyslint: last 3600s: 3 syscalls (0/s): close 2 (1 err), read 1");
    }

    #[test]
    fn strace_text_keeps_the_first_write_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut t = StraceText::new(Full, 0);
        let mut p = syslint_capture::Parser::new("t");
        p.parse_line("1 10:00:00.000000 close(3) = 0 <0.000001>", 1, None, &mut |ev: &Event| t.on_event(ev));
        let mut w = Vec::new();
        t.on_stop(&mut w);
        assert_eq!(w, ["the recording stopped early: disk full"]);
        assert!(t.finish().is_ok(), "reported once");
    }
}
