//! `nagle-delay` (SL020): small writes on a TCP connection answered only after the peer's
//! delayed ACK (~40 ms on Linux, up to 200 ms elsewhere): a request written in two or more
//! small writes (a header, then a body) to a peer that answers only once it has all of it.
//!
//! Per process and TCP socket, a *request* is the writes since the last read that returned
//! data, ended by the next read that returns data (the answer). A request of two or more
//! writes, each at most `max_write_bytes`, on a socket without TCP_NODELAY or TCP_CORK and
//! without MSG_MORE, is a *split request*; its round trip is timed from its last write to the
//! end of the answering read (a wait in poll or epoll_wait between is part of it). A split
//! request whose round trip falls between `min_delay_ms` and `max_delay_ms` is *delayed*.
//! Requests are summed per program.

use super::{Evidence, EvidenceBuf};
use crate::hist::Histogram;
use crate::host::{Groups, Hosted, State};
use crate::kit::{Metrics, Span};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Event, MsgFlags, Ret, SockOpt, Sys, Syscall};
use syslint_report::{Finding, Severity};

crate::detector!("nagle_delay", struct NagleDelay);

/// The first exchanges of a connection, which Linux answers in quick-ack mode (a TLS handshake's
/// two writes, a connection per request): not counted when the round trips are unknown.
const QUICK_EXCHANGES: u32 = 2;

/// A TCP socket of a process (its fd), from its first write or TCP_NODELAY/TCP_CORK to its
/// close; or, older than the trace, from a read that came first.
#[derive(Clone, Default)]
pub struct Conn {
    /// The process wrote on it or set TCP_NODELAY or TCP_CORK: a connection followed (before,
    /// all that is known is that the peer spoke first).
    open: bool,
    /// Older than the trace, and the peer spoke first (a server's).
    read_first: bool,
    /// TCP_NODELAY or TCP_CORK set: the program handles segmenting itself.
    managed: bool,
    /// The request being written.
    writes: u32,
    small: bool,
    more: bool,
    last_write: Option<i64>,
    evidence: Vec<Evidence>,
    /// Split requests seen on it (to count connections).
    split: bool,
    /// Requests answered on it so far.
    answered: u32,
    /// The connection was accepted: what it writes are responses (a server), not requests.
    accepted: bool,
}

#[derive(Clone, Default)]
pub struct Group {
    split: u64,
    /// Of those, written on accepted connections (responses of a server).
    served: u64,
    /// Split requests past their connection's first exchanges (which quick-ack mode answers at
    /// once): what an untimed trace is judged on.
    settled: u64,
    split_writes: u64,
    timed: u64,
    delayed: u64,
    delayed_ns: u64,
    rtt: Histogram,
    one_write: u64,
    one_write_rtt: Histogram,
    connections: u64,
    span: Span,
    /// The first delayed request (the first split one without durations).
    evidence: Option<EvidenceBuf>,
}

crate::merge!(Group {
    split: sum,
    served: sum,
    settled: sum,
    split_writes: sum,
    timed: sum,
    delayed: sum,
    delayed_ns: sum,
    rtt: merge,
    one_write: sum,
    one_write_rtt: merge,
    connections: sum,
    span: merge,
    evidence: first,
});

/// A request whose answer arrived, taken off its connection.
struct Request {
    writes: u32,
    managed: bool,
    /// Two or more small writes, without TCP_NODELAY, TCP_CORK or MSG_MORE.
    split: bool,
    /// The connection's first split request.
    first_split: bool,
    /// Past the connection's first exchanges.
    settled: bool,
    accepted: bool,
    /// From the last write to the end of the answering read.
    rtt: Option<u64>,
    evidence: Vec<Evidence>,
}

impl Conn {
    /// The answer to the request being written arrived: the request (`None` when nothing was
    /// written since the last answer).
    fn answered(&mut self, ev: &Event, sc: &Syscall) -> Option<Request> {
        let writes = std::mem::take(&mut self.writes);
        if writes == 0 {
            return None;
        }
        // the round trip from the last write to the end of this read: it needs the read's
        // duration (-T, eBPF) and both times
        let rtt = match (self.last_write, ev.ts_ns, sc.dur_ns) {
            (Some(w), Some(t), Some(d)) => Some((t + d as i64 - w).max(0) as u64),
            _ => None,
        };
        let split = writes >= 2 && self.small && !self.more && !self.managed;
        let first_split = split && !self.split;
        if split {
            self.split = true;
        }
        let settled = self.answered >= QUICK_EXCHANGES;
        self.answered = self.answered.saturating_add(1);
        Some(Request {
            writes,
            managed: self.managed,
            split,
            first_split,
            settled,
            accepted: self.accepted,
            rtt,
            evidence: std::mem::take(&mut self.evidence),
        })
    }
}

impl NagleDelay {
    /// Classify and count an answered request in its program.
    fn count(&self, g: &mut Group, r: Request, ev: &Event) {
        let (min_ns, max_ns) = (self.cfg.min_delay_ms * 1_000_000, self.cfg.max_delay_ms * 1_000_000);
        if !r.split {
            if r.writes == 1 && !r.managed {
                if let Some(rtt) = r.rtt {
                    g.one_write += 1;
                    g.one_write_rtt.record(rtt);
                }
            }
            return;
        }
        g.split += 1;
        g.served += u64::from(r.accepted);
        g.settled += u64::from(r.settled);
        g.split_writes += u64::from(r.writes);
        if r.first_split {
            g.connections += 1;
        }
        g.span.add(ev.ts_ns);
        let mut evidence = r.evidence;
        if let Some(rtt) = r.rtt {
            g.timed += 1;
            g.rtt.record(rtt);
            if (min_ns..=max_ns).contains(&rtt) {
                g.delayed += 1;
                g.delayed_ns += rtt;
                if g.evidence.is_none() {
                    evidence.push(Evidence::of(ev));
                    g.evidence = Some(EvidenceBuf { first: evidence, ..EvidenceBuf::new(REQUEST_EVIDENCE + 1) });
                }
            }
        } else if g.evidence.is_none() {
            evidence.push(Evidence::of(ev));
            g.evidence = Some(EvidenceBuf { first: evidence, ..EvidenceBuf::new(REQUEST_EVIDENCE + 1) });
        }
    }
}

fn is_send(sys: Sys) -> bool {
    matches!(sys, Sys::Write | Sys::Writev | Sys::Send | Sys::Sendto | Sys::Sendmsg)
}

impl Hosted for NagleDelay {
    type Thread = ();
    type Program = Group;
    type Object = Conn;
    const MAX_OBJECTS: usize = MAX_CONNS;

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // a delayed ACK is a time: without durations the lines of a client that set
        // TCP_NODELAY before them look the same as those of one that did not
        if !x.durations {
            return Vec::new();
        }
        let (min_ns, max_ns) = (self.cfg.min_delay_ms * 1_000_000, self.cfg.max_delay_ms * 1_000_000);
        // per thread and fd: the writes since the last read that returned data
        #[derive(Default)]
        struct Req {
            writes: u32,
            small: bool,
            first: usize,
        }
        let mut reqs: HashMap<(u32, i32), Req> = HashMap::default();
        let mut managed: std::collections::HashSet<(u32, i32)> = Default::default();
        let (mut split, mut delayed, mut single, mut single_slow) = (0u64, 0u64, 0u64, 0u64);
        let mut delayed_ns = 0u64;
        let mut idx = Vec::new();
        for (i, c) in x.calls.iter().enumerate() {
            let Some(fd) = c.fd else { continue };
            let key = (c.tid.0, fd);
            if c.target_kind.is_some_and(|k| !k.is_tcp()) {
                continue;
            }
            let body = c.evidence.body();
            if c.sys == Sys::Setsockopt && (body.contains("TCP_NODELAY") || body.contains("TCP_CORK")) && !body.contains("[0]") {
                managed.insert(key);
                continue;
            }
            let Some(n) = c.ret.filter(|&n| n > 0) else { continue };
            if is_send(c.sys) {
                let r = reqs.entry(key).or_default();
                if r.writes == 0 {
                    r.small = true;
                    r.first = i;
                }
                r.writes += 1;
                r.small &= (n as u64) <= self.cfg.max_write_bytes && !body.contains("MSG_MORE");
            } else if matches!(c.sys, Sys::Read | Sys::Readv | Sys::Recv | Sys::Recvfrom | Sys::Recvmsg) {
                let Some(r) = reqs.remove(&key) else { continue };
                let Some(d) = c.dur_ns else { continue };
                let slow = (min_ns..=max_ns).contains(&d);
                if r.writes >= 2 && r.small && !managed.contains(&key) {
                    split += 1;
                    if slow {
                        delayed += 1;
                        delayed_ns += d;
                        if idx.len() < 6 {
                            idx.extend([r.first, i]);
                        }
                    }
                } else if r.writes == 1 {
                    single += 1;
                    single_slow += u64::from(slow);
                }
            }
        }
        // most split requests delayed, and one-write requests (if any) not as slow: a slow peer
        // answers both late
        if delayed < 3 || delayed * 4 < split * 3 || (single >= 3 && single_slow * 2 >= single) {
            return Vec::new();
        }
        let s = delayed_ns as f64 / 1e9;
        let strong = delayed >= 5;
        let conf = Confidence::medium_if(strong);
        let why = if strong {
            format!("{delayed} requests of two or more small writes, each answered {}-{} ms later, and no TCP_NODELAY in the lines", self.cfg.min_delay_ms, self.cfg.max_delay_ms)
        } else {
            format!("{delayed} requests of small writes answered {}-{} ms later: too few to tell a delayed ACK from a slow peer", self.cfg.min_delay_ms, self.cfg.max_delay_ms)
        };
        META.finding(
            Severity::warning_if(strong && s >= 0.5),
            format!(
                "requests written in small pieces answered only after a delayed ACK: {delayed} of {split} split requests waited {:.0} ms on average for their answer",
                s * 1000.0 / delayed as f64
            ),
        )
        .metrics([
            ("split_requests", split.into()),
            ("delayed", delayed.into()),
            ("delayed_s", serde_json::json!((s * 1e6).round() / 1e6)),
        ])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, wall_times, SysRows};
        use syslint_report::Confidence;
        const READ: &[Sys] = &[Sys::Read, Sys::Recvfrom, Sys::Recv, Sys::Recvmsg];
        const WRITE: &[Sys] = &[Sys::Write, Sys::Sendto, Sys::Send, Sys::Sendmsg];
        // a delayed ACK is a time: strace -c without -w counts system time, not waits
        if !wall_times(c) {
            return Vec::new();
        }
        let (reads, writes) = (c.calls_of(READ), c.calls_of(WRITE));
        let read_s: f64 = c.seconds_of(READ);
        let all_s: f64 = c.rows.iter().filter_map(|r| r.seconds).sum();
        if reads < 20 {
            return Vec::new();
        }
        let avg_ms = read_s * 1000.0 / reads as f64;
        let (lo, hi) = (self.cfg.min_delay_ms as f64, self.cfg.max_delay_ms as f64);
        // two writes or more per answer, each read waiting about a delayed-ACK timer, the
        // reads most of the time
        if writes * 10 < reads * 18 || !(lo..=hi).contains(&avg_ms) || read_s * 2.0 < all_s {
            return Vec::new();
        }
        META.finding(
            Severity::Info,
            format!("two writes per read and reads of {avg_ms:.0} ms each: {writes} writes, {reads} reads, {read_s:.2} s reading"),
        )
        .metrics([
            ("reads", reads.into()),
            ("writes", writes.into()),
            ("read_ms_avg", serde_json::json!((avg_ms * 1e3).round() / 1e3)),
        ])
        .lines(count_lines(c, &[READ, WRITE].concat()))
        .in_table(
            c,
            Confidence::Low,
            &format!(
                "{:.1} writes per read and {avg_ms:.0} ms per read, as a request in two small writes waiting for the peer's delayed ACK looks; a table shows neither the order of the calls nor their sizes, nor whether the peer is simply that slow",
                writes as f64 / reads as f64
            ),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Some(fd) = sc.fd_num().and_then(|fd| u64::try_from(fd).ok()) else { return };
        if sc.sys == Sys::Close {
            if let Some(fd) = cx.closed_object(sc) {
                s.end_object(fd, self);
            }
            return;
        }
        let Some(t) = cx.target.as_ref() else { return };
        if !t.kind.is_tcp() {
            return;
        }
        if sc.sys == Sys::Setsockopt {
            if let Some(o) = sc.sockopt() {
                let tcp = o.level == Some(SockOpt::SOL_TCP);
                let on = o.value.is_none_or(|v| v != 0);
                if tcp && matches!(o.name, Some(SockOpt::TCP_NODELAY | SockOpt::TCP_CORK)) && on {
                    if let Some(c) = s.object_or(fd, Conn::default) {
                        c.open = true;
                        c.managed = true;
                    }
                }
            }
            return;
        }
        let Ret::Ok { val, .. } = sc.ret else { return };
        if val <= 0 {
            return;
        }
        if is_send(sc.sys) {
            let Some(c) = s.object_or(fd, Conn::default) else { return };
            if !c.open {
                c.open = true;
                // accepted, or (a connection older than the trace) the peer spoke first
                c.accepted = match t.endpoint {
                    Some(e) => e.direction == syslint_event::Direction::In,
                    None => c.read_first,
                };
            }
            if c.writes == 0 {
                c.small = true;
                c.more = false;
                c.evidence.clear();
            }
            c.writes += 1;
            c.small &= (val as u64) <= self.cfg.max_write_bytes;
            c.more |= sc.msg_flags().is_some_and(|f| f.contains(MsgFlags::MORE));
            c.last_write = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
            if c.evidence.len() < REQUEST_EVIDENCE {
                c.evidence.push(Evidence::of(ev));
            }
            return;
        }
        // a read that returned data: the answer; on a connection that has not written yet, the
        // peer spoke first
        let c = if t.endpoint.is_none() { s.object_or(fd, Conn::default) } else { s.existing_object(fd) };
        let Some(c) = c else { return };
        if !c.open {
            c.read_first = true;
            return;
        }
        let request = c.answered(ev, sc);
        // the process counts among its program's whenever it reads an answer
        let g = s.program();
        if let Some(r) = request {
            self.count(g, r, ev);
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let min_ns = self.cfg.min_delay_ms * 1_000_000;
        groups.findings(cx.model, |g| {
            if g.split == 0 {
                return None;
            }
            let ms = |ns: u64| ns as f64 / 1e6;
            let timed = g.timed > 0;
            let median = timed.then(|| g.rtt.quantile(0.5));
            // one-write requests that wait as long: the peer is slow, not Nagle
            let slow_peer = g.one_write >= 10 && g.one_write_rtt.quantile(0.5) >= min_ns;
            let (report, severity) = if timed {
                let most = g.delayed * 2 >= g.timed;
                let report = g.delayed >= self.cfg.min_delayed.max(1) && most && !slow_peer;
                let s = g.delayed_ns as f64 / 1e9;
                (report, Severity::warning_if(s >= self.cfg.warn_s))
            } else {
                (g.settled >= self.cfg.min_untimed.max(1), Severity::Info)
            };
            if !report {
                return None;
            }
            let mut m = Metrics::new();
            m.count("split_requests", g.split);
            m.count("delayed_requests", g.delayed);
            m.count("timed_requests", g.timed);
            if let Some(md) = median {
                m.value("median_rtt_ms", ms(md));
                m.value("p90_rtt_ms", ms(g.rtt.quantile(0.9)));
            }
            m.value("writes_per_request", g.split_writes as f64 / g.split as f64);
            m.count("one_write_requests", g.one_write);
            if g.one_write > 0 {
                m.value("one_write_median_rtt_ms", ms(g.one_write_rtt.quantile(0.5)));
            }
            if timed {
                m.value("delayed_s", g.delayed_ns as f64 / 1e9);
            }
            m.count("connections", g.connections);
            let per = g.split_writes as f64 / g.split as f64;
            // a server writes responses and reads the next request; a client the other way
            let (what, one, next) = if g.served * 2 > g.split {
                ("responses", "response", ": the next request came")
            } else {
                ("requests", "request", " were answered")
            };
            let (message, cost) = match median {
                Some(md) => (
                    format!(
                        "{} of {} {what} written in {per:.1} small writes each{next} only after {:.0} ms (median): \
the peer's delayed ACK holding back the last write (Nagle)",
                        g.delayed,
                        g.timed,
                        ms(md)
                    ),
                    format!(
                        "{:.2} s in delayed round trips, about {:.0} ms per {one} that TCP_NODELAY or one write per {one} \
saves ({})",
                        g.delayed_ns as f64 / 1e9,
                        ms(md),
                        cx.tracer.measured()
                    ),
                ),
                None => (
                    format!(
                        "{} {what} written in {per:.1} small writes each before reading from the peer, on sockets without \
TCP_NODELAY: the pattern Nagle's algorithm delays",
                        g.split
                    ),
                    "time unknown: the round trips need durations (strace -T, or eBPF) to show whether each waited \
for a delayed ACK (about 40 ms)"
                        .to_string(),
                ),
            };
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/nagle-delay/expect.toml, run by src/check/fixtures.rs.
