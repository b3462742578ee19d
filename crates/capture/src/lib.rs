//! Capture backends for syslint. Today: the streaming strace log reader. Every backend turns
//! its input into [`syslint_event::Event`]s handed to a sink, in time order.

pub mod compress;
pub mod ebpf;
pub mod input;
pub mod live;
mod merge;
pub mod parallel;
pub mod procfs;
pub mod strace;
pub mod tables;

/// Whether the eBPF backend is compiled into this build (the `ebpf` feature, on by default;
/// it needs clang and libelf to build). `syslint --version` reports it from here, so a build
/// without the feature says so whichever crate turned it off.
pub const EBPF_COMPILED: bool = cfg!(feature = "ebpf");

use input::{InputError, LineReader, Source};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
pub use strace::{ParseStats, Parser, Unparsed};
use syslint_event::{Event, Tid};

/// What reading the inputs produced besides events.
#[derive(Debug, Default)]
pub struct CaptureInfo {
    pub sources: Vec<String>,
    pub stats: ParseStats,
    /// One-line problems that did not stop the analysis (truncated gzip, empty file, ...).
    pub warnings: Vec<String>,
    /// One-line facts about the capture that are no problem (how a live trace ended).
    pub notes: Vec<String>,
    /// Inputs in which no strace line was recognised (empty, binary, some other text): the
    /// warning of each, naming the file. `analyze` makes them errors.
    pub not_strace: Vec<String>,
    /// Bytes of text read (after decompression).
    pub bytes: u64,
    /// Lines cut because they exceeded the line length limit.
    pub cut_lines: u64,
    /// A table of counts per syscall in the input (`strace -c`, `perf trace -s`, `syscount`,
    /// a `--summary-only` report), for inputs small enough to be a paste ([`tables::MAX_TEXT`]).
    pub counts: Option<syslint_report::Counts>,
}

impl CaptureInfo {
    /// What the reader knows, in the report's form (the analysis fills in the rest).
    pub fn into_capture(self, backend: syslint_report::Backend) -> syslint_report::Capture {
        let s = self.stats;
        let mut warnings = self.warnings;
        if self.cut_lines > 0 {
            warnings.push(match self.cut_lines {
                1 => "1 line longer than 4 MiB was read as its first 4 MiB and its last 64 KiB: the payload between was left out".into(),
                n => format!("{n} lines longer than 4 MiB were read as their first 4 MiB and last 64 KiB: the payload between was left out"),
            });
        }
        let mut notes = self.notes;
        if s.prefixed > 0 {
            notes.push(format!("{} lines begin with {}: read without it", s.prefixed, s.prefix.describe()));
        }
        if s.coloured > 0 {
            notes.push(format!(
                "{} lines hold terminal colour codes (strace --color, or a terminal's recording): read without them",
                s.coloured
            ));
        }
        if s.named_args > 0 {
            notes.push(format!(
                "{} lines name their arguments (strace -N/--arg-names): read without the names",
                s.named_args
            ));
        }
        syslint_report::Capture {
            backend: backend.as_str().into(),
            sources: self.sources,
            lines: s.lines,
            events: s.events,
            syscalls: s.syscalls,
            unparsed_lines: s.unparsed,
            unparsed_samples: s
                .unparsed_samples
                .into_iter()
                .map(|u| syslint_report::UnparsedLine { source: u.source, line: u.line, text: u.text })
                .collect(),
            clock: s.clock.as_str().into(),
            // eBPF times every call: a trace with no call has durations all the same
            durations: s.with_duration > 0 || backend.ebpf(),
            resumed_pairs: s.resumed_pairs,
            never_resumed: s.never_resumed,
            // the analysis counts the rest
            stacks: (s.frame_lines > 0).then(|| syslint_report::Stacks {
                unattached: s.stacks_unattached + s.stacks_at_exit,
                ..Default::default()
            }),
            warnings,
            notes,
            ..Default::default()
        }
    }
}

/// Read strace logs and hand every event to `sink`. Several sources (an `strace -ff` set)
/// are merged by timestamp. Errors opening an input stop everything (nothing sensible can be
/// said); errors inside an input (a truncated gzip stream) become warnings after everything
/// readable was analysed.
pub fn read_strace<F: FnMut(&Event)>(
    sources: &[Source],
    progress: Arc<AtomicU64>,
    mut sink: F,
) -> Result<CaptureInfo, InputError> {
    if let [one] = sources {
        let size = regular_size(one);
        let r = input::open(one, progress)?.0;
        return Ok(read_one(one, size, r, sink));
    }
    let mut info = CaptureInfo { sources: sources.iter().map(input::Source::name).collect(), ..Default::default() };
    // several (an `strace -ff` set, maybe of 50,000 files): each file's first timestamp, one
    // file open at a time, so a missing or unreadable file fails before any output; then a
    // merge that opens files as the timeline reaches them, a bounded number at once
    let mut first = Vec::with_capacity(sources.len());
    let mut frames = false;
    let mut sizes = Vec::with_capacity(sources.len());
    for s in sources {
        sizes.push(regular_size(s));
        let r = input::open(s, progress.clone())?.0;
        let mut lr = LineReader::with_limits(r, 64 << 10, input::DEFAULT_MAX_LINE);
        first.push(match lr.next_line() {
            Ok(Some(l)) => Some(peek_ts(l)),
            Ok(None) => None,
            Err(e) => {
                info.warnings.push(format!("{}: input ends early after line 0: {e}", s.name()));
                None
            }
        });
        // a -k set: its first call's frames follow on the second line
        frames |= matches!(lr.next_line(), Ok(Some(l)) if l.starts_with(b" > "));
    }
    let mut parser = Parser::new(&info.sources.first().cloned().unwrap_or_default());
    if frames {
        parser.expect_stacks();
    }
    let lines = merge::merge_by_time(sources, &first, progress, &mut parser, &mut info, &mut sink);
    // each file as the single input is: did it change while the set was read?
    for ((s, size), lines) in sources.iter().zip(sizes).zip(lines) {
        if let Some(w) = size.and_then(|before| changed_while_read(s, before, lines)) {
            info.warnings.push(w);
        }
    }
    info.stats = parser.finish(&mut sink);
    Ok(info)
}

/// [`read_strace`] of one input already opened (and decompressed) as `r`: stdin or a FIFO,
/// which can be opened once only, after a look at what it holds.
pub fn read_strace_opened<F: FnMut(&Event)>(one: &Source, r: Box<dyn std::io::Read + Send>, sink: F) -> CaptureInfo {
    read_one(one, regular_size(one), r, sink)
}

/// One input (`size`: a regular file's size when opened), read by parallel workers.
fn read_one<F: FnMut(&Event)>(
    one: &Source,
    size: Option<u64>,
    mut r: Box<dyn std::io::Read + Send>,
    mut sink: F,
) -> CaptureInfo {
    let mut info = CaptureInfo { sources: vec![one.name()], ..Default::default() };
    let name = info.sources[0].clone();
    // a small input may be a pasted table of counts rather than (or besides) a trace
    let (head, err) = input::peek(&mut r, tables::MAX_TEXT + 1);
    if head.len() <= tables::MAX_TEXT && err.is_none() {
        info.counts = tables::read(&String::from_utf8_lossy(&head));
    }
    let r = input::Peeked::new(head, err, r);
    let o = parallel::read_parallel_as(r, &name, one.pid, workers(), chunk_size(), input::DEFAULT_MAX_LINE, &mut sink);
    info.bytes = o.bytes;
    info.cut_lines = o.cut_lines;
    if let Some(e) = o.error {
        info.warnings.push(format!("{name}: input ends early after line {}: {e}", o.stats.lines));
    }
    if let Some(w) = size.and_then(|before| changed_while_read(one, before, o.stats.lines)) {
        info.warnings.push(w);
    }
    let mut tally = o.tally;
    tally.stopped_at = o.stopped_at;
    if info.counts.is_none() {
        tally.warn(&name, &mut info);
    }
    info.stats = o.stats;
    info
}

/// The warning for a file that was `before` bytes when opened and is deleted or of another
/// size now, after `lines` of it were read.
fn changed_while_read(s: &Source, before: u64, lines: u64) -> Option<String> {
    let name = s.name();
    match std::fs::metadata(&s.path) {
        Err(_) => Some(format!("{name}: deleted while it was read; the report covers the {lines} lines read")),
        Ok(m) if m.len() != before => Some(format!(
            "{name}: {} while it was read ({before} bytes when opened, {} at the end); the report covers the {lines} lines read",
            if m.len() > before { "grew" } else { "was truncated" },
            m.len(),
        )),
        Ok(_) => None,
    }
}

/// A regular file's size when it is opened (to tell whether it changed while read).
fn regular_size(s: &Source) -> Option<u64> {
    if s.is_stdin() {
        return None;
    }
    std::fs::metadata(&s.path).ok().filter(std::fs::Metadata::is_file).map(|m| m.len())
}

/// The warning for an input read no further after [`parallel::UNRECOGNISED_LIMIT`] bytes in a
/// row without a strace line.
fn stopped_warning(name: &str, at: u64) -> String {
    format!(
        "{name}: stopped reading at byte {at}: no strace line in the last {} MiB (not a strace log, or one buried in other data)",
        parallel::UNRECOGNISED_LIMIT >> 20
    )
}

/// Threads parsing one input: `SYSLINT_THREADS` if set, else the cores available.
fn workers() -> usize {
    std::env::var("SYSLINT_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .clamp(1, 64)
}

/// Chunk size for parallel reading (`SYSLINT_CHUNK` bytes, for tests of chunk borders).
fn chunk_size() -> usize {
    std::env::var("SYSLINT_CHUNK").ok().and_then(|v| v.parse().ok()).unwrap_or(parallel::CHUNK).max(256)
}

/// Per-file counts used to warn about empty or non-strace files.
#[derive(Default)]
pub struct FileTally {
    pub lines: u64,
    pub events: u64,
    pub binary: u64,
    /// Reading stopped at this byte: [`parallel::UNRECOGNISED_LIMIT`] bytes in a row held no
    /// strace line.
    pub stopped_at: Option<u64>,
}

impl FileTally {
    fn warn(&self, name: &str, info: &mut CaptureInfo) {
        let stopped = match self.stopped_at {
            Some(at) if self.events > 0 => {
                info.warnings.push(stopped_warning(name, at));
                String::new()
            }
            Some(at) => format!(
                "; stopped reading at byte {at}, after {} MiB without a strace line",
                parallel::UNRECOGNISED_LIMIT >> 20
            ),
            None => String::new(),
        };
        let w = if self.lines == 0 {
            format!("{name}: file is empty")
        } else if self.events == 0 && self.binary * 2 >= self.lines {
            format!("{name}: binary data, not a strace log ({} lines, none understood{stopped})", self.lines)
        } else if self.events == 0 {
            format!("{name}: no strace lines recognised in {} lines{stopped}", self.lines)
        } else {
            return;
        };
        info.not_strace.push(w.clone());
        info.warnings.push(w);
    }
}

#[inline]
fn feed<F: FnMut(&Event)>(
    parser: &mut Parser,
    line: &[u8],
    line_no: u64,
    pid: Option<u32>,
    scratch: &mut String,
    file: &mut FileTally,
    sink: &mut F,
) {
    let text: &str = match std::str::from_utf8(line) {
        Ok(s) => s,
        Err(_) => {
            // strace escapes non-ASCII in strings, but program output and some old logs hold
            // raw bytes: keep the line, replacing what is not UTF-8
            scratch.clear();
            scratch.push_str(&String::from_utf8_lossy(line));
            scratch.as_str()
        }
    };
    parallel::feed_line(parser, text, line_no, pid.map(Tid), true, file, sink);
}

/// Timestamp at the start of a line without touching parser state (for ordering `-ff` files).
fn peek_ts(line: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(line).ok()?;
    let mut p = Parser::new("");
    let mut ts = None;
    // reuse the real parser on a throwaway instance: cheap, and one definition of the format
    p.parse_line(s, 0, Some(Tid(0)), &mut |e: &Event| ts = e.ts_ns);
    ts
}
