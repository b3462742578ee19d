//! Decoding of strace's argument text: splitting, fds with their `-y` decorations, strings,
//! timeouts and socket addresses. Everything works on borrowed text and allocates only when
//! a string holds escapes.

use crate::syscalls::Sys;
use crate::target::TargetKind;
use std::borrow::Cow;
use std::net::IpAddr;

/// The `k`-th argument from the end (0: the last), when it and the ones after it are plain
/// words (`4096`, `-1`, `MSG_DONTWAIT`): no quote, bracket or comma can hide in those, so
/// splitting at the last separators is exact and skips the payload or fd array before them.
/// `None` when that does not hold (the caller then splits from the start).
pub fn plain_from_end(args: &str, k: usize) -> Option<&str> {
    // byte scans rather than `rsplit_once(", ")`: this runs for every read and write of a
    // log, and the substring searcher's set-up cost more than the search
    let b = args.as_bytes();
    let mut end = args.trim_end().len();
    for i in 0..=k {
        let mut j = end;
        let comma = loop {
            let c = memchr::memrchr(b',', &b[..j])?;
            if c + 1 < end && b[c + 1] == b' ' {
                break c;
            }
            j = c;
        };
        let word = args[comma + 2..end].trim();
        if word.is_empty()
            || word.bytes().any(|c| matches!(c, b'"' | b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'<' | b'>'))
        {
            return None;
        }
        if i == k {
            return Some(word);
        }
        end = comma;
    }
    None
}

/// Iterate over the top-level arguments of an argument list, respecting quotes and brackets.
pub fn split(args: &str) -> Split<'_> {
    Split { rest: args }
}

pub struct Split<'a> {
    rest: &'a str,
}

impl<'a> Split<'a> {
    /// What is left to split: the arguments after those already given.
    pub(crate) fn rest(&self) -> &'a str {
        self.rest
    }
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        // strace separates arguments with ", ": ASCII spaces (the Unicode-aware trims cost
        // ~40 instructions an argument; a space outside quotes is never anything else)
        let s = self.rest.trim_ascii_start();
        if s.is_empty() {
            return None;
        }
        let end = top_level_end(s, b',');
        let (item, rest) = s.split_at(end);
        self.rest = rest.strip_prefix(',').unwrap_or(rest);
        Some(item.trim_ascii_end())
    }
}

/// Given `b[open] == b'"'`, the index of the closing quote (escapes skipped), or the length.
fn quote_end(b: &[u8], open: usize) -> usize {
    quote_close(b, open + 1)
}

/// From `from` (inside a string), the index of the closing quote, or the length.
/// Payload strings are long: jump between quotes and backslashes.
fn quote_close(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() {
        match memchr::memchr2(b'"', b'\\', &b[i..]) {
            Some(k) if b[i + k] == b'"' => return i + k,
            Some(k) => i += k + 2, // skip the escaped byte
            None => return b.len(),
        }
    }
    b.len()
}

/// The bytes [`top_level_end`] looks at (its stop bytes `,` and `}` among them).
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let set = b"\"()[]{}<,";
    while k < set.len() {
        t[set[k] as usize] = true;
        k += 1;
    }
    t
};

/// Index of the first top-level `stop` byte (outside quotes and brackets), or the length.
fn top_level_end(s: &str, stop: u8) -> usize {
    debug_assert!(SPECIAL[stop as usize]);
    let b = s.as_bytes();
    let mut depth: i32 = 0;
    let mut i = 0;
    while i < b.len() {
        // skip the bytes that cannot matter with one table lookup each (the match below cost
        // ~8 instructions a byte; most argument text is names, numbers and paths)
        if !SPECIAL[b[i] as usize] {
            i += 1;
            continue;
        }
        match b[i] {
            b'"' => i = quote_end(b, i),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            // fd decorations: 3</path/with,comma>
            b'<' if i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1].is_ascii_uppercase()) => {
                if let Some(e) = deco_end(&s[i..]) {
                    i += e;
                }
            }
            c if c == stop && depth <= 0 => return i,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Given text starting at '<', the index of the matching '>' (nesting counted: -yyy prints
/// `3</dev/null<char 1:3>>`).
pub fn deco_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    // the opening `<` (every caller's text starts with it) counted without a search: a
    // search's set-up costs more than a short decoration's scan
    let (mut depth, mut i) = if b.first() == Some(&b'<') { (1, 1) } else { (0, 0) };
    // jump between the bytes that matter; paths are long and hold none of them
    // (`i` may pass the end when a quote inside brackets runs to it: a cut line)
    while let Some(k) = b.get(i..).and_then(|r| memchr::memchr3(b'<', b'>', b'[', r)) {
        i += k;
        match b[i] {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {
                // socket endpoints sit in brackets and hold `->`: TCP:[1.2.3.4:5->6.7.8.9:10];
                // unix ones may hold a quoted path
                i += 1;
                let mut square = 1;
                while i < b.len() && square > 0 {
                    match b[i] {
                        b'[' => square += 1,
                        b']' => square -= 1,
                        b'"' => i = quote_end(b, i),
                        _ => {}
                    }
                    i += 1;
                }
                continue;
            }
        }
        i += 1;
    }
    None
}

/// An fd argument: its number and the `-y`/`-yy` decoration text if strace printed one.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FdArg<'a> {
    pub num: i32,
    pub deco: Option<&'a str>,
}

/// Parse `3`, `3</etc/hosts>`, `AT_FDCWD`, `AT_FDCWD</root>`, `-1`.
#[inline]
pub fn parse_fd(s: &str) -> Option<FdArg<'_>> {
    let (num, rest) = parse_fd_num(s)?;
    let deco = if rest.starts_with('<') { deco_end(rest).map(|e| &rest[1..e]) } else { None };
    Some(FdArg { num, deco })
}

/// The number of an fd argument and the text after it, without reading its decoration.
#[inline]
pub fn parse_fd_num(s: &str) -> Option<(i32, &str)> {
    let b = s.as_bytes();
    Some(if let Some(r) = s.strip_prefix("AT_FDCWD") {
        (-100, r)
    } else {
        let mut i = 0;
        let neg = b.first() == Some(&b'-');
        if neg {
            i = 1;
        }
        let start = i;
        let mut n: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            n = n.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
            i += 1;
        }
        if i == start {
            return None;
        }
        let n = if neg { -n } else { n };
        (n.clamp(i32::MIN as i64, i32::MAX as i64) as i32, &s[i..])
    })
}

/// What a `-y`/`-yy` decoration says an fd is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FdTarget {
    File(String),
    /// TCP/UDP (v4 or v6) with endpoints when `-yy` printed them.
    Inet {
        proto: TargetKind,
        local: Option<String>,
        remote: Option<String>,
    },
    Unix {
        detail: String,
    },
    Netlink {
        detail: String,
    },
    Pipe,
    Socket,
    /// `anon_inode:[eventpoll]`, `anon_inode:[eventfd]`, ...
    Anon(String),
    Other(String),
}

impl FdTarget {
    /// Interpret decoration text (without the angle brackets).
    pub fn from_deco(deco: &str) -> FdTarget {
        let d = unescape(deco);
        let d: &str = &d;
        // -yyy appends device info: /dev/null<char 1:3>
        let d = match d.find('<') {
            Some(i) if d.ends_with('>') && d.starts_with('/') => &d[..i],
            _ => d,
        };
        if d.starts_with('/') {
            return FdTarget::File(d.to_string());
        }
        let (kind, inner) = match (d.find(":["), d.ends_with(']')) {
            (Some(i), true) => (&d[..i], &d[i + 2..d.len() - 1]),
            _ => return FdTarget::Other(d.to_string()),
        };
        let proto = match kind {
            "TCP" => Some(TargetKind::Tcp),
            "TCPv6" => Some(TargetKind::Tcp6),
            "UDP" => Some(TargetKind::Udp),
            "UDPv6" => Some(TargetKind::Udp6),
            "UDPLITE" => Some(TargetKind::UdpLite),
            _ => None,
        };
        if let Some(proto) = proto {
            return match inner.find("->") {
                Some(i) => FdTarget::Inet {
                    proto,
                    local: Some(inner[..i].to_string()),
                    remote: Some(inner[i + 2..].to_string()),
                },
                None if inner.bytes().all(|c| c.is_ascii_digit()) => {
                    FdTarget::Inet { proto, local: None, remote: None }
                }
                None => FdTarget::Inet { proto, local: Some(inner.to_string()), remote: None },
            };
        }
        match kind {
            k if k.starts_with("UNIX") => FdTarget::Unix { detail: inner.to_string() },
            k if k.starts_with("NETLINK") => FdTarget::Netlink { detail: inner.to_string() },
            "pipe" => FdTarget::Pipe,
            "socket" => FdTarget::Socket,
            "anon_inode" => FdTarget::Anon(inner.to_string()),
            _ => FdTarget::Other(d.to_string()),
        }
    }
}

/// Undo strace's C-style escapes (`\n`, `\t`, `\\`, `\"`, `\xHH`, octal `\NNN`).
/// Bytes that are not UTF-8 are replaced.
pub fn unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let out = unescape_bytes(s);
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// The raw bytes a strace string stands for.
pub fn unescape_bytes(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b[i] {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = |c: u8| (c as char).to_digit(16);
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i + 1 < b.len() {
                    match hex(b[i + 1]) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    out.push(b'x');
                } else {
                    out.push(v as u8);
                }
            }
            b'0'..=b'7' => {
                let mut v = (b[i] - b'0') as u32;
                let mut n = 1;
                while n < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                    v = v * 8 + (b[i + 1] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The bytes of a quoted strace string argument (`"\x7f\x00\x00\x01"`).
fn quoted_bytes(arg: &str) -> Option<Vec<u8>> {
    let a = arg.trim().strip_prefix('"')?;
    let end = closing_quote(a)?;
    Some(unescape_bytes(&a[..end]))
}

/// A quoted strace string (`"abc"`, `"abc"...`, `@"abstract"`) unescaped; `None` when the
/// argument is not a string (e.g. `NULL`, an address).
pub fn unquote(arg: &str) -> Option<Cow<'_, str>> {
    let a = arg.strip_prefix('@').unwrap_or(arg);
    let a = a.strip_prefix('"')?;
    let end = closing_quote(a)?;
    Some(unescape(&a[..end]))
}

/// The text between the quotes of a quoted strace string (`"abc"`, `"abc"...`, `@"abs"`) when
/// it holds no escape, so that it is its own [`unquote`]d form; `None` otherwise.
pub fn plain_quoted(arg: &str) -> Option<&str> {
    let a = arg.strip_prefix('@').unwrap_or(arg);
    let a = a.strip_prefix('"')?;
    match memchr::memchr2(b'"', b'\\', a.as_bytes()) {
        Some(end) if a.as_bytes()[end] == b'"' => Some(&a[..end]),
        _ => None,
    }
}

/// Whether a quoted argument was truncated by `-s` (printed as `"..."...`).
pub fn is_truncated(arg: &str) -> bool {
    arg.ends_with("\"...")
}

/// In text after an opening quote, the index of the closing one.
fn closing_quote(s: &str) -> Option<usize> {
    // quote_end wants the opening quote's index: pretend it sits just before `s`
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i < b.len()).then_some(i)
}

/// The bit of an fd-making call's flag name (Linux's values on x86, x86_64, arm, aarch64, which
/// the O_, SOCK_, EFD_, TFD_ and EPOLL_ flags share); 0 for other names. A `match` (by length,
/// then bytes): every open and socket call of a log looks its flags up here, and a scan of a
/// table cost ~1,400 instructions a call.
pub(crate) fn flag_value(name: &str) -> u64 {
    match name {
        "O_CREAT" => 0o100,
        "O_EXCL" => 0o200,
        "O_TRUNC" => 0o1000,
        "O_APPEND" => 0o2000,
        "O_NONBLOCK" | "SOCK_NONBLOCK" | "EFD_NONBLOCK" | "TFD_NONBLOCK" => 0o4000,
        "O_DSYNC" => 0o10000,
        "O_DIRECT" => 0o40000,
        "O_DIRECTORY" => 0o200000,
        "O_CLOEXEC" | "SOCK_CLOEXEC" | "EFD_CLOEXEC" | "EPOLL_CLOEXEC" => 0o2000000,
        "O_SYNC" => 0o4010000,
        _ => 0,
    }
}

/// Whether a flags argument (`O_RDONLY|O_CLOEXEC`, `0x80800`, `0x80800 /* SOCK_CLOEXEC|... */`,
/// `SOCK_STREAM|SOCK_NONBLOCK`) holds `flag`.
pub fn has_flag(arg: &str, flag: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if arg.split(|c: char| !is_ident(c)).any(|t| t == flag) {
        return true;
    }
    let want = flag_value(flag);
    if want == 0 {
        return false;
    }
    // raw numbers: OR every number outside a comment
    let code = arg.split("/*").next().unwrap_or(arg);
    let mut v = 0u64;
    for t in code.split(['|', ' ']).filter(|t| !t.is_empty()) {
        v |= match t.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap_or(0),
            None if t.starts_with('0') && t.len() > 1 => u64::from_str_radix(&t[1..], 8).unwrap_or(0),
            None => t.parse().unwrap_or(0),
        };
    }
    v & want == want
}

/// How long a wait may block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Timeout {
    /// Blocks until something happens (negative timeout or NULL).
    Infinite,
    /// At most this many nanoseconds; 0 means "do not block".
    Ns(u64),
}

impl Timeout {
    pub fn is_zero(self) -> bool {
        self == Timeout::Ns(0)
    }
}

/// The timeout argument of poll/ppoll/select/pselect6/epoll_wait/epoll_pwait(2).
pub fn poll_timeout(sys: Sys, args: &str) -> Option<Timeout> {
    let (idx, kind) = match sys {
        Sys::Poll => (2, 'm'),
        Sys::EpollWait | Sys::EpollPwait => (3, 'm'),
        Sys::Ppoll => (2, 'n'),
        Sys::EpollPwait2 => (3, 'n'),
        Sys::Pselect6 => (4, 'n'),
        Sys::Select | Sys::NewSelect => (4, 'u'),
        _ => return None,
    };
    // poll and epoll_wait end with the timeout, after an fd array or an event buffer that
    // may be long: a plain number after the last separator is it
    let last = match sys {
        Sys::Poll | Sys::EpollWait => plain_from_end(args, 0).filter(|w| w.parse::<i64>().is_ok()),
        _ => None,
    };
    let a = match last {
        Some(a) => a,
        None => split(args).nth(idx)?,
    };
    match kind {
        'm' => {
            let v: i64 = a.trim().parse().ok()?;
            // old strace printed -1 as an unsigned 32-bit value
            if !(0..1 << 31).contains(&v) {
                Some(Timeout::Infinite)
            } else {
                Some(Timeout::Ns(v as u64 * 1_000_000))
            }
        }
        _ => {
            if a == "NULL" {
                return Some(Timeout::Infinite);
            }
            let (sec, frac) = parse_time_struct(a)?;
            let frac_ns = if kind == 'u' { frac.saturating_mul(1000) } else { frac };
            Some(Timeout::Ns(sec.saturating_mul(1_000_000_000).saturating_add(frac_ns)))
        }
    }
}

/// `{tv_sec=1, tv_nsec=500}` or old `{1, 500}` -> (1, 500). A `left {...}` or address is None.
pub(crate) fn parse_time_struct(a: &str) -> Option<(u64, u64)> {
    let inner = a.trim().strip_prefix('{')?;
    let inner = &inner[..inner.find('}')?];
    let mut it = inner.split(',').map(|f| {
        let f = f.trim();
        let v = f.rsplit('=').next().unwrap_or(f).trim();
        // -X verbose may add comments: 0 /* 0.000000 */
        let v = v.split_whitespace().next().unwrap_or(v);
        v.parse::<u64>().ok()
    });
    let sec = it.next()??;
    let frac = it.next()??;
    Some((sec, frac))
}

/// A decoded socket address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SockAddr {
    Inet { ip: IpAddr, port: u16 },
    Unix { path: String },
    Netlink { pid: u32 },
    Other { family: String },
}

impl std::fmt::Display for SockAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SockAddr::Inet { ip: IpAddr::V4(ip), port } => write!(f, "{ip}:{port}"),
            SockAddr::Inet { ip: IpAddr::V6(ip), port } => write!(f, "[{ip}]:{port}"),
            SockAddr::Unix { path } if path.is_empty() => write!(f, "unix:(unnamed)"),
            SockAddr::Unix { path } => write!(f, "unix:{path}"),
            SockAddr::Netlink { pid } => write!(f, "netlink:{pid}"),
            SockAddr::Other { family } => write!(f, "{family}"),
        }
    }
}

/// Find and decode the first `{sa_family=...}` structure in an argument list.
pub fn find_sockaddr(args: &str) -> Option<SockAddr> {
    let start = args.find("sa_family=")?;
    let body = &args[start..];
    let end = top_level_end(body, b'}');
    let body = &body[..end];
    let fam_text = field(body, "sa_family=")?;
    let fam = family_name(fam_text);
    match fam {
        "AF_INET" | "AF_INET6" => {
            let port = field(body, "sin_port=").or_else(|| field(body, "sin6_port=")).and_then(parse_port).unwrap_or(0);
            let ip = ip_of(body)?;
            Some(SockAddr::Inet { ip, port })
        }
        "AF_UNIX" | "AF_LOCAL" | "AF_FILE" => {
            let path = match body.find("sun_path=") {
                Some(i) => unquote(&body[i + 9..])
                    .map(|p| if body[i + 9..].starts_with('@') { format!("@{p}") } else { p.into_owned() })
                    .unwrap_or_default(),
                None => String::new(),
            };
            Some(SockAddr::Unix { path })
        }
        "AF_NETLINK" => {
            let pid = field(body, "nl_pid=").and_then(|v| v.parse().ok()).unwrap_or(0);
            Some(SockAddr::Netlink { pid })
        }
        other => Some(SockAddr::Other { family: other.to_string() }),
    }
}

fn family_name(t: &str) -> &str {
    // -X verbose: `0x2 /* AF_INET */`; -X raw: `0x2`; plain: `AF_INET`
    if let Some(i) = t.find("/* ") {
        let rest = &t[i + 3..];
        return rest.split_whitespace().next().unwrap_or(rest);
    }
    let t = t.trim();
    let n = if let Some(h) = t.strip_prefix("0x") { u32::from_str_radix(h, 16).ok() } else { t.parse::<u32>().ok() };
    match n {
        Some(1) => "AF_UNIX",
        Some(2) => "AF_INET",
        Some(10) => "AF_INET6",
        Some(16) => "AF_NETLINK",
        Some(_) => "AF_OTHER",
        None => t.strip_prefix("PF_").map_or(t, |_| t),
    }
}

/// The value text of `key=` up to the next top-level comma.
fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let i = body.find(key)? + key.len();
    let v = &body[i..];
    let end = top_level_end(v, b',');
    Some(v[..end].trim())
}

fn parse_port(v: &str) -> Option<u16> {
    // htons(80); -X verbose: "\x90\xdf" /* htons(37087) */; -X raw: "\x90\xdf" (network order)
    if let Some(i) = v.find("htons(") {
        let r = &v[i + 6..];
        return r[..r.find(')')?].trim().parse().ok();
    }
    if v.starts_with('"') {
        let b = quoted_bytes(v)?;
        return (b.len() == 2).then(|| u16::from_be_bytes([b[0], b[1]]));
    }
    let inner = v;
    let inner = inner.split_whitespace().next()?;
    if let Some(h) = inner.strip_prefix("0x") {
        u16::from_str_radix(h, 16).ok()
    } else {
        inner.parse().ok()
    }
}

fn ip_of(body: &str) -> Option<IpAddr> {
    for key in ["inet_addr(\"", "inet_pton(AF_INET6, \"", "inet_pton(AF_INET, \""] {
        if let Some(i) = body.find(key) {
            // -xx prints even the address hex-escaped
            let rest = &body[i + key.len() - 1..];
            return unquote(rest)?.parse().ok();
        }
    }
    // -X raw: the address bytes as a string
    if let Some(v) = field(body, "sin_addr=") {
        let b = quoted_bytes(v)?;
        let a: [u8; 4] = b.try_into().ok()?;
        return Some(IpAddr::from(a));
    }
    if let Some(v) = field(body, "sin6_addr=") {
        let b = quoted_bytes(v)?;
        let a: [u8; 16] = b.try_into().ok()?;
        return Some(IpAddr::from(a));
    }
    None
}

/// The first bytes of the string content `s` (after its opening quote, up to the closing one)
/// decoded from strace's escapes into `out`. Returns how many bytes were decoded.
pub fn unescape_prefix(s: &str, out: &mut [u8]) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n = 0;
    while i < b.len() && n < out.len() && b[i] != b'"' {
        let c = b[i];
        if c != b'\\' || i + 1 >= b.len() {
            out[n] = c;
            n += 1;
            i += 1;
            continue;
        }
        i += 1;
        let v = match b[i] {
            b'n' => b'\n',
            b't' => b'\t',
            b'r' => b'\r',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'x' => {
                let mut v = 0u32;
                let mut k = 0;
                while k < 2 && i + 1 < b.len() && (b[i + 1] as char).is_ascii_hexdigit() {
                    v = v * 16 + (b[i + 1] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                v as u8
            }
            d @ b'0'..=b'7' => {
                let mut v = (d - b'0') as u32;
                let mut k = 1;
                while k < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                    v = v * 8 + (b[i + 1] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                v as u8
            }
            other => other,
        };
        out[n] = v;
        n += 1;
        i += 1;
    }
    n
}

/// The buffers of a send/recv-family call: one per message (sendmmsg/recvmmsg carry several),
/// each the concatenation of its strings (iovecs), with whether strace cut it short.
pub fn call_buffers(sys: Sys, args: &str) -> Vec<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let Some(arg) = split(args).nth(1) else { return out };
    match sys {
        Sys::Sendmmsg | Sys::Recvmmsg => {
            let inner = arg.trim().strip_prefix('[').and_then(|a| a.strip_suffix(']')).unwrap_or("");
            for el in split(inner) {
                if let Some(buf) = iov_strings(el) {
                    out.push(buf);
                }
            }
        }
        _ if arg.starts_with('"') => {
            let a = arg.as_bytes();
            let end = close_quote_at(a, 1);
            let cut = arg[end.min(arg.len())..].starts_with("\"...");
            out.push((unescape_bytes(&arg[1..end.min(arg.len())]), cut));
        }
        _ => {
            if let Some(buf) = iov_strings(arg) {
                out.push(buf);
            }
        }
    }
    out
}

/// Index of the closing quote of a string whose content starts at `from`.
fn close_quote_at(b: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < b.len() && b[i] != b'"' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i.min(b.len())
}

/// The `iov_base="..."` strings in some argument text, concatenated.
fn iov_strings(s: &str) -> Option<(Vec<u8>, bool)> {
    const KEY: &str = "iov_base=\"";
    let mut bytes = Vec::new();
    let mut cut = false;
    let mut found = false;
    let mut rest = s;
    while let Some(i) = rest.find(KEY) {
        let start = i + KEY.len();
        let end = close_quote_at(rest.as_bytes(), start);
        bytes.extend(unescape_bytes(&rest[start..end]));
        found = true;
        let after = &rest[end.min(rest.len())..];
        if after.starts_with("\"...") {
            cut = true;
        }
        rest = after.get(1..).unwrap_or("");
    }
    found.then_some((bytes, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_nested_args() {
        let a = r#"3, "a, \"b\"", {x=1, y=[2, 3]}, 4</a,b>, NULL"#;
        let v: Vec<_> = split(a).collect();
        assert_eq!(v, vec!["3", r#""a, \"b\"""#, "{x=1, y=[2, 3]}", "4</a,b>", "NULL"]);
    }

    #[test]
    fn a_cut_decoration_has_no_end() {
        // an unterminated quote inside brackets: the scan ran past the end (a panic)
        assert_eq!(deco_end("<[\"x"), None);
        assert_eq!(parse_fd("3<[\"x").map(|f| (f.num, f.deco)), Some((3, None)));
    }

    #[test]
    fn parses_fds() {
        assert_eq!(parse_fd("3").unwrap().num, 3);
        let f = parse_fd("5<TCP:[127.0.0.1:44649->127.0.0.1:32868]>, x").unwrap();
        assert_eq!(f.deco, Some("TCP:[127.0.0.1:44649->127.0.0.1:32868]"));
        let f = parse_fd("3</dev/null<char 1:3>>").unwrap();
        assert_eq!(f.deco, Some("/dev/null<char 1:3>"));
        assert_eq!(parse_fd("AT_FDCWD").unwrap().num, -100);
        assert_eq!(parse_fd("NULL"), None);
        assert_eq!(
            FdTarget::from_deco("TCP:[127.0.0.1:5000->127.0.0.1:80]"),
            FdTarget::Inet {
                proto: TargetKind::Tcp,
                local: Some("127.0.0.1:5000".into()),
                remote: Some("127.0.0.1:80".into())
            }
        );
        assert_eq!(FdTarget::from_deco(r"\x2f\x65\x74\x63"), FdTarget::File("/etc".into()));
        assert_eq!(FdTarget::from_deco("/dev/null<char 1:3>"), FdTarget::File("/dev/null".into()));
    }

    #[test]
    fn flags_by_name_and_value() {
        // lines of tests/fixtures/traces/netio.f-tt-T-yy, -Xraw and -Xverbose
        assert!(has_flag("SOCK_CLOEXEC|SOCK_NONBLOCK", "SOCK_NONBLOCK"));
        assert!(has_flag("0x80800", "SOCK_NONBLOCK"));
        assert!(has_flag("0x80800 /* SOCK_CLOEXEC|SOCK_NONBLOCK */", "SOCK_NONBLOCK"));
        assert!(has_flag("0x1|0x800", "SOCK_NONBLOCK"));
        assert!(has_flag("O_RDONLY|O_CLOEXEC", "O_CLOEXEC"));
        assert!(!has_flag("O_RDONLY|O_CLOEXEC", "O_NONBLOCK"));
        assert!(!has_flag("0x80000", "O_NONBLOCK"));
        assert!(has_flag("O_WRONLY|O_CREAT|O_SYNC", "O_SYNC"));
        // O_SYNC's value includes O_DSYNC's bit; O_DSYNC alone is not O_SYNC
        assert!(has_flag("0x101041", "O_SYNC"));
        assert!(!has_flag("0x1041", "O_SYNC"));
        assert!(has_flag("0x1041", "O_DSYNC"));
    }

    #[test]
    fn unescapes() {
        assert_eq!(unquote(r#""a\nb\x41\101""..."#).unwrap(), "a\nbAA");
        assert_eq!(unquote("NULL"), None);
    }

    #[test]
    fn timeouts() {
        let t = |s, a| poll_timeout(s, a);
        assert_eq!(t(Sys::Poll, "[{fd=3, events=POLLIN}], 1, 0"), Some(Timeout::Ns(0)));
        assert_eq!(t(Sys::Poll, "[{fd=3, events=POLLIN}], 1, -1"), Some(Timeout::Infinite));
        assert_eq!(t(Sys::EpollWait, "0, {{EPOLLIN, {u32=5, u64=5}}}, 64, 4294967295"), Some(Timeout::Infinite));
        assert_eq!(
            t(Sys::Ppoll, "[{fd=3, events=POLLIN}], 1, {tv_sec=0, tv_nsec=5000}, NULL, 8"),
            Some(Timeout::Ns(5000))
        );
        assert_eq!(t(Sys::Select, "4, [3], NULL, NULL, {tv_sec=0, tv_usec=10000}"), Some(Timeout::Ns(10_000_000)));
        assert_eq!(t(Sys::Select, "4, [3], NULL, NULL, {1, 0}"), Some(Timeout::Ns(1_000_000_000)));
        assert_eq!(t(Sys::Pselect6, "4, [3], NULL, NULL, NULL, {[], 8}"), Some(Timeout::Infinite));
    }

    #[test]
    fn sockaddrs() {
        let s = find_sockaddr(r#"3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("127.0.0.1")}, 16"#);
        assert_eq!(s.unwrap().to_string(), "127.0.0.1:80");
        let s = find_sockaddr(
            r#"3, {sa_family=AF_INET6, sin6_port=htons(59323), inet_pton(AF_INET6, "::ffff:10.10.25.20", &sin6_addr), sin6_flowinfo=0, sin6_scope_id=0}, [68719476764]"#,
        );
        assert_eq!(s.unwrap().to_string(), "[::ffff:10.10.25.20]:59323");
        let s = find_sockaddr(r#"3, {sa_family=AF_UNIX, sun_path="/run/x.sock"}, 110"#);
        assert_eq!(s.unwrap(), SockAddr::Unix { path: "/run/x.sock".into() });
        let s = find_sockaddr("3, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12");
        assert_eq!(s.unwrap(), SockAddr::Netlink { pid: 0 });
        let s = find_sockaddr(
            r#"3, {sa_family=0x2 /* AF_INET */, sin_port=htons(53), sin_addr=inet_addr("127.0.0.1")}, 16"#,
        );
        assert_eq!(s.unwrap().to_string(), "127.0.0.1:53");
    }
}
