//! `busy-poll` (SL001): a thread that waits for something by calling, again and again, syscalls
//! that return at once with nothing: zero-timeout polls that find nothing ready, non-blocking
//! reads/accepts that fail with EAGAIN, and identical cheap calls (rt_sigaction, getppid,
//! ...), with no blocking wait in between.
//!
//! Per thread, consecutive "spin" calls form a window; the window ends at a real wait (a poll
//! family call with a non-zero timeout, a sleep, a futex wait), at a call that blocked (`-T`),
//! at an idle gap between two calls (timestamps), or after a run of other calls. Windows with
//! enough spins at a high enough rate are reported, summed per thread.

use super::Evidence;
use crate::host::{Groups, Hosted, State};
use crate::kit::{Metrics, Timing, window};
use crate::registry::{self, Ctx, FinishCtx};
use std::hash::{Hash, Hasher};
use syslint_event::{Class, Clock, Event, FcntlCmd, FutexOp, IoctlReq, Tid, Ret, Sys, Syscall, Timeout, WaitOptions};
use syslint_report::{Finding, Severity, Subject, SubjectKind};

crate::detector!("busy_poll", BusyPoll { cfg, done: Vec::new() });

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    /// A zero-timeout poll that found nothing.
    EmptyPoll,
    /// Non-blocking I/O that failed with EAGAIN.
    Eagain,
    /// A cheap call identical to one the thread made a moment ago.
    Repeat,
    /// A wait that blocks (or would have): ends a window.
    Wait,
    /// Real work done: data read or written, a connection accepted or made. Ends a window: a
    /// thread that checks for readiness between transfers is not waiting by spinning.
    Progress,
    /// Anything else.
    Other,
}

/// How many leading arguments make two cheap calls "the same", for the calls that count when
/// repeated; `None` for the rest.
fn repeat_key_args(sc: &Syscall) -> Option<usize> {
    Some(match sc.sys {
        Sys::RtSigaction | Sys::RtSigprocmask | Sys::ClockGetres => 1,
        // the parent changes when it dies (a loop waiting to be re-parented); getpid, gettid,
        // getuid and their kin never change, so asking again polls nothing
        Sys::Getppid => 0,
        Sys::Getsockopt => 3,
        Sys::Fcntl | Sys::Fcntl64 if sc.fcntl_cmd() == Some(FcntlCmd::Get) => 2,
        Sys::Ioctl if sc.ioctl_req() == Some(IoctlReq::Fionread) => 2,
        Sys::Wait4 | Sys::Waitid | Sys::Waitpid
            if sc.wait_options().is_some_and(|o| o.contains(WaitOptions::NOHANG)) =>
        {
            1
        }
        _ => return None,
    })
}

fn is_eagain(ret: &Ret) -> bool {
    matches!(ret.errno(), Some("EAGAIN" | "EWOULDBLOCK"))
}

/// Classify a call; `key` gets the identity hash of a repeatable cheap call.
fn classify(sc: &Syscall, key: &mut Option<u64>) -> Kind {
    let class = sc.sys.class();
    if class.has(Class::POLL) {
        return match sc.timeout() {
            Some(t) if t.is_zero() => match sc.ret {
                Ret::Ok { val: 0, .. } => Kind::EmptyPoll,
                _ => Kind::Other,
            },
            Some(Timeout::Infinite | Timeout::Ns(_)) => Kind::Wait,
            None => Kind::Other,
        };
    }
    if is_eagain(&sc.ret)
        && (class.has(Class::READ)
            || class.has(Class::WRITE)
            || matches!(sc.sys, Sys::Accept | Sys::Accept4 | Sys::Recvmmsg | Sys::Sendmmsg))
    {
        return Kind::Eagain;
    }
    if let Some(n) = repeat_key_args(sc) {
        let mut h = rustc_hash::FxHasher::default();
        (sc.sys as u16).hash(&mut h);
        sc.hash_args(n, &mut h);
        match &sc.ret {
            Ret::Ok { val, .. } => val.hash(&mut h),
            Ret::Err { errno, .. } => errno.hash(&mut h),
            _ => 0u8.hash(&mut h),
        }
        *key = Some(h.finish());
        return Kind::Other;
    }
    let moved = matches!(sc.ret, Ret::Ok { val, .. } if val > 0);
    if moved && (class.has(Class::READ) || class.has(Class::WRITE))
        || (matches!(sc.ret, Ret::Ok { val, .. } if val >= 0) && matches!(sc.sys, Sys::Accept | Sys::Accept4 | Sys::Connect))
    {
        return Kind::Progress;
    }
    match sc.sys {
        Sys::Nanosleep | Sys::ClockNanosleep | Sys::Pause | Sys::RtSigsuspend | Sys::RtSigtimedwait => Kind::Wait,
        Sys::RestartSyscall | Sys::Semop => Kind::Wait,
        Sys::Wait4 | Sys::Waitid | Sys::Waitpid => Kind::Wait,
        Sys::Futex | Sys::FutexTime64 if sc.futex_op() == Some(FutexOp::Wait) => Kind::Wait,
        _ => Kind::Other,
    }
}

/// The first fd a spinning call waits on: poll's `fd=N`, select's first set member, the fd
/// argument of a read/accept. `None` for epoll (the epoll fd says nothing) and cheap calls.
fn waited_fd(sc: &Syscall) -> Option<i32> {
    match sc.sys {
        Sys::Poll | Sys::Ppoll | Sys::Select | Sys::NewSelect | Sys::Pselect6 => sc.polled_fds().map(|p| p.first),
        Sys::EpollWait | Sys::EpollPwait | Sys::EpollPwait2 => None,
        _ => sc.fd_num().filter(|&n| n >= 0),
    }
}

#[derive(Clone, Default)]
struct Window {
    first_ts: Option<i64>,
    last_end: Option<i64>,
    spins: u64,
    polls: u64,
    eagain: u64,
    repeats: u64,
    others: u64,
    other_run: u32,
    spin_timing: Timing,
    top: Vec<(Sys, Kind, u64)>,
    fd: Option<i32>,
    target: Option<String>,
    evidence: Vec<Evidence>,
}

impl Window {
    fn seconds(&self) -> f64 {
        match (self.first_ts, self.last_end) {
            (Some(a), Some(b)) => (b - a).max(0) as f64 / 1e9,
            _ => 0.0,
        }
    }
}

/// What a thread's reported windows add up to.
#[derive(Clone, Default)]
struct Agg {
    windows: u64,
    spins: u64,
    polls: u64,
    eagain: u64,
    repeats: u64,
    calls: u64,
    seconds: f64,
    longest: f64,
    spin_timing: Timing,
    timed: bool,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    top: Vec<(Sys, Kind, u64)>,
    target: Option<String>,
    /// Evidence of the largest window, and the call that ended it.
    evidence: Vec<Evidence>,
    end_line: Option<Evidence>,
    best_spins: u64,
}

/// A thread: its current window and what its reported windows add up to.
#[derive(Clone, Default)]
pub struct Thread {
    first_ts: Option<i64>,
    last_end: Option<i64>,
    prev_end: Option<i64>,
    recent: [u64; 4],
    recent_n: usize,
    win: Option<Window>,
    agg: Option<Agg>,
}

#[derive(Clone)]
struct Done {
    label: String,
    about: Subject,
    thread_seconds: f64,
    agg: Agg,
}

/// Findings are per thread, so the detector keeps the threads that qualified itself (the host
/// keeps the threads while they run; nothing is summed per program).
#[derive(Clone)]
pub struct BusyPoll {
    cfg: Config,
    done: Vec<Done>,
}

impl BusyPoll {
    /// Close the thread's window: keep it when it qualifies. `end` is the call that ended it.
    fn close(cfg: &Config, th: &mut Thread, end: Option<&Event>) {
        let Some(w) = th.win.take() else {
            return;
        };
        let calls = w.spins + w.others;
        let secs = w.seconds();
        let timed = w.first_ts.is_some() && w.last_end.is_some();
        // only repeated cheap calls: the thread may be working and just making a cheap call
        // often (a fork check, a signal mask around work), so they must be most of the window's
        // calls and come fast
        let repeat_only = w.repeats == w.spins;
        let min_rate = if repeat_only { cfg.min_repeat_only_spins_per_sec } else { cfg.min_spins_per_sec };
        let rate_ok = !timed || secs <= 0.0 || w.spins as f64 / secs >= min_rate;
        let share = if repeat_only { cfg.min_repeat_only_share } else { cfg.min_spin_share };
        if w.spins < cfg.min_spins || (w.spins as f64) < share * calls as f64 || !rate_ok {
            return;
        }
        let a = th.agg.get_or_insert_with(Agg::default);
        a.windows += 1;
        a.spins += w.spins;
        a.polls += w.polls;
        a.eagain += w.eagain;
        a.repeats += w.repeats;
        a.calls += calls;
        a.seconds += secs;
        a.longest = a.longest.max(secs);
        a.spin_timing.merge(w.spin_timing);
        a.timed |= timed;
        if a.first_ts.is_none() {
            a.first_ts = w.first_ts;
        }
        if w.last_end.is_some() {
            a.last_ts = w.last_end;
        }
        for &(sys, kind, n) in &w.top {
            match a.top.iter_mut().find(|t| t.0 == sys && t.1 == kind) {
                Some(t) => t.2 += n,
                None => a.top.push((sys, kind, n)),
            }
        }
        if a.target.is_none() {
            a.target = w.target.clone();
        }
        if w.spins > a.best_spins {
            a.best_spins = w.spins;
            a.evidence = w.evidence;
            a.end_line = end.map(Evidence::of);
        }
    }

    fn syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        // a sched_yield() loop is yield-spin's (SL010), clock reads through the kernel are
        // clock-syscalls' (SL011): not counted here, neither as spins nor as other calls, so a
        // loop is reported once (a thread that works and reads a CPU-time clock per item is
        // not waiting at all)
        if matches!(sc.sys, Sys::SchedYield | Sys::ClockGettime | Sys::ClockGettime64 | Sys::Gettimeofday | Sys::Time) {
            return;
        }
        let Some(th) = s.thread() else { return };
        let cfg = &self.cfg;
        let end = ev.ts_ns.map(|t| t.saturating_add(sc.dur_ns.unwrap_or(0) as i64));
        if th.first_ts.is_none() {
            th.first_ts = ev.ts_ns;
        }
        if end.is_some() {
            th.last_end = end;
        }
        // an idle gap: the thread blocked or computed between the two calls
        if let (Some(t), Some(p)) = (ev.ts_ns, th.prev_end) {
            if (t - p) as f64 >= cfg.max_gap_ms * 1e6 {
                Self::close(cfg, th, Some(ev));
            }
        }
        th.prev_end = end;

        let mut key = None;
        let mut kind = classify(sc, &mut key);
        if let Some(k) = key {
            if th.recent[..th.recent_n].contains(&k) {
                kind = Kind::Repeat;
            } else {
                th.recent.rotate_right(1);
                th.recent[0] = k;
                th.recent_n = (th.recent_n + 1).min(th.recent.len());
            }
        }
        let blocked = sc.dur_ns.is_some_and(|d| d as f64 >= cfg.block_ms * 1e6);
        match kind {
            Kind::Wait | Kind::Progress => Self::close(cfg, th, Some(ev)),
            Kind::EmptyPoll | Kind::Eagain | Kind::Repeat => {
                let w = th.win.get_or_insert_with(Window::default);
                if w.first_ts.is_none() {
                    w.first_ts = ev.ts_ns;
                }
                if end.is_some() {
                    w.last_end = end;
                }
                w.spins += 1;
                w.other_run = 0;
                w.spin_timing.add(sc.dur_ns);
                match kind {
                    Kind::EmptyPoll => w.polls += 1,
                    Kind::Eagain => w.eagain += 1,
                    _ => w.repeats += 1,
                }
                if let Some(t) = w.top.iter_mut().find(|t| t.0 == sc.sys && t.1 == kind) {
                    t.2 += 1;
                } else if w.top.len() < TOP_SYSCALLS {
                    w.top.push((sc.sys, kind, 1));
                }
                if w.evidence.len() < EVIDENCE_LINES {
                    w.evidence.push(Evidence::of(ev));
                }
                if w.fd.is_none() && kind != Kind::Repeat {
                    w.fd = waited_fd(sc);
                }
                // name what is waited on once the window looks serious (one allocation)
                if w.target.is_none() && w.spins == 16 {
                    if let Some(fd) = w.fd {
                        w.target = cx.model.lookup_fd(ev.tid, fd).map(|t| t.display.to_string());
                    }
                }
            }
            Kind::Other => {
                if let Some(w) = th.win.as_mut() {
                    w.others += 1;
                    w.other_run += 1;
                    if blocked || w.other_run > cfg.max_other_calls {
                        Self::close(cfg, th, Some(ev));
                    }
                }
            }
        }
    }

    fn keep(&mut self, model: &crate::model::Model, pid: Tid, th: Thread) {
        let Some(agg) = th.agg else {
            return;
        };
        if agg.timed && agg.seconds < self.cfg.min_seconds {
            return;
        }
        let thread_seconds = match (th.first_ts, th.last_end) {
            (Some(a), Some(b)) => (b - a).max(0) as f64 / 1e9,
            _ => 0.0,
        };
        let about = Subject::new(SubjectKind::Thread).program(model.comm(pid));
        self.done.push(Done { label: model.label(pid), about, thread_seconds, agg });
        if self.done.len() > MAX_FINDINGS * 2 {
            self.done.sort_by_key(|d| std::cmp::Reverse(d.agg.spins));
            self.done.truncate(MAX_FINDINGS);
        }
    }

    fn finding(&self, d: &Done, clock: Clock) -> Finding {
        let a = &d.agg;
        let cfg = &self.cfg;
        let timed = a.timed && a.seconds > 0.0;
        let rate = if timed { a.spins as f64 / a.seconds } else { 0.0 };
        let share = if d.thread_seconds > 0.0 { (a.seconds / d.thread_seconds).min(1.0) } else { 0.0 };
        let mut top = a.top.clone();
        top.sort_by_key(|t| std::cmp::Reverse(t.2));
        let what: Vec<String> = top
            .iter()
            .map(|&(sys, kind, n)| (sys.name(), kind, n))
            .map(|(name, kind, n)| match kind {
                Kind::EmptyPoll => format!("{n} {name} calls with zero timeout"),
                Kind::Eagain => format!("{n} {name} calls failing with EAGAIN"),
                _ => format!("{n} repeated {name} calls"),
            })
            .collect();
        let on = a.target.as_deref().map(|t| format!(" while waiting on {t}")).unwrap_or_default();
        let message = if timed {
            format!(
                "spinning without blocking: {} calls in {:.2} s that did nothing ({:.0}/s: {}){on}",
                a.spins,
                a.seconds,
                rate,
                what.join(", ")
            )
        } else {
            format!("spinning without blocking: {} calls that did nothing ({}){on}", a.spins, what.join(", "))
        };
        let severity = if timed {
            registry::severity_for(a.seconds, share, cfg.warn_seconds, cfg.error_seconds)
        } else if a.spins >= cfg.warn_spins_untimed && a.repeats < a.spins {
            // without timestamps, repeated cheap calls alone cannot tell a spin from a thread
            // that computes between them: at most info
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut metrics = Metrics::new();
        metrics
            .count("spins", a.spins)
            .count("empty_polls", a.polls)
            .count("eagain", a.eagain)
            .count("repeated_calls", a.repeats)
            .count("windows", a.windows)
            .count("calls", a.calls);
        if timed {
            metrics
                .value("spin_seconds", a.seconds)
                .value("spins_per_sec", rate)
                .value("longest_window_s", a.longest)
                .value("thread_seconds", d.thread_seconds)
                .value("share_of_thread_time", share);
        }
        metrics.value_opt("syscall_seconds", a.spin_timing.seconds());
        let mut evidence: Vec<String> = a.evidence.iter().map(|e| e.render(clock)).collect();
        if let Some(e) = &a.end_line {
            evidence.push("...".into());
            evidence.push(e.render(clock));
        }
        let cost = if timed {
            format!(
                "{:.2} s of CPU spent spinning ({:.0}% of the thread's traced time); {} syscalls that one \
blocking wait per window ({} window{}) would replace",
                a.seconds,
                share * 100.0,
                a.spins,
                a.windows,
                if a.windows == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "{} syscalls that one blocking wait per window ({} window{}) would replace; time unknown (no \
timestamps)",
                a.spins,
                a.windows,
                if a.windows == 1 { "" } else { "s" }
            )
        };
        META.finding(severity, message)
            .about(d.label.clone(), d.about.clone())
            .over(window(a.first_ts, a.last_ts))
            .metrics(metrics)
            .lines(evidence)
            .cost(cost)
            .build()
    }
}

/// Whether a table counted one thread: `strace -c -p PID` without `-f` (strace follows only
/// the thread it attached to), or a per-thread table with one thread.
fn one_thread(c: &syslint_report::Counts) -> bool {
    if c.per_task.len() == 1 {
        return true;
    }
    let Some(cmd) = c.command.as_deref() else { return false };
    if !c.tool.starts_with("strace") {
        return false;
    }
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let strace = words.iter().position(|w| *w == "strace" || w.ends_with("/strace"));
    let Some(s) = strace else { return false };
    let opts = &words[s + 1..];
    let follows = opts.iter().any(|w| {
        *w == "--follow-forks"
            || *w == "--output-separately"
            || (w.starts_with('-') && !w.starts_with("--") && w[1..].chars().all(|ch| ch.is_ascii_alphabetic()) && w.contains('f'))
    });
    let pids = opts.iter().enumerate().filter(|(i, w)| **w == "-p" && opts.get(i + 1).is_some_and(|p| !p.contains(','))).count();
    !follows && pids == 1
}

/// The excerpt rule's second form: a run of waits that each came back at once with the same
/// answer, with nothing done between them. A wait reporting the same fds ready again, when the
/// calls between them served none (only clock reads, reads and writes failing with EAGAIN,
/// reads at EOF), is level-triggered readiness nobody consumes: an EPOLLOUT nobody writes to,
/// an EPOLLHUP on a dead fd left in the set, a socket at EOF read again (beanstalkd#53,
/// rtorrent#580, swoole#2847, wrk#179). Zero-timeout polls that found nothing, back to back,
/// are the same run. A wait that timed out after waiting, a call that did anything else, and
/// accept's EAGAIN (a herd: the connection went to another waiter, accept-herd's) end a run.
/// A call between two waits that serves nothing the waits could have brought: a clock read,
/// signal bookkeeping (libcurl sets SIGPIPE around every turn of its loop: dnsdbq#29), arming a
/// timer, a terminal or device ioctl (a REPL toggling raw mode: esp-lisp#13), or an 8-byte
/// eventfd poke (the loop waking itself: LACT#831), or re-arming the interest list (libuv
/// re-registering a pipe with `EPOLL_CTL_MOD` before every wait while its hang-up is never
/// read: libuv#2162). What every event loop does between waits, and nothing that moves data.
fn serves_nothing(c: &crate::basis::Call) -> bool {
    use syslint_event::TargetKind;
    matches!(
        c.sys,
        Sys::ClockGettime
            | Sys::ClockGettime64
            | Sys::Gettimeofday
            | Sys::Time
            | Sys::RtSigaction
            | Sys::RtSigprocmask
            | Sys::RtSigreturn
            | Sys::Setitimer
            | Sys::Alarm
            | Sys::TimerfdSettime
            | Sys::Ioctl
            | Sys::EpollCtl
    ) || matches!(c.name.as_str(), "timer_settime" | "timer_gettime" | "getitimer")
        || (c.sys.is(syslint_event::Class::WRITE)
            && c.requested == Some(8)
            && c.ret == Some(8)
            && c.target_kind.is_none_or(|k| k == TargetKind::Eventfd))
}

/// A read that found nothing: EAGAIN, or 0 at end of file.
fn found_nothing(c: &crate::basis::Call) -> bool {
    (c.sys.is(syslint_event::Class::READ) || matches!(c.sys, Sys::Recvfrom | Sys::Recvmsg))
        && (c.failed("EAGAIN") || (c.ret == Some(0) && c.requested.is_some_and(|n| n > 0)))
}

fn ready_spin(x: &crate::basis::Excerpt) -> Vec<Finding> {
    use crate::basis::Call;
    use syslint_report::Confidence;
    #[derive(PartialEq)]
    enum Key<'a> {
        /// a wait asked not to block (whatever it found: what it found was not served)
        Zero,
        Ready(&'a str),
    }
    #[derive(Default)]
    struct Run<'a> {
        key: Option<Key<'a>>,
        waits: usize,
        /// EAGAIN failures and reads at EOF between the waits
        idle: usize,
        eof: usize,
        /// the waits found nothing every time
        empty: bool,
        idx: Vec<usize>,
        /// the calls of its thread the run spans (waits, idle and bookkeeping calls)
        spans: usize,
    }
    fn end<'a>(cur: &mut Run<'a>, best: &mut Run<'a>) {
        let r = std::mem::take(cur);
        if (r.waits, r.idle) > (best.waits, best.idle) {
            *best = r;
        }
    }
    fn key(c: &Call) -> Option<Key<'_>> {
        if c.timeout.is_some_and(syslint_event::Timeout::is_zero) {
            Some(Key::Zero)
        } else {
            c.ready.as_deref().map(Key::Ready)
        }
    }
    let mut best: Run = Run::default();
    let mut tids: Vec<syslint_event::Tid> = x.calls.iter().map(|c| c.tid).collect();
    tids.sort_unstable();
    tids.dedup();
    for &tid in &tids {
        let mut cur: Run = Run::default();
        for (i, c) in x.calls.iter().enumerate().filter(|(_, c)| c.tid == tid) {
            if c.sys.is(syslint_event::Class::POLL) {
                match key(c) {
                    Some(k) if cur.key.as_ref() == Some(&k) => {
                        cur.waits += 1;
                        cur.empty &= c.ret == Some(0);
                        cur.idx.push(i);
                    }
                    Some(k) => {
                        end(&mut cur, &mut best);
                        cur = Run { key: Some(k), waits: 1, idx: vec![i], empty: c.ret == Some(0), ..Run::default() };
                    }
                    None => end(&mut cur, &mut best),
                }
            } else if serves_nothing(c) {
                // reading the time, setting a signal, waking itself: nothing was served
            } else if cur.key.is_some() && found_nothing(c) {
                cur.idle += 1;
                cur.eof += usize::from(c.ret == Some(0));
                cur.idx.push(i);
            } else {
                end(&mut cur, &mut best);
                continue;
            }
            if cur.key.is_some() {
                cur.spans += 1;
            }
        }
        end(&mut cur, &mut best);
    }
    // two turns are enough when they are all the paste shows of its one thread: a loop of two
    // zero-timeout waits that found nothing with nothing served between (haproxy#402)
    let whole = tids.len() == 1 && best.key == Some(Key::Zero) && best.empty && best.spans + 2 >= x.calls.len();
    if best.waits < 3 && !(best.waits == 2 && whole) {
        return repeated_nothing(x);
    }
    // 5 turns, or 3 in a run of 8 calls (bookkeeping between the waits included: each turn is
    // the whole loop, and none served anything)
    let strong = best.waits >= 5 || (best.waits >= 3 && best.spans >= 8);
    let (sev, conf) = if strong { (Severity::Warning, Confidence::Medium) } else { (Severity::Info, Confidence::Low) };
    let first = &x.calls[best.idx[0]];
    let what = match best.key {
        Some(Key::Zero) if best.empty => "zero-timeout polls that found nothing, back to back".to_string(),
        Some(Key::Zero) => "zero-timeout polls whose answer nobody served, back to back".to_string(),
        _ => format!("waits on fd {} returning the same ready fds at once", first.fd.unwrap_or(-1)),
    };
    let between = match (best.idle, best.eof) {
        (0, _) => "nothing done between them".to_string(),
        (n, e) if e == n => format!("only {n} reads at EOF (= 0) between them"),
        (n, 0) => format!("only {n} calls failing with EAGAIN between them"),
        (n, e) => format!("only {n} calls that moved nothing (EAGAIN, {e} at EOF) between them"),
    };
    let why = if strong {
        format!("{} {what}, {between}: readiness nobody consumes returns again at once", best.waits)
    } else {
        format!("{} {what}, {between}: a short run, too few lines to say it goes on", best.waits)
    };
    META.finding(sev, format!("spinning on readiness: {} {what}, {between}", best.waits))
        .metrics([
            ("spins", (best.waits as u64).into()),
            ("idle_calls", (best.idle as u64).into()),
            ("calls", (x.calls.len() as u64).into()),
        ])
        .lines(x.evidence(&best.idx, 4))
        .in_excerpt(x, conf, &why)
}

/// The same read on the same fd finding nothing again, with nothing but bookkeeping between and
/// no wait: a loop that retries a non-blocking read (Waybar#1342: EAGAIN "ad infinitum") or
/// reads on at end of file (LACT#831: 16 reads of fd 11 returning 0). 8 in a row warn at medium;
/// 2 are info at low when they are all the paste shows of its one thread.
fn repeated_nothing(x: &crate::basis::Excerpt) -> Vec<Finding> {
    use syslint_report::Confidence;
    let mut best: Vec<usize> = Vec::new();
    let mut tids: Vec<syslint_event::Tid> = x.calls.iter().map(|c| c.tid).collect();
    tids.sort_unstable();
    tids.dedup();
    for &tid in &tids {
        let mut cur: Vec<usize> = Vec::new();
        for (i, c) in x.calls.iter().enumerate().filter(|(_, c)| c.tid == tid) {
            if found_nothing(c) {
                let same = cur.last().is_some_and(|&j| {
                    let p = &x.calls[j];
                    p.sys == c.sys && p.fd == c.fd && p.errno == c.errno && p.ret == c.ret
                });
                if !same {
                    if cur.len() > best.len() {
                        best = std::mem::take(&mut cur);
                    }
                    cur.clear();
                }
                cur.push(i);
            } else if !serves_nothing(c) || c.sys == Sys::Ioctl {
                if cur.len() > best.len() {
                    best = std::mem::take(&mut cur);
                }
                cur.clear();
            }
        }
        if cur.len() > best.len() {
            best = cur;
        }
    }
    let n = best.len();
    let whole = tids.len() == 1 && n * 2 >= x.calls.len();
    if n < 8 && !(n >= 2 && whole) {
        return Vec::new();
    }
    let c = &x.calls[best[0]];
    let what = if c.ret == Some(0) { "at end of file (= 0)" } else { "failing with EAGAIN" };
    let fd = c.fd.unwrap_or(-1);
    let (sev, conf, why) = if n >= 8 {
        (Severity::Warning, Confidence::Medium, format!("{n} {} of fd {fd} {what} back to back, no wait between: the loop retries at once", c.name))
    } else {
        (Severity::Info, Confidence::Low, format!("{n} {} of fd {fd} {what} back to back, no wait between: a short run, too few lines to say it goes on", c.name))
    };
    META.finding(sev, format!("spinning on an fd that has nothing: {n} {} of fd {fd} {what}, one after another without waiting", c.name))
        .metrics([("spins", (n as u64).into()), ("calls", (x.calls.len() as u64).into())])
        .lines(x.evidence(&best, 4))
        .in_excerpt(x, conf, &why)
}

impl Hosted for BusyPoll {
    type Thread = Thread;
    type Program = ();
    type Object = ();
    const MAX_THREADS: usize = 10_000;

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        self.syscall(s, cx, ev, sc);
    }

    /// The thread ended: its last window closes, and the thread is kept when it spun enough.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(mut th) = s.existing().map(std::mem::take) else { return };
        Self::close(&self.cfg, &mut th, None);
        self.keep(s.model(), s.tid(), th);
    }

    fn report(&mut self, _: Groups<'_, ()>, cx: &FinishCtx) -> Vec<Finding> {
        self.done.sort_by(|a, b| {
            b.agg
                .seconds
                .partial_cmp(&a.agg.seconds)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.agg.spins.cmp(&a.agg.spins))
        });
        self.done.truncate(MAX_FINDINGS);
        self.done.iter().map(|d| self.finding(d, cx.clock)).collect()
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use crate::basis::Call;
        use syslint_report::Confidence;
        // a spin: a poll asked not to block that found nothing, or a read that had nothing
        let spin = |c: &Call| {
            (c.sys.is(syslint_event::Class::POLL) && c.timeout.is_some_and(syslint_event::Timeout::is_zero) && c.ret == Some(0))
                || ((c.sys.is(syslint_event::Class::READ) || matches!(c.sys, Sys::Recvfrom | Sys::Recvmsg))
                    && c.failed("EAGAIN"))
        };
        // a wait: a poll that may block, a sleep; the program is not spinning then
        let wait = |c: &Call| {
            (c.sys.is(syslint_event::Class::POLL) && !c.timeout.is_some_and(syslint_event::Timeout::is_zero))
                || matches!(c.sys, Sys::Nanosleep | Sys::ClockNanosleep)
        };
        let spins: Vec<usize> = (0..x.calls.len()).filter(|&i| spin(&x.calls[i])).collect();
        let waits = x.calls.iter().filter(|c| wait(c)).count();
        let n = x.calls.len();
        if spins.len() < 8 || spins.len() * 2 < n || waits * 4 > spins.len() {
            return ready_spin(x);
        }
        let what = if x.calls[spins[0]].sys.is(syslint_event::Class::POLL) { "polls with a zero timeout that found nothing" } else { "reads that failed with EAGAIN" };
        META.finding(
            Severity::Warning,
            format!("spinning without blocking: {} of {n} calls were {what}, {waits} waited", spins.len()),
        )
        .metrics([
            ("spins", (spins.len() as u64).into()),
            ("calls", (n as u64).into()),
            ("waits", (waits as u64).into()),
        ])
        .lines(x.evidence(&spins, 4))
        .in_excerpt(x, Confidence::Medium, &format!("{} {what}, nothing waited", spins.len()))
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, wall_times, SysCounts, SysRows};
        use syslint_report::Confidence;
        // the poll/select/epoll waits: exactly the poll class
        const WAITS: Class = Class::POLL;
        const IO: &[Sys] = &[
            Sys::Read, Sys::Write, Sys::Readv, Sys::Writev, Sys::Pread64, Sys::Pwrite64, Sys::Recvfrom, Sys::Sendto,
            Sys::Recvmsg, Sys::Sendmsg, Sys::Recvmmsg, Sys::Sendmmsg, Sys::Accept, Sys::Accept4,
        ];
        // sched_yield is yield-spin's; a table limited to the waits (`-e trace=epoll_wait`)
        // cannot show the I/O they led to
        if !c.counted_any_of(IO) {
            return Vec::new();
        }
        let total = c.total_calls();
        let waits = c.calls_of(WAITS);
        let io = c.calls_of(IO);
        if waits < 5000 || waits * 2 < total || io * 10 > waits {
            return Vec::new();
        }
        let secs: f64 = c.seconds_of(WAITS);
        let avg_us = secs / waits as f64 * 1e6;
        let timed = wall_times(c) && c.rows_of(WAITS).any(|r| r.seconds.is_some());
        // one traced thread (strace -p without -f counts only the thread attached to) that
        // waited this often cannot have waited long: at 10,000 a second, 100 us each at most
        let per_thread = one_thread(c).then(|| c.per_second(waits)).flatten();
        let (conf, why) = if timed && avg_us < 50.0 {
            (Confidence::Medium, format!("{waits} waits averaging {avg_us:.1} us of wall-clock time: they return at once, with {io} I/O calls to show for them"))
        } else if let Some(r) = per_thread.filter(|r| *r >= 10_000.0) {
            (Confidence::Medium, format!("{waits} waits of one thread in {} s ({r:.0}/s, so under {:.0} us each at most), with {io} I/O calls to show for them", c.duration_s.unwrap_or(0.0), 1e6 / r))
        } else {
            (Confidence::Low, format!("{waits} waits with {io} I/O calls to show for them; the table cannot show their timeouts (a zero timeout spins, a long one is an idle loop)"))
        };
        let rate = per_second(c, waits, 0);
        META.finding(
            Severity::Warning,
            format!("readiness checks dominate with nothing done between them: {waits} of {total} calls{rate} were poll/select/epoll waits, {io} were I/O"),
        )
        .metrics([("waits", waits.into()), ("io_calls", io.into()), ("calls", total.into())])
        .lines(count_lines(c, WAITS))
        .in_table(c, conf, &why)
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/busy-poll/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    fn sc<'a>(sys: Sys, args: &'a str, ret: Ret<'a>) -> Syscall<'a> {
        Syscall { sys, name: sys.name(), args: syslint_event::Args::Text(args), ret, dur_ns: None, resumed: false, pre: syslint_event::Pre::NONE }
    }

    #[test]
    fn classifies_real_lines() {
        let mut k = None;
        let ok0 = Ret::Ok { val: 0, deco: None, note: "(Timeout)" };
        let p = sc(Sys::Poll, "[{fd=6<TCP:[127.0.0.1:1->127.0.0.1:2]>, events=POLLIN}], 1, 0", ok0.clone());
        assert_eq!(classify(&p, &mut k), Kind::EmptyPoll);
        assert_eq!(waited_fd(&p), Some(6));
        let p = sc(Sys::Poll, "[{fd=6, events=POLLIN}], 1, 1000", ok0.clone());
        assert_eq!(classify(&p, &mut k), Kind::Wait);
        let p = sc(Sys::Poll, "[{fd=6, events=POLLIN}], 1, 0", Ret::Ok { val: 1, deco: None, note: "" });
        assert_eq!(classify(&p, &mut k), Kind::Other);
        let s = sc(Sys::Pselect6, "4, [3], NULL, NULL, {tv_sec=0, tv_nsec=0}, NULL", ok0.clone());
        assert_eq!(classify(&s, &mut k), Kind::EmptyPoll);
        assert_eq!(waited_fd(&s), Some(3));
        let r = sc(Sys::Read, "3, 0x7ffc, 64", Ret::Err { val: -1, errno: "EAGAIN" });
        assert_eq!(classify(&r, &mut k), Kind::Eagain);
        let f = sc(Sys::Futex, "0x55, FUTEX_WAIT_PRIVATE, 2, NULL", Ret::Ok { val: 0, deco: None, note: "" });
        assert_eq!(classify(&f, &mut k), Kind::Wait);
        let mut k1 = None;
        let a =
            sc(Sys::RtSigaction, "SIGPIPE, NULL, {sa_handler=SIG_IGN}, 8", Ret::Ok { val: 0, deco: None, note: "" });
        assert_eq!(classify(&a, &mut k1), Kind::Other);
        let mut k2 = None;
        let b =
            sc(Sys::RtSigaction, "SIGPIPE, {sa_handler=SIG_IGN}, NULL, 8", Ret::Ok { val: 0, deco: None, note: "" });
        classify(&b, &mut k2);
        assert!(k1.is_some() && k1 == k2, "same signal, same result: the same call");
        let mut k3 = None;
        let c = sc(Sys::RtSigaction, "SIGINT, {sa_handler=SIG_IGN}, NULL, 8", Ret::Ok { val: 0, deco: None, note: "" });
        classify(&c, &mut k3);
        assert_ne!(k1, k3);
    }
}
