//! repeated-dns (SL004): the same name looked up again and again.
//!
//! A lookup is seen from two sides: DNS messages on sockets talking to port 53 (the query name
//! is decoded from the buffer when strace printed it: the QNAME labels after the 12-byte
//! header; `-s 32` cuts names longer than about 20 bytes, which is said), and the resolver's
//! files (/etc/hosts, /etc/resolv.conf, /etc/nsswitch.conf, /etc/gai.conf, /etc/host.conf)
//! that glibc and musl open or stat on every getaddrinfo call.
//!
//! Per thread, resolver activity is grouped into lookups: a lookup ends when the thread
//! connects (or sends a datagram) to some other address, which also tells what the name
//! resolved to; a new one starts when /etc/hosts (or another resolver file) is opened again,
//! or a question already answered is asked again. Lookups are then grouped by the query name,
//! or, when no DNS message showed it (names from /etc/hosts), by the address connected to
//! right after.

use crate::kit::secs;
use crate::detectors::{Evidence, EvidenceBuf, Span};
use crate::kit::dns::{dns_socket, parse_dns, DnsMsg};
use crate::kit::Metrics;
use crate::model::Model;
use crate::kit::Rekey;
use crate::registry::{self, Ctx, Detector, FinishCtx, Meta};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::net::IpAddr;
use syslint_event::{Class, Event, Tgid, Tid, Ret, SockAddr, Sys, Syscall, TargetKind};
use syslint_report::{Finding, Subject, SubjectKind};

crate::detector!(
    "repeated_dns",
    RepeatedDns {
        cfg,
        episodes: HashMap::default(),
        pending: Vec::new(),
        aggs: HashMap::default(),
        order: Vec::new(),
    },
    unhosted
);

/// The resolver's files, and a bit for each.
const FILES: [&str; 5] = ["/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf"];
const HOSTS: u8 = 1;

fn resolver_file(path: &str) -> Option<u8> {
    FILES.iter().position(|f| *f == path).map(|i| 1u8 << i)
}

/// One getaddrinfo-like lookup in progress on a thread.
#[derive(Clone, Default)]
struct Episode {
    /// The thread (its process is asked of the model when the lookup ends: a thread whose
    /// lines came before its clone() returned looks like a process of its own at first).
    tid: Tid,
    name: Option<String>,
    truncated: bool,
    /// `name` is the one that was answered (the search list's expansions before it were not):
    /// the name the program asked for, whatever the search list tried first.
    answered_name: bool,
    asked: Vec<(String, u16)>,
    answered: Vec<(String, u16)>,
    opened: u8,
    hosts_opens: u32,
    config_reads: u32,
    queries: u32,
    answers: u32,
    files_ns: u64,
    files_timed: bool,
    dns_first: Option<i64>,
    dns_last: Option<i64>,
    dns_dur_ns: u64,
    dns_timed: bool,
    /// Waits for an answer that timed out (dns-timeout's to charge, not this detector's) inside
    /// the span from the first question to the last answer, and those after the last answer so
    /// far (inside the span once another answer comes).
    timeout_ns: u64,
    pending_timeout_ns: u64,
    resolved_to: Option<IpAddr>,
    span: Span,
    evidence: Vec<Evidence>,
}

impl Episode {
    fn is_lookup(&self) -> bool {
        self.hosts_opens > 0 || self.queries > 0 || self.answers > 0
    }
    fn dns_wait_ns(&self) -> u64 {
        match (self.dns_first, self.dns_last) {
            (Some(a), Some(b)) if b >= a => (b - a) as u64,
            _ => self.dns_dur_ns,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Key {
    Name(String),
    Addr(IpAddr),
    Process(Tgid),
}

#[derive(Clone, Default)]
struct Agg {
    lookups: u64,
    procs: HashSet<Tgid>,
    queries: u64,
    answers: u64,
    hosts_opens: u64,
    config_reads: u64,
    resolve_ns: u64,
    dns_wait_ns: u64,
    timed: bool,
    dns_timed: bool,
    truncated: bool,
    span: Span,
    evidence: EvidenceBuf,
    shown: u32,
}

#[derive(Clone)]
pub struct RepeatedDns {
    cfg: Config,
    episodes: HashMap<Tid, Episode>,
    /// Finished lookups with no name yet, waiting for the connect that follows in their process
    /// (one per process; which process is asked of the model when the connect comes, as a
    /// resolver thread may have ended before its clone() returned).
    pending: Vec<Episode>,
    aggs: HashMap<Key, Agg>,
    order: Vec<Key>,
}

impl RepeatedDns {
    /// The thread's lookup in progress, started if there is none (None when at the cap).
    fn episode(&mut self, tid: Tid) -> Option<&mut Episode> {
        if !self.episodes.contains_key(&tid) {
            if self.episodes.len() >= MAX_EPISODES {
                return None;
            }
            self.episodes.insert(tid, Episode { tid, ..Default::default() });
        }
        self.episodes.get_mut(&tid)
    }

    /// End the thread's lookup: to the totals when it is named, else pending for the connect
    /// that may follow in its process.
    fn end_episode(&mut self, model: &Model, tid: Tid) {
        let Some(ep) = self.episodes.remove(&tid) else { return };
        if !ep.is_lookup() {
            return;
        }
        if ep.name.is_some() || ep.resolved_to.is_some() {
            self.record(model, ep);
            return;
        }
        let tgid = model.tgid(tid);
        if let Some(i) = self.pending.iter().position(|p| model.tgid(p.tid) == tgid) {
            let old = self.pending.swap_remove(i);
            self.record(model, old);
        }
        if self.pending.len() >= MAX_PENDING {
            let old = self.pending.remove(0);
            self.record(model, old);
        }
        self.pending.push(ep);
    }

    fn record(&mut self, model: &Model, ep: Episode) {
        let tgid = model.tgid(ep.tid);
        let key = match (&ep.name, ep.resolved_to) {
            (Some(n), _) => Key::Name(n.clone()),
            (None, Some(ip)) => Key::Addr(ip),
            (None, None) => Key::Process(tgid),
        };
        if !self.aggs.contains_key(&key) {
            if self.aggs.len() >= MAX_KEYS {
                return;
            }
            self.aggs.insert(key.clone(), Agg { evidence: EvidenceBuf::new(5), ..Default::default() });
            self.order.push(key.clone());
        }
        let Some(a) = self.aggs.get_mut(&key) else { return };
        a.lookups += 1;
        if a.procs.len() < MAX_PROCS {
            a.procs.insert(tgid);
        }
        a.queries += ep.queries as u64;
        a.answers += ep.answers as u64;
        a.hosts_opens += ep.hosts_opens as u64;
        a.config_reads += ep.config_reads as u64;
        // a timed-out wait is dns-timeout's cost: one cost, one owner
        let wait = ep.dns_wait_ns().saturating_sub(ep.timeout_ns);
        a.dns_wait_ns += wait;
        a.resolve_ns += ep.files_ns + wait;
        a.timed |= ep.files_timed || ep.dns_timed;
        a.dns_timed |= ep.dns_timed;
        a.truncated |= ep.truncated;
        a.span.add(ep.span.first);
        a.span.add(ep.span.last);
        if a.shown < 2 {
            a.shown += 1;
            for e in ep.evidence {
                if a.evidence.first.len() < a.evidence.cap {
                    a.evidence.first.push(e);
                }
            }
        } else if let Some(e) = ep.evidence.into_iter().next() {
            a.evidence.last = Some(e);
        }
    }

    /// The thread connected or sent to `addr`: its lookup (or its process's) is over.
    fn boundary(&mut self, model: &Model, tid: Tid, ip: IpAddr) {
        let tgid = model.tgid(tid);
        // an earlier lookup of the process with no connect of its own (a library resolving
        // twice, a resolver thread that ended) led here too
        let pending = self.pending.iter().position(|p| model.tgid(p.tid) == tgid).map(|i| {
            let mut ep = self.pending.swap_remove(i);
            ep.resolved_to = Some(ip);
            ep
        });
        let had_pending = pending.is_some();
        if let Some(ep) = pending {
            self.record(model, ep);
        }
        if let Some(ep) = self.episodes.get_mut(&tid) {
            if ep.is_lookup() {
                if ep.resolved_to.is_none() {
                    ep.resolved_to = Some(ip);
                }
                self.end_episode(model, tid);
                return;
            }
        }
        if had_pending {
            return;
        }
        // a resolver thread still running (curl's threaded resolver): it resolved for us
        for ep in self.episodes.values_mut() {
            if model.tgid(ep.tid) == tgid && ep.is_lookup() && ep.name.is_none() && ep.resolved_to.is_none() {
                ep.resolved_to = Some(ip);
                break;
            }
        }
    }

    fn file_activity(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall, bit: u8, open: bool) {
        let tid = ev.tid;
        if open {
            // the same file opened again: this is the next lookup
            if self.episodes.get(&tid).is_some_and(|e| e.opened & bit != 0 && e.is_lookup()) {
                self.end_episode(cx.model, tid);
            }
        }
        let Some(ep) = self.episode(tid) else { return };
        if let Some(d) = sc.dur_ns {
            ep.files_ns += d;
            ep.files_timed = true;
        }
        if open {
            ep.opened |= bit;
            if bit == HOSTS {
                ep.hosts_opens += 1;
                ep.span.add(ev.ts_ns);
                if ep.evidence.len() < EPISODE_EVIDENCE {
                    ep.evidence.push(Evidence::of(ev));
                }
            } else {
                ep.config_reads += 1;
            }
        }
    }

    fn dns_activity(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall, send: bool, tcp: bool) {
        let tid = ev.tid;
        let bufs = sc.payloads();
        let mut msgs: Vec<DnsMsg> = Vec::new();
        for (b, cut) in &bufs {
            // over TCP a message starts with its 2-byte length (unless that came alone)
            let m = if tcp { b.get(2..).and_then(|x| parse_dns(x, *cut)).or_else(|| parse_dns(b, *cut)) } else { None };
            if let Some(m) = m.or_else(|| parse_dns(b, *cut)) {
                msgs.push(m);
            }
        }
        // strace printed no buffer (an address instead): count the messages blind
        let blind = bufs.is_empty();
        let mmsg = matches!(sc.sys, Sys::Sendmmsg | Sys::Recvmmsg);
        let count = match sc.ret {
            Ret::Ok { val, .. } if matches!(sc.sys, Sys::Sendmmsg | Sys::Recvmmsg) => val.max(0) as u32,
            _ => 1,
        };
        if send {
            // a question already answered in this lookup: the program is asking again
            let again = msgs.iter().filter(|m| !m.response).any(|m| {
                self.episodes.get(&tid).is_some_and(|e| {
                    e.answered.iter().any(|(n, t)| *n == m.name && Some(*t) == m.qtype)
                        || (m.qtype.is_none() && e.answered.iter().any(|(n, _)| *n == m.name))
                })
            });
            if again {
                self.end_episode(cx.model, tid);
            }
        }
        let Some(ep) = self.episode(tid) else { return };
        if let Some(d) = sc.dur_ns {
            ep.dns_dur_ns += d;
            ep.dns_timed = true;
        }
        let end = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
        ep.span.add(ev.ts_ns);
        // the messages of the call: sendmmsg/recvmmsg say how many went even when only some
        // were shown (the eBPF backend copies the first message only)
        let messages = |shown: usize| {
            let shown = shown as u32;
            if blind {
                count
            } else if mmsg {
                shown.max(count)
            } else {
                shown
            }
        };
        if send {
            ep.queries += messages(msgs.iter().filter(|m| !m.response).count());
            if ep.dns_first.is_none() {
                ep.dns_first = ev.ts_ns;
            }
            if ev.ts_ns.is_some() {
                ep.dns_timed = true;
            }
        } else {
            ep.answers += messages(msgs.iter().filter(|m| m.response).count());
            if end.is_some() {
                ep.dns_last = end;
                ep.timeout_ns += std::mem::take(&mut ep.pending_timeout_ns);
            }
        }
        for m in msgs {
            // an answer with records names the lookup: a search list asks
            // `api.lab.test.shop.svc.cluster.local` first, but `api.lab.test` is what resolved
            let answer = m.response && m.rcode == 0 && m.answers > 0 && !m.truncated;
            if ep.name.is_none() || (ep.truncated && !m.truncated) || (answer && !ep.answered_name) {
                ep.truncated = m.truncated;
                ep.name = Some(if m.truncated { format!("{}…", m.name) } else { m.name.clone() });
                ep.answered_name |= answer;
            }
            if let Some(t) = m.qtype {
                let list = if m.response { &mut ep.answered } else { &mut ep.asked };
                if list.len() < MAX_ASKED && !list.iter().any(|(n, q)| *n == m.name && *q == t) {
                    list.push((m.name, t));
                }
            }
        }
        if ep.evidence.len() < EPISODE_EVIDENCE {
            ep.evidence.push(Evidence::of(ev));
        }
    }
}

impl Detector for RepeatedDns {
    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // questions asked, per name: one lookup asks A and AAAA, so count per (name, type)
        let mut asked: std::collections::BTreeMap<String, std::collections::BTreeMap<Option<u16>, u64>> = Default::default();
        let mut idx: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
        for (i, c) in x.calls.iter().enumerate() {
            if !matches!(c.sys, Sys::Sendto | Sys::Sendmsg | Sys::Sendmmsg | Sys::Write) {
                continue;
            }
            for (b, cut) in &c.payloads {
                if let Some(m) = parse_dns(b, *cut).filter(|m| !m.response && !m.name.is_empty()) {
                    *asked.entry(m.name.clone()).or_default().entry(m.qtype).or_default() += 1;
                    let v = idx.entry(m.name).or_default();
                    if v.last() != Some(&i) {
                        v.push(i);
                    }
                }
            }
        }
        let Some((name, lookups)) =
            asked.iter().map(|(n, t)| (n.clone(), t.values().copied().max().unwrap_or(0))).filter(|(_, l)| *l >= 3).max_by_key(|(_, l)| *l)
        else {
            return Vec::new();
        };
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::Name).name(name.clone());
        META.finding(
            syslint_report::Severity::Warning,
            format!("the same name looked up again and again: {name} asked {lookups} times"),
        )
        .about(&name, about)
        .metrics([("lookups", lookups.into())])
        .lines(x.evidence(idx.get(&name).map_or(&[][..], |v| &v[..]), 4))
        .in_excerpt(x, Confidence::Medium, &format!("{lookups} DNS questions for one name"))
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        let n = c.calls_of(&[Sys::Sendmmsg]);
        if n < 10 {
            return Vec::new();
        }
        META.finding(
            syslint_report::Severity::Info,
            format!("about {n} name lookups (sendmmsg calls, as glibc's resolver makes one per lookup)"),
        )
        .metrics([("sendmmsg", n.into())])
        .lines(count_lines(c, &[Sys::Sendmmsg, Sys::Socket, Sys::Connect, Sys::Recvfrom]))
        .in_table(
            c,
            Confidence::Low,
            "sendmmsg is how glibc's resolver asks; the table shows no names, so whether one name is looked up again and again is unknown",
        )
    }

    fn meta(&self) -> &'static Meta {
        &META
    }

    fn on_exit(&mut self, cx: &Ctx, ev: &Event) {
        if self.episodes.contains_key(&ev.tid) {
            self.end_episode(cx.model, ev.tid);
        }
    }

    fn on_syscall(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let class = sc.sys.class();
        if class.has(Class::POLL) {
            // a wait for an answer that timed out, within a lookup that asked a DNS server
            if let Some(Some(w)) = crate::kit::dns::timed_out_wait(sc) {
                if let Some(ep) = self.episodes.get_mut(&ev.tid) {
                    if ep.queries > 0 && w >= crate::kit::dns::MIN_WAIT_NS {
                        ep.pending_timeout_ns += w;
                    }
                }
            }
            return;
        }
        if class.has(Class::LOOKUP) {
            // cheap test first: nearly every path is not a resolver file
            let Some(path) = sc.path() else { return };
            let Some(bit) = resolver_file(&path) else { return };
            let open = class.has(Class::OPEN);
            self.file_activity(cx, ev, sc, bit, open);
            return;
        }
        if sc.sys == Sys::Connect {
            // a TCP connect after a lookup tells where the name led (tried or made: a refused
            // first address is still the lookup's answer); UDP connects are skipped, glibc
            // makes them inside getaddrinfo to sort several answers
            if let (Some(SockAddr::Inet { ip, port }), Some(fd)) = (sc.sockaddr(), sc.fd()) {
                let tcp = cx.model.lookup_fd(ev.tid, fd.num).is_some_and(|t| t.kind.is_tcp());
                if tcp && port != 53 && port != 0 {
                    self.boundary(cx.model, ev.tid, ip);
                }
            }
            return;
        }
        if !(class.has(Class::READ) || class.has(Class::WRITE) || matches!(sc.sys, Sys::Sendmmsg | Sys::Recvmmsg)) {
            if sc.sys == Sys::Close {
                if let Some(t) = cx.target.as_ref() {
                    if t.kind == TargetKind::File && resolver_file(t.display).is_some() {
                        if let Some(ep) = self.episodes.get_mut(&ev.tid) {
                            if let Some(d) = sc.dur_ns {
                                ep.files_ns += d;
                            }
                        }
                    }
                }
            }
            return;
        }
        let Some(t) = cx.target.as_ref() else { return };
        if t.kind == TargetKind::File {
            // reads of an open resolver file belong to the lookup
            if resolver_file(t.display).is_some() {
                if let (Some(ep), Some(d)) = (self.episodes.get_mut(&ev.tid), sc.dur_ns) {
                    ep.files_ns += d;
                    ep.files_timed = true;
                }
            }
            return;
        }
        // "unknown": an fd the model lost or never saw made (attached late, or a thread whose
        // lines came before its clone() returned): only the call's own address can tell
        if !(t.kind.is_udp() || t.kind.is_tcp() || t.kind == TargetKind::Unknown) {
            return;
        }
        let Some(fd) = sc.fd_num() else { return };
        let send = class.has(Class::WRITE) || sc.sys == Sys::Sendmmsg;
        let ok = matches!(sc.ret, Ret::Ok { val, .. } if val > 0);
        match dns_socket(cx, ev, sc, fd) {
            Some(tcp) if ok => self.dns_activity(cx, ev, sc, send, tcp),
            Some(_) => {}
            None => {
                // a datagram to another address ends a lookup like a connect does
                if send && matches!(sc.sys, Sys::Sendto | Sys::Sendmsg) {
                    if let Some(SockAddr::Inet { ip, port }) = sc.sockaddr() {
                        if port != 53 {
                            self.boundary(cx.model, ev.tid, ip);
                        }
                    }
                }
            }
        }
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.episodes]
    }

    fn stretch(&mut self, by: f64) {
        crate::registry::Stretch::stretch(&mut self.cfg, by);
    }
    fn finish(&mut self, cx: &FinishCtx) -> Vec<Finding> {
        let tids: Vec<Tid> = self.episodes.keys().copied().collect();
        for tid in tids {
            self.end_episode(cx.model, tid);
        }
        for ep in std::mem::take(&mut self.pending) {
            self.record(cx.model, ep);
        }
        let window_s = cx.window.map_or(0.0, |w| w.duration_s);
        let mut out = Vec::new();
        for key in &self.order {
            let Some(a) = self.aggs.get(key) else { continue };
            let min = match key {
                Key::Name(_) => self.cfg.min_lookups,
                _ => self.cfg.min_lookups_unnamed,
            };
            if a.lookups < min.max(2) {
                continue;
            }
            let resolve_s = a.resolve_ns as f64 / 1e9;
            let wait_s = a.dns_wait_ns as f64 / 1e9;
            let repeats = a.lookups - 1;
            let wasted = a.timed.then(|| resolve_s * repeats as f64 / a.lookups as f64);
            let severity = match wasted {
                Some(w) => registry::severity_for(
                    w,
                    if window_s > 0.0 { w / window_s } else { 0.0 },
                    self.cfg.warn_s,
                    self.cfg.error_s,
                ),
                None => syslint_report::Severity::Info,
            };
            let procs = a.procs.len();
            let by = if procs > 1 { format!(" by {procs} processes") } else { String::new() };
            let (subject, about, message) = match key {
                Key::Name(n) => (
                    n.clone(),
                    Subject::new(SubjectKind::Name).name(n.as_str()),
                    format!("{n} looked up {} times{by}", a.lookups),
                ),
                Key::Addr(ip) => (
                    format!("name resolving to {ip}"),
                    Subject::new(SubjectKind::Address).name(ip.to_string()),
                    format!(
                        "a name resolving to {ip} looked up {} times{by} (answered from /etc/hosts; the name is not in the trace)",
                        a.lookups
                    ),
                ),
                Key::Process(p) => (
                    cx.model.label(p.main_thread()),
                    Subject::new(SubjectKind::Lookups).program(cx.model.comm(p.main_thread())),
                    format!("{} name lookups whose names are not in the trace", a.lookups),
                ),
            };
            let mut metrics = Metrics::new();
            metrics.count("lookups", a.lookups);
            metrics.count("processes", procs);
            metrics.count("dns_queries", a.queries);
            metrics.count("dns_answers", a.answers);
            metrics.count("hosts_file_reads", a.hosts_opens);
            metrics.count("config_reads", a.config_reads);
            metrics.count("name_truncated", u64::from(a.truncated));
            if a.timed {
                metrics.value("resolve_s", resolve_s);
                metrics.value("avg_lookup_ms", resolve_s * 1000.0 / a.lookups as f64);
            }
            if a.dns_timed {
                metrics.value("dns_wait_s", wait_s);
            }
            if let Some(w) = wasted {
                metrics.value("wasted_s", w);
            }
            let mut cost = match wasted {
                Some(w) => format!(
                    "{repeats} of {} lookups repeat an earlier one: about {} ({} resolving in total{})",
                    a.lookups,
                    secs(w),
                    secs(resolve_s),
                    if a.queries > 0 { format!(", {} of it waiting for dns answers", secs(wait_s)) } else { String::new() }
                ),
                None => format!(
                    "{repeats} of {} lookups repeat an earlier one; time unknown (the resolver calls need -T to be timed, \
or -tt with DNS traffic)",
                    a.lookups
                ),
            };
            if a.truncated {
                cost.push_str("; strace cut the name short (-s): rerun with -s 256 to see it whole");
            }
            let mut fix = String::from(META.docs.fix);
            if procs > 1 {
                fix = format!(
                    "{procs} separate processes resolved it: do the requests from one process (e.g. one curl \
invocation with every URL) or run a local caching resolver. {fix}"
                );
            }
            out.push(
                META.finding(severity, message)
                    .about(subject, about)
                    .over(&a.span)
                    .metrics(metrics)
                    .evidence(&a.evidence, cx.clock)
                    .cost(cost)
                    .fix(fix)
                    .build(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/repeated-dns/expect.toml, run by src/check/fixtures.rs.
    use super::*;
    use syslint_event::args;

    #[test]
    fn decodes_query_names() {
        let q = args::unescape_bytes(r"\5(\1\0\0\1\0\0\0\0\0\0\4feed\3lab\4test\0\0\1\0\1");
        let m = parse_dns(&q, false).unwrap();
        assert_eq!((m.response, m.name.as_str(), m.truncated, m.qtype), (false, "feed.lab.test", false, Some(1)));
        let r = args::unescape_bytes(r"S%\201\200\0\1\0\0\0\0\0\0\4feed\3lab\4test\0\0\34\0\1");
        let m = parse_dns(&r, false).unwrap();
        assert_eq!((m.response, m.qtype), (true, Some(28)));
        // -s 32 cut the name: what is there, marked
        let cut = args::unescape_bytes(r"\5(\1\0\0\1\0\0\0\0\0\0\27a-rather-long-feed-na");
        let m = parse_dns(&cut, true).unwrap();
        assert_eq!((m.name.as_str(), m.truncated), ("a-rather-long-feed-na", true));
        assert!(parse_dns(&cut, false).is_none());
        // not DNS: HTTP text
        assert!(parse_dns(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", false).is_none());
    }
}
