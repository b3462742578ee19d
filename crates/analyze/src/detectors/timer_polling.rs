//! `timer-polling` (SL012): an idle thread that wakes up on a short fixed timeout again and
//! again for nothing: poll/select/epoll_wait with a timeout that expires (`= 0 (Timeout)`) with
//! nothing done in between, or a child polled with `wait4(..., WNOHANG) = 0` after each sleep.
//!
//! Per thread, consecutive empty ticks (no data moved, no fd ready, no child reaped between them)
//! form an idle run; runs of at least `min_run_ticks` ticks count. The wake-up rate of a run is its
//! ticks over the time they cover (the timeouts asked for, or the time between checks). Zero
//! timeouts never count here: a wait that does not wait is busy-poll's.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Class, Event, Ret, Sys, Syscall, Tid, Timeout, WaitOptions};
use syslint_report::{Finding, Severity};

crate::detector!("timer_polling", struct TimerPolling);

/// A thread's current idle run.
#[derive(Clone, Default)]
struct Run {
    ticks: u64,
    polls: u64,
    children: u64,
    /// Ticks whose period is known, and those periods added up (ns).
    timed_ticks: u64,
    period_ns: u64,
    /// The most frequent periods.
    periods: Periods,
    span: Span,
    evidence: EvidenceBuf,
}

#[derive(Clone, Default)]
pub struct Thread {
    run: Run,
    /// A sleep just made: its requested length (ns) when the call says it, else its measured
    /// length (-T, eBPF), each `None` when unknown.
    slept: Option<(Option<u64>, Option<u64>)>,
    /// When the thread last looked (the start of its last tick).
    last_tick: Option<i64>,
    counted: bool,
}

/// Idle runs of one program.
#[derive(Clone, Default)]
pub struct Group {
    ticks: u64,
    polls: u64,
    children: u64,
    runs: u64,
    threads: u64,
    timed_ticks: u64,
    period_ns: u64,
    periods: Periods,
    span: Span,
    /// The evidence of the run with the most ticks.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group {
    evidence: merge,
    ticks: sum,
    polls: sum,
    children: sum,
    runs: sum,
    threads: sum,
    timed_ticks: sum,
    period_ns: saturating_sum,
    periods: merge,
    span: merge,
});

/// The most frequent periods (ms, count), [`PERIODS`] of them at most.
#[derive(Clone, Default)]
struct Periods(Vec<(u64, u64)>);

impl Periods {
    fn add(&mut self, ms: u64, n: u64) {
        if let Some(x) = self.0.iter_mut().find(|x| x.0 == ms) {
            x.1 += n;
        } else if self.0.len() < PERIODS {
            self.0.push((ms, n));
        }
    }
}

impl Merge for Periods {
    fn merge(&mut self, o: Self) {
        for (p, n) in o.0 {
            self.add(p, n);
        }
    }
}

/// What a call means to an idle run.
enum Step {
    /// An empty wake-up: a wait that timed out after `period` ns (0: unknown).
    Tick { period: u64, child: bool },
    /// Something was done: the run ends.
    Work,
    /// A sleep (its requested and its measured length): a WNOHANG check after it is a tick.
    Sleep(Option<u64>, Option<u64>),
    /// Neither (a long wait, a failed call).
    Other,
}

impl TimerPolling {
    fn step(&self, th: &Thread, ev: &Event, sc: &Syscall) -> Step {
        let max = (self.cfg.max_timeout_ms * 1e6) as u64;
        let c = sc.sys.class();
        if c.has(Class::POLL) {
            return match (sc.timeout(), &sc.ret) {
                (_, Ret::Ok { val, .. }) if *val > 0 => Step::Work,
                (Some(Timeout::Ns(t)), Ret::Ok { val: 0, .. }) if t > 0 && t <= max => {
                    Step::Tick { period: t, child: false }
                }
                // a zero timeout is busy-poll's; a long one is idle, not polling
                _ => Step::Other,
            };
        }
        match sc.sys {
            Sys::Nanosleep | Sys::ClockNanosleep => {
                let asked = sc.sleep_ns();
                if asked.or(sc.dur_ns).is_some_and(|ns| ns > max) {
                    Step::Other
                } else {
                    Step::Sleep(asked, sc.dur_ns)
                }
            }
            Sys::Wait4 | Sys::Waitid => {
                let nohang = sc.wait_options().is_some_and(|o| o.contains(WaitOptions::NOHANG));
                match &sc.ret {
                    Ret::Ok { val: 0, .. } if nohang => match th.slept {
                        // the sleep asked for (the same under every tracer), else the interval
                        // since the last look (CPython sleeps until an absolute time), else the
                        // sleep's measured length
                        Some((asked, dur)) => {
                            let gap = match (ev.ts_ns, th.last_tick) {
                                (Some(t), Some(l)) if t > l => Some((t - l) as u64),
                                _ => None,
                            };
                            let period = asked.or(gap).or(dur).unwrap_or(0);
                            if period <= max {
                                Step::Tick { period, child: true }
                            } else {
                                Step::Other
                            }
                        }
                        None => Step::Other,
                    },
                    Ret::Ok { val, .. } if *val > 0 => Step::Work,
                    _ => Step::Other,
                }
            }
            _ => match sc.ret {
                // data moved, a connection made or accepted
                Ret::Ok { val, .. } if val > 0 || matches!(sc.sys, Sys::Connect | Sys::Accept | Sys::Accept4) => {
                    Step::Work
                }
                _ => Step::Other,
            },
        }
    }

    /// The thread's run ended: keep it when it is long enough.
    fn close(&self, s: &mut State<'_, Self>) {
        let Some(th) = s.existing() else { return };
        let r = std::mem::take(&mut th.run);
        if r.ticks < self.cfg.min_run_ticks.max(1) {
            return;
        }
        let first = !th.counted;
        th.counted = true;
        let p = s.program();
        p.merge(Group {
            ticks: r.ticks,
            polls: r.polls,
            children: r.children,
            runs: 1,
            threads: u64::from(first),
            timed_ticks: r.timed_ticks,
            period_ns: r.period_ns,
            periods: r.periods,
            span: r.span,
            evidence: Best::new(r.ticks, r.evidence),
        });
    }
}

impl Hosted for TimerPolling {
    type Thread = Thread;
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use crate::basis::Call;
        use syslint_report::Confidence;
        let max_ns = (self.cfg.max_timeout_ms * 1e6) as u64;
        // a tick: a wait with a short timeout that expired, or a child polled with WNOHANG
        // (wait4 = 0) after a short sleep; its period in ns
        let mut best: (u64, Vec<u64>, Vec<usize>) = Default::default();
        let mut tids: Vec<Tid> = x.calls.iter().map(|c| c.tid).collect();
        tids.sort_unstable();
        tids.dedup();
        let quiet = |c: &Call| {
            matches!(c.sys, Sys::ClockGettime | Sys::ClockGettime64 | Sys::Gettimeofday | Sys::Time)
                || (matches!(c.sys, Sys::Nanosleep | Sys::ClockNanosleep) && c.sleep_ns == Some(0))
                || c.sys == Sys::SchedYield
        };
        for tid in tids {
            let mut cur: (u64, Vec<u64>, Vec<usize>) = Default::default();
            let mut slept: Option<u64> = None;
            let mut end = |cur: &mut (u64, Vec<u64>, Vec<usize>)| {
                let c = std::mem::take(cur);
                if c.0 > best.0 {
                    best = c;
                }
            };
            for (i, c) in x.calls.iter().enumerate().filter(|(_, c)| c.tid == tid) {
                let ns = match c.timeout {
                    Some(Timeout::Ns(ns)) if c.sys.is(Class::POLL) && ns > 0 => Some(ns),
                    _ => None,
                };
                if let (Some(ns), Some(0)) = (ns, c.ret) {
                    if ns <= max_ns {
                        cur.0 += 1;
                        cur.1.push(ns);
                        cur.2.push(i);
                        continue;
                    }
                }
                if matches!(c.sys, Sys::Nanosleep | Sys::ClockNanosleep) && c.sleep_ns.is_some_and(|s| s > 0 && s <= max_ns) {
                    slept = c.sleep_ns;
                    continue;
                }
                if c.sys.is(Class::WAIT) && c.ret == Some(0) {
                    if let Some(s) = slept.take() {
                        cur.0 += 1;
                        cur.1.push(s);
                        cur.2.push(i);
                        continue;
                    }
                }
                if quiet(c) {
                    continue;
                }
                end(&mut cur);
            }
            end(&mut cur);
        }
        let (ticks, mut periods, idx) = best;
        // fewer ticks than a run needs still say it when they are all the paste shows of their
        // thread (deoplete-jedi#61: four 10 ms selects that expired, nothing else): info at low
        let tid = idx.first().map(|&i| x.calls[i].tid);
        let short = ticks >= 3
            && x.calls.iter().enumerate().filter(|(_, c)| Some(c.tid) == tid).all(|(i, c)| {
                idx.contains(&i)
                    || quiet(c)
                    || matches!(c.sys, Sys::Nanosleep | Sys::ClockNanosleep)
                    // a resumption whose start the paste cut: the same wait, timed out
                    || (c.sys.is(Class::POLL) && c.timeout.is_none() && c.ret == Some(0))
            });
        if ticks < self.cfg.min_run_ticks.max(1) && !short {
            return Vec::new();
        }
        let short = ticks < self.cfg.min_run_ticks.max(1);
        periods.sort_unstable();
        let period_ns = periods[periods.len() / 2].max(1);
        // the rate is the ticks over the time they cover, as in the full-trace rule: a backoff
        // (1, 2, 4 ... 50 ms, CPython 2's Condition.wait) wakes less often than its median
        // timeout says
        let covered_s = periods.iter().sum::<u64>() as f64 / 1e9;
        let per_sec = ticks as f64 / covered_s.max(1e-9);
        if per_sec < self.cfg.min_per_sec {
            return Vec::new();
        }
        // and a warning needs as long an idle stretch as the full-trace rule asks for
        // (`warn_idle_seconds`): ten 20 ms ticks are a fifth of a second of it
        let warn = per_sec >= self.cfg.warn_per_sec && covered_s >= self.cfg.warn_idle_seconds && !short;
        let period_ms = period_ns as f64 / 1e6;
        META.finding(
            Severity::warning_if(warn),
            format!("waking up for nothing: {ticks} ticks in a row of a {period_ms} ms timeout that expired with nothing done between (about {per_sec:.0} wake-ups a second while idle, over {covered_s:.2} s)"),
        )
        .about_the_thread()
        .metrics([
            ("ticks", ticks.into()),
            ("period_ms", period_ms.into()),
            ("wakeups_per_sec", ((per_sec * 10.0).round() / 10.0).into()),
            ("idle_seconds", ((covered_s * 1e6).round() / 1e6).into()),
        ])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(
            x,
            if short { Confidence::Low } else { Confidence::Medium },
            &format!("{}{ticks} expired timeouts in a row (median {period_ms} ms), nothing moved between them; the rate is from the timeouts asked for, not measured{}", if short { "a short run, all its thread shows: " } else { "" }, if warn || per_sec < self.cfg.warn_per_sec { String::new() } else { format!(", and {covered_s:.2} s of idling is less than the {} s a warning needs", self.cfg.warn_idle_seconds) }),
        )
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, wall_times, SysCounts, SysRows};
        use syslint_report::Confidence;
        // the poll/select/epoll waits: exactly the poll class
        const WAITS: Class = Class::POLL;
        const IO: &[Sys] = &[
            Sys::Read, Sys::Write, Sys::Readv, Sys::Writev, Sys::Recvfrom, Sys::Sendto, Sys::Recvmsg, Sys::Sendmsg,
            Sys::Accept, Sys::Accept4,
        ];
        if !wall_times(c) || !c.counted_any_of(IO) {
            return Vec::new();
        }
        let waits = c.calls_of(WAITS);
        let total = c.total_calls();
        let io = c.calls_of(IO);
        let secs: f64 = c.seconds_of(WAITS);
        let avg_ms = secs / waits.max(1) as f64 * 1e3;
        // waits that each lasted a short timeout, with next to no I/O: ticks
        if waits < 20 || waits * 2 < total || io * 10 > waits || !(1.0..=250.0).contains(&avg_ms) {
            return Vec::new();
        }
        META.finding(
            Severity::Info,
            format!("waits that each last about {avg_ms:.1} ms with nothing done: {waits} of {total} calls were waits, {io} were I/O"),
        )
        .metrics([
            ("waits", waits.into()),
            ("io_calls", io.into()),
            ("avg_wait_ms", ((avg_ms * 1000.0).round() / 1000.0).into()),
        ])
        .lines(count_lines(c, WAITS))
        .in_table(
            c,
            Confidence::Low,
            &format!("{waits} waits averaging {avg_ms:.1} ms of wall-clock time and {io} I/O calls: a short timeout expiring again and again, or waits that ended early for work the table does not show"),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        if matches!(sc.ret, Ret::Unfinished) {
            return;
        }
        if s.existing().is_none() {
            // a thread is followed from its first wait on
            let c = sc.sys.class();
            if !(c.has(Class::POLL) || matches!(sc.sys, Sys::Nanosleep | Sys::ClockNanosleep)) {
                return;
            }
        }
        let Some(th) = s.thread() else { return };
        match self.step(th, ev, sc) {
            Step::Tick { period, child } => {
                th.slept = None;
                th.last_tick = ev.ts_ns;
                let r = &mut th.run;
                if r.ticks == 0 {
                    r.evidence = EvidenceBuf::new(EVIDENCE);
                }
                r.ticks += 1;
                if child {
                    r.children += 1;
                } else {
                    r.polls += 1;
                }
                if period > 0 {
                    r.timed_ticks += 1;
                    r.period_ns = r.period_ns.saturating_add(period);
                    r.periods.add((period + 500_000) / 1_000_000, 1);
                }
                r.span.add(ev.ts_ns);
                r.evidence.push(ev);
            }
            Step::Sleep(asked, dur) => {
                th.slept = Some((asked, dur));
                // the sleep is part of the tick it precedes: shown as evidence
                if th.run.ticks > 0 && th.run.evidence.first.len() < EVIDENCE {
                    th.run.evidence.push(ev);
                }
            }
            Step::Work => {
                self.close(s);
                if let Some(th) = s.existing() {
                    th.slept = None;
                    th.last_tick = None;
                }
            }
            Step::Other => {}
        }
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        self.close(s);
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.ticks == 0 || g.ticks < cfg.min_ticks {
                return None;
            }
            // the time the ticks cover: their known periods, the unknown ones at the mean
            let idle = (g.timed_ticks > 0).then(|| g.period_ns as f64 / 1e9 * g.ticks as f64 / g.timed_ticks as f64);
            let rate = idle.filter(|&s| s > 0.0).map(|s| g.ticks as f64 / s);
            if rate.is_some_and(|r| r < cfg.min_per_sec) || idle.is_some_and(|s| s < cfg.min_idle_seconds) {
                return None;
            }
            let severity = match (rate, idle) {
                (Some(r), Some(s)) if r >= cfg.warn_per_sec && s >= cfg.warn_idle_seconds => Severity::Warning,
                _ => Severity::Info,
            };
            let mut periods = g.periods.0.clone();
            periods.sort_by_key(|p| std::cmp::Reverse(p.1));
            let period = periods.first().map(|p| p.0);
            let mut m = Metrics::new();
            m.count("ticks", g.ticks);
            m.count("poll_timeouts", g.polls);
            m.count("child_polls", g.children);
            m.count("idle_runs", g.runs);
            m.value_opt("idle_seconds", idle);
            m.value_opt("wakeups_per_sec", rate);
            if let Some(p) = period {
                m.count("period_ms", p);
            }
            m.count("threads", g.threads);
            let what = match (g.polls, g.children) {
                (_, 0) => "waits that timed out with nothing ready".to_string(),
                (0, _) => "WNOHANG checks after a sleep that found no child".to_string(),
                (p, c) => format!("{p} waits that timed out, {c} WNOHANG checks that found no child"),
            };
            let every = period.map(|p| format!(" every {p} ms")).unwrap_or_default();
            let message = match (rate, idle) {
                (Some(r), Some(s)) => format!(
                    "woke up {} times for nothing{every} ({r:.0}/s over {s:.1} s of idling): {what}",
                    g.ticks
                ),
                _ => format!("woke up {} times for nothing{every}: {what}", g.ticks),
            };
            let cost = match (rate, period) {
                (Some(r), Some(p)) => format!(
                    "{r:.0} wake-ups a second that find nothing: each a context switch and an exit from CPU idle; \
the event it waits for is noticed up to {p} ms late"
                ),
                _ => "wake-ups that find nothing (rate unknown: no timestamps or timeouts)".to_string(),
            };
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/timer-polling/expect.toml, run by src/check/fixtures.rs.
