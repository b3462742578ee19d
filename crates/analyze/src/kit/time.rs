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

/// A finding over the time of a span ([`Draft::over`](crate::draft::Draft::over)).
impl From<&Span> for Option<Window> {
    fn from(s: &Span) -> Option<Window> {
        s.window()
    }
}

/// Time spent in a set of calls, and whether it can be trusted.
///
/// The one policy: a total is reported only when every counted call carried a duration
/// (`strace -T`, or the eBPF backend), or all but one in twenty: an attach meets calls already
/// under way, whose start it did not see (Apache's 26 worker threads each blocked in a futex
/// wait when the attach began made its futex-contention cost "unknown (no -T)" and left a
/// warning standing that the measured time made info). A trace without `-T` still has
/// durations for the calls strace split into `<unfinished ...>` / `<... resumed>` lines, and a
/// total over just those would be a number that looks measured and is not: then the time is
/// unknown.
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
    /// Every call was timed, or all but one in twenty (and there was at least one).
    pub fn trusted(&self) -> bool {
        self.calls > 0 && self.timed.saturating_mul(20) >= self.calls.saturating_mul(19)
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

/// Call durations by octave (1-2 ns, 2-4 ns, ... up to 2^47 ns) in 192 bytes, for what a call
/// costs by itself where some calls wait for something else (a write to a full pipe, a read of
/// a slow disk or a slow peer): the median of the calls that did not wait, estimated within its
/// octave (linear inside it). What counts as waiting is the caller's: a power of two of
/// nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Typical {
    counts: [u32; 48],
}

impl Default for Typical {
    fn default() -> Self {
        Typical { counts: [0; 48] }
    }
}

impl Typical {
    pub fn add(&mut self, dur_ns: u64) {
        let i = (64 - dur_ns.leading_zeros()) as usize; // 0 for 0 ns, k+1 for [2^k, 2^(k+1))
        let c = &mut self.counts[i.min(47)];
        *c = c.saturating_add(1);
    }
    pub fn merge(&mut self, o: &Typical) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a = a.saturating_add(*b);
        }
    }
    /// The first octave of calls that took `wait_ns` (a power of two) or more.
    fn first_waited(wait_ns: u64) -> usize {
        debug_assert!(wait_ns.is_power_of_two());
        ((64 - wait_ns.leading_zeros()) as usize).min(47)
    }
    /// Calls that took `wait_ns` (a power of two) or more.
    pub fn waited(&self, wait_ns: u64) -> u64 {
        self.counts[Self::first_waited(wait_ns)..].iter().map(|&c| c as u64).sum()
    }
    /// The median duration in nanoseconds of the calls shorter than `wait_ns` (a power of
    /// two), or `None` when every call waited (or there was none).
    pub fn median_ns(&self, wait_ns: u64) -> Option<f64> {
        let fast = &self.counts[..Self::first_waited(wait_ns)];
        let n: u64 = fast.iter().map(|&c| c as u64).sum();
        if n == 0 {
            return None;
        }
        let half = n as f64 / 2.0;
        let mut below = 0u64;
        for (i, &c) in fast.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if (below + c as u64) as f64 >= half {
                if i == 0 {
                    return Some(0.0);
                }
                let lo = (1u64 << (i - 1)) as f64;
                let frac = (half - below as f64) / c as f64;
                return Some(lo + lo * frac);
            }
            below += c as u64;
        }
        None
    }
}

/// Seconds in a cost line: `1.23 s`, `45.6 ms`.
pub fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typical_is_the_median_of_calls_that_did_not_wait() {
        let mut t = Typical::default();
        assert_eq!(t.median_ns(1 << 20), None);
        // 90 calls of 3 us and 10 that waited a second each for a reader
        for _ in 0..90 {
            t.add(3_000);
        }
        for _ in 0..10 {
            t.add(1_000_000_000);
        }
        let m = t.median_ns(1 << 20).expect("median");
        assert!((2048.0..4096.0).contains(&m), "{m}");
        assert_eq!((t.waited(1 << 20), t.waited(1 << 10)), (10, 100));
        let mut u = Typical::default();
        u.add(0);
        assert_eq!(u.median_ns(1 << 20), Some(0.0));
        u.merge(&t);
        assert!((2048.0..4096.0).contains(&u.median_ns(1 << 20).unwrap()));
        // every call waited (tar writing into a pipe that xz drains): no typical cost
        let mut w = Typical::default();
        for _ in 0..50 {
            w.add(4_000_000);
        }
        assert_eq!((w.median_ns(1 << 20), w.waited(1 << 20)), (None, 50));
    }

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
