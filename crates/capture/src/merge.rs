//! Reading a set of logs (`strace -ff -o DIR/trace` writes one file per thread) merged into one
//! timeline by timestamp, in bounded memory and time linear in the input, however many files
//! overlap in time.
//!
//! A file's reader lives from the line where the timeline reaches the file to its end, and is
//! never rebuilt: a gzip or zstd stream is decompressed exactly once. Descriptors are what
//! runs out first (a JVM traced with `-ff` has thousands of overlapping threads; `ulimit -n` is
//! often 1,024): at most a budget of them is open, and a file whose descriptor was closed is
//! reopened where its reading stood when its buffer next needs bytes ([`Fds`]). Memory is the
//! second bound: line buffers shrink as the set grows, and decompressors beyond a budget (a
//! zstd one holds its window, megabytes) are not kept: such a file is decompressed once, in
//! one go, into a private temporary directory and read from there as text. Both are told to
//! the user when they happen.

use crate::input::{self, Compression, Counting, InputError, LineReader, Source};
use crate::{feed, parallel, peek_ts, CaptureInfo, FileTally};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use syslint_event::Event;

/// Memory for the line buffers of one merge, split between its files (each gets 4-64 KiB).
const LINE_BUFFERS: usize = 64 << 20;
/// Memory for the decompressors alive at once (MiB; `SYSLINT_DECOMPRESS_MIB` sets it, 0 to
/// decompress every compressed file of a set in one go, as tests do).
const DECOMPRESSORS_MIB: usize = 128;
/// What one gzip decompressor holds (its 32 KiB window, tables, its input buffer).
const GZIP_COST: usize = 64 << 10;
/// What one zstd decompressor may hold (its window: up to 2 MiB at the `zstd` tool's default
/// level, and its context).
const ZSTD_COST: usize = 3 << 20;
/// Input buffer under a decompressor.
const COMPRESSED_BUFFER: usize = 16 << 10;

/// The descriptors of a merge's files: at most `budget` open at once. A file read after its
/// descriptor was closed is reopened and seeked to where its reading stood.
struct Fds {
    files: Vec<Option<File>>,
    /// When each file was last read (a tick of `clock`), to close the least recently read.
    used: Vec<u64>,
    /// The files with a descriptor now.
    open: Vec<usize>,
    clock: u64,
    budget: usize,
    /// Descriptors closed to stay within the budget.
    closed: u64,
}

impl Fds {
    fn new(n: usize, budget: usize) -> Fds {
        Fds { files: (0..n).map(|_| None).collect(), used: vec![0; n], open: Vec::new(), clock: 0, budget, closed: 0 }
    }

    /// Close the least recently read descriptor but `keep`'s.
    fn close_one(&mut self, keep: usize) {
        let victim = (0..self.open.len()).filter(|&k| self.open[k] != keep).min_by_key(|&k| self.used[self.open[k]]);
        if let Some(k) = victim {
            let j = self.open.swap_remove(k);
            self.files[j] = None;
            self.closed += 1;
        }
    }

    fn release(&mut self, id: usize) {
        if self.files[id].take().is_some() {
            self.open.retain(|&j| j != id);
        }
    }
}

/// A file of the merge read through the shared [`Fds`]: its descriptor may be closed between
/// reads and is reopened where it stood.
struct Reopening {
    id: usize,
    path: PathBuf,
    pos: u64,
    fds: Arc<Mutex<Fds>>,
}

impl Read for Reopening {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut g = self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let fds = &mut *g;
        if fds.files[self.id].is_none() {
            let mut f = loop {
                if fds.open.len() >= fds.budget {
                    fds.close_one(self.id);
                }
                match File::open(&self.path) {
                    Ok(f) => break f,
                    // EMFILE: the process has fewer descriptors than the budget assumed
                    Err(e) if e.raw_os_error() == Some(24) && fds.open.len() > 1 => fds.budget = fds.open.len() - 1,
                    Err(e) => return Err(e),
                }
            };
            if self.pos > 0 {
                f.seek(io::SeekFrom::Start(self.pos))?;
            }
            fds.files[self.id] = Some(f);
            fds.open.push(self.id);
        }
        fds.clock += 1;
        fds.used[self.id] = fds.clock;
        let Some(f) = fds.files[self.id].as_mut() else { return Ok(0) };
        let n = f.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Drop for Reopening {
    fn drop(&mut self) {
        self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner).release(self.id);
    }
}

/// A reader that ends with an error it was given (a spilled file whose decompression failed
/// part way: read what was written, then say why it ends there, as the stream would).
struct EndsWith<R> {
    inner: R,
    err: Option<io::Error>,
}

impl<R: Read> Read for EndsWith<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf)? {
            0 => self.err.take().map_or(Ok(0), Err),
            n => Ok(n),
        }
    }
}

/// The compression of a file, from its first bytes (the descriptor closed again).
fn sniff(path: &std::path::Path) -> io::Result<Compression> {
    let mut f = File::open(path)?;
    let (head, err) = input::peek(&mut f, 4);
    match err {
        Some(e) if head.is_empty() => Err(e),
        _ => Ok(Compression::sniff(&head)),
    }
}

type Reader = LineReader<Box<dyn Read + Send>>;

/// One file of a merge.
enum FileState {
    /// Not reached yet by the timeline.
    Waiting,
    Open(Box<Reader>),
    Done,
}

/// The line a file's reading stands at.
struct Head {
    line: Vec<u8>,
    line_no: u64,
}

/// Merges the files of a set by timestamp.
struct Merge<'a> {
    sources: &'a [Source],
    progress: Arc<AtomicU64>,
    state: Vec<FileState>,
    heads: Vec<Option<Head>>,
    fds: Arc<Mutex<Fds>>,
    /// Line buffer of each file's reader.
    line_buffer: usize,
    /// Memory the live decompressors may hold (of `budget`), and what each file's holds.
    decompressors: usize,
    budget: usize,
    cost: Vec<usize>,
    /// Where files decompressed in one go are written (made at the first).
    spill: Option<tempfile::TempDir>,
    spilled: u64,
    spilled_bytes: u64,
    tallies: Vec<FileTally>,
    /// Input position after the last line that was a strace line.
    good: Vec<u64>,
    cut_lines: u64,
}

impl Merge<'_> {
    /// The reader of file `i`, made when the timeline first reaches it.
    fn open(&mut self, i: usize) -> Result<Box<dyn Read + Send>, InputError> {
        let src = &self.sources[i];
        if src.is_stdin() {
            return input::open(src, self.progress.clone()).map(|r| r.0);
        }
        let io_err = |e| InputError::from_io(&src.path, e);
        let comp = sniff(&src.path).map_err(io_err)?;
        let cost = match comp {
            Compression::None => 0,
            Compression::Gzip => GZIP_COST,
            Compression::Zstd => ZSTD_COST,
        };
        if cost > 0 && cost > self.decompressors {
            if let Some(r) = self.spill_file(i)? {
                return Ok(r);
            }
        }
        // (what is given back when the file ends: no more than was taken, when a file that
        // could not be spilled keeps its decompressor beyond the budget)
        let taken = cost.min(self.decompressors);
        self.decompressors -= taken;
        self.cost[i] = taken;
        let file = Reopening { id: i, path: src.path.clone(), pos: 0, fds: self.fds.clone() };
        let counted = Counting { inner: file, count: self.progress.clone() };
        Ok(match comp {
            Compression::None => Box::new(counted),
            Compression::Gzip => {
                Box::new(flate2::bufread::MultiGzDecoder::new(io::BufReader::with_capacity(COMPRESSED_BUFFER, counted)))
            }
            Compression::Zstd => Box::new(
                zstd::stream::read::Decoder::with_buffer(io::BufReader::with_capacity(COMPRESSED_BUFFER, counted))
                    .map_err(io_err)?,
            ),
        })
    }

    /// Decompress file `i` in one go into the spill directory and read it from there as text
    /// (`None`: no temporary directory could be made or written; its decompressor is kept).
    fn spill_file(&mut self, i: usize) -> Result<Option<Box<dyn Read + Send>>, InputError> {
        let src = &self.sources[i];
        if self.spill.is_none() {
            self.spill = tempfile::Builder::new().prefix("syslint-merge-").tempdir().ok();
        }
        let Some(dir) = &self.spill else { return Ok(None) };
        let path = dir.path().join(i.to_string());
        let Ok(mut out) = File::create(&path) else { return Ok(None) };
        let (mut r, _) = input::open(src, self.progress.clone())?;
        let (written, err) = match io::copy(&mut r, &mut out) {
            Ok(n) => (n, None),
            // a cut stream: what came before the cut is read, then the error, as unspilled
            Err(e) if e.kind() != io::ErrorKind::StorageFull => (out.stream_position().unwrap_or(0), Some(e)),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                return Ok(None);
            }
        };
        drop(out);
        self.spilled += 1;
        self.spilled_bytes += written;
        let file = Reopening { id: i, path, pos: 0, fds: self.fds.clone() };
        Ok(Some(Box::new(EndsWith { inner: file, err })))
    }

    fn reader(&mut self, i: usize, info: &mut CaptureInfo) -> Option<&mut Reader> {
        if matches!(self.state[i], FileState::Waiting) {
            match self.open(i) {
                Ok(r) => {
                    let lr = LineReader::with_limits(r, self.line_buffer, input::DEFAULT_MAX_LINE);
                    self.state[i] = FileState::Open(Box::new(lr));
                }
                Err(e) => {
                    info.warnings.push(format!("{e} (opening it during the merge); it is not read"));
                    self.state[i] = FileState::Done;
                }
            }
        }
        match &mut self.state[i] {
            FileState::Open(r) => Some(r),
            _ => None,
        }
    }

    /// The next line of file `i` into its head.
    fn advance(&mut self, i: usize, info: &mut CaptureInfo) {
        let name = self.sources[i].name();
        let Some(r) = self.reader(i, info) else {
            self.heads[i] = None;
            return;
        };
        let got = match r.next_line() {
            Ok(Some(l)) => {
                info.bytes += l.len() as u64 + 1;
                Ok(Some(Head { line: l.to_vec(), line_no: r.line_no }))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(format!("{name}: input ends early after line {}: {e}", r.line_no)),
        };
        let (pos, cut) = (r.pos(), r.cut_lines);
        let head = match got {
            Ok(h) => h,
            Err(w) => {
                info.warnings.push(w);
                None
            }
        };
        if head.is_some() && pos.saturating_sub(self.good[i]) > parallel::UNRECOGNISED_LIMIT {
            self.tallies[i].stopped_at = Some(pos);
            self.heads[i] = None;
        } else {
            self.heads[i] = head;
        }
        if self.heads[i].is_none() {
            self.cut_lines += cut;
            // its reader, descriptor and decompressor go
            self.state[i] = FileState::Done;
            self.decompressors += std::mem::take(&mut self.cost[i]);
        }
    }

    fn feed<F: FnMut(&Event)>(
        &mut self,
        i: usize,
        h: &Head,
        parser: &mut crate::Parser,
        scratch: &mut String,
        sink: &mut F,
    ) {
        let before = self.tallies[i].events;
        feed(parser, &h.line, h.line_no, self.sources[i].pid, scratch, &mut self.tallies[i], sink);
        if self.tallies[i].events > before {
            if let FileState::Open(r) = &self.state[i] {
                self.good[i] = r.pos();
            }
        }
    }

    /// What the bounds made the merge do, for the user.
    fn notes(&self, info: &mut CaptureInfo) {
        let (closed, budget) = {
            let f = self.fds.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            (f.closed, f.budget)
        };
        if closed > 0 {
            info.notes.push(format!(
                "more files overlapped in time than the {budget} descriptors the merge keeps open (half \
                 the open-file limit, `ulimit -n`): descriptors were closed and files reopened where \
                 their reading stood {closed} times (raise `ulimit -n` to keep them all open)"
            ));
        }
        if self.spilled > 0 {
            info.notes.push(format!(
                "{} compressed files overlapped in time beyond the memory syslint gives decompressors \
                 ({} MiB): each was decompressed once into a temporary directory ({} MiB in all, \
                 removed after reading) and read from there",
                self.spilled,
                self.budget >> 20,
                self.spilled_bytes.div_ceil(1 << 20)
            ));
        }
    }
}

/// Descriptors a merge keeps open at once: half the process's open-file limit (the rest for
/// everything else), or `SYSLINT_MAX_OPEN` (for tests of closing and reopening).
fn descriptor_budget() -> usize {
    if let Some(n) = std::env::var("SYSLINT_MAX_OPEN").ok().and_then(|v| v.parse::<usize>().ok()) {
        return n.max(1);
    }
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).map_or(1024, |(s, _)| s);
    usize::try_from(soft / 2).unwrap_or(usize::MAX).clamp(8, 1 << 16)
}

/// Memory for the decompressors alive at once, in bytes.
fn decompressor_budget() -> usize {
    let mib = std::env::var("SYSLINT_DECOMPRESS_MIB").ok().and_then(|v| v.parse::<usize>().ok());
    mib.unwrap_or(DECOMPRESSORS_MIB).saturating_mul(1 << 20)
}

/// Read the files of a set merged by timestamp into `parser`; returns the lines read of each.
/// `first`: each file's first line's timestamp (`None`: empty or unreadable, `Some(None)`: a
/// line without one).
pub(crate) fn merge_by_time<F: FnMut(&Event)>(
    sources: &[Source],
    first: &[Option<Option<i64>>],
    progress: Arc<AtomicU64>,
    parser: &mut crate::Parser,
    info: &mut CaptureInfo,
    sink: &mut F,
) -> Vec<u64> {
    let n = sources.len();
    let budget = decompressor_budget();
    let mut m = Merge {
        sources,
        progress,
        state: first.iter().map(|f| if f.is_some() { FileState::Waiting } else { FileState::Done }).collect(),
        heads: (0..n).map(|_| None).collect(),
        fds: Arc::new(Mutex::new(Fds::new(n, descriptor_budget()))),
        line_buffer: (LINE_BUFFERS / n.max(1)).clamp(4 << 10, 64 << 10),
        decompressors: budget,
        budget,
        cost: vec![0; n],
        spill: None,
        spilled: 0,
        spilled_bytes: 0,
        tallies: (0..n).map(|_| FileTally::default()).collect(),
        good: vec![0; n],
        cut_lines: 0,
    };
    for (i, f) in first.iter().enumerate() {
        if f.is_none() {
            m.tallies[i].warn(&sources[i].name(), info); // empty
        }
    }
    let timed = first.iter().all(|f| !matches!(f, Some(None)));
    let mut scratch = String::new();
    if !timed {
        info.warnings.push(
            "inputs have no timestamps: files read one after another (record with -tt for a merged timeline)".into(),
        );
        for i in 0..n {
            if first[i].is_none() {
                continue;
            }
            parser.set_source(&sources[i].name());
            m.advance(i, info);
            while let Some(h) = m.heads[i].take() {
                m.feed(i, &h, parser, &mut scratch, sink);
                m.advance(i, info);
            }
            m.tallies[i].warn(&sources[i].name(), info);
        }
    } else {
        // files in the order their timelines begin; one is opened when the merge reaches it
        let mut order: Vec<usize> = (0..n).filter(|&i| first[i].is_some()).collect();
        order.sort_by_key(|&i| (first[i].flatten().unwrap_or(i64::MIN), i));
        let mut head_ts = vec![i64::MIN; n];
        let mut next = 0;
        let mut heap = BinaryHeap::new();
        loop {
            let top = heap.peek().map(|&Reverse((t, _))| t);
            if let Some(&j) = order.get(next) {
                if top.is_none_or(|t| first[j].flatten().unwrap_or(i64::MIN) <= t) {
                    next += 1;
                    m.advance(j, info);
                    match m.heads[j].as_ref().map(|h| peek_ts(&h.line)) {
                        Some(Some(t)) => {
                            head_ts[j] = t;
                            heap.push(Reverse((t, j)));
                        }
                        Some(None) => {
                            // its first line had a timestamp when peeked: read as it comes
                            heap.push(Reverse((head_ts[j], j)));
                        }
                        None => m.tallies[j].warn(&sources[j].name(), info),
                    }
                    continue;
                }
            }
            let Some(Reverse((_, i))) = heap.pop() else { break };
            parser.set_source(&sources[i].name());
            // drain this file up to the next line that carries a timestamp later than others
            while let Some(h) = m.heads[i].take() {
                m.feed(i, &h, parser, &mut scratch, sink);
                m.advance(i, info);
                if let Some(nh) = &m.heads[i] {
                    if let Some(t) = peek_ts(&nh.line) {
                        head_ts[i] = t;
                        heap.push(Reverse((t, i)));
                        break;
                    }
                    // untimed line (program output): keep it with its file
                }
            }
            if m.heads[i].is_none() {
                m.tallies[i].warn(&sources[i].name(), info);
            }
        }
    }
    m.notes(info);
    info.cut_lines += m.cut_lines;
    m.tallies.iter().map(|t| t.lines).collect()
}
