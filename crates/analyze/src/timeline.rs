//! Per-thread activity over time, binned: for each thread and each slice of the traced window,
//! how many syscalls started, how many failed, and how much of the slice the thread spent
//! inside syscalls (blocked or waiting). That is enough to draw a lane per thread in which a
//! spinning loop (many calls, little time inside them), a stall (one call covering seconds)
//! and a herd (many lanes waking at the same instants, with errors) are visible at a glance.
//!
//! Streaming and bounded: the window is not known until the end, so bins start narrow and
//! double in width (pairs merged) whenever an event falls past the last one; at most
//! [`MAX_BINS`] bins and [`MAX_LANES`] threads are kept one by one, later threads share one
//! "other threads" lane.

use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Event, EventKind, Ret, Tgid, Tid};
use syslint_report::{Lane, Timeline as WireTimeline};

/// Bins kept at most (the width doubles to stay under it).
pub const MAX_BINS: usize = 240;
/// Threads followed one by one; later ones are summed into an "other threads" lane.
pub const MAX_LANES: usize = 1024;
/// Lanes put in the report (busiest first; the rest summed).
pub const REPORT_LANES: usize = 48;
/// First bin width: 100 microseconds.
const FIRST_BIN_NS: u64 = 100_000;

#[derive(Clone, Default)]
struct LaneAgg {
    tid: Tid,
    calls: Vec<u32>,
    errors: Vec<u32>,
    /// Nanoseconds inside syscalls per bin.
    busy: Vec<u64>,
    total_calls: u64,
    total_busy: u64,
    /// The thread's span: start of its first syscall, end of its last (ns from t0).
    first: u64,
    last_end: u64,
}

impl LaneAgg {
    fn grow(&mut self, n: usize) {
        if self.calls.len() < n {
            self.calls.resize(n, 0);
            self.errors.resize(n, 0);
            self.busy.resize(n, 0);
        }
    }

    /// Merge pairs of bins: bin i of the new layout is bins 2i and 2i+1 of the old.
    fn halve(&mut self) {
        fn pairs<T: Copy + std::ops::Add<Output = T> + Default>(v: &mut Vec<T>) {
            let n = v.len().div_ceil(2);
            for i in 0..n {
                let a = v[2 * i];
                let b = v.get(2 * i + 1).copied().unwrap_or_default();
                v[i] = a + b;
            }
            v.truncate(n);
        }
        pairs(&mut self.calls);
        pairs(&mut self.errors);
        pairs(&mut self.busy);
    }

    fn add_busy(&mut self, start: u64, dur: u64, shift: u32) {
        let bin_ns = FIRST_BIN_NS << shift;
        let mut t = start;
        let end = start.saturating_add(dur);
        while t < end {
            let i = bin_index(t, shift);
            let bin_end = (i as u64 + 1) * bin_ns;
            let take = end.min(bin_end) - t;
            self.grow(i + 1);
            self.busy[i] += take;
            t += take;
        }
    }
}

#[derive(Clone, Default)]
pub struct Timeline {
    /// Time of the first timestamped event; bins count from here.
    t0: Option<i64>,
    /// Bins are `FIRST_BIN_NS << bin_shift` long ([`Self::bin_ns`]).
    bin_shift: u32,
    lanes: Vec<LaneAgg>,
    lane_of: HashMap<Tid, usize>,
    /// The lane of the previous event (consecutive events often come from one thread).
    last: Option<(Tid, usize)>,
    /// Index of the "other threads" lane once MAX_LANES is reached.
    other: Option<usize>,
    /// Threads counted in the "other threads" lane.
    other_threads: u32,
    /// The spans of the threads in the "other threads" lane (first start, last end).
    other_spans: HashMap<Tid, (u64, u64)>,
}

/// The bin of time `t` when bins are `FIRST_BIN_NS << shift` long: a shift and a division by a
/// constant (a multiplication), where dividing by the bin width was a hardware division, three
/// per event on the analysis thread.
#[inline]
fn bin_index(t: u64, shift: u32) -> usize {
    ((t >> shift) / FIRST_BIN_NS) as usize
}

impl Timeline {
    pub fn new() -> Self {
        Timeline::default()
    }

    fn bin_ns(&self) -> u64 {
        FIRST_BIN_NS << self.bin_shift
    }

    fn lane(&mut self, pid: Tid) -> usize {
        if let Some((p, l)) = self.last {
            if p == pid {
                return l;
            }
        }
        let l = match self.lane_of.get(&pid) {
            Some(&l) => l,
            None if self.lanes.len() < MAX_LANES => {
                self.lanes.push(LaneAgg { tid: pid, ..Default::default() });
                let l = self.lanes.len() - 1;
                self.lane_of.insert(pid, l);
                l
            }
            None => {
                let o = match self.other {
                    Some(o) => o,
                    None => {
                        self.lanes.push(LaneAgg { tid: Tid(0), ..Default::default() });
                        self.lanes.len() - 1
                    }
                };
                self.other = Some(o);
                self.other_threads += 1;
                self.lane_of.insert(pid, o);
                o
            }
        };
        self.last = Some((pid, l));
        l
    }

    #[inline]
    pub fn on_event(&mut self, ev: &Event) {
        let (EventKind::Syscall(sc), Some(ts)) = (&ev.kind, ev.ts_ns) else {
            return;
        };
        let t0 = *self.t0.get_or_insert(ts);
        let rel = ts.saturating_sub(t0).max(0) as u64;
        let dur = sc.dur_ns.unwrap_or(0);
        // widen the bins until the call's end fits
        // (a multiply and a compare: a span past u64::MAX is one no call reaches)
        while (MAX_BINS as u64).checked_mul(self.bin_ns()).is_some_and(|span| rel.saturating_add(dur) >= span)
            && self.bin_ns() < u64::MAX / 4
        {
            self.bin_shift += 1;
            for l in &mut self.lanes {
                l.halve();
            }
        }
        let l = self.lane(ev.tid);
        let end = rel.saturating_add(dur);
        if Some(l) == self.other {
            let s = self.other_spans.entry(ev.tid).or_insert((rel, end));
            *s = (s.0.min(rel), s.1.max(end));
        }
        let lane = &mut self.lanes[l];
        if lane.total_calls == 0 {
            lane.first = rel;
        }
        lane.first = lane.first.min(rel);
        lane.last_end = lane.last_end.max(end);
        let shift = self.bin_shift;
        let i = bin_index(rel, shift);
        lane.grow(i + 1);
        lane.calls[i] += 1;
        lane.total_calls += 1;
        if matches!(sc.ret, Ret::Err { .. }) {
            lane.errors[i] += 1;
        }
        if dur > 0 {
            lane.add_busy(rel, dur, shift);
            lane.total_busy += dur;
        }
    }

    /// Thread-seconds traced: for each thread, from the start of its first syscall to the end
    /// of its last, summed. Time inside one syscall, summed over threads, never exceeds it.
    pub fn thread_seconds(&self) -> f64 {
        let ns: u64 = self
            .lanes
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.other)
            .map(|(_, l)| l.last_end.saturating_sub(l.first))
            .chain(self.other_spans.values().map(|(a, b)| b.saturating_sub(*a)))
            .sum();
        ns as f64 / 1e9
    }

    /// The report's form: the busiest lanes (by time inside syscalls plus calls), the rest
    /// summed into one lane. `label` names a thread (`pid 12 (php)`, `thread 13 of pid 12`).
    pub fn finish(&self, label: impl Fn(Tid) -> (Tgid, String)) -> Option<WireTimeline> {
        let t0 = self.t0?;
        let bins = self.lanes.iter().map(|l| l.calls.len().max(l.busy.len())).max().unwrap_or(0);
        if bins == 0 {
            return None;
        }
        let mut order: Vec<usize> = (0..self.lanes.len()).filter(|&i| Some(i) != self.other).collect();
        // busiest first: a thread blocked for the whole window and a thread spinning both matter
        let bin_s = self.bin_ns() as f64 / 1e9;
        let score = |l: &LaneAgg| l.total_busy as f64 / 1e9 / bin_s + l.total_calls as f64;
        order.sort_by(|&a, &b| score(&self.lanes[b]).total_cmp(&score(&self.lanes[a])).then(a.cmp(&b)));
        let shown = order.len().min(REPORT_LANES);
        let mut rest: Vec<usize> = order[shown..].to_vec();
        rest.extend(self.other);
        let mut keep: Vec<usize> = order[..shown].to_vec();
        // lanes in order of first appearance reads better than by score (parents before children)
        keep.sort_unstable();
        let wire = |l: &LaneAgg, tid: u32, pid: u32, label: String, threads: u32| {
            let mut busy: Vec<f32> =
                l.busy.iter().map(|&b| (b as f64 / self.bin_ns() as f64).min(1.0) as f32).collect();
            let mut calls = l.calls.clone();
            let mut errors = l.errors.clone();
            busy.resize(bins, 0.0);
            calls.resize(bins, 0);
            errors.resize(bins, 0);
            // four significant digits are plenty for a picture
            for b in &mut busy {
                *b = (*b * 1e4).round() / 1e4;
            }
            Lane {
                tid,
                pid,
                label,
                threads,
                calls,
                errors,
                busy,
                total_calls: l.total_calls,
                total_busy_s: l.total_busy as f64 / 1e9,
            }
        };
        let mut lanes: Vec<Lane> = keep
            .iter()
            .map(|&i| {
                let l = &self.lanes[i];
                let (pid, label) = label(l.tid);
                wire(l, l.tid.0, pid.0, label, 1)
            })
            .collect();
        if !rest.is_empty() {
            let mut sum = LaneAgg::default();
            for &i in &rest {
                let l = &self.lanes[i];
                sum.grow(l.calls.len().max(l.busy.len()));
                for (j, v) in l.calls.iter().enumerate() {
                    sum.calls[j] += v;
                }
                for (j, v) in l.errors.iter().enumerate() {
                    sum.errors[j] += v;
                }
                for (j, v) in l.busy.iter().enumerate() {
                    sum.busy[j] += v;
                }
                sum.total_calls += l.total_calls;
                sum.total_busy += l.total_busy;
            }
            let n = (rest.len() - usize::from(self.other.is_some())) as u32 + self.other_threads;
            // several threads can be inside syscalls at once: the summed lane is clamped to full
            lanes.push(wire(&sum, 0, 0, format!("{n} other threads"), n));
        }
        Some(WireTimeline { start_s: t0 as f64 / 1e9, bin_s, bins: bins as u32, lanes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syslint_event::{Ret, Sys, Syscall};

    fn call(pid: u32, ts: i64, dur: u64, err: bool) -> Event<'static> {
        Event {
            tid: Tid(pid),
            ts_ns: Some(ts),
            kind: EventKind::Syscall(Syscall {
                sys: Sys::Poll,
                name: "poll",
                args: syslint_event::Args::Text(""),
                ret: if err { Ret::Err { val: -1, errno: "EAGAIN" } } else { Ret::Ok { val: 0, deco: None, note: "" } },
                dur_ns: Some(dur),
                resumed: false,
                pre: syslint_event::Pre::NONE,
            }),
        }
    }

    #[test]
    fn bins_double_and_keep_totals() {
        let mut t = Timeline::new();
        // one thread spins for 2 s (a call every 1 ms), another blocks for 1.5 s
        for i in 0..2000 {
            t.on_event(&call(1, i * 1_000_000, 10_000, i % 2 == 0));
        }
        t.on_event(&call(2, 200_000_000, 1_500_000_000, false));
        let w = t.finish(|p| (p.as_process(), format!("pid {p}"))).expect("timeline");
        assert!(w.bins as usize <= MAX_BINS && w.bins > MAX_BINS as u32 / 2, "{}", w.bins);
        let spin = &w.lanes[0];
        assert_eq!(spin.calls.iter().map(|&c| c as u64).sum::<u64>(), 2000);
        assert_eq!(spin.errors.iter().map(|&c| c as u64).sum::<u64>(), 1000);
        let block = &w.lanes[1];
        let busy_s: f64 = block.busy.iter().map(|&b| b as f64 * w.bin_s).sum();
        assert!((busy_s - 1.5).abs() < 0.01, "{busy_s}");
        // the blocked thread's bins inside its call are full
        let first = (0.2 / w.bin_s).ceil() as usize;
        assert!(block.busy[first..first + 10].iter().all(|&b| b > 0.99));
    }

    #[test]
    fn many_threads_share_one_lane() {
        let mut t = Timeline::new();
        for p in 0..(MAX_LANES as u32 + 100) {
            t.on_event(&call(p + 1, p as i64 * 1000, 100, false));
        }
        let w = t.finish(|p| (p.as_process(), format!("pid {p}"))).expect("timeline");
        assert_eq!(w.lanes.len(), REPORT_LANES + 1);
        let other = w.lanes.last().expect("lane");
        assert_eq!(other.threads as usize, MAX_LANES + 100 - REPORT_LANES);
        let calls: u64 = w.lanes.iter().map(|l| l.total_calls).sum();
        assert_eq!(calls, MAX_LANES as u64 + 100);
    }
}
