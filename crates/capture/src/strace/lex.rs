//! Pieces of a strace line, read without state: the call, its return value, its duration,
//! strace's own notes.

use super::*;

/// `strace: Process 1 attached`, `/usr/bin/strace: ...` -> the text after `strace: `.
pub(super) fn strace_note(s: &str) -> Option<&str> {
    if let Some(r) = s.strip_prefix("strace: ") {
        return Some(r);
    }
    if s.starts_with('/') {
        let i = s.find("strace: ")?;
        let prog = &s[..i];
        if !prog.contains(' ') {
            return Some(&s[i + 8..]);
        }
    }
    None
}

/// `  42.68    1.865496   519   3594   1644 access`: a float, then another number.
#[inline]
pub(super) fn looks_like_c_row(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let Some(sp) = memchr::memchr(b' ', b) else {
        return false;
    };
    let first = &b[..sp];
    if !first.contains(&b'.') || !first.iter().all(|c| c.is_ascii_digit() || *c == b'.') {
        return false;
    }
    b[sp..].iter().find(|c| **c != b' ').is_some_and(u8::is_ascii_digit)
}

/// A line strace writes after a call's line about that call: `-k` stack frames (` >
/// /usr/lib/libc.so.6(read+0x12) [0x10a2b]`), `-e read=`/`write=` hex dumps (` | 00000  31 32
/// ...  12c0 |`) and, for readv/writev, the header of each buffer's dump (` * 2 bytes in
/// buffer 0`), and `--kvm=vcpu+`'s dumps of a vCPU's `struct kvm_run` before and after
/// `KVM_RUN` (strace 6.18 on: ` VCPU:0< {request_interrupt_window=0, ...}`, ` VCPU:0> {...}`,
/// or ` VCPU< `/` VCPU> ` when the vCPU's number is unknown; src/kvm.c,
/// kvm_run_structure_decode). Each begins with a space.
#[cold]
pub(super) fn after_a_call(line: &str) -> bool {
    if line.starts_with(" > ") || line.starts_with(" | ") {
        return true;
    }
    if line.starts_with(" * ") {
        return line.contains(" bytes in buffer ");
    }
    let Some(r) = line.strip_prefix(" VCPU") else { return false };
    let r = r.strip_prefix(':').map_or(r, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()));
    (r.starts_with("< ") || r.starts_with("> ")) && r[2..].starts_with('{')
}

/// Whether a line begins as strace's own lines do: a pid column, `[pid N]`, `-i`'s pointer or
/// `-n`'s number, a time, a resumption, a signal, an exit, a note, a `-c` table, a line about
/// the call before (`-k`, dumps), or a known syscall's name and its parenthesis. Such a line is
/// never the rest of a line cut before it; any other is (a mail client wrapped the call at 72
/// columns, `sin_addr=inet_addr("10.0.11.1")}, 16) = 0`, or the program's output ended a line
/// strace had begun, `[{WIFEXITED(s) && ...}], 0, NULL) = 2458`).
pub(super) fn starts_like_a_line(line: &str) -> bool {
    if after_a_call(line) {
        return true;
    }
    let c = line.trim_start();
    let b = c.as_bytes();
    // a word and its parenthesis: a call's line (`read(`), as the parser takes one, known
    // syscall or not. A line the parser could hold as a call's cut start must count as a
    // line: the parallel reader gives a chunk's first line that could continue to the parser
    // holding the line before, and nothing the chunk read after it may depend on it.
    let word = b.iter().take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'?').count();
    if word > 0 && b.get(word) == Some(&b'(') {
        return true;
    }
    match b.first() {
        None => true,
        // `123 read(`, `10:00:00.1 read(`, `1700000000.1 read(`; a wrapped argument goes on
        // after its digits with `)`, `,` or `}`
        Some(d) if d.is_ascii_digit() => matches!(b.get(word), None | Some(b' ' | b':' | b'.')),
        // `[pid N]`, `[ Process PID=N runs in 32 bit mode. ]`, `[ 110]`, `[00007f0a1b2c3d4e]`;
        // not a wrapped array (`[{WIFEXITED(s) ...`, `["ls", "-l"]`)
        Some(b'[') => b.get(1).is_some_and(|&n| n == b'p' || n == b' ' || n == b'?' || n.is_ascii_hexdigit()),
        Some(b'<') => c.starts_with("<... "),
        Some(b'-' | b'+' | b'%') => true,
        // `-t -r` together: `(+     0.000494) read(...)` after the time
        Some(b'(') => c.starts_with("(+"),
        Some(b'P') if c.starts_with("Process ") => true,
        _ => strace_note(c).is_some(),
    }
}

/// A syscall line split into its parts.
pub(super) struct Call<'a> {
    pub(super) name: &'a str,
    pub(super) args: &'a str,
    pub(super) ret: Ret<'a>,
    pub(super) dur_ns: Option<u64>,
}

/// `s` without its leading ASCII spaces (what `trim_start_matches(' ')` gives, by bytes: the
/// char searcher cost ~35 instructions a line).
#[inline]
pub(super) fn skip_spaces(s: &str) -> &str {
    // a plain loop: most lines have one space here, and the pattern searchers' set-up cost
    // ~25 instructions a line
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    &s[i..]
}

/// `-tt`'s `HH:MM:SS.ffffff ` at the start of `b` (the separators, twelve digits and the space
/// after them), as nanoseconds since midnight. Checked and read eight bytes at a time: the
/// timestamp is read on every line, and byte by byte it cost ~190 instructions a line.
#[inline]
pub(super) fn tt_time_of_day(b: &[u8]) -> Option<i64> {
    let (Some(a), Some(c)) = (b.get(..8), b.get(8..16)) else { return None };
    let a = u64::from_le_bytes(a.try_into().ok()?); // `HH:MM:SS`
    let c = u64::from_le_bytes(c.try_into().ok()?); // `.ffffff `
                                                    // the separators: `:` at bytes 2 and 5; `.` at byte 0 and ` ` at byte 7 of the second word
    const A_SEP: u64 = 0x0000_ff00_00ff_0000;
    const C_SEP: u64 = 0xff00_0000_0000_00ff;
    if a & A_SEP != 0x0000_3a00_003a_0000 || c & C_SEP != 0x2000_0000_0000_002e {
        return None;
    }
    // every other byte a digit: high nibble 3, and still 3 with 6 added (0x30..=0x39)
    fn digits(x: u64, mask: u64) -> bool {
        let x = x & mask;
        let threes = 0x3030_3030_3030_3030 & mask;
        x & (0xf0f0_f0f0_f0f0_f0f0 & mask) == threes
            && (x + (0x0606_0606_0606_0606 & mask)) & (0xf0f0_f0f0_f0f0_f0f0 & mask) == threes
    }
    if !digits(a, !A_SEP) || !digits(c, !C_SEP) {
        return None;
    }
    let d = |i: usize| i64::from(b[i] - b'0');
    let secs = (d(0) * 10 + d(1)) * 3600 + (d(3) * 10 + d(4)) * 60 + d(6) * 10 + d(7);
    let us = ((((d(9) * 10 + d(10)) * 10 + d(11)) * 10 + d(12)) * 10 + d(13)) * 10 + d(14);
    Some(secs * 1_000_000_000 + us * 1000)
}

/// Split `name(args) = ret [<dur>]`. `name_len` is the length of the name before `(`.
pub(super) fn split_call(s: &str, name_len: usize) -> Option<Call<'_>> {
    let mut body = s.trim_ascii_end();
    // -T: trailing `<0.000123>`
    let mut dur_ns = None;
    if body.ends_with('>') {
        if let Some(lt) = memchr::memrchr(b'<', body.as_bytes()).filter(|&i| i > 0 && body.as_bytes()[i - 1] == b' ') {
            let d = &body[lt + 1..body.len() - 1];
            if let Some(ns) = parse_duration(d) {
                dur_ns = Some(ns);
                body = body[..lt - 1].trim_ascii_end();
            }
        }
    }
    let eq = find_ret_sep(body, name_len)?;
    let args = if eq == name_len + 1 {
        ""
    } else {
        let args_end = body[..eq].trim_ascii_end();
        &args_end.strip_suffix(')')?[name_len + 1..]
    };
    let ret = parse_ret(body[eq + 1..].trim_ascii_start())?;
    Some(Call { name: &s[..name_len], args, ret, dur_ns })
}

/// Find the `=` that separates the arguments from the return value: the last ` = ` whose
/// left side, spaces trimmed, ends with `)`.
pub(super) fn find_ret_sep(body: &str, name_len: usize) -> Option<usize> {
    let b = body.as_bytes();
    let mut end = b.len();
    while let Some(i) = memchr::memrchr(b'=', &b[..end]) {
        // strace 4.5 could print `( <unavailable>)= ?` without the space
        if i > name_len && i + 1 < b.len() && (b[i - 1] == b' ' || b[i - 1] == b')') && b[i + 1] == b' ' {
            let left = body[..i].trim_ascii_end();
            if left.ends_with(')') {
                return Some(i);
            }
        }
        end = i;
    }
    // `????(= ? <unavailable>`: no arguments at all
    if b.get(name_len + 1) == Some(&b'=') && b.get(name_len + 2) == Some(&b' ') {
        return Some(name_len + 1);
    }
    None
}

/// Parse what follows `= `.
pub(super) fn parse_ret(r: &str) -> Option<Ret<'_>> {
    if let Some(rest) = r.strip_prefix('?') {
        let rest = rest.trim_start();
        if rest.starts_with('E') {
            let errno = rest.split_whitespace().next().unwrap_or(rest);
            return Some(Ret::Err { val: 0, errno });
        }
        return Some(Ret::Unknown);
    }
    let b = r.as_bytes();
    let mut i = 0;
    let neg = b.first() == Some(&b'-');
    if neg {
        i = 1;
    }
    let val: i64;
    if b.len() > i + 1 && b[i] == b'0' && b[i + 1] == b'x' {
        let start = i + 2;
        i = start;
        while i < b.len() && b[i].is_ascii_hexdigit() {
            i += 1;
        }
        let v = u64::from_str_radix(&r[start..i], 16).ok()?;
        val = if neg { -(v as i64) } else { v as i64 };
    } else {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        let v = parse_u64(&b[start..i]) as i64;
        val = if neg { -v } else { v };
    }
    let mut rest = &r[i..];
    let mut deco = None;
    if rest.starts_with('<') {
        let e = syslint_event::args::deco_end(rest)?;
        deco = Some(&rest[1..e]);
        rest = &rest[e + 1..];
    }
    let rest = rest.trim_start();
    if rest.starts_with('E') && (val < 0 || neg) {
        let errno = rest.split_whitespace().next().unwrap_or(rest);
        return Some(Ret::Err { val, errno });
    }
    if val < 0 {
        // a syscall strace does not know: `= -1 (errno 22)`
        if let Some(n) = rest.strip_prefix("(errno ").and_then(|r| r.strip_suffix(')')) {
            let errno = n.trim().parse().ok().and_then(syslint_event::errno::name).unwrap_or("E?");
            return Some(Ret::Err { val, errno });
        }
    }
    Some(Ret::Ok { val, deco, note: rest })
}

/// `0.000123` seconds (any number of fraction digits) to nanoseconds.
pub(super) fn parse_duration(d: &str) -> Option<u64> {
    let b = d.as_bytes();
    // `-T`'s usual `S.ffffff`, at fixed places: one multiply-add a digit (the loops below cost
    // ~65 instructions a call)
    if let [s, b'.', f @ ..] = b {
        if f.len() == 6 && s.is_ascii_digit() && f.iter().all(u8::is_ascii_digit) {
            let us = f.iter().fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
            return Some(u64::from(s - b'0') * NS as u64 + us * 1000);
        }
    }
    parse_duration_any(b)
}

/// [`parse_duration`] of any shape.
fn parse_duration_any(b: &[u8]) -> Option<u64> {
    // `0.000123`, or whole seconds with --syscall-times=s
    let dot = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    if dot == 0 || !b[..dot].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = parse_u64(&b[..dot]);
    let frac = if dot < b.len() { parse_frac(&b[dot + 1..])? } else { 0 };
    // no call lasts a century: a larger value is damage, and would overflow every sum of times
    Some(secs.saturating_mul(NS as u64).saturating_add(frac as u64).min(MAX_DURATION_NS))
}

/// The longest duration taken from a `-T` field (100 years).
pub(super) const MAX_DURATION_NS: u64 = 100 * 365 * 86_400 * 1_000_000_000;

#[inline]
pub(super) fn parse_u64(b: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &c in b {
        v = v.saturating_mul(10).saturating_add((c - b'0') as u64);
    }
    v
}

/// Fraction digits to nanoseconds (`123456` -> 123_456_000).
#[inline]
pub(super) fn parse_frac(b: &[u8]) -> Option<i64> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for (i, &c) in b.iter().enumerate() {
        if i < 9 {
            v = v * 10 + (c - b'0') as i64;
        }
    }
    for _ in b.len()..9 {
        v *= 10;
    }
    Some(v)
}

/// The length of `name=` at the start of `s` when `s` starts with an argument name as strace's
/// `-N`/`--arg-names` (6.16 on) prints it: a lowercase C identifier and `=`.
#[inline]
fn arg_name_len(s: &[u8]) -> Option<usize> {
    if !s.first().is_some_and(|c| c.is_ascii_lowercase() || *c == b'_') {
        return None;
    }
    let n = s.iter().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || **c == b'_').count();
    (s.get(n) == Some(&b'=')).then_some(n + 1)
}

/// Whether the arguments starting at `at` are named as `-N` prints them (`fd=3, count=64`).
/// `clone` is left alone: strace has always printed its arguments named, and the model reads
/// them so.
#[inline]
pub(super) fn named_args(s: &str, at: usize, name: &str) -> bool {
    s.as_bytes().get(at..).and_then(arg_name_len).is_some() && name != "clone"
}

/// `s` with the names of the top-level arguments from `at` on taken away: `poll(fds=[...],
/// nfds=1, timeout=0) = 0` -> `poll([...], 1, 0) = 0`, the form every rule reads. Names inside
/// structures (`{fd=3, events=POLLIN}`) are strace's usual output and stay. The scan stops at
/// the `)` that closes the call; what follows (the return value) is copied as it is.
pub(super) fn without_arg_names(s: &str, at: usize) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..at]);
    let mut i = at;
    let mut from = at;
    let mut depth = 0i32;
    let mut arg_start = true;
    while i < b.len() {
        if arg_start && depth == 0 {
            arg_start = false;
            if let Some(n) = arg_name_len(&b[i..]) {
                out.push_str(&s[from..i]);
                i += n;
                from = i;
                continue;
            }
        }
        match b[i] {
            b'"' => {
                // to the closing quote, escapes skipped
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    break;
                }
            }
            // an fd's decoration (`3</a, b>`, `fd=3<TCP:[1.2.3.4:5->6.7.8.9:10]>`)
            b'<' if i > 0 && (b[i - 1].is_ascii_digit() || b[i - 1].is_ascii_uppercase()) => {
                if let Some(e) = syslint_event::args::deco_end(&s[i..]) {
                    i += e;
                }
            }
            b',' if depth == 0 => {
                arg_start = true;
                i += 1;
                // the separator's space
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push_str(&s[from.min(s.len())..]);
    out
}

/// `line` without terminal escape sequences: strace's `--color` output (7.0 on: `ESC[33m
/// execve ESC[0m(...`) and logs recorded from a terminal. CSI sequences (`ESC [` parameters,
/// a final byte) and OSC ones (`ESC ]` ... BEL or `ESC \`) go, any other `ESC x` pair too.
/// strace writes a program's own ESC bytes inside strings as `\33`, so a raw ESC is never
/// part of what a call did.
pub(super) fn without_escapes(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut from = 0;
    let mut i = 0;
    while let Some(k) = memchr::memchr(0x1b, &b[i..]) {
        let esc = i + k;
        out.push_str(&line[from..esc]);
        let mut j = esc + 1;
        match b.get(j) {
            Some(b'[') => {
                j += 1;
                // parameters and intermediates, then one final byte
                while j < b.len() && (0x20..=0x3f).contains(&b[j]) {
                    j += 1;
                }
                if j < b.len() && (0x40..=0x7e).contains(&b[j]) {
                    j += 1;
                }
            }
            Some(b']') => {
                j += 1;
                while j < b.len() && b[j] != 0x07 && !(b[j] == 0x1b && b.get(j + 1) == Some(&b'\\')) {
                    j += 1;
                }
                j = (j + if b.get(j) == Some(&0x07) { 1 } else { 2 }).min(b.len());
            }
            Some(c) if c.is_ascii() => j += 1,
            _ => {}
        }
        i = j;
        from = j;
    }
    out.push_str(&line[from..]);
    out
}

/// What a log collector put before each strace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Prefix {
    #[default]
    None,
    /// `Nov 28 15:20:51 ` (moreutils `ts`, its default format; `%.S` adds a fraction).
    MonthDay,
    /// `Nov 28 15:20:51 host strace[31095]: ` (syslog, `journalctl`'s default output).
    Syslog,
    /// `2026-11-28T15:20:51.015642123Z ` (`docker logs -t`, `kubectl logs --timestamps`,
    /// `ts '%FT%T'`), or with a space between date and time.
    Iso,
    /// `2026-11-28T15:20:51+0000 host strace[31095]: ` (`journalctl -o short-iso`, RFC 5424
    /// syslog).
    IsoSyslog,
}

impl Prefix {
    pub fn describe(self) -> &'static str {
        match self {
            Prefix::None => "",
            Prefix::MonthDay => "a time stamp such as moreutils' ts adds (`Nov 28 15:20:51 `)",
            Prefix::Syslog => "a syslog or journal prefix (`Nov 28 15:20:51 host tag[pid]: `)",
            Prefix::Iso => "an ISO 8601 time stamp such as docker logs -t or kubectl logs --timestamps add",
            Prefix::IsoSyslog => {
                "a syslog or journal prefix with an ISO 8601 time (`2026-11-28T15:20:51+0000 host tag[pid]: `)"
            }
        }
    }
}

/// `HH:MM:SS` and an optional `.fraction` at the start of `b`: its length.
fn clock_len(b: &[u8]) -> Option<usize> {
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if !(d(0) && d(1) && b.get(2) == Some(&b':') && d(3) && d(4) && b.get(5) == Some(&b':') && d(6) && d(7)) {
        return None;
    }
    let mut n = 8;
    if b.get(8) == Some(&b'.') && d(9) {
        n = 9 + b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    Some(n)
}

/// `host tag[pid]: ` or `host tag: ` after a syslog time: its length.
fn syslog_tail(b: &[u8]) -> Option<usize> {
    let host = b.iter().position(|&c| c == b' ')?;
    if host == 0 {
        return None;
    }
    let rest = &b[host + 1..];
    let colon = rest.iter().take(128).position(|&c| c == b':' || c == b' ')?;
    if rest[colon] != b':' || colon == 0 || rest.get(colon + 1) != Some(&b' ') {
        return None;
    }
    Some(host + 1 + colon + 2)
}

/// The length and kind of a collector's prefix at the start of `line`, when it has one.
/// Cheap for strace's own lines, which start with a pid, a time, `[pid`, a name or a mark:
/// a month's name or `YYYY-` is looked at further, nothing else.
pub(super) fn collector_prefix(line: &str) -> Option<(usize, Prefix)> {
    let b = line.as_bytes();
    let first = *b.first()?;
    if first.is_ascii_uppercase() {
        // `Nov 28 15:20:51 ` (the day may be padded: `Nov  1`)
        const MONTHS: [&[u8; 3]; 12] =
            [b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec"];
        if b.len() < 16 || !MONTHS.iter().any(|m| &b[..3] == *m) || b[3] != b' ' {
            return None;
        }
        let mut i = 4;
        if b[i] == b' ' {
            i += 1;
        }
        let day = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=2).contains(&day) || b.get(i + day) != Some(&b' ') {
            return None;
        }
        i += day + 1;
        i += clock_len(&b[i..])?;
        if b.get(i) != Some(&b' ') {
            return None;
        }
        i += 1;
        return Some(match syslog_tail(&b[i..]) {
            Some(n) if !looks_like_strace_start(&b[i..]) => (i + n, Prefix::Syslog),
            _ => (i, Prefix::MonthDay),
        });
    }
    // `2026-11-28T15:20:51.015642123Z `, `2026-11-28 15:20:51 `, `...+0000 `, `...+00:00 `
    if !(first.is_ascii_digit() && b.get(4) == Some(&b'-')) {
        return None;
    }
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if !(d(1) && d(2) && d(3) && d(5) && d(6) && b.get(7) == Some(&b'-') && d(8) && d(9)) {
        return None;
    }
    if !matches!(b.get(10), Some(b'T' | b' ')) {
        return None;
    }
    let mut i = 11 + clock_len(&b[11..])?;
    match b.get(i) {
        Some(b'Z') => i += 1,
        Some(b'+' | b'-') => {
            i += 1;
            i += b[i..].iter().take(5).take_while(|c| c.is_ascii_digit() || **c == b':').count();
        }
        _ => {}
    }
    if b.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    Some(match syslog_tail(&b[i..]) {
        Some(n) if !looks_like_strace_start(&b[i..]) => (i + n, Prefix::IsoSyslog),
        _ => (i, Prefix::Iso),
    })
}

/// Whether `b` starts as strace's own lines do after a collector's time: a pid and a space,
/// `[pid `, a time of day, or a call (`name(`), a signal or an exit mark.
fn looks_like_strace_start(b: &[u8]) -> bool {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 && matches!(b.get(digits), Some(b' ' | b':' | b'.')) {
        return true;
    }
    if b.starts_with(b"[pid ") || b.starts_with(b"--- ") || b.starts_with(b"+++ ") || b.starts_with(b"<... ") {
        return true;
    }
    let name = b.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    name > 0 && b.get(name) == Some(&b'(')
}

/// Whether `s`, a line that had leading spaces, starts with a pid and then a time (`11425
/// 13:57:18.093725 close(...)`): a paste indented as Markdown code. strace's own lines with
/// leading spaces are `-r` stamps (`     0.000123 close(3)`), which have a fraction and no pid
/// column before them.
pub(super) fn indented_pid(s: &str) -> bool {
    let b = s.as_bytes();
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || b.get(n) != Some(&b' ') {
        return false;
    }
    let t = &b[n + 1..];
    let d = t.iter().take_while(|c| c.is_ascii_digit()).count();
    // `13:57:18` or `1511176638.093725`
    d > 0 && matches!(t.get(d), Some(b':' | b'.')) && t.get(d + 1).is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tt_timestamps_are_read_eight_bytes_at_a_time_as_byte_by_byte() {
        // byte by byte: the digits at their places, the separators between them
        fn slow(b: &[u8]) -> Option<i64> {
            let seps = [(2, b':'), (5, b':'), (8, b'.'), (15, b' ')];
            if b.len() < 16 || seps.iter().any(|&(i, c)| b[i] != c) {
                return None;
            }
            let places = [0, 1, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14];
            if !places.iter().all(|&i| b[i].is_ascii_digit()) {
                return None;
            }
            let n = |r: std::ops::Range<usize>| parse_u64(&b[r]) as i64;
            Some(((n(0..2) * 60 + n(3..5)) * 60 + n(6..8)) * 1_000_000_000 + n(9..15) * 1000)
        }
        let good = b"16:38:47.114113 execve(";
        assert_eq!(tt_time_of_day(good), Some(((16 * 60 + 38) * 60 + 47) * 1_000_000_000 + 114_113_000));
        assert_eq!(tt_time_of_day(b"23:59:59.999999 "), slow(b"23:59:59.999999 "));
        assert_eq!(tt_time_of_day(b"00:00:00.000000 "), Some(0));
        // every byte of the 16 replaced by every other value: the two agree
        for i in 0..16 {
            for v in 0..=255u8 {
                let mut b = *b"12:34:56.789012 x";
                b[i] = v;
                assert_eq!(tt_time_of_day(&b), slow(&b), "byte {i} = {v:#x}");
            }
        }
        assert_eq!(tt_time_of_day(b"12:34:56.789012"), None, "too short");
        assert_eq!(tt_time_of_day(b"1234567890.123456 "), None, "-ttt");
    }

    #[test]
    fn usual_durations_read_at_fixed_places_as_any_other() {
        for d in ["0.000127", "9.999999", "0.000000", "3.141592", "1.5", "12.000001", "0.0001234", "7", "0.00012x"] {
            assert_eq!(parse_duration(d), parse_duration_any(d.as_bytes()), "{d}");
        }
        assert_eq!(parse_duration("0.000127"), Some(127_000));
        assert_eq!(parse_duration("2.000001"), Some(2_000_001_000));
        // every byte of a usual one replaced by every other value: the two agree
        for i in 0..8 {
            for v in 0..=255u8 {
                let mut b = *b"1.234567";
                b[i] = v;
                if let Ok(d) = std::str::from_utf8(&b) {
                    assert_eq!(parse_duration(d), parse_duration_any(&b), "{d:?}");
                }
            }
        }
    }
}
