//! `ioctl-poll` (SL026): a terminal, pipe or device watched by asking it with ioctl again and
//! again while nothing happens: FIONREAD answering 0, TCGETS answering the same mode, on an fd
//! whose read() already returned 0 (EOF), instead of waiting for readiness.
//!
//! Per thread and fd, the last answer of a status ioctl (FIONREAD, TIOCOUTQ, TCGETS,
//! TIOCGWINSZ, TIOCMGET, ...) is kept, and whether a read of the fd returned 0. A *look* is a
//! status ioctl answering what it answered last time on the fd (nothing changed) or asked of an
//! fd at EOF, or a read returning 0 on an fd already at EOF (the EOF ignored). A thread whose
//! looks make at least `min_share` of its calls is polling; its looks are summed per program.
//! A loop that never blocks (no wait at all) on FIONREAD alone is busy-poll's (SL001): what this
//! detector adds is the loop whose waits do not wait for the fd (a poll that returns at once
//! because the fds hung up, a sleep between looks) and the looks at an fd at EOF.

use super::EvidenceBuf;
use crate::host::{Best, Groups, Hosted, Merge, State};
use crate::kit::{secs, Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use std::hash::{Hash, Hasher};
use syslint_event::{Class, Event, IoctlReq, Ret, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("ioctl_poll", struct IoctlPoll);

/// The ioctl requests that only ask (the answer is the state of the fd): asked again with the
/// same answer, they found nothing new. FIONREAD is TIOCINQ and SIOCINQ by number; strace names
/// it FIONREAD.
const QUERIES: &[&str] = &[
    "FIONREAD",
    "TIOCINQ",
    "SIOCINQ",
    "TIOCOUTQ",
    "SIOCOUTQ",
    "TCGETS",
    "TCGETS2",
    "TCGETA",
    "TIOCGWINSZ",
    "TIOCMGET",
    "TIOCGICOUNT",
    "TIOCGSERIAL",
    "TIOCGPGRP",
];

/// Native cost of one look in a loop that never sleeps, measured without strace
/// (lab/ioctl-poll/README.md: a round of poll + 6 x (FIONREAD + read) on pipes at EOF, 13 calls
/// in 6.8 us).
const NATIVE_LOOK_NS: f64 = 520.0;
/// Native CPU of the wake-up when a look follows a sleep (a timer expiring, the thread scheduled
/// again): 19.5 us of CPU per FIONREAD + 1 ms nanosleep look, less the ioctl's 0.8 us.
const NATIVE_WAKEUP_NS: f64 = 18_700.0;

/// The index of a status request in [`QUERIES`] (strace may print two names: `A or B`).
pub(crate) fn query_index(req: &str) -> Option<usize> {
    req.split(" or ").find_map(|r| QUERIES.iter().position(|q| *q == r.trim()))
}

/// A status ioctl's request and what it answered, hashed; `None` for other ioctls.
fn query_key(sc: &Syscall) -> Option<(usize, u64)> {
    let mut h = rustc_hash::FxHasher::default();
    let q = match sc.arg(1) {
        Some(req) => {
            let q = query_index(req)?;
            sc.arg(2).unwrap_or("").hash(&mut h);
            q
        }
        // raw (eBPF) arguments: FIONREAD by number, its answer not captured
        None if sc.ioctl_req() == Some(IoctlReq::Fionread) => 0,
        None => return None,
    };
    if let Ret::Ok { val, .. } = sc.ret {
        val.hash(&mut h);
    }
    Some((q, h.finish()))
}

/// What the thread knows of one fd.
#[derive(Clone, Copy, Default)]
struct Fd {
    fd: i32,
    /// The last status answer (request and answer hashed together), 0: none yet.
    key: u64,
    /// A read returned 0.
    eof: bool,
    /// A look was counted on it.
    looked: bool,
}

/// Looks of a thread, then of a program.
#[derive(Clone, Default)]
pub struct Looks {
    /// Status ioctls answering the same again, or asked of an fd at EOF.
    queries: u64,
    /// Reads returning 0 on an fd already at EOF.
    eof_reads: u64,
    /// Looks that came after a sleep or a wait that expired (a wake-up paid for the look).
    wakeups: u64,
    /// Fds looked at.
    fds: u64,
    /// Calls of the threads that polled.
    calls: u64,
    threads: u64,
    /// The requests looked with (bits of [`QUERIES`]).
    reqs: u32,
    timing: Timing,
    span: Span,
}

crate::merge!(Looks {
    queries: sum,
    eof_reads: sum,
    wakeups: sum,
    fds: sum,
    calls: sum,
    threads: sum,
    reqs: or,
    timing: merge,
    span: merge,
});

impl Looks {
    fn looks(&self) -> u64 {
        self.queries + self.eof_reads
    }
}

/// One thread.
#[derive(Clone, Default)]
pub struct Thread {
    fds: Vec<Fd>,
    /// A sleep, or a wait that expired, since the thread's last look.
    waited: bool,
    l: Looks,
    evidence: EvidenceBuf,
}

impl Thread {
    fn fd(&mut self, fd: i32) -> Option<&mut Fd> {
        if let Some(i) = self.fds.iter().position(|f| f.fd == fd) {
            return Some(&mut self.fds[i]);
        }
        if self.fds.len() >= MAX_FDS {
            return None;
        }
        self.fds.push(Fd { fd, ..Fd::default() });
        self.fds.last_mut()
    }
}

/// The looks of a program.
#[derive(Clone, Default)]
pub struct Group {
    l: Looks,
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group { l: merge, evidence: merge });

impl IoctlPoll {
    /// The seconds a fix saves: the time inside the looks (when every one was timed), else
    /// the looks at their native cost; and the wake-ups that only served a look.
    fn seconds(l: &Looks) -> f64 {
        let inside = l.timing.seconds().unwrap_or(l.looks() as f64 * NATIVE_LOOK_NS / 1e9);
        inside + l.wakeups as f64 * NATIVE_WAKEUP_NS / 1e9
    }

    fn names(reqs: u32) -> String {
        let v: Vec<&str> = QUERIES.iter().enumerate().filter(|(i, _)| reqs & (1 << i) != 0).map(|(_, q)| *q).collect();
        v.join("/")
    }
}

impl Hosted for IoctlPoll {
    type Thread = Thread;
    type Program = Group;
    type Object = ();

    // ---- less than a full trace (issue 14) ----

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per thread and fd: the last answer, at EOF, and the last call on it
        struct F {
            tid: syslint_event::Tid,
            fd: i32,
            last: Option<(String, String)>,
            eof: bool,
            /// The last call on the fd was FIONREAD answering [0].
            said_empty: bool,
        }
        let mut fds: Vec<F> = Vec::new();
        let (mut repeats, mut eof_pairs, mut waits, mut calls) = (0u64, 0u64, 0u64, 0u64);
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            calls += 1;
            let waited = matches!(c.sys, Sys::Nanosleep | Sys::ClockNanosleep)
                || (c.sys.is(Class::POLL) && c.ret == Some(0) && c.timeout.is_some_and(|t| !t.is_zero()));
            if waited {
                waits += 1;
                continue;
            }
            let Some(fd) = c.fd else { continue };
            let query = c.ioctl.as_ref().filter(|(req, _)| query_index(req).is_some());
            let is_read = matches!(c.sys, Sys::Read | Sys::Readv);
            if query.is_none() && !is_read {
                continue;
            }
            let j = fds.iter().position(|f| f.tid == c.tid && f.fd == fd).unwrap_or_else(|| {
                fds.push(F { tid: c.tid, fd, last: None, eof: false, said_empty: false });
                fds.len() - 1
            });
            let f = &mut fds[j];
            if let Some(q) = query {
                if c.errno.is_some() {
                    continue;
                }
                if f.eof || f.last.as_ref() == Some(q) {
                    repeats += 1;
                    idx.push(i);
                }
                f.said_empty = query_index(&q.0) == Some(0) && q.1 == "[0]";
                f.last = Some(q.clone());
            } else if c.ret == Some(0) && c.requested != Some(0) {
                if f.said_empty {
                    eof_pairs += 1;
                    if !idx.contains(&i) {
                        idx.push(i);
                    }
                }
                if f.eof {
                    repeats += 1;
                    if !idx.contains(&i) {
                        idx.push(i);
                    }
                }
                f.eof = true;
                f.said_empty = false;
            } else if c.ret.is_some_and(|r| r > 0) {
                // data came: the fd is not idle
                f.eof = false;
                f.said_empty = false;
                f.last = None;
            }
        }
        idx.sort_unstable();
        let shown = x.evidence(&idx, 4);
        let busy = waits * 4 < repeats;
        if repeats >= 8 && repeats * 3 >= calls {
            let strong = repeats >= 20;
            let severity = Severity::warning_if(strong && busy && repeats * 2 >= calls);
            let why = if busy {
                format!("{repeats} ioctl status queries (or reads at EOF) answering what they answered before on the same fds, with no wait between them: a loop looking at idle fds; the excerpt cannot show for how long")
            } else {
                format!("{repeats} ioctl status queries (or reads at EOF) answering the same again, with a sleep or an expired wait between looks: the fds are polled on a timer, which costs a wake-up per look, not a core")
            };
            return META
                .finding(severity, format!("fds polled with ioctl while idle: {repeats} looks answering the same again in {calls} calls"))
                .about_the_thread()
                .metrics([("looks", repeats.into()), ("calls", calls.into()), ("waits", waits.into())])
                .lines(shown)
                .in_excerpt(x, Confidence::medium_if(strong), &why);
        }
        if eof_pairs >= 3 {
            let why = format!("{eof_pairs} times FIONREAD answered 0 and the read that followed returned 0, which is EOF: the fds are at end of file and still watched; the excerpt shows no fd asked twice, so not that the loop goes on");
            return META
                .finding(Severity::Info, format!("fds at EOF still watched: FIONREAD = 0 then read() = 0 on {eof_pairs} fds"))
                .about_the_thread()
                .metrics([("eof_pairs", eof_pairs.into()), ("calls", calls.into())])
                .lines(shown)
                .in_excerpt(x, Confidence::Low, &why);
        }
        Vec::new()
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, wall_times, SysRows};
        use syslint_report::Confidence;
        let ioctls = c.calls_of(&[Sys::Ioctl]);
        let total = c.total_calls();
        // a table limited to some calls cannot show ioctl's share, nor the waits
        if ioctls < self.cfg.min_looks.max(1) || ioctls * 3 < total {
            return Vec::new();
        }
        let waits_of: &[Sys] = &[
            Sys::Poll,
            Sys::Ppoll,
            Sys::Select,
            Sys::NewSelect,
            Sys::Pselect6,
            Sys::EpollWait,
            Sys::EpollPwait,
            Sys::EpollPwait2,
            Sys::Nanosleep,
            Sys::ClockNanosleep,
        ];
        let waits = c.calls_of(waits_of);
        // a wait per look or so: the looks are paced by waits (a timer, or readiness)
        if waits * 4 > ioctls {
            return Vec::new();
        }
        // with wall-clock times, waits holding most of the time did wait
        if wall_times(c) {
            let all: f64 = c.rows.iter().filter_map(|r| r.seconds).sum();
            if all > 0.0 && c.seconds_of(waits_of) >= all / 2.0 {
                return Vec::new();
            }
        }
        let reads = c.calls_of(&[Sys::Read]);
        let why = format!(
            "ioctl is {ioctls} of {total} calls with {waits} waiting calls: a loop asking fds with ioctl (FIONREAD, TCGETS) instead of waiting for them; a table cannot show the requests, the answers or the fds, and a program driving a device with ioctl looks the same"
        );
        META.finding(
            Severity::Info,
            format!("ioctl {ioctls} of {total} calls, with {waits} waits and {reads} reads: fds asked instead of waited for"),
        )
        .metrics([("ioctls", ioctls.into()), ("calls", total.into()), ("waits", waits.into())])
        .lines(count_lines(c, &[Sys::Ioctl, Sys::Read, Sys::Poll, Sys::Select, Sys::EpollWait, Sys::Nanosleep, Sys::ClockNanosleep]))
        .in_table(c, Confidence::Low, &why)
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(th) = s.thread_or(|| Thread { evidence: EvidenceBuf::new(EVIDENCE), ..Thread::default() }) else { return };
        let look = match sc.sys {
            Sys::Ioctl => {
                if sc.ret.is_err() {
                    return;
                }
                let (Some(fd), Some((q, key))) = (sc.fd_num(), query_key(sc)) else { return };
                // 0 marks "no answer yet"
                let key = key.max(1);
                let Some(f) = th.fd(fd) else { return };
                let look = f.eof || f.key == key;
                f.key = key;
                if look {
                    f.looked = true;
                    th.l.queries += 1;
                    th.l.reqs |= 1 << q;
                }
                look
            }
            Sys::Read | Sys::Readv => {
                let (Some(fd), Some(n)) = (sc.fd_num(), sc.ret.value()) else { return };
                if n > 0 {
                    // data came: what was asked before says nothing now
                    if let Some(i) = th.fds.iter().position(|f| f.fd == fd) {
                        th.fds[i].eof = false;
                        th.fds[i].key = 0;
                    }
                    return;
                }
                if n < 0 || sc.requested_bytes() == Some(0) {
                    return;
                }
                let Some(f) = th.fd(fd) else { return };
                let look = f.eof;
                f.eof = true;
                if look {
                    f.looked = true;
                    th.l.eof_reads += 1;
                }
                look
            }
            Sys::Close => {
                if let Some(fd) = cx.closed_fd(sc) {
                    if let Some(i) = th.fds.iter().position(|f| f.fd == fd) {
                        th.fds.swap_remove(i);
                    }
                }
                return;
            }
            Sys::Nanosleep | Sys::ClockNanosleep => {
                th.waited = true;
                return;
            }
            // a wait that expired slept; one that found fds ready at once did not
            _ if sc.sys.is(Class::POLL) => {
                if sc.ret.value() == Some(0) && sc.timeout().is_some_and(|t| !t.is_zero()) {
                    th.waited = true;
                }
                return;
            }
            _ => return,
        };
        if look {
            if std::mem::take(&mut th.waited) {
                th.l.wakeups += 1;
            }
            th.l.timing.add(sc.dur_ns);
            th.l.span.add(ev.ts_ns);
            th.evidence.push(ev);
        }
    }

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(mut th) = s.existing().map(std::mem::take) else { return };
        // all the thread's calls, not only those handed to this detector
        th.l.calls = s.model().thread_calls(s.tid());
        let looks = th.l.looks();
        // a thread that works and asks its terminal now and then is not polling
        if looks == 0 || (looks as f64) < self.cfg.min_share * th.l.calls as f64 {
            return;
        }
        th.l.fds = th.fds.iter().filter(|f| f.looked).count() as u64;
        th.l.threads = 1;
        s.program().merge(Group { evidence: Best::new(looks, th.evidence), l: th.l });
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let cfg = &self.cfg;
        groups.findings(cx.model, |g| {
            let l = &g.l;
            let looks = l.looks();
            if looks < cfg.min_looks.max(1) {
                return None;
            }
            let saved = Self::seconds(l);
            let mut m = Metrics::new();
            m.count("looks", looks);
            m.count("queries", l.queries);
            m.count("eof_reads", l.eof_reads);
            m.count("wakeups", l.wakeups);
            m.count("fds", l.fds);
            m.count("threads", l.threads);
            m.count("calls", l.calls);
            m.text("requests", &Self::names(l.reqs));
            m.value_opt("syscall_seconds", l.timing.seconds());
            m.value("poll_seconds", saved);
            let reqs = match Self::names(l.reqs) {
                r if r.is_empty() => String::new(),
                r => format!(" {r}"),
            };
            let eof = if l.eof_reads > 0 { format!(", {} reads of fds already at EOF", l.eof_reads) } else { String::new() };
            let message = format!(
                "fds polled with ioctl while idle: {}{reqs} queries answering the same again on {} fds{eof}",
                l.queries, l.fds
            );
            let inside = match l.timing.seconds() {
                Some(s) => format!("{} inside the looks ({})", secs(s), cx.tracer.measured()),
                None => format!("{looks} looks at about 0.5 us each natively (time unknown: no -T)"),
            };
            let wake = if l.wakeups > 0 {
                format!(", and {} wake-ups from a sleep only to look (about 19 us of CPU each natively)", l.wakeups)
            } else {
                String::new()
            };
            let cost = format!("{inside}{wake}: about {} a wait for readiness would not spend", secs(saved));
            let severity = Severity::warning_if(looks >= cfg.warn_looks);
            Some(META.finding(severity, message).over(&l.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::query_index;

    #[test]
    fn status_requests_are_told_from_others() {
        assert_eq!(query_index("FIONREAD"), Some(0));
        assert_eq!(query_index("TCGETS"), Some(5));
        // strace names a number two ways: the second is the terminal's request
        assert_eq!(query_index("SNDCTL_TMR_TIMEBASE or TCGETS"), Some(5));
        assert_eq!(query_index("SNDCTL_TMR_START or TCSETS"), None);
        assert_eq!(query_index("TIOCGPTN"), None);
    }
}

// The fixture tests are data: fixtures/ioctl-poll/expect.toml, run by src/check/fixtures.rs.
