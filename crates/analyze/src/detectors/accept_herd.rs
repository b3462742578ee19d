//! `accept-herd` (SL002): several processes or threads woken for one listening socket, all but
//! one finding nothing to accept (the thundering herd).
//!
//! A wake-up is a burst of accept/accept4 calls by one thread on one listening socket after it
//! returned from a wait (poll/select/epoll); a burst that accepted nothing (only EAGAIN) is an
//! empty wake-up. Listening sockets are identified across processes: the nearest process up the
//! fork tree that called listen() on the fd (with or without -yy), else the `-y`/`-yy` decoration
//! (`TCP:[127.0.0.1:8080]`, `socket:[12345]`), else the topmost traced ancestor and the fd.

use super::Evidence;
use crate::host::{Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Rekey, window};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::args::FdTarget;
use syslint_event::{Class, EpollCtl, Event, Tgid, Tid, Ret, SockOpt, Sys, Syscall};
use syslint_report::{Finding, Severity, Subject, SubjectKind};

crate::detector!("accept_herd", AcceptHerd { cfg, socks: HashMap::default(), stats: HashMap::default() });

/// A socket in one process: (thread group id, fd).
type SockKey = (Tgid, i32);

#[derive(Clone, Default)]
struct SockInfo {
    /// socket() returned this fd in this process (so it is not inherited).
    created: bool,
    bound: Option<String>,
    reuseport: bool,
    listening: bool,
    exclusive: bool,
    listen_line: Option<Evidence>,
    epoll_line: Option<Evidence>,
}

/// What the accepts on a socket came to: counted per socket key, added up per group.
#[derive(Clone, Copy, Default)]
struct Tally {
    accepted: u64,
    eagain: u64,
    wakeups: u64,
    /// Wake-ups that accepted nothing.
    empty: u64,
    eagain_ns: u64,
    /// Failing accepts whose duration was known (all of them with -T).
    eagain_timed: u64,
}

crate::merge!(Tally { accepted: sum, eagain: sum, wakeups: sum, empty: sum, eagain_ns: sum, eagain_timed: sum });

#[derive(Clone, Default)]
struct Stats {
    deco: Option<String>,
    n: Tally,
    errors: u64,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    workers: Vec<Tid>,
    empty_workers: Vec<Tid>,
    eagain_lines: Vec<Evidence>,
    ok_line: Option<Evidence>,
}

/// A thread's accepts on one socket since it returned from a wait.
#[derive(Clone, Default)]
pub struct Burst {
    key: SockKey,
    accepted: bool,
}

/// Nothing is summed per program: a listening socket is shared across programs (a master and
/// its workers), and the findings are the sockets'.
#[derive(Clone, Default)]
pub struct NoProgram;

impl Merge for NoProgram {
    fn merge(&mut self, _o: Self) {}
}

/// The sockets and what was accepted on them stay the detector's after their process ends:
/// the report walks up the fork tree to the process that made the socket.
#[derive(Clone)]
pub struct AcceptHerd {
    cfg: Config,
    socks: HashMap<SockKey, SockInfo>,
    stats: HashMap<SockKey, Stats>,
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, p: T) {
    if v.len() < MAX_WORKERS && !v.contains(&p) {
        v.push(p);
    }
}

/// `setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, [1], 4) = 0`, by name or raw value (SOL_SOCKET 1,
/// SO_REUSEPORT 15 on x86, arm, aarch64).
fn sets_reuseport(sc: &Syscall) -> bool {
    let Some(o) = sc.sockopt() else { return false };
    o.level == Some(SockOpt::SOL_SOCKET)
        && o.name == Some(SockOpt::SO_REUSEPORT)
        && o.value != Some(0)
        && sc.ret.value() == Some(0)
}

/// `epoll_ctl(ep, EPOLL_CTL_ADD|MOD, fd, {events=EPOLLIN|EPOLLEXCLUSIVE, ...})`: the fd, when
/// the events hold EPOLLEXCLUSIVE (by name, or bit 28 in -X raw).
fn exclusive_fd(sc: &Syscall) -> Option<i32> {
    let e = sc.epoll_ctl()?;
    (e.events? & EpollCtl::EPOLLEXCLUSIVE != 0).then_some(e.fd)
}

impl AcceptHerd {
    fn sock(&mut self, key: SockKey) -> Option<&mut SockInfo> {
        if !self.socks.contains_key(&key) {
            if self.socks.len() >= MAX_SOCKETS {
                return None;
            }
            self.socks.insert(key, SockInfo::default());
        }
        self.socks.get_mut(&key)
    }

    fn on_accept(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall, key: SockKey) {
        let tid = ev.tid;
        let new_burst = s.existing().is_none_or(|b| b.key != key);
        if new_burst {
            s.end(self);
            s.thread_or(|| Burst { key, accepted: false });
        }
        if !self.stats.contains_key(&key) {
            if self.stats.len() >= MAX_KEYS {
                return;
            }
            self.stats.insert(key, Stats::default());
        }
        let Some(st) = self.stats.get_mut(&key) else {
            return;
        };
        if st.deco.is_none() {
            st.deco = sc.fd().and_then(|f| f.deco).map(str::to_string);
        }
        if new_burst {
            st.n.wakeups += 1;
        }
        push_unique(&mut st.workers, tid);
        if let Some(t) = ev.ts_ns {
            st.first_ts.get_or_insert(t);
            st.last_ts = Some(t);
        }
        match &sc.ret {
            Ret::Ok { .. } => {
                st.n.accepted += 1;
                if st.ok_line.is_none() {
                    st.ok_line = Some(Evidence::of(ev));
                }
                if let Some(b) = s.existing() {
                    b.accepted = true;
                }
            }
            Ret::Err { errno: "EAGAIN" | "EWOULDBLOCK", .. } => {
                st.n.eagain += 1;
                if let Some(d) = sc.dur_ns {
                    st.n.eagain_ns += d;
                    st.n.eagain_timed += 1;
                }
                if st.eagain_lines.len() < 3 && !st.eagain_lines.iter().any(|e| e.pid == tid) {
                    st.eagain_lines.push(Evidence::of(ev));
                }
            }
            _ => st.errors += 1,
        }
    }
}

/// Where a group of accept keys comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Identity {
    /// The process that called listen() on this fd.
    Origin(SockKey),
    /// The fd decoration (`TCP:[127.0.0.1:8080]`, `socket:[123]`).
    Deco(String),
    /// No listen() seen, no decoration: the topmost traced ancestor and the fd.
    Top(SockKey),
}

#[derive(Clone, Default)]
struct Group {
    keys: Vec<SockKey>,
    n: Tally,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    workers: Vec<Tid>,
    empty_workers: Vec<Tid>,
    processes: Vec<Tgid>,
    lines: Vec<Evidence>,
    ok_line: Option<Evidence>,
    deco: Option<String>,
}

impl Hosted for AcceptHerd {
    /// The thread's burst of accepts.
    type Thread = Burst;
    type Program = NoProgram;
    type Object = ();
    const MAX_THREADS: usize = MAX_THREADS;

    /// The thread ended, or went back to waiting: a burst that accepted nothing was an empty
    /// wake-up.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let tid = s.tid();
        let Some(b) = s.existing() else { return };
        if !b.accepted {
            if let Some(st) = self.stats.get_mut(&b.key) {
                st.n.empty += 1;
                push_unique(&mut st.empty_workers, tid);
            }
        }
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if sc.sys.is(Class::POLL) {
            // the thread went back to waiting: its burst of accepts is over
            s.end(self);
            return;
        }
        let tgid = cx.tgid;
        match sc.sys {
            Sys::Accept | Sys::Accept4 => {
                if let Some(fd) = sc.fd() {
                    self.on_accept(s, ev, sc, (tgid, fd.num));
                }
            }
            Sys::Setsockopt => {
                if let (Some(fd), true) = (sc.fd(), sets_reuseport(sc)) {
                    if let Some(i) = self.sock((tgid, fd.num)) {
                        i.reuseport = true;
                    }
                }
            }
            Sys::Socket => {
                if let Some(fd) = sc.ret.value().filter(|&v| (0..=i32::MAX as i64).contains(&v)) {
                    // a new socket: forget what an older one at this fd number was
                    if let Some(i) = self.sock((tgid, fd as i32)) {
                        *i = SockInfo { created: true, ..SockInfo::default() };
                    }
                }
            }
            Sys::Bind | Sys::Getsockname => {
                if let (Some(fd), Some(addr), Some(0)) = (sc.fd(), sc.sockaddr(), sc.ret.value()) {
                    if let Some(i) = self.sock((tgid, fd.num)) {
                        // getsockname tells the port a bind to port 0 got
                        if sc.sys == Sys::Bind || i.bound.as_deref().is_none_or(|b| b.ends_with(":0")) {
                            i.bound = Some(addr.to_string());
                        }
                    }
                }
            }
            Sys::Listen => {
                if let (Some(fd), Some(0)) = (sc.fd(), sc.ret.value()) {
                    let deco_addr = fd.deco.and_then(|d| match FdTarget::from_deco(d) {
                        FdTarget::Inet { local: Some(l), remote: None, .. } => Some(l),
                        _ => None,
                    });
                    if let Some(i) = self.sock((tgid, fd.num)) {
                        i.listening = true;
                        if i.bound.is_none() || i.bound.as_deref().is_some_and(|b| b.ends_with(":0")) {
                            if let Some(a) = deco_addr {
                                i.bound = Some(a);
                            }
                        }
                        if i.listen_line.is_none() {
                            i.listen_line = Some(Evidence::of(ev));
                        }
                    }
                }
            }
            // EPOLL_CTL_DEL has no events: exclusive_fd says None
            Sys::EpollCtl if sc.ret.value() == Some(0) => {
                if let Some(fd) = exclusive_fd(sc) {
                    if let Some(i) = self.sock((tgid, fd)) {
                        i.exclusive = true;
                        if i.epoll_line.is_none() {
                            i.epoll_line = Some(Evidence::of(ev));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // per thread: a wake-up (a wait that returned ready), then its next accept
        let mut woke: std::collections::HashMap<syslint_event::Tid, bool> = Default::default();
        let (mut lost, mut accepts, mut failed) = (0u64, 0u64, 0u64);
        let mut idx = Vec::new();
        let mut fds = std::collections::BTreeSet::new();
        for (i, c) in x.calls.iter().enumerate() {
            if c.sys.is(syslint_event::Class::POLL) && c.ret.is_some_and(|r| r > 0) {
                woke.insert(c.tid, true);
            } else if matches!(c.sys, Sys::Accept | Sys::Accept4) {
                accepts += 1;
                let after_wake = woke.insert(c.tid, false).unwrap_or(false);
                if c.failed("EAGAIN") {
                    failed += 1;
                    if after_wake {
                        lost += 1;
                        idx.push(i);
                        if let Some(fd) = c.fd {
                            fds.insert(fd);
                        }
                    }
                }
            }
        }
        if lost < 4 || failed * 3 < accepts * 2 {
            return Vec::new();
        }
        let fd = fds.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::Listener);
        let mut ev: Vec<usize> = Vec::new();
        for &i in idx.iter().take(3) {
            if i > 0 {
                ev.push(i - 1);
            }
            ev.push(i);
        }
        let why = if x.threads <= 1 {
            "every wake-up followed by a failed accept on the same fd, in the lines of one worker; the other workers, who took the connections, are not in the excerpt"
        } else {
            "wake-ups followed by failed accepts on the same fd"
        };
        META.finding(
            Severity::Warning,
            format!("woken for connections someone else took: {lost} wake-ups ended in an accept that failed with EAGAIN ({failed} of {accepts} accepts failed)"),
        )
        .about(format!("the listener on fd {fd}"), about)
        .metrics([("lost_wakeups", lost.into()), ("accepts", accepts.into()), ("failed_accepts", failed.into())])
        .lines(x.evidence(&ev, 6))
        .in_excerpt(x, Confidence::Medium, why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        const ACCEPT: &[Sys] = &[Sys::Accept, Sys::Accept4];
        let calls = c.calls_of(ACCEPT);
        let errors = c.errors_of(ACCEPT);
        let won = calls.saturating_sub(errors);
        if errors < 20 || errors < 2 * won.max(1) {
            return Vec::new();
        }
        let losers = c
            .per_task
            .iter()
            .filter(|t| t.rows.errors_of(ACCEPT) > 0)
            .count();
        let who = if losers > 1 { format!(" by {losers} processes or threads") } else { String::new() };
        let why = if losers > 1 {
            format!("{losers} processes or threads each had accepts fail, {errors} failures for {won} connections")
        } else {
            format!("{errors} failed accepts for {won} connections; the table cannot show whether several workers were woken together or one loop retried")
        };
        META.finding(
            Severity::Warning,
            format!("accepts fail far more often than they succeed{who}: {errors} failed, {won} connections accepted ({:.1} failures per connection)", errors as f64 / won.max(1) as f64),
        )
        .metrics([
            ("accept_calls", calls.into()),
            ("failed_accepts", errors.into()),
            ("accepted", won.into()),
            ("workers_failing", (losers as u64).into()),
        ])
        .lines(count_lines(c, ACCEPT))
        .in_table(c, Confidence::Medium, &why)
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.socks, &mut self.stats]
    }

    fn report(&mut self, _: Groups<'_, NoProgram>, cx: &FinishCtx) -> Vec<Finding> {
        if self.stats.is_empty() {
            return Vec::new();
        }
        // the fork tree, from the model
        let parent: HashMap<Tgid, Tgid> =
            cx.model.procs.iter().filter(|p| !p.absorbed).filter_map(|p| p.parent.map(|pp| (p.pid, pp))).collect();
        let mut groups: HashMap<Identity, Group> = HashMap::default();
        let mut keys: Vec<SockKey> = self.stats.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let Some(s) = self.stats.get(&key) else { continue };
            // a thread seen before its clone returned was its own process then
            let (tgid, fd) = (cx.model.tgid(key.0.main_thread()), key.1);
            // up the fork tree: the process that created the socket (workers may call listen()
            // again on an inherited socket, as asyncio does), else the topmost that listened
            let mut p = tgid;
            let mut origin = None;
            let mut listener = None;
            let mut top = tgid;
            for _ in 0..MAX_DEPTH {
                match self.socks.get(&(p, fd)) {
                    Some(i) if i.created => {
                        origin = Some((p, fd));
                        break;
                    }
                    Some(i) if i.listening => listener = Some((p, fd)),
                    _ => {}
                }
                match parent.get(&p) {
                    Some(&pp) if pp != p => {
                        p = pp;
                        top = pp;
                    }
                    _ => break,
                }
            }
            let id = match (origin.or(listener), &s.deco) {
                (Some(o), _) => Identity::Origin(o),
                (None, Some(d)) => Identity::Deco(d.clone()),
                (None, None) => Identity::Top((top, fd)),
            };
            let g = groups.entry(id).or_default();
            g.keys.push(key);
            g.n.merge(s.n);
            g.first_ts = match (g.first_ts, s.first_ts) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            g.last_ts = g.last_ts.max(s.last_ts);
            for &w in &s.workers {
                push_unique(&mut g.workers, w);
            }
            for &w in &s.empty_workers {
                push_unique(&mut g.empty_workers, w);
            }
            push_unique(&mut g.processes, tgid);
            for e in &s.eagain_lines {
                if g.lines.len() < 3 && !g.lines.iter().any(|l| l.pid == e.pid) {
                    g.lines.push(e.clone());
                }
            }
            if g.ok_line.is_none() {
                g.ok_line = s.ok_line.clone();
            }
            if g.deco.is_none() {
                g.deco = s.deco.clone();
            }
        }
        let cfg = &self.cfg;
        let mut out = Vec::new();
        let mut ids: Vec<(&Identity, &Group)> = groups.iter().collect();
        ids.sort_by_key(|g| std::cmp::Reverse(g.1.n.empty));
        for (id, g) in ids {
            let per_accept = g.n.empty as f64 / g.n.accepted.max(1) as f64;
            if (g.workers.len() as u64) < cfg.min_workers
                || g.n.empty < cfg.min_empty_wakeups
                || per_accept < cfg.min_empty_per_accept
            {
                continue;
            }
            // what the socket is, and what was done to it
            let origin_info = match id {
                Identity::Origin(o) => self.socks.get(o),
                _ => None,
            };
            let reuseport = origin_info.is_some_and(|i| i.reuseport)
                || g.keys.iter().any(|k| self.socks.get(k).is_some_and(|i| i.reuseport));
            let exclusive = g.keys.iter().any(|k| self.socks.get(k).is_some_and(|i| i.exclusive));
            let deco_addr = g.deco.as_deref().map(|d| match FdTarget::from_deco(d) {
                FdTarget::Inet { local: Some(l), .. } => l,
                _ => d.to_string(),
            });
            let name =
                origin_info.and_then(|i| i.bound.clone()).filter(|b| !b.ends_with(":0")).or(deco_addr).unwrap_or_else(
                    || match id {
                        Identity::Origin((p, fd)) | Identity::Top((p, fd)) => format!("fd {fd} of pid {p}"),
                        Identity::Deco(d) => d.clone(),
                    },
                );
            let severity = if per_accept >= cfg.error_empty_per_accept {
                Severity::Error
            } else {
                Severity::warning_if(per_accept >= cfg.warn_empty_per_accept && g.n.empty >= cfg.warn_min_empty)
            };
            let wakeups_per = g.n.wakeups as f64 / g.n.accepted.max(1) as f64;
            let eagain_per = g.n.eagain as f64 / g.n.accepted.max(1) as f64;
            let flags = match (reuseport, exclusive) {
                (false, false) => "no SO_REUSEPORT, no EPOLLEXCLUSIVE",
                (true, false) => "SO_REUSEPORT set on the shared socket, no EPOLLEXCLUSIVE",
                (false, true) => "EPOLLEXCLUSIVE set, yet workers were still woken",
                (true, true) => "SO_REUSEPORT and EPOLLEXCLUSIVE set, yet workers were still woken",
            };
            let message = format!(
                "{} workers share listening socket {name}: {} connections woke them {} times, {} wake-ups found \
nothing ({:.1} per connection, {} accept calls failed with EAGAIN); {flags}",
                g.workers.len(),
                g.n.accepted,
                g.n.wakeups,
                g.n.empty,
                per_accept,
                g.n.eagain
            );
            let mut metrics = Metrics::new();
            metrics
                .count("accepted", g.n.accepted)
                .count("wakeups", g.n.wakeups)
                .count("empty_wakeups", g.n.empty)
                .count("eagain", g.n.eagain)
                .value("wakeups_per_accept", wakeups_per)
                .value("empty_wakeups_per_accept", per_accept)
                .value("eagain_per_accept", eagain_per);
            metrics
                .count("workers", g.workers.len())
                .count("workers_woken_empty", g.empty_workers.len())
                .count("processes", g.processes.len())
                .count("reuseport", u64::from(reuseport))
                .count("epollexclusive", u64::from(exclusive));
            // only when every failing accept was timed (-T), not just the split ones
            let timed = g.n.eagain > 0 && g.n.eagain_timed == g.n.eagain;
            if timed {
                metrics.value("eagain_seconds", g.n.eagain_ns as f64 / 1e9);
            }
            let mut evidence = Vec::new();
            if let Some(l) = origin_info.and_then(|i| i.listen_line.as_ref()) {
                evidence.push(l.render(cx.clock));
            }
            // EPOLLEXCLUSIVE was asked for, yet the workers herd: show where
            if let Some(l) = g.keys.iter().find_map(|k| self.socks.get(k).and_then(|i| i.epoll_line.as_ref())) {
                evidence.push(l.render(cx.clock));
            }
            if let Some(l) = &g.ok_line {
                evidence.push(l.render(cx.clock));
            }
            evidence.extend(g.lines.iter().map(|l| l.render(cx.clock)));
            let cost = if timed {
                format!(
                    "{} wake-ups for nothing ({:.1} per connection) and {} failed accept calls ({:.3} s inside \
them, plus a context switch and an epoll_wait return each)",
                    g.n.empty,
                    per_accept,
                    g.n.eagain,
                    g.n.eagain_ns as f64 / 1e9
                )
            } else {
                format!(
                    "{} wake-ups for nothing ({:.1} per connection) and {} failed accept calls, each a context \
switch, a wait return and a syscall",
                    g.n.empty, per_accept, g.n.eagain
                )
            };
            let about = Subject::new(SubjectKind::Listener).name(name.as_str());
            out.push(
                META.finding(severity, message)
                    .about(format!("listening socket {name}"), about)
                    .over(window(g.first_ts, g.last_ts))
                    .metrics(metrics)
                    .lines(evidence)
                    .cost(cost)
                    .build(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/accept-herd/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    fn sc(sys: Sys, args: &str) -> Syscall<'_> {
        Syscall {
            sys,
            name: sys.name(),
            args: syslint_event::Args::Text(args),
            ret: Ret::Ok { val: 0, deco: None, note: "" },
            dur_ns: None,
            resumed: false,
            pre: syslint_event::Pre::NONE,
        }
    }

    #[test]
    fn options_by_name_and_raw_value() {
        assert!(sets_reuseport(&sc(Sys::Setsockopt, "4<TCP:[1]>, SOL_SOCKET, SO_REUSEPORT, [1], 4")));
        assert!(sets_reuseport(&sc(Sys::Setsockopt, "4, 0x1, 0xf, [1], 4")));
        assert!(sets_reuseport(&sc(Sys::Setsockopt, "4, 0x1 /* SOL_SOCKET */, 0xf /* SO_REUSEPORT */, [1], 4")));
        assert!(!sets_reuseport(&sc(Sys::Setsockopt, "4, SOL_SOCKET, SO_REUSEADDR, [1], 4")));
        assert!(!sets_reuseport(&sc(Sys::Setsockopt, "4, SOL_SOCKET, SO_REUSEPORT, [0], 4")));
        let ex =
            "12<anon_inode:[eventpoll]>, EPOLL_CTL_ADD, 4<TCP:[127.0.0.1:18080]>, {events=EPOLLIN|EPOLLEXCLUSIVE, \
data={u32=1, u64=2}}";
        assert_eq!(exclusive_fd(&sc(Sys::EpollCtl, ex)), Some(4));
        assert_eq!(exclusive_fd(&sc(Sys::EpollCtl, "5, 0x1, 3, {events=0x10000001, data={u32=3, u64=3}}")), Some(3));
        assert_eq!(
            exclusive_fd(&sc(Sys::EpollCtl, "5, EPOLL_CTL_ADD, 3, {events=EPOLLIN, data={u32=3, u64=3}}")),
            None
        );
    }
}
