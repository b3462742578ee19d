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

mod chunk;
mod frames;
mod lex;
mod stats;

pub use chunk::{could_continue, ChunkEnd, ClockState, Dangling, Mark, Marked, PidState};
pub use lex::Prefix;
use lex::*;
pub use stats::{sample_of, ParseStats, Unparsed, UNPARSED_SAMPLES};

/// Longest call joined from a line and a wrapped rest (mail clients wrap at 72-80 columns; a
/// longer pair is not a wrapped call).
const WRAPPED_MAX: usize = 4096;

/// What became of a line held back for its continuation.
enum Rejoin {
    /// The next line finished it.
    Joined,
    /// It was accounted for; the next line is still to be read.
    Settled,
    /// Not a continuation.
    No(Dangling),
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
    /// A call was read before this parser's first line (seeded, see [`PidState`]).
    syscalls_before: bool,
    /// A call's line (its start, all of it, or its resumption) was read, understood or not:
    /// after one, `Process N attached` no longer names the pid-less lines. Decided by lines
    /// alone, not by what came of them (a chunk's parser cannot settle a resumption whose
    /// start is in another chunk, and must decide as the sequential reader does).
    calls_read: bool,
    /// This parser decided `default_pid`.
    pid_decided: bool,
    /// A `[pid N]` line was read.
    bracketed: bool,
    chunk_mode: bool,
    /// Chunk mode: the chunk's first lines, kept for the reader ([`ChunkEnd::lead`]).
    lead: Vec<String>,
    /// Spare buffers for pending calls.
    pool: Vec<String>,
    marks: Vec<Mark>,
    /// The first time of day read, before days are added.
    first_tod: Option<i64>,
    /// A stamp that is a number was read.
    numbers: bool,
    /// A `-k` log: its stacks, and the line held until its frames are read (`None` until the
    /// first frame line, or [`Parser::expect_stacks`]).
    stacks: Option<Box<frames::Stacks>>,
    /// The stack of the line being parsed (read after it), for the call it makes.
    cur_stack: Option<syslint_event::StackId>,
    /// Whether a line may hold a terminal escape (ESC): a chunk reader that found none in its
    /// chunk says so ([`Parser::set_escapes_possible`]), and no line is searched for one.
    escapes: bool,
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
            calls_read: false,
            pid_decided: false,
            bracketed: false,
            chunk_mode: false,
            lead: Vec::new(),
            pool: Vec::new(),
            marks: Vec::new(),
            first_tod: None,
            numbers: false,
            stacks: None,
            cur_stack: None,
            escapes: true,
        }
    }

    /// Whether the lines to come may hold a terminal escape: `false` when the reader found no
    /// ESC byte in the text they come from (one search of a chunk instead of one a line).
    pub fn set_escapes_possible(&mut self, possible: bool) {
        self.escapes = possible;
    }

    /// The input has `-k` frames (a reader that looked ahead says so): hold each line until
    /// the frames after it are read, from the first line on.
    pub fn expect_stacks(&mut self) {
        self.stacks.get_or_insert_with(Default::default);
    }

    /// The stacks read so far, taken (ids as the calls handed on carry them).
    pub fn take_stacks(&mut self) -> Option<syslint_event::StackTable> {
        let st = self.stacks.as_mut()?;
        self.stats.stacks_unattached += std::mem::take(&mut st.unattached);
        Some(std::mem::take(&mut st.table))
    }

    /// Parse the line held for its frames, if any, with the stack read after it.
    pub fn release_held<F: FnMut(&Event)>(&mut self, sink: &mut F) {
        let Some(st) = self.stacks.as_mut() else { return };
        let stack = st.take();
        let Some(h) = st.held.take() else {
            if stack.is_some() {
                st.unattached += 1;
            }
            return;
        };
        self.cur_stack = stack;
        let before = self.stats.stacks_attached;
        self.parse_plain(&h.line, h.line_no, h.pid_hint, sink);
        self.cur_stack = None;
        if stack.is_some() && before == self.stats.stacks_attached {
            if h.line.trim_end().ends_with(" +++") {
                // a call that never returns (exit, exit_group: `= ?`) has its stack printed
                // when its thread is gone, after `+++ exited with N +++`
                self.stats.stacks_at_exit += 1;
            } else if let Some(st) = self.stacks.as_mut() {
                // the line made no call (a signal's stack)
                st.unattached += 1;
            }
        }
        if let Some(st) = self.stacks.as_mut() {
            st.spare = h.line;
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
        // `--color` output, or a log recorded from a terminal: read without the escapes
        let plain;
        let line = if self.escapes && memchr::memchr(0x1b, line.as_bytes()).is_some() {
            self.stats.coloured += 1;
            plain = without_escapes(line);
            plain.as_str()
        } else {
            line
        };
        // a collector's time stamp (and host and tag) before each line
        let line = match collector_prefix(line) {
            Some((n, kind)) => {
                self.stats.prefixed += 1;
                if self.stats.prefix == Prefix::None {
                    self.stats.prefix = kind;
                }
                &line[n..]
            }
            None => line,
        };
        if line.as_bytes().first() == Some(&b' ') && frames::is_frame_line(line) {
            let st = self.stacks.get_or_insert_with(Default::default);
            self.stats.ignored += 1;
            self.stats.frame_lines += 1;
            if !st.frame(&line[3..]) {
                self.stats.ignored -= 1;
                self.unparsed(line, line_no);
            }
            return;
        }
        if self.stacks.is_some() {
            // a -k log: the line before has all its frames now; this one waits for its own
            self.release_held(sink);
            if let Some(st) = self.stacks.as_mut() {
                let mut buf = std::mem::take(&mut st.spare);
                buf.clear();
                buf.push_str(line);
                st.held = Some(frames::Held { line: buf, line_no, pid_hint });
            }
            return;
        }
        self.parse_plain(line, line_no, pid_hint, sink);
    }

    /// [`Self::parse_line`] after the escapes and a collector's prefix are gone, and any stack
    /// is read.
    fn parse_plain<F: FnMut(&Event)>(&mut self, line: &str, line_no: u64, pid_hint: Option<Tid>, sink: &mut F) {
        self.cur_line = line_no;
        if self.chunk_mode
            && line_no == self.lead.len() as u64 + 1
            && self.splice_head.is_none()
            // (only the last lead can be other than blank: nothing is kept after it)
            && self.lead.last().is_none_or(|l| l.trim().is_empty())
            && could_continue(line)
        {
            // the previous chunk may have ended with the line this one continues (after blank
            // lines, which a cut line waits across): the reader decides, with that chunk's end
            // in hand
            self.lead.push(line.to_string());
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
        self.release_held(sink);
        self.finish_lines();
        let mut pids: Vec<Tid> = self.pending.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            self.flush_pending(pid, Ret::Unfinished, sink);
        }
        self.stats.clock = self.clock;
        self.stats.stacks = self.take_stacks();
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
        } else if !line.starts_with(' ') || indented_pid(s) {
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
            Some(b'<') if s.starts_with("<... ") => return self.resumed(s, line, pid, ts, sink),
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
        self.calls_read = true;
        // strace 6.16's `-N`/`--arg-names` names every argument (`read(fd=3, buf="..",
        // count=64)`): read without the names, as every rule expects the arguments
        let plain;
        let s = if named_args(s, name_len + 1, &s[..name_len]) {
            self.stats.named_args += 1;
            plain = without_arg_names(s, name_len + 1);
            plain.as_str()
        } else {
            s
        };
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
        if !starts_like_a_line(c) && d.text.len() + c.len() < WRAPPED_MAX {
            // the call's rest on a line of its own (a mail client wrapped it, or the program's
            // output ended the line strace had begun): joined where it was cut, when the two
            // make one call
            let mut merged = d.text.trim_end().to_string();
            merged.push(' ');
            merged.push_str(c);
            let name_len = merged.find('(').unwrap_or(0);
            let whole = split_call(&merged, name_len).is_some() || merged.ends_with("<unfinished ...>");
            if whole {
                self.line_pid_column = d.pid_column;
                if self.parse_body(&merged, &d.line, d.pid, d.ts, sink) {
                    self.stats.rejoined += 1;
                    return Rejoin::Joined;
                }
            }
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
        if self.cur_stack.is_some() {
            sc.pre.stack = self.cur_stack.take();
            self.stats.stacks_attached += 1;
        }
        let ev = Event { tid: pid, ts_ns: ts, kind: EventKind::Syscall(sc) };
        self.stats.events += 1;
        self.stats.syscalls += 1;
        sink(&ev);
    }

    /// `<... read resumed>"data", 4096) = 4 <0.000123>` (strace 4 puts a space after `>`).
    /// `line`: the whole line, for the sample if a chunk cannot settle it.
    fn resumed<F: FnMut(&Event)>(&mut self, s: &str, line: &str, pid: Tid, ts: Option<i64>, sink: &mut F) -> bool {
        self.calls_read = true;
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
        // a `-N` resumption names the arguments it brings (`<... read resumed>buf="..",
        // count=64) = 5`): read without the names, as the call's start was
        let plain;
        let s = if named_args(s, close + 9, &s[5..close]) {
            self.stats.named_args += 1;
            plain = without_arg_names(s, close + 9);
            plain.as_str()
        } else {
            s
        };
        let name = &s[5..close];
        let rest = &s[close + 9..];
        if self.chunk_mode && !self.pending.contains_key(&pid) {
            // its start may be in the previous chunk: the reader joins them
            let whole = (line != s).then(|| line.to_string());
            let stack = self.cur_stack.take();
            // (attached when the reader settles it)
            self.stats.stacks_attached += u64::from(stack.is_some());
            let what = Marked::Resumed { body: s.to_string(), whole, line: self.cur_line, stack };
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
            if !self.seen_unprefixed && self.default_pid.is_none() && !self.syscalls_before && !self.calls_read {
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
                    self.stats.strace_c_table.push(syslint_report::CountRow {
                        name: name.to_string(),
                        calls: calls as u64,
                        errors: errors as u64,
                        seconds: Some(seconds),
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
        if let Some(tod) = lex::tt_time_of_day(b) {
            let t = self.time_of_day(tod);
            return Some((t, skip_spaces(&s[15..])));
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

    // The lines below are strace 7.2's own (scripts/strace-sid.sh with -f -yy -N, and
    // tests/fixtures/strace7), the prefixes moreutils' ts's and rsyslogd's.

    #[test]
    fn arg_names_go_and_what_looks_like_one_inside_a_string_or_path_stays() {
        let strip = |l: &str| without_arg_names(l, l.find('(').unwrap() + 1);
        assert_eq!(
            strip(
                r#"openat(dirfd=AT_FDCWD</tmp>, pathname="/tmp/d, x=1/f", flags=O_WRONLY|O_CREAT|O_TRUNC, mode=0666) = 3</tmp/d, x=1/f>"#
            ),
            r#"openat(AT_FDCWD</tmp>, "/tmp/d, x=1/f", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/d, x=1/f>"#
        );
        assert_eq!(
            strip(r#"write(fd=1</tmp/d, x=1/f>, buf="a, count=9) = 5", count=15) = 15"#),
            r#"write(1</tmp/d, x=1/f>, "a, count=9) = 5", 15) = 15"#
        );
        assert_eq!(strip(r#"close(fd=4</dev/null<char 1:3>>)  = 0"#), r#"close(4</dev/null<char 1:3>>)  = 0"#);
        // names inside structures are strace's usual output
        assert_eq!(
            strip(
                r#"poll(fds=[{fd=3<TCP:[127.0.0.1:36138->127.0.0.1:59305]>, events=POLLIN}], nfds=1, timeout=0) = 0 (Timeout) <0.000012>"#
            ),
            r#"poll([{fd=3<TCP:[127.0.0.1:36138->127.0.0.1:59305]>, events=POLLIN}], 1, 0) = 0 (Timeout) <0.000012>"#
        );
        // an unfinished call, and the resumption (names from `resumed>` on)
        assert_eq!(
            strip(r#"set_robust_list(addr=0x7fb6980b0a20, length=24 <unfinished ...>"#),
            r#"set_robust_list(0x7fb6980b0a20, 24 <unfinished ...>"#
        );
        let r = r#"<... read resumed>buf="x", count=1) = 1"#;
        assert_eq!(without_arg_names(r, r.find('>').unwrap() + 1), r#"<... read resumed>"x", 1) = 1"#);
        // clone prints its arguments named in every version: left alone
        let clone = "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7fb6980b0a10) = 17949";
        assert!(!named_args(clone, 6, "clone"));
        assert!(named_args("brk(addr=NULL) = 0x55fd8bcb4000", 4, "brk"));
        assert!(!named_args("brk(NULL) = 0x55fd8bcb4000", 4, "brk"));
    }

    #[test]
    fn named_and_plain_lines_give_the_same_events() {
        let named = one(&[
            r#"17948 12:30:16.413033 poll(fds=[{fd=3<TCP:[127.0.0.1:36138->127.0.0.1:59305]>, events=POLLIN}], nfds=1, timeout=0) = 0 (Timeout) <0.000012>"#,
            r#"17949 12:30:16.424326 set_robust_list(addr=0x7fb6980b0a20, length=24 <unfinished ...>"#,
            r#"17949 12:30:16.428300 <... set_robust_list resumed>) = 0 <0.003966>"#,
        ]);
        let plain = one(&[
            r#"17948 12:30:16.413033 poll([{fd=3<TCP:[127.0.0.1:36138->127.0.0.1:59305]>, events=POLLIN}], 1, 0) = 0 (Timeout) <0.000012>"#,
            r#"17949 12:30:16.424326 set_robust_list(0x7fb6980b0a20, 24 <unfinished ...>"#,
            r#"17949 12:30:16.428300 <... set_robust_list resumed>) = 0 <0.003966>"#,
        ]);
        assert_eq!(named, plain);
    }

    #[test]
    fn a_paste_indented_as_markdown_code_keeps_its_pid_column() {
        // rstudio/rstudio#2470, verbatim: five spaces, a pid, -tt, -T
        let indented =
            one(&["     11425 13:57:18.647213 close(4095)       = -1 EBADF (Bad file descriptor) <0.000047>"]);
        let plain = one(&["11425 13:57:18.647213 close(4095)       = -1 EBADF (Bad file descriptor) <0.000047>"]);
        assert_eq!(indented, plain);
        // a -r stamp keeps its meaning
        assert!(!indented_pid("0.000123 close(3) = 0"));
        assert!(indented_pid("11425 1511176638.093725 close(3) = 0"));
    }

    #[test]
    fn colour_codes_go_and_the_line_reads_as_strace_wrote_it() {
        let coloured = "399   12:34:58.468625 \u{1b}[33maccess\u{1b}[0m(\u{1b}[35m\"/etc/ld.so.preload\"\u{1b}[0m, \u{1b}[35m\u{1b}[34mR_OK\u{1b}[35m\u{1b}[0m\u{1b}[0m)\u{1b}[0m \u{1b}[0m=\u{1b}[0m\u{1b}[0m \u{1b}[32m-1\u{1b}[0m \u{1b}[31mENOENT\u{1b}[0m \u{1b}[31m(No such file or directory)\u{1b}[0m \u{1b}[32m\u{1b}[0m<\u{1b}[35m0.000017\u{1b}[0m>\u{1b}[35m\u{1b}[0m\u{1b}[0m";
        assert_eq!(
            without_escapes(coloured),
            r#"399   12:34:58.468625 access("/etc/ld.so.preload", R_OK) = -1 ENOENT (No such file or directory) <0.000017>"#
        );
        // an OSC (a terminal title) and a cut sequence at the end
        assert_eq!(without_escapes("\u{1b}]0;title\u{7}brk(NULL) = 0x1\u{1b}["), "brk(NULL) = 0x1");
    }

    #[test]
    fn collector_prefixes_are_found_and_strace_lines_never_taken_for_one() {
        let l = r#"Nov 29 12:41:04 12:41:04.069922 execve("/usr/bin/cat", ["cat", "/etc/hostname"], 0x7ffeb084cd98 /* 35 vars */) = 0 <0.000424>"#;
        assert_eq!(collector_prefix(l), Some((16, Prefix::MonthDay)));
        let l = "Nov 29 12:41:44 13148 12:41:44.368677 brk(NULL) = 0x55ee27370000 <0.000010>";
        assert_eq!(collector_prefix(l), Some((16, Prefix::MonthDay)));
        // ts '%Y-%m-%dT%H:%M:%.SZ' (docker logs -t and kubectl logs --timestamps write the same form)
        let l = "2026-11-29T12:41:04.173253Z 12:41:04.133078 brk(NULL)               = 0x55b6928dd000 <0.000016>";
        assert_eq!(collector_prefix(l), Some((28, Prefix::Iso)));
        // a syslog tag after the time (rsyslogd's own output: tests/fixtures/collectors)
        let l = "Nov 29 13:41:24 vm strace[21296]: 21295 13:41:24.062791 brk(NULL)         = 0x5615bbd65000 <0.000032>";
        assert_eq!(collector_prefix(l), Some((34, Prefix::Syslog)));
        let l = "2026-11-29T13:41:24.064324+00:00 vm strace[21296]: 21295 13:41:24.062791 brk(NULL)         = 0x5615bbd65000 <0.000032>";
        assert_eq!(collector_prefix(l), Some((51, Prefix::IsoSyslog)));
        for own in [
            "13148 12:41:44.368677 brk(NULL) = 0x55ee27370000 <0.000010>",
            "12:41:44 brk(NULL) = 0x55ee27370000",
            "1764420104.368677 brk(NULL) = 0x55ee27370000",
            "[pid  1234] brk(NULL) = 0x55ee27370000",
            "Process 1234 attached",
            "brk(NULL) = 0x55ee27370000",
            "+++ exited with 0 +++",
            "2026 12:41:44.368677 brk(NULL) = 0x55ee27370000",
        ] {
            assert_eq!(collector_prefix(own), None, "{own}");
        }
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
