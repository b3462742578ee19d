//! `epoll-ctl-churn` (SL013): an event loop that changes its epoll interest set around every
//! read or write: `epoll_ctl(EPOLL_CTL_MOD)` to switch between EPOLLIN and EPOLLOUT per request,
//! or `EPOLL_CTL_ADD`/`EPOLL_CTL_DEL` around each wait for data.
//!
//! Per fd (of a process), from its first registration to its close: the epoll_ctl calls beyond
//! the one ADD it needs (and a last DEL) are re-registrations; the reads and writes on the fd are
//! its I/O. Summed per program.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use syslint_event::{Class, EpollCtl, Event, Ret, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("epoll_ctl_churn", struct EpollCtlChurn);

/// One registered fd, from its first EPOLL_CTL_ADD to its close.
#[derive(Clone, Default)]
pub struct Reg {
    ctl: u64,
    oneshot: u64,
    /// The thread that last changed the fd's registration.
    ctl_tid: u32,
    /// Reads and writes made by another thread than that one: the fd handed from a thread
    /// that waits for readiness to a thread that does the I/O.
    handed: u64,
    last_del: bool,
    ops: u64,
    timing: Timing,
    span: Span,
    evidence: EvidenceBuf,
}

/// The fds of one program.
#[derive(Clone, Default)]
pub struct Group {
    churn: u64,
    ctl: u64,
    oneshot: u64,
    /// Re-registrations of fds whose I/O other threads did (a hand-off design).
    handoff: u64,
    ops: u64,
    fds: u64,
    timing: Timing,
    span: Span,
    /// The evidence of the fd re-registered most.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group {
    evidence: merge,
    churn: sum,
    ctl: sum,
    oneshot: sum,
    handoff: sum,
    ops: sum,
    fds: sum,
    timing: merge,
    span: merge,
});

impl Hosted for EpollCtlChurn {
    type Thread = ();
    type Program = Group;
    /// One registered fd (its number), from its first EPOLL_CTL_ADD to its close.
    type Object = Reg;
    const MAX_OBJECTS: usize = MAX_FDS;

    /// An fd's life ended (closed, or its process ended): count its re-registrations.
    fn end_object(&mut self, s: &mut State<'_, Self>, _fd: u64, r: Reg) {
        // the one ADD every registered fd needs, and a last DEL before its close
        let needed = 1 + u64::from(r.last_del);
        let churn = r.ctl.saturating_sub(needed);
        // an fd registered a few times over a long life (a connection set up in two steps) is
        // not churning: it joins neither the count nor the I/O it is compared with
        if churn == 0 || (churn as f64) < self.cfg.min_per_op * r.ops as f64 {
            return;
        }
        // most of the fd's I/O done by other threads than the one registering it: a listener
        // thread that parks idle connections and hands the ready ones to workers (Apache's
        // event MPM), whose registration must change at each hand-over. No I/O at all in the
        // registering process: made elsewhere (a JVM attached with strace -p shows each thread
        // as a process of its own: Tomcat's poller registers, its workers read and write)
        let handed = r.handed * 2 > r.ops || r.ops == 0;
        s.program().merge(Group {
            churn,
            ctl: r.ctl,
            oneshot: r.oneshot,
            handoff: if handed { churn } else { 0 },
            ops: r.ops,
            fds: 1,
            timing: r.timing,
            span: r.span,
            evidence: Best::new(churn, r.evidence),
        });
    }

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        const ONESHOT: u32 = 1 << 30;
        // per (thread, fd) life: re-registrations (every epoll_ctl after the first ADD but the
        // DEL that ends it), the oneshot re-arms among them, and the reads and writes that moved
        // data or found none (EAGAIN)
        #[derive(Default)]
        struct Fd {
            ctls: u64,
            rereg: u64,
            oneshot: u64,
            ops: u64,
            idx: Vec<usize>,
        }
        let mut live: rustc_hash::FxHashMap<(u32, i32), Fd> = Default::default();
        let mut done: Vec<Fd> = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            let t = c.tid.0;
            if let Some(e) = c.epoll.filter(|_| c.sys == Sys::EpollCtl && c.ret == Some(0)) {
                let f = live.entry((t, e.fd)).or_default();
                f.ctls += 1;
                // a MOD is always a re-registration (the ADD may be before the excerpt); an ADD
                // after the fd's first (a DEL between) is one too
                if e.op == EpollCtl::MOD || (f.ctls > 1 && e.op == EpollCtl::ADD) {
                    f.rereg += 1;
                    f.oneshot += u64::from(e.events.is_some_and(|ev| ev & ONESHOT != 0));
                    f.idx.push(i);
                }
            } else if c.sys == Sys::Close {
                if let Some(f) = c.fd.and_then(|fd| live.remove(&(t, fd))) {
                    done.push(f);
                }
            } else if (c.sys.is(Class::READ) || c.sys.is(Class::WRITE)) && (c.ret.is_some_and(|r| r > 0) || c.failed("EAGAIN")) {
                if let Some(f) = c.fd.and_then(|fd| live.get_mut(&(t, fd))) {
                    f.ops += 1;
                }
            }
        }
        done.extend(live.into_values());
        // an fd counts when it re-registers at least once per four operations
        let churning: Vec<Fd> = done.into_iter().filter(|f| f.rereg > 0 && f.rereg as f64 >= self.cfg.min_per_op * f.ops as f64).collect();
        let rereg: u64 = churning.iter().map(|f| f.rereg).sum();
        let ops: u64 = churning.iter().map(|f| f.ops).sum();
        let oneshot: u64 = churning.iter().map(|f| f.oneshot).sum();
        if rereg < 3 {
            return Vec::new();
        }
        let per_op = rereg as f64 / ops.max(1) as f64;
        let by_design = oneshot * 2 >= rereg;
        let strong = rereg >= 6 && per_op >= self.cfg.warn_per_op && !by_design;
        let mut idx: Vec<usize> = churning.iter().flat_map(|f| f.idx.iter().copied()).collect();
        idx.sort_unstable();
        let (conf, why) = if strong {
            (Confidence::Medium, format!("{rereg} epoll_ctl calls on fds already registered, {per_op:.2} per read or write"))
        } else if by_design {
            (Confidence::Low, format!("{oneshot} of {rereg} re-registrations re-arm EPOLLONESHOT, the documented way to share fds between threads"))
        } else {
            (Confidence::Low, format!("{rereg} epoll_ctl calls on fds already registered, {per_op:.2} per read or write: too few, or fewer than one for every operation"))
        };
        META.finding(
            Severity::warning_if(strong),
            format!("fds re-registered with epoll around their I/O: {rereg} epoll_ctl re-registrations for {ops} reads and writes ({per_op:.2} each){}", if by_design { ", EPOLLONESHOT re-arms most of them" } else { "" }),
        )
        .metrics([("reregistrations", rereg.into()), ("io_ops", ops.into()), ("oneshot_rearms", oneshot.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        const IO: &[Sys] = &[
            Sys::Read, Sys::Write, Sys::Readv, Sys::Writev, Sys::Recvfrom, Sys::Sendto, Sys::Recvmsg, Sys::Sendmsg,
        ];
        let ctls = c.calls_of(&[Sys::EpollCtl]);
        // each connection needs an ADD and at most a DEL: what is beyond is re-registration
        let conns = c.calls_of(&[Sys::Accept, Sys::Accept4, Sys::Connect]);
        let beyond = ctls.saturating_sub(2 * conns);
        let io = c.calls_of(IO);
        if beyond < self.cfg.warn_churn || (beyond as f64) < self.cfg.min_per_op * io as f64 {
            return Vec::new();
        }
        META.finding(
            Severity::Info,
            format!("epoll_ctl about as often as reads and writes: {ctls} epoll_ctl for {io} reads and writes and {conns} new connections"),
        )
        .metrics([("epoll_ctl", ctls.into()), ("io_calls", io.into()), ("connections", conns.into())])
        .lines(count_lines(c, &[Sys::EpollCtl, Sys::EpollWait, Sys::Read, Sys::Write, Sys::Accept4, Sys::Connect]))
        .in_table(
            c,
            Confidence::Low,
            &format!("{beyond} epoll_ctl calls beyond an ADD and a DEL per connection; a table cannot show which are re-registrations (MOD) and which EPOLLONESHOT re-arms"),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if matches!(sc.ret, Ret::Unfinished) {
            return;
        }
        match sc.sys {
            Sys::EpollCtl => {
                let Some(e) = sc.epoll_ctl() else { return };
                if e.fd < 0 || sc.ret.is_err() {
                    return;
                }
                let Ok(fd) = u64::try_from(e.fd) else { return };
                // a life starts at a registration
                if e.op != EpollCtl::ADD && s.existing_object(fd).is_none() {
                    return;
                }
                let Some(r) = s.object_or(fd, || Reg { evidence: EvidenceBuf::new(EVIDENCE), ..Reg::default() }) else {
                    return;
                };
                r.ctl += 1;
                r.ctl_tid = ev.tid.0;
                r.last_del = e.op == EpollCtl::DEL;
                if e.op == EpollCtl::MOD && e.events.is_some_and(|v| v & EpollCtl::EPOLLONESHOT != 0) {
                    r.oneshot += 1;
                }
                if r.ctl > 1 {
                    r.timing.add(sc.dur_ns);
                }
                r.span.add(ev.ts_ns);
                r.evidence.push(ev);
            }
            Sys::Close => {
                let Some(fd) = cx.closed_object(sc) else { return };
                s.end_object(fd, self);
            }
            _ => {
                // I/O that moved data (an EAGAIN read is part of the waste, not of the work)
                if !matches!(sc.ret, Ret::Ok { val, .. } if val > 0) {
                    return;
                }
                let Some(fd) = sc.fd_num().and_then(|fd| u64::try_from(fd).ok()) else { return };
                if let Some(r) = s.existing_object(fd) {
                    r.ops += 1;
                    r.handed += u64::from(ev.tid.0 != r.ctl_tid);
                }
            }
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            if g.churn == 0 || g.churn < cfg.min_churn {
                return None;
            }
            let per_op = g.churn as f64 / g.ops.max(1) as f64;
            if per_op < cfg.min_per_op {
                return None;
            }
            // EPOLLONESHOT re-arms, or fds handed between a polling thread and the threads doing
            // their I/O: by design where threads share the instance
            let oneshot = g.oneshot * 2 > g.churn;
            let handoff = !oneshot && (g.oneshot + g.handoff) * 2 > g.churn;
            let severity = Severity::warning_if(!oneshot && !handoff && g.churn >= cfg.warn_churn && per_op >= cfg.warn_per_op);
            let mut m = Metrics::new();
            m.count("reregistrations", g.churn);
            m.count("epoll_ctl_calls", g.ctl);
            m.count("oneshot_rearms", g.oneshot);
            m.count("handoff_reregistrations", g.handoff);
            m.count("io_ops", g.ops);
            m.value("per_op", per_op);
            m.count("fds", g.fds);
            m.value_opt("epoll_ctl_seconds", g.timing.seconds());
            let fds = if g.fds == 1 { "1 fd".to_string() } else { format!("{} fds", g.fds) };
            let kind = if oneshot {
                " (mostly EPOLLONESHOT re-arms)"
            } else if handoff {
                " (mostly fds handed between a polling thread and the threads doing their I/O, by design)"
            } else {
                ""
            };
            let message = if g.ops == 0 {
                format!(
                    "{} epoll_ctl re-registrations of {fds} that the registering process never read or wrote: their I/O is made elsewhere (by a thread that a strace attach shows as a process of its own, or by another process), a hand-off",
                    g.churn
                )
            } else {
                format!(
                    "{} epoll_ctl re-registrations{kind} for {} reads and writes on {fds}: {per_op:.2} per I/O operation",
                    g.churn, g.ops
                )
            };
            let inside = match g.timing.seconds() {
                Some(s) => format!("{s:.3} s inside them ({})", cx.tracer.measured()),
                None => "time inside them unknown: no -T".to_string(),
            };
            let cost = format!(
                "{} system calls that only change what epoll watches ({inside}); each costs about as much as \
a small read or write on a local socket",
                g.churn
            );
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/epoll-ctl-churn/expect.toml, run by src/check/fixtures.rs.
