//! Capture backends for syslint. Today: the streaming strace log reader. Every backend turns
//! its input into [`syslint_event::Event`]s handed to a sink, in time order.

#[cfg(feature = "ebpf")]
pub mod ebpf;
pub mod input;
pub mod live;
pub mod parallel;
pub mod procfs;
pub mod strace;

use input::{InputError, LineReader, Source};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
pub use strace::{ParseStats, Parser, SummaryRow, Unparsed};
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
    let mut info = CaptureInfo { sources: sources.iter().map(input::Source::name).collect(), ..Default::default() };
    // open everything first so a missing file fails before any output
    let mut raw = Vec::with_capacity(sources.len());
    for s in sources {
        raw.push(input::open(s, progress.clone())?.0);
    }
    if raw.len() == 1 {
        let Some(r) = raw.pop() else { return Ok(info) };
        let name = info.sources[0].clone();
        let pid = sources[0].pid;
        let o = parallel::read_parallel_as(r, &name, pid, workers(), chunk_size(), input::DEFAULT_MAX_LINE, &mut sink);
        info.bytes = o.bytes;
        info.cut_lines = o.cut_lines;
        if let Some(e) = o.error {
            info.warnings.push(format!("{name}: input ends early after line {}: {e}", o.stats.lines));
        }
        let mut tally = o.tally;
        tally.stopped_at = o.stopped_at;
        tally.warn(&name, &mut info);
        info.stats = o.stats;
        return Ok(info);
    }
    let mut readers: Vec<_> = raw.into_iter().map(LineReader::new).collect();
    let mut parser = Parser::new(&info.sources.first().cloned().unwrap_or_default());
    merge_by_time(sources, &mut readers, &mut parser, &mut info, &mut sink);
    info.stats = parser.finish(&mut sink);
    Ok(info)
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

fn merge_by_time<R: std::io::Read, F: FnMut(&Event)>(
    sources: &[Source],
    readers: &mut [LineReader<R>],
    parser: &mut Parser,
    info: &mut CaptureInfo,
    sink: &mut F,
) {
    struct Head {
        line: Vec<u8>,
        line_no: u64,
    }
    let n = readers.len();
    let mut heads: Vec<Option<Head>> = Vec::with_capacity(n);
    let mut last_ts = vec![i64::MIN; n];
    let mut tallies: Vec<FileTally> = (0..n).map(|_| FileTally::default()).collect();
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    let mut timed = true;
    let advance =
        |i: usize, readers: &mut [LineReader<R>], info: &mut CaptureInfo, done: &mut Vec<bool>| -> Option<Head> {
            match readers[i].next_line() {
                Ok(Some(l)) => {
                    info.bytes += l.len() as u64 + 1;
                    Some(Head { line: l.to_vec(), line_no: readers[i].line_no })
                }
                Ok(None) => {
                    done[i] = true;
                    None
                }
                Err(e) => {
                    info.warnings.push(format!(
                        "{}: input ends early after line {}: {e}",
                        sources[i].name(),
                        readers[i].line_no
                    ));
                    done[i] = true;
                    None
                }
            }
        };
    #[allow(clippy::needless_range_loop)] // i indexes three parallel vectors
    for i in 0..n {
        let h = advance(i, readers, info, &mut done);
        if let Some(h) = &h {
            match peek_ts(&h.line) {
                Some(t) => {
                    last_ts[i] = t;
                    heap.push(Reverse((t, i)));
                }
                None => timed = false,
            }
        }
        heads.push(h);
    }
    let mut scratch = String::new();
    if !timed {
        info.warnings.push(
            "inputs have no timestamps: files read one after another (record with -tt for a merged timeline)".into(),
        );
        for i in 0..n {
            parser.set_source(&sources[i].name());
            while let Some(h) = heads[i].take() {
                feed(parser, &h.line, h.line_no, sources[i].pid, &mut scratch, &mut tallies[i], sink);
                heads[i] = advance(i, readers, info, &mut done);
            }
        }
    } else {
        while let Some(Reverse((_, i))) = heap.pop() {
            parser.set_source(&sources[i].name());
            // drain this file up to the next line that carries a timestamp later than others
            while let Some(h) = heads[i].take() {
                feed(parser, &h.line, h.line_no, sources[i].pid, &mut scratch, &mut tallies[i], sink);
                heads[i] = advance(i, readers, info, &mut done);
                if let Some(nh) = &heads[i] {
                    if let Some(t) = peek_ts(&nh.line) {
                        last_ts[i] = t;
                        heap.push(Reverse((t, i)));
                        break;
                    }
                    // untimed line (program output): keep it with its file
                }
            }
        }
    }
    for (i, t) in tallies.iter().enumerate() {
        t.warn(&sources[i].name(), info);
        info.cut_lines += readers[i].cut_lines;
    }
}
