//! Time: spans of activity, the report's window, and when `-T` durations can be trusted.

use syslint_report::Window;

/// The report's window from a first and a last timestamp (nanoseconds); `None` without both.
pub fn window(first: Option<i64>, last: Option<i64>) -> Option<Window> {
    match (first, last) {
        (Some(a), Some(b)) => {
            Some(Window { start_s: a as f64 / 1e9, end_s: b as f64 / 1e9, duration_s: (b - a).max(0) as f64 / 1e9 })
        }
        _ => None,
    }
}

/// First and last time of something, for a finding's window.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Span {
    pub first: Option<i64>,
    pub last: Option<i64>,
}

impl Span {
    pub fn add(&mut self, ts: Option<i64>) {
        if let Some(t) = ts {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
        }
    }
    /// Both spans together.
    pub fn merge(&mut self, o: &Span) {
        self.add(o.first);
        self.add(o.last);
    }
    pub fn seconds(&self) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) => (b - a).max(0) as f64 / 1e9,
            _ => 0.0,
        }
    }
    pub fn window(&self) -> Option<Window> {
        window(self.first, self.last)
    }
}

/// Time spent in a set of calls, and whether it can be trusted.
///
/// The one policy: a total is reported only when **every** counted call carried a duration
/// (`strace -T`, or the eBPF backend). A trace without `-T` still has durations for the calls
/// strace split into `<unfinished ...>` / `<... resumed>` lines, and a total over just those
/// would be a number that looks measured and is not: then the time is unknown.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    pub calls: u64,
    pub timed: u64,
    pub ns: u64,
}

impl Timing {
    pub fn add(&mut self, dur_ns: Option<u64>) {
        self.calls += 1;
        if let Some(d) = dur_ns {
            self.timed += 1;
            self.ns = self.ns.saturating_add(d);
        }
    }
    pub fn merge(&mut self, o: Timing) {
        self.calls += o.calls;
        self.timed += o.timed;
        self.ns = self.ns.saturating_add(o.ns);
    }
    /// Every call was timed (and there was at least one).
    pub fn trusted(&self) -> bool {
        self.calls > 0 && self.timed == self.calls
    }
    /// Seconds in the calls, when trusted.
    pub fn seconds(&self) -> Option<f64> {
        self.trusted().then(|| self.ns as f64 / 1e9)
    }
    /// Mean seconds per call, when trusted.
    pub fn mean_s(&self) -> Option<f64> {
        self.seconds().map(|s| s / self.calls as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_is_trusted_only_when_every_call_was_timed() {
        let mut t = Timing::default();
        assert_eq!(t.seconds(), None);
        t.add(Some(1_000_000));
        t.add(Some(3_000_000));
        assert_eq!(t.seconds(), Some(0.004));
        assert_eq!(t.mean_s(), Some(0.002));
        t.add(None);
        assert_eq!(t.seconds(), None, "one untimed call makes the total unknown");
    }

    #[test]
    fn window_needs_both_ends() {
        assert_eq!(window(Some(1_000_000_000), None), None);
        let w = window(Some(1_000_000_000), Some(3_500_000_000)).expect("window");
        assert_eq!((w.start_s, w.end_s, w.duration_s), (1.0, 3.5, 2.5));
    }
}
