//! The strace text parser: one line in, zero or one [`Event`] out.
//!
//! It understands every output variant strace 4.x to 6.x writes (pid columns `123 ` and
//! `[pid  123] `, timestamps `-t`/`-tt`/`-ttt`/`-r`, durations `-T`, fd decorations `-y`/`-yy`,
//! `<unfinished ...>`/`<... resumed>` pairs, signals, exits, attach/detach notes, `-k` stack
//! frames, `-c` tables) and counts every line it cannot, keeping the first few for the report.
//! Per line it allocates nothing; only an `<unfinished ...>` call is copied until it resumes.

use crate::procfs::PID_MAX;
use rustc_hash::FxHashMap as HashMap;
use syslint_event::{Class, Clock, Event, EventKind, Ret, Sys, Syscall, Tid};

/// How many unparsed lines are kept verbatim for the report.
pub const UNPARSED_SAMPLES: usize = 10;
/// Longest text kept for one unparsed sample.
const SAMPLE_CHARS: usize = 200;

/// A line the reader did not understand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unparsed {
    pub source: String,
    pub line: u64,
    pub text: String,
}

/// One row of an `strace -c` table found in the input.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub name: String,
    pub seconds: f64,
    pub calls: u64,
    pub errors: u64,
}

/// What the reader saw, travelling with every report.
#[derive(Clone, Debug, Default)]
pub struct ParseStats {
    pub lines: u64,
    pub events: u64,
    pub syscalls: u64,
    /// `<unfinished ...>` lines merged with their resumption.
    pub resumed_pairs: u64,
    /// `<unfinished ...>` calls that never resumed (process died, trace ended).
    pub never_resumed: u64,
    /// `<... resumed>` lines whose start was not in the trace (attached mid-call).
    pub orphan_resumed: u64,
    /// Syscall lines cut in two by the program's own output and joined again.
    pub rejoined: u64,
    pub unparsed: u64,
    pub unparsed_samples: Vec<Unparsed>,
    /// Lines understood but carrying no event: `-k` frames, `-c` tables, notes, blank lines.
    pub ignored: u64,
    pub strace_c_table: Vec<SummaryRow>,
    pub clock: Clock,
    /// Calls whose duration strace printed (`-T`); joined unfinished/resumed pairs without
    /// `-T` get a duration from their timestamps but do not count here.
    pub with_duration: u64,
    /// The pid column style seen: "none", "pid", "[pid N]".
    pub pid_style: &'static str,
}

impl ParseStats {
    pub fn merge(&mut self, o: ParseStats) {
        self.lines += o.lines;
        self.events += o.events;
        self.syscalls += o.syscalls;
        self.resumed_pairs += o.resumed_pairs;
        self.never_resumed += o.never_resumed;
        self.orphan_resumed += o.orphan_resumed;
        self.rejoined += o.rejoined;
        self.unparsed += o.unparsed;
        for s in o.unparsed_samples {
            if self.unparsed_samples.len() < UNPARSED_SAMPLES {
                self.unparsed_samples.push(s);
            }
        }
        self.ignored += o.ignored;
        self.strace_c_table.extend(o.strace_c_table);
        if self.clock == Clock::None {
            self.clock = o.clock;
        }
        self.with_duration += o.with_duration;
        if self.pid_style.is_empty() || self.pid_style == "none" {
            self.pid_style = o.pid_style;
        }
    }
}

/// A line of a chunk that acts on a call an earlier chunk may have left unfinished, which the
/// chunk's parser cannot see: the reader settles it in its place among the chunk's events, as
/// the sequential reader would have at that line.
#[derive(Debug, Clone)]
pub struct Mark {
    /// Number of events the chunk emitted before this line.
    pub at: u64,
    pub pid: Tid,
    pub ts: Option<i64>,
    pub what: Marked,
}

/// What a [`Mark`]ed line does.
#[derive(Debug, Clone)]
pub enum Marked {
    /// A `<... resumed>` line whose start is not in the chunk.
    Resumed {
        /// The line from `<... ` on.
        body: String,
        /// Its line number in the chunk (1-based), for the sample if it turns out unreadable.
        line: u64,
    },
    /// A call of `pid` left unfinished while the chunk had none of `pid`'s pending: one pending
    /// from an earlier chunk never came back, and ends here.
    Started,
    /// `+++ superseded by execve in pid OLD +++` while the chunk had no call of OLD pending: a
    /// call of OLD pending from an earlier chunk is `pid`'s from here on. `held`: the call of
    /// `pid` the chunk had pending then (its start and `name(args...`), handed over first.
    Superseded { old: Tid, held: Option<(Option<i64>, String)> },
}

/// Where a parser's clock stands: what it needs to read the next timestamp as the sequential
/// reader would.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockState {
    pub clock: Clock,
    /// -r: the running sum of deltas.
    pub rel_acc: i64,
    /// Days added to times of day after midnight wrapped.
    pub day_offset: i64,
    /// The last time of day read (with `day_offset`), if any.
    pub last_tod: Option<i64>,
}

/// What the sequential reader knows about the pid column when a line comes: which pid lines
/// without one belong to, and what it needs to decide that (strace writing `-f` to a terminal
/// prefixes `[pid N]` only while several processes are traced). A chunk's parser starts
/// knowing none of it; the parallel reader keeps it in input order and reads again a chunk
/// whose lines depended on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PidState {
    pub default_pid: Option<Tid>,
    /// Lines without a pid column were seen.
    pub seen_unprefixed: bool,
    /// Pids announced as attached or as a fork's return (never the pid-less lines' process).
    pub announced: rustc_hash::FxHashSet<Tid>,
    /// A syscall was read (after one, `Process N attached` no longer names the pid-less lines).
    pub syscalls: bool,
}

impl PidState {
    /// Nothing read yet: what a chunk's parser starts from.
    pub fn is_fresh(&self) -> bool {
        *self == PidState::default()
    }

    /// Add what a chunk read after this state saw, when nothing it read depended on this
    /// state (so it decided nothing this state had not, and its own decision, if any, was
    /// made from a fresh start that this state still was).
    pub fn absorb(&mut self, later: &PidState) {
        self.seen_unprefixed |= later.seen_unprefixed;
        self.syscalls |= later.syscalls;
        if self.default_pid.is_none() {
            self.default_pid = later.default_pid;
            // announcements only matter until the pid-less lines' process is decided
            self.announced.extend(later.announced.iter().copied());
        }
    }
}

/// State a chunk hands to the next one.
#[derive(Debug, Default)]
pub struct ChunkEnd {
    /// Calls still unfinished: (pid, start, `name(args...`).
    pub pending: Vec<(Tid, Option<i64>, String)>,
    pub marks: Vec<Mark>,
    /// The chunk's clock at its end, read as if no stamp came before the chunk (or from
    /// [`Parser::seed_clock`]'s state).
    pub clock: ClockState,
    /// The first time of day in the chunk, as read (without days added): whether midnight
    /// passed between the previous chunk's last one and it is the reader's to decide.
    pub first_tod: Option<i64>,
    /// The chunk had a stamp that is a number (`-r`, `-ttt`).
    pub numbers: bool,
    pub default_pid: Option<Tid>,
    /// The pid-column state at the chunk's end, read from a fresh one (or from
    /// [`Parser::seed_pids`]'s).
    pub pids: PidState,
    /// The chunk decided whose the pid-less lines are (from what it read since its start).
    pub pid_decided: bool,
    /// The chunk had `[pid N]` lines.
    pub bracketed: bool,
    /// The chunk's first line, when it may continue a line the previous chunk ended with
    /// ([`could_continue`]): not parsed here, the reader gives it to the parser that holds
    /// the previous chunk's [`dangling`](Self::dangling) line.
    pub lead: Option<String>,
    /// The chunk's last line, cut by program output and waiting for its continuation.
    pub dangling: Option<Dangling>,
    /// The head of the chunk's last line, cut by strace's own `strace: Process N attached`:
    /// its rest is the next chunk's first line, whatever that line looks like.
    pub splice: Option<String>,
}

/// Whether a line may be the continuation of a syscall line cut in two (by the program's
/// output or strace's own messages): `) = 2`, `<unfinished ...>`, a detach note, a blank line.
pub fn could_continue(line: &str) -> bool {
    let c = line.strip_prefix("^C").unwrap_or(line).trim_start();
    c.is_empty()
        || c.starts_with(')')
        || c.starts_with("<unfinished ...>")
        || c.starts_with("<detached ...>")
        || ((c.starts_with("Process ") || strace_note(c).is_some()) && c.contains(" detached"))
}

/// What became of a line held back for its continuation.
enum Rejoin {
    /// The next line finished it.
    Joined,
    /// It was accounted for; the next line is still to be read.
    Settled,
    /// Not a continuation.
    No(Dangling),
}

/// `strace: Process 1 attached`, `/usr/bin/strace: ...` -> the text after `strace: `.
fn strace_note(s: &str) -> Option<&str> {
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

/// A syscall line without its end, waiting for the continuation (handed from one chunk to the
/// next by the parallel reader: [`ChunkEnd::dangling`]).
#[derive(Debug)]
pub struct Dangling {
    pub pid: Tid,
    pub ts: Option<i64>,
    text: String,
    line: String,
    pub line_no: u64,
    /// Its line had a bare pid column (see [`Parser::line_pid_column`]).
    pid_column: bool,
}

struct Pending {
    ts: Option<i64>,
    /// `name(args...` as printed before ` <unfinished ...>`.
    text: String,
}

/// Parses strace lines; keeps the state that spans lines (pending calls, clocks).
pub struct Parser {
    pending: HashMap<Tid, Pending>,
    merge_buf: String,
    clock: Clock,
    /// -r: running sum of deltas.
    rel_acc: i64,
    /// -t/-tt: days added after midnight wrapped.
    day_offset: i64,
    last_tod: i64,
    stats: ParseStats,
    source: String,
    dangling: Option<Dangling>,
    splice_head: Option<String>,
    cur_line: u64,
    /// Lines without a pid column seen (they belong to the first process).
    seen_unprefixed: bool,
    /// Pids strace announced as attached (children when -f output goes to a terminal).
    announced: rustc_hash::FxHashSet<Tid>,
    /// The line being read has a bare pid column (`123 clone(...)`, as `-f -o FILE` writes
    /// every line): a fork it returns is then not announced (those logs never need it, and a
    /// log of millions of forks would keep them all). Decided by the call's own line, so a
    /// chunk's parser decides it as the sequential reader does.
    line_pid_column: bool,
    /// The pid that lines without a pid column belong to, once known.
    default_pid: Option<Tid>,
    /// A syscall was read before this parser's first line (seeded, see [`PidState`]).
    syscalls_before: bool,
    /// This parser decided `default_pid`.
    pid_decided: bool,
    /// A `[pid N]` line was read.
    bracketed: bool,
    chunk_mode: bool,
    /// Chunk mode: the chunk's first line, kept for the reader ([`ChunkEnd::lead`]).
    lead: Option<String>,
    /// Spare buffers for pending calls.
    pool: Vec<String>,
    marks: Vec<Mark>,
    /// The first time of day read, before days are added.
    first_tod: Option<i64>,
    /// A stamp that is a number was read.
    numbers: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new("-")
    }
}

const NS: i64 = 1_000_000_000;
const DAY_NS: i64 = 86_400 * NS;

impl Parser {
    /// `source` names the input in unparsed-line samples.
    pub fn new(source: &str) -> Parser {
        Parser {
            pending: HashMap::default(),
            merge_buf: String::new(),
            clock: Clock::None,
            rel_acc: 0,
            day_offset: 0,
            last_tod: i64::MIN,
            stats: ParseStats { pid_style: "none", ..Default::default() },
            source: source.to_string(),
            dangling: None,
            splice_head: None,
            cur_line: 0,
            seen_unprefixed: false,
            announced: Default::default(),
            line_pid_column: false,
            default_pid: None,
            syscalls_before: false,
            pid_decided: false,
            bracketed: false,
            chunk_mode: false,
            lead: None,
            pool: Vec::new(),
            marks: Vec::new(),
            first_tod: None,
            numbers: false,
        }
    }

    /// Switch the name used in samples (for multi-file inputs sharing one parser).
    pub fn set_source(&mut self, source: &str) {
        if self.source != source {
            self.source = source.to_string();
        }
    }

    pub fn stats(&self) -> &ParseStats {
        &self.stats
    }

    /// Parse one line (without its newline). `line_no` is 1-based, for samples. `pid_hint`
    /// is the pid of a `-ff` file (`trace.PID`), used when the line has no pid column.
    pub fn parse_line<F: FnMut(&Event)>(&mut self, line: &str, line_no: u64, pid_hint: Option<Tid>, sink: &mut F) {
        self.stats.lines += 1;
        self.cur_line = line_no;
        if self.chunk_mode && line_no == 1 && self.splice_head.is_none() && could_continue(line) {
            // the previous chunk may have ended with the line this one continues: the reader
            // decides, with that chunk's end in hand
            self.lead = Some(line.to_string());
            return;
        }
        if let Some(head) = self.splice_head.take() {
            // the rest of a line that strace's own message cut in two
            let merged = format!("{head}{line}");
            if !self.parse_inner(&merged, pid_hint, sink) {
                self.unparsed(&merged, line_no);
            }
            return;
        }
        if let Some(d) = self.dangling.take() {
            if line.trim().is_empty() {
                // a blank line (the terminal's) between a cut line and its end
                self.dangling = Some(d);
                self.stats.ignored += 1;
                return;
            }
            match self.rejoin(d, line, sink) {
                Rejoin::Joined => return,
                Rejoin::Settled => {}
                Rejoin::No(d) => self.unparsed(&d.line, d.line_no),
            }
        }
        if !self.parse_inner(line, pid_hint, sink) {
            self.unparsed(line, line_no);
            return;
        }
        // strace writing to a terminal can put its own `strace: Process N attached` in the
        // middle of a syscall line, which then continues on the next line. Such a line
        // parses as an unfinished one (dangling): only then is it worth looking.
        if self.dangling.as_ref().is_some_and(|d| d.line_no == line_no) {
            if let Some(i) = memchr::memmem::find(line.as_bytes(), b"strace: Process ").filter(|&i| i > 0) {
                if line.is_char_boundary(i) {
                    let d = self.dangling.take();
                    if self.parse_inner(&line[i..], pid_hint, sink) {
                        self.splice_head = Some(line[..i].to_string());
                    } else {
                        self.dangling = d;
                    }
                }
            }
        }
    }

    /// A line of binary data (NUL bytes): a line of the input, and unreadable.
    pub fn binary_line(&mut self, line: &str, line_no: u64) {
        self.stats.lines += 1;
        self.cur_line = line_no;
        if let Some(head) = self.splice_head.take() {
            // the rest of a line that strace's own message cut: binary, so the whole is
            self.unparsed(&format!("{head}{line}"), line_no);
            return;
        }
        if let Some(d) = self.dangling.take() {
            // not a continuation: the cut line waits no further (as before any other line
            // that is not one, and as the parallel reader's chunk borders assume)
            self.unparsed(&d.line, d.line_no);
        }
        self.unparsed(line, line_no);
    }

    /// Count a line that is not text at all (invalid UTF-8 that is not a strace line).
    pub fn unparsed(&mut self, line: &str, line_no: u64) {
        self.stats.unparsed += 1;
        if self.stats.unparsed_samples.len() < UNPARSED_SAMPLES {
            let text = sample_of(line);
            self.stats.unparsed_samples.push(Unparsed { source: self.source.clone(), line: line_no, text });
        }
    }

    /// End of input: calls still unfinished become events with [`Ret::Unfinished`].
    pub fn finish<F: FnMut(&Event)>(&mut self, sink: &mut F) -> ParseStats {
        self.finish_lines();
        let mut pids: Vec<Tid> = self.pending.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            self.flush_pending(pid, Ret::Unfinished, sink);
        }
        self.stats.clock = self.clock;
        std::mem::take(&mut self.stats)
    }

    /// Lines held back waiting for a continuation that never came are unparsed after all.
    fn finish_lines(&mut self) {
        if let Some(d) = self.dangling.take() {
            self.unparsed(&d.line, d.line_no);
        }
        if let Some(h) = self.splice_head.take() {
            let n = self.cur_line;
            self.unparsed(&h, n);
        }
    }

    /// Chunk mode (parallel reading): a resumption whose start is not in this chunk is not
    /// emitted but marked, to be joined with the previous chunk's pending call.
    pub fn set_chunk_mode(&mut self) {
        self.chunk_mode = true;
    }

    /// End of a chunk: unlike [`finish`](Self::finish) pending calls are handed over, not
    /// flushed.
    pub fn finish_chunk(&mut self) -> (ParseStats, ChunkEnd) {
        // a cut line at the very end may continue in the next chunk
        let dangling = self.dangling.take();
        let splice = self.splice_head.take();
        self.finish_lines();
        self.stats.clock = self.clock;
        let mut pending: Vec<(Tid, Option<i64>, String)> =
            self.pending.drain().map(|(pid, p)| (pid, p.ts, p.text)).collect();
        pending.sort_unstable_by_key(|p| p.0);
        let end = ChunkEnd {
            pending,
            marks: std::mem::take(&mut self.marks),
            clock: self.clock_state(),
            first_tod: self.first_tod,
            numbers: self.numbers,
            default_pid: self.default_pid,
            pids: self.pid_state(),
            pid_decided: self.pid_decided,
            bracketed: self.bracketed,
            lead: self.lead.take(),
            dangling,
            splice,
        };
        (std::mem::take(&mut self.stats), end)
    }

    /// Where the clock stands (see [`ClockState`]).
    pub fn clock_state(&self) -> ClockState {
        ClockState {
            clock: self.clock,
            rel_acc: self.rel_acc,
            day_offset: self.day_offset,
            last_tod: (self.last_tod != i64::MIN).then_some(self.last_tod),
        }
    }

    /// Read the next timestamps as if the lines before had left the clock at `c` (a chunk
    /// whose stamps only the sequential reader's state places on the time line).
    /// What this parser knows of the pid column (see [`PidState`]).
    pub fn pid_state(&self) -> PidState {
        PidState {
            default_pid: self.default_pid,
            seen_unprefixed: self.seen_unprefixed,
            announced: self.announced.clone(),
            syscalls: self.syscalls_before || self.stats.syscalls > 0,
        }
    }

    /// Start from what the input's earlier lines told of the pid column.
    pub fn seed_pids(&mut self, p: &PidState) {
        self.default_pid = p.default_pid;
        self.seen_unprefixed = p.seen_unprefixed;
        self.announced.clone_from(&p.announced);
        self.syscalls_before = p.syscalls || self.stats.syscalls > 0;
    }

    /// Take over the head of a line an earlier chunk ended with, cut by strace's own message:
    /// the next line parsed here is its rest.
    pub fn seed_splice(&mut self, head: String) {
        self.splice_head = Some(head);
    }

    pub fn seed_clock(&mut self, c: ClockState) {
        self.clock = c.clock;
        self.rel_acc = c.rel_acc;
        self.day_offset = c.day_offset;
        self.last_tod = c.last_tod.unwrap_or(i64::MIN);
    }

    /// Take over a line an earlier chunk ended with, cut and waiting for its continuation
    /// (`ts` and `pid` already in the reader's terms, `line_no` counted from the input's
    /// start): the next line parsed here decides what it was.
    pub fn inject_dangling(&mut self, d: Dangling) {
        self.dangling = Some(d);
    }

    /// A dangling line whose continuation did not come: unparsed, as the sequential reader
    /// decides when the next line is not a continuation.
    pub fn settle_dangling(&mut self) {
        if let Some(d) = self.dangling.take() {
            self.unparsed(&d.line, d.line_no);
        }
    }

    /// Take over a call left unfinished at the end of an earlier chunk. A call already
    /// pending for that pid was lost: it is flushed first.
    pub fn inject_pending<F: FnMut(&Event)>(&mut self, pid: Tid, ts: Option<i64>, text: String, sink: &mut F) {
        if self.pending.contains_key(&pid) {
            self.flush_pending(pid, Ret::Unknown, sink);
        }
        self.pending.insert(pid, Pending { ts, text });
    }

    pub fn has_pending(&self, pid: Tid) -> bool {
        self.pending.contains_key(&pid)
    }

    /// Flush a pending call of `pid` as never returned (its process went on without it).
    pub fn drop_pending<F: FnMut(&Event)>(&mut self, pid: Tid, sink: &mut F) {
        self.flush_pending(pid, Ret::Unknown, sink);
    }

    /// Flush a pending call of `pid` as cut by a detach (`Process N detached`).
    pub fn detach_pending<F: FnMut(&Event)>(&mut self, pid: Tid, sink: &mut F) {
        self.flush_pending(pid, Ret::Unfinished, sink);
    }

    /// Settle a line a chunk parser marked ([`Mark`]; `pid` and `old` already in the reader's
    /// terms, `ts` on its time line). `line_base`: lines before the mark's chunk, for the
    /// sample of an unreadable one.
    pub fn settle_mark<F: FnMut(&Event)>(&mut self, m: Mark, ts: Option<i64>, line_base: u64, sink: &mut F) {
        match m.what {
            Marked::Resumed { body, line } => {
                if !self.resumed(&body, m.pid, ts, sink) {
                    // as the sequential reader counts it
                    self.unparsed(&body, line_base + line);
                }
            }
            Marked::Started => {
                if self.pending.contains_key(&m.pid) {
                    self.flush_pending(m.pid, Ret::Unknown, sink);
                }
            }
            Marked::Superseded { old, held } => {
                if let Some((ts, text)) = held {
                    self.inject_pending(m.pid, ts, text, sink);
                }
                self.supersede(m.pid, old, sink);
            }
        }
    }

    /// A new unfinished call of `pid`: one still pending never came back. In a chunk, a call of
    /// `pid` pending from an earlier chunk would end here: the line is marked for the reader.
    #[inline(always)]
    fn start_pending<F: FnMut(&Event)>(&mut self, pid: Tid, ts: Option<i64>, text: String, sink: &mut F) {
        if self.pending.contains_key(&pid) {
            self.flush_pending(pid, Ret::Unknown, sink);
        } else if self.chunk_mode {
            self.marks.push(Mark { at: self.stats.events, pid, ts: None, what: Marked::Started });
        }
        self.pending.insert(pid, Pending { ts, text });
    }

    /// Thread `old` called execve and became the leader `pid`: its pending execve resumes as
    /// `pid`'s (a call `pid` had pending never came back).
    fn supersede<F: FnMut(&Event)>(&mut self, pid: Tid, old: Tid, sink: &mut F) {
        if let Some(p) = self.pending.remove(&old) {
            self.start_pending(pid, p.ts, p.text, sink);
        } else if self.chunk_mode {
            // OLD's call may be pending from an earlier chunk
            let held = self.pending.remove(&pid).map(|p| (p.ts, p.text));
            self.marks.push(Mark { at: self.stats.events, pid, ts: None, what: Marked::Superseded { old, held } });
        }
    }

    fn flush_pending<F: FnMut(&Event)>(&mut self, pid: Tid, ret: Ret<'_>, sink: &mut F) {
        if let Some(p) = self.pending.remove(&pid) {
            self.stats.never_resumed += 1;
            let text = p.text.trim_end();
            let (name, args) = match text.find('(') {
                Some(i) => (&text[..i], &text[i + 1..]),
                None => (text, ""),
            };
            let mut sc = Syscall {
                sys: Sys::from_name(name),
                name,
                args: syslint_event::Args::Text(args.trim_end()),
                ret: ret.clone(),
                dur_ns: None,
                resumed: false,
                pre: syslint_event::Pre::NONE,
            };
            sc.decode_pre();
            let ev = Event { tid: pid, ts_ns: p.ts, kind: EventKind::Syscall(sc) };
            self.stats.events += 1;
            self.stats.syscalls += 1;
            sink(&ev);
        }
    }

    fn parse_inner<F: FnMut(&Event)>(&mut self, line: &str, pid_hint: Option<Tid>, sink: &mut F) -> bool {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.as_bytes().first() == Some(&b' ') && after_a_call(line) {
            self.stats.ignored += 1;
            return true;
        }
        // the terminal's echo of Ctrl-C lands in front of whatever strace prints next
        let line = line.strip_prefix("^C").unwrap_or(line);
        let mut s = skip_spaces(line);
        if s.is_empty() {
            self.stats.ignored += 1;
            return true;
        }
        // what /proc said about an attached process's threads, written by syslint into its
        // text recording (strace never starts a line with `#`)
        if s.starts_with(crate::procfs::RECORDING_TAG) {
            let Some((tid, t)) = crate::procfs::parse_recording_line(s) else { return false };
            let kind = EventKind::TaskKnown {
                tgid: syslint_event::Tgid(t.tgid),
                parent: t.parent.map(syslint_event::Tgid),
                comm: &t.comm,
            };
            self.stats.events += 1;
            sink(&Event { tid: Tid(tid), ts_ns: None, kind });
            return true;
        }
        // `grep -A/-B/-C`'s separator between groups of matching lines
        if s == "--" {
            self.stats.ignored += 1;
            return true;
        }
        if let Some(r) = strace_note(s) {
            return self.note(r, pid_hint, sink);
        }
        // `strace -c` rows start with numbers that look like -r timestamps; in a strace line
        // no number follows the timestamp. Decided per line, so chunks need no state.
        if looks_like_c_row(s) && self.c_table_row(s) {
            return true;
        }

        // pid column: `123 ` (-f to a file), `[pid  123] ` (-f to a terminal), `123<comm> ` (-Y).
        // A number right-aligned with leading spaces is a -r timestamp, not a pid; so is one
        // above the largest possible pid (4194304): `--timestamps=unix,s`.
        let mut pid = pid_hint.or(self.default_pid).unwrap_or(Tid(0));
        self.line_pid_column = false;
        if let Some(r) = s.strip_prefix("[pid ") {
            let r = r.trim_start();
            let end = r.find(']').unwrap_or(0);
            // strace never prints pid 0 (the idle task is never traced), and Tid(0) stands for
            // "no pid column" here: a line saying pid 0 is garbled
            match r[..end].parse::<Tid>() {
                Ok(p) if p != Tid(0) => {
                    pid = p;
                    s = r[end + 1..].trim_start();
                    self.stats.pid_style = "[pid N]";
                    self.bracketed = true;
                    if self.seen_unprefixed && self.default_pid.is_none() && !self.announced.contains(&p) {
                        // strace to a terminal prefixes lines only once there are several
                        // processes: the first unannounced pid is the one the earlier lines
                        // belonged to
                        self.alias_unprefixed(p, sink);
                    }
                }
                _ => return false,
            }
        } else if !line.starts_with(' ') {
            let b = s.as_bytes();
            let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
            let after = b.get(n).copied();
            if n > 0 && (after == Some(b' ') || after == Some(b'<')) {
                let p = parse_u64(&b[..n]);
                if (1..=PID_MAX).contains(&p) {
                    pid = Tid(p as u32);
                    let mut r = &s[n..];
                    if r.starts_with('<') {
                        // -Y: the process name follows the pid
                        r = r.find("> ").map_or(r, |e| &r[e + 1..]);
                    }
                    s = skip_spaces(r);
                    self.line_pid_column = true;
                    if self.stats.pid_style == "none" {
                        self.stats.pid_style = "pid";
                    }
                }
            }
        }

        let unprefixed = pid == Tid(0) && pid_hint.is_none();

        // a relative delta printed with its sign before the clock time, `+0.000025 09:51:25.092563
        // clone(...)` (pstore#11's paste): no strace line starts with `+` and a digit
        if s.as_bytes().first() == Some(&b'+') && s.as_bytes().get(1).is_some_and(u8::is_ascii_digit) {
            if let Some(e) = s.find(' ') {
                let d = &s[1..e];
                if d.bytes().all(|c| c.is_ascii_digit() || c == b'.') && d.contains('.') {
                    s = skip_spaces(&s[e..]);
                }
            }
        }
        // timestamp
        let mut ts = None;
        if s.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            match self.timestamp(s) {
                Some((t, rest)) => {
                    ts = Some(t);
                    s = rest;
                }
                None => return self.c_table_row(s),
            }
        }
        // -t -r together: `10:00:00.000001 (+     0.000494) read(...)`
        if s.starts_with("(+") {
            s = s.find(") ").map_or(s, |e| s[e + 1..].trim_start());
        }
        // -n: the syscall number, `[ 110] ` (before -i's pointer; `[ 231] +++ exited ...` too)
        if s.starts_with('[') {
            if let Some(e) = s.find("] ") {
                let nr = skip_spaces(&s[1..e]);
                if !nr.is_empty() && nr.bytes().all(|c| c.is_ascii_digit()) {
                    s = s[e + 1..].trim_start();
                }
            }
        }
        // -i: the instruction pointer, `[00007f0a1b2c3d4e] ` or `[????????????????] `
        if s.starts_with('[') && !s.starts_with("[ Process") {
            if let Some(e) = s.find("] ") {
                if s[1..e].bytes().all(|c| c.is_ascii_hexdigit() || c == b'?') {
                    s = s[e + 1..].trim_start();
                }
            }
        }
        if unprefixed && !s.starts_with("Process ") {
            self.seen_unprefixed = true;
        }
        self.parse_body(s, line, pid, ts, sink)
    }

    /// Everything after the pid and timestamp.
    fn parse_body<F: FnMut(&Event)>(&mut self, s: &str, line: &str, pid: Tid, ts: Option<i64>, sink: &mut F) -> bool {
        let b = s.as_bytes();
        match b.first() {
            Some(b'-') if s.starts_with("--- ") => return self.signal(s, pid, ts, sink),
            Some(b'+') if s.starts_with("+++ ") => return self.exit(s, pid, ts, sink),
            Some(b'<') if s.starts_with("<... ") => return self.resumed(s, pid, ts, sink),
            Some(b'P') if s.starts_with("Process ") => return self.note(s, None, sink),
            Some(b'%' | b'-') => return self.c_table_row(s),
            Some(b'[') if s.starts_with("[ Process PID=") => {
                self.stats.ignored += 1;
                return true;
            }
            // the end of a line whose start strace's own detach message pushed away
            Some(b'<') if s == "<detached ...>" || s == "<unfinished ...>" => {
                self.stats.ignored += 1;
                return true;
            }
            _ => {}
        }
        // `name(args) = ret` or `name(args <unfinished ...>`
        let name_len = b.iter().take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'?').count();
        if name_len == 0 || b.get(name_len) != Some(&b'(') {
            return self.c_table_row(s);
        }
        if let Some(head) = s.strip_suffix(" <unfinished ...>").or_else(|| s.strip_suffix(" <detached ...>")) {
            let detached = s.ends_with(" <detached ...>");
            let name = &s[..name_len];
            // (a clone whose flags come only with its resumption, as strace 4.5 printed it,
            // says nothing yet)
            let known = matches!(name, "fork" | "vfork") || (name.starts_with("clone") && head.contains("flags="));
            // (only on a line that names its pid: pid-less lines belong to a process decided
            // later, differently in each chunk of a parallel read)
            if !detached && known && self.line_pid_column {
                // the task it makes may print calls before this call returns with its id: say
                // now that it is coming, and whether it is a thread (under load, a server's new
                // thread read a request before the clone resumed, and the read was counted as
                // another process's)
                let clone = s.starts_with("clone");
                let kind = EventKind::Spawning {
                    thread: clone && head.contains("CLONE_THREAD"),
                    files: clone && head.contains("CLONE_FILES"),
                };
                self.stats.events += 1;
                sink(&Event { tid: pid, ts_ns: ts, kind });
            }
            // a second unfinished for the same pid means the first was lost: flush it
            let text = self.pooled(head);
            self.start_pending(pid, ts, text, sink);
            if detached {
                self.flush_pending(pid, Ret::Unfinished, sink);
            }
            return true;
        }
        // a thread's execve that makes it the leader: `... <pid changed to 4320 ...>`
        if let Some(i) = s.ends_with(" ...>").then(|| s.rfind(" <pid changed to ")).flatten() {
            // (`get`: in a garbled `x( <pid changed to ...>` the two marks overlap)
            let new_pid = s.get(i + 17..s.len() - 5).and_then(|p| p.trim().parse::<Tid>().ok()).unwrap_or(pid);
            self.start_pending(new_pid, ts, s[..i].to_string(), sink);
            return true;
        }
        match split_call(s, name_len) {
            Some(call) => {
                if self.pending.contains_key(&pid) {
                    // a thread makes one call at a time: the unfinished one never came back
                    // (as the parallel reader's glue decides when the two are in two chunks)
                    self.flush_pending(pid, Ret::Unknown, sink);
                }
                self.emit_call(pid, ts, call, false, sink);
                true
            }
            None if Sys::from_name(&s[..name_len]).is(Class::EXIT) && s.trim_end().ends_with(')') => {
                // strace 4.5 printed a final exit_group(0) with no ` = ?`
                let call = Call {
                    name: &s[..name_len],
                    args: &s[name_len + 1..s.trim_end().len() - 1],
                    ret: Ret::Unknown,
                    dur_ns: None,
                };
                self.flush_pending(pid, Ret::Unknown, sink);
                self.emit_call(pid, ts, call, false, sink);
                true
            }
            None => {
                // maybe the program's own output, or strace's detach, cut the line in two
                // (both writing to one terminal): keep it and see what the next line says
                self.dangling = Some(Dangling {
                    pid,
                    ts,
                    text: s.to_string(),
                    line: line.to_string(),
                    line_no: self.cur_line,
                    pid_column: self.line_pid_column,
                });
                true
            }
        }
    }

    /// A copy of `s` in a recycled buffer: unfinished calls are many, allocations are not free.
    fn pooled(&mut self, s: &str) -> String {
        let mut t = self.pool.pop().unwrap_or_default();
        t.clear();
        t.push_str(s);
        t
    }

    /// A call pending under `old` is `new`'s (pid-less lines turned out to be `new`'s, as a
    /// chunk read in order decided).
    /// If `new` had one too, that one (older) never came back, as in [`Self::alias_unprefixed`].
    pub fn rename_pending<F: FnMut(&Event)>(&mut self, old: Tid, new: Tid, sink: &mut F) {
        if let Some(p) = self.pending.remove(&old) {
            self.flush_pending(new, Ret::Unknown, sink);
            self.pending.insert(new, p);
        }
    }

    fn alias_unprefixed<F: FnMut(&Event)>(&mut self, pid: Tid, sink: &mut F) {
        self.default_pid = Some(pid);
        self.pid_decided = true;
        self.stats.events += 1;
        sink(&Event { tid: pid, ts_ns: None, kind: EventKind::Alias { old: Tid(0) } });
        // the pid-less lines' unfinished call is `pid`'s now. A call `pid` left unfinished
        // under its own pid came before any pid-less line (the first `[pid N]` line after one
        // decides), so it is the older: a thread makes one call at a time, and that one never
        // came back
        if self.chunk_mode && self.pending.contains_key(&Tid(0)) && !self.pending.contains_key(&pid) {
            // it may be pending from an earlier chunk: the reader ends it here
            self.marks.push(Mark { at: self.stats.events, pid, ts: None, what: Marked::Started });
        }
        self.rename_pending(Tid(0), pid, sink);
    }

    /// Try to finish a line cut by program output with `cont` (`) = 77`).
    /// The line after a cut one: its continuation (`) = 77`, ` <unfinished ...>`), or a
    /// detach note that explains why it ended there.
    fn rejoin<F: FnMut(&Event)>(&mut self, d: Dangling, cont: &str, sink: &mut F) -> Rejoin {
        let c = cont.strip_prefix("^C").unwrap_or(cont).trim_start();
        if c.starts_with(')') {
            // the call is the cut line's, pid column and all
            self.line_pid_column = d.pid_column;
            let name_len = d.text.find('(').unwrap_or(0);
            let mut merged = d.text;
            merged.push_str(c);
            return match split_call(&merged, name_len) {
                Some(call) => {
                    self.stats.rejoined += 1;
                    // a complete call, as any other: the thread's unfinished one never came back
                    self.flush_pending(d.pid, Ret::Unknown, sink);
                    self.emit_call(d.pid, d.ts, call, false, sink);
                    Rejoin::Joined
                }
                None => Rejoin::No(Dangling { text: merged, ..d }),
            };
        }
        if c.starts_with("<unfinished ...>") || c.starts_with("<detached ...>") {
            let merged = format!("{} {c}", d.text.trim_end());
            self.stats.rejoined += 1;
            return if self.parse_body(&merged, &d.line, d.pid, d.ts, sink) { Rejoin::Joined } else { Rejoin::No(d) };
        }
        let note = strace_note(c).or(Some(c).filter(|c| c.starts_with("Process ")));
        if note.is_some_and(|n| n.contains(" detached")) {
            // strace 4.x detached in the middle of the call and ended the line
            self.start_pending(d.pid, d.ts, d.text, sink);
            self.flush_pending(d.pid, Ret::Unfinished, sink);
            self.stats.rejoined += 1;
            return Rejoin::Settled;
        }
        Rejoin::No(d)
    }

    fn emit_call<F: FnMut(&Event)>(&mut self, pid: Tid, ts: Option<i64>, c: Call<'_>, resumed: bool, sink: &mut F) {
        if c.dur_ns.is_some() && !resumed {
            self.stats.with_duration += 1;
        }
        if let Ret::Ok { val, .. } = c.ret {
            if val > 0 && !resumed && !self.line_pid_column && Sys::from_name(c.name).is(Class::SPAWN) {
                // a child: never the process that pid-less lines belonged to. Only a call
                // read whole says so: a resumption's start may be in another chunk, whose
                // parser cannot know it (and strace's own `Process N attached`, which
                // announces the child too, comes before the parent's call resumes)
                self.announced.insert(Tid(val as u32));
            }
        }
        let mut sc = Syscall {
            sys: Sys::from_name(c.name),
            name: c.name,
            args: syslint_event::Args::Text(c.args),
            ret: c.ret,
            dur_ns: c.dur_ns,
            resumed,
            pre: syslint_event::Pre::NONE,
        };
        // the fd and path arguments, decoded here once (on the parallel reader's workers)
        sc.decode_pre();
        let ev = Event { tid: pid, ts_ns: ts, kind: EventKind::Syscall(sc) };
        self.stats.events += 1;
        self.stats.syscalls += 1;
        sink(&ev);
    }

    /// `<... read resumed>"data", 4096) = 4 <0.000123>` (strace 4 puts a space after `>`).
    fn resumed<F: FnMut(&Event)>(&mut self, s: &str, pid: Tid, ts: Option<i64>, sink: &mut F) -> bool {
        // the name is one word: look right after it first (a searcher's set-up costs more than
        // the search on lines this short), then anywhere
        let after_name = memchr::memchr(b' ', &s.as_bytes()[5..]).map(|i| i + 5);
        let Some(close) = after_name
            .filter(|&i| s.as_bytes()[i..].starts_with(b" resumed>"))
            // (after `<... `: a garbled `<... resumed> x resumed>` has one before the name)
            .or_else(|| memchr::memmem::find(&s.as_bytes()[5..], b" resumed>").map(|i| i + 5))
        else {
            return false;
        };
        let name = &s[5..close];
        let rest = &s[close + 9..];
        if self.chunk_mode && !self.pending.contains_key(&pid) {
            // its start may be in the previous chunk: the reader joins them
            let what = Marked::Resumed { body: s.to_string(), line: self.cur_line };
            self.marks.push(Mark { at: self.stats.events, pid, ts, what });
            return true;
        }
        let Some(p) = self.pending.remove(&pid) else {
            // attached in the middle of the call: we only know the end
            self.stats.orphan_resumed += 1;
            self.merge_buf.clear();
            self.merge_buf.push_str(name);
            self.merge_buf.push('(');
            self.merge_buf.push_str(rest.trim_start());
            let buf = std::mem::take(&mut self.merge_buf);
            let ok = match split_call(&buf, name.len()) {
                Some(mut call) => {
                    call.args = "";
                    self.emit_call(pid, ts, call, true, sink);
                    true
                }
                None => false,
            };
            self.merge_buf = buf;
            return ok;
        };
        self.stats.resumed_pairs += 1;
        // the unfinished head is `name(args...`; glue the rest on
        self.merge_buf.clear();
        let head = p.text.trim_end();
        self.merge_buf.push_str(head);
        let rest = rest.trim_start();
        if head.ends_with(',') {
            self.merge_buf.push(' ');
        }
        self.merge_buf.push_str(rest);
        let name_len = head.find('(').unwrap_or(head.len());
        let buf = std::mem::take(&mut self.merge_buf);
        let ok = match split_call(&buf, name_len) {
            Some(mut call) => {
                if call.dur_ns.is_some() {
                    self.stats.with_duration += 1;
                } else if let (Some(a), Some(b)) = (p.ts, ts) {
                    // no -T: the time between the two lines is the call's duration
                    call.dur_ns = Some(b.saturating_sub(a).max(0) as u64);
                }
                self.emit_call(pid, p.ts.or(ts), call, true, sink);
                true
            }
            None => false,
        };
        if self.pool.len() < 64 {
            self.pool.push(p.text);
        }
        self.merge_buf = buf;
        ok
    }

    /// `--- SIGCHLD {si_signo=SIGCHLD, ...} ---`, `--- SIGSEGV (Segmentation fault) @ 0 (0) ---`,
    /// `--- {si_signo=SIGSEGV, ...} (Segmentation fault) ---`, `--- stopped by SIGSTOP ---`.
    fn signal<F: FnMut(&Event)>(&mut self, s: &str, pid: Tid, ts: Option<i64>, sink: &mut F) -> bool {
        let body = s[4..].trim_end().strip_suffix("---").unwrap_or(&s[4..]).trim();
        let (name, info) = if body.starts_with("SIG") {
            let end = body.find(' ').unwrap_or(body.len());
            (&body[..end], body[end..].trim())
        } else if let Some(i) = body.find("si_signo=") {
            let r = &body[i + 9..];
            let end = r.find([',', '}']).unwrap_or(r.len());
            (&r[..end], body)
        } else if let Some(r) = body.strip_prefix("stopped by ") {
            (r.trim(), "stopped")
        } else {
            return false;
        };
        self.stats.events += 1;
        sink(&Event { tid: pid, ts_ns: ts, kind: EventKind::Signal { name, info } });
        true
    }

    /// `+++ exited with 0 +++`, `+++ killed by SIGKILL (core dumped) +++`,
    /// `+++ superseded by execve in pid 123 +++`.
    fn exit<F: FnMut(&Event)>(&mut self, s: &str, pid: Tid, ts: Option<i64>, sink: &mut F) -> bool {
        let body = s[4..].trim_end().strip_suffix("+++").unwrap_or(&s[4..]).trim();
        let kind = if let Some(code) = body.strip_prefix("exited with ") {
            match code.trim().parse() {
                Ok(code) => EventKind::Exited { code },
                Err(_) => return false,
            }
        } else if let Some(sig) = body.strip_prefix("killed by ") {
            let core = sig.contains("(core dumped)");
            let signal = sig.split_whitespace().next().unwrap_or(sig);
            EventKind::Killed { signal, core_dumped: core }
        } else if let Some(r) = body.strip_prefix("superseded by execve in pid ") {
            // thread `r` called execve and became the leader `pid`: its pending execve now
            // resumes under the leader's pid
            if let Ok(old) = r.trim().parse::<Tid>() {
                self.supersede(pid, old, sink);
            }
            self.stats.ignored += 1;
            return true;
        } else {
            return false;
        };
        // a call that never came back ends with the process
        self.flush_pending(pid, Ret::Unknown, sink);
        self.stats.events += 1;
        sink(&Event { tid: pid, ts_ns: ts, kind });
        true
    }

    /// `Process 123 attached`, `Process 797 attached with 2 threads`,
    /// `Process 29579 attached - interrupt to quit`, `Process 123 detached`.
    fn note<F: FnMut(&Event)>(&mut self, s: &str, _hint: Option<Tid>, sink: &mut F) -> bool {
        let Some(r) = s.strip_prefix("Process ") else {
            // other strace chatter ("strace: [ Process PID=... runs in 32 bit mode. ]")
            self.stats.ignored += 1;
            return true;
        };
        let mut it = r.split_whitespace();
        let Some(pid) = it.next().and_then(|p| p.parse::<Tid>().ok()).filter(|&p| p != Tid(0)) else {
            return false;
        };
        let kind = match it.next() {
            Some("attached") => {
                let threads = if it.next() == Some("with") { it.next().and_then(|n| n.parse().ok()) } else { None };
                EventKind::Attached { threads }
            }
            Some("detached") => {
                // a call in progress at detach will not be seen to return
                self.flush_pending(pid, Ret::Unfinished, sink);
                EventKind::Detached
            }
            _ => {
                self.stats.ignored += 1;
                return true;
            }
        };
        if matches!(kind, EventKind::Attached { .. }) {
            self.announced.insert(pid);
            if !self.seen_unprefixed && self.default_pid.is_none() && !self.syscalls_before && self.stats.syscalls == 0
            {
                // `strace -p N` to a terminal: lines that follow carry no pid column
                self.default_pid = Some(pid);
                self.pid_decided = true;
            }
        }
        self.stats.events += 1;
        sink(&Event { tid: pid, ts_ns: None, kind });
        true
    }

    /// `strace -c` table lines: header, rule and rows. Anything else is not understood.
    fn c_table_row(&mut self, s: &str) -> bool {
        let t = s.trim();
        if t.starts_with("% time") || t.starts_with("------") {
            self.stats.ignored += 1;
            return true;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors], syscall
        if (4..=6).contains(&toks.len()) && toks[0].contains('.') && toks[0].parse::<f64>().is_ok() {
            let name = toks[toks.len() - 1];
            let nums: Vec<f64> = toks[1..toks.len() - 1].iter().filter_map(|x| x.parse().ok()).collect();
            if nums.len() == toks.len() - 2 {
                if name != "total" {
                    let seconds = nums[0];
                    // with an empty usecs/call column the row has one number less
                    let (calls, errors) = match nums.len() {
                        4 => (nums[2], nums[3]),
                        3 => (nums[2], 0.0),
                        _ => (nums[1], 0.0),
                    };
                    self.stats.strace_c_table.push(SummaryRow {
                        name: name.to_string(),
                        seconds,
                        calls: calls as u64,
                        errors: errors as u64,
                    });
                }
                self.stats.ignored += 1;
                return true;
            }
        }
        false
    }

    /// Parse a timestamp at the start of `s`; returns nanoseconds and the rest of the line.
    /// A time of day (ns since midnight) on the log's time line: the clock is known to be
    /// time of day from now on, and a jump back of more than 12 hours is the next day.
    #[inline]
    fn time_of_day(&mut self, mut t: i64) -> i64 {
        if self.clock == Clock::None {
            self.clock = Clock::TimeOfDay;
        }
        if self.last_tod == i64::MIN {
            self.first_tod = Some(t);
        } else if t + self.day_offset < self.last_tod - DAY_NS / 2 {
            self.day_offset += DAY_NS;
        }
        t += self.day_offset;
        self.last_tod = t;
        t
    }

    fn timestamp<'s>(&mut self, s: &'s str) -> Option<(i64, &'s str)> {
        let b = s.as_bytes();
        // the common shape first, at fixed positions: `HH:MM:SS.ffffff ` (-tt)
        if b.len() > 15 && b[15] == b' ' && b[2] == b':' && b[5] == b':' && b[8] == b'.' {
            let d = |i: usize| i64::from(b[i].wrapping_sub(b'0'));
            const DIGITS: [usize; 12] = [0, 1, 3, 4, 6, 7, 9, 10, 11, 12, 13, 14];
            if DIGITS.iter().all(|&i| d(i) < 10) {
                let secs = (d(0) * 10 + d(1)) * 3600 + (d(3) * 10 + d(4)) * 60 + d(6) * 10 + d(7);
                let us = DIGITS[6..].iter().fold(0, |v, &i| v * 10 + d(i));
                let t = self.time_of_day(secs * NS + us * 1000);
                return Some((t, skip_spaces(&s[15..])));
            }
        }
        let end = b.iter().position(|&c| c == b' ')?;
        let tok = &b[..end];
        let rest = skip_spaces(&s[end..]);
        if tok.len() >= 8 && tok[2] == b':' && tok[5] == b':' {
            // HH:MM:SS[.frac]
            let h = parse_u64(&tok[0..2]) as i64;
            let m = parse_u64(&tok[3..5]) as i64;
            let sec = parse_u64(&tok[6..8]) as i64;
            if !tok[..8].iter().enumerate().all(|(i, c)| i == 2 || i == 5 || c.is_ascii_digit()) {
                return None;
            }
            let frac = if tok.len() > 9 && tok[8] == b'.' { parse_frac(&tok[9..])? } else { 0 };
            let t = self.time_of_day(((h * 60 + m) * 60 + sec) * NS + frac);
            return Some((t, rest));
        }
        // `secs.frac`, or whole seconds (--timestamps=unix,s, --relative-timestamps=s)
        let dot = tok.iter().position(|&c| c == b'.').unwrap_or(tok.len());
        if dot == 0 || !tok[..dot].iter().all(u8::is_ascii_digit) {
            return None;
        }
        let secs = parse_u64(&tok[..dot]) as i64;
        let frac = if dot < tok.len() { parse_frac(&tok[dot + 1..])? } else { 0 };
        let v = secs.saturating_mul(NS).saturating_add(frac);
        self.numbers = true;
        if self.clock == Clock::None {
            // -ttt prints seconds since 1970; -r prints small deltas from the previous line
            self.clock = if secs > 100_000_000 { Clock::Epoch } else { Clock::Relative };
        }
        match self.clock {
            Clock::Relative => {
                self.rel_acc = self.rel_acc.saturating_add(v);
                Some((self.rel_acc, rest))
            }
            _ => Some((v, rest)),
        }
    }
}

/// What a report shows of a line it could not read. A line that looks like a call keeps its
/// shape with every quoted string replaced by its length (a call cut mid-write may hold what
/// the program wrote); any other text (the program's own output mixed into the log, binary
/// junk) is left out but for its length: reports travel, the log stays where it is.
pub fn sample_of(line: &str) -> String {
    let head = &line[..line.char_indices().nth(80).map_or(line.len(), |(i, _)| i)];
    let call = head.find('(').is_some_and(|p| {
        let word = head[..p].rsplit([' ', '>']).next().unwrap_or("");
        !word.is_empty() && word.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
    });
    if !call {
        return format!("({} bytes of text that is not a strace line, left out of the report)", line.len());
    }
    let red = syslint_event::redact::redact(line);
    let mut text: String = red.chars().take(SAMPLE_CHARS).collect();
    if text.len() < red.len() {
        text.push_str("...");
    }
    text
}

/// `  42.68    1.865496   519   3594   1644 access`: a float, then another number.
#[inline]
fn looks_like_c_row(s: &str) -> bool {
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
fn after_a_call(line: &str) -> bool {
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
struct Call<'a> {
    name: &'a str,
    args: &'a str,
    ret: Ret<'a>,
    dur_ns: Option<u64>,
}

/// `s` without its leading ASCII spaces (what `trim_start_matches(' ')` gives, by bytes: the
/// char searcher cost ~35 instructions a line).
#[inline]
fn skip_spaces(s: &str) -> &str {
    let n = s.bytes().take_while(|&c| c == b' ').count();
    &s[n..]
}

/// Split `name(args) = ret [<dur>]`. `name_len` is the length of the name before `(`.
fn split_call(s: &str, name_len: usize) -> Option<Call<'_>> {
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
fn find_ret_sep(body: &str, name_len: usize) -> Option<usize> {
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
fn parse_ret(r: &str) -> Option<Ret<'_>> {
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
fn parse_duration(d: &str) -> Option<u64> {
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
const MAX_DURATION_NS: u64 = 100 * 365 * 86_400 * 1_000_000_000;

#[inline]
fn parse_u64(b: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &c in b {
        v = v.saturating_mul(10).saturating_add((c - b'0') as u64);
    }
    v
}

/// Fraction digits to nanoseconds (`123456` -> 123_456_000).
#[inline]
fn parse_frac(b: &[u8]) -> Option<i64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_of_unreadable_lines_cut_on_characters() {
        // a multi-byte character across the 80th byte (binary junk read as lossy UTF-8)
        let line = format!("{}\u{fffd}\u{fffd}", "x".repeat(79));
        assert!(sample_of(&line).contains("bytes of text that is not a strace line"));
        let call = format!("write(1, \"{}\u{e9}...", "a".repeat(90));
        assert!(sample_of(&call).starts_with("write(1, \"…"), "{}", sample_of(&call));
    }

    fn one(lines: &[&str]) -> Vec<String> {
        let mut p = Parser::new("t");
        let mut out = vec![];
        for (i, l) in lines.iter().enumerate() {
            p.parse_line(l, i as u64 + 1, None, &mut |e: &Event| out.push(format!("{e:?}")));
        }
        p.finish(&mut |e: &Event| out.push(format!("{e:?}")));
        out
    }

    #[test]
    fn syslint_task_lines_are_task_facts() {
        // written by `trace -p --backend strace -o` before strace's own text
        let out = one(&[
            "#syslint task 812 812 1 postgres",
            "#syslint task 815 812 - ",
            "#syslint task 815 x",
            "815  12:00:00.000001 getpid() = 812",
        ]);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert!(
            out[0].contains("TaskKnown") && out[0].contains("Tgid(812)") && out[0].contains("\"postgres\""),
            "{}",
            out[0]
        );
        assert!(
            out[1].contains("TaskKnown") && out[1].contains("parent: None") && out[1].contains("comm: \"\""),
            "{}",
            out[1]
        );
        assert!(out[2].contains("Getpid"), "{}", out[2]);
        let mut p = Parser::new("t");
        p.parse_line("#syslint task 815 x", 1, None, &mut |_: &Event| {});
        assert_eq!(p.stats().unparsed, 1, "a malformed one is not silently dropped");
    }

    #[test]
    fn ret_forms() {
        assert_eq!(parse_ret("0").unwrap(), Ret::Ok { val: 0, deco: None, note: "" });
        assert_eq!(parse_ret("-1 ENOENT (No such file or directory)").unwrap(), Ret::Err { val: -1, errno: "ENOENT" });
        assert_eq!(parse_ret("?").unwrap(), Ret::Unknown);
        assert_eq!(
            parse_ret("? ERESTARTSYS (To be restarted if SA_RESTART is set)").unwrap(),
            Ret::Err { val: 0, errno: "ERESTARTSYS" }
        );
        assert_eq!(parse_ret("0 (Timeout)").unwrap(), Ret::Ok { val: 0, deco: None, note: "(Timeout)" });
        assert_eq!(parse_ret("3</etc/hosts>").unwrap(), Ret::Ok { val: 3, deco: Some("/etc/hosts"), note: "" });
        assert_eq!(parse_ret("0x7f1234").unwrap().value(), Some(0x7f1234));
    }

    #[test]
    fn pairs_merge_across_pids() {
        let out = one(&[
            "[pid  2] 10:00:00.000100 read(3</p>,  <unfinished ...>",
            "[pid  3] 10:00:00.000200 getpid() = 3",
            "[pid  2] 10:00:00.000900 <... read resumed>\"ab\", 4096) = 2 <0.000800>",
        ]);
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("args: \"3</p>, \\\"ab\\\", 4096\""), "{}", out[1]);
        assert!(out[1].contains("dur_ns: Some(800000)"), "{}", out[1]);
        assert!(out[1].contains("ts_ns: Some(36000000100000)"), "{}", out[1]);
    }

    #[test]
    fn padded_and_tricky_lines() {
        let out = one(&[
            "brk(NULL)                               = 0x5555555fc000",
            r#"write(1, "a) = 1\n", 6)                = 6"#,
            "exit_group(0)                           = ?",
            "+++ exited with 0 +++",
        ]);
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(out[1].contains(r#"args: "1, \"a) = 1\\n\", 6""#), "{}", out[1]);
    }
}
