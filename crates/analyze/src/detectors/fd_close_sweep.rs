//! `fd-close-sweep` (SL009): a process closes every possible fd, one call each, up to the
//! nofile limit (before an exec, or at start-up), most of them failing with EBADF.
//!
//! A sweep is a run of close() (or fcntl(F_GETFD)) calls by one thread on consecutive fd
//! numbers, up or down; it counts the calls that failed with EBADF (fds that were not open).
//! Sweeps of at least `min_sweep_fds` such calls are summed per program.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, FcntlCmd, Ret, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("fd_close_sweep", struct FdCloseSweep);

/// A run of closes on consecutive fds by one thread (its program is the one the thread ran
/// when the sweep began: it usually execs another one next).
#[derive(Clone, Default)]
pub struct Run {
    /// The last fd closed, and the direction (+1, -1; 0 after the first call).
    last: i64,
    step: i64,
    calls: u64,
    ebadf: u64,
    /// Of those, fcntl(F_GETFD) calls.
    fcntl: u64,
    highest: i64,
    timing: Timing,
    span: Span,
    evidence: EvidenceBuf,
}

/// Sweeps of one program.
#[derive(Clone, Default)]
pub struct Group {
    sweeps: u64,
    calls: u64,
    ebadf: u64,
    fcntl: u64,
    largest: u64,
    highest: i64,
    timing: Timing,
    span: Span,
    /// Evidence of the largest sweep.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group {
    evidence: merge,
    largest: max,
    sweeps: sum,
    calls: sum,
    ebadf: sum,
    fcntl: sum,
    highest: max,
    timing: merge,
    span: merge,
});

/// The fd a sweep call names: close(fd), or fcntl(fd, F_GETFD) (any fcntl that only asks).
fn swept_fd(sc: &Syscall) -> Option<i64> {
    if matches!(sc.sys, Sys::Fcntl | Sys::Fcntl64) && sc.fcntl_cmd() != Some(FcntlCmd::Get) {
        return None;
    }
    sc.fd_num().map(i64::from)
}

impl Hosted for FdCloseSweep {
    type Thread = Run;
    type Program = Group;
    type Object = ();

    /// A run ended: keep it when it is a sweep.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(run) = s.take_ended(|run| run.ebadf >= self.cfg.min_sweep_fds.max(1)) else { return };
        s.program().merge(Group {
            sweeps: 1,
            calls: run.calls,
            ebadf: run.ebadf,
            fcntl: run.fcntl,
            largest: run.ebadf,
            highest: run.highest,
            timing: run.timing,
            span: run.span,
            evidence: Best::new(run.ebadf, run.evidence),
        });
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // the longest run of closes by one thread on consecutive fd numbers, up or down; a
        // jump ahead in the run's direction between two failing closes is a hand elision (a
        // `...` or `# ... more calls` line the reader skipped, or `grep EBADF`): it shows how far
        // the sweep went
        #[derive(Clone, Default)]
        struct Run {
            closes: u64,
            ebadf: u64,
            idx: Vec<usize>,
            step: i32,
            jumps: u64,
            /// consecutive closes since the last jump
            since_jump: u64,
        }
        let (mut best, mut cur): (Run, Run) = Default::default();
        let mut last: Option<(syslint_event::Tid, i32, bool)> = None;
        for (i, c) in x.calls.iter().enumerate() {
            if c.sys != Sys::Close {
                if last.is_some_and(|(t, _, _)| t == c.tid) {
                    last = None;
                }
                continue;
            }
            let Some(fd) = c.fd else { continue };
            let ebadf = c.failed("EBADF");
            let d = last.filter(|(t, _, _)| *t == c.tid).map(|(_, f, e)| (fd - f, e));
            let next = match d {
                Some((1 | -1, _)) if cur.step == 0 || Some(cur.step) == d.map(|d| d.0) => true,
                Some((k, prev_ebadf)) if cur.closes >= 2 && cur.step != 0 && k.signum() == cur.step && prev_ebadf && ebadf => {
                    cur.jumps += 1;
                    cur.since_jump = 0;
                    true
                }
                _ => false,
            };
            if next {
                if cur.step == 0 {
                    cur.step = d.map_or(1, |d| d.0.signum());
                }
            } else {
                cur = Run::default();
            }
            cur.closes += 1;
            cur.since_jump += 1;
            cur.ebadf += u64::from(ebadf);
            cur.idx.push(i);
            if cur.closes > best.closes {
                best = cur.clone();
            }
            last = Some((c.tid, fd, ebadf));
        }
        let n = best.closes;
        if n == 0 {
            return Vec::new();
        }
        if let Some(f) = self.limit_edge(x, n) {
            return f;
        }
        // a jump must be followed by closes that go on from where it landed
        let jumped = best.jumps > 0 && best.since_jump >= 2;
        let fds: Vec<i32> = best.idx.iter().filter_map(|&i| x.calls[i].fd).collect();
        let hi = fds.iter().copied().max().unwrap_or(0).max(0) as u64;
        let lo = fds.iter().copied().min().unwrap_or(0).max(0) as u64;
        // the nofile limit read just before a sweep that starts low is how far it goes
        let first = best.idx[0];
        let tid = x.calls[first].tid;
        let limit = x.calls[..first]
            .iter()
            .rev()
            .filter(|c| c.tid == tid)
            .take(5)
            .find_map(|c| c.nofile)
            .filter(|_| lo <= 10 && best.step > 0);
        let sweep = self.cfg.min_sweep_fds;
        // what an expert reads in a few lines (issue 28): a run up from fd 3 right after reading
        // a nofile limit of thousands, already past the open fds (its last closes fail: nix#1506,
        // 20 closes after a limit of 1024*1024, the last 7 EBADF); or closes of fds no process
        // holds, above the kernel's default ceiling of 1,048,576 (fs.nr_open), every one failing
        // (uwsgi#2299: six closes around fd 65,881,790)
        let tail_fails = best.idx.iter().rev().take_while(|&&i| x.calls[i].failed("EBADF")).count();
        let after_limit = limit.is_some_and(|l| l >= sweep) && n >= 8 && tail_fails >= 3;
        let beyond_any = lo >= 1 << 20 && n >= 3 && best.ebadf == n;
        if !(after_limit || beyond_any) && (n < if jumped { 5 } else { 8 } || best.ebadf * 4 < n * 3) {
            return Vec::new();
        }
        let reach = hi.max(limit.unwrap_or(0));
        let (sev, conf, why) = if reach >= sweep {
            let how = match limit {
                Some(u64::MAX) => "after reading an unlimited nofile limit".to_string(),
                Some(l) if l >= hi => format!("after reading a nofile limit of {l}"),
                _ if jumped => format!("and the paste jumps to fd {hi}"),
                _ => format!("and had reached fd {hi}"),
            };
            let sev = Severity::warning_if(reach >= self.cfg.warn_sweep_fds);
            (sev, Confidence::Medium, format!("{} of {n} closes on fds that were not open, {how}: a sweep of about {} closes, one syscall each", best.ebadf, reach.min(1 << 31).saturating_sub(lo)))
        } else {
            (Severity::Info, Confidence::Low, format!("{n} closes of consecutive fds failing with EBADF; the excerpt cannot show how far the sweep goes (to 64 it costs nothing, to a nofile limit of a million it costs a second per spawn)"))
        };
        META.finding(
            sev,
            format!("closing fd after fd that is not open: {n} closes, {} failed with EBADF (fds {lo} to {hi} in the excerpt{})", best.ebadf, if jumped { ", with lines left out" } else { "" }),
        )
        .metrics([
            ("closes", n.into()),
            ("ebadf", best.ebadf.into()),
            ("highest_fd", hi.into()),
            ("reach", reach.min(1 << 31).into()),
        ])
        .lines(x.evidence(&best.idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        let closes = c.calls_of(&[Sys::Close]);
        let failed = c.errors_of(&[Sys::Close]);
        let total = c.total_calls();
        let (conf, why) = if c.errors_known && failed >= 1000 && failed * 10 >= closes * 9 {
            (Confidence::Medium, format!("{failed} of {closes} closes failed: fds that were not open; the table shows no fd numbers"))
        } else if !c.errors_known && closes >= 4096 && closes * 2 >= total {
            (Confidence::Low, format!("{closes} closes, half or more of all calls; the table does not count errors, so whether the fds were open is unknown"))
        } else {
            return Vec::new();
        };
        let failed_words = if c.errors_known { format!(", {failed} of them failing") } else { String::new() };
        META.finding(Severity::Warning, format!("closes of fds that are not open: {closes} close calls{failed_words}"))
            .metrics([("closes", closes.into()), ("ebadf", failed.into())])
            .lines(count_lines(c, &[Sys::Close, Sys::CloseRange]))
            .in_table(c, conf, &why)
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(fd) = swept_fd(sc) else { return };
        if fd < 0 {
            return;
        }
        let ebadf = sc.ret.errno() == Some("EBADF");
        // the next fd in the run's direction, or the same fd again (the close that follows a
        // fcntl(F_GETFD) finding it open)
        let continues = s.existing().is_some_and(|r| {
            let d = fd - r.last;
            (r.calls > 0 && d == 0) || ((d == 1 || d == -1) && (r.step == 0 || r.step == d))
        });
        if !continues {
            s.end(self);
            // a run starts at a call that failed (the fds a sweep meets first may be open, but
            // starting at every close(3) would follow every program's ordinary closes)
            if !ebadf {
                return;
            }
        }
        let make = || Run { last: fd - 1, evidence: EvidenceBuf::new(EVIDENCE), ..Run::default() };
        let Some(r) = s.thread_or(make) else { return };
        if r.calls > 0 && r.step == 0 && fd != r.last {
            r.step = fd - r.last;
        }
        r.last = fd;
        r.calls += 1;
        r.highest = r.highest.max(fd);
        if ebadf {
            r.ebadf += 1;
            if sc.sys != Sys::Close {
                r.fcntl += 1;
            }
        }
        if matches!(sc.ret, Ret::Ok { .. } | Ret::Err { .. }) {
            r.timing.add(sc.dur_ns);
        }
        r.span.add(ev.ts_ns);
        r.evidence.push(ev);
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        groups.findings(cx.model, |g| {
            if g.sweeps == 0 {
                return None;
            }
            let severity = Severity::warning_if(g.largest >= self.cfg.warn_sweep_fds || g.ebadf >= self.cfg.warn_total_fds);
            let mut m = Metrics::new();
            m.count("sweeps", g.sweeps);
            m.count("ebadf", g.ebadf);
            m.count("calls", g.calls);
            m.count("largest_sweep", g.largest);
            m.count("highest_fd", g.highest);
            m.value_opt("seconds", g.timing.seconds());
            let sweeps = if g.sweeps == 1 { "1 sweep".to_string() } else { format!("{} sweeps", g.sweeps) };
            let calls = match (g.ebadf - g.fcntl, g.fcntl) {
                (_, 0) => "close",
                (0, _) => "fcntl(F_GETFD)",
                _ => "close and fcntl(F_GETFD)",
            };
            let message = format!(
                "{} {calls} calls on fds that were not open, in {sweeps} up to fd {} (one call per possible fd)",
                g.ebadf, g.highest
            );
            let time = match g.timing.seconds() {
                Some(s) => format!("{s:.3} s inside them as traced"),
                None => "time unknown: no -T".to_string(),
            };
            let cost = format!(
                "{} system calls that did nothing ({time}; natively about 0.1-0.3 us each, so about {:.1}-{:.1} ms), \
{} per sweep on average: the cost grows with the nofile limit, not with the fds that are open",
                g.ebadf,
                g.ebadf as f64 * 0.1e-3,
                g.ebadf as f64 * 0.3e-3,
                g.ebadf / g.sweeps
            );
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

impl FdCloseSweep {
    /// What an expert reads in two lines and an elision (rstudio#2470): a thread reads a nofile
    /// limit of `min_sweep_fds` or more, and later the same thread's close of one of the last
    /// fds below that limit fails with EBADF. Nothing but a sweep closes fd 4095 after reading a
    /// limit of 4096; the time between the two lines (with timestamps) is what the sweep took.
    /// Only when the excerpt has no longer run of its own (`best`, at most 2 closes).
    fn limit_edge(&self, x: &crate::basis::Excerpt, best_closes: u64) -> Option<Vec<Finding>> {
        use syslint_report::Confidence;
        if best_closes > 2 {
            return None;
        }
        let (li, ci, limit, fd) = x.calls.iter().enumerate().find_map(|(ci, c)| {
            let fd = u64::try_from(c.fd?).ok()?;
            if c.sys != Sys::Close || !c.failed("EBADF") {
                return None;
            }
            let (li, limit) = x.calls[..ci]
                .iter()
                .enumerate()
                .rev()
                .filter(|(_, l)| l.tid == c.tid)
                .find_map(|(i, l)| Some((i, l.nofile?)))?;
            (limit >= self.cfg.min_sweep_fds && limit != u64::MAX && fd < limit && fd + 8 >= limit).then_some((li, ci, limit, fd))
        })?;
        let took = match (x.calls[li].ts_ns, x.calls[ci].ts_ns) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as f64 / 1e9),
            _ => None,
        };
        let sev = Severity::warning_if(limit >= self.cfg.warn_sweep_fds);
        let mut metrics = Metrics::new();
        metrics.count("closes", 1u64).count("ebadf", 1u64).count("highest_fd", fd).count("reach", limit.min(1 << 31));
        metrics.value_opt("sweep_s", took);
        let during = took.map_or(String::new(), |t| format!(", {t:.3} s after it"));
        Some(
            META.finding(
                sev,
                format!("closing fd {fd}, which was not open, right below the nofile limit of {limit} read before it{during}: the end of a sweep closing every fd up to the limit"),
            )
            .metrics(metrics)
            .lines(x.evidence(&[li, ci], 2))
            .in_excerpt(
                x,
                Confidence::Low,
                &format!("the excerpt shows the limit read and one failing close just below it, not the closes between (left out of the paste){}", if took.is_some() { "; the time between the two lines is the sweep's if nothing else ran" } else { "" }),
            ),
        )
    }
}

// The fixture tests are data: fixtures/fd-close-sweep/expect.toml, run by src/check/fixtures.rs.
