//! `sigmask-storm` (SL025): signals blocked and unblocked with rt_sigprocmask around every small
//! operation (an interposed library, a runtime or `sigsetjmp(env, 1)` protecting each call).
//!
//! Per thread, rt_sigprocmask calls are counted with the thread's share of its calls between its
//! first and last one; summed per program. A program is reported from `min_calls` calls making
//! `min_share` of those calls, a warning from `warn_share` (a pair around each other call is
//! two thirds). A critical section taken a few hundred times, or a mask set at thread start,
//! stays quiet; bash masking signals around each fork and wait (a third of its calls, under
//! `warn_share`) is info.

use crate::host::{Groups, Hosted, Merge, RepeatTotals, Repeats, State};
use crate::kit::Metrics;
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("sigmask_storm", struct SigmaskStorm);

/// Measured natively (lab/sigmask-storm/README.md, `mask bench`): an rt_sigprocmask call costs
/// about 350 ns (280 to 380 ns on the lab's VM when idle, up to 540 ns when loaded).
const CALL_NS: f64 = 350.0;

const MASK: &[Sys] = &[Sys::RtSigprocmask];

/// A storm is one thread changing its mask again and again: a thread with fewer changes counts
/// toward the program's share but not toward `min_calls` (a forked child restores its mask once;
/// 50,000 short processes doing that once each made 100% "shares" of one call each, a warning).
const MIN_THREAD_CALLS: u64 = 20;

impl Hosted for SigmaskStorm {
    /// A thread's mask changes.
    type Thread = Repeats;
    /// The mask changes of one program.
    type Program = RepeatTotals;
    type Object = ();

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let seq = cx.model.thread_calls(ev.tid);
        let Some(th) = s.thread_or(|| Repeats::new(seq, EVIDENCE)) else { return };
        th.add(seq, ev, sc);
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(th) = s.take_ended(|th| th.calls > 0) else { return };
        s.program().merge(RepeatTotals::of(th, MIN_THREAD_CALLS));
    }

    fn report(&mut self, groups: Groups<'_, RepeatTotals>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |p| {
            let share = p.share();
            if p.storm_calls < cfg.min_calls.max(1) || share < cfg.min_share {
                return None;
            }
            let severity = Severity::warning_if(share >= cfg.warn_share);
            let inside = p.timing.seconds();
            let saved = inside.unwrap_or(p.calls as f64 * CALL_NS * 1e-9);
            let rate = p.rate();
            let mut m = Metrics::new();
            m.count("calls", p.calls);
            m.value("share_of_calls", share);
            m.count("threads", p.threads);
            m.value_opt("calls_per_sec", rate);
            m.value_opt("syscall_seconds", inside);
            m.value("seconds", saved);
            let per = rate.map(|r| format!(", {r:.0}/s")).unwrap_or_default();
            let message = format!(
                "signal mask changed {} times with rt_sigprocmask{per}, {:.0}% of the calls of the threads that did it",
                p.calls,
                share * 100.0
            );
            let cost = match inside {
                Some(s) => format!("{s:.3} s inside the rt_sigprocmask calls ({})", cx.tracer.measured()),
                None => format!("about {saved:.4} s: natively about 350 ns per rt_sigprocmask call (no -T)"),
            };
            Some(META.finding(severity, message).over(&p.span).metrics(m).evidence(&p.evidence, cx.clock).cost(cost))
        })
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        let all = x.calls.len() as u64;
        let idx: Vec<usize> = x.calls.iter().enumerate().filter(|(_, c)| c.is(MASK)).map(|(i, _)| i).collect();
        let n = idx.len() as u64;
        // the other calls inside a mask change: an rt_sigprocmask at most two calls before and
        // another at most two calls after (a pair around each operation, or a save at each entry)
        let is_mask: Vec<bool> = x.calls.iter().map(|c| c.is(MASK)).collect();
        let near = |r: std::ops::Range<usize>| r.into_iter().any(|j| is_mask.get(j).copied().unwrap_or(false));
        let others = all - n;
        let around =
            (0..is_mask.len()).filter(|&i| !is_mask[i] && near(i.saturating_sub(2)..i) && near(i + 1..i + 3)).count() as u64;
        let (severity, conf) = if n >= 20 && 5 * n >= 2 * all && 2 * around >= others {
            (Severity::Warning, Confidence::Medium)
        } else if n >= 8 && 3 * n >= all && 3 * around >= others {
            (Severity::Info, Confidence::Low)
        } else {
            return Vec::new();
        };
        META.finding(severity, format!("signal mask changed {n} times in {all} calls of the excerpt, around {around} of the {others} other calls"))
            .metrics([("calls", n.into()), ("other_calls_inside", around.into()), ("all_calls", all.into())])
            .lines(x.evidence(&idx, 4))
            .in_excerpt(
                x,
                conf,
                &format!("{n} rt_sigprocmask calls in {all}, with {around} of the {others} other calls between two of them: signals blocked and restored around each operation; the excerpt cannot show how often it happens"),
            )
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::TableShare;
        let Some(t) = TableShare::of(c, MASK) else { return Vec::new() };
        if t.calls < self.cfg.min_calls.max(1) || t.share < self.cfg.min_share {
            return Vec::new();
        }
        let why = format!(
            "rt_sigprocmask is {:.0}% of the calls: signals blocked and restored around other calls; the table cannot show which calls they surround",
            t.share * 100.0
        );
        t.finding(&META, c, MASK, "calls", t.share >= self.cfg.warn_share, &why)
    }
}

// The fixture tests are data: fixtures/sigmask-storm/expect.toml, run by src/check/fixtures.rs.
