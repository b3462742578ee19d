//! What both DNS detectors read (repeated-dns, dns-timeout): a DNS message's header and question
//! from a buffer's bytes, whether a socket call talks to a DNS server, and the one predicate
//! for a wait that timed out (one cost, one owner: dns-timeout prices that time, repeated-dns
//! leaves it out of its own).

use crate::registry::Ctx;
use syslint_event::{Class, Event, Ret, SockAddr, Sys, Syscall, TargetKind, Timeout};

/// The longest name a DNS question may hold.
const MAX_NAME: usize = 255;

/// A DNS message header and question, as far as the bytes show it .
#[derive(Clone, Debug, PartialEq)]
pub struct DnsMsg {
    /// The message ID (a retry of a query keeps it; its answer carries it).
    pub id: u16,
    pub response: bool,
    pub name: String,
    /// The name ran past the bytes strace printed.
    pub truncated: bool,
    pub qtype: Option<u16>,
    /// The response code (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN), from the header.
    pub rcode: u8,
    /// Answer records in a response, from the header.
    pub answers: u16,
}

/// Decode a DNS message's question. `cut`: strace printed only part of the buffer.
pub fn parse_dns(b: &[u8], cut: bool) -> Option<DnsMsg> {
    if b.len() < 12 {
        return None;
    }
    let flags = b[2];
    let response = flags & 0x80 != 0;
    let opcode = (flags >> 3) & 0x0f;
    let qdcount = u16::from_be_bytes([b[4], b[5]]);
    let (id, rcode, answers) = (u16::from_be_bytes([b[0], b[1]]), b[3] & 0x0f, u16::from_be_bytes([b[6], b[7]]));
    if opcode != 0 || qdcount == 0 {
        return None;
    }
    let mut name = String::new();
    let mut i = 12;
    loop {
        if i >= b.len() {
            // ran out of bytes inside the name
            return cut.then_some(DnsMsg { id, response, name, truncated: true, qtype: None, rcode, answers });
        }
        let len = b[i] as usize;
        if len == 0 {
            break;
        }
        if len & 0xc0 != 0 || name.len() + len > MAX_NAME {
            return None; // no compression in a question; no absurd names
        }
        if !name.is_empty() {
            name.push('.');
        }
        let end = (i + 1 + len).min(b.len());
        for &c in &b[i + 1..end] {
            if c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'*' {
                name.push(c.to_ascii_lowercase() as char);
            } else {
                return None;
            }
        }
        if i + 1 + len > b.len() {
            return cut.then_some(DnsMsg { id, response, name, truncated: true, qtype: None, rcode, answers });
        }
        i += 1 + len;
    }
    if name.is_empty() {
        name.push('.');
    }
    let qtype = (i + 2 < b.len()).then(|| u16::from_be_bytes([b[i + 1], b[i + 2]]));
    Some(DnsMsg { id, response, name, truncated: false, qtype, rcode, answers })
}

/// Whether a socket call talks to a DNS server: the fd is connected to port 53, or the call's
/// own address (sendto's destination, recvfrom's source) is port 53 (`Some(tcp)`).
pub fn dns_socket(cx: &Ctx, ev: &Event, sc: &Syscall, fd: i32) -> Option<bool> {
    let t = cx.target.as_ref()?;
    let tcp = t.kind.is_tcp();
    // a connected socket shows its DNS server end (from -yy, or from the connect the model saw)
    if t.display.ends_with(":53") {
        return Some(tcp);
    }
    // the fd is unknown to the model (or its display came from a guess): ask the endpoint of the
    // connection it made, when there is one
    if t.kind == TargetKind::Unknown || t.display.ends_with("(accepted)") {
        let connected = cx
            .model
            .lookup_fd(ev.tid, fd)
            .and_then(|v| v.endpoint)
            .is_some_and(|e| e.direction == syslint_event::Direction::Out && e.endpoint.ends_with(":53"));
        if connected {
            return Some(tcp);
        }
    }
    if matches!(sc.sys, Sys::Sendto | Sys::Recvfrom | Sys::Sendmsg | Sys::Recvmsg) {
        if let Some(SockAddr::Inet { port: 53, .. }) = sc.sockaddr() {
            return Some(tcp);
        }
    }
    None
}

/// The one predicate for a DNS wait that timed out (dns-timeout prices that time; repeated-dns
/// leaves it out of its own cost): a poll/select/epoll wait that returned nothing,
/// and how long it waited when known. Whether a question was outstanding is the caller's.
pub fn timed_out_wait(sc: &Syscall) -> Option<Option<u64>> {
    (sc.sys.is(Class::POLL) && matches!(sc.ret, Ret::Ok { val: 0, .. })).then(|| waited_ns(sc))
}

/// dns-timeout's `min_wait_ms` default: the waits it owns by default.
pub const MIN_WAIT_NS: u64 = 200_000_000;

/// The wait a call stood for, in ns: its duration, else the timeout it asked for.
pub fn waited_ns(sc: &Syscall) -> Option<u64> {
    sc.dur_ns.or_else(|| match sc.timeout() {
        Some(Timeout::Ns(n)) => Some(n),
        _ => None,
    })
}
