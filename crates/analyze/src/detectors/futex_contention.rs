//! `futex-contention` (SL021): threads of one process queueing on the same lock: many waits
//! in futex(FUTEX_WAIT) on one address by threads that also wake it (each waiter, once it has
//! the lock, releases it and wakes the next), EAGAIN retries, and most of the waiting threads'
//! time spent blocked there.
//!
//! Per process and futex address, each thread's waits and wakes are counted. An address is a
//! contended lock when at least `min_threads` threads both waited on it and woke it: a mutex's
//! waiters are also its releasers, whereas a condition variable of an idle pool is waited on by
//! the workers and woken by the producer, and a runtime's per-thread park word is waited on by
//! its one owner. Contended locks with `min_waits` waits or more are summed per program.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Event, FutexCmd, Ret, Syscall, Tid};
use syslint_report::{Finding, Severity};

crate::detector!("futex_contention", struct FutexContention);

/// A wake of every waiter (pthread_cond_broadcast, notifyAll): INT_MAX.
const WAKE_ALL: i64 = i32::MAX as i64;

/// One thread's use of an address.
#[derive(Clone, Copy)]
struct Use {
    tid: Tid,
    waits: u64,
    blocked: u64,
    eagain: u64,
    wakes: u64,
    woken: u64,
}

/// One futex address of one process.
#[derive(Clone, Default)]
pub struct Addr {
    users: Vec<Use>,
    /// Durations of each thread's waits, kept per thread (only the lock's threads count).
    timing: Vec<Timing>,
    span: Span,
    evidence: EvidenceBuf,
}

/// Contended locks of one program.
#[derive(Clone, Default)]
pub struct Group {
    locks: u64,
    waits: u64,
    blocked: u64,
    eagain: u64,
    wakes: u64,
    woken: u64,
    /// Most threads on one lock.
    threads: u64,
    timing: Timing,
    /// Threads x seconds of each lock's window (the waiting threads' time).
    exposure: f64,
    timed: bool,
    span: Span,
    /// The evidence and the address of the lock waited on most.
    largest: Best<(EvidenceBuf, u64)>,
    broadcasts: u64,
}

crate::merge!(Group {
    largest: merge,
    locks: sum,
    waits: sum,
    blocked: sum,
    eagain: sum,
    wakes: sum,
    woken: sum,
    threads: max,
    timing: merge,
    exposure: sum,
    timed: or,
    span: merge,
    broadcasts: sum,
});

impl Hosted for FutexContention {
    type Thread = ();
    type Program = Group;
    type Object = Addr;
    const MAX_OBJECTS: usize = MAX_ADDRS;

    /// An address is done with (its process ended, or the trace): keep it when it is a
    /// contended lock.
    fn end_object(&mut self, s: &mut State<'_, Self>, addr: u64, a: Addr) {
        // the lock's threads: those that waited on it and woke it
        let both: Vec<usize> = (0..a.users.len()).filter(|&i| a.users[i].waits > 0 && a.users[i].wakes > 0).collect();
        if (both.len() as u64) < self.cfg.min_threads.max(2) {
            return;
        }
        let waits: u64 = both.iter().map(|&i| a.users[i].waits).sum();
        if waits < self.cfg.min_waits.max(1) {
            return;
        }
        let mut timing = Timing::default();
        for &i in &both {
            timing.merge(a.timing[i]);
        }
        let secs = a.span.seconds();
        if let Some(b) = timing.seconds() {
            if secs > 0.0 && b / (both.len() as f64 * secs) < self.cfg.min_blocked_share {
                return;
            }
        }
        let sum = |f: fn(&Use) -> u64| both.iter().map(|&i| f(&a.users[i])).sum::<u64>();
        let g = Group {
            locks: 1,
            waits,
            blocked: sum(|u| u.blocked),
            eagain: sum(|u| u.eagain),
            // wakes and woken by anyone: a releaser outside the waiting set hands over too
            wakes: a.users.iter().map(|u| u.wakes).sum(),
            woken: a.users.iter().map(|u| u.woken).sum(),
            threads: both.len() as u64,
            timing,
            exposure: both.len() as f64 * secs,
            timed: secs > 0.0,
            span: a.span,
            largest: Best::new(waits, (a.evidence, addr)),
            broadcasts: 0,
        };
        s.program().merge(g);
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::SysRows;
        use syslint_event::Sys;
        use syslint_report::Confidence;
        // per thread: the futex calls and all calls of each table
        let busy: Vec<(&str, u64, u64)> = c
            .per_task
            .iter()
            .map(|t| {
                let f: u64 = t.rows.calls_of(&[Sys::Futex]);
                let all: u64 = t.rows.iter().map(|r| r.calls).sum();
                (t.task.as_str(), f, all)
            })
            .filter(|&(_, f, all)| f >= 100 && f * 4 >= all)
            .collect();
        if busy.len() < 3 {
            return Vec::new();
        }
        let waits: u64 = busy.iter().map(|b| b.1).sum();
        META.finding(
            Severity::Info,
            format!("{} threads each making hundreds of futex calls: {waits} in all", busy.len()),
        )
        .metrics([("threads", (busy.len() as u64).into()), ("futex_calls", waits.into())])
        .lines(busy.iter().take(5).map(|(t, n, all)| format!("{t}: {n} futex of {all} calls")).collect())
        .in_table(
            c,
            Confidence::Low,
            &format!(
                "{} threads with 100 futex calls or more each, a quarter of their calls or more: threads handing something between them, not idle ones; a table cannot say it is one lock (a busy work queue's condition variable looks the same), nor how long each wait was",
                busy.len()
            ),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, _cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(f) = sc.futex() else { return };
        if f.cmd == FutexCmd::Other || matches!(sc.ret, Ret::Unfinished | Ret::Unknown) {
            return;
        }
        if f.cmd == FutexCmd::Wake && f.val >= WAKE_ALL {
            // a broadcast: counted for the program whatever the address (the process is not
            // counted among the program's for it)
            s.program_uncounted().broadcasts += 1;
        }
        let make = || Addr { evidence: EvidenceBuf::new(EVIDENCE), ..Addr::default() };
        let Some(a) = s.object_or(f.addr, make) else { return };
        let i = match a.users.iter().position(|u| u.tid == ev.tid) {
            Some(i) => i,
            None if a.users.len() < MAX_THREADS_PER_ADDR => {
                a.users.push(Use { tid: ev.tid, waits: 0, blocked: 0, eagain: 0, wakes: 0, woken: 0 });
                a.timing.push(Timing::default());
                a.users.len() - 1
            }
            None => return,
        };
        let u = &mut a.users[i];
        match f.cmd {
            FutexCmd::Wait => {
                u.waits += 1;
                match sc.ret.errno() {
                    Some("EAGAIN" | "EWOULDBLOCK") => u.eagain += 1,
                    None | Some("ETIMEDOUT") => {
                        u.blocked += 1;
                        a.timing[i].add(sc.dur_ns);
                    }
                    Some(_) => {}
                }
            }
            _ => {
                u.wakes += 1;
                u.woken += sc.ret.value().unwrap_or(0).max(0) as u64;
            }
        }
        a.span.add(ev.ts_ns);
        a.evidence.push(ev);
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.locks == 0 {
                return None;
            }
            let blocked_s = g.timing.seconds();
            let share = match blocked_s {
                Some(b) if g.timed && g.exposure > 0.0 => Some((b / g.exposure).min(1.0)),
                _ => None,
            };
            // counts decide, the share (the same under strace and eBPF within a factor) can only hold
            // a warning back
            let severity = Severity::warning_if(g.waits >= cfg.warn_waits && share.is_none_or(|s| s >= cfg.warn_blocked_share));
            let wpw = g.wakes as f64 / g.waits as f64;
            let mut m = Metrics::new();
            m.count("locks", g.locks);
            m.count("waits", g.waits);
            m.count("blocked_waits", g.blocked);
            m.count("eagain", g.eagain);
            m.count("wakes", g.wakes);
            m.count("woken", g.woken);
            m.value("wakes_per_wait", wpw);
            m.count("waiting_threads", g.threads);
            m.value_opt("blocked_seconds", blocked_s);
            m.value_opt("blocked_share", share);
            if g.broadcasts > 0 {
                m.count("broadcasts", g.broadcasts);
            }
            let addr = g.largest.get().map_or(0, |b| b.1);
            let locks = if g.locks == 1 { format!("one lock ({addr:#x})") } else { format!("{} locks", g.locks) };
            let mut message = format!(
                "{} threads queue on {locks}: {} futex waits by threads that also release it, {} wakes",
                g.threads, g.waits, g.wakes
            );
            if let Some(s) = share {
                message.push_str(&format!(", {:.0}% of their time blocked", s * 100.0));
            }
            let time = match blocked_s {
                Some(b) => format!("{b:.3} s of thread time blocked in futex waits ({})", cx.tracer.measured()),
                None => "time blocked unknown (no -T)".to_string(),
            };
            // a barrier's or a shutdown's broadcast is not the pattern: broadcasts must be a
            // share of the hand-overs to be named
            let hint = if g.broadcasts >= 10 && g.broadcasts * 20 >= g.waits {
                format!(
                    "; {} broadcasts woke every waiter of a condition variable, to queue on its mutex: signal one",
                    g.broadcasts
                )
            } else if g.locks == 1 {
                "; one address: a global lock, shard it".to_string()
            } else {
                String::new()
            };
            let cost = format!(
                "{time}; {} hand-overs, each a wake-up and a context switch, {} lost races (EAGAIN){hint}",
                g.blocked, g.eagain
            );
            Some(
                META.finding(severity, message)
                    .over(&g.span)
                    .metrics(m)
                    .evidence(&g.largest.get().map(|b| &b.0), cx.clock)
                    .cost(cost),
            )
        })
    }
}

// The fixture tests are data: fixtures/futex-contention/expect.toml, run by src/check/fixtures.rs.
