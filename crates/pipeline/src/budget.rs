//! The agent's own bounds (`syslint agent --cpu-budget`, `--memory-budget`): how long its next
//! window may be, and how many records a window may hold in memory waiting for the analysis.
//!
//! **CPU** is a bucket of credit: it fills at the budget's rate (a share of one core) up to one
//! cycle's worth (`--every` at that rate, at least a minute's), and everything the agent uses empties it (its
//! windows' analysis, its scrapes and exports, the counting between windows: its whole CPU time).
//! Before a window the agent asks [`CpuBudget::plan`]: the whole window while the credit covers
//! what a window cost per second lately, a shorter one when it covers part of it, none when it
//! covers less than [`MIN_WINDOW`]. So a host with many busy cgroups (one window after another
//! through the cycle) or a saturated server (a window's records take seconds to analyse) gets
//! shorter and fewer windows, never more of the agent than the budget; the agent says so.
//!
//! **Memory**: a window's records wait in a queue while the analysis reads them
//! (syslint_pipeline::ebpf); the agent bounds that queue by what its budget leaves beside what
//! it holds already ([`queue_bytes`]). Beyond it the kernel drops records (counted) and the
//! window says how long its buffer went unread (`capture.unread_s`).

use std::time::{Duration, Instant};

/// The shortest window worth tracing: below it a window sees too few calls of a slow loop to
/// judge it (a 20 ms timer fires 5 times).
pub const MIN_WINDOW: Duration = Duration::from_millis(100);

/// What the next window may be.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Plan {
    /// The window asked for.
    Full,
    /// A shorter one: the credit covers this much.
    Short(Duration),
    /// None: the credit is spent until it refills.
    Skip,
}

/// The CPU bucket.
#[derive(Debug)]
pub struct CpuBudget {
    /// Cores (0.05 = 5% of one).
    share: f64,
    /// CPU seconds the agent may still use; at most `cap`.
    credit: f64,
    cap: f64,
    /// When the credit last filled, and the agent's CPU seconds when it was last charged.
    filled_at: Instant,
    charged_cpu: f64,
    /// CPU seconds a second of window cost lately (none yet: the first window is whole).
    per_window_s: Option<f64>,
}

impl CpuBudget {
    /// A full bucket for `share` of a core over cycles of `every` (a minute's worth when the
    /// cycles are shorter: the first windows, the start's BPF loading, fit); `cpu_now` is the
    /// agent's CPU time so far.
    pub fn new(share: f64, every: Duration, cpu_now: f64, now: Instant) -> CpuBudget {
        let cap = share * every.max(Duration::from_secs(60)).as_secs_f64();
        CpuBudget { share, credit: cap, cap, filled_at: now, charged_cpu: cpu_now, per_window_s: None }
    }

    /// The credit filled for the time passed and charged for the CPU used since last time.
    fn settle(&mut self, cpu_now: f64, now: Instant) {
        let dt = now.saturating_duration_since(self.filled_at).as_secs_f64();
        self.credit = (self.credit + dt * self.share).min(self.cap) - (cpu_now - self.charged_cpu).max(0.0);
        self.filled_at = now;
        self.charged_cpu = cpu_now;
    }

    /// How long the next window may be, `window` asked for.
    pub fn plan(&mut self, window: Duration, cpu_now: f64, now: Instant) -> Plan {
        self.settle(cpu_now, now);
        if self.credit <= 0.0 {
            return Plan::Skip;
        }
        let Some(rate) = self.per_window_s.filter(|r| *r > 0.0) else { return Plan::Full };
        let affordable = Duration::try_from_secs_f64(self.credit / rate).unwrap_or(Duration::MAX);
        if affordable >= window {
            Plan::Full
        } else if affordable < MIN_WINDOW {
            Plan::Skip
        } else {
            Plan::Short(affordable)
        }
    }

    /// A window of `traced` seconds made, the agent's CPU time now `cpu_now` (it was
    /// `cpu_before` when the window started): what a second of window costs is learnt from it.
    pub fn spent(&mut self, traced: Duration, cpu_before: f64, cpu_now: f64, now: Instant) {
        let s = traced.as_secs_f64();
        if s > 0.0 {
            let rate = (cpu_now - cpu_before).max(0.0) / s;
            // half the latest, half what came before: one quiet window does not undo a busy one
            self.per_window_s = Some(self.per_window_s.map_or(rate, |old| (old + rate) / 2.0));
        }
        self.settle(cpu_now, now);
    }

    /// The credit left, in CPU seconds (negative: owed).
    pub fn credit(&self) -> f64 {
        self.credit
    }
}

/// The agent's resident memory now, in bytes (/proc/self/statm), 0 when unreadable.
pub fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages = statm.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    pages * 4096
}

/// Room a window needs beside its queue: the kernel's ring buffers as the agent maps them (16
/// MiB of records and 4 MiB of stacks, each mapped twice: 40 MiB resident once written through)
/// and the analysis (the detectors' state, bounded by their caps, and the report: about 20 MB
/// for a busy nginx window), with room to spare.
pub const WINDOW_BYTES: u64 = 96 << 20;

/// The least queue a window gets: about 100,000 records.
pub const MIN_QUEUE_BYTES: u64 = 8 << 20;

/// How many bytes of records a window may queue: what `budget` leaves beside what the agent
/// holds now (`resident`) and [`WINDOW_BYTES`]; at least [`MIN_QUEUE_BYTES`].
pub fn queue_bytes(budget: u64, resident: u64) -> u64 {
    budget.saturating_sub(resident).saturating_sub(WINDOW_BYTES).max(MIN_QUEUE_BYTES)
}

/// The least memory budget for an agent holding `resident` bytes: room for a window and the
/// least queue.
pub fn least_memory(resident: u64) -> u64 {
    resident + WINDOW_BYTES + MIN_QUEUE_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn the_first_window_is_whole_then_the_cost_decides() {
        let t0 = Instant::now();
        // 5% of a core over 60 s cycles: 3 CPU seconds a cycle
        let mut b = CpuBudget::new(0.05, 60 * S, 10.0, t0);
        assert_eq!(b.plan(2 * S, 10.0, t0), Plan::Full);
        // a window of 2 s cost 1 CPU second: 0.5 a second, 2 s affordable with 2 left
        b.spent(2 * S, 10.0, 11.0, t0 + 2 * S);
        assert!((b.credit() - 2.0).abs() < 0.01, "{}", b.credit());
        assert_eq!(b.plan(2 * S, 11.0, t0 + 2 * S), Plan::Full);
        // a busier one: 3 CPU seconds; the bucket is owed, the next window skipped
        b.spent(2 * S, 11.0, 14.0, t0 + 4 * S);
        assert!(b.credit() < 0.0);
        assert_eq!(b.plan(2 * S, 14.0, t0 + 4 * S), Plan::Skip);
        // 30 s later 1.5 s of credit came back (0.6 s left), less than 2 s of window cost
        // lately (1.0 a second): a shorter window
        match b.plan(2 * S, 14.0, t0 + 34 * S) {
            Plan::Short(d) => assert!(d > MIN_WINDOW && d < 2 * S, "{d:?}"),
            p => panic!("{p:?}"),
        }
        // a quiet hour fills the bucket to one cycle's worth, no more
        assert_eq!(b.plan(2 * S, 14.0, t0 + 3600 * S), Plan::Full);
        assert!((b.credit() - 3.0).abs() < 0.01, "{}", b.credit());
    }

    #[test]
    fn cpu_used_between_windows_is_charged_too() {
        let t0 = Instant::now();
        let mut b = CpuBudget::new(0.01, 60 * S, 0.0, t0);
        b.spent(S, 0.0, 0.1, t0 + S);
        // 0.6 CPU seconds of scrapes and exports since: owed, whatever the windows cost
        assert_eq!(b.plan(2 * S, 0.7, t0 + 2 * S), Plan::Skip);
    }

    #[test]
    fn too_little_credit_for_the_shortest_window_skips() {
        let t0 = Instant::now();
        let mut b = CpuBudget::new(0.05, 60 * S, 0.0, t0);
        // a window costing 2.95 CPU seconds a second (analysing a host of busy threads)
        b.spent(S, 0.0, 2.95, t0);
        assert_eq!(b.plan(2 * S, 2.95, t0), Plan::Skip, "credit 0.05 s: 2.5 ms of window");
    }

    #[test]
    fn the_queue_is_what_the_budget_leaves() {
        let mib = 1 << 20;
        assert_eq!(queue_bytes(256 * mib, 50 * mib), (256 - 50 - 96) * mib);
        assert_eq!(queue_bytes(100 * mib, 90 * mib), MIN_QUEUE_BYTES);
        assert_eq!(least_memory(50 * mib), (50 + 96 + 8) * mib);
    }
}
