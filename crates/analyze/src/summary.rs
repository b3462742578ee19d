//! Per-syscall statistics: calls, errors by errno, duration distribution, return splits.

use crate::hist::Histogram;
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Ret, Sys, Syscall, Timeout};
use syslint_report::SyscallStats;

#[derive(Default, Clone)]
pub struct SysAgg {
    pub calls: u64,
    pub errors: u64,
    /// Few distinct errnos per syscall: a small vector beats a map.
    pub errnos: Vec<(String, u64)>,
    pub hist: Histogram,
    pub returned_0: u64,
    pub timeout_0: u64,
    pub timeout_inf: u64,
    pub bytes: u64,
    pub moves_bytes: bool,
}

impl SysAgg {
    #[inline]
    fn add(&mut self, sc: &Syscall) {
        self.calls += 1;
        if let Ret::Err { errno, .. } = sc.ret {
            self.errors += 1;
            match self.errnos.iter_mut().find(|(e, _)| e == errno) {
                Some((_, n)) => *n += 1,
                None => self.errnos.push((errno.to_string(), 1)),
            }
        }
        if let Some(d) = sc.dur_ns {
            self.hist.record(d);
        }
        let class = sc.sys.class();
        if class.has(Class::POLL) {
            if sc.ret.value() == Some(0) {
                self.returned_0 += 1;
            }
            match sc.timeout() {
                Some(Timeout::Ns(0)) => self.timeout_0 += 1,
                Some(Timeout::Infinite) => self.timeout_inf += 1,
                _ => {}
            }
        } else if class.has(Class::READ) || class.has(Class::WRITE) {
            self.moves_bytes = true;
            if let Some(b) = sc.bytes() {
                self.bytes += b;
                if b == 0 && class.has(Class::READ) {
                    self.returned_0 += 1;
                }
            }
        }
    }

    pub fn to_stats(&self, name: &str, window_s: f64) -> SyscallStats {
        let h = &self.hist;
        let s = |ns: u64| ns as f64 / 1e9;
        let total = h.sum() as f64 / 1e9;
        let timed = h.count() > 0;
        let mut returns = std::collections::BTreeMap::new();
        for (k, v) in
            [("returned_0", self.returned_0), ("timeout_0", self.timeout_0), ("timeout_infinite", self.timeout_inf)]
        {
            if v > 0 {
                returns.insert(k.to_string(), v);
            }
        }
        SyscallStats {
            name: name.to_string(),
            calls: self.calls,
            errors: self.errors,
            errnos: self.errnos.iter().cloned().collect(),
            timed_calls: h.count(),
            total_s: total,
            avg_s: if h.count() > 0 { total / h.count() as f64 } else { 0.0 },
            p50_s: timed.then(|| s(h.quantile(0.5))),
            p90_s: timed.then(|| s(h.quantile(0.9))),
            p99_s: timed.then(|| s(h.quantile(0.99))),
            max_s: timed.then(|| s(h.max())),
            wall_share: if window_s > 0.0 { total / window_s } else { 0.0 },
            thread_share: None,
            returns,
            bytes: if self.moves_bytes { Some(self.bytes) } else { None },
            latency: h.regroup(&latency_bounds_ns()),
        }
    }
}

fn latency_bounds_ns() -> [u64; syslint_report::LATENCY_BOUNDS_S.len()] {
    syslint_report::LATENCY_BOUNDS_S.map(|s| (s * 1e9).round() as u64)
}

/// All syscalls: a dense array for known ones, a map for names not in the table.
pub struct SyscallTable {
    known: Vec<SysAgg>,
    other: HashMap<String, SysAgg>,
}

impl Default for SyscallTable {
    fn default() -> Self {
        SyscallTable { known: vec![SysAgg::default(); Sys::COUNT], other: HashMap::default() }
    }
}

impl SyscallTable {
    #[inline]
    pub fn add(&mut self, sc: &Syscall) {
        if sc.sys == Sys::Other {
            match self.other.get_mut(sc.name) {
                Some(a) => a.add(sc),
                None => {
                    let mut a = SysAgg::default();
                    a.add(sc);
                    self.other.insert(sc.name.to_string(), a);
                }
            }
        } else {
            self.known[sc.sys as usize].add(sc);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &SysAgg)> {
        self.known
            .iter()
            .enumerate()
            .filter(|(_, a)| a.calls > 0)
            .map(|(i, a)| (Sys::from_index(i).name(), a))
            .chain(self.other.iter().map(|(n, a)| (n.as_str(), a)))
    }

    /// Stats sorted by total time, then calls, then name.
    pub fn stats(&self, window_s: f64) -> Vec<SyscallStats> {
        let mut v: Vec<SyscallStats> = self.iter().map(|(n, a)| a.to_stats(n, window_s)).collect();
        v.sort_by(|a, b| {
            b.total_s
                .partial_cmp(&a.total_s)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.calls.cmp(&a.calls))
                .then(a.name.cmp(&b.name))
        });
        v
    }
}

/// Summary-only: the kernel's counters are the syscall table.
pub(crate) fn kernel_rows(report: &mut syslint_report::Report, rows: Vec<syslint_report::CountRow>) {
    let window = report.capture.window.map_or(0.0, |w| w.duration_s);
    let mut stats: Vec<SyscallStats> = rows
        .into_iter()
        .filter(|r| r.calls > 0)
        .map(|r| {
            let total = r.seconds.unwrap_or(0.0);
            SyscallStats {
                name: r.name,
                calls: r.calls,
                errors: r.errors,
                timed_calls: r.calls,
                total_s: total,
                avg_s: total / r.calls.max(1) as f64,
                wall_share: if window > 0.0 { total / window } else { 0.0 },
                ..Default::default()
            }
        })
        .collect();
    stats.sort_by(|a, b| b.total_s.total_cmp(&a.total_s).then(b.calls.cmp(&a.calls)));
    report.capture.syscalls = stats.iter().map(|s| s.calls).sum();
    report.summary.syscalls = stats;
    // totals were measured in the kernel; percentiles and per-process counts were not
    report.capture.summary_only = true;
    report.capture.durations = true;
    report.capture.notes.push(
        "summary only: syscalls were counted in the kernel, only the detectors' counts rules ran; percentiles \
         and per-process counts are not measured"
            .into(),
    );
}
