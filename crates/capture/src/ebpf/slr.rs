//! `.slr`: syslint's recording of an eBPF capture. The kernel's records as they came (before
//! expansion of Repeat records, so a spinning program records small), zstd-compressed.
//! Versioned and documented in docs/slr.md; `syslint analyze`/`diff` read it,
//! `syslint export --format strace` turns it into strace-style text.
//!
//! Layout of the decompressed stream: `SLR4` (`SLR1` to `SLR3` read too), a LEB128 length and a JSON header, then records,
//! each a tag byte and LEB128 fields (signed ones zigzag-encoded, timestamps as deltas from the
//! previous timestamp), and an end record with the lost counts. A file cut short (syslint
//! killed) reads up to the last whole record, with a warning.

use super::format::Known;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use syslint_bpf::{Data, DataKind, Lost, Options, Record};
use syslint_event::SampledStacks;

/// What this version writes. Version 4 adds the sampled call stacks (`T_STACK`, `T_SAMPLES`,
/// `T_STACK_NOTE`, before the end record); version 3 signal deliveries (`T_SIGNAL`); version 2
/// sums a repeat's durations per position (`T_REPEAT2`); version 1 files (one sum per repeat,
/// `T_REPEAT`) are still read.
pub const MAGIC: &[u8; 4] = b"SLR4";
/// Every magic that is read.
const MAGICS: [&[u8; 4]; 4] = [b"SLR1", b"SLR2", b"SLR3", b"SLR4"];
const T_SYSCALL: u8 = 1;
/// Version 1's repeat: one duration sum for all the calls (written no more).
const T_REPEAT: u8 = 2;
/// A repeat with a duration sum per position in the repetition.
const T_REPEAT2: u8 = 7;
const T_FORK: u8 = 3;
const T_EXEC: u8 = 4;
const T_EXIT: u8 = 5;
const T_KNOWN: u8 = 6;
/// A thread as /proc described it when attaching (version 2).
const T_TASK: u8 = 8;
/// A signal delivered to a thread (version 3).
const T_SIGNAL: u8 = 9;
/// A sampled stack, unwound and named at the end of the capture: the n-th is stack n (version 4).
const T_STACK: u8 = 10;
/// The calls of a thread and syscall a stack stands for (version 4).
const T_SAMPLES: u8 = 11;
/// What could not be named or kept of the stacks, in words (version 4).
const T_STACK_NOTE: u8 = 12;
const T_END: u8 = 0xff;
/// Stacks, sample rows and notes a recording may hold (a hostile one could claim billions).
const MAX_STACKS: usize = 1 << 20;
const MAX_SAMPLE_ROWS: usize = 1 << 22;
const MAX_STACK_NOTES: usize = 64;
const MAX_FRAMES: u64 = 1024;

/// The header: what was traced and how.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Header {
    pub tool: String,
    pub version: String,
    /// Syscall numbers are this architecture's.
    pub arch: String,
    /// Timestamps: CLOCK_MONOTONIC nanoseconds.
    pub clock: String,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC when the capture began (to print times of day).
    pub realtime_offset_ns: i64,
    pub what: String,
    pub payload_bytes: u16,
    pub path_bytes: u16,
    pub coalesce: bool,
}

fn put(w: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            w.push(b);
            return;
        }
        w.push(b | 0x80);
    }
}

fn put_i(w: &mut Vec<u8>, v: i64) {
    put(w, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put(w, b.len() as u64);
    w.extend_from_slice(b);
}

fn put_data(w: &mut Vec<u8>, d: &Data<'_>) {
    let kind = match d.kind {
        DataKind::None => 0u8,
        DataKind::Str => 1,
        DataKind::Bytes => 2,
        DataKind::Sockaddr => 3,
    };
    w.push(kind);
    if kind != 0 {
        w.push(u8::from(d.truncated) | u8::from(d.fault) << 1);
        put_bytes(w, d.bytes);
    }
}

/// Record encoding (shared by the live pipeline and files): timestamps are deltas, so one
/// encoder per stream, fed in order.
#[derive(Default)]
pub struct Encoder {
    last_ts: u64,
}

impl Encoder {
    fn ts(&mut self, buf: &mut Vec<u8>, t: u64) {
        put_i(buf, t as i64 - self.last_ts as i64);
        self.last_ts = t;
    }

    /// Append one record to `out`.
    pub fn encode(&mut self, r: &Record<'_>, out: &mut Vec<u8>) {
        match *r {
            Record::Syscall { tgid, tid, nr, args, ret, ts_enter, ts_exit, data1, data2, unfinished, began_before } => {
                out.push(T_SYSCALL);
                put(out, tgid as u64);
                put(out, tid as u64);
                put(out, nr as u64);
                for a in args {
                    put(out, a);
                }
                put_i(out, ret);
                self.ts(out, ts_enter);
                put(out, ts_exit.saturating_sub(ts_enter));
                out.push(u8::from(unfinished) | u8::from(began_before) << 1);
                put_data(out, &data1);
                put_data(out, &data2);
            }
            Record::Repeat { tgid, tid, period, count, first_ts, last_ts, dur_sum_ns } => {
                out.push(T_REPEAT2);
                put(out, tgid as u64);
                put(out, tid as u64);
                out.push(period);
                put(out, count as u64);
                self.ts(out, first_ts);
                put(out, last_ts.saturating_sub(first_ts));
                for &d in &dur_sum_ns[..usize::from(period).clamp(1, 2)] {
                    put(out, d);
                }
            }
            Record::Fork { parent_tgid, parent_tid, child_tgid, child_tid, is_thread, ts } => {
                out.push(T_FORK);
                for v in [parent_tgid, parent_tid, child_tgid, child_tid] {
                    put(out, v as u64);
                }
                out.push(u8::from(is_thread));
                self.ts(out, ts);
            }
            Record::Exec { tgid, tid, old_tid, filename, truncated, ts } => {
                out.push(T_EXEC);
                for v in [tgid, tid, old_tid] {
                    put(out, v as u64);
                }
                out.push(u8::from(truncated));
                self.ts(out, ts);
                put_bytes(out, filename);
            }
            Record::Signal { tgid, tid, sig, code, addr, ts } => {
                out.push(T_SIGNAL);
                put(out, tgid as u64);
                put(out, tid as u64);
                put_i(out, sig as i64);
                put_i(out, code as i64);
                put(out, addr);
                self.ts(out, ts);
            }
            Record::Exit { tgid, tid, exit_code, process_ended, ts } => {
                out.push(T_EXIT);
                put(out, tgid as u64);
                put(out, tid as u64);
                put_i(out, exit_code as i64);
                out.push(u8::from(process_ended));
                self.ts(out, ts);
            }
        }
    }
}

/// A `.slr` file being written: the header, then chunks of encoded records.
pub struct Writer {
    z: zstd::stream::write::Encoder<'static, BufWriter<std::fs::File>>,
    buf: Vec<u8>,
    enc: Encoder,
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC now (to print monotonic timestamps as times of day).
pub fn realtime_offset_ns() -> i64 {
    let mono = syslint_bpf::monotonic_now_ns() as i64;
    let real = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64);
    real - mono
}

impl Writer {
    pub fn create(path: &Path, what: &str, opts: &Options, known: &Known) -> io::Result<Writer> {
        Writer::create_at(path, what, opts, known, realtime_offset_ns())
    }

    /// [`Writer::create`] with the capture's realtime offset (the one its live report uses).
    pub fn create_at(
        path: &Path,
        what: &str,
        opts: &Options,
        known: &Known,
        realtime_offset_ns: i64,
    ) -> io::Result<Writer> {
        let f = BufWriter::new(std::fs::File::create(path)?);
        let mut z = zstd::stream::write::Encoder::new(f, 3)?;
        let header = Header {
            tool: "syslint".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            arch: std::env::consts::ARCH.into(),
            clock: "monotonic".into(),
            realtime_offset_ns,
            what: what.into(),
            payload_bytes: opts.payload_bytes,
            path_bytes: opts.path_bytes,
            coalesce: opts.coalesce,
        };
        let json = serde_json::to_vec(&header).map_err(io::Error::other)?;
        let mut buf = Vec::with_capacity(64 * 1024);
        buf.extend_from_slice(MAGIC);
        put_bytes(&mut buf, &json);
        for ((tgid, fd), deco) in &known.fds {
            buf.push(T_KNOWN);
            put(&mut buf, *tgid as u64);
            put_i(&mut buf, *fd);
            put_bytes(&mut buf, deco.as_bytes());
        }
        for (tid, t) in &known.tasks {
            buf.push(T_TASK);
            put(&mut buf, *tid as u64);
            put(&mut buf, t.tgid as u64);
            put(&mut buf, t.parent.unwrap_or(0) as u64);
            put_bytes(&mut buf, t.comm.as_bytes());
        }
        z.write_all(&buf)?;
        buf.clear();
        Ok(Writer { z, buf, enc: Encoder::default() })
    }

    /// One record (files written record by record, as in tests).
    pub fn write(&mut self, r: &Record<'_>) -> io::Result<()> {
        self.enc.encode(r, &mut self.buf);
        if self.buf.len() >= 60 * 1024 {
            self.z.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Close the recording: the sampled stacks (when the capture had them), then the end
    /// record with the lost counts.
    pub fn finish(mut self, lost: Lost, stacks: Option<&SampledStacks>) -> io::Result<()> {
        if let Some(st) = stacks {
            put_stacks(&mut self.buf, st);
        }
        self.buf.push(T_END);
        put(&mut self.buf, lost.records);
        put(&mut self.buf, lost.syscalls);
        self.z.write_all(&self.buf)?;
        let mut f = self.z.finish()?;
        f.flush()
    }
}

fn put_opt(w: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => put(w, 0),
        Some(s) => {
            put(w, s.len() as u64 + 1);
            w.extend_from_slice(s.as_bytes());
        }
    }
}

/// The sampled stacks as records: each stack's frames, then the calls of each thread and
/// syscall per stack (summed: the analysis only adds them up), then the notes.
fn put_stacks(w: &mut Vec<u8>, st: &SampledStacks) {
    for frames in &st.stacks {
        w.push(T_STACK);
        put(w, frames.len() as u64);
        for f in frames {
            put_opt(w, f.module.as_deref());
            put_opt(w, f.symbol.as_deref());
            put(w, f.offset);
            put(w, f.addr);
            put_opt(w, f.file.as_deref());
            put(w, f.line.map_or(0, |l| u64::from(l) + 1));
            put_opt(w, f.error.as_deref());
        }
    }
    let mut rows: std::collections::BTreeMap<(u32, &str, usize), u64> = std::collections::BTreeMap::new();
    for &(tid, sys, calls, stack) in &st.samples {
        *rows.entry((tid.0, sys.name(), stack)).or_default() += calls;
    }
    for ((tid, sys, stack), calls) in rows {
        w.push(T_SAMPLES);
        put(w, u64::from(tid));
        put_bytes(w, sys.as_bytes());
        put(w, calls);
        put(w, stack as u64);
    }
    for n in &st.notes {
        w.push(T_STACK_NOTE);
        put_bytes(w, n.as_bytes());
    }
}

/// A stack record's fields (the tag already read).
fn stack_entry(c: &mut Cur, into: &mut SampledStacks) -> Option<()> {
    let n = c.u()?;
    if n > MAX_FRAMES {
        return None;
    }
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    let mut frames = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let module = text(c.opt()?);
        let symbol = text(c.opt()?);
        let (offset, addr) = (c.u()?, c.u()?);
        let file = text(c.opt()?);
        let line = c.u()?.checked_sub(1).and_then(|l| u32::try_from(l).ok());
        let error = text(c.opt()?);
        frames.push(syslint_event::Frame { addr, module, symbol, offset, file, line, error });
    }
    if into.stacks.len() < MAX_STACKS {
        into.stacks.push(frames);
    }
    Some(())
}

/// A sample row's fields (the tag already read); a row naming a stack not read is dropped.
fn samples_entry(c: &mut Cur, into: &mut SampledStacks) -> Option<()> {
    let tid = c.u()? as u32;
    let sys = syslint_event::Sys::from_name(std::str::from_utf8(c.bytes()?).unwrap_or("?"));
    let (calls, stack) = (c.u()?, c.u()?);
    let stack = usize::try_from(stack).ok().filter(|&i| i < into.stacks.len());
    if let Some(stack) = stack.filter(|_| into.samples.len() < MAX_SAMPLE_ROWS) {
        into.samples.push((syslint_event::Tid(tid), sys, calls, stack));
    }
    Some(())
}

/// What reading a recording found besides its records.
#[derive(Debug, Default)]
pub struct ReadInfo {
    pub header: Option<Header>,
    pub lost: Lost,
    pub records: u64,
    /// Fds named by the /proc snapshot taken when attaching.
    pub known: Known,
    /// The end record was missing (the recording was cut short) or a record was damaged.
    pub problem: Option<String>,
    /// The sampled call stacks (version 4 recordings made with stacks).
    pub stacks: Option<SampledStacks>,
}

/// Bytes of one field (a path, a payload, a header) above which a record is damaged, not cut:
/// the kernel program captures at most 64 KiB per field. Bounds the memory a streamed replay
/// holds for one record.
const MAX_FIELD: usize = 1 << 20;

struct Cur<'a> {
    b: &'a [u8],
    i: usize,
    /// A read ran past the end of `b` (the record may continue in bytes not yet read).
    short: bool,
}

impl<'a> Cur<'a> {
    fn new(b: &'a [u8], i: usize) -> Cur<'a> {
        Cur { b, i, short: false }
    }
    fn u(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = self.b.get(self.i) else {
                self.short = true;
                return None;
            };
            self.i += 1;
            if shift < 64 {
                v |= ((b & 0x7f) as u64) << shift;
            }
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None; // more than 10 bytes: not a LEB128 integer of 64 bits
            }
        }
    }
    fn i(&mut self) -> Option<i64> {
        let u = self.u()?;
        Some(((u >> 1) as i64) ^ -((u & 1) as i64))
    }
    fn byte(&mut self) -> Option<u8> {
        let Some(&b) = self.b.get(self.i) else {
            self.short = true;
            return None;
        };
        self.i += 1;
        Some(b)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u()?;
        if n > MAX_FIELD as u64 {
            return None;
        }
        let n = n as usize;
        let Some(s) = self.b.get(self.i..self.i + n) else {
            self.short = true;
            return None;
        };
        self.i += n;
        Some(s)
    }
    /// A string field that may be absent (length + 1; 0: none).
    fn opt(&mut self) -> Option<Option<&'a [u8]>> {
        let n = self.u()?;
        if n == 0 {
            return Some(None);
        }
        if n - 1 > MAX_FIELD as u64 {
            return None;
        }
        let n = (n - 1) as usize;
        let Some(s) = self.b.get(self.i..self.i + n) else {
            self.short = true;
            return None;
        };
        self.i += n;
        Some(Some(s))
    }
    fn data(&mut self) -> Option<Data<'a>> {
        let kind = match self.byte()? {
            0 => return Some(Data { kind: DataKind::None, bytes: &[], truncated: false, fault: false }),
            1 => DataKind::Str,
            2 => DataKind::Bytes,
            3 => DataKind::Sockaddr,
            _ => return None,
        };
        let f = self.byte()?;
        Some(Data { kind, bytes: self.bytes()?, truncated: f & 1 != 0, fault: f & 2 != 0 })
    }
}

/// A record that could not be decoded, `at` bytes into the recording's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("damaged record at byte {at}; the rest is skipped")]
pub struct Damaged {
    pub at: u64,
}

/// Decodes records encoded by one [`Encoder`], chunk after chunk, in order.
#[derive(Default)]
pub struct Decoder {
    last_ts: u64,
    pub records: u64,
    /// Fds named by a /proc snapshot (files).
    pub known: Known,
    pub lost: Lost,
    /// The end record was seen (files).
    pub ended: bool,
    /// The sampled call stacks (files of version 4).
    pub stacks: Option<SampledStacks>,
}

impl Decoder {
    /// Hand every record in `bytes` (whole records only) to `f`.
    pub fn decode(&mut self, bytes: &[u8], f: &mut dyn FnMut(Record<'_>)) -> Result<(), Damaged> {
        let mut c = Cur::new(bytes, 0);
        while c.i < bytes.len() && !self.ended {
            let at = c.i;
            match self.one(&mut c) {
                Some(Some(r)) => {
                    self.records += 1;
                    f(r);
                }
                Some(None) => {}
                None => return Err(Damaged { at: at as u64 }),
            }
        }
        Ok(())
    }

    /// The record at `c`: `Some(None)` for one that only updates the decoder (fd snapshot,
    /// end), `None` when it cannot be decoded (`c.short`: it runs past the bytes given). On
    /// `None` the decoder is as before the call.
    fn one<'a>(&mut self, c: &mut Cur<'a>) -> Option<Option<Record<'a>>> {
        let before = self.last_ts;
        let r = self.one_inner(c);
        if r.is_none() {
            self.last_ts = before;
        }
        r
    }

    fn one_inner<'a>(&mut self, c: &mut Cur<'a>) -> Option<Option<Record<'a>>> {
        let last_ts = &mut self.last_ts;
        let mut ts = |c: &mut Cur| -> Option<u64> {
            let d = c.i()?;
            *last_ts = (*last_ts as i64).wrapping_add(d) as u64;
            Some(*last_ts)
        };
        let tag = c.byte()?;
        Some(match tag {
            T_SYSCALL => {
                let tgid = c.u()? as u32;
                let tid = c.u()? as u32;
                let nr = c.u()? as u32;
                let mut args = [0u64; 6];
                for a in &mut args {
                    *a = c.u()?;
                }
                let ret = c.i()?;
                let ts_enter = ts(c)?;
                let dur = c.u()?;
                let flags = c.byte()?;
                let (unfinished, began_before) = (flags & 1 != 0, flags & 2 != 0);
                let data1 = c.data()?;
                let data2 = c.data()?;
                Some(Record::Syscall {
                    tgid,
                    tid,
                    nr,
                    args,
                    ret,
                    ts_enter,
                    ts_exit: ts_enter.wrapping_add(dur),
                    data1,
                    data2,
                    unfinished,
                    began_before,
                })
            }
            T_REPEAT | T_REPEAT2 => {
                let tgid = c.u()? as u32;
                let tid = c.u()? as u32;
                let period = c.byte()?;
                let count = c.u()? as u32;
                let first_ts = ts(c)?;
                let span = c.u()?;
                let mut dur_sum_ns = [0u64; 2];
                if tag == T_REPEAT2 {
                    for d in dur_sum_ns.iter_mut().take(usize::from(period).clamp(1, 2)) {
                        *d = c.u()?;
                    }
                } else {
                    // version 1 summed all calls together: each position gets its share
                    let sum = c.u()?;
                    if period == 2 {
                        dur_sum_ns = [sum / 2, sum - sum / 2];
                    } else {
                        dur_sum_ns[0] = sum;
                    }
                }
                Some(Record::Repeat {
                    tgid,
                    tid,
                    period,
                    count,
                    first_ts,
                    last_ts: first_ts.wrapping_add(span),
                    dur_sum_ns,
                })
            }
            T_FORK => {
                let (parent_tgid, parent_tid, child_tgid, child_tid) =
                    (c.u()? as u32, c.u()? as u32, c.u()? as u32, c.u()? as u32);
                let is_thread = c.byte()? != 0;
                Some(Record::Fork { parent_tgid, parent_tid, child_tgid, child_tid, is_thread, ts: ts(c)? })
            }
            T_EXEC => {
                let (tgid, tid, old_tid) = (c.u()? as u32, c.u()? as u32, c.u()? as u32);
                let truncated = c.byte()? != 0;
                let t = ts(c)?;
                Some(Record::Exec { tgid, tid, old_tid, filename: c.bytes()?, truncated, ts: t })
            }
            T_EXIT => {
                let (tgid, tid) = (c.u()? as u32, c.u()? as u32);
                let exit_code = c.i()? as i32;
                let process_ended = c.byte()? != 0;
                Some(Record::Exit { tgid, tid, exit_code, process_ended, ts: ts(c)? })
            }
            T_SIGNAL => {
                let (tgid, tid) = (c.u()? as u32, c.u()? as u32);
                let (sig, code) = (c.i()? as i32, c.i()? as i32);
                let addr = c.u()?;
                Some(Record::Signal { tgid, tid, sig, code, addr, ts: ts(c)? })
            }
            t @ (T_KNOWN | T_TASK) => {
                known_entry(t, c, &mut self.known)?;
                None
            }
            T_STACK => {
                stack_entry(c, self.stacks.get_or_insert_with(SampledStacks::default))?;
                None
            }
            T_SAMPLES => {
                samples_entry(c, self.stacks.get_or_insert_with(SampledStacks::default))?;
                None
            }
            T_STACK_NOTE => {
                let note = String::from_utf8_lossy(c.bytes()?).into_owned();
                let st = self.stacks.get_or_insert_with(SampledStacks::default);
                if st.notes.len() < MAX_STACK_NOTES {
                    st.notes.push(note);
                }
                None
            }
            T_END => {
                self.lost = Lost { records: c.u()?, syscalls: c.u()? };
                self.ended = true;
                None
            }
            _ => return None,
        })
    }
}

/// Whether the file is a syslint recording: a zstd stream starting as one (`SLR` and a
/// version, known or not: a newer version is an error about a recording, not strace text), or a
/// file named `*.slr` (so a recording whose compressed stream is damaged from its start is an
/// error about a recording, not strace text with nothing in it). A file that is no zstd stream
/// is told by its first four bytes, without a decompressor (a directory of `-ff` text files
/// asks for each). Only regular files are looked into: a FIFO read here would lose what it held
/// for the reader (a stream is opened once and looked into by its reader: [`has_magic`]).
pub fn is_slr(path: &Path) -> bool {
    use std::io::Seek;
    if !path.is_file() {
        return false;
    }
    if path.extension().is_some_and(|e| e == "slr") {
        return true;
    }
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    let mut head = [0u8; 4];
    let zstd = f.read_exact(&mut head).is_ok()
        && crate::compress::Compression::sniff(&head) == crate::compress::Compression::Zstd
        && f.rewind().is_ok();
    if !zstd {
        return false;
    }
    let Ok(mut z) = zstd::stream::read::Decoder::new(f) else { return false };
    let mut m = [0u8; 4];
    z.read_exact(&mut m).is_ok() && m.starts_with(b"SLR")
}

/// Whether decompressed bytes begin as a recording does (`SLR1` to `SLR4`).
pub fn has_magic(head: &[u8]) -> bool {
    head.get(..4).is_some_and(|m| MAGICS.iter().any(|k| k[..] == *m))
}

/// A recording being read: its header and the fds and threads named when attaching (they
/// come first in the file), then its records, streamed from the decompressor in bounded
/// memory (a small hostile file can expand to gigabytes) and replayed once.
pub struct Recording {
    pub header: Header,
    pub known: Known,
    body: Body,
}

/// The most fd/thread snapshot entries kept (a hostile recording could name billions).
const MAX_KNOWN: usize = 1 << 20;

/// One "known fd" or "known thread" record's fields (`tag` already read), into `known`.
fn known_entry(tag: u8, c: &mut Cur, known: &mut Known) -> Option<()> {
    let full = known.fds.len() + known.tasks.len() >= MAX_KNOWN;
    if tag == T_TASK {
        let tid = c.u()? as u32;
        let tgid = c.u()? as u32;
        let parent = Some(c.u()? as u32).filter(|&p| p != 0);
        let comm = c.bytes()?;
        if !full {
            let comm = String::from_utf8_lossy(comm).into_owned();
            known.tasks.insert(tid, crate::procfs::TaskFacts { tgid, parent, comm });
        }
    } else {
        let tgid = c.u()? as u32;
        let fd = c.i()?;
        let deco = c.bytes()?;
        if !full {
            known.fds.insert((tgid, fd), String::from_utf8_lossy(deco).into_owned());
        }
    }
    Some(())
}

/// Decompressed bytes read so far and not yet decoded.
const CHUNK: usize = 256 << 10;

/// The decompressed body, read chunk by chunk; a record cut by a chunk's end is carried to
/// the next.
struct Body {
    r: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Offset in the decompressed body of `buf[0]`.
    base: u64,
    eof: bool,
    /// Why the stream ended early (a damaged or cut compressed stream).
    cut: Option<String>,
}

/// What parsing the bytes at the front of the body gave.
enum Parsed<T> {
    One(T),
    /// Nothing is left.
    End,
    /// The bytes at this offset do not decode; `cut`: they end inside a record.
    Bad {
        at: u64,
        cut: bool,
    },
}

impl Body {
    fn new(r: Box<dyn Read + Send>, cut: Option<String>) -> Body {
        Body { r, buf: vec![0; CHUNK], start: 0, end: 0, base: 0, eof: false, cut }
    }

    /// Read more: keep what is not decoded yet, then add at least one byte unless at the end.
    fn fill(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.base += self.start as u64;
            self.start = 0;
        }
        if self.buf.len() - self.end < CHUNK / 2 {
            self.buf.resize(self.end + CHUNK, 0);
        }
        while !self.eof {
            match self.r.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => {
                    self.end += n;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.eof = true;
                    self.cut.get_or_insert(format!(
                        "the compressed stream is damaged or cut short after {} decompressed bytes ({e}); what came before is read",
                        self.base + self.end as u64
                    ));
                }
            }
        }
    }

    /// Parse what is at the front with `parse`, reading more while it runs past the bytes
    /// read so far (up to a record's largest size).
    fn parse<T>(&mut self, mut parse: impl FnMut(&mut Cur<'_>) -> Option<T>) -> Parsed<T> {
        loop {
            if self.start == self.end {
                if self.eof {
                    return Parsed::End;
                }
                self.fill();
                continue;
            }
            let mut c = Cur::new(&self.buf[self.start..self.end], 0);
            if let Some(v) = parse(&mut c) {
                self.start += c.i;
                return Parsed::One(v);
            }
            let at = self.base + self.start as u64;
            // a record holds at most two fields of MAX_FIELD bytes and a few integers
            if !c.short || self.eof || self.end - self.start > 3 * MAX_FIELD {
                return Parsed::Bad { at, cut: c.short && self.eof };
            }
            self.fill();
        }
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Open a recording and read its header and fd snapshot; the records stay in the file until
/// [`Recording::replay`].
pub fn open(path: &Path) -> io::Result<Recording> {
    let file = io::BufReader::new(std::fs::File::open(path)?);
    let z = zstd::stream::read::Decoder::with_buffer(file)
        .map_err(|e| invalid(format!("not a zstd stream, so not a syslint recording ({e})")))?;
    Recording::from_reader(Box::new(z), None)
}

impl Recording {
    /// A recording from its decompressed bytes (`cut`: why the stream ended early, if it did).
    pub fn from_decompressed(body: Vec<u8>, cut: Option<String>) -> io::Result<Recording> {
        Recording::from_reader(Box::new(io::Cursor::new(body)), cut)
    }

    /// A recording from a reader of its decompressed bytes.
    pub fn from_reader(r: Box<dyn Read + Send>, cut: Option<String>) -> io::Result<Recording> {
        let mut body = Body::new(r, cut);
        let why = |b: &Body, what: &str| match &b.cut {
            Some(c) => invalid(format!("cannot read its header: {c}")),
            None => invalid(what.to_string()),
        };
        let magic = body.parse(|c| {
            let m = c.b.get(..4);
            c.short = m.is_none();
            c.i = 4;
            m.map(|m| MAGICS.iter().any(|k| k[..] == *m))
        });
        if !matches!(magic, Parsed::One(true)) {
            return Err(why(&body, "not a syslint recording (no SLR1-SLR4 header)"));
        }
        let Parsed::One(header) = body.parse(|c| c.bytes().map(<[u8]>::to_vec)) else {
            return Err(why(&body, "recording header cut short or damaged (at byte 4)"));
        };
        let header: Header =
            serde_json::from_slice(&header).map_err(|e| invalid(format!("recording header (at byte 4): {e}")))?;
        let mut known = Known::default();
        loop {
            // damaged entries stay in the body: the replay reports them
            let entry = body.parse(|c| match c.b.first() {
                Some(&tag @ (T_KNOWN | T_TASK)) => {
                    c.i = 1;
                    known_entry(tag, c, &mut known).map(|()| true)
                }
                _ => Some(false),
            });
            if !matches!(entry, Parsed::One(true)) {
                break;
            }
        }
        Ok(Recording { header, known, body })
    }

    /// Hand every record to `f`, in order (once: the records are read as they are handed).
    pub fn replay(&mut self, f: &mut dyn FnMut(Record<'_>)) -> ReadInfo {
        let mut dec = Decoder::default();
        let mut damage = None;
        while !dec.ended {
            let step = self.body.parse(|c| {
                let r = dec.one(c)?;
                if let Some(r) = r {
                    dec.records += 1;
                    f(r);
                }
                Some(())
            });
            match step {
                Parsed::One(()) => {}
                Parsed::End => break,
                Parsed::Bad { at, cut } => {
                    damage = Some(if cut {
                        format!("the recording ends inside a record at byte {at} (cut short); what came before is read")
                    } else {
                        Damaged { at }.to_string()
                    });
                    break;
                }
            }
        }
        let mut known = self.known.clone();
        known.fds.extend(dec.known.fds);
        known.tasks.extend(dec.known.tasks);
        let mut problem = self.body.cut.clone().or(damage);
        if !dec.ended && problem.is_none() {
            problem = Some("the recording has no end record (syslint stopped before closing it)".into());
        }
        ReadInfo {
            header: Some(self.header.clone()),
            lost: dec.lost,
            records: dec.records,
            known,
            problem,
            stacks: dec.stacks,
        }
    }
}

/// A recording's whole decompressed body, in memory (benchmarks and tests; replays stream).
pub fn decompress(path: &Path) -> io::Result<Vec<u8>> {
    zstd::decode_all(io::BufReader::new(std::fs::File::open(path)?))
}

/// Read a recording, handing every record to `f`.
pub fn read(path: &Path, f: &mut dyn FnMut(Record<'_>)) -> io::Result<ReadInfo> {
    Ok(open(path)?.replay(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let dir = std::env::temp_dir().join(format!("slr-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("t.slr");
        let mut known = Known::default();
        known.fds.insert((5, 3), "/var/log/x".into());
        known.tasks.insert(8, crate::procfs::TaskFacts { tgid: 5, parent: Some(1), comm: "postgres".into() });
        let mut w = Writer::create(&p, "command t", &Options::default(), &known).expect("create");
        let sa = [2u8, 0, 0, 80, 127, 0, 0, 1];
        let recs = vec![
            Record::Fork { parent_tgid: 5, parent_tid: 5, child_tgid: 6, child_tid: 6, is_thread: false, ts: 900 },
            Record::Syscall {
                tgid: 5,
                tid: 5,
                nr: 42,
                args: [3, u64::MAX, 16, 0, 0, 0],
                ret: -115,
                ts_enter: 1000,
                ts_exit: 1500,
                data1: Data { kind: DataKind::Sockaddr, bytes: &sa, truncated: false, fault: false },
                data2: Data { kind: DataKind::None, bytes: &[], truncated: false, fault: false },
                unfinished: false,
                began_before: false,
            },
            Record::Repeat {
                tgid: 5,
                tid: 5,
                period: 1,
                count: 9999,
                first_ts: 1600,
                last_ts: 90000,
                dur_sum_ns: [5000, 0],
            },
            Record::Repeat {
                tgid: 5,
                tid: 5,
                period: 2,
                count: 3,
                first_ts: 91000,
                last_ts: 92000,
                dur_sum_ns: [30, 900],
            },
            Record::Exec { tgid: 6, tid: 6, old_tid: 6, filename: b"/bin/true", truncated: false, ts: 800 },
            Record::Signal { tgid: 5, tid: 5, sig: 11, code: 1, addr: 0x38, ts: 93000 },
            Record::Signal { tgid: 5, tid: 5, sig: 14, code: 0x80, addr: 0, ts: 94000 },
            Record::Exit { tgid: 6, tid: 6, exit_code: 9, process_ended: true, ts: 95000 },
        ];
        for r in &recs {
            w.write(r).expect("write");
        }
        w.finish(Lost { records: 2, syscalls: 7 }, None).expect("finish");
        assert!(is_slr(&p));
        let mut back: Vec<String> = Vec::new();
        let info = read(&p, &mut |r| back.push(format!("{r:?}"))).expect("read");
        assert_eq!(back, recs.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>());
        assert_eq!(info.lost, Lost { records: 2, syscalls: 7 });
        assert_eq!(info.known.fds.get(&(5, 3)).map(String::as_str), Some("/var/log/x"));
        assert_eq!(
            info.known.tasks.get(&8).map(|t| (t.tgid, t.parent, t.comm.as_str())),
            Some((5, Some(1), "postgres"))
        );
        assert!(info.problem.is_none());
        assert_eq!(info.header.expect("header").what, "command t");

        // cut short: what is whole still reads, and the cut is said
        let raw = zstd::decode_all(std::fs::File::open(&p).expect("open")).expect("decode");
        let cut = zstd::encode_all(&raw[..raw.len() - 6], 3).expect("encode");
        std::fs::write(&p, cut).expect("write");
        let mut n = 0;
        let info = read(&p, &mut |_| n += 1).expect("read");
        assert!(n >= 4 && info.problem.is_some(), "{n} {:?}", info.problem);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The sampled stacks go into the recording at its end and come back as they were, the
    /// calls of one thread, syscall and stack summed; a sample naming a stack the recording
    /// lacks is dropped, not an error.
    #[test]
    fn sampled_stacks_round_trip() {
        use syslint_event::{Frame, Sys, Tid};
        let dir = std::env::temp_dir().join(format!("slr-stacks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("s.slr");
        let known = Known::default();
        let w = Writer::create(&p, "command s", &Options::default(), &known).expect("create");
        let frame = |sym: Option<&str>, line: Option<u32>| Frame {
            addr: 0x1234,
            module: Some("/srv/spin".into()),
            symbol: sym.map(Into::into),
            offset: 9,
            file: line.map(|_| "spin.c".into()),
            line,
            error: None,
        };
        let cut = Frame { error: Some("too many stack frames".into()), ..Frame::default() };
        let st = SampledStacks {
            stacks: vec![vec![frame(Some("spin_on_poll"), Some(0)), frame(None, None)], vec![cut]],
            samples: vec![
                (Tid(7), Sys::Poll, 1, 0),
                (Tid(7), Sys::Poll, 1000, 0),
                (Tid(8), Sys::Read, 1, 1),
                (Tid(8), Sys::Read, 5, 9),
            ],
            notes: vec!["frames of spin-stripped not named".into()],
        };
        w.finish(Lost::default(), Some(&st)).expect("finish");
        let info = read(&p, &mut |_| {}).expect("read");
        assert!(info.problem.is_none(), "{:?}", info.problem);
        let back = info.stacks.expect("stacks");
        assert_eq!(back.stacks, st.stacks);
        assert_eq!(back.samples, [(Tid(7), Sys::Poll, 1001, 0), (Tid(8), Sys::Read, 1, 1)]);
        assert_eq!(back.notes, st.notes);
        // without stacks, none
        let w = Writer::create(&p, "command s", &Options::default(), &known).expect("create");
        w.finish(Lost::default(), None).expect("finish");
        assert!(read(&p, &mut |_| {}).expect("read").stacks.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A version-1 recording (one duration sum per repeat) still reads: the sum is shared
    /// between the positions, as version 1's replay did.
    #[test]
    fn version_1_repeats_still_read() {
        let mut body = b"SLR1".to_vec();
        put_bytes(&mut body, br#"{"tool":"syslint","version":"0.1.0","arch":"x86_64","clock":"monotonic","realtime_offset_ns":0,"what":"t","payload_bytes":64,"path_bytes":256,"coalesce":true}"#);
        // tag, tgid 5, tid 5, period 2, count 3, first_ts delta +1000 (zigzag), span 600, sum 901
        body.push(T_REPEAT);
        for v in [5, 5] {
            put(&mut body, v);
        }
        body.push(2);
        put(&mut body, 3);
        put_i(&mut body, 1000);
        put(&mut body, 600);
        put(&mut body, 901);
        body.push(T_END);
        put(&mut body, 0);
        put(&mut body, 0);
        let dir = std::env::temp_dir().join(format!("slr-v1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("v1.slr");
        std::fs::write(&p, zstd::encode_all(&body[..], 3).expect("encode")).expect("write");
        assert!(is_slr(&p));
        let mut back = Vec::new();
        let info = read(&p, &mut |r| back.push(format!("{r:?}"))).expect("read");
        assert!(info.problem.is_none(), "{:?}", info.problem);
        let want = Record::Repeat {
            tgid: 5,
            tid: 5,
            period: 2,
            count: 3,
            first_ts: 1000,
            last_ts: 1600,
            dur_sum_ns: [450, 451],
        };
        assert_eq!(back, [format!("{want:?}")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
