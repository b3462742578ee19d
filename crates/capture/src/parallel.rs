//! Reading one large input on several cores.
//!
//! A reader thread cuts the (decompressed) input into chunks of whole lines; worker threads
//! parse chunks independently into [`Batch`]es of events that borrow their chunk; the calling thread takes the
//! batches back in input order and hands their events to the sink. What a chunk cannot know
//! (a call that started in an earlier chunk, the running sum of `-r` deltas, a midnight
//! passed earlier) travels in each batch's [`ChunkEnd`] and is settled here, so the events
//! come out as the sequential reader would give them. Chunks are large (512 KiB), so a small
//! input is one chunk and reads exactly as before.
//!
//! Timestamps: a chunk's parser reads its stamps with the sequential reader's rules from a
//! clock that starts with the chunk. Within a chunk of one kind of stamp that is the sequential
//! reading shifted by one amount per chunk (the `-r` sum before it; the days added before it,
//! and one more if midnight passed between the last time of day before the chunk and its
//! first: the rule that adds a day compares each stamp with the one before, and moving both
//! by the same amount does not change its answer). So the glue adds one number to every stamp
//! of a chunk and compares once per chunk. A chunk that mixes times of day and numbers, or
//! whose numbers it read in another clock than the input's (strace writes neither), is read
//! again in order from the input's clock as it stood ([`Glue::settle_clock`]).

use crate::strace::{ChunkEnd, ClockState, Dangling, Mark, Marked, ParseStats, Parser, PidState};
use crate::FileTally;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use syslint_event::{Clock, Event, EventKind, FdArg, Ret, Syscall, Tid};

/// Bytes per chunk (cut at a line end). 512 KiB: as fast as 1 MiB on 2 cores (0.83 against
/// 0.81 s, within the noise; 2 MiB was no faster either), and since batches hold their events
/// unpacked, 1 MiB chunks held 12 MB more in flight (peak RSS 69 MB against 57; bench/RESULTS.md).
pub const CHUNK: usize = 512 << 10;

/// Bytes read in a row without one recognised strace line after which an input is read no
/// further (`/dev/zero`, a gzip bomb of junk, a binary file): a log begins with strace lines
/// and never holds this much program output in one stretch. docs/robustness.md.
pub const UNRECOGNISED_LIMIT: u64 = 64 << 20;

/// Chunks in flight per worker (read, parsed or waiting for their turn), besides two more.
const IN_FLIGHT_PER_WORKER: usize = 2;

/// What a batch's events borrow: the chunk's text, and an arena for the text of lines the
/// parser had to put together (an unfinished call and its resumption, a cut line).
struct Owner {
    text: String,
    side: bumpalo::Bump,
}

type Events<'a> = Vec<Event<'a>>;

self_cell::self_cell!(
    /// A chunk's text with the events that borrow it, built on a worker: the analysis thread
    /// reads them in place (it only shifts clocks and names unnamed pids) instead of unpacking
    /// each event from offsets, which had cost it ~250 instructions an event (9% of its work).
    struct Parsed {
        owner: Owner,
        #[covariant]
        dependent: Events,
    }
);

/// One parsed chunk.
pub struct Batch {
    seq: u64,
    parsed: Parsed,
    stats: ParseStats,
    end: ChunkEnd,
    lines: u64,
    tally: FileTally,
    /// Input bytes consumed up to this chunk's end (chunks sent and line tails skipped).
    pos: u64,
}

/// `s` borrowed from the chunk's text when it lies there, else copied to the arena.
#[inline(always)]
fn own<'a>(text: &'a str, side: &'a bumpalo::Bump, s: &str) -> &'a str {
    let base = text.as_ptr() as usize;
    let p = s.as_ptr() as usize;
    if p >= base && p + s.len() <= base + text.len() {
        text.get(p - base..p - base + s.len()).unwrap_or("")
    } else {
        side.alloc_str(s)
    }
}

/// The parser's event with every piece of text it holds owned by the batch.
#[inline]
fn own_event<'a>(text: &'a str, side: &'a bumpalo::Bump, e: &Event<'_>) -> Event<'a> {
    let o = |s: &str| own(text, side, s);
    let kind = match &e.kind {
        EventKind::Syscall(sc) => {
            let ret = match sc.ret {
                Ret::Ok { val, deco, note } => Ret::Ok { val, deco: deco.map(o), note: o(note) },
                Ret::Err { val, errno } => Ret::Err { val, errno: o(errno) },
                Ret::Unknown => Ret::Unknown,
                Ret::Unfinished => Ret::Unfinished,
            };
            let pre = syslint_event::Pre {
                fd: sc.pre.fd.map(|f| f.map(|f| FdArg { num: f.num, deco: f.deco.map(o) })),
                path: sc.pre.path.map(|p| p.map(o)),
                path_plain: sc.pre.path_plain,
                open_flags: sc.pre.open_flags,
                count: sc.pre.count,
                timeout: sc.pre.timeout,
                stack: sc.pre.stack,
            };
            EventKind::Syscall(Syscall {
                sys: sc.sys,
                name: o(sc.name),
                // the text reader gives text arguments only
                args: syslint_event::Args::Text(o(sc.args.text().unwrap_or(""))),
                ret,
                dur_ns: sc.dur_ns,
                resumed: sc.resumed,
                pre,
            })
        }
        EventKind::Signal { name, info } => EventKind::Signal { name: o(name), info: o(info) },
        EventKind::Exited { code } => EventKind::Exited { code: *code },
        EventKind::Killed { signal, core_dumped } => EventKind::Killed { signal: o(signal), core_dumped: *core_dumped },
        EventKind::Attached { threads } => EventKind::Attached { threads: *threads },
        EventKind::Detached => EventKind::Detached,
        EventKind::Alias { old } => EventKind::Alias { old: *old },
        EventKind::FdKnown { fd, target } => EventKind::FdKnown { fd: *fd, target: o(target) },
        EventKind::TaskKnown { tgid, parent, comm } => {
            EventKind::TaskKnown { tgid: *tgid, parent: *parent, comm: o(comm) }
        }
        EventKind::Spawning { thread, files } => EventKind::Spawning { thread: *thread, files: *files },
    };
    Event { tid: e.tid, ts_ns: e.ts_ns, kind }
}

/// The buffers of a batch that was analysed, handed back to the reader for the next chunk:
/// memory already touched, so a chunk costs no fresh pages, no page faults and no large
/// allocation and free on the analysis thread (two cores: 0.09 s of system time saved).
#[derive(Default)]
struct Spare {
    text: Vec<u8>,
    /// Input bytes consumed up to the end of `text`.
    pos: u64,
    side: bumpalo::Bump,
    /// The last batch's event vector, emptied (its allocation reused: a fresh 1.5 MB vector
    /// per chunk cost 20 MB of peak RSS in freed-but-kept heap).
    events: Vec<Event<'static>>,
}

/// An emptied vector of events, its allocation kept for events of any lifetime (an empty
/// vector holds no borrow; collecting a vector's own iterator reuses its buffer).
fn recycle(mut v: Vec<Event<'_>>) -> Vec<Event<'static>> {
    v.clear();
    v.into_iter().map(|_| Event { tid: Tid(0), ts_ns: None, kind: EventKind::Detached }).collect()
}

/// Parse one chunk of whole lines (in `spare.text`). `clock`: where the clock stands before the
/// chunk, if known (else the chunk's first stamp decides, and the reader shifts its stamps).
/// `pids`: what the input's earlier lines told of the pid column, if known (else the chunk
/// starts knowing nothing, and the reader checks that nothing it read depended on it).
/// `splice`: the head of the previous chunk's last line, cut by strace's own message.
fn parse_chunk(
    seq: u64,
    spare: Spare,
    source: &str,
    clock: Option<ClockState>,
    pids: Option<&PidState>,
    splice: Option<String>,
) -> Batch {
    let Spare { text: bytes, pos, mut side, events: spare_events } = spare;
    let text = if simdutf8::basic::from_utf8(&bytes).is_ok() {
        // SAFETY: just checked to be UTF-8 (std's own check would read the chunk again)
        unsafe { String::from_utf8_unchecked(bytes) }
    } else {
        // strace escapes non-ASCII, but program output and old logs hold raw bytes
        String::from_utf8_lossy(&bytes).into_owned()
    };
    side.reset();
    let mut tally = FileTally::default();
    let mut n = 0u64;
    let mut done = None;
    let parsed = Parsed::new(Owner { text, side }, |o| {
        let (text, side) = (o.text.as_str(), &o.side);
        // about an event a line: room for that many, not more (peak RSS)
        let mut events: Vec<Event<'_>> = spare_events;
        events.reserve_exact(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
        let mut parser = Parser::new(source);
        parser.set_chunk_mode();
        if let Some(c) = clock {
            parser.seed_clock(c);
        }
        if let Some(p) = pids {
            parser.seed_pids(p);
        }
        if let Some(h) = splice {
            parser.seed_splice(h);
        }
        let nul = memchr::memchr(0, text.as_bytes()).is_some();
        parser.set_escapes_possible(memchr::memchr(0x1b, text.as_bytes()).is_some());
        if has_frames(text.as_bytes()) {
            // a -k log: its first call's frames are its own, not a stack without a call
            parser.expect_stacks();
        }
        let mut push = |e: &Event| events.push(own_event(text, side, e));
        for line in lines(text) {
            n += 1;
            feed_line(&mut parser, line, n, None, nul, &mut tally, &mut push);
        }
        parser.release_held(&mut push);
        done = Some(parser.finish_chunk());
        events
    });
    let (stats, end) = done.unwrap_or_default();
    Batch { seq, parsed, stats, end, lines: n, tally, pos }
}

/// Whether a chunk holds `-k` frame lines, by a look at its start (a -k log has a stack every
/// few lines; a log without frames pays one short search per chunk).
fn has_frames(b: &[u8]) -> bool {
    b.starts_with(b" > ") || memchr::memmem::find(&b[..b.len().min(64 << 10)], b"\n > ").is_some()
}

/// One line (with or without its newline) into the parser; NUL bytes mean binary data
/// (`nul`: the chunk has some, so look).
#[inline]
pub(crate) fn feed_line<F: FnMut(&Event)>(
    parser: &mut Parser,
    line: &str,
    n: u64,
    pid: Option<Tid>,
    nul: bool,
    tally: &mut FileTally,
    sink: &mut F,
) {
    let line = line.strip_suffix('\n').unwrap_or(line);
    tally.lines += 1;
    if nul && memchr::memchr(0, line.as_bytes()).is_some() {
        tally.binary += 1;
        parser.binary_line(&line.replace('\0', "\\0"), n);
        return;
    }
    // the rows of a `strace -c` table are strace lines too
    let before = parser.stats().events + parser.stats().strace_c_table.len() as u64;
    parser.parse_line(line, n, pid, sink);
    tally.events += parser.stats().events + parser.stats().strace_c_table.len() as u64 - before;
}

/// Cut a stream into chunks of whole lines, handed out as slices of one reused buffer (no
/// allocation or zeroing per chunk). Lines longer than `max_line` are cut. `send` gets each
/// chunk and the input bytes consumed up to its end (chunks and skipped tails of cut lines);
/// reading stops when it returns false, or when `give_up` says so of the bytes consumed so far.
/// Returns the number of cut lines and the read error that ended the input early, if any.
fn read_chunks<R: Read, F: FnMut(&[u8], u64) -> bool>(
    mut r: R,
    chunk: usize,
    max_line: usize,
    give_up: &dyn Fn(u64) -> bool,
    mut send: F,
) -> (u64, Option<io::Error>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut start = 0; // first byte not yet handed out
    let mut end = 0; // end of the data read
    let mut cut = 0u64;
    let mut skipping = false;
    // a line over the limit: its first `max_line` bytes, held until its last ones are read
    let mut held: Vec<u8> = Vec::new();
    let mut tail: Vec<u8> = Vec::new();
    // whether the held line starts as a call does (then it is a strace line, however long)
    let mut held_call = false;
    // bytes of such lines so far: they are strace lines, not bytes without one
    let mut in_calls = 0u64;
    let mut line_start = 0u64;
    // input bytes before buf[0]
    let mut base = 0u64;
    loop {
        let pos = base + start as u64;
        let long_call = skipping && held_call;
        if long_call && pos - line_start > MAX_CALL_LINE {
            // a call line of more than 16 GiB is not strace's: stop as for junk
            return (cut, None);
        }
        if !long_call && give_up(pos.saturating_sub(in_calls)) {
            if skipping {
                // the line read so far, as one unreadable line of the input
                let mut line = std::mem::take(&mut held);
                line.extend_from_slice(&tail);
                line.push(b'\n');
                send(&line, pos);
            }
            return (cut, None);
        }
        // room for a chunk after the carried partial line
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            base += start as u64;
            start = 0;
        }
        let want = if end < chunk { chunk } else { end + chunk.max(4096) };
        let mut err = None;
        let mut eof = false;
        while end < want {
            if end == buf.len() {
                // grow by doubling up to `want`: a huge chunk size costs nothing on a small
                // input; zeroed once, later chunks overwrite old data in place
                let grown = (buf.len() * 2).clamp(64 * 1024, want.max(64 * 1024));
                buf.resize(grown, 0);
            }
            let stop = want.min(buf.len());
            match r.read(&mut buf[end..stop]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(k) => {
                    end += k;
                    // a short read from a pipe (live tracing): hand out what is complete now
                    // rather than wait for a full chunk; files fill the buffer and never stop here
                    if end < stop && memchr::memrchr(b'\n', &buf[end - k..end]).is_some() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    err = Some(e);
                    eof = true;
                    break;
                }
            }
        }
        if skipping {
            // still inside a cut line: keep its last bytes, up to its end
            let (upto, done) = match memchr::memchr(b'\n', &buf[start..end]) {
                Some(i) => (start + i, true),
                None => (end, false),
            };
            keep_tail(&mut tail, &buf[start..upto]);
            if done || eof {
                // the line as its head and its tail: a call keeps its return value and
                // duration (a 17 MiB write's `= 17825792 <0.01>`), its payload is shortened
                let mut line = std::mem::take(&mut held);
                line.extend_from_slice(&tail);
                line.push(b'\n');
                tail.clear();
                skipping = false;
                start = if done { upto + 1 } else { end };
                if held_call {
                    in_calls += base + start as u64 - line_start;
                }
                if !send(&line, base + start as u64) {
                    return (cut, None);
                }
            } else {
                start = end;
            }
        }
        if eof {
            if start < end {
                send_lines(&buf[start..end], base + end as u64, chunk, max_line, &mut cut, &mut send);
            }
            return (cut, err);
        }
        // a full buffer ends where the next chunk may start on its own; a short read (a pipe
        // from live strace) hands out every complete line now, as it must not wait
        let at = if end >= want {
            safe_cut(&buf[start..end])
        } else if has_frames(&buf[start..end]) {
            frames_cut(&buf[start..end])
        } else {
            memchr::memrchr(b'\n', &buf[start..end])
        };
        match at {
            Some(i) => {
                let stop = start + i + 1;
                if !send_lines(&buf[start..stop], base + stop as u64, chunk, max_line, &mut cut, &mut send) {
                    return (cut, None);
                }
                start = stop;
            }
            None if end - start >= max_line => {
                // one line longer than the limit: hold its start, read on to its end
                held.clear();
                held.extend_from_slice(&buf[start..start + max_line]);
                held_call = looks_like_a_call(&held);
                line_start = base + start as u64;
                keep_tail(&mut tail, &buf[start + max_line..end]);
                cut += 1;
                skipping = true;
                start = end;
            }
            None => {}
        }
    }
}

/// The longest call line read through (16 GiB); the reader stops at a longer one as at junk.
const MAX_CALL_LINE: u64 = 16 << 30;

/// Bytes kept of the end of a line over the limit (its return value, duration, the end of its
/// last argument).
const LINE_TAIL: usize = 64 << 10;

/// Hand out `data` (whole lines, ending at input position `end`) through `send`. A chunk larger
/// than `max_line` can hold a longer line whole: such a line is handed out as its first
/// `max_line` and its last [`LINE_TAIL`] bytes, as a line that outruns a chunk is, so what the
/// reader gives never depends on the chunk size. Returns `send`'s answer.
fn send_lines<F: FnMut(&[u8], u64) -> bool>(
    data: &[u8],
    end: u64,
    chunk: usize,
    max_line: usize,
    cut: &mut u64,
    send: &mut F,
) -> bool {
    if chunk <= max_line || data.len() <= max_line {
        return send(data, end);
    }
    let at = |i: usize| end - (data.len() - i) as u64;
    let (mut from, mut line) = (0, 0);
    for nl in memchr::memchr_iter(b'\n', data).chain((data.last() != Some(&b'\n')).then_some(data.len())) {
        if nl - line > max_line {
            if from < line && !send(&data[from..line], at(line)) {
                return false;
            }
            let mut l = data[line..line + max_line].to_vec();
            l.extend_from_slice(&data[nl.saturating_sub(LINE_TAIL).max(line + max_line)..nl]);
            l.push(b'\n');
            *cut += 1;
            let next = (nl + 1).min(data.len());
            if !send(&l, at(next)) {
                return false;
            }
            from = next;
        }
        line = nl + 1;
    }
    from >= data.len() || send(&data[from..], end)
}

/// Keep the last [`LINE_TAIL`] bytes of `tail` followed by `more`.
fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    let more = &more[more.len().saturating_sub(LINE_TAIL)..];
    tail.extend_from_slice(more);
    if tail.len() > LINE_TAIL {
        tail.drain(..tail.len() - LINE_TAIL);
    }
}

/// Whether a line starts as a strace call line does: a pid, `[pid N]`, a time or nothing,
/// then `name(` within its first 200 bytes. Junk (`/dev/zero`, a binary) does not.
fn looks_like_a_call(line: &[u8]) -> bool {
    let head = &line[..line.len().min(200)];
    if !head.first().is_some_and(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || *c == b'[' || *c == b'<') {
        return false;
    }
    head.iter().enumerate().any(|(i, &c)| {
        c == b'(' && i > 0 && (head[i - 1].is_ascii_lowercase() || head[i - 1].is_ascii_digit() || head[i - 1] == b'_')
    })
}

/// Where to end a chunk in `b` (the index of a newline): the last line end after which the
/// next chunk may begin on its own. Not between two lines the sequential reader joins: a
/// syscall line cut by the program's output and its continuation (`) = 2`, `<unfinished
/// ...>`, a detach note, blank lines between them), or a line cut by strace's own `strace:
/// Process N attached`. Checked at chunk borders only, on the bytes already read; if no line
/// end in the last 1,000 qualifies, the last one is used.
fn safe_cut(b: &[u8]) -> Option<usize> {
    let mut ends = memchr::memrchr_iter(b'\n', b);
    let last = ends.next()?;
    let mut cut = last;
    // only -k frames followed each line end tried: read on, a call and its frames stay together
    let mut frames_only = true;
    for _ in 0..1000 {
        let next = &b[cut + 1..];
        if !may_be_frame(next) {
            frames_only = false;
            let line_start = memchr::memrchr(b'\n', &b[..cut]).map_or(0, |i| i + 1);
            if !joinable(&b[line_start..cut], next) {
                return Some(cut);
            }
        }
        match ends.next() {
            Some(i) => cut = i,
            None => break,
        }
    }
    (!frames_only).then_some(last)
}

/// Whether the line starting `next` is (or, read in part, may be) a `-k` frame, which belongs
/// with the call before it.
fn may_be_frame(next: &[u8]) -> bool {
    next.starts_with(b" > ") || (next.len() < 3 && b" > ".starts_with(next))
}

/// Where to end what a short read (a pipe from live strace) hands out of `b`, which has `-k`
/// frames: after the last call whose frames are all read, that is before the last line that
/// begins and is not a frame.
fn frames_cut(b: &[u8]) -> Option<usize> {
    memchr::memrchr_iter(b'\n', b).find(|&i| !may_be_frame(&b[i + 1..]))
}

/// Whether the sequential reader could join `prev` and the line starting `next`. A line not
/// read whole could be anything; a whole one is judged by the parser's own test
/// ([`crate::strace::could_continue`]).
fn joinable(prev: &[u8], next: &[u8]) -> bool {
    if memchr::memmem::find(prev, b"strace: Process ").is_some_and(|i| i > 0) {
        return true;
    }

    let line = &next[..memchr::memchr(b'\n', next).unwrap_or(next.len())];
    if line.len() == next.len() {
        return true; // not read whole: the cut moves back one line
    }
    std::str::from_utf8(line).map_or(true, crate::strace::could_continue)
}

/// Lines of a chunk, with their newline, split by SIMD search.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut from = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        let to = match ends.next() {
            Some(i) => i + 1,
            None if from < text.len() => text.len(),
            None => return None,
        };
        // a newline is a char boundary: this cannot fail
        let l = text.get(from..to);
        from = to;
        l
    })
}

/// What the parallel reader returns besides the events.
pub struct Outcome {
    pub stats: ParseStats,
    pub tally: FileTally,
    pub cut_lines: u64,
    pub error: Option<io::Error>,
    pub bytes: u64,
    /// Chunks the input was cut into.
    pub chunks: u64,
    /// Reading stopped after this many bytes: [`UNRECOGNISED_LIMIT`] bytes in a row held no
    /// strace line.
    pub stopped_at: Option<u64>,
}

/// Read one input on `workers` threads (1 = in this thread) and give its events to `sink`
/// in input order.
pub fn read_parallel<R: Read + Send, F: FnMut(&Event)>(
    input: R,
    source: &str,
    workers: usize,
    chunk: usize,
    max_line: usize,
    sink: &mut F,
) -> Outcome {
    read_parallel_as(input, source, None, workers, chunk, max_line, sink)
}

/// [`read_parallel`] of a file whose lines without a pid column are process `pid`'s (an
/// `strace -ff` file, named `NAME.PID`).
pub fn read_parallel_as<R: Read + Send, F: FnMut(&Event)>(
    input: R,
    source: &str,
    pid: Option<u32>,
    workers: usize,
    chunk: usize,
    max_line: usize,
    sink: &mut F,
) -> Outcome {
    let pid = pid.map(Tid);
    let mut glue = Glue::new(source);
    glue.default_pid = pid;
    let mut bytes = 0u64;
    let mut chunks = 0u64;
    if workers <= 1 {
        // one core: one parser straight through, nothing to pack or join
        let mut parser = Parser::new(source);
        let mut tally = FileTally::default();
        let mut line_no = 0u64;
        // input bytes up to the end of the last chunk with a strace line
        let good = std::cell::Cell::new(0u64);
        let stopped_at = std::cell::Cell::new(None);
        let give_up = |pos: u64| {
            let stop = pos.saturating_sub(good.get()) > UNRECOGNISED_LIMIT;
            if stop {
                stopped_at.set(Some(pos));
            }
            stop
        };
        let (cut, error) = read_chunks(input, chunk, max_line, &give_up, |c, pos| {
            let events = tally.events;
            bytes += c.len() as u64;
            chunks += 1;
            // strace escapes non-ASCII, but program output and old logs hold raw bytes
            let text = match simdutf8::basic::from_utf8(c) {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(_) => String::from_utf8_lossy(c),
            };
            let nul = memchr::memchr(0, text.as_bytes()).is_some();
            parser.set_escapes_possible(memchr::memchr(0x1b, text.as_bytes()).is_some());
            if chunks == 1 && has_frames(text.as_bytes()) {
                parser.expect_stacks();
            }
            for line in lines(&text) {
                line_no += 1;
                feed_line(&mut parser, line, line_no, pid, nul, &mut tally, sink);
            }
            if tally.events > events {
                good.set(pos);
            }
            true
        });
        let stopped_at = stopped_at.get();
        let stats = parser.finish(sink);
        tally.events = stats.events + stats.strace_c_table.len() as u64;
        return Outcome { stats, tally, cut_lines: cut, error, bytes, chunks, stopped_at };
    }
    // bytes up to the end of the last chunk with a strace line, as the consumer saw them
    let good = AtomicU64::new(0);
    let mut stopped_at = None;
    let (cut, error) = {
        std::thread::scope(|scope| {
            let (tx_in, rx_in) = sync_channel::<(u64, Spare)>(1);
            // at most IN_FLIGHT chunks between the reader and the in-order consumer: a token
            // per chunk, returned when its batch was analysed. Without it, a worker that was
            // descheduled let the others' batches pile up out of order (77 MB peak instead of
            // 48 on a loaded machine).
            let in_flight = IN_FLIGHT_PER_WORKER * workers + 2;
            let (tx_out, rx_out) = sync_channel::<Batch>(in_flight);
            let (tx_tok, rx_tok) = sync_channel::<Spare>(in_flight);
            for _ in 0..in_flight {
                let _ = tx_tok.send(Spare::default());
            }
            let rx_in = Arc::new(Mutex::new(rx_in));
            for _ in 0..workers {
                let rx_in = rx_in.clone();
                let tx_out = tx_out.clone();
                scope.spawn(move || {
                    yield_to_the_analysis();
                    loop {
                        let job = match rx_in.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok((seq, c)) = job else { return };
                        if tx_out.send(parse_chunk(seq, c, source, None, None, None)).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(tx_out);
            let good = &good;
            let reader = scope.spawn(move || {
                let mut seq = 0u64;
                let mut n = 0u64;
                let stopped = std::cell::Cell::new(None);
                let give_up = |pos: u64| {
                    let stop = pos.saturating_sub(good.load(Ordering::Relaxed)) > UNRECOGNISED_LIMIT;
                    if stop {
                        stopped.set(Some(pos));
                    }
                    stop
                };
                let r = read_chunks(input, chunk, max_line, &give_up, |c, pos| {
                    n += c.len() as u64;
                    let Ok(mut spare) = rx_tok.recv() else {
                        return false;
                    };
                    spare.text.clear();
                    spare.text.extend_from_slice(c);
                    spare.pos = pos;
                    let ok = tx_in.send((seq, spare)).is_ok();
                    seq += 1;
                    ok
                });
                (r, n, seq, stopped.get())
            });
            consume(rx_out, &mut glue, sink, tx_tok, good);
            match reader.join() {
                Ok((r, n, seqs, stopped)) => {
                    bytes = n;
                    chunks = seqs;
                    stopped_at = stopped;
                    r
                }
                Err(_) => (0, Some(io::Error::other("reader thread failed"))),
            }
        })
    };
    let (stats, tally) = glue.finish(sink);
    Outcome { stats, tally, cut_lines: cut, error, bytes, chunks, stopped_at }
}

/// Parse workers give way to the in-order analysis thread: it is the pipeline's narrowest
/// stage, and with more runnable threads than cores the scheduler had shared its core with
/// them evenly. Five steps of nice for the workers alone measured 0.83 -> 0.75 s on the
/// two-core benchmark (bench/RESULTS.md); with a core to spare it changes nothing.
fn yield_to_the_analysis() {
    let tid = nix::unistd::gettid().as_raw() as nix::libc::id_t;
    // SAFETY: getpriority and setpriority only read and set this thread's nice value
    unsafe {
        let now = nix::libc::getpriority(nix::libc::PRIO_PROCESS, tid);
        nix::libc::setpriority(nix::libc::PRIO_PROCESS, tid, (now + WORKER_NICE).min(19));
    }
}

/// How much nicer a parse worker is than the thread that reads its batches.
const WORKER_NICE: i32 = 5;

/// Take batches in sequence order, whatever order the workers finish them in.
/// Each batch taken gives its buffers back to the reader (its token: at most so many in flight).
/// `good`: the bytes up to the end of the last batch that held a strace line.
fn consume<F: FnMut(&Event)>(
    rx: Receiver<Batch>,
    glue: &mut Glue,
    sink: &mut F,
    tokens: SyncSender<Spare>,
    good: &AtomicU64,
) {
    let mut waiting: BTreeMap<u64, Batch> = BTreeMap::new();
    let mut next = 0u64;
    for b in rx {
        waiting.insert(b.seq, b);
        while let Some(b) = waiting.remove(&next) {
            if b.tally.events > 0 {
                good.store(b.pos, Ordering::Relaxed);
            }
            let spare = glue.take(b, sink);
            next += 1;
            let _ = tokens.try_send(spare);
        }
    }
}

/// Joins batches: carries pending calls, clocks and line numbers across chunk borders.
struct Glue {
    parser: Parser,
    source: String,
    stats: ParseStats,
    tally: FileTally,
    lines: u64,
    /// The input's clock after the chunks taken so far, as the sequential reader has it.
    clock: ClockState,
    /// The pid column's state after the chunks taken so far, as the sequential reader has it.
    pids: PidState,
    /// The head of the last chunk's last line, cut by strace's own message.
    splice: Option<String>,
    default_pid: Option<Tid>,
    /// The last line of the previous batch, cut and waiting for its continuation.
    carried: Option<Dangling>,
    /// The stacks of the chunks taken so far (each chunk interns its own: its calls' ids are
    /// mapped to these).
    stacks: Option<syslint_event::StackTable>,
}

const DAY_NS: i64 = 86_400 * 1_000_000_000;

impl Glue {
    fn new(source: &str) -> Glue {
        Glue {
            parser: Parser::new(source),
            source: source.to_string(),
            stats: ParseStats { pid_style: "none", ..Default::default() },
            tally: FileTally::default(),
            lines: 0,
            clock: ClockState::default(),
            pids: PidState::default(),
            splice: None,
            default_pid: None,
            carried: None,
            stacks: None,
        }
    }

    /// What to add to the stamps of the chunk `e` ends, which started with no clock, to put
    /// them where the sequential reader puts them; the clock moves on past the chunk. `None`:
    /// no one amount does (the chunk is to be read again from [`Self::clock`]).
    fn settle_clock(&mut self, e: &ChunkEnd) -> Option<i64> {
        let c = e.clock;
        if self.clock.clock == Clock::None {
            // no stamp before the chunk: it read them as the sequential reader did
            self.clock = c;
            return Some(0);
        }
        match (e.first_tod, e.numbers) {
            (None, false) => Some(0),
            (Some(first), false) => {
                // times of day only: one comparison, with the last time of day before
                let mut shift = self.clock.day_offset;
                if self.clock.last_tod.is_some_and(|last| first + shift < last - DAY_NS / 2) {
                    shift += DAY_NS;
                }
                self.clock.day_offset = c.day_offset + shift;
                self.clock.last_tod = c.last_tod.map(|t| t + shift);
                Some(shift)
            }
            (None, true) if (c.clock == Clock::Relative) == (self.clock.clock == Clock::Relative) => {
                if c.clock != Clock::Relative {
                    return Some(0); // -ttt: numbers as they are
                }
                // -r: the sum of the deltas before; a sum past i64::MAX stops at it, so the
                // chunk's own sums may not be shifted then
                let base = self.clock.rel_acc;
                self.clock.rel_acc = base.checked_add(c.rel_acc)?;
                Some(base)
            }
            _ => None,
        }
    }

    /// Read a chunk again, in this thread, from the state the lines before it left as the
    /// sequential reader has it (`clock`, the pid column's, a cut line's `splice` head): for
    /// what a worker starting fresh could not know. The clock moves on past the chunk.
    fn reread(&mut self, mut b: Batch, clock: ClockState, splice: Option<String>) -> Batch {
        let events = b.parsed.with_dependent_mut(|_, events| recycle(std::mem::take(events)));
        let Owner { text, side } = b.parsed.into_owner();
        let spare = Spare { text: text.into_bytes(), pos: b.pos, side, events };
        let b = parse_chunk(b.seq, spare, &self.source, Some(clock), Some(&self.pids), splice);
        self.clock = b.end.clock;
        b
    }

    fn take<F: FnMut(&Event)>(&mut self, mut b: Batch, sink: &mut F) -> Spare {
        let clock_before = self.clock;
        let mut reread = false;
        let mut shift = match self.settle_clock(&b.end) {
            Some(shift) => shift,
            None => {
                // the chunk mixes clocks (strace never writes that)
                let head = self.splice.take();
                b = self.reread(b, clock_before, head);
                reread = true;
                0
            }
        };
        if let Some(head) = self.splice.take() {
            // the previous chunk's last line was cut by strace's own message: its rest is this
            // chunk's first line, which the worker read as a line of its own
            b = self.reread(b, clock_before, Some(head));
            reread = true;
            shift = 0;
        }
        let default_pid = self.default_pid.or(self.pids.default_pid);
        // the first line may continue the previous batch's last: the glue's parser, which
        // holds that line, reads it (as the sequential reader would, in that order)
        if let Some(d) = self.carried.take() {
            self.parser.inject_dangling(d);
        }
        let lead = std::mem::take(&mut b.end.lead);
        if !lead.is_empty() {
            let mapped = &mut |e: &Event| {
                let mut e = e.clone();
                e.tid = map_pid(e.tid, default_pid);
                sink(&e);
            };
            // with the pid column's state of the lines before them
            self.parser.seed_pids(&self.pids);
            for (k, line) in lead.iter().enumerate() {
                self.parser.parse_line(line, self.lines + 1 + k as u64, None, mapped);
            }
            self.pids = self.parser.pid_state();
            // a `-c` row one turned out to be goes before the chunk's own rows
            self.stats.strace_c_table.extend(self.parser.take_c_rows());
        }
        if b.lines > lead.len() as u64 {
            // the chunk's next line continues nothing (else it would have been given here too)
            self.parser.settle_dangling();
        }
        if !reread && self.pid_dependent(&b.end) {
            // the pid column's state mattered (a `-f` log written to a terminal: its shell's
            // lines carry no pid, its children's do)
            b = self.reread(b, clock_before, None);
            // its first line was read above
            b.end.lead.clear();
            reread = true;
            shift = 0;
        }
        // pid-less lines are mapped to the pid decided before the chunk: one decided inside it
        // applies from there on, as the chunk's parser applied it
        let start_default = self.pids.default_pid;
        if reread {
            self.pids = b.end.pids.clone();
        } else {
            // nothing in the chunk depended on the pid column's state (or nothing came before
            // it): add what it saw
            self.pids.absorb(&b.end.pids);
        }
        let default_pid = self.default_pid.or(start_default);
        let mut marks = std::mem::take(&mut b.end.marks).into_iter().peekable();
        let remap = b.stats.stacks.take().map(|t| self.stacks.get_or_insert_with(Default::default).absorb(t));
        let remap = |s: Option<syslint_event::StackId>| {
            let r = remap.as_ref()?;
            r.get(s?.0 as usize).copied().flatten()
        };
        b.parsed.with_dependent_mut(|_, events| {
            let n = events.len();
            for i in 0..=n {
                while let Some(m) = marks.next_if(|m| m.at as usize <= i) {
                    let ts = m.ts.map(|t| t.saturating_add(shift));
                    let mut what = map_mark(m.what, default_pid, shift);
                    if let Marked::Resumed { stack, .. } = &mut what {
                        *stack = remap(*stack);
                    }
                    let m = Mark { pid: map_pid(m.pid, default_pid), what, ..m };
                    self.parser.settle_mark(m, ts, self.lines, sink);
                }
                let Some(ev) = events.get_mut(i) else { break };
                ev.ts_ns = ev.ts_ns.map(|t| t.saturating_add(shift));
                ev.tid = map_pid(ev.tid, default_pid);
                if let EventKind::Syscall(sc) = &mut ev.kind {
                    if sc.pre.stack.is_some() {
                        sc.pre.stack = remap(sc.pre.stack);
                    }
                }
                let alias = matches!(ev.kind, EventKind::Alias { old: Tid(0) });
                if self.parser.has_pending(ev.tid) {
                    match ev.kind {
                        // the call pending from an earlier chunk never came back
                        EventKind::Syscall(_) | EventKind::Exited { .. } | EventKind::Killed { .. } => {
                            self.parser.drop_pending(ev.tid, sink);
                        }
                        // `Process N detached` in the middle of it
                        EventKind::Detached => self.parser.detach_pending(ev.tid, sink),
                        _ => {}
                    }
                }
                sink(ev);
                if alias {
                    // pid-less lines were this pid's: so is a pid-less call pending from before
                    // (after the alias, as the sequential reader moves it)
                    self.parser.rename_pending(Tid(0), ev.tid, sink);
                }
            }
        });
        for (pid, ts, text) in std::mem::take(&mut b.end.pending) {
            self.parser.inject_pending(map_pid(pid, default_pid), ts.map(|t| t.saturating_add(shift)), text, sink);
        }
        self.splice = b.end.splice.take();
        if let Some(mut d) = b.end.dangling.take() {
            d.pid = map_pid(d.pid, default_pid);
            d.ts = d.ts.map(|t| t.saturating_add(shift));
            d.line_no += self.lines;
            self.carried = Some(d);
        }

        let mut st = std::mem::take(&mut b.stats);
        for u in &mut st.unparsed_samples {
            u.line += self.lines;
        }
        self.lines += b.lines;
        self.stats.merge(st);
        self.tally.lines += b.tally.lines;
        self.tally.events += b.tally.events;
        self.tally.binary += b.tally.binary;
        let events = b.parsed.with_dependent_mut(|_, events| recycle(std::mem::take(events)));
        let Owner { text, side } = b.parsed.into_owner();
        Spare { text: text.into_bytes(), pos: 0, side, events }
    }

    fn finish<F: FnMut(&Event)>(mut self, sink: &mut F) -> (ParseStats, FileTally) {
        if let Some(d) = self.carried.take() {
            self.parser.inject_dangling(d);
        }
        if let Some(head) = self.splice.take() {
            // the input ended with the head of a cut line
            self.parser.unparsed(&head, self.lines);
        }
        let glue_stats = self.parser.finish(sink);
        // the glue parser saw only joined and flushed calls: its line count is not lines
        let lines = self.stats.lines;
        self.stats.merge(glue_stats);
        self.stats.lines = lines;
        self.stats.clock = self.clock.clock;
        self.stats.stacks = self.stacks.take();
        self.tally.events = self.stats.events + self.stats.strace_c_table.len() as u64;
        (self.stats, self.tally)
    }
}

impl Glue {
    /// Whether what a chunk read, from a fresh state, could differ from what the sequential
    /// reader reads with the state it has there: the chunk decided whose the pid-less lines
    /// are, or it mixed `[pid N]` lines with pid-less ones (an unfinished pid-less call resumed
    /// under a pid), or it has `[pid N]` lines where the input so far had pid-less lines and no
    /// decision (its first unannounced pid decides). From a fresh state nothing can differ.
    fn pid_dependent(&self, e: &ChunkEnd) -> bool {
        if self.pids.is_fresh() {
            return false;
        }
        e.pid_decided
            || (e.bracketed
                && (e.pids.seen_unprefixed || (self.pids.seen_unprefixed && self.pids.default_pid.is_none())))
    }
}

/// A mark's pids and stamps in the reader's terms.
fn map_mark(what: Marked, default: Option<Tid>, shift: i64) -> Marked {
    match what {
        Marked::Superseded { old, held } => Marked::Superseded {
            old: map_pid(old, default),
            held: held.map(|(ts, text)| (ts.map(|t| t.saturating_add(shift)), text)),
        },
        w => w,
    }
}

/// Lines without a pid column in later chunks belong to the process an earlier chunk named.
fn map_pid(pid: Tid, default: Option<Tid>) -> Tid {
    if pid == Tid(0) {
        default.unwrap_or(Tid(0))
    } else {
        pid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &[u8], workers: usize, chunk: usize) -> (Vec<String>, Outcome) {
        let mut out = Vec::new();
        let o = read_parallel(text, "t", workers, chunk, 1 << 20, &mut |e: &Event| out.push(format!("{e:?}")));
        (out, o)
    }

    #[test]
    fn a_terminal_f_log_reads_the_same_in_chunks() {
        // `strace -f -tt sh -c '/bin/true; /bin/true' 2> FILE`: the shell's lines carry no pid
        // while it is traced alone, its children's carry `[pid N]`; the first unannounced pid
        // decides whose the pid-less lines are, and an unfinished pid-less vfork is resumed
        // under that pid
        let text = regression("terminal-f-log-unprefixed-lines-across-chunks.strace");
        let (want, _) = events(&text, 1, 1 << 30);
        assert!(want.iter().any(|e| e.contains("Alias { old: Tid(0) }")), "the log decides an alias");
        for chunk in [256, 300, 512, 1000, 2048, 4096, 8192] {
            let (got, _) = events(&text, 2, chunk);
            assert_eq!(got, want, "chunk {chunk}");
        }
    }

    #[test]
    fn strace_messages_cutting_lines_at_chunk_borders_read_the_same() {
        // `strace -f -tt sh -c 'for i in 1 2 3 4 5 6 7 8; do (sleep 0.01 & /bin/true; wait);
        // done' 2> FILE` (strace 6.1): `strace: Process N attached` lands in the middle of
        // another process's line 21 times, whose rest is the next line; at a chunk border
        // that rest is the next chunk's first line, whatever it looks like
        let text = regression("terminal-f-log-spliced-attach-notes.strace");
        let (want, one) = events(&text, 1, 1 << 30);
        assert_eq!(one.stats.unparsed, 0);
        for chunk in (256..4096).step_by(97).chain([8192, 65536]) {
            let (got, o) = events(&text, 2, chunk);
            assert_eq!(got, want, "chunk {chunk}");
            assert_eq!(o.stats.unparsed, 0, "chunk {chunk}");
        }
    }

    fn regression(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/strace_log").join(name);
        std::fs::read(p).expect("regression input")
    }

    fn fixture(name: &str) -> Vec<u8> {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces").join(name);
        std::fs::read(p).expect("fixture")
    }

    #[test]
    fn a_batch_vector_is_reused_not_reallocated() {
        let v: Vec<Event<'_>> = Vec::with_capacity(1000);
        let at = v.as_ptr() as usize;
        let r = recycle(v);
        assert_eq!((r.as_ptr() as usize, r.capacity()), (at, 1000));
    }

    #[test]
    fn tiny_chunks_give_the_same_events() {
        // unfinished/resumed pairs across threads, -r deltas, signals, kills, attach
        for name in [
            "threads.f-tt-T-yy.strace",
            "threads.f-stderr-tt-T.strace",
            "stat1000.r.strace",
            "signals.f-tt-T.strace",
            "netio.f-tt-T-yy.strace",
            "sleeper.attach-stderr.strace",
        ] {
            let text = fixture(name);
            let (want, one) = events(&text, 1, 1 << 30);
            assert_eq!(one.chunks, 1);
            for (workers, chunk) in [(1, 300), (2, 300), (3, 1000)] {
                let (got, o) = events(&text, workers, chunk);
                assert!(o.chunks as usize >= text.len() / chunk / 2, "{name}: only {} chunks", o.chunks);
                assert_eq!(got.len(), want.len(), "{name} ({workers} workers, {chunk} B)");
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(g, w, "{name} ({workers} workers, {chunk} B): event {i}");
                }
                assert_eq!(o.stats.lines, one.stats.lines);
                assert_eq!(o.stats.resumed_pairs, one.stats.resumed_pairs, "{name}");
                assert_eq!(o.stats.unparsed, one.stats.unparsed, "{name}");
            }
        }
    }

    #[test]
    fn lines_cut_by_program_output_join_across_any_chunk_border() {
        // strace and the program shared stderr: `write(2, "9,\n", 39,` then `) = 3`
        let text = fixture("interleave.stderr-T.strace");
        let (want, one) = events(&text, 1, 1 << 30);
        assert!(one.stats.rejoined >= 100, "{}", one.stats.rejoined);
        for chunk in 256..=420 {
            let (got, o) = events(&text, 2, chunk);
            let first = got.iter().zip(&want).position(|(g, w)| g != w);
            assert!(got.len() == want.len() && first.is_none(), "chunks of {chunk} B: event {first:?} differs");
            assert_eq!(o.stats.unparsed, one.stats.unparsed, "chunks of {chunk} B");
        }
    }

    /// The parallel reader gives the sequential reader's events and counts with chunks of
    /// every size from one line up (of some 400 sizes in a longer text).
    fn stacks_fixture(name: &str) -> String {
        use std::io::Read;
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/stacks/traces").join(name);
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(p).expect("fixture")).read_to_string(&mut s).expect("gzip");
        s
    }

    /// The calls (name, pid) and the frames of their stacks, as one reading gives them.
    fn calls_with_frames(text: &str, workers: usize, chunk: usize) -> (Vec<String>, ParseStats) {
        let mut calls = Vec::new();
        let o = read_parallel(text.as_bytes(), "t", workers, chunk, 1 << 20, &mut |e: &Event| {
            if let EventKind::Syscall(sc) = &e.kind {
                calls.push((e.tid, sc.name.to_string(), sc.pre.stack));
            }
        });
        let t = o.stats.stacks.clone().unwrap_or_default();
        let shown = calls
            .into_iter()
            .map(|(tid, name, s)| {
                let describe = |f: &syslint_event::Frame| {
                    let base = f.module.as_deref().map_or("", |m| m.rsplit('/').next().unwrap_or(m));
                    match &f.symbol {
                        Some(s) => format!("{s} ({base})"),
                        None => format!("{base}+{:#x}", f.addr),
                    }
                };
                let frames: Vec<String> = s.map(|s| t.frames_of(s).map(describe).collect()).unwrap_or_default();
                format!("{tid} {name} <- {}", frames.join(" <- "))
            })
            .collect();
        (shown, o.stats)
    }

    #[test]
    fn k_frames_stay_with_their_call_across_chunk_borders() {
        // strace -f -k of a thread's poll spin (tests/fixtures/stacks/record.sh): the main
        // thread's polls go unfinished and resume around the other thread's lines, and each
        // resumption is followed by its frames
        let text = stacks_fixture("deep.f-k-tt-T.strace.gz");
        let (want, st) = calls_with_frames(&text, 1, 1 << 30);
        assert_eq!(st.unparsed, 0);
        assert_eq!(st.stacks_unattached, 0, "every stack follows a call");
        // two threads' exit(0) and the process's exit_group(0): printed after `+++ exited`
        assert_eq!(st.stacks_at_exit, 3);
        assert!(st.stacks_attached > 900 && st.stacks_attached + 3 == st.syscalls, "{st:?}");
        let polls: Vec<&String> = want.iter().filter(|c| c.contains(" poll <- ")).collect();
        assert!(polls.len() > 900);
        for p in &polls {
            assert!(p.contains("poll (libc.so.6) <- wait_for_reply (spin) <- serve (spin) <- main (spin)"), "{p}");
        }
        for chunk in [300, 4096, 20_000, 65_536] {
            let (got, st2) = calls_with_frames(&text, 2, chunk);
            assert_same(&want, &got, &format!("chunks of {chunk} B"));
            assert_eq!((st2.stacks_attached, st2.stacks_unattached), (st.stacks_attached, 0), "chunks of {chunk} B");
        }
    }

    #[test]
    fn garbled_frames_are_unparsed_lines_and_the_rest_is_read() {
        let text = stacks_fixture("deep.f-k-tt-T.strace.gz");
        // a frame cut short in the middle of the log (as a disk that filled up leaves it)
        let at = text.find(" > /usr/lib/x86_64-linux-gnu/libc.so.6(poll+0x4f)").expect("a poll frame");
        let cut = format!("{}{}", &text[..at + 45], &text[text[at..].find('\n').unwrap() + at..]);
        let (calls, st) = calls_with_frames(&cut, 1, 1 << 30);
        assert_eq!(st.unparsed, 1);
        assert_eq!(st.unparsed_samples[0].text, &text[at..at + 45]);
        let line = text[..at].matches('\n').count() as u64 + 1;
        assert_eq!(st.unparsed_samples[0].line, line);
        assert_eq!(calls.len(), calls_with_frames(&text, 1, 1 << 30).0.len(), "the rest is read");
    }

    #[test]
    fn the_shared_corpus_k_log_reads_with_its_stacks() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/strace-corpus/stacktrace-k-f-t-2025-strace6.strace");
        let Ok(text) = std::fs::read_to_string(&p) else {
            eprintln!("skipped: {} is absent", p.display());
            return;
        };
        let (want, st) = calls_with_frames(&text, 1, 1 << 30);
        assert_eq!(st.unparsed, 0);
        assert_eq!(st.stacks_unattached, 0);
        assert_eq!(st.stacks_attached, st.syscalls);
        // its first call, execve, has its one ld.so frame (`> /usr/lib/ld-linux-x86-64.so.2() [0x1eb40]`)
        assert!(want[0].contains("execve <- ld-linux-x86-64.so.2+0x1eb40"), "{}", want[0]);
        for chunk in [200, 1000, 5000] {
            assert_eq!(calls_with_frames(&text, 2, chunk).0, want, "chunks of {chunk} B");
        }
    }

    /// `got` is `want`, else the first item that differs is shown.
    fn assert_same(want: &[String], got: &[String], what: &str) {
        let first = (0..want.len().max(got.len())).find(|&i| want.get(i) != got.get(i));
        assert!(
            first.is_none(),
            "{what}: item {first:?} differs:\n{:?}\n{:?}",
            want.get(first.unwrap_or(0)),
            got.get(first.unwrap_or(0))
        );
    }

    fn same_at_every_chunk_size(text: &str) {
        let (want, one) = events(text.as_bytes(), 1, 1 << 30);
        for chunk in (8..text.len()).step_by(1 + text.len() / 400) {
            let (got, o) = events(text.as_bytes(), 2, chunk);
            assert_same(&want, &got, &format!("chunks of {chunk} B of\n{text}\n"));
            assert_eq!(o.stats.unparsed, one.stats.unparsed, "chunks of {chunk} B");
            assert_eq!(o.stats.resumed_pairs, one.stats.resumed_pairs, "chunks of {chunk} B");
            assert_eq!(o.stats.never_resumed, one.stats.never_resumed, "chunks of {chunk} B");
        }
    }

    #[test]
    fn stamps_are_placed_on_the_time_line_as_the_sequential_reader_places_them() {
        // times of day jumping back less than 12 h, twice: no day added, as each stamp is
        // compared with the one before it (a chunk starting at 07:00 was compared with 20:00)
        same_at_every_chunk_size(
            "1 20:00:00.000000 getpid() = 1\n1 20:00:00.100000 getpid() = 1\n1 09:00:00.000000 getpid() = 1\n\
             1 09:00:00.100000 getpid() = 1\n1 07:00:00.000000 getpid() = 1\n1 07:00:00.100000 getpid() = 1\n",
        );
        // a number where the time of day should be (a line with two pid columns, `3017  10562
        // 16:25:44.865505 execve(`): taken as it is, and not the time of day the next one is
        // compared with (a chunk starting there put the rest a day later)
        same_at_every_chunk_size(
            "3017  19:20:28.555069 getpid() = 1\n3017  19:20:28.555070 getpid() = 1\n3017  10562 16:25:44.865505 getpid() = 1\n\
             3017  19:20:28.555615 getpid() = 1\n3017  19:20:28.555661 getpid() = 1\n",
        );
        // midnight passed, twice, with a resumed call without -T across it
        same_at_every_chunk_size(
            "1 23:59:59.100000 read(3, <unfinished ...>\n2 23:59:59.200000 getpid() = 2\n\
             2 00:00:00.100000 getpid() = 2\n1 00:00:00.300000 <... read resumed>\"x\", 1) = 1\n\
             1 12:00:00.000000 getpid() = 1\n1 23:00:00.000000 getpid() = 1\n1 00:00:01.000000 getpid() = 1\n",
        );
        // a -r log with a time of day in it (strace never writes one): the time of day is taken
        // as it is, the deltas go on summing
        same_at_every_chunk_size(
            "1 18 set(\n12:16:849 binf(\", 16) = 0 <CK\n1 0.5 getpid() = 1\n1 0.25 getpid() = 1\n",
        );
        same_at_every_chunk_size(
            "1 0.100000 read(3, <unfinished ...>\n1 10:00:00.000000 getpid() = 1\n1 0.200000 getpid() = 1\n\
             1 0.300000 <... read resumed>\"x\", 1) = 1\n1 0.400000 getpid() = 1\n",
        );
        // times of day first, then numbers (taken as they are), then a delta-first chunk
        same_at_every_chunk_size(
            "1 10:00:00.000000 getpid() = 1\n1 0.5 getpid() = 1\n1 0.25 getpid() = 1\n1 0.125 getpid() = 1\n\
             1 10:00:01.000000 getpid() = 1\n",
        );
        // -ttt first, then small numbers: all taken as they are
        same_at_every_chunk_size(
            "1 1700000000.000001 getpid() = 1\n1 0.5 getpid() = 1\n1 0.25 read(3, <unfinished ...>\n1 0.125 getpid() = 1\n",
        );
        // -r deltas whose sum passes i64::MAX nanoseconds: it stops there, in any chunk
        let mut big = String::new();
        for _ in 0..50 {
            big.push_str("1 99999999.5 read(3, <unfinished ...>\n1 99999999.5 <... read resumed>) = 1\n");
        }
        same_at_every_chunk_size(&big);
    }

    #[test]
    fn calls_left_unfinished_in_one_chunk_end_where_the_sequential_reader_ends_them() {
        // a second unfinished call of a thread whose first is pending from an earlier chunk:
        // the first ends there, before the next events (it ended at the chunk's end)
        same_at_every_chunk_size(
            "2 recvfrom(4,  <unfinished ...>\n1 write(3, \"W\", 1 <unfinished ...>\n\
             2 recvfrom(4,  <unfinished ...>\n1 <... write resumed>) = 1\n2 <... recvfrom resumed>\"x\", 1, 0, NULL, NULL) = 1\n",
        );
        // `Process N detached` while its call is pending from an earlier chunk: the call ends
        // cut by the detach, before the detach
        same_at_every_chunk_size(
            "1 read(3, <unfinished ...>\n2 getpid() = 2\n2 getpid() = 2\nstrace: Process 1 detached\n2 getpid() = 2\n",
        );
        // a thread's execve pending from an earlier chunk resumes under the leader's pid
        same_at_every_chunk_size(
            "2 execve(\"/bin/true\", [\"true\"], 0x0 /* 1 var */ <unfinished ...>\n1 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n\
             3 getpid() = 3\n1 +++ superseded by execve in pid 2 +++\n1 <... execve resumed>) = 0\n1 getpid() = 1\n",
        );
        same_at_every_chunk_size(
            "2 execve(\"/bin/true\", [\"true\"], 0x0 /* 1 var */ <unfinished ...>\n3 getpid() = 3\n\
             1 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n1 +++ superseded by execve in pid 2 +++\n3 getpid() = 3\n\
             1 <... execve resumed>) = 0\n",
        );
        // the leader's own call pending when it is superseded never came back
        same_at_every_chunk_size(
            "1 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n2 execve(\"/bin/true\", [], 0x0 <unfinished ...>\n\
             1 +++ superseded by execve in pid 2 +++\n1 <... execve resumed>) = 0\n",
        );
        // a line cut by program output, ended by strace 4's detach note, while the thread had
        // a call pending
        same_at_every_chunk_size("1 read(3, <unfinished ...>\n1 write(1, \"x\"\nProcess 1 detached\n1 getpid() = 1\n");
    }

    #[test]
    fn long_lines_are_cut_and_truncated_input_reported() {
        let mut text = b"getpid() = 1\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 5000));
        text.extend(b"\ngetpid() = 1\n");
        let mut ev = 0;
        let o = read_parallel(&text[..], "t", 2, 512, 1024, &mut |_: &Event| ev += 1);
        assert_eq!(ev, 2);
        assert_eq!(o.cut_lines, 1);
        assert_eq!(o.stats.unparsed, 1);
    }
}
