//! `userspace-copy` (SL018): a thread reads a regular file and writes the same bytes to a
//! socket (read/pread/readv, then write/send/writev/sendmsg), where sendfile(), splice() or
//! copy_file_range() would move them inside the kernel.
//!
//! The matching rule: each thread keeps the bytes it read from regular files and has not yet
//! sent (*pending*, capped at `max_pending`); a plain write to a socket consumes pending bytes:
//! those are *copied*. A write that is a TLS record (first bytes `17 03`, application data)
//! consumes them as encrypted instead: encryption needs the bytes in user space (unless kTLS).
//! Per program, the finding needs at least `min_bytes` copied making at least `min_copy_share` of
//! the bytes read from files: a server that compresses what it reads sends a fraction of it
//! (gzip: 4%), so its socket writes cannot account for what it read.

use super::{Evidence, EvidenceBuf};
use crate::host::{Best, Capped, Groups, Hosted, Merge, State};
use crate::kit::{Metrics, Span, Timing};
use crate::registry::{Ctx, FinishCtx};
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Event, Ret, Sys, Syscall, TargetKind};
use syslint_report::{Finding, Severity};

crate::detector!("userspace_copy", struct UserspaceCopy);

/// Socket writes shown as evidence move at least this many copied bytes.
const EVIDENCE_MIN_WRITE: u64 = 4096;

/// One thread.
#[derive(Clone, Default)]
pub struct Thread {
    /// Bytes read from files and not sent yet.
    pending: u64,
    /// The target of the last file read (the file the pending bytes came from, mostly), and
    /// the bytes read from it since it became the last.
    file: Option<u32>,
    file_bytes: u64,
    copied: u64,
    read: u64,
    /// The last file read, while the evidence has room (once the thread writes to sockets).
    last_read: Option<Evidence>,
    /// The thread has written to a socket.
    writes_sockets: bool,
    evidence: EvidenceBuf,
}

#[derive(Clone, Default)]
pub struct Group {
    copied: u64,
    file_read: u64,
    sent: u64,
    tls: u64,
    reads: u64,
    writes: u64,
    timing: Timing,
    span: Span,
    files: Files,
    /// The evidence of the thread that copied most.
    evidence: Best<EvidenceBuf>,
}

crate::merge!(Group {
    copied: sum,
    file_read: sum,
    sent: sum,
    tls: sum,
    reads: sum,
    writes: sum,
    timing: merge,
    span: merge,
    files: merge,
    evidence: merge,
});

/// Target id -> bytes copied from it, and its name ([`MAX_FILES`] files at most).
type Files = Capped<u32, Copied, MAX_FILES>;

/// The bytes copied from one file, and its name.
#[derive(Clone)]
struct Copied {
    bytes: u64,
    name: Box<str>,
}

crate::merge!(Copied { bytes: sum, name: keep });

/// A regular file: a path that is no device, /proc or /sys file.
fn regular_file(kind: TargetKind, display: &str) -> bool {
    kind == TargetKind::File && !["/dev/", "/proc/", "/sys/"].iter().any(|p| display.starts_with(p))
}

/// A TLS application-data record (content type 23, version 3.x) starts the buffer.
fn tls_record(sc: &Syscall) -> bool {
    let mut b = [0u8; 2];
    sc.payload_prefix(&mut b) == 2 && b == [0x17, 0x03]
}

/// The reads of the excerpt and counts rules.
const READ: &[Sys] = &[Sys::Read, Sys::Pread64, Sys::Readv, Sys::Preadv, Sys::Preadv2];
/// Their writes.
const WRITE: &[Sys] = &[Sys::Write, Sys::Writev, Sys::Send, Sys::Sendto, Sys::Sendmsg];

impl Hosted for UserspaceCopy {
    type Thread = Thread;
    type Program = Group;
    type Object = ();
    /// A thread that runs another program starts afresh in that program.
    const EXEC_ENDS_THREAD: bool = true;

    /// A thread ended (or ran another program): its evidence joins its program's.
    fn end_thread(&mut self, s: &mut State<'_, Self>) {
        let Some(t) = s.take_ended(|t| t.copied > 0) else { return };
        let mut ev = t.evidence;
        if ev.first.is_empty() {
            return;
        }
        ev.cap = EVIDENCE;
        let g = s.program();
        g.evidence.merge(Best::new(t.copied, ev));
    }

    fn on_excerpt(&self, x: &crate::basis::Excerpt) -> Vec<Finding> {
        use syslint_report::Confidence;
        const KERNEL_COPY: &[Sys] = &[Sys::Sendfile, Sys::Splice, Sys::CopyFileRange];
        if x.calls.iter().any(|c| c.is(KERNEL_COPY)) {
            return Vec::new();
        }
        // per thread: a read of n bytes, then the next write (no read between) of exactly n
        // bytes to another fd is a copy pair. A transformation (TLS records, compression)
        // changes the size; a write to a file is a copy between files (copy_file_range's),
        // a read from a socket is a proxy's: neither counted.
        let mut last: HashMap<u32, (i32, i64, usize)> = HashMap::default();
        let (mut pairs, mut bytes, mut known) = (0u64, 0u64, 0u64);
        let mut idx = Vec::new();
        let kind = |c: &crate::basis::Call| c.target_kind;
        for (i, c) in x.calls.iter().enumerate() {
            let t = c.tid.0;
            if c.is(READ) {
                let n = c.ret.unwrap_or(0);
                let file = kind(c).is_none_or(|k| k == TargetKind::File);
                match (c.fd, n >= 1024 && file) {
                    (Some(fd), true) => {
                        last.insert(t, (fd, n, i));
                    }
                    _ => {
                        last.remove(&t);
                    }
                }
            } else if c.is(WRITE) {
                let Some((rfd, n, ri)) = last.remove(&t) else { continue };
                let to_socket = kind(c).is_none_or(TargetKind::is_socket);
                if c.fd.is_some_and(|w| w != rfd) && c.ret == Some(n) && to_socket {
                    pairs += 1;
                    bytes += n as u64;
                    if kind(&x.calls[ri]) == Some(TargetKind::File) && kind(c).is_some_and(TargetKind::is_socket) {
                        known += 1;
                    }
                    if idx.len() < 8 {
                        idx.push(ri);
                        idx.push(i);
                    }
                }
            }
        }
        if pairs < 4 || bytes < 128 * 1024 {
            return Vec::new();
        }
        let sure = pairs >= 8 && known * 2 >= pairs;
        let (conf, why) = if sure {
            (
                Confidence::Medium,
                format!("{pairs} reads of a file each followed by a write of the same bytes to a socket; how much a run copies (the cost) is not in the lines"),
            )
        } else {
            (
                Confidence::Low,
                format!("{pairs} reads each followed by a write of as many bytes to another fd; the lines do not say (no -yy, no open or accept in them) that the reads are of a file and the writes to a socket"),
            )
        };
        META.finding(
            Severity::Info,
            format!(
                "bytes read and written out again unchanged: {pairs} reads each followed by a write of the same {} to another fd ({} KiB) in the excerpt, no sendfile",
                if pairs == 1 { "size" } else { "sizes" },
                bytes / 1024
            ),
        )
        .metrics([("copy_pairs", pairs.into()), ("copied_bytes", bytes.into()), ("file_to_socket_pairs", known.into())])
        .lines(x.evidence(&idx, 4))
        .in_excerpt(x, conf, &why)
    }

    fn on_counts(&self, c: &syslint_report::Counts) -> Vec<Finding> {
        use crate::basis::{count_lines, SysRows};
        use syslint_report::Confidence;
        const KERNEL_COPY: &[Sys] = &[Sys::Sendfile, Sys::Sendfile64, Sys::Splice, Sys::CopyFileRange];
        // a socket in play: a program that never accepted, connected or used a socket call is
        // copying between files or pipes (cat, dd), not serving
        const NET: &[Sys] = &[
            Sys::Accept, Sys::Accept4, Sys::Connect, Sys::Socket, Sys::Sendto, Sys::Recvfrom, Sys::Sendmsg,
            Sys::Recvmsg,
        ];
        if c.calls_of(KERNEL_COPY) > 0 || c.calls_of(NET) == 0 {
            return Vec::new();
        }
        let (reads, writes, total) = (c.calls_of(READ), c.calls_of(WRITE), c.total_calls());
        let (lo, hi) = (reads.min(writes), reads.max(writes));
        if lo < 1000 || lo * 10 < hi * 8 || (reads + writes) * 2 < total {
            return Vec::new();
        }
        META.finding(
            Severity::Info,
            format!("reads and writes in equal numbers, no sendfile: {reads} reads, {writes} writes of {total} calls"),
        )
        .metrics([("reads", reads.into()), ("writes", writes.into()), ("calls", total.into())])
        .lines(count_lines(c, &[READ, WRITE, NET].concat()))
        .in_table(
            c,
            Confidence::Low,
            &format!(
                "{reads} reads and {writes} writes, {:.0}% of the calls, in a program that uses sockets and never sendfile; a table cannot say the reads are of files and the writes to sockets (a proxy relays socket to socket), nor that the bytes went out unchanged (TLS, compression)",
                (reads + writes) as f64 * 100.0 / total.max(1) as f64
            ),
        )
    }

    fn on_syscall(&mut self, s: &mut State<'_, Self>, cx: &Ctx, ev: &Event, sc: &Syscall) {
        let Ret::Ok { val, .. } = sc.ret else { return };
        if sc.sys == Sys::Mmap {
            // the file just read is mapped: those reads were headers (the loader reading an ELF
            // file before mapping it), not contents to send
            let Some(fd) = sc.mmap_fd() else { return };
            let Some(t) = s.existing() else { return };
            if t.file.is_some() && cx.model.lookup_fd(ev.tid, fd).map(|v| v.id) == t.file {
                t.pending -= t.pending.min(t.file_bytes);
                t.file_bytes = 0;
            }
            return;
        }
        let Some(target) = cx.target else { return };
        let n = u64::try_from(val).unwrap_or(0);
        if n == 0 {
            return;
        }
        let is_read = matches!(sc.sys, Sys::Read | Sys::Pread64 | Sys::Readv | Sys::Preadv | Sys::Preadv2);
        if is_read {
            if !regular_file(target.kind, target.display) {
                return;
            }
            let max = self.cfg.max_pending;
            let make = || Thread { evidence: EvidenceBuf::new(EVIDENCE), ..Thread::default() };
            let Some(t) = s.thread_or(make) else { return };
            t.pending = (t.pending + n).min(max);
            if t.file != Some(target.id) {
                t.file = Some(target.id);
                t.file_bytes = 0;
            }
            t.file_bytes += n;
            t.read += n;
            // only threads that have written to a socket keep their last read (a compiler or
            // tar reading thousands of files never sends them: rendering each read cost more
            // than everything else this detector does)
            if t.writes_sockets && t.evidence.first.len() < t.evidence.cap {
                match t.last_read.as_mut() {
                    Some(e) => e.refill(ev),
                    None => t.last_read = Some(Evidence::of(ev)),
                }
            }
            let gr = s.program();
            gr.file_read += n;
            gr.reads += 1;
            return;
        }
        // a write: to a socket, by a thread with file bytes pending
        if !target.kind.is_socket() {
            return;
        }
        let Some(t) = s.existing() else { return };
        t.writes_sockets = true;
        let tls = tls_record(sc);
        let moved = n.min(t.pending);
        t.pending -= moved;
        let file = t.file;
        if moved > 0 && !tls {
            t.copied += moved;
            // evidence from buffers, not from a header that used up bytes read at start-up
            if moved >= EVIDENCE_MIN_WRITE {
                if t.evidence.first.len() + 2 <= t.evidence.cap {
                    if let Some(r) = t.last_read.take() {
                        t.evidence.first.push(r);
                    }
                    t.evidence.first.push(Evidence::of(ev));
                } else {
                    match t.evidence.last.as_mut() {
                        Some(e) => e.refill(ev),
                        None => t.evidence.last = Some(Evidence::of(ev)),
                    }
                }
            }
        }
        let gr = s.program();
        if tls {
            gr.tls += moved;
            return;
        }
        gr.sent += n;
        if moved == 0 {
            return;
        }
        gr.copied += moved;
        gr.writes += 1;
        gr.timing.add(sc.dur_ns);
        gr.span.add(ev.ts_ns);
        if let Some(f) = file {
            let name = || cx.model.target(f).map_or_else(|| "?".into(), |v| v.display.into());
            if let Some(c) = gr.files.entry_or(f, || Copied { bytes: 0, name: name() }) {
                c.bytes += moved;
            }
        }
    }

    fn report(&mut self, groups: Groups<'_, Group>, cx: &FinishCtx) -> Vec<Finding> {
        groups.findings(cx.model, |g| {
            if g.copied < self.cfg.min_bytes.max(1) {
                return None;
            }
            let share = g.copied as f64 / g.file_read.max(1) as f64;
            if share < self.cfg.min_copy_share {
                return None;
            }
            let severity = Severity::warning_if(g.copied >= self.cfg.warn_bytes);
            let mut files: Vec<&Copied> = g.files.0.values().collect();
            files.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
            let mut m = Metrics::new();
            m.count("copied_bytes", g.copied);
            m.count("file_bytes_read", g.file_read);
            m.value("copy_share", share.min(1.0));
            m.count("socket_bytes_sent", g.sent);
            if g.tls > 0 {
                m.count("tls_bytes", g.tls);
            }
            m.count("reads", g.reads);
            m.count("writes", g.writes);
            m.json(
                "top_files",
                serde_json::Value::from(files.iter().take(5).map(|f| f.name.to_string()).collect::<Vec<_>>()),
            );
            m.value_opt("seconds", g.timing.seconds());
            let span = g.span.seconds();
            if span > 0.0 {
                m.value("copied_per_sec", g.copied as f64 / span);
            }
            let mib = g.copied as f64 / 1048576.0;
            let top = files.first().map_or("files", |f| &*f.name);
            let message = format!(
                "{mib:.1} MiB read from {top}{} and written to sockets through user space ({} socket writes): \
sendfile() would move them in the kernel",
                if files.len() > 1 { format!(" and {} more", files.len() - 1) } else { String::new() },
                g.writes
            );
            let time = match g.timing.seconds() {
                Some(s) => format!("{s:.3} s inside the socket writes, {}", cx.tracer.measured()),
                None => "time unknown: no -T".to_string(),
            };
            let cost = format!(
                "{mib:.1} MiB copied twice across the user/kernel boundary (file to buffer, buffer to socket) in {} \
socket writes and as many reads or more ({time}); sendfile() makes one call per file and one copy in the kernel",
                g.writes
            );
            Some(META.finding(severity, message).over(&g.span).metrics(m).evidence(&g.evidence, cx.clock).cost(cost))
        })
    }
}

// The fixture tests are data: fixtures/userspace-copy/expect.toml, run by src/check/fixtures.rs.
