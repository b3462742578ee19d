//! What the reader counts and keeps of a log: unparsed lines, `-c` rows, statistics.

use super::*;

/// How many unparsed lines are kept verbatim for the report.
pub const UNPARSED_SAMPLES: usize = 10;

/// Longest text kept for one unparsed sample.
pub(super) const SAMPLE_CHARS: usize = 200;

/// A line the reader did not understand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unparsed {
    pub source: String,
    pub line: u64,
    pub text: String,
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
    /// The rows of an `strace -c` table found in the input (seconds always known).
    pub strace_c_table: Vec<syslint_report::CountRow>,
    pub clock: Clock,
    /// Calls whose duration strace printed (`-T`); joined unfinished/resumed pairs without
    /// `-T` get a duration from their timestamps but do not count here.
    pub with_duration: u64,
    /// The pid column style seen: "none", "pid", "[pid N]".
    pub pid_style: &'static str,
    /// Lines whose arguments strace named (`-N`/`--arg-names`: `read(fd=3, ...)`), read without
    /// the names.
    pub named_args: u64,
    /// Lines holding terminal escape sequences (`--color`, a terminal's recording), read
    /// without them.
    pub coloured: u64,
    /// Lines that began with a log collector's prefix (`ts`, syslog, journald, docker,
    /// kubectl), read without it; the kind first seen.
    pub prefixed: u64,
    pub prefix: Prefix,
    /// `-k` frame lines read.
    pub frame_lines: u64,
    /// Calls handed on with their stack.
    pub stacks_attached: u64,
    /// Stacks that followed no call (a signal's, an unfinished call's, or frames at the start
    /// of a log the reader did not know had stacks).
    pub stacks_unattached: u64,
    /// Stacks strace printed after `+++ exited`: those of calls that never return (exit,
    /// exit_group), not attached to them.
    pub stacks_at_exit: u64,
    /// The stacks of a `-k` log, which its calls' [`syslint_event::Pre::stack`] ids index.
    pub stacks: Option<syslint_event::StackTable>,
}

impl ParseStats {
    /// Add the stats of another part of the same input (line numbers counted from the
    /// input's start).
    pub fn merge(&mut self, o: ParseStats) {
        self.lines += o.lines;
        self.events += o.events;
        self.syscalls += o.syscalls;
        self.resumed_pairs += o.resumed_pairs;
        self.never_resumed += o.never_resumed;
        self.orphan_resumed += o.orphan_resumed;
        self.rejoined += o.rejoined;
        self.unparsed += o.unparsed;
        // the first samples by line, whichever part of the input read them (a chunk's lines
        // settled at the end by the reader come after every chunk's own): as one reader
        // going through the whole input keeps them
        if !o.unparsed_samples.is_empty() {
            self.unparsed_samples.extend(o.unparsed_samples);
            self.unparsed_samples.sort_by_key(|u| u.line);
            self.unparsed_samples.truncate(UNPARSED_SAMPLES);
        }
        self.ignored += o.ignored;
        self.frame_lines += o.frame_lines;
        self.stacks_attached += o.stacks_attached;
        self.stacks_unattached += o.stacks_unattached;
        self.stacks_at_exit += o.stacks_at_exit;
        match (&mut self.stacks, o.stacks) {
            // (the parallel reader takes a part's stacks out first, and maps its calls' ids)
            (Some(t), Some(u)) => {
                t.absorb(u);
            }
            (t @ None, u) => *t = u,
            (Some(_), None) => {}
        }
        self.strace_c_table.extend(o.strace_c_table);
        if self.clock == Clock::None {
            self.clock = o.clock;
        }
        self.with_duration += o.with_duration;
        self.named_args += o.named_args;
        self.coloured += o.coloured;
        self.prefixed += o.prefixed;
        if self.prefix == Prefix::None {
            self.prefix = o.prefix;
        }
        // as the reader decides it: `[pid N]` once any line has one, else a bare column
        if self.pid_style.is_empty() || self.pid_style == "none" || o.pid_style == "[pid N]" {
            self.pid_style = o.pid_style;
        }
    }
}

/// What a report shows of a line it could not read. A line that looks like a call keeps its
/// shape with every quoted string replaced by its length (a call cut mid-write may hold what
/// the program wrote); any other text (the program's own output mixed into the log, binary
/// junk) is left out but for its length: reports travel, the log stays where it is.
pub fn sample_of(line: &str) -> String {
    let head = &line[..line.char_indices().nth(80).map_or(line.len(), |(i, _)| i)];
    // a -k frame names code (a module, a function), as a report's call sites do
    let frame = line.starts_with(" > ");
    let call = frame
        || head.find('(').is_some_and(|p| {
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
