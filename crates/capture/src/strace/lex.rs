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
    let n = s.bytes().take_while(|&c| c == b' ').count();
    &s[n..]
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
