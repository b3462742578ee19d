//! `dns-timeout` (SL019): name resolution that waits out timeouts, or walks a search list
//! before the name it wanted.
//!
//! Per thread, DNS messages on sockets talking to port 53 (decoded from the buffers strace or
//! the kernel copied: the header's flags, response code and answer count always fit, the name
//! may be cut) are grouped into lookups: a lookup ends when a question unrelated to its names
//! is asked (another name, not a search-list candidate of it), when a question it already
//! got answered is asked again with no timeout in between (the next lookup of that name), or
//! when the thread ends. In a lookup:
//! - a *timed-out wait* is a poll/select/epoll wait that returned 0 (or a receive that failed
//!   with EAGAIN after blocking) while a question sent on one of the thread's DNS sockets was
//!   still unanswered, and that waited at least `min_wait_ms`; its time (the call's duration,
//!   else the timeout it asked for) is time lost;
//! - a *retry* is a question sent again (to the same server or the next one);
//! - a *search-list walk* is a lookup whose NXDOMAIN answers came before the answer that
//!   resolved it (`ndots:5` and Kubernetes' search domains: `name.ns.svc.cluster.local`,
//!   `name.svc.cluster.local`, ... before `name`).
//!
//! Lookups are summed per program.

use crate::kit::secs;
use crate::kit::dns::{dns_socket, parse_dns, timed_out_wait, waited_ns, DnsMsg, MIN_WAIT_NS};
use super::{Evidence, EvidenceBuf};
use crate::host::{Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span};
use crate::registry::{self, Ctx, FinishCtx};
use syslint_event::{Class, Event, Ret, Sys, Syscall};
use syslint_report::Finding;

crate::detector!("dns_timeout", struct DnsTimeout);

/// A question sent longer ago than this is no longer waited for (a socket kept open).
const STALE_NS: i64 = 120_000_000_000;

/// One question of a lookup.
#[derive(Clone)]
struct Question {
    /// The message ID: a retry sends it again, the answer carries it.
    id: u16,
    name: String,
    truncated: bool,
    qtype: Option<u16>,
    /// The socket's server, as the model shows it (a hash of the display).
    server: u64,
    answered: bool,
}

/// A DNS socket of a thread with the messages it still waits for.
#[derive(Clone, Copy)]
struct Sock {
    fd: i32,
    outstanding: u32,
    last_send: Option<i64>,
}

/// One lookup of a thread, charged to the program its process ran when it began.
#[derive(Clone, Default)]
struct Lookup {
    questions: Vec<Question>,
    queries: u32,
    timeouts: u32,
    lost_ns: u64,
    /// Timed-out waits with neither a duration nor a timeout argument.
    lost_unknown: u32,
    retries: u32,
    next_server: u32,
    nx: u32,
    /// A NOERROR answer came after NXDOMAIN answers.
    resolved_after_nx: bool,
    resolved: Option<String>,
    /// A wait timed out since the last send: what is sent next is a retry.
    after_timeout: bool,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    last_nx_ts: Option<i64>,
    evidence: Vec<Evidence>,
}

/// A thread's DNS sockets (they outlive its lookups) and its lookup in progress.
#[derive(Clone, Default)]
pub struct Thread {
    socks: Vec<Sock>,
    lookup: Option<Lookup>,
}

/// A program's lookups.
#[derive(Clone, Default)]
pub struct Group {
    lookups: u64,
    queries: u64,
    timeouts: u64,
    timed_out_lookups: u64,
    lost_ns: u64,
    /// Timed-out waits whose time is unknown.
    lost_unknown: u64,
    retries: u64,
    next_server: u64,
    unanswered: u64,
    /// Questions answered in lookups that timed out: none means the nameserver answers nothing
    /// (dead), some means one of a pair was lost.
    answered_in_timeouts: u64,
    walks: u64,
    search_queries: u64,
    walk_ns: u64,
    walk_timed: bool,
    names: Names,
    span: Span,
    /// The evidence of the first lookup that timed out or walked.
    evidence: Option<EvidenceBuf>,
}

crate::merge!(Group {
    lookups: sum,
    queries: sum,
    timeouts: sum,
    timed_out_lookups: sum,
    lost_ns: sum,
    lost_unknown: sum,
    retries: sum,
    next_server: sum,
    unanswered: sum,
    answered_in_timeouts: sum,
    walks: sum,
    search_queries: sum,
    walk_ns: sum,
    walk_timed: or,
    names: merge,
    span: merge,
    evidence: first,
});

/// The names looked up ([`MAX_NAMES`] at most), in the order seen.
#[derive(Clone, Default)]
struct Names(Vec<String>);

impl Names {
    fn add(&mut self, n: String) {
        if self.0.len() < MAX_NAMES && !self.0.contains(&n) {
            self.0.push(n);
        }
    }
}

impl Merge for Names {
    fn merge(&mut self, o: Self) {
        for n in o.0 {
            self.add(n);
        }
    }
}

/// Whether two question names belong to one lookup: the same name, or one a search-list
/// candidate of the other (`api.lab.test.ns.svc.cluster.local` and `api.lab.test`); a name
/// strace cut short matches what it starts.
fn related(a: &Question, name: &str, truncated: bool) -> bool {
    let (x, y) = (a.name.as_str(), name);
    let under = |long: &str, short: &str| long.len() > short.len() && long.starts_with(short) && long.as_bytes()[short.len()] == b'.';
    x == y || under(x, y) || under(y, x) || (a.truncated && y.starts_with(x)) || (truncated && x.starts_with(y))
}

/// A call that sends (its messages are questions).
fn sends(sys: Sys) -> bool {
    matches!(sys, Sys::Sendto | Sys::Sendmsg | Sys::Sendmmsg | Sys::Send | Sys::Write | Sys::Writev)
}

fn first_label(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

fn hash_str(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

impl DnsTimeout {
    /// The thread's lookup is over: what it did goes to its program.
    fn end_lookup(s: &mut State<'_, Self>) {
        let Some(l) = s.existing().and_then(|t| t.lookup.take()) else { return };
        if l.queries == 0 {
            return;
        }
        let grp = s.program();
        grp.lookups += 1;
        grp.queries += u64::from(l.queries);
        grp.timeouts += u64::from(l.timeouts);
        if l.timeouts > 0 {
            grp.timed_out_lookups += 1;
            grp.lost_ns += l.lost_ns;
            grp.lost_unknown += u64::from(l.lost_unknown);
        }
        grp.retries += u64::from(l.retries);
        grp.next_server += u64::from(l.next_server);
        grp.unanswered += l.questions.iter().filter(|q| !q.answered).count() as u64;
        if l.timeouts > 0 {
            grp.answered_in_timeouts += l.questions.iter().filter(|q| q.answered).count() as u64;
        }
        let walked = l.resolved_after_nx;
        if walked {
            grp.walks += 1;
            grp.search_queries += u64::from(l.nx);
            if let (Some(a), Some(b)) = (l.first_ts, l.last_nx_ts) {
                grp.walk_ns += (b - a).max(0) as u64;
                grp.walk_timed = true;
            }
        }
        if l.timeouts > 0 || walked {
            let name = l.resolved.clone().or_else(|| {
                l.questions.iter().min_by_key(|q| q.name.len()).map(|q| {
                    if q.truncated {
                        format!("{}…", q.name)
                    } else {
                        q.name.clone()
                    }
                })
            });
            if let Some(n) = name {
                grp.names.add(n);
            }
            grp.span.add(l.first_ts);
            grp.span.add(l.last_ts);
            let buf = grp.evidence.get_or_insert_with(|| EvidenceBuf::new(EVIDENCE));
            for e in l.evidence {
                if buf.first.len() < buf.cap {
                    buf.first.push(e);
                } else {
                    buf.last = Some(e);
                }
            }
        }
    }

    /// A DNS message sent or received on a thread's DNS socket.
    fn message(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall, fd: i32, tcp: bool) {
        let send = sends(sc.sys);
        let mut msgs: Vec<(DnsMsg, bool)> = Vec::new();
        for (b, cut) in sc.payloads() {
            let m = if tcp { b.get(2..).and_then(|x| parse_dns(x, cut)) } else { None };
            if let Some(m) = m.or_else(|| parse_dns(&b, cut)) {
                msgs.push((m, cut));
            }
        }
        let count = match sc.ret {
            Ret::Ok { val, .. } if matches!(sc.sys, Sys::Sendmmsg | Sys::Recvmmsg) => val.max(0) as u32,
            _ => 1,
        };
        let server = cx.target.as_ref().map_or(0, |t| hash_str(t.display.rsplit("->").next().unwrap_or(t.display)));
        // a question unrelated to the lookup, or one it had answered asked again without a
        // timeout between: the next lookup
        if send {
            let new_lookup = s.existing().and_then(|t| t.lookup.as_ref()).is_some_and(|l| {
                msgs.iter().filter(|(m, _)| !m.response).any(|(m, _)| {
                    // after an NXDOMAIN the resolver tries the next search-list candidate: the
                    // same first label (`svc0.lab.test.svc.cluster.local` after
                    // `svc0.lab.test.shop.svc.cluster.local`, which -s 32 may both cut short)
                    let candidate = l.nx > 0 && l.questions.iter().any(|q| first_label(&q.name) == first_label(&m.name));
                    let unrelated = !l.questions.is_empty()
                        && !candidate
                        && !l.questions.iter().any(|q| related(q, &m.name, m.truncated));
                    // (with the type known: a name cut short hides whether A or AAAA is asked)
                    let again = !l.after_timeout
                        && m.qtype.is_some()
                        && l.questions.iter().any(|q| q.answered && q.id != m.id && q.name == m.name && q.qtype == m.qtype);
                    unrelated || again
                })
            });
            if new_lookup {
                Self::end_lookup(s);
            }
        }
        // a lookup starts: it belongs to the program the process runs now
        if s.existing().is_some_and(|t| t.lookup.is_none()) {
            s.regroup();
        }
        let Some(t) = s.thread() else { return };
        // the socket's messages in flight
        let si = match t.socks.iter().position(|s| s.fd == fd) {
            Some(i) => Some(i),
            None if t.socks.len() < MAX_SOCKS => {
                t.socks.push(Sock { fd, outstanding: 0, last_send: None });
                Some(t.socks.len() - 1)
            }
            None => None,
        };
        let l = t.lookup.get_or_insert_with(Lookup::default);
        if ev.ts_ns.is_some() {
            l.last_ts = ev.ts_ns;
        }
        if send {
            let questions: Vec<&DnsMsg> = msgs.iter().filter(|(m, _)| !m.response).map(|(m, _)| m).collect();
            let n = if matches!(sc.sys, Sys::Sendmmsg) { (questions.len() as u32).max(count) } else { (questions.len() as u32).max(1) };
            if let Some(i) = si {
                t.socks[i].outstanding += n;
                t.socks[i].last_send = ev.ts_ns.or(t.socks[i].last_send);
            }
            l.queries += n;
            if l.first_ts.is_none() {
                l.first_ts = ev.ts_ns;
            }
            let decoded = questions.len() as u32;
            let (mut retried, mut moved) = (0u32, 0u32);
            for m in questions {
                let full = l.questions.len() >= MAX_QUESTIONS;
                match l.questions.iter_mut().find(|q| q.id == m.id && q.name == m.name) {
                    Some(q) => {
                        l.retries += 1;
                        retried += 1;
                        if q.server != server {
                            l.next_server += 1;
                            moved += 1;
                            q.server = server;
                        }
                        q.answered = false;
                    }
                    None if !full => l.questions.push(Question {
                        id: m.id,
                        name: m.name.clone(),
                        truncated: m.truncated,
                        qtype: m.qtype,
                        server,
                        answered: false,
                    }),
                    None => {}
                }
            }
            // the kernel program copies the first message of a sendmmsg only: when the ones it
            // shows are all sent again, so are the others (glibc resends its A+AAAA pair)
            if decoded > 0 && retried == decoded && n > decoded {
                l.retries += n - decoded;
                if moved == decoded {
                    l.next_server += n - decoded;
                }
            }
            if (l.evidence.is_empty() || (retried > 0 && l.after_timeout)) && l.evidence.len() < LOOKUP_EVIDENCE {
                l.evidence.push(Evidence::of(ev));
            }
            l.after_timeout = false;
        } else {
            let responses: Vec<&DnsMsg> = msgs.iter().filter(|(m, _)| m.response).map(|(m, _)| m).collect();
            let n = if responses.is_empty() { count } else { responses.len() as u32 };
            if let Some(i) = si {
                t.socks[i].outstanding = t.socks[i].outstanding.saturating_sub(n);
            }
            let end = ev.ts_ns.map(|ts| ts + sc.dur_ns.unwrap_or(0) as i64);
            for m in responses {
                if let Some(q) = l.questions.iter_mut().find(|q| q.id == m.id && q.name == m.name) {
                    q.answered = true;
                }
                match m.rcode {
                    3 => {
                        l.nx += 1;
                        l.last_nx_ts = end.or(l.last_nx_ts);
                        if l.nx == 1 && l.evidence.len() < LOOKUP_EVIDENCE {
                            l.evidence.push(Evidence::of(ev));
                        }
                    }
                    0 => {
                        if l.nx > 0 && !l.resolved_after_nx {
                            l.resolved_after_nx = true;
                            if l.evidence.len() < LOOKUP_EVIDENCE {
                                l.evidence.push(Evidence::of(ev));
                            }
                        }
                        if m.answers > 0 && l.resolved.is_none() {
                            l.resolved = Some(if m.truncated { format!("{}…", m.name) } else { m.name.clone() });
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// A wait by a thread: a timed-out one while a question is unanswered is time lost.
    fn wait(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall, recv_fd: Option<i32>) {
        let min_ns = self.cfg.min_wait_ms.saturating_mul(1_000_000);
        let Some(t) = s.existing() else { return };
        // the fd waited on, when the trace shows it (strace text; the kernel does not copy fd arrays)
        let watched = recv_fd.or_else(|| sc.polled_fds().map(|p| p.first));
        let waiting = t.socks.iter().any(|s| {
            s.outstanding > 0
                && watched.is_none_or(|w| w == s.fd)
                && match (s.last_send, ev.ts_ns) {
                    (Some(a), Some(b)) => b - a < STALE_NS,
                    _ => true,
                }
        });
        if !waiting {
            return;
        }
        let Some(l) = t.lookup.as_mut() else { return };
        let waited = waited_ns(sc);
        if waited.is_some_and(|w| w < min_ns) {
            return;
        }
        l.timeouts += 1;
        match waited {
            Some(w) => l.lost_ns += w,
            None => l.lost_unknown += 1,
        }
        l.after_timeout = true;
        if l.evidence.len() < LOOKUP_EVIDENCE {
            l.evidence.push(Evidence::of(ev));
        }
    }
}

impl Hosted for DnsTimeout {
    type Thread = Thread;
    type Program = Group;
    type Object = ();
    const MAX_THREADS: usize = MAX_THREADS;

    /// The thread ended: so did its lookup.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        Self::end_lookup(s);
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::{Confidence, Severity};
        // the full-trace rule reads the excerpt first; this one is for the lines that begin
        // after the question was sent: a wait that expired next to DNS traffic of the same
        // thread (the question sent again, to this or the next server, right after it)
        let min_ns = self.cfg.min_wait_ms.saturating_mul(1_000_000);
        let dns_fds: std::collections::HashSet<(u32, i32)> = x
            .calls
            .iter()
            .filter(|c| c.addr.as_deref().is_some_and(|a| a.ends_with(":53")))
            .filter_map(|c| c.fd.map(|fd| (c.tid.0, fd)))
            .collect();
        if dns_fds.is_empty() {
            return Vec::new();
        }
        let dns = |c: &crate::basis::Call| c.fd.is_some_and(|fd| dns_fds.contains(&(c.tid.0, fd)));
        let (mut waits, mut lost_ns) = (0u64, 0u64);
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            if !c.sys.is(Class::POLL) || c.ret != Some(0) {
                continue;
            }
            let asked = match c.timeout {
                Some(syslint_event::Timeout::Ns(n)) => Some(n),
                _ => None,
            };
            let Some(ns) = c.dur_ns.or(asked).filter(|&n| n >= min_ns) else { continue };
            // DNS traffic of this thread within three calls either side
            let near = x.calls[i.saturating_sub(3)..(i + 4).min(x.calls.len())]
                .iter()
                .any(|o| o.tid == c.tid && dns(o) && (o.sys.is(Class::NET) || o.sys.is(Class::WRITE) || o.sys.is(Class::READ)));
            if near {
                waits += 1;
                lost_ns += ns;
                idx.push(i);
            }
        }
        if waits == 0 {
            return Vec::new();
        }
        let lost = lost_ns as f64 / 1e9;
        let mut ev_idx = idx.clone();
        // the DNS lines around the first wait
        if let Some(&w) = idx.first() {
            ev_idx.extend((w + 1..(w + 4).min(x.calls.len())).filter(|&j| dns(&x.calls[j])));
            ev_idx.sort_unstable();
        }
        let time = if x.durations { "its duration" } else { "the timeout it asked for (no durations)" };
        META.finding(
            Severity::warning_if(lost >= 0.5),
            format!(
                "a DNS lookup waited out its timeout: {waits} {} with nothing received, {lost:.2} s, next to queries to port 53",
                if waits == 1 { "wait" } else { "waits" }
            ),
        )
        .metrics([("timed_out_waits", waits.into()), ("lost_s", serde_json::json!((lost * 1e6).round() / 1e6))])
        .lines(x.evidence(&ev_idx, 4))
        .in_excerpt(
            x,
            Confidence::Medium,
            &format!("{waits} wait(s) of at least {} ms that returned nothing, on a thread sending DNS queries, timed by {time}", self.cfg.min_wait_ms),
        )
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, wall_times, RowSys, SysRows};
        use syslint_report::{Confidence, Severity};
        const WAIT: &[Sys] = &[Sys::Poll, Sys::Ppoll, Sys::Select, Sys::Pselect6, Sys::EpollWait, Sys::EpollPwait];
        // glibc's resolver asks A and AAAA with one sendmmsg per lookup; after a lost answer
        // it asks again one question at a time with sendto
        if !wall_times(c) {
            return Vec::new();
        }
        let lookups = c.calls_of(&[Sys::Sendmmsg]);
        let receives = c.calls_of(&[Sys::Recvfrom, Sys::Recvmsg]);
        let wait_s: f64 = c.seconds_of(WAIT);
        let waits = c.calls_of(WAIT);
        // a parent's wait for its children holds their time again: not counted
        const CHILD_WAIT: &[Sys] = &[Sys::Wait4, Sys::Waitid, Sys::Waitpid];
        let all_s: f64 = c.rows.iter().filter(|r| !CHILD_WAIT.contains(&r.sys())).filter_map(|r| r.seconds).sum();
        // at least a second of waiting per lookup (glibc's shortest timeout), in few long
        // waits, most of the table's time
        if lookups == 0 || receives == 0 || waits == 0 || wait_s < lookups as f64 * 0.9 || wait_s / (waits as f64) < 0.1 || wait_s * 2.0 < all_s {
            return Vec::new();
        }
        META.finding(
            Severity::Info,
            format!("waits of about a second per DNS lookup: {wait_s:.2} s in {waits} waits beside {lookups} sendmmsg (a glibc lookup each)"),
        )
        .metrics([
            ("lookups", lookups.into()),
            ("waits", waits.into()),
            ("wait_s", serde_json::json!((wait_s * 1e6).round() / 1e6)),
        ])
        .lines(count_lines(c, &[WAIT, &[Sys::Sendmmsg, Sys::Sendto, Sys::Recvfrom, Sys::Recvmsg]].concat()))
        .in_table(
            c,
            Confidence::Low,
            &format!(
                "{:.2} s waiting per sendmmsg, in waits of {:.0} ms on average, most of the time counted; a table cannot say the waits were for the DNS answers (an event loop waits the same way), nor which server was silent",
                wait_s / lookups as f64,
                wait_s * 1000.0 / waits as f64
            ),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if sc.sys.is(Class::POLL) {
            // a wait that ended with nothing: `= 0 (Timeout)`
            if timed_out_wait(sc).is_some() {
                self.wait(s, ev, sc, None);
            }
            return;
        }
        let Some(fd) = sc.fd_num() else { return };
        if sc.sys == Sys::Close {
            if let (Some(fd), Some(t)) = (cx.closed_fd(sc), s.existing()) {
                t.socks.retain(|k| k.fd != fd);
            }
            return;
        }
        let Some(target) = cx.target.as_ref() else { return };
        if !(target.kind.is_udp() || target.kind.is_tcp() || target.kind == syslint_event::TargetKind::Unknown) {
            return;
        }
        let send = sends(sc.sys);
        let Some(tcp) = dns_socket(cx, ev, sc, fd) else { return };
        match sc.ret {
            Ret::Ok { val, .. } if val > 0 => self.message(s, cx, ev, sc, fd, tcp),
            // a blocking receive with a socket timeout (SO_RCVTIMEO) that ran out
            Ret::Err { .. } if !send && sc.ret.errno() == Some("EAGAIN") && sc.dur_ns.is_some() => {
                self.wait(s, ev, sc, Some(fd));
            }
            _ => {}
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let window_s = cx.window.map_or(0.0, |w| w.duration_s);
        groups.findings(cx.model, |g| {
            let timeouts = g.timeouts >= self.cfg.min_timeouts.max(1);
            let walks = g.search_queries >= self.cfg.min_search_queries.max(1);
            if !(timeouts || walks) {
                return None;
            }
            let lost_s = (g.lost_unknown == 0 && g.timeouts > 0).then_some(g.lost_ns as f64 / 1e9);
            let walk_s = (g.walk_timed && walks).then_some(g.walk_ns as f64 / 1e9);
            let total = if timeouts { lost_s.unwrap_or(0.0) } else { 0.0 } + walk_s.unwrap_or(0.0);
            let share = if window_s > 0.0 { total / window_s } else { 0.0 };
            let severity = registry::severity_for(total, share, self.cfg.warn_s, self.cfg.error_s);
            let mut m = Metrics::new();
            m.count("lookups", g.lookups);
            m.count("queries", g.queries);
            m.value("queries_per_lookup", g.queries as f64 / g.lookups.max(1) as f64);
            m.count("timeouts", g.timeouts);
            m.count("timed_out_lookups", g.timed_out_lookups);
            m.value_opt("lost_s", lost_s);
            if let (Some(s), true) = (lost_s, g.timed_out_lookups > 0) {
                m.value("lost_per_timed_out_lookup_ms", s * 1000.0 / g.timed_out_lookups as f64);
            }
            m.count("retries", g.retries);
            m.count("next_server", g.next_server);
            m.count("unanswered", g.unanswered);
            m.count("walks", g.walks);
            m.count("search_queries", g.search_queries);
            m.value_opt("walk_s", walk_s);
            m.json("names", serde_json::json!(g.names.0));
            let mut parts = Vec::new();
            if timeouts {
                let lost = match lost_s {
                    Some(s) => format!(" ({})", secs(s)),
                    None => String::new(),
                };
                parts.push(format!(
                    "{} of {} lookups waited out a DNS timeout{lost}: {} timed-out waits, {} retries{}",
                    g.timed_out_lookups,
                    g.lookups,
                    g.timeouts,
                    g.retries,
                    if g.next_server > 0 { format!(" ({} to the next nameserver)", g.next_server) } else { String::new() }
                ));
            }
            if walks {
                parts.push(format!(
                    "{} lookups walked the search list first: {} queries answered NXDOMAIN before the name resolved",
                    g.walks, g.search_queries
                ));
            }
            let message = parts.join("; ");
            // the fix for what was seen: a dead server, a lost query of a pair, a walk
            let mut fixes = Vec::new();
            if timeouts && g.next_server > 0 {
                fixes.push("remove or fix the nameserver that does not answer (resolv.conf lists it before one that does, and every lookup waits for it first)");
            }
            // no question of the timed-out lookups was ever answered: the one nameserver is dead
            let dead = timeouts && g.next_server == 0 && g.answered_in_timeouts == 0;
            if dead {
                fixes.push("fix or replace the nameserver in resolv.conf: it answered none of these lookups' queries, and each waits out resolv.conf's `timeout` times `attempts`; where the program looks up its clients' addresses, turn that off (sshd `UseDNS no`, MariaDB/MySQL `skip-name-resolve`, Apache `HostnameLookups Off`)");
            } else if timeouts && (g.next_server == 0 || g.next_server < g.retries) {
                fixes.push("send A and AAAA one after the other from new sockets where one of a pair is lost (`options single-request-reopen` in resolv.conf or the pod's dnsConfig, `use-vc` for TCP), or have the server answer AAAA (`options no-aaaa`, glibc 2.36+, on IPv4-only hosts)");
            }
            if walks {
                fixes.push("resolve external names with a trailing dot (`api.example.com.`) or a lower ndots (Kubernetes dnsConfig `ndots: 1`), so the search domains are not tried first");
            }
            let fix = format!(
                "{}; a local caching resolver (nscd, systemd-resolved, dnsmasq, NodeLocal DNSCache) hides what remains",
                fixes.join("; ")
            );
            let measured = cx.tracer.measured();
            let cost = match (timeouts.then_some(lost_s).flatten(), walk_s) {
                _ if !timeouts && walk_s.is_none() => format!(
                    "{:.1} queries per lookup; time unknown (the walk needs timestamps, -tt, to be timed)",
                    g.queries as f64 / g.lookups.max(1) as f64
                ),
                (lost, walk) => {
                    let mut c = Vec::new();
                    if let Some(s) = lost {
                        c.push(format!(
                            "{} waiting for answers that never came, {} per lookup that timed out",
                            secs(s),
                            secs(s / g.timed_out_lookups.max(1) as f64)
                        ));
                    } else if timeouts {
                        c.push("the timed-out waits' time is unknown (no -T and no timeout argument)".into());
                    }
                    if let Some(s) = walk {
                        c.push(format!(
                            "{} walking search domains ({:.1} queries per lookup)",
                            secs(s),
                            g.queries as f64 / g.lookups.max(1) as f64
                        ));
                    }
                    format!("{} ({measured})", c.join("; "))
                }
            };
            Some(
                META.finding(severity, message)
                    .over(&g.span)
                    .metrics(m)
                    .evidence(&g.evidence, cx.clock)
                    .cost(cost)
                    .fix(fix)
                    // its own fixes (a dead nameserver, the A/AAAA pair) still lead with the
                    // program's knob (sshd `UseDNS no`)
                    .advice("dns-timeout"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/dns-timeout/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn search_candidates_belong_to_their_name() {
        let q = |name: &str, truncated| Question { id: 1, name: name.into(), truncated, qtype: Some(1), server: 0, answered: true };
        assert!(related(&q("api.lab.test.shop.svc.cluster.local", false), "api.lab.test", false));
        assert!(related(&q("api.lab.test", false), "api.lab.test.svc.cluster.local", false));
        assert!(!related(&q("api.lab.test", false), "db.lab.test", false));
        assert!(!related(&q("api.lab.test", false), "api.lab.testing", false));
        // cut short by -s 32
        assert!(related(&q("api.lab.test.shop.svc.c", true), "api.lab.test.shop.svc.cluster.local", false));
    }

}
