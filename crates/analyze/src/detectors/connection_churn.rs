//! connection-churn (SL003): many short-lived TCP connections to one endpoint carrying few
//! requests each, a TLS handshake on each of them, or more connections open at once to one
//! endpoint than requests in flight.
//!
//! Per outgoing TCP connection (a `connect` that succeeded or returned `EINPROGRESS`) it counts
//! request-like writes: a burst of writes after the connection last received data is one
//! request. A connection whose first write starts with a TLS ClientHello (`16 03 xx .. .. 01`)
//! is a TLS connection; there only bursts holding an application-data record (`17 03`) of at
//! least 32 bytes count, so handshake flights and close_notify alerts are not requests. A
//! connection whose server spoke first with a MySQL/MariaDB initial handshake (sequence id 0,
//! protocol version 10, a server version) counts only commands as requests, not the handshake
//! response and authentication nor COM_QUIT; on either side. Only the first bytes of the buffer
//! are decoded, nothing of the payload is kept.

use crate::detectors::{EvidenceBuf, Span};
use crate::host::{Groups, Hosted, State};
use crate::kit::Metrics;
use crate::registry::{self, Ctx, FinishCtx};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use syslint_event::{Class, Event, Ret, SockAddr, SockOpt, Sys, Syscall, TargetKind, Tgid, Tid};
use syslint_report::{Finding, Subject, SubjectKind};

crate::detector!(
    "connection_churn",
    ConnectionChurn {
        cfg,
        seq: 0,
        open: 0,
        awaiting: 0,
        endpoints: Vec::new(),
        endpoint_ids: HashMap::default(),
        dropped_conns: 0,
        listeners: Vec::new(),
        listener_ids: HashMap::default(),
        acceptors: HashMap::default(),
    },
);

/// Smallest TLS application-data record that can hold a request (header 5 + tag 16 + 11 bytes).
const MIN_TLS_REQUEST: u64 = 32;

#[derive(Clone)]
struct Conn {
    ep: u32,
    /// The socket() call that made the fd (same thread, just before the connect): when, and
    /// its duration.
    born_ts: Option<i64>,
    born_ns: u64,
    /// The close() call's duration, once closed.
    close_ns: u64,
    /// Closed by a close() call (not by its process's end or the trace's).
    closed: bool,
    /// When the last read or write on it ended: the tear-down runs from there to the close's
    /// end (redis-py: shutdown, then close).
    last_io_end: Option<i64>,
    connect_ts: Option<i64>,
    connect_dur: Option<u64>,
    /// Time the connecting thread spent blocked in poll/select/epoll waits between the connect
    /// and the first write (the TCP handshake of a non-blocking connect), with -T.
    wait_ns: u64,
    /// The next call on the socket after the connect (getsockopt, write, ...), for -tt only.
    first_use_ts: Option<i64>,
    first_write_ts: Option<i64>,
    writes: u32,
    tls: bool,
    /// The first write was a PostgreSQL SSLRequest or StartupMessage: the start-up exchange
    /// (authentication, the server forking a backend) lasts until the first query.
    pg: bool,
    /// The server's first bytes were a MySQL/MariaDB initial handshake: the handshake response
    /// and authentication are set-up, lasting until the server's answer before the first
    /// command; commands (sequence id 0) are the requests, COM_QUIT is none.
    mysql: bool,
    /// The first read was only a MySQL packet header with sequence id 0 (a client that reads
    /// header and payload apart): the next read may be the greeting's payload.
    greet_hdr: bool,
    /// Reads that returned data.
    reads: u32,
    /// When the last read returned data (MySQL: the end of the set-up, once a command follows).
    last_read_end: Option<i64>,
    hello_ts: Option<i64>,
    handshake_ns: Option<u64>,
    /// When the client's second TLS flight went out (the handshake's end, as seen).
    hs_end_ts: Option<i64>,
    bursts: u32,
    /// Inside a write burst (no data read since the last write).
    in_burst: bool,
    burst_counted: bool,
    /// A counted request is outstanding: (its first write, the last read since).
    request: Option<(u64, u64)>,
    requests: u32,
    /// This connection's lines go to the evidence.
    shown: bool,
}

#[derive(Clone, Default)]
struct Endpoint {
    name: String,
    connections: u64,
    requests: u64,
    tls: u64,
    /// Connections recognised as MySQL/MariaDB (the server's greeting) and as PostgreSQL (the
    /// client's start-up message).
    mysql: u64,
    pg: u64,
    /// A unix socket path: reported only when most of its connections spoke a recognised
    /// protocol (an unrecognised local socket is often a helper asked per lookup, such as nscd).
    unix: bool,
    connect_ns: u64,
    connect_timed: u64,
    handshake_ns: u64,
    handshake_timed: u64,
    lifetime_ns: u64,
    lifetime_timed: u64,
    /// Over the connections whose setup and lifetime are both known: the two sums.
    setup_in_life_ns: u64,
    life_with_setup_ns: u64,
    open_now: u64,
    max_open: u64,
    procs: HashSet<Tgid>,
    intervals: Vec<(u64, u64)>,
    intervals_dropped: bool,
    /// Wall-clock setup periods (connect to the first use, or to the end of the TLS
    /// handshake), to bound the time lost when connections were set up in parallel.
    setups: Vec<(i64, i64)>,
    /// Connections whose periods are in `setups` (with eBPF, a set-up and a tear-down each).
    setup_conns: u64,
    /// The set-up calls' own time (socket, connect and its waits, a TLS or protocol
    /// handshake, close) of the first connections, for the median.
    setup_samples: Vec<u64>,
    /// The whole set-up as the program lived it, of the first connections: from the socket()
    /// call (else the connect) to the first request, plus from its last read or write to the end
    /// of its close. Used under eBPF, where the
    /// time between the calls is the program's own; under strace it is mostly the tracer's.
    span_samples: Vec<u64>,
    /// Connects whose duration the tracer measured (-T, eBPF), not guessed from the gap to
    /// the next call.
    connect_measured: u64,
    span: Span,
    evidence: EvidenceBuf,
    shown_conns: u32,
}

/// What a thread's socket calls leave for its next ones.
#[derive(Clone, Default)]
pub struct Thread {
    /// Its last socket() call (the fd, when, its duration), for the connect on it.
    socket: Option<(i32, Option<i64>, u64)>,
    /// Its new connection that has not written yet.
    awaiting: Option<(Tgid, i32)>,
}

/// An fd of a process with a connection on it: one it made, one it accepted (both, when the
/// trace did not show the first one's close).
#[derive(Clone, Default)]
pub struct Sock {
    conn: Option<Conn>,
    served: Option<Served>,
}

/// The connections are the host's objects (fds) of each process, the connecting threads its
/// threads; what the findings are about (endpoints, listeners) is kept here.
#[derive(Clone)]
pub struct ConnectionChurn {
    cfg: Config,
    seq: u64,
    /// Fds with a connection, and threads with one awaiting its first write, now: calls skip
    /// looking them up when there are none.
    open: u64,
    awaiting: u64,
    endpoints: Vec<Endpoint>,
    endpoint_ids: HashMap<String, u32>,
    dropped_conns: u64,
    /// The server side: the listeners the accepted connections arrived on.
    listeners: Vec<Listener>,
    /// Threads that accepted connections: how busy they were, and their sends on unix sockets
    /// (a connection handed to another process goes with a sendmsg).
    acceptors: HashMap<Tid, Acceptor>,
    listener_ids: HashMap<String, u32>,
}

/// A thread that accepts connections.
#[derive(Clone, Default)]
struct Acceptor {
    first: Option<i64>,
    last: Option<i64>,
    /// Time blocked in poll/select/epoll waits (idle).
    blocked_ns: u64,
    unix_sends: u64,
}

/// An accepted connection.
#[derive(Clone)]
struct Served {
    /// The thread that accepted it, and its unix-socket sends then.
    acceptor: Tid,
    sends_at_accept: u64,
    listener: u32,
    accept_ts: Option<i64>,
    /// The accept's and the close's durations.
    accept_ns: Option<u64>,
    close_ns: Option<u64>,
    requests: u32,
    /// Inside a request (data read since the server last wrote).
    reading: bool,
    /// The client closed its end first (a read returned 0), or asked to (MySQL's COM_QUIT).
    eof: bool,
    shown: bool,
    /// This server wrote, read (data).
    wrote: bool,
    read_any: bool,
    /// Its first write was a MySQL/MariaDB initial handshake (or, `greet_hdr`, only the
    /// header of one, sequence id 0): reads are packets, and only commands are requests.
    mysql: bool,
    greet_hdr: bool,
    /// A MySQL packet header read on its own (mariadbd reads the 4 bytes, then the payload):
    /// its sequence id and payload length, for the read of the payload.
    hdr: Option<(u8, u32)>,
    /// Bytes of the MySQL packet being read still to come (a payload read in pieces).
    left: u64,
    /// What the first request's bytes say about closing: the client asked for it
    /// (`Connection: close`, HTTP/1.0 without keep-alive), did not (the whole header was seen
    /// without either), or the bytes the trace kept end before the header does.
    asked: Asked,
}

/// Whether a client asked the server to close its connection, from its first request's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Asked {
    /// Not an HTTP request, or not read yet.
    NotHttp,
    Close,
    KeepAlive,
    /// An HTTP request whose header goes on past the bytes the trace kept.
    Unseen,
}

/// What an HTTP request's first bytes say about closing.
fn http_asks_close(head: &[u8], bytes: u64) -> Asked {
    const METHODS: &[&[u8]] =
        &[b"GET ", b"POST ", b"HEAD ", b"PUT ", b"DELETE ", b"OPTIONS ", b"PATCH ", b"CONNECT ", b"TRACE "];
    if !METHODS.iter().any(|m| head.starts_with(m)) {
        return Asked::NotHttp;
    }
    // case-insensitive, without a lowered copy: once per connection, on its first request
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle));
    let line_end = head.windows(2).position(|w| w == b"\r\n");
    let http10 = line_end.is_some_and(|e| head[..e].len() >= 8 && head[e - 8..e].eq_ignore_ascii_case(b"http/1.0"));
    if has(b"\r\nconnection: close") || has(b"\r\nconnection:close") {
        return Asked::Close;
    }
    if has(b"\r\nconnection: keep-alive") || has(b"\r\nconnection:keep-alive") {
        return Asked::KeepAlive;
    }
    // the header's end seen (or the whole read kept): no Connection header
    let whole = has(b"\r\n\r\n") || (head.len() as u64) >= bytes;
    match (whole, http10) {
        (true, true) => Asked::Close,
        (true, false) => Asked::KeepAlive,
        (false, _) => Asked::Unseen,
    }
}

/// The connections accepted on one listening address.
#[derive(Clone, Default)]
struct Listener {
    name: String,
    connections: u64,
    requests: u64,
    /// Connections the clients closed first (the server read end-of-file), and the ones the
    /// server closed without that.
    client_closed: u64,
    server_closed: u64,
    /// Connections whose first bytes were a MySQL/MariaDB server greeting.
    mysql: u64,
    /// A unix socket: a connection costs an accept and a close, no handshake's round trip.
    unix: bool,
    /// Connections closed by the accepting process without reading or writing them, after it
    /// sent something on a unix socket: handed to another process (SCM_RIGHTS).
    handed: u64,
    acceptor_tids: Vec<Tid>,
    /// Of the server-closed ones: the client had asked (`Connection: close`, HTTP/1.0, MQTT
    /// DISCONNECT), and those whose request header the trace did not keep whole.
    client_asked: u64,
    ask_unseen: u64,
    /// Bytes of the request the trace kept (the most seen), for the message.
    kept_bytes: usize,
    lifetime_ns: u64,
    lifetime_timed: u64,
    /// The server's own calls for a connection, accept and close, of the first connections
    /// closed by a close(): added to a client's price when both ends are traced.
    side_samples: Vec<u64>,
    procs: HashSet<Tgid>,
    span: Span,
    evidence: EvidenceBuf,
    shown_conns: u32,
}

/// An fd's object number.
fn fd_id(fd: i32) -> u64 {
    u64::from(fd as u32)
}

/// The host's objects and threads.
impl ConnectionChurn {
    /// The object of `fd`, made when absent; `false` when the host follows as many as it may.
    fn sock(&mut self, s: &mut State<'_, Self>, fd: i32) -> bool {
        if s.existing_object(fd_id(fd)).is_some() {
            return true;
        }
        let made = s.object_or(fd_id(fd), Sock::default).is_some();
        self.open += u64::from(made);
        made
    }

    /// The object of `fd` holds no connection any more (or never did): it ends.
    fn release(&mut self, s: &mut State<'_, Self>, fd: i32) {
        if s.existing_object(fd_id(fd)).is_some_and(|o| o.conn.is_none() && o.served.is_none()) {
            s.end_object(fd_id(fd), self);
        }
    }

    /// The object of `fd`, when any connection is followed at all (no lookup while none is).
    fn object<'s>(&self, s: &'s mut State<'_, Self>, fd: i32) -> Option<&'s mut Sock> {
        if self.open == 0 {
            return None;
        }
        s.existing_object(fd_id(fd))
    }

    /// The connection made on `fd`.
    fn conn_mut<'s>(&self, s: &'s mut State<'_, Self>, fd: i32) -> Option<&'s mut Conn> {
        self.object(s, fd)?.conn.as_mut()
    }

    /// Take the connection made on `fd` out (it is over, or was none).
    fn take_conn(&mut self, s: &mut State<'_, Self>, fd: i32) -> Option<Conn> {
        self.take(s, fd, |o| o.conn.take())
    }

    /// The connection accepted on `fd`.
    fn served_mut<'s>(&self, s: &'s mut State<'_, Self>, fd: i32) -> Option<&'s mut Served> {
        self.object(s, fd)?.served.as_mut()
    }

    /// Take the connection accepted on `fd` out.
    fn take_served(&mut self, s: &mut State<'_, Self>, fd: i32) -> Option<Served> {
        self.take(s, fd, |o| o.served.take())
    }

    /// Take one side of `fd`'s object out (`part`), releasing the object when there was one.
    fn take<T>(&mut self, s: &mut State<'_, Self>, fd: i32, part: impl FnOnce(&mut Sock) -> Option<T>) -> Option<T> {
        let c = part(self.object(s, fd)?)?;
        self.release(s, fd);
        Some(c)
    }

    /// The connection the thread made and has not written to yet.
    fn awaited(&self, s: &mut State<'_, Self>) -> Option<(Tgid, i32)> {
        if self.awaiting == 0 {
            return None;
        }
        s.existing().and_then(|t| t.awaiting)
    }

    /// The thread awaits the first write of `key` no more.
    fn stop_awaiting(&mut self, s: &mut State<'_, Self>, key: (Tgid, i32)) {
        if self.awaiting == 0 {
            return;
        }
        if let Some(t) = s.existing().filter(|t| t.awaiting == Some(key)) {
            t.awaiting = None;
            self.awaiting -= 1;
        }
    }
}

/// The id of `name` among `items` (made by `make` when first seen); `None` once
/// [`MAX_ENDPOINTS`] are kept.
fn intern<T>(items: &mut Vec<T>, ids: &mut HashMap<String, u32>, name: String, make: impl FnOnce(String) -> T) -> Option<u32> {
    if let Some(&id) = ids.get(&name) {
        return Some(id);
    }
    if items.len() >= MAX_ENDPOINTS {
        return None;
    }
    let id = items.len() as u32;
    items.push(make(name.clone()));
    ids.insert(name, id);
    Some(id)
}

impl ConnectionChurn {
    fn endpoint(&mut self, name: String) -> Option<u32> {
        intern(&mut self.endpoints, &mut self.endpoint_ids, name, |name| Endpoint {
            name,
            evidence: EvidenceBuf::new(EVIDENCE),
            ..Default::default()
        })
    }

    fn on_connect(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let ok = match &sc.ret {
            Ret::Ok { .. } => true,
            Ret::Err { errno, .. } => *errno == "EINPROGRESS",
            _ => false,
        };
        let Some(fd) = sc.fd() else { return };
        let tgid = cx.tgid;
        // a connect on an fd we track: the old connection is over
        if let Some(old) = self.take_conn(s, fd.num) {
            self.finish_conn(old, ev.ts_ns);
        }
        if !ok {
            return;
        }
        let (addr, unix) = match sc.sockaddr() {
            Some(SockAddr::Inet { port: 53 | 0, .. }) => return, // DNS over TCP is repeated-dns's; port 0 is no endpoint
            Some(a @ SockAddr::Inet { .. }) => (a, false),
            // a local socket by its path (MySQL's, PostgreSQL's): reported only when its
            // connections speak a protocol recognised here (see finish)
            Some(SockAddr::Unix { path }) if !path.is_empty() => (SockAddr::Unix { path }, true),
            _ => return,
        };
        let stream = cx.model.lookup_fd(ev.tid, fd.num).is_some_and(|t| {
            if unix {
                t.kind == TargetKind::Unix
            } else {
                t.kind.is_tcp()
            }
        });
        if !stream {
            return;
        }
        if !self.sock(s, fd.num) {
            self.dropped_conns += 1;
            return;
        }
        let Some(ep) = self.endpoint(addr.to_string()) else {
            self.dropped_conns += 1;
            self.release(s, fd.num);
            return;
        };
        let e = &mut self.endpoints[ep as usize];
        e.unix = unix;
        e.connections += 1;
        e.open_now += 1;
        e.max_open = e.max_open.max(e.open_now);
        if e.procs.len() < MAX_PROCS {
            e.procs.insert(tgid);
        }
        e.span.add(ev.ts_ns);
        // the first two connections in full, then only connects (the last one is kept)
        let shown = e.shown_conns < 2;
        if shown {
            e.shown_conns += 1;
            e.evidence.push(ev);
        } else if e.evidence.first.len() >= e.evidence.cap {
            e.evidence.push(ev);
        }
        let born = match s.thread() {
            Some(t) => {
                self.awaiting += u64::from(t.awaiting.is_none());
                t.awaiting = Some((tgid, fd.num));
                t.socket.take().filter(|b| b.0 == fd.num)
            }
            None => None,
        };
        let Some(o) = s.existing_object(fd_id(fd.num)) else { return };
        o.conn = Some(Conn {
            ep,
            born_ts: born.and_then(|b| b.1),
            born_ns: born.map_or(0, |b| b.2),
            close_ns: 0,
            closed: false,
            last_io_end: None,
            connect_ts: ev.ts_ns,
            connect_dur: sc.dur_ns,
            wait_ns: 0,
            first_use_ts: None,
            first_write_ts: None,
            writes: 0,
            tls: false,
            pg: false,
            mysql: false,
            greet_hdr: false,
            reads: 0,
            last_read_end: None,
            hello_ts: None,
            handshake_ns: None,
            hs_end_ts: None,
            bursts: 0,
            in_burst: false,
            burst_counted: false,
            request: None,
            requests: 0,
            shown,
        });
    }

    fn finish_conn(&mut self, c: Conn, at: Option<i64>) {
        let Some(e) = self.endpoints.get_mut(c.ep as usize) else { return };
        e.open_now = e.open_now.saturating_sub(1);
        e.requests += c.requests as u64;
        if let Some(iv) = c.request {
            push_interval(e, iv);
        }
        if c.tls {
            e.tls += 1;
        }
        if c.mysql {
            e.mysql += 1;
        }
        if c.pg {
            e.pg += 1;
        }
        // with -T: the connect call and the waits for it; with only -tt: up to the next call
        // on the socket (a blocking connect returns connected; a non-blocking one is checked
        // with getsockopt or written to once the wait said it is up)
        if c.connect_dur.is_some() {
            e.connect_measured += 1;
        }
        let connect = match (c.connect_dur, c.connect_ts, c.first_use_ts) {
            (Some(d), _, _) => Some(d + c.wait_ns),
            (None, Some(a), Some(b)) if b >= a => Some((b - a) as u64),
            _ => None,
        };
        if let Some(ns) = connect {
            e.connect_ns += ns;
            e.connect_timed += 1;
        }
        if let Some(ns) = c.handshake_ns {
            e.handshake_ns += ns;
            e.handshake_timed += 1;
        }
        if (connect.is_some() || c.handshake_ns.is_some()) && e.setup_samples.len() < MAX_SAMPLES {
            e.setup_samples.push(c.born_ns + connect.unwrap_or(0) + c.handshake_ns.unwrap_or(0) + c.close_ns);
        }
        let setup_end = [c.first_use_ts, c.first_write_ts, c.hs_end_ts].into_iter().flatten().max();
        let born = c.born_ts.or(c.connect_ts);
        if let (Some(a), Some(b)) = (born, setup_end) {
            if b >= a {
                if e.setups.len() < MAX_INTERVALS {
                    e.setups.push((a, b + c.close_ns as i64));
                    e.setup_conns += 1;
                }
                // a connection that made a request: its set-up ended with the request's
                // first write (or the handshake's end); its tear-down ran from the end of its
                // last read or write to the end of its close
                if c.first_write_ts.is_some() {
                    let teardown = match (c.closed, c.last_io_end, at) {
                        (true, Some(l), Some(z)) if z >= l => {
                            if e.setups.len() < MAX_INTERVALS {
                                e.setups.push((l, z));
                            }
                            (z - l) as u64
                        }
                        _ => c.close_ns,
                    };
                    if e.span_samples.len() < MAX_SAMPLES {
                        e.span_samples.push((b - a) as u64 + teardown);
                    }
                }
            }
        }
        if let (Some(a), Some(b)) = (c.connect_ts, at) {
            if b >= a {
                e.lifetime_ns += (b - a) as u64;
                e.lifetime_timed += 1;
                if let Some(setup) = connect.map(|n| n + c.handshake_ns.unwrap_or(0)) {
                    e.setup_in_life_ns += setup.min((b - a) as u64);
                    e.life_with_setup_ns += (b - a) as u64;
                }
            }
        }
        e.span.add(at);
    }

    fn on_data(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall, key: (Tgid, i32)) {
        let seq = self.seq;
        let Some(c) = self.conn_mut(s, key.1) else { return };
        // the thread waits no more for this connection to be set up (after `c`'s last use)
        let mut set_up = false;
        if let Some(t) = ev.ts_ns {
            c.last_io_end = Some(t + sc.dur_ns.unwrap_or(0) as i64);
        }
        let bytes = sc.bytes().unwrap_or(0);
        if sc.sys.is(Class::READ) {
            if bytes > 0 {
                c.in_burst = false;
                if let Some(r) = c.request.as_mut() {
                    r.1 = seq;
                }
                // the server spoke first: a MySQL/MariaDB greeting (whole, or its payload after
                // a read of its header alone) starts the set-up, timed from this read
                if c.writes == 0 && !c.mysql && (c.reads == 0 || c.greet_hdr) {
                    let mut head = [0u8; 64];
                    let n = sc.payload_prefix(&mut head);
                    let head = &head[..n];
                    if mysql_greeting(head, c.greet_hdr) {
                        c.mysql = true;
                        if !c.greet_hdr {
                            c.hello_ts = ev.ts_ns;
                        }
                        // waits from here on are the set-up's, timed by it: not the connect's
                        set_up = true;
                    } else if c.reads == 0 && is_greeting_header(head, bytes) {
                        c.greet_hdr = true;
                        c.hello_ts = ev.ts_ns;
                    } else {
                        c.greet_hdr = false;
                        c.hello_ts = None;
                    }
                }
                c.reads += 1;
                if let Some(t) = ev.ts_ns {
                    c.last_read_end = Some(t + sc.dur_ns.unwrap_or(0) as i64);
                }
            }
            if set_up {
                self.stop_awaiting(s, key);
            }
            return;
        }
        if bytes == 0 {
            return;
        }
        let mut head = [0u8; 8];
        let n = sc.payload_prefix(&mut head);
        let first = c.writes == 0;
        c.writes += 1;
        if first {
            c.first_write_ts = ev.ts_ns;
            set_up = true;
        }
        if first && !c.mysql {
            // TLS record: handshake (22), version 3.x, and when visible, ClientHello (1)
            if n >= 2 && head[0] == 0x16 && head[1] == 0x03 && (n < 6 || head[5] == 0x01) {
                c.tls = true;
                c.hello_ts = ev.ts_ns;
            }
            // PostgreSQL: SSLRequest (code 80877103) or StartupMessage (protocol 3.0), after the
            // message length
            if n >= 8 && (head[4..8] == [0x04, 0xd2, 0x16, 0x2f] || head[4..8] == [0, 3, 0, 0]) {
                c.pg = true;
                c.hello_ts = ev.ts_ns;
            }
        } else if (c.pg || c.mysql) && !c.tls && n >= 6 && head[0] == 0x16 && head[1] == 0x03 && head[5] == 0x01 {
            // the server said 'S' to the SSLRequest (MySQL: the client sent an SSLRequest
            // packet): TLS from here on, its rules for requests
            c.tls = true;
        }
        if !c.in_burst {
            c.in_burst = true;
            c.burst_counted = false;
            c.bursts += 1;
            if c.tls && c.bursts == 2 {
                // the client's second flight: the server's handshake answer arrived
                if let (Some(h), Some(t)) = (c.hello_ts, ev.ts_ns) {
                    c.handshake_ns = Some(t.saturating_sub(h).max(0) as u64);
                    c.hs_end_ts = Some(t);
                }
            }
        }
        let is_request = if c.tls {
            n >= 2 && head[0] == 0x17 && head[1] == 0x03 && bytes >= MIN_TLS_REQUEST
        } else if c.pg {
            // a query (simple 'Q', or the extended protocol's Parse 'P' / Bind 'B'); not the
            // start-up, password ('p') or Terminate ('X') messages
            n >= 1 && matches!(head[0], b'Q' | b'P' | b'B')
        } else if c.mysql {
            // a command starts a new exchange (sequence id 0): COM_QUERY and the others, not
            // COM_QUIT; the handshake response and authentication packets continue the
            // greeting's exchange (sequence ids 1, 3, ...). A header written alone: a command
            n >= 4 && head[3] == 0 && (n < 5 || head[4] != MYSQL_COM_QUIT)
        } else {
            true
        };
        if is_request && c.mysql && !c.tls && c.handshake_ns.is_none() {
            // the set-up ended with the server's answer (OK) that the first command follows:
            // the client's own work between the two is not the connection's
            if let (Some(h), Some(t)) = (c.hello_ts, c.last_read_end.or(ev.ts_ns)) {
                c.handshake_ns = Some(t.saturating_sub(h).max(0) as u64);
                c.hs_end_ts = Some(t);
            }
        }
        if is_request && c.pg && !c.tls && c.handshake_ns.is_none() {
            // the start-up exchange ends with the first query
            if let (Some(h), Some(t)) = (c.hello_ts, ev.ts_ns) {
                c.handshake_ns = Some(t.saturating_sub(h).max(0) as u64);
                c.hs_end_ts = Some(t);
            }
        }
        if is_request && !c.burst_counted {
            c.burst_counted = true;
            c.requests += 1;
            let prev = c.request.replace((seq, seq));
            if let Some(iv) = prev {
                if let Some(e) = self.endpoints.get_mut(c.ep as usize) {
                    push_interval(e, iv);
                }
            }
        }
        if c.shown && c.writes == 1 {
            if let Some(e) = self.endpoints.get_mut(c.ep as usize) {
                e.evidence.push(ev);
            }
        }
        if set_up {
            self.stop_awaiting(s, key);
        }
    }
}

/// The server side: connections accepted on a listener, each carrying few requests.
impl ConnectionChurn {
    fn on_accept(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Ret::Ok { val, .. } = sc.ret else { return };
        let Ok(fd) = i32::try_from(val) else { return };
        if let Some(old) = self.take_served(s, fd) {
            self.finish_served(old, ev.ts_ns);
        }
        // where the connection arrived, as the model names it (the accepted socket's local
        // end, else the listener's address)
        let Some(t) = cx.model.lookup_fd(ev.tid, fd) else { return };
        if !t.kind.is_connection_socket() || t.kind.is_udp() {
            return;
        }
        let name = match t.endpoint {
            Some(e) => e.endpoint.clone(),
            None => t.display.trim_end_matches(" (accepted)").to_string(),
        };
        // a unix listener known only from the attach (eBPF: its path read from /proc, not in the
        // accept's arguments): its path, as strace -yy names it
        let name = match sc.fd_num().and_then(|l| cx.model.lookup_fd(ev.tid, l)) {
            Some(l) if name.starts_with('(') && l.kind == TargetKind::Unix && l.display.starts_with(['/', '@']) => {
                l.display.to_string()
            }
            _ => name,
        };
        // attached after the listen, without -yy: no address, so the listening fd and its program
        let name = if name.starts_with('(') {
            match (sc.fd_num(), cx.model.comm(ev.tid)) {
                (Some(l), Some(comm)) => format!("listening fd {l} of {comm}"),
                (Some(l), None) => format!("listening fd {l} of pid {}", cx.tgid),
                _ => name,
            }
        } else {
            name
        };
        if !self.sock(s, fd) {
            self.dropped_conns += 1;
            return;
        }
        let listener = |name| Listener { name, evidence: EvidenceBuf::new(EVIDENCE), ..Default::default() };
        let Some(id) = intern(&mut self.listeners, &mut self.listener_ids, name, listener) else {
            self.dropped_conns += 1;
            self.release(s, fd);
            return;
        };
        let l = &mut self.listeners[id as usize];
        l.unix = t.kind == TargetKind::Unix;
        l.connections += 1;
        if l.procs.len() < MAX_PROCS {
            l.procs.insert(cx.tgid);
        }
        l.span.add(ev.ts_ns);
        let shown = l.shown_conns < 2;
        if shown {
            l.shown_conns += 1;
            l.evidence.push(ev);
        }
        let at = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
        if !l.acceptor_tids.contains(&ev.tid) && l.acceptor_tids.len() < 64 {
            l.acceptor_tids.push(ev.tid);
        }
        let sends_at_accept = if self.acceptors.len() < MAX_PROCS || self.acceptors.contains_key(&ev.tid) {
            let a = self.acceptors.entry(ev.tid).or_default();
            a.first = a.first.or(ev.ts_ns);
            a.unix_sends
        } else {
            0
        };
        let Some(o) = s.existing_object(fd_id(fd)) else { return };
        o.served = Some(Served {
            acceptor: ev.tid,
            sends_at_accept,
            listener: id,
            accept_ts: at,
            accept_ns: sc.dur_ns,
            close_ns: None,
            requests: 0,
            reading: false,
            eof: false,
            shown,
            wrote: false,
            read_any: false,
            mysql: false,
            greet_hdr: false,
            hdr: None,
            left: 0,
            asked: Asked::NotHttp,
        });
    }

    /// Data on an accepted connection: a read after the server's last write starts a request
    /// (MySQL: a read of a command after the server's last write).
    fn on_served_data(&mut self, s: &mut State<'_, Self>, ev: &Event, sc: &Syscall, fd: i32) {
        let Some(c) = self.served_mut(s, fd) else { return };
        let Some(bytes) = sc.bytes() else { return };
        let mut show = false;
        if sc.sys.is(Class::READ) {
            let mut request = bytes > 0;
            if bytes > 0 && c.mysql {
                let mut head = [0u8; 8];
                let n = sc.payload_prefix(&mut head);
                request = match served_mysql_packet(c, &head[..n], bytes) {
                    MysqlRead::Command => true,
                    MysqlRead::Quit => {
                        // the client asked to close: the server's close that follows is its answer
                        c.eof = true;
                        false
                    }
                    MysqlRead::Other => false,
                    MysqlRead::Unknown => true,
                };
            }
            if bytes > 0 && !c.mysql && !c.read_any {
                // the first request: did the client ask to close (HTTP)? Its header, as far as
                // the trace kept it (only here: later reads need two bytes at most)
                let mut head = [0u8; 512];
                let n = sc.payload_prefix(&mut head);
                c.asked = http_asks_close(&head[..n], bytes);
                if c.asked != Asked::NotHttp {
                    if let Some(l) = self.listeners.get_mut(c.listener as usize) {
                        l.kept_bytes = l.kept_bytes.max(n);
                    }
                }
            } else if bytes > 0 && !c.mysql && bytes <= 2 + 0x7f {
                // an MQTT DISCONNECT (type 14, no flags, a short length): the client said it is
                // leaving; the server's close answers it
                let mut head = [0u8; 2];
                if sc.payload_prefix(&mut head) == 2 && head[0] == 0xE0 && bytes == 2 + u64::from(head[1]) {
                    c.eof = true;
                    request = false;
                }
            }
            if bytes > 0 {
                c.read_any = true;
            }
            if bytes == 0 {
                c.eof = true;
                show = c.shown;
            } else if request && !c.reading {
                c.reading = true;
                c.requests += 1;
                show = c.shown && c.requests == 1;
            }
        } else if bytes > 0 {
            // the server spoke first: a MySQL/MariaDB greeting (or its header alone, then its
            // payload) makes the connection's reads packets
            if !c.read_any && (!c.wrote || c.greet_hdr) && !c.mysql {
                let mut head = [0u8; 64];
                let n = sc.payload_prefix(&mut head);
                let head = &head[..n];
                if mysql_greeting(head, c.greet_hdr) {
                    c.mysql = true;
                } else {
                    c.greet_hdr = !c.wrote && is_greeting_header(head, bytes);
                }
            }
            c.wrote = true;
            c.reading = false;
        }
        if show {
            if let Some(l) = self.listeners.get_mut(c.listener as usize) {
                l.evidence.push(ev);
            }
        }
    }

    fn finish_served(&mut self, c: Served, at: Option<i64>) {
        let handed = !c.read_any
            && !c.wrote
            && self.acceptors.get(&c.acceptor).is_some_and(|a| a.unix_sends > c.sends_at_accept);
        let Some(l) = self.listeners.get_mut(c.listener as usize) else { return };
        if handed {
            l.handed += 1;
        }
        l.requests += u64::from(c.requests);
        if c.mysql {
            l.mysql += 1;
        }
        if c.eof {
            l.client_closed += 1;
        } else {
            l.server_closed += 1;
            match c.asked {
                Asked::Close => l.client_asked += 1,
                Asked::Unseen => l.ask_unseen += 1,
                Asked::NotHttp | Asked::KeepAlive => {}
            }
        }
        if let (Some(a), Some(b)) = (c.accept_ts, at) {
            if b >= a {
                l.lifetime_ns += (b - a) as u64;
                l.lifetime_timed += 1;
            }
        }
        if let (Some(a), Some(z), false) = (c.accept_ns, c.close_ns, handed) {
            if l.side_samples.len() < MAX_SAMPLES {
                l.side_samples.push(a + z);
            }
        }
        l.span.add(at);
    }

    /// Listeners whose connections carried few requests each: info (the round trips are paid
    /// by the clients, whom the trace may not show), with who closed first.
    fn served_findings(&mut self, cx: &FinishCtx, out: &mut Vec<Finding>) {
        for l in &self.listeners {
            if l.connections < self.cfg.min_connections {
                continue;
            }
            if l.connections >= self.cfg.min_connections && l.handed * 2 > l.connections {
                out.push(self.handover_finding(cx, l));
                continue;
            }
            // a unix socket's connection costs an accept and a close, microseconds: a connection
            // per request there is a design (nginx to PHP-FPM: a kept FastCGI connection pins a
            // child of a static pool), unless its clients speak a database protocol, whose
            // set-up (authentication, a backend's start) is the cost
            if l.unix && l.mysql * 2 <= l.connections {
                continue;
            }
            let rpc = l.requests as f64 / l.connections as f64;
            // no request seen at all: the traffic is out of sight (other threads of a process
            // the trace does not know as one, or calls filtered out), nothing to judge
            if l.requests == 0 || rpc > self.cfg.max_requests_per_connection {
                continue;
            }
            // who wanted them closed: the clients when they closed first or asked to
            // (Connection: close, HTTP/1.0, MQTT DISCONNECT); this server when it closed
            // unasked; unknown when the request bytes the trace kept end before the header does
            let closed = l.client_closed + l.server_closed;
            let by_clients = l.client_closed + l.client_asked;
            let unasked = l.server_closed - l.client_asked - l.ask_unseen;
            let closer = if closed == 0 || by_clients * 2 > closed {
                Closer::Clients
            } else if unasked * 2 > closed || unasked >= l.ask_unseen {
                Closer::Server
            } else {
                Closer::Unknown
            };
            let who = match closer {
                Closer::Clients if l.client_asked > l.client_closed => "the clients asked for each to be closed after its answer (Connection: close or HTTP/1.0 in their requests), and this server did".to_string(),
                Closer::Clients => "the clients closed most of them after their request (they do not reuse connections)".to_string(),
                Closer::Server => "this server closed most of them itself after answering (keep-alive off or refused here)".to_string(),
                Closer::Unknown => format!(
                    "this server closed most of them after answering; whether the clients asked it to (Connection: close, HTTP/1.0) lies past the {} request bytes the trace kept",
                    l.kept_bytes
                ),
            };
            let mut metrics = Metrics::new();
            metrics.count("connections", l.connections);
            metrics.count("requests", l.requests);
            metrics.value("requests_per_connection", rpc);
            metrics.count("server_closed", l.server_closed);
            metrics.count("client_closed", l.client_closed);
            if l.client_asked > 0 {
                metrics.count("client_asked", l.client_asked);
            }
            if l.ask_unseen > 0 {
                metrics.count("ask_unseen", l.ask_unseen);
            }
            if l.mysql > 0 {
                metrics.count("mysql_handshakes", l.mysql);
            }
            metrics.count("processes", l.procs.len());
            if l.lifetime_timed > 0 {
                metrics.value("avg_lifetime_s", l.lifetime_ns as f64 / 1e9 / l.lifetime_timed as f64);
            }
            let advice = match closer {
                Closer::Server => Some("connection-churn/server-closes"),
                Closer::Clients => Some("connection-churn/clients-close"),
                Closer::Unknown => None,
            };
            let fix = match closer {
                Closer::Server => SERVER_FIX_SERVER_CLOSES.to_string(),
                Closer::Clients => SERVER_FIX_CLIENTS_CLOSE.to_string(),
                Closer::Unknown => {
                    let lower = |t: &str| {
                        let mut c = t.chars();
                        c.next().map(|f| f.to_lowercase().collect::<String>() + c.as_str()).unwrap_or_default()
                    };
                    format!(
                        "If the clients ask for the close (a `Connection: close` header or HTTP/1.0; record with more request bytes to see it), {} If they do not, {}",
                        lower(SERVER_FIX_CLIENTS_CLOSE),
                        lower(SERVER_FIX_SERVER_CLOSES)
                    )
                }
            };
            let subject = format!("{} (accepted)", l.name);
            let message = format!(
                "{} short connections accepted on {}, {:.1} requests each{}: {who}",
                l.connections,
                l.name,
                rpc,
                if l.mysql > 0 {
                    format!(" ({} mysql handshakes: greeting, authentication and COM_QUIT are no requests)", l.mysql)
                } else {
                    String::new()
                }
            );
            let cost = format!(
                "{} of {} connections could be saved by reuse; each costs {}; {}",
                l.connections.saturating_sub(1),
                l.connections,
                if l.mysql > 0 {
                    "its client the connect and the round trips of MySQL's greeting and authentication, and this server an accept, a greeting, an authentication and a close"
                } else {
                    "its client a TCP handshake (a TLS one too where used) and this server an accept, a close and the socket's set-up"
                },
                if self.endpoint_ids.contains_key(&l.name) {
                    "the clients are in this trace too: their finding prices both ends"
                } else {
                    "the clients' time is not in this trace"
                }
            );
            // the serving program (its advice, by who closed)
            let about = Subject::new(SubjectKind::Endpoint).program(program_of(&l.procs, cx.model)).name(subject.as_str());
            out.push(
                META.finding(syslint_report::Severity::Info, message)
                    .about(subject, about)
                    .over(&l.span)
                    .metrics(metrics)
                    .evidence(&l.evidence, cx.clock)
                    .cost(cost)
                    .fix(fix)
                    .advice(advice)
                    .build(),
            );
        }
    }
}

impl ConnectionChurn {
    /// Connections accepted here and handed to other processes (a Node cluster's primary in
    /// round-robin mode): the accepting threads' busy time is the hand-over's cost.
    fn handover_finding(&self, cx: &FinishCtx, l: &Listener) -> Finding {
        let mut busy_ns = 0u64;
        let mut timed = false;
        for t in &l.acceptor_tids {
            if let Some(Acceptor { first: Some(a), last: Some(b), blocked_ns, .. }) = self.acceptors.get(t) {
                if b > a {
                    busy_ns += ((b - a) as u64).saturating_sub(*blocked_ns);
                    timed = true;
                }
            }
        }
        let busy = busy_ns as f64 / 1e9;
        let mut metrics = Metrics::new();
        metrics.count("connections", l.connections);
        metrics.count("handed_over", l.handed);
        metrics.count("processes", l.procs.len());
        if timed {
            metrics.value("wasted_s", busy);
            metrics.value("handover_us", busy * 1e6 / l.handed.max(1) as f64);
        }
        let subject = format!("{} (accepted, handed over)", l.name);
        let program = program_of(&l.procs, cx.model);
        let message = format!(
            "{} of {} connections accepted on {} were passed to another process over a unix socket (sendmsg) without being read or written here: a hand-over per connection",
            l.handed, l.connections, l.name
        );
        let cost = if timed {
            format!(
                "{} busy in the accepting threads ({:.0} us per connection: accept, pass, acknowledgements, close; the receiving worker's own share of the hand-over comes on top), {}",
                fmt_s(busy),
                busy * 1e6 / l.handed.max(1) as f64,
                cx.tracer.measured()
            )
        } else {
            format!("{} hand-overs; their time is unknown (no durations)", l.handed)
        };
        let severity = syslint_report::Severity::warning_if(timed);
        let about = Subject::new(SubjectKind::Endpoint).program(program).name(subject.as_str());
        META.finding(severity, message)
            .about(subject, about)
            .over(&l.span)
            .metrics(metrics)
            .evidence(&l.evidence, cx.clock)
            .cost(cost)
            .fix(HANDOVER_FIX)
            .advice("connection-churn/handover")
            .build()
    }
}

/// The program of a set of processes, for its advice: the lowest pid's (a fixed choice).
fn program_of<'m>(procs: &HashSet<Tgid>, model: &'m crate::model::Model) -> Option<&'m str> {
    procs.iter().min().and_then(|t| model.comm(t.main_thread()))
}

/// The fix for connections handed between processes.
const HANDOVER_FIX: &str = "let the processes that serve the connections accept them themselves: each worker accepting on the shared listening socket, or a listener per worker with SO_REUSEPORT (the kernel spreads the connections); keep-alive clients make the hand-over once per connection rather than once per request";

/// Who wanted a listener's connections closed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closer {
    Clients,
    Server,
    Unknown,
}

/// The fix when the server closes after each answer.
const SERVER_FIX_SERVER_CLOSES: &str = "Let connections stay open for further requests: nginx `keepalive_timeout 65;` (0 turns keep-alive off) and `keepalive_requests`; for an nginx upstream (php-fpm, a backend) `keepalive N;` in the upstream block with `proxy_http_version 1.1;` and `proxy_set_header Connection \"\";` (FastCGI: `fastcgi_keep_conn on;`); Apache `KeepAlive On`; gunicorn sync workers close every connection by design: behind a proxy that is expected, facing clients use the gthread or an async worker class with `--keep-alive`; uWSGI `--http-keepalive`; Node http.Server `keepAliveTimeout`; Go net/http keeps connections unless `SetKeepAlivesEnabled(false)`. Answers must carry Content-Length (or chunked encoding) for a connection to stay open.";

/// The fix when the clients close after one request.
const SERVER_FIX_CLIENTS_CLOSE: &str = "The clients open a new connection per request: make them reuse connections (an HTTP client session or connection pool: Python requests.Session, libcurl one easy handle or a share handle, Go one http.Client with its default Transport, Java one HttpClient, Node an http.Agent with keepAlive: true; database drivers: a connection pool such as pgbouncer, or pool settings of the driver; pgbench: without -C; MySQL/MariaDB: the driver's pool or ProxySQL, and the `mysql`/`mariadb` command line client once for all the statements, not once per statement). A proxy in front (nginx upstream `keepalive N;`) can hold connections to this server when the clients cannot be changed.";

impl ConnectionChurn {
    /// getsockopt(SO_ERROR) on a connection still being made: an error there means the
    /// non-blocking connect failed (refused, timed out): no connection was made, and it is not
    /// counted (retry-storm's business).
    fn on_so_error(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        if self.open == 0 || !matches!(sc.ret, Ret::Ok { .. }) {
            return;
        }
        let (Some(fd), Some(o)) = (sc.fd_num(), sc.sockopt()) else { return };
        if o.level != Some(SockOpt::SOL_SOCKET) || o.name != Some(SockOpt::SO_ERROR) {
            return;
        }
        let key = (cx.tgid, fd);
        if matches!(o.value, None | Some(0)) {
            self.first_use(s, ev, key);
            return;
        }
        if self.conn_mut(s, fd).is_none_or(|c| c.writes > 0) {
            return;
        }
        let Some(ep) = self.take_conn(s, fd).map(|c| c.ep) else { return };
        self.stop_awaiting(s, key);
        if let Some(e) = self.endpoints.get_mut(ep as usize) {
            e.connections = e.connections.saturating_sub(1);
            e.open_now = e.open_now.saturating_sub(1);
        }
    }

    /// A call on `key` by the thread that made it and has not written to it yet: the first
    /// use, which ends the connect's time when it was not measured.
    fn first_use(&mut self, s: &mut State<'_, Self>, ev: &Event, key: (Tgid, i32)) {
        if self.awaited(s) != Some(key) || key.0 != s.tgid() {
            return;
        }
        if let Some(c) = self.conn_mut(s, key.1) {
            if c.first_use_ts.is_none() {
                c.first_use_ts = ev.ts_ns;
            }
        }
    }
}

/// MySQL's COM_QUIT: the client says it is closing the connection.
const MYSQL_COM_QUIT: u8 = 0x01;
/// Payload lengths of a MySQL initial handshake packet (protocol 10: the version byte, a server
/// version, connection id, scramble, capabilities, character set, status; 80-110 bytes from
/// MySQL 8 and MariaDB 10/11).
const MYSQL_GREETING: std::ops::RangeInclusive<u32> = 20..=1024;

/// A MySQL packet's payload length, from its 3-byte little-endian header.
fn mysql_len(p: &[u8]) -> u32 {
    u32::from_le_bytes([p[0], p[1], p[2], 0])
}

/// A MySQL/MariaDB initial handshake packet, the server's first bytes on a connection: a
/// 3-byte length, sequence id 0, protocol version 10, then a NUL-terminated server version
/// ("8.0.36", "5.5.5-10.11.6-MariaDB-0+deb12u1"). `p` starts at the header, or (`payload`) at
/// the payload, when the header was read or written alone just before.
fn mysql_greeting(p: &[u8], payload: bool) -> bool {
    let p = if payload {
        p
    } else {
        if p.len() < 6 || p[3] != 0 || !MYSQL_GREETING.contains(&mysql_len(p)) {
            return false;
        }
        &p[4..]
    };
    // the version, as far as the trace shows it: printable up to its NUL, starting with a digit
    p.len() >= 2
        && p[0] == 10
        && p[1].is_ascii_digit()
        && p[1..].iter().take_while(|&&b| b != 0).all(|&b| b.is_ascii_graphic() || b == b' ')
}

/// A 4-byte call that moved only the header of a packet that could be a MySQL greeting.
fn is_greeting_header(p: &[u8], bytes: u64) -> bool {
    bytes == 4 && p.len() == 4 && p[3] == 0 && MYSQL_GREETING.contains(&mysql_len(p))
}

/// What a server-side read on a MySQL connection was.
enum MysqlRead {
    /// A command (sequence id 0): a request.
    Command,
    /// COM_QUIT: the client closes.
    Quit,
    /// The handshake response, authentication, a packet's header or the rest of a packet.
    Other,
    /// Not decodable (the trace shows no bytes).
    Unknown,
}

/// One read on a server-side MySQL connection, decoded from its first bytes: the header and
/// the payload's first byte, read together or apart (mariadbd reads the 4-byte header, then the
/// payload); a payload read in pieces continues its packet.
fn served_mysql_packet(c: &mut Served, head: &[u8], bytes: u64) -> MysqlRead {
    if c.left > 0 {
        // the rest of a packet (several packets in one read: the first one decides)
        c.left = c.left.saturating_sub(bytes);
        return MysqlRead::Other;
    }
    let (seq, len, cmd) = match c.hdr.take() {
        Some((seq, len)) => {
            c.left = u64::from(len).saturating_sub(bytes);
            (seq, len, head.first().copied())
        }
        None => {
            if head.len() < 4 {
                return MysqlRead::Unknown;
            }
            let (seq, len) = (head[3], mysql_len(head));
            if bytes == 4 && len > 0 {
                c.hdr = Some((seq, len));
                return MysqlRead::Other;
            }
            c.left = (u64::from(len) + 4).saturating_sub(bytes);
            (seq, len, head.get(4).copied())
        }
    };
    match (seq, cmd) {
        (0, Some(MYSQL_COM_QUIT)) => MysqlRead::Quit,
        (0, _) => MysqlRead::Command,
        (1, _) if len == 32 => {
            // an SSLRequest (the handshake response's first 32 bytes): TLS follows, whose
            // records say nothing of commands; counted as any connection from here
            c.mysql = false;
            c.left = 0;
            MysqlRead::Other
        }
        _ => MysqlRead::Other,
    }
}

fn push_interval(e: &mut Endpoint, iv: (u64, u64)) {
    if e.intervals.len() < MAX_INTERVALS {
        e.intervals.push(iv);
    } else {
        e.intervals_dropped = true;
    }
}

/// Total length of the union of intervals.
fn union_len(iv: &mut [(i64, i64)]) -> i64 {
    iv.sort_unstable();
    let (mut total, mut cur): (i64, Option<(i64, i64)>) = (0, None);
    for &(a, b) in iv.iter() {
        cur = match cur {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((s, e)) = cur {
        total += e - s;
    }
    total
}

/// Most intervals overlapping at one point.
fn peak_overlap(intervals: &[(u64, u64)]) -> u64 {
    let mut pts: Vec<(u64, i8)> = Vec::with_capacity(intervals.len() * 2);
    for &(a, b) in intervals {
        pts.push((a, 1));
        pts.push((b.max(a), -1));
    }
    // event numbers are unique, so equal points belong to one event: starts first, so a
    // request with no read yet (start == end) counts while it is outstanding
    pts.sort_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
    let (mut cur, mut peak) = (0i64, 0i64);
    for (_, d) in pts {
        cur += d as i64;
        peak = peak.max(cur);
    }
    peak.max(0) as u64
}

fn fmt_s(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 || s == 0.0 {
        format!("{:.1} ms", s * 1000.0)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

impl Hosted for ConnectionChurn {
    type Thread = Thread;
    type Program = ();
    type Object = Sock;
    const MAX_THREADS: usize = MAX_CONNS;
    const MAX_OBJECTS: usize = MAX_CONNS;

    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        if s.existing().is_some_and(|t| t.awaiting.is_some()) {
            self.awaiting -= 1;
        }
    }

    /// The fd's process ended (or the trace did): its connections are closed.
    fn end_object(&mut self, s: &mut State<'_, Self>, _fd: u64, o: Sock) {
        self.open -= 1;
        if let Some(c) = o.served {
            self.finish_served(c, s.at());
        }
        if let Some(c) = o.conn {
            self.finish_conn(c, s.at());
        }
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        // connects per TCP address, and whether the fd was closed again in the excerpt
        let mut by_addr: std::collections::BTreeMap<&str, (u64, u64, Vec<usize>)> = Default::default();
        let mut open: std::collections::HashMap<(syslint_event::Tid, i32), &str> = Default::default();
        for (i, c) in x.calls.iter().enumerate() {
            match c.sys {
                Sys::Connect if c.ret == Some(0) || c.failed("EINPROGRESS") => {
                    let Some(a) = c.addr.as_deref().filter(|a| !a.ends_with(":53") && !a.starts_with("unix")) else {
                        continue;
                    };
                    let e = by_addr.entry(a).or_default();
                    e.0 += 1;
                    e.2.push(i);
                    if let Some(fd) = c.fd {
                        open.insert((c.tid, fd), a);
                    }
                }
                Sys::Close => {
                    if let Some(a) = c.fd.and_then(|fd| open.remove(&(c.tid, fd))) {
                        by_addr.entry(a).or_default().1 += 1;
                    }
                }
                _ => {}
            }
        }
        let Some((addr, (n, closed, idx))) = by_addr.into_iter().filter(|(_, v)| v.0 >= 3 && v.1 + 1 >= v.0).max_by_key(|(_, v)| v.0) else {
            return Vec::new();
        };
        let about = syslint_report::Subject::new(syslint_report::SubjectKind::Endpoint).name(addr);
        META.finding(
            syslint_report::Severity::Warning,
            format!("a new connection per request: {n} connections to {addr}, {closed} closed again in the excerpt"),
        )
        .about(addr, about)
        .metrics([("connections", n.into()), ("closed", closed.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, Confidence::Medium, &format!("{n} connects to one address, each closed after its exchange"))
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, per_second, SysRows};
        use syslint_report::Confidence;
        // glibc's resolver connects a UDP socket for each lookup and asks with one sendmmsg:
        // those connects are lookups (repeated-dns), not connections
        let connects = c.calls_of(&[Sys::Connect]).saturating_sub(c.calls_of(&[Sys::Sendmmsg]));
        let sockets = c.calls_of(&[Sys::Socket]).saturating_sub(c.calls_of(&[Sys::Sendmmsg]));
        let closes = c.calls_of(&[Sys::Close]);
        if connects < 20 || sockets * 10 < connects * 9 || closes < connects {
            return Vec::new();
        }
        // a connection per request carries its request and answer: at least one call that
        // moved data per connect. A loop retrying a refused connect moves none (its connects
        // all fail; a table counts a non-blocking connect's EINPROGRESS as an error too, so
        // the errors alone do not tell it): that is retry-storm's, not churn
        let data = crate::basis::data_calls(c);
        if data < connects {
            return Vec::new();
        }
        let rate = per_second(c, connects, 1);
        META.finding(
            syslint_report::Severity::Info,
            format!("a new socket for nearly every connect: {connects} connects{rate}, {sockets} sockets"),
        )
        .metrics([("connects", connects.into()), ("sockets", sockets.into())])
        .lines(count_lines(c, &[Sys::Socket, Sys::Connect, Sys::Close]))
        .in_table(
            c,
            Confidence::Low,
            "a new socket per connect; the table cannot show whether they went to one endpoint (churn) or many, nor which were DNS lookups",
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        // the event's position in the whole stream orders requests and connections
        self.seq = cx.seq + 1;
        if !self.acceptors.is_empty() {
            if let Some(a) = self.acceptors.get_mut(&ev.tid) {
                a.last = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64).or(a.last);
                if sc.sys.is(Class::POLL) {
                    a.blocked_ns += sc.dur_ns.unwrap_or(0);
                } else if sc.sys == Sys::Sendmsg
                    && cx.target.as_ref().is_some_and(|t| t.kind == TargetKind::Unix)
                {
                    a.unix_sends += 1;
                }
            }
        }
        match sc.sys {
            Sys::Socket => {
                if let Ret::Ok { val, .. } = sc.ret {
                    let fd = i32::try_from(val).unwrap_or(-1);
                    if fd >= 0 {
                        if let Some(t) = s.thread() {
                            t.socket = Some((fd, ev.ts_ns, sc.dur_ns.unwrap_or(0)));
                        }
                    }
                }
            }
            Sys::Connect => self.on_connect(s, cx, ev, sc),
            Sys::Accept | Sys::Accept4 => self.on_accept(s, cx, ev, sc),
            Sys::Getsockopt => self.on_so_error(s, cx, ev, sc),
            Sys::Close => {
                // (a close of an earlier life of the number: the connection on it now is the
                // next one, which this close does not end; Ctx::earlier_life)
                if self.open == 0 || cx.earlier_life {
                    return;
                }
                let Some(fd) = sc.fd() else { return };
                let key = (cx.tgid, fd.num);
                if let Some(mut c) = self.take_served(s, fd.num) {
                    c.close_ns = sc.dur_ns;
                    let end = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
                    if c.shown {
                        if let Some(l) = self.listeners.get_mut(c.listener as usize) {
                            l.evidence.push(ev);
                        }
                    }
                    self.finish_served(c, end);
                    return;
                }
                self.stop_awaiting(s, key);
                if let Some(mut c) = self.take_conn(s, fd.num) {
                    c.close_ns = sc.dur_ns.unwrap_or(0);
                    c.closed = true;
                    let end = ev.ts_ns.map(|t| t + sc.dur_ns.unwrap_or(0) as i64);
                    if c.shown {
                        if let Some(e) = self.endpoints.get_mut(c.ep as usize) {
                            e.evidence.push(ev);
                        }
                    }
                    self.finish_conn(c, end);
                }
            }
            sys if sys.is(Class::POLL) => {
                // a wait by a thread whose new connection has not written yet: the handshake
                if let Some(d) = sc.dur_ns {
                    if let Some(key) = self.awaited(s).filter(|k| k.0 == cx.tgid) {
                        if let Some(c) = self.conn_mut(s, key.1) {
                            c.wait_ns += d;
                        }
                    }
                }
            }
            sys if sys.is(Class::READ) || sys.is(Class::WRITE) => {
                if self.open == 0 {
                    return;
                }
                let Some(fd) = sc.fd() else { return };
                let key = (cx.tgid, fd.num);
                if self.served_mut(s, fd.num).is_some() {
                    self.on_served_data(s, ev, sc, fd.num);
                    return;
                }
                self.first_use(s, ev, key);
                if self.conn_mut(s, fd.num).is_some() {
                    self.on_data(s, ev, sc, key);
                }
            }
            sys if sys.is(Class::FD) => {
                if let (Some(key), Some(fd)) = (self.awaited(s), sc.fd()) {
                    if key.1 == fd.num {
                        self.first_use(s, ev, key);
                    }
                }
            }
            _ => {}
        }
    }

    /// The findings, once the host has closed the connections still open.
    fn report(&mut self, _: Groups<'_, ()>, cx: &FinishCtx) -> Vec<Finding> {
        let window_s = cx.window.map_or(0.0, |w| w.duration_s);
        let mut out = Vec::new();
        for e in &mut self.endpoints {
            if e.connections == 0 {
                continue;
            }
            // a local socket churns like a TCP endpoint when its connections speak a database
            // protocol recognised here; other local sockets (a helper asked per lookup, a
            // logger) are not judged
            if e.unix && (e.mysql + e.pg) * 2 <= e.connections {
                continue;
            }
            let rpc = e.requests as f64 / e.connections as f64;
            let peak = peak_overlap(&e.intervals);
            let setup_share = if e.life_with_setup_ns > 0 {
                e.setup_in_life_ns as f64 / e.life_with_setup_ns as f64
            } else {
                0.0
            };
            let setup_bound = setup_share >= self.cfg.min_setup_share && e.max_open * 2 <= e.connections;
            let churn = e.connections >= self.cfg.min_connections
                && (rpc <= self.cfg.max_requests_per_connection || setup_bound);
            let idle_pool = !churn && e.max_open >= self.cfg.min_idle_parallel && peak * 2 <= e.max_open;
            if !churn && !idle_pool {
                continue;
            }
            let reusable =
                if churn { e.connections.saturating_sub(peak.max(1)) } else { e.max_open.saturating_sub(peak.max(1)) };
            let connect_s = e.connect_ns as f64 / 1e9;
            let handshake_s = e.handshake_ns as f64 / 1e9;
            // the typical connection's setup, not the mean: under strace a few connects that
            // waited for the tracer to be scheduled (milliseconds, against 30 us for most) made
            // the same client a warning under strace and info under eBPF (issue 15)
            // with eBPF the program ran at its own speed: the whole set-up as it lived it, from
            // socket() to the first request, plus the tear-down from the last response to the
            // end of the close (what reuse saves: the user-space work between the calls too:
            // 254 us against 40 us of calls for a redis-py client, 220 us lost natively). Under strace the time between calls is mostly the tracer's
            // (ptrace stops; -yy's netlink lookups on a new socket take milliseconds): only
            // the calls' own time (lengthened by the stops too)
            let whole = cx.tracer == registry::Tracer::Ebpf && !e.span_samples.is_empty();
            let client_setup = if whole { median(&mut e.span_samples) } else { median(&mut e.setup_samples) };
            // both ends traced (a test run holding client and server, a program talking to
            // itself): the server's accept and close for each connection are the churn's too
            let server_side = self
                .listener_ids
                .get(&e.name)
                .and_then(|&l| self.listeners.get_mut(l as usize))
                .and_then(|l| median(&mut l.side_samples));
            let typical_setup = client_setup.map(|ns| (ns + server_side.unwrap_or(0)) as f64 / 1e9);
            // connections set up in parallel overlap: no more than the wall-clock time during
            // which some setup was under way can be lost
            let wall = if e.setups.is_empty() {
                None
            } else {
                let n = e.setup_conns.max(1) as f64;
                Some(union_len(&mut e.setups) as f64 / 1e9 * reusable as f64 / n)
            };
            let wasted = typical_setup.map(|a| {
                let w = a * reusable as f64;
                wall.map_or(w, |c| w.min(c))
            });
            // without -T a connect's time is the gap to the next call on the socket: with the
            // program's other work in it (curl -Z: a pass over 50 transfers) and strace's stops,
            // an upper bound that says nothing about severity
            let guessed = e.connect_measured == 0;
            let severity = match wasted {
                Some(_) if guessed => syslint_report::Severity::Info,
                Some(w) => registry::severity_for(
                    w,
                    if window_s > 0.0 { w / window_s } else { 0.0 },
                    self.cfg.warn_s,
                    self.cfg.error_s,
                ),
                None => syslint_report::Severity::Info,
            };
            let mut handshakes_part = if e.tls > 0 { format!(", {} tls handshakes", e.tls) } else { String::new() };
            if e.mysql > 0 {
                handshakes_part.push_str(&format!(", {} mysql handshakes", e.mysql));
            }
            let message = if churn && rpc > self.cfg.max_requests_per_connection {
                format!(
                    "{} short connections to {}, {:.1} requests each, {:.0}% of their life spent setting them up{}",
                    e.connections,
                    e.name,
                    rpc,
                    setup_share * 100.0,
                    handshakes_part
                )
            } else if churn {
                format!("{} short connections to {}, {:.1} requests each{}", e.connections, e.name, rpc, handshakes_part)
            } else {
                format!(
                    "{} connections open at once to {} but at most {} requests in flight{}",
                    e.max_open, e.name, peak, handshakes_part
                )
            };
            let mut metrics = Metrics::new();
            metrics.count("connections", e.connections);
            metrics.count("requests", e.requests);
            metrics.value("requests_per_connection", rpc);
            metrics.count("tls_handshakes", e.tls);
            if e.mysql > 0 {
                metrics.count("mysql_handshakes", e.mysql);
            }
            metrics.count("processes", e.procs.len());
            metrics.count("max_concurrent", e.max_open);
            metrics.count("peak_in_flight", peak);
            metrics.count("reusable_connections", reusable);
            if e.connect_timed > 0 {
                metrics.value("connect_s", connect_s);
            }
            if e.handshake_timed > 0 {
                metrics.value("handshake_s", handshake_s);
            }
            if e.lifetime_timed > 0 {
                metrics.value("avg_lifetime_s", e.lifetime_ns as f64 / 1e9 / e.lifetime_timed as f64);
            }
            if let Some(t) = typical_setup {
                metrics.value("setup_ms", t * 1e3);
            }
            if e.life_with_setup_ns > 0 {
                metrics.value("setup_share", setup_share);
            }
            if let Some(w) = wasted {
                metrics.value("wasted_s", w);
            }
            let what = match (e.tls > 0, e.mysql > 0) {
                (true, _) => "connects and tls handshakes",
                (false, true) => "connects and mysql handshakes",
                _ => "connects",
            };
            let total = if churn { e.connections } else { e.max_open };
            let cost = match wasted {
                Some(w) => format!(
                    "{reusable} of {total} {what} could be saved by reuse: {} {} ({} per connection, the median {}{}; {} connections spent {} connecting{})",
                    if guessed { "at most" } else { "about" },
                    fmt_s(w),
                    fmt_s(typical_setup.unwrap_or(0.0)),
                    if guessed {
                        "of the connects' spans to the next call"
                    } else if whole {
                        "from socket() to the first request, plus the close, measured with eBPF"
                    } else {
                        "of the set-up calls' own time as strace timed them (socket, connect and its waits, handshakes, close; the program's work between them is not counted: under strace that time is mostly the tracer's, and `syslint trace` with eBPF measures it)"
                    },
                    match server_side {
                        Some(ns) => format!(", with the server's accept and close, {} (both ends traced)", fmt_s(ns as f64 / 1e9)),
                        None => String::new(),
                    },
                    e.connections,
                    fmt_s(connect_s),
                    match (e.tls > 0, e.mysql > 0) {
                        (true, _) => format!(" and {} in tls handshakes", fmt_s(handshake_s)),
                        (false, true) => format!(" and {} in mysql handshakes", fmt_s(handshake_s)),
                        _ => String::new(),
                    }
                ),
                None => format!(
                    "{reusable} of {total} {what} could be saved by reuse; time unknown (the trace has no -T or -tt)"
                ),
            };
            let mut fix = String::from(META.docs.fix);
            if e.procs.len() > 1 {
                fix = format!(
                    "{} separate processes connected here: make one process do all the requests (e.g. one curl \
invocation with every URL, or a long-lived worker) so connections can be reused. {fix}",
                    e.procs.len()
                );
            }
            let about = Subject::new(SubjectKind::Endpoint).program(program_of(&e.procs, cx.model)).name(e.name.as_str());
            out.push(
                META.finding(severity, message)
                    .about(e.name.clone(), about)
                    .over(&e.span)
                    .metrics(metrics)
                    .evidence(&e.evidence, cx.clock)
                    .cost(cost)
                    .fix(fix)
                    .build(),
            );
        }
        self.served_findings(cx, &mut out);
        out
    }
}

/// The median of some durations (the lower middle one of an even count).
fn median(v: &mut [u64]) -> Option<u64> {
    if v.is_empty() {
        return None;
    }
    let mid = (v.len() - 1) / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    Some(*m)
}

#[cfg(test)]
mod tests {
    // The fixture tests are data: fixtures/connection-churn/expect.toml, run by src/check/fixtures.rs.
    use super::*;
    use crate::check::check;

    /// strace -f -tt -T -yy lines of `n` MySQL connections, from a template of lines of the
    /// mariadb client and mariadbd 10.11 (`{i}` numbers the connection; times in µs from its
    /// start, each connection 20 ms after the one before).
    fn mysql_trace(n: u32, template: &[(u64, &str)]) -> String {
        let mut out = String::new();
        for i in 0..n {
            for (at, line) in template {
                let us = 36_000_000_000 + u64::from(i) * 20_000 + at;
                let (s, frac) = (us / 1_000_000, us % 1_000_000);
                let line = line.replace("{i}", &(40_000 + i).to_string());
                out.push_str(&format!("100 {:02}:{:02}:{:02}.{frac:06} {line}\n", s / 3600, s / 60 % 60, s % 60));
            }
        }
        out
    }

    /// The mariadb client, `-e 'SELECT 1'`: it reads the greeting (whole, or `split`: its
    /// header, then its payload), answers, reads OK, queries, reads the result, COM_QUIT.
    fn mysql_client(split: bool, unix: bool) -> Vec<(u64, &'static str)> {
        let (sock, connect) = if unix {
            (
                r#"3<UNIX-STREAM:[2834{i}->2835{i}]>"#,
                r#"connect(3<UNIX-STREAM:[2834{i}]>, {sa_family=AF_UNIX, sun_path="/run/mysqld/mysqld.sock"}, 110) = 0 <0.000040>"#,
            )
        } else {
            (
                r#"3<TCP:[127.0.0.1:{i}->127.0.0.1:3306]>"#,
                r#"connect(3<TCP:[2834{i}]>, {sa_family=AF_INET, sin_port=htons(3306), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress) <0.000165>"#,
            )
        };
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let mut t = vec![
            (0, leak(connect.to_string())),
            (
                300,
                leak(format!(
                    r#"poll([{{fd={sock}, events=POLLOUT}}], 1, -1) = 1 ([{{fd=3, revents=POLLOUT}}]) <0.000047>"#
                )),
            ),
            (400, leak(format!(r#"getsockopt({sock}, SOL_SOCKET, SO_ERROR, [0], [4]) = 0 <0.000021>"#))),
            (
                500,
                leak(format!(
                    r#"recvfrom({sock}, 0x5566ed7814a0, 16384, MSG_DONTWAIT, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable) <0.000019>"#
                )),
            ),
            (
                600,
                leak(format!(
                    r#"poll([{{fd={sock}, events=POLLIN}}], 1, -1) = 1 ([{{fd=3, revents=POLLIN}}]) <0.000400>"#
                )),
            ),
        ];
        if split {
            t.push((1100, leak(format!(r#"read({sock}, "d\0\0\0", 4) = 4 <0.000010>"#))));
            t.push((1150, leak(format!(r#"read({sock}, "\n5.5.5-10.11.19-MariaDB-0+deb12u1\0\5\0\0\0l}}MHc8.z\0\376\367\10\2\0\377"..., 100) = 100 <0.000010>"#))));
        } else {
            t.push((1100, leak(format!(r#"recvfrom({sock}, "d\0\0\0\n5.5.5-10.11.19-MariaDB-0+deb12u1\0\5\0\0\0l}}MHc8.z\0\376\367\10\2\0\377\201\25\0\0\0\0\0"..., 16384, MSG_DONTWAIT, NULL, NULL) = 104 <0.000023>"#))));
        }
        t.extend([
            (1200, leak(format!(r#"sendto({sock}, "\274\0\0\1\204\242\277\0\0\0\20\0!\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\35\0\0\0root\0\0mysql_native_password\0"..., 192, MSG_DONTWAIT|MSG_NOSIGNAL, NULL, 0) = 192 <0.000115>"#))),
            (1500, leak(format!(r#"recvfrom({sock}, "\7\0\0\2\0\0\0\2\0\0\0", 16384, MSG_DONTWAIT, NULL, NULL) = 11 <0.000020>"#))),
            // the client's own work (charsets, locale) before its query: not the connection's set-up
            (4500, leak(format!(r#"sendto({sock}, "\t\0\0\0\3SELECT 1", 13, MSG_DONTWAIT|MSG_NOSIGNAL, NULL, 0) = 13 <0.000077>"#))),
            (4800, leak(format!(r#"recvfrom({sock}, "\2\0\0\1\1\1\30\0\0\2\3def\0\0\0\0011\0\0\f?\0\1\0\0\0\3\201\0\0\0\0\5\0\0\3\376\0\0\2\0\2\0\0\4\0011\5\0\0\5\376\0\0\2\0", 16384, MSG_DONTWAIT, NULL, NULL) = 58 <0.000020>"#))),
            (5000, leak(format!(r#"sendto({sock}, "\1\0\0\0\1", 5, MSG_DONTWAIT|MSG_NOSIGNAL, NULL, 0) = 5 <0.000130>"#))),
            (5200, leak(format!(r#"close({sock}) = 0 <0.000070>"#))),
        ]);
        t
    }

    #[test]
    fn mysql_client_per_query_churns() {
        for (split, unix) in [(false, false), (true, false), (false, true)] {
            let ctx = format!("split {split}, unix {unix}");
            let f = check("connection-churn", &mysql_trace(12, &mysql_client(split, unix)));
            assert_eq!(f.len(), 1, "{ctx}: {f:#?}");
            let f = &f[0];
            let want = if unix { "unix:/run/mysqld/mysqld.sock" } else { "127.0.0.1:3306" };
            assert_eq!(f.subject, want, "{ctx}");
            // the query only: not the handshake response, nor COM_QUIT
            assert_eq!(f.metrics["connections"], 12, "{ctx}");
            assert_eq!(f.metrics["requests"], 12, "{ctx}");
            assert_eq!(f.metrics["mysql_handshakes"], 12, "{ctx}");
            assert!(f.message.ends_with(", 12 mysql handshakes"), "{ctx}: {}", f.message);
            // the set-up: from the greeting's read to the end of the read of the OK (0.4 ms),
            // not to the query 3 ms later
            let hs = f.metrics["handshake_s"].as_f64().unwrap() / 12.0;
            assert!((hs - 0.000_420).abs() < 0.000_001, "{ctx}: {hs}");
        }
    }

    #[test]
    fn other_local_sockets_are_not_judged() {
        // a local socket that is not MySQL or PostgreSQL: a request and an answer per connection,
        // 20 times, not judged (a helper asked per lookup)
        let other = [
            (
                0,
                r#"connect(3<UNIX-STREAM:[2834{i}]>, {sa_family=AF_UNIX, sun_path="/run/helper.sock"}, 110) = 0 <0.000040>"#,
            ),
            (100, r#"write(3<UNIX-STREAM:[2834{i}->2835{i}]>, "GET key\n", 8) = 8 <0.000010>"#),
            (200, r#"read(3<UNIX-STREAM:[2834{i}->2835{i}]>, "VALUE 1\n", 8) = 8 <0.000010>"#),
            (300, r#"close(3<UNIX-STREAM:[2834{i}->2835{i}]>) = 0 <0.000010>"#),
        ];
        assert!(check("connection-churn", &mysql_trace(20, &other)).is_empty());
    }

    /// mariadbd's side of one connection: the greeting, then each packet read as its 4-byte
    /// header and its payload.
    const MYSQL_SERVED: &[(u64, &str)] = &[
        (
            0,
            r#"accept4(22<TCP:[127.0.0.1:3306]>, {sa_family=AF_INET, sin_port=htons({i}), sin_addr=inet_addr("127.0.0.1")}, [128 => 16], SOCK_CLOEXEC) = 43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]> <0.000030>"#,
        ),
        (
            100,
            r#"sendto(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "d\0\0\0\n5.5.5-10.11.19-MariaDB-0+deb12u1\0\6\0\0\0?TlA=P[V\0\376\367\10\2\0\377\201\25\0\0\0\0\0"..., 104, MSG_DONTWAIT, NULL, 0) = 104 <0.000287>"#,
        ),
        (
            500,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\274\0\0\1", 4, MSG_DONTWAIT, NULL, NULL) = 4 <0.000044>"#,
        ),
        (
            600,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\204\242\277\0\0\0\20\0!\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\35\0\0\0root\0\0mysql_native_password\0\177\3_o"..., 188, MSG_DONTWAIT, NULL, NULL) = 188 <0.000041>"#,
        ),
        (
            700,
            r#"sendto(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\7\0\0\2\0\0\0\2\0\0\0", 11, MSG_DONTWAIT, NULL, 0) = 11 <0.000065>"#,
        ),
        (
            3000,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\t\0\0\0", 4, MSG_DONTWAIT, NULL, NULL) = 4 <0.000054>"#,
        ),
        (
            3100,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\3SELECT 1", 9, MSG_DONTWAIT, NULL, NULL) = 9 <0.000041>"#,
        ),
        (
            3200,
            r#"sendto(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\2\0\0\1\1\1\30\0\0\2\3def\0\0\0\0011\0\0\f?\0\1\0\0\0\3\201\0\0\0\0\5\0\0\3\376\0\0\2\0\2\0\0\4\0011\5\0\0\5\376\0\0\2\0", 58, MSG_DONTWAIT, NULL, 0) = 58 <0.000104>"#,
        ),
        (
            4000,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\1\0\0\0", 4, MSG_DONTWAIT, NULL, NULL) = 4 <0.000053>"#,
        ),
        (
            4100,
            r#"recvfrom(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>, "\1", 1, MSG_DONTWAIT, NULL, NULL) = 1 <0.000041>"#,
        ),
        (4200, r#"close(43<TCP:[127.0.0.1:3306->127.0.0.1:{i}]>) = 0 <0.000147>"#),
    ];

    #[test]
    fn mysql_server_side_counts_commands() {
        let f = check("connection-churn", &mysql_trace(12, MYSQL_SERVED));
        assert_eq!(f.len(), 1, "{f:#?}");
        let f = &f[0];
        assert_eq!(f.subject, "127.0.0.1:3306 (accepted)");
        assert_eq!(f.severity, syslint_report::Severity::Info);
        // the query, not the handshake response nor COM_QUIT; COM_QUIT is the client closing
        assert_eq!(f.metrics["connections"], 12);
        assert_eq!(f.metrics["requests"], 12);
        assert_eq!(f.metrics["client_closed"], 12);
        assert_eq!(f.metrics["server_closed"], 0);
        assert_eq!(f.metrics["mysql_handshakes"], 12);
        assert!(f.message.contains("the clients closed"), "{}", f.message);
    }

    #[test]
    fn mysql_greetings() {
        let g = b"d\0\0\0\n5.5.5-10.11.19-MariaDB-0+deb12u1\0\x05\0\0\0";
        assert!(mysql_greeting(g, false));
        assert!(mysql_greeting(&g[4..], true) && is_greeting_header(&g[..4], 4));
        assert!(mysql_greeting(b"J\0\0\0\n8.0.36\0", false));
        // as far as the trace shows it
        assert!(mysql_greeting(b"J\0\0\0\n8.", false));
        for no in [
            &b"HTTP/1.1 200 OK\r\n"[..],
            b"J\0\0\x01\n8.0.36\0",
            b"J\0\0\0\x098.0.36\0",
            b"J\0\0\0\nabc\0",
            b"\x05\0\0\0\n8.0\0",
            b"J\0\0\0\n8.0\x01\0",
        ] {
            assert!(!mysql_greeting(no, false), "{no:?}");
        }
    }

    #[test]
    fn http_requests_asking_to_close() {
        // Python http.client with Connection: close, whole
        let req = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:40263\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n";
        assert_eq!(http_asks_close(req, req.len() as u64), Asked::Close);
        // the same cut at 64 bytes: the header goes on past what was kept
        assert_eq!(http_asks_close(&req[..64], req.len() as u64), Asked::Unseen);
        // wrk's request, whole: keep-alive (HTTP/1.1's default)
        let wrk = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";
        assert_eq!(http_asks_close(wrk, wrk.len() as u64), Asked::KeepAlive);
        // ab without -k: HTTP/1.0, no Connection header
        let ab = b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n";
        assert_eq!(http_asks_close(ab, ab.len() as u64), Asked::Close);
        let ab_k = b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 127.0.0.1\r\n\r\n";
        assert_eq!(http_asks_close(ab_k, ab_k.len() as u64), Asked::KeepAlive);
        assert_eq!(http_asks_close(b"\x10\x0c\x00\x04MQTT", 14), Asked::NotHttp);
    }

    #[test]
    fn unions() {
        assert_eq!(union_len(&mut []), 0);
        assert_eq!(union_len(&mut [(5, 9), (1, 3), (2, 4)]), 7);
        assert_eq!(union_len(&mut [(1, 10), (2, 3)]), 9);
    }

    #[test]
    fn overlap_peaks() {
        assert_eq!(peak_overlap(&[]), 0);
        assert_eq!(peak_overlap(&[(1, 5), (6, 9)]), 1);
        assert_eq!(peak_overlap(&[(1, 5), (2, 9), (3, 4)]), 3);
    }
}
