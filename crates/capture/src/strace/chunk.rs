//! The seams between chunks of a log read in parallel: what one chunk's parser hands to the
//! next (pending calls, clocks, pid columns, lines cut in two) and the parser's side of it.

use super::*;

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
        /// The whole line as read (pid, time and all), when it is more than `body`: what its
        /// sample shows if it turns out unreadable, as the sequential reader's would.
        whole: Option<String>,
        /// Its line number in the chunk (1-based), for the sample if it turns out unreadable.
        line: u64,
        /// The `-k` stack read after it (the chunk's id until the reader maps it).
        stack: Option<syslint_event::StackId>,
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
    /// A call's line was read (after one, `Process N attached` no longer names the pid-less
    /// lines).
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
    /// The chunk's first lines, when they may continue a line the previous chunk ended with
    /// ([`could_continue`]): blank lines, and the first other line if it could continue too.
    /// Not parsed here: the reader gives them to the parser that holds the previous chunk's
    /// [`dangling`](Self::dangling) line.
    pub lead: Vec<String>,
    /// The chunk's last line, cut by program output and waiting for its continuation.
    pub dangling: Option<Dangling>,
    /// The head of the chunk's last line, cut by strace's own `strace: Process N attached`:
    /// its rest is the next chunk's first line, whatever that line looks like.
    pub splice: Option<String>,
}

/// Whether a line may be the continuation of a syscall line cut in two (by the program's
/// output, strace's own messages or a mail client's wrapping): `) = 2`, `<unfinished ...>`, a
/// detach note, a blank line, any line that does not begin as strace's own lines do.
pub fn could_continue(line: &str) -> bool {
    let c = line.strip_prefix("^C").unwrap_or(line).trim_start();
    c.is_empty()
        || c.starts_with(')')
        || c.starts_with("<unfinished ...>")
        || c.starts_with("<detached ...>")
        || ((c.starts_with("Process ") || strace_note(c).is_some()) && c.contains(" detached"))
        || !starts_like_a_line(c)
}

/// A syscall line without its end, waiting for the continuation (handed from one chunk to the
/// next by the parallel reader: [`ChunkEnd::dangling`]).
#[derive(Debug)]
pub struct Dangling {
    pub pid: Tid,
    pub ts: Option<i64>,
    pub(super) text: String,
    pub(super) line: String,
    pub line_no: u64,
    /// Its line had a bare pid column (see [`Parser::line_pid_column`]).
    pub(super) pid_column: bool,
}

impl Parser {
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
        self.stats.stacks = self.take_stacks();
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
            lead: std::mem::take(&mut self.lead),
            dangling,
            splice,
        };
        (std::mem::take(&mut self.stats), end)
    }

    /// The `-c` table rows read so far, taken (the reader puts them in input order).
    pub fn take_c_rows(&mut self) -> Vec<syslint_report::CountRow> {
        std::mem::take(&mut self.stats.strace_c_table)
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
            syscalls: self.syscalls_before || self.calls_read,
        }
    }

    /// Start from what the input's earlier lines told of the pid column.
    pub fn seed_pids(&mut self, p: &PidState) {
        self.default_pid = p.default_pid;
        self.seen_unprefixed = p.seen_unprefixed;
        self.announced.clone_from(&p.announced);
        self.syscalls_before = p.syscalls || self.calls_read;
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
            Marked::Resumed { body, whole, line, stack } => {
                let text = whole.as_deref().unwrap_or(&body);
                self.cur_stack = stack;
                let ok = self.resumed(&body, text, m.pid, ts, sink);
                if stack.is_some() && self.cur_stack.is_none() {
                    // the chunk that read its frames counted it
                    self.stats.stacks_attached = self.stats.stacks_attached.saturating_sub(1);
                }
                self.cur_stack = None;
                if !ok {
                    // as the sequential reader counts it
                    self.unparsed(text, line_base + line);
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
}
