//! `keepalive-stall` (SL005): a client that keeps reading a connection after the response is
//! complete, until the peer's idle timeout closes it (or its own read timeout fires).
//!
//! Per connection (process, fd) it follows the calls on the socket: data reads, writes (a new
//! request), and the blocking calls in between (reads, and poll/ppoll/select on that fd
//! alone). Time blocked since the last data is the stall; it counts when the connection then
//! ends with EOF (read = 0), or with a wait that timed out and a close. Blocking time comes
//! from `-T`, else from timestamps (a call lasts until its thread's next event); with neither
//! the detector says nothing.

use super::{Evidence, Span};
use crate::kit::Metrics;
use crate::kit::Rekey;
use crate::registry::{self, Ctx, Detector, FinishCtx, Meta};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Event, MsgFlags, Tgid, Tid, Ret, Sys, Syscall, TargetKind};
use syslint_report::{Finding, Subject, SubjectKind};

crate::detector!(
    "keepalive_stall",
    KeepaliveStall {
        cfg,
        conns: HashMap::default(),
        pending: HashMap::default(),
        groups: HashMap::default(),
        other: Group::default(),
    },
    unhosted
);

/// (process, fd)
type Key = (Tgid, i32);

#[derive(Clone, Default)]
struct Conn {
    start_ts: Option<i64>,
    /// Time inside calls on the socket (known or estimated).
    busy_ns: u64,
    bytes_in: u64,
    /// Data arrived since the last write.
    got_data: bool,
    /// Blocked since the last data.
    wait_ns: u64,
    /// The last wait ended in a timeout (poll = 0, EAGAIN/ETIMEDOUT after blocking).
    timed_out: bool,
    /// Longest wait between two pieces of data of the current response.
    max_gap_ns: u64,
    /// A call's blocking time could not be known (no -T, no timestamps).
    untimed: bool,
    endpoint: Option<Box<str>>,
    first_data: Option<Evidence>,
    last_data: Option<Evidence>,
    long_wait: Option<(u64, Evidence)>,
}

/// What a call on a followed socket did.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Op {
    /// Data arrived; `gap` is the wait before it, without the call's own time.
    Data { gap_ns: u64, counted: bool },
    /// The peer closed (read = 0).
    Eof,
    /// Waited on the socket (poll/select on it alone, a read without data).
    Wait { timed_out: bool },
    /// Any other call on the socket (writes, connect, ...): time only.
    Other,
}

/// A call whose duration is known only at its thread's next event (no -T).
#[derive(Clone)]
struct Pending {
    key: Key,
    op: Op,
    ts: i64,
    ev: Option<Evidence>,
}

#[derive(Clone, Default)]
struct Group {
    stalls: u64,
    stall_ns: u64,
    max_stall_ns: u64,
    transfer_ns: u64,
    bytes: u64,
    eof: u64,
    timeout: u64,
    procs: Vec<Tgid>,
    span: Span,
    evidence: Vec<Evidence>,
}

#[derive(Clone)]
pub struct KeepaliveStall {
    cfg: Config,
    conns: HashMap<Key, Conn>,
    pending: HashMap<Tid, Pending>,
    groups: HashMap<Box<str>, Group>,
    other: Group,
}

impl KeepaliveStall {
    /// Apply a call's blocking time to its connection; a finished connection is judged.
    fn settle(&mut self, key: Key, op: Op, end_ts: Option<i64>, dur: Option<u64>, ev: Option<Evidence>) {
        let Some(c) = self.conns.get_mut(&key) else {
            return;
        };
        let d = dur.unwrap_or(0);
        if dur.is_none() {
            c.untimed = true;
        }
        c.busy_ns += d;
        match op {
            Op::Data { gap_ns, counted } => {
                if counted {
                    c.max_gap_ns = c.max_gap_ns.max(gap_ns + d);
                }
            }
            Op::Wait { .. } | Op::Eof => {
                c.wait_ns += d;
                if let Some(ev) = ev {
                    if c.long_wait.as_ref().is_none_or(|(w, _)| d > *w) {
                        c.long_wait = Some((d, ev.clone()));
                    }
                    if op == Op::Eof {
                        self.end(key, end_ts, true, Some(ev));
                        return;
                    }
                }
                if op == Op::Eof {
                    self.end(key, end_ts, true, None);
                }
            }
            Op::Other => {}
        }
    }

    /// The connection ended (EOF, close, process exit): a stall if it waited long enough
    /// after the data for nothing.
    fn end(&mut self, key: Key, end_ts: Option<i64>, eof: bool, last: Option<Evidence>) {
        let Some(c) = self.conns.remove(&key) else {
            return;
        };
        if !c.got_data || c.untimed || !(eof || c.timed_out) {
            return;
        }
        let stall = c.wait_ns;
        if (stall as f64) < self.cfg.min_stall_s * 1e9 || (stall as f64) < self.cfg.gap_ratio * c.max_gap_ns as f64 {
            return;
        }
        let transfer = match (c.start_ts, end_ts) {
            (Some(a), Some(b)) if b >= a => (b - a) as u64,
            _ => c.busy_ns,
        }
        .max(stall);
        let g = match c.endpoint.as_deref() {
            Some(ep) if self.groups.contains_key(ep) || self.groups.len() < MAX_GROUPS => {
                self.groups.entry(ep.into()).or_default()
            }
            _ => &mut self.other,
        };
        g.stalls += 1;
        g.stall_ns += stall;
        g.transfer_ns += transfer;
        g.bytes += c.bytes_in;
        if eof {
            g.eof += 1;
        } else {
            g.timeout += 1;
        }
        if !g.procs.contains(&key.0) && g.procs.len() < MAX_PROCS {
            g.procs.push(key.0);
        }
        if let Some(t) = end_ts {
            g.span.add(Some(t.saturating_sub(stall as i64)));
            g.span.add(Some(t));
        }
        if stall > g.max_stall_ns || g.evidence.is_empty() {
            g.max_stall_ns = g.max_stall_ns.max(stall);
            g.evidence.clear();
            let wait = c.long_wait.map(|(_, e)| e);
            for e in [c.first_data, c.last_data, wait, last].into_iter().flatten() {
                if g.evidence.last() != Some(&e) {
                    g.evidence.push(e);
                }
            }
        }
    }

    fn resolve_pending(&mut self, pid: Tid, now: Option<i64>) {
        if self.pending.is_empty() {
            return;
        }
        if let Some(p) = self.pending.remove(&pid) {
            let (end, dur) = match now {
                Some(t) => (Some(t.max(p.ts)), Some(t.saturating_sub(p.ts).max(0) as u64)),
                None => (None, None),
            };
            self.settle(p.key, p.op, end, dur, p.ev);
        }
    }

    fn process_ended(&mut self, tgid: Tgid, ts: Option<i64>) {
        let keys: Vec<Key> = self.conns.keys().filter(|k| k.0 == tgid).copied().collect();
        for k in keys {
            self.end(k, ts, false, None);
        }
    }

    fn syscall(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let class = sc.sys.class();
        if !(class.has(Class::FD) || class.has(Class::POLL)) {
            return;
        }
        // the socket a call is about: its fd argument, or the one fd a poll/select waits on
        let (fd, polled) = match sc.sys {
            Sys::Poll | Sys::Ppoll | Sys::Select | Sys::NewSelect | Sys::Pselect6 => match single_polled_fd(sc) {
                Some(fd) => (fd, true),
                None => return,
            },
            Sys::Accept | Sys::Accept4 => {
                if let Some(v) = sc.ret.value().filter(|&v| v >= 0) {
                    self.open_conn(cx, ev, v as i32);
                }
                return;
            }
            _ => match sc.fd_num() {
                Some(f) => (f, false),
                None => return,
            },
        };
        let tgid = cx.tgid;
        let key = (tgid, fd);
        if sc.sys == Sys::Close {
            if cx.earlier_life {
                // a close of an earlier life of the number: the connection on it now is the
                // next one (Ctx::earlier_life)
                return;
            }
            let end = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
            let last = self.conns.get(&key).filter(|c| c.got_data && c.timed_out).map(|_| Evidence::of(ev));
            self.end(key, end, false, last);
            return;
        }
        if sc.sys == Sys::Connect {
            let ok = matches!(sc.ret, Ret::Ok { .. }) || sc.ret.errno() == Some("EINPROGRESS");
            if ok {
                self.open_conn(cx, ev, fd);
            }
            return;
        }
        let read = class.has(Class::READ);
        let write = class.has(Class::WRITE);
        if !(read || write || polled) {
            return;
        }
        if !self.conns.contains_key(&key) {
            // a connection made before the trace began (or before a fork): follow it from here
            let is_socket = if polled {
                cx.model.lookup_fd(ev.tid, fd).is_some_and(|t| stream_socket(t.kind, t.display))
            } else {
                cx.target.is_some_and(|t| stream_socket(t.kind, t.display))
            };
            if !is_socket || self.conns.len() >= MAX_CONNS {
                return;
            }
            self.open_conn(cx, ev, fd);
        }
        let Some(c) = self.conns.get_mut(&key) else {
            return;
        };
        if c.endpoint.is_none() {
            if let Some(t) = cx.model.lookup_fd(ev.tid, fd) {
                c.endpoint = Some(endpoint_of(&t).into());
            }
        }
        let op = if polled {
            let timed_out = sc.ret.value() == Some(0) && sc.timeout().is_some_and(|t| !t.is_zero());
            Op::Wait { timed_out }
        } else if read {
            match &sc.ret {
                Ret::Ok { val, .. } if *val > 0 => {
                    let peek = sc.msg_flags().is_some_and(|f| f.contains(MsgFlags::PEEK));
                    if !peek {
                        c.bytes_in += *val as u64;
                    }
                    let counted = c.got_data;
                    let gap_ns = c.wait_ns;
                    if !c.got_data {
                        c.first_data = Some(Evidence::of(ev));
                        c.max_gap_ns = 0;
                    } else if !peek && short_read(sc, *val) {
                        c.last_data = Some(Evidence::of(ev));
                    }
                    c.got_data = true;
                    c.wait_ns = 0;
                    c.timed_out = false;
                    c.long_wait = None;
                    Op::Data { gap_ns, counted }
                }
                Ret::Ok { .. } => Op::Eof,
                Ret::Err { errno, .. } => {
                    Op::Wait { timed_out: matches!(*errno, "EAGAIN" | "EWOULDBLOCK" | "ETIMEDOUT") }
                }
                _ => return,
            }
        } else {
            if sc.ret.value().is_some() {
                // a new request: what follows waits for a new response
                c.got_data = false;
                c.wait_ns = 0;
                c.timed_out = false;
                c.max_gap_ns = 0;
                c.first_data = None;
                c.last_data = None;
                c.long_wait = None;
            }
            Op::Other
        };
        if let Op::Wait { timed_out } = op {
            if timed_out {
                c.timed_out = true;
            } else if sc.ret.value().is_some_and(|v| v > 0) {
                c.timed_out = false;
            }
        }
        // evidence for the waits that may turn out long, and the EOF
        let want_ev = matches!(op, Op::Eof) || (matches!(op, Op::Wait { .. }) && c.got_data);
        match (sc.dur_ns, ev.ts_ns) {
            (Some(d), ts) => {
                let long = matches!(op, Op::Eof) || (d as f64) >= self.cfg.min_stall_s * 1e9 / 4.0;
                let e = (want_ev && long).then(|| Evidence::of(ev));
                self.settle(key, op, ts.map(|t| t + d as i64), Some(d), e);
            }
            (None, Some(ts)) => {
                let e = want_ev.then(|| Evidence::of(ev));
                if self.pending.len() < MAX_CONNS || self.pending.contains_key(&ev.tid) {
                    self.pending.insert(ev.tid, Pending { key, op, ts, ev: e });
                }
            }
            (None, None) => self.settle(key, op, None, None, None),
        }
    }

    fn open_conn(&mut self, cx: &Ctx, ev: &Event, fd: i32) {
        let tgid = cx.tgid;
        let Some(t) = cx.model.lookup_fd(ev.tid, fd) else {
            return;
        };
        if !stream_socket(t.kind, t.display) {
            return;
        }
        if self.conns.len() >= MAX_CONNS && !self.conns.contains_key(&(tgid, fd)) {
            return;
        }
        let c = Conn { start_ts: ev.ts_ns, endpoint: Some(endpoint_of(&t).into()), ..Default::default() };
        self.conns.insert((tgid, fd), c);
    }
}

/// TCP or a named unix stream socket (not a socketpair between processes).
fn stream_socket(kind: TargetKind, display: &str) -> bool {
    kind.is_tcp() || (kind == TargetKind::Unix && display != "socketpair")
}

fn endpoint_of(t: &crate::model::TargetView) -> String {
    match t.endpoint {
        Some(e) => e.endpoint.clone(),
        None => t.display.to_string(),
    }
}

/// A read that returned less than it asked for (`read(fd, buf, 4096) = 260`).
fn short_read(sc: &Syscall, got: i64) -> bool {
    sc.requested_bytes().and_then(|a| i64::try_from(a).ok()).is_some_and(|asked| got < asked)
}

/// The fd a poll/ppoll/select/pselect6 waits on, when it waits on exactly one.
fn single_polled_fd(sc: &Syscall) -> Option<i32> {
    sc.polled_fds().filter(|p| p.only).map(|p| p.first)
}

impl Detector for KeepaliveStall {
    fn meta(&self) -> &'static Meta {
        &META
    }

    fn on_syscall(&mut self, cx: &Ctx, ev: &Event, sc: &Syscall) {
        self.resolve_pending(ev.tid, ev.ts_ns);
        self.syscall(cx, ev, sc);
    }

    fn on_exit(&mut self, cx: &Ctx, ev: &Event) {
        self.resolve_pending(ev.tid, ev.ts_ns);
        if !self.conns.is_empty() && ev.tid.leads(cx.tgid) {
            self.process_ended(cx.tgid, ev.ts_ns);
        }
    }

    fn on_note(&mut self, _cx: &Ctx, ev: &Event) {
        self.resolve_pending(ev.tid, ev.ts_ns);
    }

    fn on_alias(&mut self, _cx: &Ctx, ev: &Event, _old: Tid) {
        // the maps were re-keyed already (`keyed`): what the old id was waiting for is now ev.tid's
        self.resolve_pending(ev.tid, ev.ts_ns);
    }

    fn keyed(&mut self) -> Vec<&mut dyn Rekey> {
        vec![&mut self.conns, &mut self.pending]
    }

    fn stretch(&mut self, by: f64) {
        crate::registry::Stretch::stretch(&mut self.cfg, by);
    }
    fn finish(&mut self, cx: &FinishCtx) -> Vec<Finding> {
        // calls still open when the trace ended: their end is unknown
        let pids: Vec<Tid> = self.pending.keys().copied().collect();
        for p in pids {
            self.resolve_pending(p, None);
        }
        let keys: Vec<Key> = self.conns.keys().copied().collect();
        let end = cx.window.map(|w| (w.end_s * 1e9) as i64);
        for k in keys {
            self.end(k, end, false, None);
        }
        let mut out = Vec::new();
        let other = std::mem::take(&mut self.other);
        let mut groups: Vec<(Box<str>, Group)> = self.groups.drain().collect();
        if other.stalls > 0 {
            groups.push(("(other endpoints)".into(), other));
        }
        groups.sort_by(|a, b| b.1.stall_ns.cmp(&a.1.stall_ns).then(a.0.cmp(&b.0)));
        for (ep, g) in groups {
            out.push(self.finding(cx, &ep, g));
        }
        out
    }
}

impl KeepaliveStall {
    fn finding(&self, cx: &FinishCtx, ep: &str, g: Group) -> Finding {
        let stall_s = g.stall_ns as f64 / 1e9;
        let transfer_s = g.transfer_ns as f64 / 1e9;
        let share = if transfer_s > 0.0 { stall_s / transfer_s } else { 0.0 };
        let how = match (g.eof, g.timeout) {
            (_, 0) if g.stalls == 1 => "until the peer closed it",
            (_, 0) => "until the peer closed them",
            (0, _) => "until a read timeout",
            _ => "until the peer closed them or a read timeout fired",
        };
        let message = if g.stalls == 1 {
            format!("connection to {ep} sat idle {} after the last data {how}", secs(stall_s))
        } else {
            format!("{} connections to {ep} sat idle {} in all after the last data {how}", g.stalls, secs(stall_s))
        };
        let mut metrics = Metrics::new();
        metrics.count("connections", g.stalls);
        metrics.value("stall_s", stall_s);
        metrics.value("max_stall_s", g.max_stall_ns as f64 / 1e9);
        metrics.value("transfer_s", transfer_s);
        metrics.value("stall_share", share);
        metrics.count("bytes_received", g.bytes);
        metrics.count("ended_by_eof", g.eof);
        metrics.count("ended_by_timeout", g.timeout);
        metrics.count("processes", g.procs.len());
        let cost = format!(
            "{} spent waiting after the data was complete, {:.0}% of these transfers' {}",
            secs(stall_s),
            share * 100.0,
            secs(transfer_s)
        );
        META.finding(registry::severity_for(stall_s, share, self.cfg.warn_s, self.cfg.error_s), message)
            .about(ep, Subject::new(SubjectKind::Endpoint).name(ep))
            .over(&g.span)
            .metrics(metrics)
            .evidence(&g.evidence, cx.clock)
            .cost(cost)
            .fix(META.docs.fix)
            .build()
    }
}

fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.0} ms", s * 1e3)
    }
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/keepalive-stall/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn polled_fd_of_one_fd_waits() {
        let sc = |sys: Sys, name: &'static str, args: &'static str| Syscall {
            sys,
            name,
            args: syslint_event::Args::Text(args),
            ret: Ret::Ok { val: 0, deco: None, note: "" },
            dur_ns: None,
            resumed: false,
            pre: syslint_event::Pre::NONE,
        };
        let p = sc(
            Sys::Poll,
            "poll",
            "[{fd=4<TCP:[127.0.0.1:48254->127.0.0.1:41407]>, events=POLLIN|POLLERR|POLLHUP}], 1, 60000",
        );
        assert_eq!(single_polled_fd(&p), Some(4));
        let p2 = sc(Sys::Poll, "poll", "[{fd=4, events=POLLIN}, {fd=5, events=POLLIN}], 2, 1000");
        assert_eq!(single_polled_fd(&p2), None);
        let s = sc(Sys::Select, "select", "4, [3], NULL, NULL, {tv_sec=1, tv_usec=0}");
        assert_eq!(single_polled_fd(&s), Some(3));
        let s2 = sc(Sys::Select, "select", "5, [3 4], NULL, NULL, NULL");
        assert_eq!(single_polled_fd(&s2), None);
        let s3 = sc(Sys::Pselect6, "pselect6", "4, [3<TCP:[1.2.3.4:5->6.7.8.9:80]>], NULL, NULL, NULL, NULL");
        assert_eq!(single_polled_fd(&s3), Some(3));
    }
}
