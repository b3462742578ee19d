//! Diagnosis in proportion to the evidence (issue 14): what kind of evidence a report was made
//! from (a full trace, an excerpt, a table of counts), the calls of an excerpt as the
//! detectors' excerpt rules see them, and the confidence every finding carries.
//!
//! Each detector says in its own file what an excerpt and a table can show of its pathology
//! ([`crate::registry::Detector::on_excerpt`], [`crate::registry::Detector::on_counts`]); both
//! are optional, so a detector without them reads full traces only.

use crate::kit::Evidence;
use syslint_event::{Args, Class, Clock, Event, EventKind, Ret, Sys, Syscall, Tid, Timeout};
use syslint_report::{Basis, BasisKind, Confidence, CountRow, Counts, Finding, Severity};

/// Syscalls an input may have and still be an excerpt (a pasted run of lines: "5 to a few
/// hundred"). Beyond, or when the input shows its processes start and end, it is a full trace.
pub const EXCERPT_MAX: usize = 1000;

/// One call of an excerpt, owned (events borrow the reader's buffer).
#[derive(Clone, Debug)]
pub struct Call {
    pub tid: Tid,
    pub ts_ns: Option<i64>,
    pub sys: Sys,
    pub name: String,
    /// The fd argument.
    pub fd: Option<i32>,
    /// What the fd is, when the excerpt says (`-y`/`-yy`) or the model knows.
    pub target: Option<String>,
    /// The kind of that target (a file, a TCP socket, ...), when known.
    pub target_kind: Option<syslint_event::TargetKind>,
    /// The path argument.
    pub path: Option<String>,
    /// Return value on success.
    pub ret: Option<i64>,
    /// errno name on failure.
    pub errno: Option<String>,
    pub dur_ns: Option<u64>,
    /// Timeout of a poll/select/epoll wait.
    pub timeout: Option<Timeout>,
    /// Bytes asked for (read/write family).
    pub requested: Option<u64>,
    /// The address a connect/sendto/recvfrom names (`127.0.0.1:53`).
    pub addr: Option<String>,
    /// Payload buffers of network calls (for DNS names), cut short.
    pub payloads: Vec<(Vec<u8>, bool)>,
    /// What a wait that returned ready found ready ([`Syscall::ready_set`]).
    pub ready: Option<String>,
    /// The RLIMIT_NOFILE soft limit a getrlimit/prlimit64 read or set.
    pub nofile: Option<u64>,
    /// The clock a clock read names (`Syscall::clock_id`).
    pub clock: Option<i64>,
    /// A relative sleep's length (nanosleep, clock_nanosleep without TIMER_ABSTIME).
    pub sleep_ns: Option<u64>,
    /// What an epoll_ctl does to which fd.
    pub epoll: Option<syslint_event::EpollCtl>,
    /// The pid of the process a fork/vfork/clone (not of a thread) started.
    pub spawned: Option<i64>,
    /// An open that asked for a directory (O_DIRECTORY).
    pub dir_open: bool,
    /// What an mmap/munmap/mremap/madvise/brk does, with its address and length.
    pub mem: Option<syslint_event::MemOp>,
    /// An ioctl's request and what it answered, as the text shows them (`FIONREAD`, `[0]`);
    /// raw (eBPF) arguments: FIONREAD only, its answer unknown (empty).
    pub ioctl: Option<(String, String)>,
    /// The path inotify_add_watch names.
    pub watch_path: Option<String>,
    /// The evidence line (payloads redacted).
    pub evidence: Evidence,
}

/// A signal delivery an excerpt shows.
#[derive(Clone, Debug)]
pub struct SignalLine {
    pub tid: Tid,
    /// How many calls of the excerpt came before it: it lies between `calls[at - 1]` and `calls[at]`.
    pub at: usize,
    /// `SIGSEGV`.
    pub name: String,
    /// What strace printed between the braces: `{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=0x38}`.
    pub info: String,
    pub evidence: Evidence,
}

/// An ioctl's request and answer (see [`Call::ioctl`]).
fn ioctl_of(sc: &Syscall) -> Option<(String, String)> {
    if sc.sys != Sys::Ioctl {
        return None;
    }
    match sc.arg(1) {
        Some(req) => Some((req.to_string(), sc.arg(2).unwrap_or("").to_string())),
        None => {
            (sc.ioctl_req() == Some(syslint_event::IoctlReq::Fionread)).then(|| ("FIONREAD".to_string(), String::new()))
        }
    }
}

impl Call {
    fn of(ev: &Event, sc: &Syscall, target: Option<(&str, syslint_event::TargetKind)>) -> Call {
        let payloads = if sc.sys.is(syslint_event::Class::NET) { sc.payloads() } else { Vec::new() };
        Call {
            tid: ev.tid,
            ts_ns: ev.ts_ns,
            sys: sc.sys,
            name: sc.name.to_string(),
            fd: sc.fd_num(),
            target: target.map(|t| t.0.to_string()),
            target_kind: target.map(|t| t.1).filter(|k| *k != syslint_event::TargetKind::Unknown),
            path: sc.path().map(std::borrow::Cow::into_owned),
            ret: sc.ret.value(),
            errno: sc.ret.errno().map(str::to_string),
            dur_ns: sc.dur_ns,
            timeout: sc.timeout(),
            requested: sc.requested_bytes(),
            addr: sc.sockaddr().map(|a| a.to_string()),
            payloads,
            ready: if sc.sys.is(syslint_event::Class::POLL) { sc.ready_set() } else { None },
            nofile: sc.nofile_limit(),
            clock: sc.clock_id(),
            sleep_ns: sc.sleep_ns(),
            epoll: sc.epoll_ctl(),
            spawned: if sc.sys.is(syslint_event::Class::SPAWN)
                && !sc.clone_flags().is_some_and(|f| f.contains(syslint_event::CloneFlags::THREAD))
            {
                sc.ret.value().filter(|v| *v > 0)
            } else {
                None
            },
            dir_open: sc.open_flags().is_some_and(|f| f.contains(syslint_event::OpenFlags::DIRECTORY)),
            mem: sc.mem_op(),
            ioctl: ioctl_of(sc),
            watch_path: if sc.sys == Sys::InotifyAddWatch {
                sc.arg(1).and_then(syslint_event::args::unquote).map(std::borrow::Cow::into_owned)
            } else {
                None
            },
            evidence: Evidence::of(ev),
        }
    }

    pub fn failed(&self, errno: &str) -> bool {
        self.errno.as_deref() == Some(errno)
    }
    pub fn is(&self, sys: &[Sys]) -> bool {
        sys.contains(&self.sys)
    }
}

/// The calls of a short input, and what the lines carried.
#[derive(Clone, Debug, Default)]
pub struct Excerpt {
    pub calls: Vec<Call>,
    /// The signals the excerpt shows delivered (`--- SIGSEGV {...} ---`), in order among the calls.
    pub signals: Vec<SignalLine>,
    /// Threads seen (1 with no pid column).
    pub threads: usize,
    /// Lines had a pid column.
    pub pids: bool,
    pub timestamps: bool,
    /// `-T` durations.
    pub durations: bool,
    /// `-y`/`-yy` fd decorations.
    pub fd_targets: bool,
    /// Lines the reader did not understand (program output, a line cut mid-way).
    pub unparsed: u64,
    pub clock: Clock,
}

impl Excerpt {
    /// "12 lines from one process, without pids, timestamps or durations".
    pub fn shape(&self) -> String {
        let n = self.calls.len();
        let who = match self.threads {
            0 | 1 if !self.pids => "one process".to_string(),
            1 => "one thread".to_string(),
            t => format!("{t} threads"),
        };
        let mut without = Vec::new();
        if !self.pids {
            without.push("pids");
        }
        if !self.timestamps {
            without.push("timestamps");
        }
        if !self.durations {
            without.push("durations");
        }
        let w = match without.len() {
            0 => String::new(),
            1 => format!(", without {}", without[0]),
            _ => format!(", without {} or {}", without[..without.len() - 1].join(", "), without[without.len() - 1]),
        };
        format!("{n} calls from {who}{w}")
    }

    /// The evidence lines of these calls (at most `max`, then the last).
    pub fn evidence(&self, idx: &[usize], max: usize) -> Vec<String> {
        let mut v: Vec<String> = idx.iter().take(max).map(|&i| self.calls[i].evidence.render(self.clock)).collect();
        if idx.len() > max {
            if let Some(&l) = idx.last() {
                v.push("...".into());
                v.push(self.calls[l].evidence.render(self.clock));
            }
        }
        v
    }

    /// What would settle it: a full trace of the process.
    pub fn confirm(&self) -> String {
        let pid = self.calls.first().map(|c| c.tid).filter(|t| *t != Tid(0));
        match pid {
            Some(p) => format!("syslint trace -p {p} --for 30s (or: strace -f -tt -T -yy -p {p} -o full.strace for 30 s)"),
            None => "syslint trace -p PID --for 30s, with the PID of the program the lines came from (or: strace -f -tt -T -yy -p PID -o full.strace for 30 s)".into(),
        }
    }

    /// The reason an excerpt finding gives for its confidence: the shape, and what is left out.
    pub fn reason(&self, what: &str) -> String {
        let others = if self.threads <= 1 { "; other processes and threads are not in the excerpt" } else { "" };
        format!("{what} (in {}){others}", self.shape())
    }
}

/// What an excerpt finding needs besides the detector's words: confidence, its reason, the
/// confirm command, and severity capped at warning (an excerpt shows no cost). Rules end their
/// drafts with [`Draft::in_excerpt`](crate::draft::Draft::in_excerpt), which calls this.
pub(crate) fn excerpt_finding(mut f: Finding, x: &Excerpt, conf: Confidence, what: &str) -> Finding {
    f.confidence = Some(conf.min(Confidence::Medium));
    f.confidence_reason = Some(x.reason(what));
    f.confirm.get_or_insert_with(|| x.confirm());
    f.severity = f.severity.min(Severity::Warning);
    f
}

/// The same for a table of counts: never `error`, never `high`
/// ([`Draft::in_table`](crate::draft::Draft::in_table)).
pub(crate) fn counts_finding(mut f: Finding, c: &Counts, conf: Confidence, reason: &str) -> Finding {
    f.confidence = Some(conf.min(Confidence::Medium));
    f.confidence_reason = Some(format!("{reason} ({}: counts per syscall, no single call)", c.tool));
    f.confirm.get_or_insert_with(|| confirm_for_counts(c));
    f.severity = f.severity.min(Severity::Warning);
    f
}

/// The command that would settle a finding read off a table: the same processes traced whole.
pub fn confirm_for_counts(c: &Counts) -> String {
    let pid = c.command.as_deref().and_then(|cmd| {
        let w: Vec<&str> = cmd.split_whitespace().collect();
        w.iter()
            .position(|x| *x == "-p")
            .and_then(|i| w.get(i + 1))
            .map(|p| p.split(',').next().unwrap_or(p).to_string())
    });
    match pid {
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => {
            format!("syslint trace -p {p} --for 30s (or: strace -f -tt -T -yy -p {p} -o full.strace for 30 s)")
        }
        _ => "syslint trace -p PID --for 30s for a running program, or syslint trace -- COMMAND (or: strace -f -tt -T -yy -o full.strace)".into(),
    }
}

/// Collects the calls of the first [`EXCERPT_MAX`] syscalls and what the input shows of its
/// processes' lives, to tell an excerpt from a full trace at the end.
#[derive(Clone, Debug, Default)]
pub struct Collector {
    calls: Vec<Call>,
    signals: Vec<SignalLine>,
    over: bool,
    /// A process start (a successful execve, an attach) was seen.
    pub started: bool,
    /// A process end (exit, kill, detach) was seen.
    pub ended: bool,
    pids: bool,
    timestamps: bool,
    durations: bool,
    fd_targets: bool,
    tids: std::collections::HashSet<Tid>,
    /// Syscalls seen (all of them).
    pub syscalls: u64,
}

impl Collector {
    /// Whether calls are still being kept (the input may yet be an excerpt).
    pub fn collecting(&self) -> bool {
        !self.over
    }

    pub fn on_event(&mut self, ev: &Event, target: Option<(&str, syslint_event::TargetKind)>) {
        match &ev.kind {
            EventKind::Syscall(sc) => {
                self.syscalls += 1;
                if sc.sys.is(syslint_event::Class::EXEC) && sc.ret.value().is_some() {
                    self.started = true;
                }
                if self.over {
                    return;
                }
                if self.calls.len() >= EXCERPT_MAX {
                    self.over = true;
                    self.calls = Vec::new();
                    self.signals = Vec::new();
                    return;
                }
                self.pids |= ev.tid != Tid(0);
                self.timestamps |= ev.ts_ns.is_some();
                self.durations |= sc.dur_ns.is_some();
                let decorated = match sc.args {
                    Args::Text(t) => t.split(',').next().is_some_and(|a| a.contains('<')),
                    Args::Raw(_) => false,
                } || matches!(sc.ret, Ret::Ok { deco: Some(_), .. });
                self.fd_targets |= decorated;
                if self.tids.len() < 1024 {
                    self.tids.insert(ev.tid);
                }
                self.calls.push(Call::of(ev, sc, target));
            }
            EventKind::Signal { name, info } if !self.over && self.signals.len() < EXCERPT_MAX => {
                self.signals.push(SignalLine {
                    tid: ev.tid,
                    at: self.calls.len(),
                    name: name.to_string(),
                    info: info.to_string(),
                    evidence: Evidence::of(ev),
                });
            }
            EventKind::Attached { .. } | EventKind::TaskKnown { .. } => self.started = true,
            EventKind::Exited { .. } | EventKind::Killed { .. } | EventKind::Detached => self.ended = true,
            _ => {}
        }
    }

    /// The excerpt, when the input is one: at most [`EXCERPT_MAX`] calls, and not a whole run
    /// (one that shows its processes start and end).
    pub fn excerpt(self, unparsed: u64, clock: Clock) -> Option<Excerpt> {
        if self.over || self.calls.is_empty() || (self.started && self.ended) {
            return None;
        }
        Some(Excerpt {
            threads: self.tids.len(),
            calls: self.calls,
            signals: self.signals,
            pids: self.pids,
            timestamps: self.timestamps,
            durations: self.durations,
            fd_targets: self.fd_targets,
            unparsed,
            clock,
        })
    }
}

/// The report header's account of a full trace.
pub fn full_trace_basis(
    syscalls: u64,
    processes: u64,
    timestamps: bool,
    durations: bool,
    backend: Option<syslint_report::Backend>,
) -> Basis {
    use syslint_report::Backend;
    let from = match backend {
        Some(Backend::Ebpf) => "a live eBPF trace".to_string(),
        Some(Backend::EbpfRecording) => "an eBPF recording".to_string(),
        Some(Backend::Strace) => "a live strace trace".to_string(),
        Some(Backend::StraceLog) | None => "a strace log".to_string(),
    };
    if syscalls == 0 {
        // nothing seen: no flag is missing, the trace is (blocked processes, or the work
        // happens in processes not traced)
        return Basis {
            kind: BasisKind::FullTrace,
            from: format!("{from}: no syscall"),
            cannot_show: "anything: the traced processes made no syscall in the traced window (they were \
blocked, or the work happens in other processes)"
                .into(),
            record_next: "trace while the program works, and the processes that do the work (--comm NAME; the \
notes name children that -p did not follow)"
                .into(),
        };
    }
    let mut missing = Vec::new();
    if !timestamps {
        missing.push("rates and times between calls (no timestamps: -tt)");
    }
    if !durations {
        missing.push("time inside calls (no durations: -T)");
    }
    let cannot_show = if missing.is_empty() {
        "only what the traced processes did inside the traced window".to_string()
    } else {
        format!("{}; only what the traced processes did inside the traced window", missing.join("; "))
    };
    let record_next = if missing.is_empty() {
        "after a fix, record the same way again and run syslint diff BEFORE AFTER".to_string()
    } else {
        "strace -f -tt -T -yy -o app.strace (or syslint trace), to see costs in time".to_string()
    };
    Basis {
        kind: BasisKind::FullTrace,
        from: match processes {
            0 => format!("{from}: {syscalls} syscalls"),
            1 => format!("{from}: {syscalls} syscalls of 1 process"),
            n => format!("{from}: {syscalls} syscalls of {n} processes"),
        },
        cannot_show,
        record_next,
    }
}

pub fn excerpt_basis(x: &Excerpt) -> Basis {
    Basis {
        kind: BasisKind::Excerpt,
        from: format!("an excerpt: {}", x.shape()),
        cannot_show: "the processes and threads not in it, what came before and after, how often it happens over time, and so what it costs".into(),
        record_next: x.confirm(),
    }
}

pub fn counts_basis(c: &Counts) -> Basis {
    let dur = match c.duration_s {
        Some(d) => format!(" over {d} s"),
        None => String::new(),
    };
    let who =
        if c.per_task.is_empty() { String::new() } else { format!(" of {} processes or threads", c.per_task.len()) };
    Basis {
        kind: BasisKind::Counts,
        from: format!(
            "counts from {}: {} calls of {} syscalls{who}{dur}{}",
            c.tool,
            c.total_calls(),
            c.rows.len(),
            match c.around_lines {
                0 => String::new(),
                1 => "; 1 line around the table was not part of it (a prompt or program output), read past".into(),
                n => format!("; {n} lines around the table were not part of it (prompts, program output), read past"),
            }
        ),
        cannot_show: format!(
            "single calls: their arguments (which fds, paths, endpoints, timeouts, sizes), their order, and which process made them{}{}",
            if c.errors_known { "" } else { "; this table does not count errors" },
            if c.duration_s.is_none() { "; how long the counting ran (not in the paste), so no rates" } else { "" }
        ),
        record_next: confirm_for_counts(c),
    }
}

/// A finding of an excerpt or counts rule, whatever the rule said: confidence at most `max`,
/// severity at most warning.
pub fn clamp(mut f: Finding, max: Confidence) -> Finding {
    f.confidence = Some(f.confidence.unwrap_or(Confidence::Low).min(max));
    f.severity = f.severity.min(Severity::Warning);
    f
}

/// Full-trace findings without a confidence of their own get `high` from a full trace, with
/// the reason; from less (an excerpt), `medium` at most: the lines left out may tell otherwise.
pub fn stamp_full(f: &mut Finding, basis: &Basis) {
    if basis.kind != BasisKind::FullTrace {
        f.confidence = f.confidence.map(|c| c.min(Confidence::Medium));
    }
    if f.confidence.is_none() {
        f.confidence = Some(if basis.kind == BasisKind::FullTrace { Confidence::High } else { Confidence::Medium });
        f.confidence_reason = Some(match basis.kind {
            BasisKind::FullTrace => "the detector's full-trace thresholds were met in a full trace".into(),
            _ => "the detector's full-trace thresholds were met, even in these few lines".into(),
        });
    }
    if f.confirm.is_none() {
        f.confirm = Some(if basis.kind == BasisKind::FullTrace {
            "after a fix, record the same run again and compare: syslint diff BEFORE AFTER".into()
        } else {
            basis.record_next.clone()
        });
    }
}

/// The table's rows of these syscalls, as evidence lines (`accept4: 492 calls, 392 errors`), in
/// the table's order.
pub fn count_lines(c: &Counts, sys: impl SysSet) -> Vec<String> {
    c.rows_of(sys)
        .map(|r| {
            let e = if c.errors_known { format!(", {} errors", r.errors) } else { String::new() };
            let t = r.seconds.map(|s| format!(", {s:.6} s")).unwrap_or_default();
            format!("{}: {} calls{e}{t}", r.name, r.calls)
        })
        .collect()
}

/// A set of syscalls a counts rule asks a table about: a list of [`Sys`], or a [`Class`]. The
/// rules name syscalls with the same vocabulary as the full-trace detectors, not as text.
pub trait SysSet: Copy {
    fn has(self, sys: Sys) -> bool;
}

impl SysSet for &[Sys] {
    fn has(self, sys: Sys) -> bool {
        self.contains(&sys)
    }
}

impl<const N: usize> SysSet for &[Sys; N] {
    fn has(self, sys: Sys) -> bool {
        self.contains(&sys)
    }
}

impl SysSet for &Vec<Sys> {
    fn has(self, sys: Sys) -> bool {
        self.contains(&sys)
    }
}

impl SysSet for Class {
    fn has(self, sys: Sys) -> bool {
        sys.is(self)
    }
}

/// A row's syscall: its name resolved as the strace reader resolves one, `Sys::Other` for a
/// name not in the table (which no rule asks for).
pub trait RowSys {
    fn sys(&self) -> Sys;
}

impl RowSys for CountRow {
    fn sys(&self) -> Sys {
        Sys::from_name(&self.name)
    }
}

/// Rows of counts (a table's, or one task's of a per-task table) asked by [`Sys`].
pub trait SysRows {
    /// The rows of these syscalls, in the table's order.
    fn rows_of<S: SysSet>(&self, sys: S) -> impl Iterator<Item = &CountRow>;
    /// Calls of any of these syscalls.
    fn calls_of(&self, sys: impl SysSet) -> u64 {
        self.rows_of(sys).map(|r| r.calls).sum()
    }
    /// Failed calls of any of these syscalls.
    fn errors_of(&self, sys: impl SysSet) -> u64 {
        self.rows_of(sys).map(|r| r.errors).sum()
    }
    /// Time in these syscalls, as far as the table has times.
    fn seconds_of(&self, sys: impl SysSet) -> f64 {
        self.rows_of(sys).filter_map(|r| r.seconds).sum()
    }
}

impl SysRows for [CountRow] {
    fn rows_of<S: SysSet>(&self, sys: S) -> impl Iterator<Item = &CountRow> {
        self.iter().filter(move |r| sys.has(r.sys()))
    }
}

impl SysRows for Counts {
    fn rows_of<S: SysSet>(&self, sys: S) -> impl Iterator<Item = &CountRow> {
        self.rows.rows_of(sys)
    }
}

/// What a table can say of syscalls beyond its rows.
pub trait SysCounts {
    /// Whether the table counted any of these syscalls: the counting was not limited, or was
    /// limited to a list that names one of them, or one's row is there ([`Counts::counted`]).
    fn counted_any_of(&self, sys: impl SysSet) -> bool;
}

impl SysCounts for Counts {
    fn counted_any_of(&self, sys: impl SysSet) -> bool {
        // a limit written as a class or a negation (`%file`, `!write`) resolves to no syscall
        self.whole()
            || self.only.iter().any(|o| sys.has(Sys::from_name(o)))
            || self.rows.iter().any(|r| sys.has(r.sys()))
    }
}

/// The calls that open a file by its path.
pub const OPENS: &[Sys] = &[Sys::Open, Sys::Openat, Sys::Openat2];

/// Whether the table's times are the calls' wall-clock times (waits included): perf trace,
/// syscount -L, strace -c -w, syslint. strace -c without -w counts system time only.
pub fn wall_times(c: &Counts) -> bool {
    c.tool.starts_with("perf")
        || c.tool.starts_with("syscount -L")
        || c.tool == "strace -c -w"
        || c.tool.starts_with("syslint")
}

/// Calls that move data through an fd (read/write and the socket send/receive family).
pub const DATA_CALLS: &[Sys] = &[
    Sys::Read,
    Sys::Write,
    Sys::Readv,
    Sys::Writev,
    Sys::Send,
    Sys::Sendto,
    Sys::Sendmsg,
    Sys::Recv,
    Sys::Recvfrom,
    Sys::Recvmsg,
];

/// Calls of a table that moved data: [`DATA_CALLS`] less their errors (a write to a socket
/// whose connection was refused fails: it moved nothing).
pub fn data_calls(c: &Counts) -> u64 {
    c.calls_of(DATA_CALLS).saturating_sub(c.errors_of(DATA_CALLS))
}

/// ` (120/s)`: how often the table's `n` calls came, with `decimals` digits, when the table says
/// how long it counted (else nothing), for a counts finding's message.
pub fn per_second(c: &Counts, n: u64, decimals: usize) -> String {
    c.per_second(n).map(|r| format!(" ({r:.decimals$}/s)")).unwrap_or_default()
}

/// Calls of some syscalls as a share of a whole table, with their time where the table has
/// times: what the counts rule of a detector whose pathology is one call made far too often
/// (madvise, rt_sigprocmask) weighs.
pub struct TableShare {
    pub calls: u64,
    /// All calls of the table.
    pub total: u64,
    /// `calls` of `total`.
    pub share: f64,
    /// Whether the table has times for these calls, their seconds, and their share of all the
    /// table's seconds (when it has any).
    pub timed: bool,
    pub seconds: f64,
    pub time_share: Option<f64>,
}

impl TableShare {
    /// The share of `sys` in table `c`; `None` for a table limited to some calls (`-e madvise`),
    /// which cannot say what share they make.
    pub fn of(c: &Counts, sys: impl SysSet) -> Option<TableShare> {
        if !c.whole() {
            return None;
        }
        let calls = c.calls_of(sys);
        let total = c.total_calls();
        let timed = c.rows_of(sys).any(|r| r.seconds.is_some());
        let seconds = c.seconds_of(sys);
        let table_s: f64 = c.rows.iter().filter_map(|r| r.seconds).sum();
        Some(TableShare {
            calls,
            total,
            share: calls as f64 / total.max(1) as f64,
            timed,
            seconds,
            time_share: (timed && table_s > 0.0).then(|| seconds / table_s),
        })
    }

    /// `, 40% of the time counted` for a message, or nothing.
    pub fn of_time(&self) -> String {
        self.time_share.map(|t| format!(", {:.0}% of the time counted", t * 100.0)).unwrap_or_default()
    }

    /// The finding of a rule that judges these calls by their share of a table:
    /// "`name` called N times, P% of all calls" (with their share of the time counted and their
    /// rate when the table has them), a warning when `warn`, its [`metrics`](Self::metrics) with
    /// the calls as `metric`, the table's lines of `sys` (`sys[0]` names the calls), and `why`
    /// at medium confidence when it warns, low when not.
    pub fn finding(
        &self,
        meta: &'static crate::registry::Meta,
        c: &Counts,
        sys: &[Sys],
        metric: &str,
        warn: bool,
        why: &str,
    ) -> Vec<syslint_report::Finding> {
        let name = sys.first().map_or("", |s| s.name());
        let (of_time, rate) = (self.of_time(), per_second(c, self.calls, 0));
        let message =
            format!("{name} called {} times, {:.0}% of all calls{of_time}{rate}", self.calls, self.share * 100.0);
        meta.finding(syslint_report::Severity::warning_if(warn), message)
            .metrics(self.metrics(metric))
            .lines(count_lines(c, sys))
            .in_table(c, syslint_report::Confidence::medium_if(warn), why)
    }

    /// The metrics: the calls as `name`, `all_calls`, `share_of_calls`, `time_share` and (what
    /// the table measured inside the calls) `seconds`.
    pub fn metrics(&self, name: &str) -> crate::kit::Metrics {
        let mut m = crate::kit::Metrics::new();
        m.count(name, self.calls);
        m.count("all_calls", self.total);
        m.value("share_of_calls", self.share);
        m.value_opt("time_share", self.time_share);
        if self.timed {
            m.value("seconds", self.seconds);
        }
        m
    }
}
