//! `retry-storm` (SL017): a connect (or a bind, or an open) that fails and is tried again at
//! once, hundreds of times a second, to the same endpoint with the same error: a retry loop
//! without backoff.
//!
//! Attempts are counted per program, call, endpoint and errno (a *series*). A blocking connect
//! fails in its own return value; a non-blocking one returns EINPROGRESS and fails later: in
//! getsockopt(SO_ERROR) (how event loops, Python with a timeout, curl, Go and libuv learn it),
//! in the first read or write on the socket (wrk), or in a poll reporting POLLERR/POLLHUP on it
//! (strace text only: the kernel program does not copy poll arrays). A series is a storm when
//! it holds at least `min_attempts` failures whose typical gap (the median) is at most
//! `1 / min_per_sec` and whose gaps do not grow (the median of the last gaps is less than
//! `max_gap_growth` times the median of the first: exponential backoff doubles them).

use super::{Evidence, EvidenceBuf};
use crate::host::{Capped, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use std::hash::{Hash, Hasher};
use syslint_event::{errno, Class, Event, Ret, SockOpt, Sys, Syscall, Tgid};
use syslint_report::{Finding, Severity, SubjectKind};

crate::detector!("retry_storm", struct RetryStorm);

/// Gaps between attempts, binned log-linearly: 4 bins per power of two of nanoseconds.
#[derive(Clone)]
struct Gaps {
    bins: Box<[u32; 256]>,
    n: u64,
    first: Vec<u64>,
    last: [u64; EDGE],
    last_len: usize,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps { bins: Box::new([0; 256]), n: 0, first: Vec::new(), last: [0; EDGE], last_len: 0 }
    }
}

fn bin_of(ns: u64) -> usize {
    if ns < 4 {
        return ns as usize;
    }
    let log = 63 - ns.leading_zeros() as usize;
    let sub = ((ns >> (log - 2)) & 3) as usize;
    (log * 4 + sub).min(255)
}

/// The middle of a bin, in nanoseconds.
fn bin_value(b: usize) -> f64 {
    if b < 4 {
        return b as f64;
    }
    let (log, sub) = (b / 4, b % 4);
    let lo = (1u64 << log) as f64 * (1.0 + sub as f64 / 4.0);
    lo * (1.0 + 0.125)
}

fn median(v: &mut [u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    Some(v[v.len() / 2])
}

impl Merge for Gaps {
    fn merge(&mut self, o: Self) {
        self.absorb(&o);
    }
}

impl Gaps {
    fn add(&mut self, ns: u64) {
        let b = bin_of(ns);
        self.bins[b] = self.bins[b].saturating_add(1);
        self.n += 1;
        if self.first.len() < EDGE {
            self.first.push(ns);
        }
        self.last[self.last_len % EDGE] = ns;
        self.last_len += 1;
    }

    fn absorb(&mut self, o: &Gaps) {
        // the first gaps are this series' (the other's when it has none), the last those of
        // the one with more
        for (a, b) in self.bins.iter_mut().zip(o.bins.iter()) {
            *a = a.saturating_add(*b);
        }
        self.n += o.n;
        if self.first.is_empty() {
            self.first.clone_from(&o.first);
        }
        if o.last_len > 0 && (self.last_len == 0 || o.n > self.n - o.n) {
            self.last = o.last;
            self.last_len = o.last_len;
        }
    }

    /// The median gap, in nanoseconds (the middle of its bin).
    fn median_ns(&self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let half = self.n.div_ceil(2);
        let mut seen = 0u64;
        for (b, &c) in self.bins.iter().enumerate() {
            seen += u64::from(c);
            if seen >= half {
                return Some(bin_value(b));
            }
        }
        None
    }

    /// Median of the last gaps over the median of the first (when the series has both): the
    /// last and first `EDGE`, or each half of a shorter series.
    fn growth(&self) -> Option<f64> {
        let n = self.last_len;
        if n < 2 {
            return None;
        }
        let k = (n / 2).min(EDGE);
        let mut first: Vec<u64> = self.first[..k.min(self.first.len())].to_vec();
        let mut last: Vec<u64> = (1..=k).map(|i| self.last[(n - i) % EDGE]).collect();
        let (f, l) = (median(&mut first)?, median(&mut last)?);
        Some(l.max(1) as f64 / f.max(1) as f64)
    }
}

#[derive(Clone)]
pub struct Series {
    call: &'static str,
    endpoint: Box<str>,
    errno: &'static str,
    attempts: u64,
    last_ts: Option<i64>,
    gaps: Gaps,
    span: Span,
    timing: Timing,
    /// The first attempt's lines from the series' start: a merge keeps the ones it has.
    evidence: EvidenceBuf,
    per_process: PerProcess,
}

crate::merge!(Series {
    call: keep,
    endpoint: keep,
    errno: keep,
    attempts: sum,
    last_ts: keep,
    gaps: merge,
    span: merge,
    timing: merge,
    evidence: keep,
    per_process: merge,
});

/// Attempts per process (of the first 64 processes): a retry loop makes many in one.
#[derive(Clone, Default)]
struct PerProcess(Vec<(Tgid, u64)>);

impl PerProcess {
    fn add(&mut self, t: Tgid, n: u64) {
        match self.0.iter().position(|x| x.0 == t) {
            Some(i) => self.0[i].1 += n,
            None if self.0.len() < 64 => self.0.push((t, n)),
            None => {}
        }
    }

    /// The most attempts one process made.
    fn max(&self) -> u64 {
        self.0.iter().map(|x| x.1).max().unwrap_or(0)
    }
}

impl Merge for PerProcess {
    fn merge(&mut self, o: Self) {
        for (t, n) in o.0 {
            self.add(t, n);
        }
    }
}

/// A program's series, by the hash of their call, endpoint and errno.
pub type Group = Capped<u64, Series, MAX_SERIES>;

/// A non-blocking connect waiting for its outcome.
#[derive(Clone, Default)]
pub struct Pending {
    endpoint: Box<str>,
    ts: Option<i64>,
    dur: Option<u64>,
    /// The connect (there from the start: `None` only once taken).
    connect: Option<Evidence>,
    /// A poll reported POLLERR/POLLHUP on it (strace text).
    poll_err: bool,
}

/// Errors that are no failed attempt: the call is under way or was interrupted.
fn not_a_failure(e: &str) -> bool {
    matches!(e, "EINPROGRESS" | "EALREADY" | "EISCONN" | "EINTR") || e.starts_with("ERESTART")
}

impl RetryStorm {
    /// One failed attempt of `call` to `endpoint` with `errno`; `lines` its evidence (the
    /// connect, then what told its failure), in the program the process runs now.
    fn failed(
        s: &mut State<'_, Self>,
        call: &'static str,
        endpoint: &str,
        errno: &'static str,
        ts: Option<i64>,
        dur: Option<u64>,
        lines: &[Evidence],
    ) {
        let mut h = rustc_hash::FxHasher::default();
        call.hash(&mut h);
        endpoint.hash(&mut h);
        errno.hash(&mut h);
        let make = || Series {
            call,
            endpoint: endpoint.into(),
            errno,
            attempts: 0,
            last_ts: None,
            gaps: Gaps::default(),
            span: Span::default(),
            timing: Timing::default(),
            evidence: EvidenceBuf::new(EVIDENCE),
            per_process: PerProcess::default(),
        };
        let tgid = s.tgid();
        let Some(s) = s.program().entry_or(h.finish(), make) else { return };
        s.attempts += 1;
        if let (Some(t), Some(l)) = (ts, s.last_ts) {
            s.gaps.add(u64::try_from(t - l).unwrap_or(0));
        }
        if ts.is_some() {
            s.last_ts = ts;
        }
        s.span.add(ts);
        s.timing.add(dur);
        s.per_process.add(tgid, 1);
        // the whole first attempt, then one line per attempt (the last is kept)
        if s.attempts == 1 {
            for l in lines {
                if s.evidence.first.len() < s.evidence.cap {
                    s.evidence.first.push(l.clone());
                }
            }
        } else if let Some(l) = lines.first() {
            if s.evidence.first.len() < s.evidence.cap {
                s.evidence.first.push(l.clone());
            } else {
                s.evidence.last = Some(l.clone());
            }
        }
    }

    /// The pending connect on `fd` failed with `errno`, told by `ev`.
    fn pending_failed(&mut self, s: &mut State<'_, Self>, ev: &Event, fd: u64, errno: &'static str) {
        let Some(p) = s.existing_object(fd).map(std::mem::take) else { return };
        s.end_object(fd, self);
        let told = Evidence::of(ev);
        match p.connect {
            Some(c) => Self::failed(s, "connect", &p.endpoint, errno, p.ts, p.dur, &[c, told]),
            None => Self::failed(s, "connect", &p.endpoint, errno, p.ts, p.dur, &[told]),
        }
    }

    fn on_connect(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall) {
        let Some(fd) = sc.fd_num() else { return };
        let fd = u64::try_from(fd).ok();
        // a new connect on the fd ends whatever was pending on it
        if let Some(fd) = fd {
            s.end_object(fd, self);
        }
        let Ret::Err { errno, .. } = sc.ret else { return };
        let Some(addr) = sc.sockaddr() else { return };
        let endpoint = addr.to_string();
        if errno == "EINPROGRESS" {
            let Some(fd) = fd else { return };
            let (ts, dur, connect) = (ev.ts_ns, sc.dur_ns, Some(Evidence::of(ev)));
            s.object_or(fd, || Pending { endpoint: endpoint.into(), ts, dur, connect, poll_err: false });
            return;
        }
        if not_a_failure(errno) {
            return;
        }
        let Some(e) = errno::intern(errno) else { return };
        Self::failed(s, "connect", &endpoint, e, ev.ts_ns, sc.dur_ns, &[Evidence::of(ev)]);
    }
}

impl Hosted for RetryStorm {
    type Thread = ();
    type Program = Group;
    /// A non-blocking connect (its fd) waiting for its outcome.
    type Object = Pending;
    const MAX_OBJECTS: usize = MAX_PENDING;
    /// A process that runs another program makes its attempts for that one.
    const EXEC_ENDS_THREAD: bool = true;

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        const REFUSED: &[&str] = &["ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH"];
        // per thread: a connection attempt fails (its connect, or the first read or write on a
        // socket whose non-blocking connect was under way), and the thread then makes a new
        // socket or connects again: a retry; a sleep or an expired wait of 50 ms or more in
        // between is a backoff
        let mut failed_at: HashMap<u32, usize> = HashMap::default();
        let mut pending: HashMap<(u32, i32), ()> = HashMap::default();
        let (mut retries, mut backed_off) = (0u64, 0u64);
        let mut idx = Vec::new();
        let mut waited: HashMap<u32, bool> = HashMap::default();
        for (i, c) in x.calls.iter().enumerate() {
            let t = c.tid.0;
            let refused = c.errno.as_deref().is_some_and(|e| REFUSED.contains(&e));
            match c.sys {
                Sys::Socket | Sys::Connect => {
                    if let Some(f) = failed_at.remove(&t) {
                        if waited.remove(&t).unwrap_or(false) {
                            backed_off += 1;
                        } else {
                            retries += 1;
                            idx.push(f);
                            idx.push(i);
                        }
                    }
                    if c.sys == Sys::Connect {
                        if refused {
                            failed_at.insert(t, i);
                        } else if c.errno.as_deref() == Some("EINPROGRESS") {
                            if let Some(fd) = c.fd {
                                pending.insert((t, fd), ());
                            }
                        }
                    }
                }
                Sys::Nanosleep | Sys::ClockNanosleep
                    if c.sleep_ns.is_some_and(|n| n >= 50_000_000) && failed_at.contains_key(&t) =>
                {
                    waited.insert(t, true);
                }
                s if s.is(Class::POLL) => {
                    let long = matches!(c.timeout, Some(syslint_event::Timeout::Ns(n)) if n >= 50_000_000);
                    if long && c.ret == Some(0) && failed_at.contains_key(&t) {
                        waited.insert(t, true);
                    }
                }
                s if s.is(Class::READ) || s.is(Class::WRITE) => {
                    if let Some(fd) = c.fd {
                        if pending.remove(&(t, fd)).is_some() && refused {
                            failed_at.insert(t, i);
                        }
                    }
                }
                _ => {}
            }
        }
        if retries == 0 || backed_off > 0 {
            return Vec::new();
        }
        let strong = retries >= 5;
        let (conf, why) = if strong {
            (Confidence::Medium, format!("{retries} failed connection attempts each followed at once by a new one, no sleep or wait between"))
        } else {
            (
                Confidence::Low,
                format!("{retries} failed connection attempt(s) followed at once by a new socket: a retry, but too few lines to show a storm or a backoff"),
            )
        };
        META.finding(
            Severity::warning_if(strong),
            format!("a refused connection attempted again at once: {retries} {} without a pause in the excerpt", if retries == 1 { "retry" } else { "retries" }),
        )
        .metrics([("retries", retries.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, data_calls, per_second, SysRows};
        use syslint_report::Confidence;
        // glibc's resolver connects a UDP socket per lookup (one sendmmsg each): not attempts
        let dns = c.calls_of(&[Sys::Sendmmsg]);
        let connects = c.calls_of(&[Sys::Connect]).saturating_sub(dns);
        let failed = c.errors_of(&[Sys::Connect]);
        let sockets = c.calls_of(&[Sys::Socket]).saturating_sub(dns);
        let closes = c.calls_of(&[Sys::Close]);
        let data = data_calls(c);
        let sleeps = c.calls_of(&[Sys::Nanosleep, Sys::ClockNanosleep, Sys::ClockNanosleepTime64]);
        if connects < 100
            || failed * 10 < connects * 9
            || sockets * 10 < connects * 9
            || closes * 10 < connects * 9
            || data * 2 >= connects
            || sleeps * 4 >= connects
        {
            return Vec::new();
        }
        let rate = per_second(c, connects, 0);
        META.finding(
            Severity::Info,
            format!("connection attempts that fail and are made again: {failed} of {connects} connects failed{rate}, a new socket for each, {data} calls moved data"),
        )
        .metrics([
            ("connects", connects.into()),
            ("failed", failed.into()),
            ("sockets", sockets.into()),
            ("data_calls", data.into()),
            ("sleeps", sleeps.into()),
        ])
        .lines(count_lines(
            c,
            &[Sys::Socket, Sys::Connect, Sys::Close, Sys::Getsockopt, Sys::Poll, Sys::Nanosleep, Sys::ClockNanosleep],
        ))
        .in_table(
            c,
            Confidence::Low,
            &format!(
                "{failed} failed connects each with a new socket and a close, and almost nothing sent or received ({data} calls moved data), so the connections were not used: attempts, not churn; a table cannot say whether the errors were refusals or a non-blocking connect's EINPROGRESS, name the endpoint, or show the gaps between attempts ({sleeps} sleeps counted)"
            ),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        match sc.sys {
            Sys::Connect => self.on_connect(s, ev, sc),
            Sys::Bind => {
                let Ret::Err { errno, .. } = sc.ret else { return };
                if not_a_failure(errno) {
                    return;
                }
                let (Some(addr), Some(e)) = (sc.sockaddr(), errno::intern(errno)) else { return };
                Self::failed(s, "bind", &addr.to_string(), e, ev.ts_ns, sc.dur_ns, &[Evidence::of(ev)]);
            }
            sys if sys.is(Class::OPEN) => {
                let Ret::Err { errno, .. } = sc.ret else { return };
                // missing paths are failed-lookup-storm's
                if not_a_failure(errno) || matches!(errno, "ENOENT" | "ENOTDIR") {
                    return;
                }
                let Some(e) = errno::intern(errno) else { return };
                let Some(p) = sc.path() else { return };
                let Some(path) = super::failed_lookup_storm::resolve(cx.model, ev.tid, sc, &p) else { return };
                Self::failed(s, "open", &path, e, ev.ts_ns, sc.dur_ns, &[Evidence::of(ev)]);
            }
            // (a successful exec is the host's; a failed one tells nothing)
            sys if sys.is(Class::EXEC) => {}
            // what a call tells of a pending connect, when there is one
            // (a close of an earlier life of the number ends nothing: Ctx::earlier_life)
            Sys::Close if cx.earlier_life => {}
            _ if s.has_objects() => self.outcome(s, ev, sc),
            _ => {}
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        let mut series: Vec<(u32, &Series)> =
            groups.iter().flat_map(|(g, p)| p.0.values().map(move |s| (g, s))).collect();
        // the most attempts first; ties in an order of their own, not a hash's
        series.sort_by(|a, b| {
            b.1.attempts
                .cmp(&a.1.attempts)
                .then_with(|| a.1.endpoint.cmp(&b.1.endpoint))
                .then_with(|| (a.1.call, a.1.errno, a.0).cmp(&(b.1.call, b.1.errno, b.0)))
        });
        let mut out = Vec::new();
        for (g, s) in series {
            if s.attempts < self.cfg.min_attempts.max(1) || s.per_process.max() < self.cfg.min_per_process {
                continue;
            }
            let median = s.gaps.median_ns();
            let per_sec = median.map(|m| 1e9 / m.max(1.0));
            let growth = s.gaps.growth();
            let timed = median.is_some();
            if timed {
                let fast = per_sec.is_some_and(|r| r >= self.cfg.min_per_sec);
                let backs_off = growth.is_some_and(|x| x >= self.cfg.max_gap_growth);
                if !fast || backs_off {
                    continue;
                }
            }
            let severity =
                Severity::warning_if(timed && s.attempts >= self.cfg.warn_attempts);
            let mut m = Metrics::new();
            m.count("attempts", s.attempts);
            m.text("call", s.call);
            m.text("endpoint", &s.endpoint);
            m.text("errno", s.errno);
            m.count("processes", groups.processes(g).max(1));
            m.value_opt("per_sec", per_sec);
            m.value_opt("median_gap_ms", median.map(|x| x / 1e6));
            if timed {
                m.value("span_s", s.span.seconds());
            }
            m.value_opt("gap_growth", growth);
            m.value_opt("seconds", s.timing.seconds());
            let rate = match per_sec {
                Some(r) => format!("{r:.0} a second, the gaps not growing"),
                None => "rate unknown: no timestamps".to_string(),
            };
            let message = format!(
                "{} failed {} attempts to {} ({}), retried at once: {rate}",
                s.attempts, s.call, s.endpoint, s.errno
            );
            let time = match s.timing.seconds() {
                Some(t) => format!("{t:.3} s inside the failing calls, {}", cx.tracer.measured()),
                None => "time inside them unknown: no -T".to_string(),
            };
            let span = if timed { format!(" over {:.2} s", s.span.seconds()) } else { String::new() };
            let cost = format!(
                "{} attempts that could not succeed{span} ({time}); each costs the client a socket, a call and a \
close, and the endpoint a refused connection, so clients retrying like this keep a struggling server down",
                s.attempts
            );
            let mut f = META
                .finding(severity, message)
                .about_program(groups.programs(), cx.model, g)
                .over(&s.span)
                .metrics(m)
                .evidence(&s.evidence, cx.clock)
                .cost(cost)
                .build();
            // about the endpoint (or file) in the program
            if let Some(a) = f.about.as_mut() {
                a.kind = if s.call == "open" { SubjectKind::File } else { SubjectKind::Endpoint };
                a.name = Some(s.endpoint.to_string());
            }
            out.push(f);
        }
        out
    }
}

impl RetryStorm {
    /// What a call on an fd with a pending non-blocking connect tells of its outcome.
    fn outcome(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall) {
        match sc.sys {
            Sys::Getsockopt => {
                let (Some(fd), Some(o)) = (fd_of(sc), sc.sockopt()) else { return };
                if !matches!(sc.ret, Ret::Ok { .. })
                    || o.level != Some(SockOpt::SOL_SOCKET)
                    || o.name != Some(SockOpt::SO_ERROR)
                {
                    return;
                }
                match o.value {
                    Some(0) => s.end_object(fd, self),
                    Some(v) => {
                        if let Some(e) = errno::name(v).filter(|e| !not_a_failure(e)) {
                            self.pending_failed(s, ev, fd, e);
                        }
                    }
                    None => {}
                }
            }
            Sys::Poll | Sys::Ppoll => {
                // `= 1 ([{fd=3, revents=POLLOUT|POLLERR|POLLHUP}])`: strace text only
                let Ret::Ok { note, .. } = sc.ret else { return };
                if !note.contains("POLLERR") && !note.contains("POLLHUP") {
                    return;
                }
                for part in note.split("{fd=").skip(1) {
                    let Some((n, rest)) = part.split_once(',') else { continue };
                    let rev = rest.split('}').next().unwrap_or("");
                    if !(rev.contains("POLLERR") || rev.contains("POLLHUP")) {
                        continue;
                    }
                    if let Some(fd) = n.trim().parse::<i32>().ok().and_then(|fd| u64::try_from(fd).ok()) {
                        if let Some(p) = s.existing_object(fd) {
                            p.poll_err = true;
                        }
                    }
                }
            }
            Sys::Close => {
                let Some(fd) = fd_of(sc) else { return };
                if s.existing_object(fd).is_some_and(|p| p.poll_err) {
                    // a poll said it failed, and nothing asked why: errno unknown
                    self.pending_failed(s, ev, fd, "POLLERR");
                } else {
                    s.end_object(fd, self);
                }
            }
            _ => {
                // the first read or write: it connected, or tells why not
                let Some(fd) = fd_of(sc) else { return };
                if s.existing_object(fd).is_none() {
                    return;
                }
                match sc.ret {
                    Ret::Err { errno, .. }
                        if matches!(
                            errno,
                            "ECONNREFUSED" | "ETIMEDOUT" | "ENETUNREACH" | "EHOSTUNREACH" | "ECONNRESET" | "EPIPE"
                        ) =>
                    {
                        if let Some(e) = errno::intern(errno) {
                            self.pending_failed(s, ev, fd, e);
                        }
                    }
                    Ret::Err { .. } => {}
                    _ => s.end_object(fd, self),
                }
            }
        }
    }
}

/// The fd a call is about, as the number of its pending connect.
fn fd_of(sc: &Syscall) -> Option<u64> {
    sc.fd_num().and_then(|fd| u64::try_from(fd).ok())
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/retry-storm/expect.toml, run by src/check/fixtures.rs.
    use super::*;

    #[test]
    fn gap_bins_are_ordered_and_close() {
        let mut last = 0;
        for ns in [5u64, 100, 1000, 1500, 400_000, 1_000_000, 3_000_000_000] {
            let b = bin_of(ns);
            assert!(b >= last);
            last = b;
            let v = bin_value(b);
            assert!((v / ns as f64 - 1.0).abs() < 0.3, "{ns}: {v}");
        }
    }

}
