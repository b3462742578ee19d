//! `yield-spin` (SL010): threads that loop on `sched_yield()`: a user-space spinlock that
//! yields while another thread holds it, a runtime's scheduler spinning, a flag polled with a
//! yield between looks.
//!
//! Per thread, yields that follow each other within `max_gap_ms` form a window; windows of at
//! least `min_window_yields` yields at `min_yields_per_sec` or more are spinning. Spinning
//! windows are summed per program (the threads of one program are one subject).

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, FutexOp, Sys, Syscall, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("yield_spin", struct YieldSpin);

/// A thread's current run of yields.
#[derive(Clone, Default)]
struct Window {
    yields: u64,
    /// Start of the first yield, end of the last.
    first: Option<i64>,
    last_end: Option<i64>,
    timing: Timing,
    evidence: EvidenceBuf,
}

impl Window {
    fn seconds(&self) -> Option<f64> {
        match (self.first, self.last_end) {
            (Some(a), Some(b)) => Some((b - a).max(0) as f64 / 1e9),
            _ => None,
        }
    }
}

/// A thread: its window, and whether it has spun.
#[derive(Clone, Default)]
pub struct Thread {
    win: Window,
    spun: bool,
}

/// Spinning windows of one program.
#[derive(Clone, Default)]
pub struct Group {
    yields: u64,
    windows: u64,
    threads: u64,
    /// Window seconds added up, and whether every window had timestamps.
    seconds: f64,
    timed: bool,
    untimed: bool,
    longest: f64,
    timing: Timing,
    span: Span,
    /// The evidence of the largest window.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group {
    evidence: merge,
    yields: sum,
    windows: sum,
    threads: sum,
    seconds: sum,
    timed: or,
    untimed: or,
    longest: max,
    timing: merge,
    span: merge,
});

impl YieldSpin {
    /// The thread's window ended: keep it when it spun.
    fn close(&self, s: &mut State<'_, Self>) {
        let Some(th) = s.existing() else { return };
        let w = std::mem::take(&mut th.win);
        if w.yields < self.cfg.min_window_yields.max(1) {
            return;
        }
        let secs = w.seconds();
        if let Some(s) = secs {
            // slow yields are spinning too when the thread was inside them most of the window
            // (on a loaded machine each yield hands the CPU away for a while, and the thread
            // comes back only to yield again)
            let inside = w.timing.seconds().map(|i| i / s);
            let fast = (w.yields as f64) / s >= self.cfg.min_yields_per_sec;
            if s > 0.0 && !fast && inside.is_none_or(|i| i < self.cfg.min_inside_share) {
                return;
            }
        }
        let first_of_thread = !th.spun;
        th.spun = true;
        let mut span = Span::default();
        span.add(w.first);
        span.add(w.last_end);
        let p = s.program();
        p.merge(Group {
            yields: w.yields,
            windows: 1,
            threads: u64::from(first_of_thread),
            seconds: secs.unwrap_or(0.0),
            timed: secs.is_some(),
            untimed: secs.is_none(),
            longest: secs.unwrap_or(0.0),
            timing: w.timing,
            span,
            evidence: Best::new(w.yields, w.evidence),
        });
    }
}

impl Hosted for YieldSpin {
    type Thread = Thread;
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per thread: its yields, its calls, and its longest run of yields in a row
        let mut by: std::collections::BTreeMap<Tid, (u64, u64, u64, u64, Vec<usize>)> = Default::default();
        for (i, c) in x.calls.iter().enumerate() {
            let t = by.entry(c.tid).or_default();
            t.1 += 1;
            if c.sys == Sys::SchedYield {
                t.0 += 1;
                t.3 += 1;
                t.2 = t.2.max(t.3);
                t.4.push(i);
            } else {
                t.3 = 0;
            }
        }
        let Some((_, (yields, calls, run, _, idx))) = by.into_iter().max_by_key(|(_, t)| t.2) else { return Vec::new() };
        if run < 8 || yields * 2 < calls {
            return Vec::new();
        }
        let strong = run >= 20;
        let why = if strong {
            format!("{run} sched_yield calls in a row, nothing blocking between them: a spin, though not how long it lasts")
        } else {
            format!("{run} sched_yield calls in a row: a lock that yields a few times before it sleeps does this too")
        };
        META.finding(
            Severity::warning_if(strong),
            format!("spinning on sched_yield: {yields} of {calls} calls, {run} yields in a row with no wait between"),
        )
        .about_the_thread()
        .metrics([("yields", yields.into()), ("calls", calls.into()), ("longest_run", run.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, if strong { Confidence::Medium } else { Confidence::Low }, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows};
        use syslint_report::Confidence;
        let yields = c.calls_of(&[Sys::SchedYield]);
        let total = c.total_calls();
        // a table limited to sched_yield cannot show its share
        if yields < self.cfg.min_yields || yields * 2 < total {
            return Vec::new();
        }
        let warn = yields >= self.cfg.warn_yields_untimed;
        let rate = per_second(c, yields, 0);
        let conf = Confidence::medium_if(warn);
        let why = if warn {
            format!("{yields} sched_yield calls, half or more of all calls: threads yielding instead of blocking; the table cannot show which threads, nor for how long each")
        } else {
            format!("{yields} sched_yield calls, half or more of all calls, but few: a lock that yields a few times before it sleeps adds up to this too")
        };
        META.finding(
            Severity::warning_if(warn),
            format!("spinning on sched_yield: {yields} of {total} calls{rate}"),
        )
        .metrics([("yields", yields.into()), ("calls", total.into())])
        .lines(count_lines(c, &[Sys::SchedYield, Sys::Futex, Sys::Nanosleep, Sys::ClockNanosleep]))
        .in_table(c, conf, &why)
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        if sc.sys != Sys::SchedYield {
            // a blocking wait (a futex wait, a sleep) ends the thread's window
            let waits = match sc.sys {
                Sys::Futex | Sys::FutexTime64 => sc.futex_op() == Some(FutexOp::Wait),
                _ => true,
            };
            if waits && s.existing().is_some_and(|th| th.win.yields > 0) {
                self.close(s);
            }
            return;
        }
        let end = ev.ts_ns.map(|t| t.saturating_add(sc.dur_ns.unwrap_or(0) as i64));
        // a gap since the thread's last yield ends its window
        let gap = self.cfg.max_gap_ms * 1e6;
        let ended = s.existing().is_some_and(|th| match (ev.ts_ns, th.win.last_end) {
            (Some(t), Some(l)) => th.win.yields > 0 && (t - l) as f64 > gap,
            _ => false,
        });
        if ended {
            self.close(s);
        }
        let Some(th) = s.thread() else { return };
        let w = &mut th.win;
        if w.yields == 0 {
            w.first = ev.ts_ns;
            w.evidence = EvidenceBuf::new(EVIDENCE);
        }
        w.yields += 1;
        if end.is_some() {
            w.last_end = end;
        }
        w.timing.add(sc.dur_ns);
        w.evidence.push(ev);
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        self.close(s);
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.yields == 0 || g.yields < cfg.min_yields {
                return None;
            }
            // timestamps on every window: the time rules apply
            let timed = g.timed && !g.untimed;
            if timed && g.seconds < cfg.min_seconds {
                return None;
            }
            let severity = Severity::warning_if((timed && g.seconds >= cfg.warn_seconds) || (!timed && g.yields >= cfg.warn_yields_untimed));
            let mut m = Metrics::new();
            m.count("yields", g.yields);
            m.count("spinning_threads", g.threads);
            m.count("spin_windows", g.windows);
            let rate = (timed && g.seconds > 0.0).then(|| g.yields as f64 / g.seconds);
            if timed {
                m.value("spin_seconds", g.seconds);
                m.value_opt("yields_per_sec", rate);
                m.value("longest_window_s", g.longest);
            }
            m.value_opt("yield_seconds", g.timing.seconds());
            let threads = if g.threads == 1 { "1 thread".to_string() } else { format!("{} threads", g.threads) };
            let message = match rate {
                Some(r) => format!(
                    "{threads} spinning on sched_yield(): {} yields in {:.2} s of thread time spinning ({:.0}/s per thread)",
                    g.yields, g.seconds, r
                ),
                None => format!("{threads} spinning on sched_yield(): {} yields", g.yields),
            };
            let inside = match g.timing.seconds() {
                Some(s) => format!(", {s:.3} s of it inside sched_yield ({})", cx.tracer.measured()),
                None => String::new(),
            };
            let cost = if timed {
                format!(
                    "{:.2} s of thread time spent spinning instead of blocking{inside}: each yield either burns the \
core or hands it to another thread without waking the one that holds what is waited for",
                    g.seconds
                )
            } else {
                format!("{} yields (time unknown: no timestamps), each a trip through the scheduler", g.yields)
            };
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/yield-spin/expect.toml, run by src/check/fixtures.rs.
