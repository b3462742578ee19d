//! Evidence: the strace-style lines a detector keeps to show a finding, payloads redacted.

use syslint_event::{Class, Clock, Event, EventKind, Ret, Syscall, Tid};

/// A strace-style evidence line kept by a detector (owned: events do not outlive the
/// callback). A call is kept as read and rendered, with its payload bytes redacted, only when a
/// finding shows it: detectors keep lines of every pattern that might become a finding, and
/// rendering each as it came cost ~1,500 instructions a line on the analysis thread. Nothing
/// unredacted leaves the detector: [`Evidence::body`] and [`Evidence::render`] redact.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    pub pid: Tid,
    pub ts_ns: Option<i64>,
    line: Line,
}

#[derive(Clone, Debug, PartialEq)]
enum Line {
    /// Rendered already (not a call, arguments too long to keep as read, or kernel values).
    Text(String),
    /// A call's pieces, one after the other in `buf`.
    Call(Kept),
}

#[derive(Clone, Debug, PartialEq)]
struct Kept {
    sys: syslint_event::Sys,
    /// name, arguments, then the return value's decoration, note or errno
    buf: String,
    name: usize,
    args: usize,
    ret: KeptRet,
    dur_ns: Option<u64>,
    resumed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Default)]
enum KeptRet {
    Ok {
        val: i64,
        deco: Option<usize>,
        note: usize,
    },
    Err {
        val: i64,
        errno: usize,
    },
    #[default]
    Unknown,
    Unfinished,
}

/// Arguments longer than this are rendered when kept, not kept as read (a line's memory
/// stays bounded whatever strace's `-s` was).
const MAX_KEPT_ARGS: usize = 1024;

/// Longest argument text kept in evidence.
const MAX_ARGS: usize = 200;

impl Kept {
    fn fill(&mut self, sc: &Syscall) {
        self.sys = sc.sys;
        self.buf.clear();
        // the whole line at once: growing the buffer step by step cost more than the copies
        let ret_len = match sc.ret {
            Ret::Ok { deco, note, .. } => deco.map_or(0, str::len) + note.len(),
            Ret::Err { errno, .. } => errno.len(),
            Ret::Unknown | Ret::Unfinished => 0,
        };
        self.buf.reserve(sc.name.len() + sc.args.text().map_or(64, str::len) + ret_len);
        self.buf.push_str(sc.name);
        self.name = self.buf.len();
        sc.render_args(&mut self.buf);
        self.args = self.buf.len();
        self.ret = match sc.ret {
            Ret::Ok { val, deco, note } => {
                let deco = deco.map(|d| {
                    self.buf.push_str(d);
                    self.buf.len()
                });
                self.buf.push_str(note);
                KeptRet::Ok { val, deco, note: self.buf.len() }
            }
            Ret::Err { val, errno } => {
                self.buf.push_str(errno);
                KeptRet::Err { val, errno: self.buf.len() }
            }
            Ret::Unknown => KeptRet::Unknown,
            Ret::Unfinished => KeptRet::Unfinished,
        };
        self.dur_ns = sc.dur_ns;
        self.resumed = sc.resumed;
    }

    /// The call again, borrowing the kept text.
    fn call(&self) -> Syscall<'_> {
        let b = &self.buf;
        let piece = |from: usize, to: usize| b.get(from..to).unwrap_or("");
        let ret = match self.ret {
            KeptRet::Ok { val, deco, note } => {
                let at = deco.unwrap_or(self.args);
                Ret::Ok { val, deco: deco.map(|d| piece(self.args, d)), note: piece(at, note) }
            }
            KeptRet::Err { val, errno } => Ret::Err { val, errno: piece(self.args, errno) },
            KeptRet::Unknown => Ret::Unknown,
            KeptRet::Unfinished => Ret::Unfinished,
        };
        Syscall {
            sys: self.sys,
            name: piece(0, self.name),
            args: syslint_event::Args::Text(piece(self.name, self.args)),
            ret,
            dur_ns: self.dur_ns,
            resumed: self.resumed,
            pre: syslint_event::Pre::NONE,
        }
    }
}

impl Evidence {
    /// Capture an event (a call is kept as read; other events render as their strace line).
    pub fn of(ev: &Event) -> Evidence {
        let mut e = Evidence { pid: ev.tid, ts_ns: ev.ts_ns, line: Line::Text(String::new()) };
        e.refill(ev);
        e
    }

    /// Capture `ev` into this evidence, reusing its buffer (for "the last line so far",
    /// replaced on every event: no allocation once the buffer is large enough).
    pub fn refill(&mut self, ev: &Event) {
        self.pid = ev.tid;
        self.ts_ns = ev.ts_ns;
        match &ev.kind {
            // kernel values (eBPF) render to text of any length: rendered and cut at once
            EventKind::Syscall(sc) if sc.args.text().is_some_and(|t| t.len() <= MAX_KEPT_ARGS) => {
                if !matches!(self.line, Line::Call(_)) {
                    let ret = KeptRet::Unknown;
                    let k =
                        Kept { sys: sc.sys, buf: String::new(), name: 0, args: 0, ret, dur_ns: None, resumed: false };
                    self.line = Line::Call(k);
                }
                if let Line::Call(k) = &mut self.line {
                    k.fill(sc);
                }
            }
            EventKind::Syscall(sc) => self.line = Line::Text(render_call(sc)),
            other => self.line = Line::Text(render_other(other)),
        }
    }

    /// `name(args) = ret <dur>` without pid and time, payloads redacted.
    pub fn body(&self) -> std::borrow::Cow<'_, str> {
        match &self.line {
            Line::Text(t) => std::borrow::Cow::Borrowed(t),
            Line::Call(k) => std::borrow::Cow::Owned(render_call(&k.call())),
        }
    }
}

fn render_other(kind: &EventKind) -> String {
    match kind {
        EventKind::Syscall(sc) => render_call(sc),
        EventKind::Signal { name, info } => format!("--- {name} {info} ---"),
        EventKind::Exited { code } => format!("+++ exited with {code} +++"),
        EventKind::Killed { signal, core_dumped } => {
            format!("+++ killed by {signal}{} +++", if *core_dumped { " (core dumped)" } else { "" })
        }
        EventKind::Attached { .. } => "--- attached ---".into(),
        EventKind::Detached => "--- detached ---".into(),
        EventKind::Alias { .. } | EventKind::Spawning { .. } => String::new(),
        EventKind::FdKnown { fd, target } => format!("--- fd {fd} is {target} ---"),
        EventKind::TaskKnown { tgid, comm, .. } => format!("--- thread of pid {tgid} ({comm}) ---"),
    }
}

impl Evidence {
    /// The full line, with pid and timestamp in the capture's notation.
    pub fn render(&self, clock: Clock) -> String {
        let mut s = String::new();
        if self.pid != Tid(0) {
            s.push_str(&format!("{} ", self.pid));
        }
        if let Some(t) = self.ts_ns {
            s.push_str(&fmt_ts(t, clock));
            s.push(' ');
        }
        s.push_str(&self.body());
        s
    }
}

/// A timestamp as strace prints it for the clock: `10:00:00.123456`, `1700000000.123456`,
/// `0.123456`.
pub fn fmt_ts(t: i64, clock: Clock) -> String {
    let us = t.div_euclid(1000);
    match clock {
        Clock::TimeOfDay => {
            let secs = us.div_euclid(1_000_000).rem_euclid(86_400);
            format!("{:02}:{:02}:{:02}.{:06}", secs / 3600, secs / 60 % 60, secs % 60, us.rem_euclid(1_000_000))
        }
        // the wall clock of the capture, as strace -tt would have printed it
        Clock::MonotonicAt { local_offset_ns } => fmt_ts(t.saturating_add(local_offset_ns), Clock::TimeOfDay),
        _ => format!("{}.{:06}", us.div_euclid(1_000_000), us.rem_euclid(1_000_000)),
    }
}

/// `name(args) = ret <dur>` with payload strings of read/write/send/recv calls redacted.
pub fn render_call(sc: &Syscall) -> String {
    let mut s = String::new();
    render_call_into(sc, &mut s);
    s
}

/// [`render_call`] into an existing buffer.
pub fn render_call_into(sc: &Syscall, out: &mut String) {
    use std::fmt::Write;
    let payload = sc.sys.is(Class::READ) || sc.sys.is(Class::WRITE) || sc.sys.is(Class::NET);
    out.push_str(sc.name);
    out.push('(');
    let start = out.len();
    if payload {
        match sc.args.text() {
            Some(t) => redact_into(t, out),
            None => {
                // kernel values: rendered in strace's notation, then redacted alike
                let mut t = String::new();
                sc.render_args(&mut t);
                redact_into(&t, out);
            }
        }
    } else {
        sc.render_args(out);
    }
    if out.len() - start > MAX_ARGS {
        let mut cut = start + MAX_ARGS;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("...");
    }
    // the return value written straight into `out`: no temporary strings per line
    match &sc.ret {
        Ret::Ok { val, deco, note } => {
            out.push_str(") = ");
            if *val > 0xffff_ffff {
                let _ = write!(out, "{val:#x}");
            } else {
                push_int(out, *val);
            }
            if let Some(d) = deco {
                out.push('<');
                out.push_str(d);
                out.push('>');
            }
            if !note.is_empty() && !payload {
                out.push(' ');
                out.push_str(note);
            }
        }
        Ret::Err { val, errno } => {
            out.push_str(") = ");
            if *val == 0 {
                out.push('?');
            } else {
                push_int(out, *val);
            }
            out.push(' ');
            out.push_str(errno);
        }
        Ret::Unknown => out.push_str(") = ?"),
        Ret::Unfinished => {
            out.push_str(" <unfinished ...>");
            return;
        }
    }
    if let Some(d) = sc.dur_ns {
        out.push_str(" <");
        push_int(out, (d / 1_000_000_000).min(i64::MAX as u64) as i64);
        out.push('.');
        let us = d / 1000 % 1_000_000;
        let start = out.len();
        push_int(out, us as i64);
        // six digits, zero-padded in front
        for _ in 0..6 - (out.len() - start) {
            out.insert(start, '0');
        }
        out.push('>');
    }
}

/// `v` in decimal, appended (evidence lines are rendered per event in some detectors: the
/// formatting machinery cost ~500 instructions a line).
fn push_int(out: &mut String, v: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    // ASCII digits only
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

pub use syslint_event::redact::{redact, redact_into};

/// Keep the first `n` evidence lines and the last one (the pattern's start and end).
#[derive(Clone, Debug, Default)]
pub struct EvidenceBuf {
    pub first: Vec<Evidence>,
    pub last: Option<Evidence>,
    pub cap: usize,
}

impl EvidenceBuf {
    pub fn new(cap: usize) -> Self {
        EvidenceBuf { first: Vec::new(), last: None, cap }
    }
    pub fn push(&mut self, ev: &Event) {
        if self.first.len() < self.cap {
            self.first.push(Evidence::of(ev));
        } else {
            match self.last.as_mut() {
                Some(l) => l.refill(ev),
                None => self.last = Some(Evidence::of(ev)),
            }
        }
    }
    pub fn render(&self, clock: Clock) -> Vec<String> {
        let mut v: Vec<String> = self.first.iter().map(|e| e.render(clock)).collect();
        if let Some(l) = &self.last {
            v.push("...".into());
            v.push(l.render(clock));
        }
        v
    }
}

/// Kept evidence as a finding shows it: its lines in the capture's notation
/// ([`Draft::evidence`](crate::draft::Draft::evidence)). What a detector keeps (one line, the
/// first lines and the last, the best of several, none yet) shows as that, so a finding names
/// where its evidence is and nothing more.
pub trait Shown {
    fn lines(&self, clock: Clock) -> Vec<String>;
}

impl Shown for Evidence {
    fn lines(&self, clock: Clock) -> Vec<String> {
        vec![self.render(clock)]
    }
}

impl Shown for EvidenceBuf {
    fn lines(&self, clock: Clock) -> Vec<String> {
        self.render(clock)
    }
}

/// Nothing kept: no lines.
impl<T: Shown> Shown for Option<T> {
    fn lines(&self, clock: Clock) -> Vec<String> {
        self.as_ref().map(|t| t.lines(clock)).unwrap_or_default()
    }
}

/// Several kept: the lines of each in turn.
impl<T: Shown> Shown for [T] {
    fn lines(&self, clock: Clock) -> Vec<String> {
        self.iter().flat_map(|t| t.lines(clock)).collect()
    }
}

impl<T: Shown> Shown for Vec<T> {
    fn lines(&self, clock: Clock) -> Vec<String> {
        self.as_slice().lines(clock)
    }
}

impl<T: Shown + ?Sized> Shown for &T {
    fn lines(&self, clock: Clock) -> Vec<String> {
        (**self).lines(clock)
    }
}

impl<T: Shown + ?Sized> Shown for Box<T> {
    fn lines(&self, clock: Clock) -> Vec<String> {
        (**self).lines(clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_render_as_the_formatter_does() {
        for v in [0i64, 7, -1, 10, 99, 100, 4_294_967_295, -4_294_967_296, i64::MAX, i64::MIN] {
            let mut o = String::from("x");
            push_int(&mut o, v);
            assert_eq!(o, format!("x{v}"));
        }
        for d in [0u64, 999, 1_000, 5_123_000, 999_999_999, 1_000_000_000, 86_400_000_123_456] {
            let sc = Syscall {
                sys: syslint_event::Sys::Getpid,
                name: "getpid",
                args: syslint_event::Args::Text(""),
                ret: Ret::Ok { val: 12, deco: None, note: "" },
                dur_ns: Some(d),
                resumed: false,
                pre: syslint_event::Pre::NONE,
            };
            let want = format!("getpid() = 12 <{}.{:06}>", d / 1_000_000_000, d / 1000 % 1_000_000);
            assert_eq!(render_call(&sc), want);
        }
    }

    #[test]
    fn payloads_are_redacted_addresses_kept() {
        assert_eq!(redact(r#"3, "GET /secret?token=abc HTTP/1.1\r\n"..., 36"#), r#"3, "…32 bytes…"..., 36"#);
        assert_eq!(
            redact(r#"3, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110"#),
            r#"3, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110"#
        );
        assert_eq!(redact(r#"5, "\x00\x01ab", 4"#), r#"5, "…4 bytes…", 4"#);
        let a = r#"3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, [16], SOCK_CLOEXEC"#;
        assert_eq!(redact(a), a);
        let a = r#"3, {sa_family=AF_INET6, sin6_port=htons(80), inet_pton(AF_INET6, "::1", &sin6_addr)}, [28]"#;
        assert_eq!(redact(a), a);
    }

    #[test]
    fn timestamps_like_strace() {
        assert_eq!(fmt_ts(36_000_000_100_000, Clock::TimeOfDay), "10:00:00.000100");
        assert_eq!(fmt_ts(1_700_000_000_123_456_000, Clock::Epoch), "1700000000.123456");
        // monotonic 11173.657145 s, and an offset that makes it 10:00:00.000100 local time
        let at = Clock::MonotonicAt { local_offset_ns: 36_000_000_100_000 - 11_173_657_145_000 };
        assert_eq!(fmt_ts(11_173_657_145_000, at), "10:00:00.000100");
    }
}
