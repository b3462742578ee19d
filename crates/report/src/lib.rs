//! The syslint Report: what every analysis produces and every printer reads.
//!
//! These types are also the JSON wire format (documented in docs/json-schema.md, described
//! for machines by docs/schema/report.schema.json: [`schema`]). Changing a field's meaning or
//! removing one bumps [`SCHEMA_VERSION`]; adding optional fields does not.

pub mod diff;
pub mod printers;
pub mod schema;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON document layout.
pub const SCHEMA_VERSION: u32 = 1;

/// A syslint report: what `syslint analyze --format json` and `syslint trace --format json`
/// print (docs/json-schema.md explains every field). Readers ignore fields they do not know:
/// new optional fields may appear without a change of `version`.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[schemars(title = "syslint report")]
pub struct Report {
    /// Layout version of the document, the one this schema describes. A change to a field's
    /// meaning, or a removed field, raises it; syslint refuses to read a report of a later
    /// version.
    #[schemars(extend("const" = SCHEMA_VERSION))]
    pub version: u32,
    /// The program that wrote the report.
    pub tool: Tool,
    /// What was read and how much of it was understood.
    pub capture: Capture,
    /// Statistics: per syscall, per process, per fd target and per endpoint.
    pub summary: Summary,
    /// Detected pathologies, most severe first (empty when none).
    pub findings: Vec<Finding>,
    /// Per-thread activity over time (traces with timestamps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// The baseline file given with `--baseline` (its findings are marked `baselined`).
    /// Absent without one, and in reports of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

/// Per-thread activity in equal time bins over the traced window.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// Start of the first bin, in the capture's clock (seconds).
    pub start_s: f64,
    /// Width of a bin (seconds).
    pub bin_s: f64,
    /// Number of bins: every series of a lane has this length.
    pub bins: u32,
    /// The busiest threads, in order of first appearance; the last lane may sum the rest.
    pub lanes: Vec<Lane>,
}

/// One thread's activity (or several threads' summed) over the timeline's bins.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Lane {
    /// Thread id (0 for a lane summing several threads).
    pub tid: u32,
    /// Its process (thread group) id.
    pub pid: u32,
    /// `pid 12 (php)`, `thread 13 of pid 12 (php)`, `7 other threads`.
    pub label: String,
    /// Threads in this lane (1, or more for the summed lane).
    pub threads: u32,
    /// Syscalls started per bin.
    pub calls: Vec<u32>,
    /// Failed syscalls per bin.
    pub errors: Vec<u32>,
    /// Share of each bin spent inside syscalls (blocked or waiting), 0 to 1.
    pub busy: Vec<f32>,
    /// Syscalls over the whole trace.
    pub total_calls: u64,
    /// Seconds inside syscalls over the whole trace.
    pub total_busy_s: f64,
}

/// Upper bounds (seconds) of the buckets of [`SyscallStats::latency`]; the last bucket has no
/// upper bound. Half a decade each, from 1 microsecond to 10 seconds.
pub const LATENCY_BOUNDS_S: [f64; 15] =
    [1e-6, 3.16e-6, 1e-5, 3.16e-5, 1e-4, 3.16e-4, 1e-3, 3.16e-3, 1e-2, 3.16e-2, 1e-1, 3.16e-1, 1.0, 3.16, 10.0];

/// The program that wrote the report.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Tool {
    /// `syslint`.
    pub name: String,
    /// Its version (`0.1.0`).
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool { name: "syslint".into(), version: env!("CARGO_PKG_VERSION").into() }
    }
}

/// Where the events came from. The report keeps its name ([`Capture::backend`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Strace text read from files or stdin.
    StraceLog,
    /// A `.slr` recording of the eBPF backend.
    EbpfRecording,
    /// Live strace.
    Strace,
    /// Live eBPF.
    Ebpf,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::StraceLog => "strace-log",
            Backend::EbpfRecording => "ebpf-recording",
            Backend::Strace => "strace",
            Backend::Ebpf => "ebpf",
        }
    }

    /// The backend a report names (`None`: a name this version does not know, or none).
    pub fn from_name(s: &str) -> Option<Backend> {
        [Backend::StraceLog, Backend::EbpfRecording, Backend::Strace, Backend::Ebpf]
            .into_iter()
            .find(|b| b.as_str() == s)
    }

    /// Every call of the window was seen, however short the window (a live trace or its
    /// recording), rather than what a file holds, which may be an excerpt.
    pub fn live(self) -> bool {
        !matches!(self, Backend::StraceLog)
    }

    /// The eBPF backend (live or recorded), which times every call.
    pub fn ebpf(self) -> bool {
        matches!(self, Backend::Ebpf | Backend::EbpfRecording)
    }
}

/// How the data was captured and how much of it was understood.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Capture {
    /// `strace-log` (strace text read from files or stdin), `ebpf-recording` (a `.slr`
    /// recording), `strace` or `ebpf` (live).
    #[schemars(extend("enum" = ["strace-log", "ebpf-recording", "strace", "ebpf"]))]
    pub backend: String,
    /// The inputs read (`<stdin>` for `-`).
    pub sources: Vec<String>,
    /// Input lines read.
    pub lines: u64,
    /// Events produced (syscalls, signals, exits, attach notes).
    pub events: u64,
    /// Syscall events (an unfinished/resumed pair counts once).
    pub syscalls: u64,
    /// Lines not understood; the first few are in `unparsed_samples`.
    pub unparsed_lines: u64,
    /// The first 10 lines not understood.
    pub unparsed_samples: Vec<UnparsedLine>,
    /// Events the capture lost (kernel buffer overruns in live capture; 0 for logs).
    pub lost_events: u64,
    /// Seconds a live eBPF capture left the kernel buffer unread because the records waiting
    /// for the analysis had reached their memory bound (an eighth of the memory available, or
    /// what `syslint agent --memory-budget` leaves); what the kernel dropped meanwhile is in
    /// `lost_events`. Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero_s")]
    pub unread_s: f64,
    /// Distinct processes (thread groups) seen.
    pub processes: u64,
    /// Distinct threads seen.
    pub threads: u64,
    /// `time-of-day`, `epoch`, `relative`, `monotonic` or `none`.
    #[schemars(extend("enum" = ["time-of-day", "epoch", "relative", "monotonic", "none"]))]
    pub clock: String,
    /// Whether call durations were known (`strace -T`, or unfinished/resumed pairs).
    pub durations: bool,
    /// `<unfinished ...>` lines joined with their `<... resumed>` line.
    pub resumed_pairs: u64,
    /// The call stacks the input has (strace `-k`), from which findings name their call
    /// sites; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks: Option<Stacks>,
    /// Calls still unfinished when their process died, strace detached or the log ended.
    pub never_resumed: u64,
    /// The traced window in the capture's clock; null without timestamps.
    pub window: Option<Window>,
    /// Problems that did not stop the analysis (an empty file, binary data, truncated
    /// compressed input, cut lines).
    pub warnings: Vec<String>,
    /// `trace --summary-only`: syscalls were counted in the kernel; per-syscall totals are
    /// known, percentiles and per-process counts are not (their fields are absent or 0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub summary_only: bool,
    /// Facts about the capture that are no problem, e.g. how a live trace ended (`--for`,
    /// Ctrl-C, every traced process exited).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What kind of evidence the report was made from (a full trace, an excerpt, a table of
    /// counts), what that kind cannot show and what to record next. Absent in reports of
    /// versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
}

/// The kind of evidence a report was made from.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BasisKind {
    /// Every call of the traced threads over a window (a recording, a live trace, a log).
    FullTrace,
    /// A short run of strace lines (a few to a few hundred), typically pasted: maybe one
    /// process of many, cut at both ends, without pids, timestamps or durations.
    Excerpt,
    /// A table of counts per syscall (`strace -c`, `perf trace -s`, `syscount`,
    /// `syslint trace --summary-only`): no single call.
    Counts,
}

impl BasisKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BasisKind::FullTrace => "full trace",
            BasisKind::Excerpt => "excerpt",
            BasisKind::Counts => "counts",
        }
    }
}

/// What the report was made from, in words for the header.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Basis {
    /// `full-trace`, `excerpt` or `counts`.
    pub kind: BasisKind,
    /// What was read, e.g. `strace -c table (strace 6.x)`, `perf trace -s`, `12 strace lines`.
    pub from: String,
    /// What this kind of evidence cannot show.
    pub cannot_show: String,
    /// What to record next for a complete diagnosis (a command).
    pub record_next: String,
}

/// An input line that was not understood.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct UnparsedLine {
    /// The input it was read from.
    pub source: String,
    /// 1-based line number.
    pub line: u64,
    /// The line, cut at 200 characters.
    pub text: String,
}

/// A time window in the capture's clock, in seconds (since midnight for `time-of-day`, since
/// 1970 for `epoch`, since the first line for `relative`).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Its start.
    pub start_s: f64,
    /// Its end.
    pub end_s: f64,
    /// `end_s - start_s`.
    pub duration_s: f64,
}

/// Statistics of the capture: per syscall, per process, per fd target and per endpoint.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// Per syscall, sorted by total time, then calls.
    pub syscalls: Vec<SyscallStats>,
    /// Per process (thread group), sorted by calls; the busiest 20,000 that ended, with the
    /// rest in `other_processes`.
    pub processes: Vec<ProcessStats>,
    /// Ended processes not listed one by one (a log of very many short processes keeps the
    /// busiest 20,000 and sums the rest here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes: Option<OtherProcesses>,
    /// What the fds pointed at, busiest first.
    pub fd_targets: Vec<TargetStats>,
    /// Outgoing and accepted connections, per remote endpoint.
    pub endpoints: Vec<EndpointStats>,
    /// Rows of an `strace -c` table found in the input (empty unless the input had one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strace_c_table: Vec<CTableRow>,
    /// Bytes read and written on sockets (every socket, not only the rows listed): the traffic
    /// a server exchanged with its peers, which `diff` divides a timed attach's calls by.
    /// Absent when there was none, and in reports of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket_bytes: Option<u64>,
    /// Exchanges on connected sockets: turns of the conversation (data in, then data out, or
    /// the other way), two per request and response, halved. About the requests served or
    /// made; `diff` checks the bytes per exchange to tell whether MiB are a fair unit of work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchanges: Option<u64>,
    /// A table of counts per syscall found in the input (`strace -c`, `perf trace -s`,
    /// `syscount`, a `--summary-only` report), as read. Absent when the input had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
}

/// A table of counts per syscall, from whichever tool printed it.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Counts {
    /// The tool and form: `strace -c`, `strace -c -w`, `perf trace -s`, `syscount`,
    /// `syscount -L`, `syscount -P`, `syslint --summary-only`.
    pub tool: String,
    /// One row per syscall, summed over the processes and threads of the table, most calls first.
    pub rows: Vec<CountRow>,
    /// Per process or thread, when the table had them (`perf trace -s`, `syscount -P`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_task: Vec<TaskCounts>,
    /// Whether the table counts errors (strace's `errors` column, perf's `errors`).
    pub errors_known: bool,
    /// How long the counting ran, when the paste says it (the command line's `timeout 5s`,
    /// `sleep 60`, `--for`, or the tool's own interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// The command line above the table, when the paste has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The syscalls the counting was limited to, when the command line or the tool's own
    /// header says (`syscount --syscall fsync`, `strace -c -e trace=open,read`, `perf trace -s
    /// -e fsync`): the others were not counted, so their absence says nothing. A class or a
    /// negation (`%file`, `!write`) is kept as written. Empty: not limited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
    /// Lines of the paste that were neither the table (its header, rules, rows, the tool's own
    /// interval stamps) nor the command line above it: a prompt, program output, strace's own
    /// messages. Read past: nothing of the table was lost, and none of them is counted as a
    /// line not understood.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub around_lines: u64,
}

impl Stacks {
    /// `1,002 calls came with their stack (52 distinct)`, and what was not kept.
    pub fn words(&self) -> String {
        let mut s = format!("{} calls came with their stack ({} distinct stacks)", self.calls, self.distinct);
        if self.dropped > 0 {
            s.push_str(&format!("; {} not kept (the stack table was full)", self.dropped));
        }
        if self.truncated > 0 {
            s.push_str(&format!("; {} cut at their innermost 64 frames", self.truncated));
        }
        s
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_s(s: &f64) -> bool {
    *s <= 0.0
}

/// One syscall's row of a table of counts (`summary.counts`).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct CountRow {
    /// The syscall.
    pub name: String,
    /// Calls counted.
    pub calls: u64,
    /// Failed calls (0 when the table does not count errors: see `errors_known`).
    pub errors: u64,
    /// Total time in the calls, when the table has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// The rows of one process or thread of a per-task table.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct TaskCounts {
    /// `nginx (1234)`, as the table names it.
    pub task: String,
    /// Its rows, most calls first.
    pub rows: Vec<CountRow>,
}

/// Asked by name, for readers and tests; the detectors' rules ask by `Sys` (the analyze
/// crate's `basis::SysRows`), the vocabulary the rest of the analysis uses.
impl Counts {
    /// The table counted every syscall (it was not limited to a list, `-e trace=`).
    pub fn whole(&self) -> bool {
        self.only.is_empty()
    }

    /// The table counted every syscall and their errors: what a rule weighing failures (or
    /// successes) against all the calls needs.
    pub fn whole_with_errors(&self) -> bool {
        self.errors_known && self.whole()
    }

    /// The row of a syscall.
    pub fn row(&self, name: &str) -> Option<&CountRow> {
        self.rows.iter().find(|r| r.name == name)
    }
    /// All calls of the table.
    pub fn total_calls(&self) -> u64 {
        self.rows.iter().map(|r| r.calls).sum()
    }
    /// Whether the table counted this syscall: the counting was not limited, or was limited
    /// to a list that names it, or its row is there. A syscall a limited table cannot have
    /// counted is unknown, not zero.
    pub fn counted(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| o == name) || self.row(name).is_some()
    }
    /// Whether any of these syscalls was counted (see [`Counts::counted`]).
    pub fn counted_any(&self, names: &[&str]) -> bool {
        names.iter().any(|n| self.counted(n))
    }
    /// Calls per second when the duration is known.
    pub fn per_second(&self, calls: u64) -> Option<f64> {
        self.duration_s.filter(|&d| d > 0.0).map(|d| calls as f64 / d)
    }
}

/// One syscall's statistics.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct SyscallStats {
    /// As strace printed it (`newfstatat`, `mmap2`, `syscall_0x1b6`).
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Calls that failed (`= -1 E...`, `= ? ERESTARTSYS`).
    pub errors: u64,
    /// Errors split by errno name.
    pub errnos: BTreeMap<String, u64>,
    /// Calls with a known duration (the time figures below describe these).
    pub timed_calls: u64,
    /// Sum of the known durations.
    pub total_s: f64,
    /// Mean of the known durations.
    pub avg_s: f64,
    /// Median of the timed calls, from a log-linear histogram (within about 2%); absent when
    /// not measured (no timed call, or `--summary-only`, which counts only totals in the
    /// kernel), never a made-up 0. Likewise `p90_s`, `p99_s` and `max_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_s: Option<f64>,
    /// 90th percentile of the timed calls (within about 2%); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_s: Option<f64>,
    /// 99th percentile of the timed calls (within about 2%); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_s: Option<f64>,
    /// The longest timed call (exact); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_s: Option<f64>,
    /// total_s / the traced window: how many threads were inside this syscall at once on
    /// average. Above 1 when several threads wait at the same time: not a percentage.
    pub wall_share: f64,
    /// total_s / the traced threads' time (each thread from the start of its first syscall to
    /// the end of its last): the share of the threads' time spent in this syscall, at most 1,
    /// and the rows add up to at most 1. Absent when durations are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_share: Option<f64>,
    /// Return value splits where they matter: `returned_0` (polls that timed out, reads at
    /// EOF), `timeout_0` (polls asked not to block), `timeout_infinite`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub returns: BTreeMap<String, u64>,
    /// Bytes moved, for read/write-family calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Timed calls per duration bucket: 16 buckets of half a decade, with upper bounds 1 us,
    /// 3.16 us, 10 us, ... 3.16 s, 10 s (`LATENCY_BOUNDS_S`) and an open last one. Absent when
    /// no call was timed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(equal = LATENCY_BOUNDS_S.len() + 1))]
    pub latency: Vec<u64>,
}

/// One process (thread group).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct ProcessStats {
    /// Process id (the thread group leader's); 0 when the log has no pid column and nothing
    /// names the process.
    pub pid: u32,
    /// Program name from execve or prctl(PR_SET_NAME), when the trace shows it; from /proc for
    /// a process attached to.
    pub comm: Option<String>,
    /// The pid of the process whose `clone`/`fork`/`vfork` created it; null when the trace
    /// does not show it.
    pub parent: Option<u32>,
    /// Threads seen.
    pub threads: u32,
    /// Syscalls of all its threads.
    pub calls: u64,
    /// Failed syscalls of all its threads.
    pub errors: u64,
    /// Time inside syscalls, all threads.
    pub total_s: f64,
    /// How it ended: `exited 0`, `killed by SIGKILL`, or null if still running.
    pub end: Option<String>,
}

/// The ended processes not listed in `processes`, summed.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct OtherProcesses {
    /// How many.
    pub processes: u64,
    /// Their threads.
    pub threads: u64,
    /// Their syscalls.
    pub calls: u64,
    /// Their failed syscalls.
    pub errors: u64,
    /// Their time inside syscalls.
    pub total_s: f64,
}

/// What file descriptors referred to (from `-y`/`-yy` decorations, else from the calls that
/// made them), with the calls on them.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct TargetStats {
    /// A path; for a socket its service end (`127.0.0.1:80`, `127.0.0.1:80 (accepted)`);
    /// `pipe`, `epoll`, `eventfd`, `memfd:NAME`, `fd N (opened before trace)`, ...
    pub target: String,
    /// `file`, `tcp`, `tcp6`, `udp`, `udp6`, `unix`, `netlink`, `pipe`, `epoll`, `eventfd`,
    /// `timerfd`, `signalfd`, `inotify`, `io_uring`, `memfd`, `socket`, `unknown`, `other`.
    pub kind: String,
    /// Calls on such fds.
    pub calls: u64,
    /// Failed calls on them.
    pub errors: u64,
    /// Time in those calls.
    pub total_s: f64,
    /// Bytes read through them.
    pub bytes_read: u64,
    /// Bytes written through them.
    pub bytes_written: u64,
}

/// Connections and datagrams per remote endpoint (outgoing) or per local listening address
/// (incoming).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct EndpointStats {
    /// Remote address (`127.0.0.1:80`, `[::1]:443`, `unix:/run/x.sock`).
    pub endpoint: String,
    /// `tcp`, `udp`, `unix`, ...
    pub proto: String,
    /// `out` (we connected or sent to it) or `in` (connections accepted on this local address).
    #[schemars(extend("enum" = ["out", "in"]))]
    pub direction: String,
    /// Connections opened (connect or accept).
    pub connections: u64,
    /// Connections closed in the trace (when the last fd referring to one closed: a forked
    /// child's copy keeps it open).
    pub closed: u64,
    /// Connections the trace saw opened and still open when it ended.
    #[serde(default)]
    pub open_at_end: u64,
    /// Average life of the connections whose opening the trace showed: closed ones from open
    /// to close, ones still open from open to the end of the trace (so a long-lived connection
    /// counts at least as long as it was traced).
    pub avg_lifetime_s: f64,
    /// Bytes written on those connections (and datagrams sent to it).
    pub bytes_sent: u64,
    /// Bytes read on those connections (and datagrams received from it).
    pub bytes_received: u64,
    /// Time spent in connect() to this endpoint.
    pub connect_s: f64,
}

/// A row of an `strace -c`/`-C` table found in the input.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct CTableRow {
    /// The syscall.
    pub name: String,
    /// Its `seconds` column.
    pub seconds: f64,
    /// Its `calls` column.
    pub calls: u64,
    /// Its `errors` column.
    pub errors: u64,
}

/// How much a finding costs: `info`, `warning` or `error` (`--fail-on` compares against it).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Info,
    Warning,
    Error,
}

impl Severity {
    /// `Warning` when `warn` holds, else `Info`: most detectors' full-trace rule, a warning
    /// from a threshold (measured cost then weighs it again: `registry::weigh`).
    pub fn warning_if(warn: bool) -> Severity {
        if warn {
            Severity::Warning
        } else {
            Severity::Info
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::str::FromStr for Severity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "info" => Ok(Severity::Info),
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            _ => Err(format!("unknown severity {s:?} (expected info, warning or error)")),
        }
    }
}

/// How sure a finding is, apart from how much it costs (its severity).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// A hint: the evidence fits the pathology and also some healthy behaviour.
    Low,
    /// The evidence shows the pathology, but not all of it (an excerpt, a table).
    Medium,
    /// The evidence shows the pathology whole (a full trace met the detector's thresholds).
    High,
}

impl Confidence {
    /// `Medium` when the evidence is strong enough, else `Low`: how the excerpt and counts rules
    /// grade what they read.
    pub fn medium_if(strong: bool) -> Confidence {
        if strong {
            Confidence::Medium
        } else {
            Confidence::Low
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// What a finding is about, as data: the same thing in two runs has the same `Subject`, even
/// though process ids, thread ids and temporary names differ.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Subject {
    /// What kind of thing it is.
    pub kind: SubjectKind,
    /// The program (process name) it happens in, when that is part of what it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The file, endpoint (`host:port`), listening address or DNS name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The kind of thing a finding is about.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum SubjectKind {
    /// One thread (busy-poll).
    Thread,
    /// The processes running one program (grouped: a pool of workers is one subject).
    Program,
    /// A file or other fd target (`name` is its path or description).
    File,
    /// A remote endpoint the program connects to or talks to.
    Endpoint,
    /// A listening socket (`name` is its local address).
    Listener,
    /// A name being resolved (`name` is the DNS name).
    Name,
    /// An address names resolved to.
    Address,
    /// Name lookups whose names the trace does not show.
    Lookups,
}

impl Subject {
    pub fn new(kind: SubjectKind) -> Subject {
        Subject { kind, program: None, name: None }
    }
    pub fn program(mut self, p: Option<&str>) -> Subject {
        self.program = p.map(str::to_string);
        self
    }
    pub fn name(mut self, n: impl Into<String>) -> Subject {
        self.name = Some(n.into());
        self
    }
}

/// One detected pathology. `..Default::default()` fills what a detector leaves to the analyzer
/// (confidence, its reason, the confirm command: stamped at the end).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Finding {
    /// Kebab-case detector name, e.g. `busy-poll`.
    pub detector: String,
    /// Stable code, e.g. `SL001`.
    #[schemars(pattern(r"^SL[0-9]{3}$"))]
    pub code: String,
    /// `info`, `warning` or `error`: from what the fix would save (`impact`).
    pub severity: Severity,
    /// Lowercase, no trailing period.
    pub message: String,
    /// What it is about: a process, thread, fd, endpoint, name or path, in words.
    pub subject: String,
    /// The same as data, without process ids: what `diff` matches findings on across runs.
    /// Absent in reports written before it existed (diff then matches on `subject`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<Subject>,
    /// When it happened, like `capture.window`; null when the trace has no timestamps.
    pub window: Option<Window>,
    /// Detector-specific values, documented by `syslint explain NAME`: numbers, and a few
    /// short lists of names (e.g. `top_dirs`).
    pub metrics: BTreeMap<String, serde_json::Value>,
    /// A few strace-style lines showing it (payload bytes truncated and redacted).
    pub evidence: Vec<String>,
    /// Estimated cost, in words with numbers (time or CPU wasted, calls that could be saved).
    pub cost: Option<String>,
    /// The cost as a number: the seconds the fix would save, and the share of the traced time
    /// they are, from which the severity is decided (a warning claims a material share).
    /// Absent when the trace shows no time (no -T, an excerpt) or in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<Impact>,
    /// Concrete advice: for a program syslint knows by its process name, that program's or
    /// runtime's own setting first (`fix_for`).
    pub fix: String,
    /// The program or runtime `fix` is written for (`Apache httpd`, `Python`), when the finding's
    /// program is one syslint has advice for; absent when `fix` is the general advice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_for: Option<String>,
    /// The detector's general advice, for every runtime, when `fix` leads with the program's
    /// own (shown folded away: `--verbose` in the table, collapsed in HTML and Markdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_elsewhere: Option<String>,
    /// How sure the finding is (`high`, `medium`, `low`); absent in reports of versions
    /// before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// Why that confidence, in words ("10 lines from one worker; the other workers are not in
    /// the excerpt").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_reason: Option<String>,
    /// The command that would settle it (`syslint trace -p PID --for 30s`, strace flags to
    /// record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<String>,
    /// Where in the program its calls are made (the input's stacks, strace `-k`): the stacks
    /// of the calls it is about, most calls first, at most [`CallSite::MAX`]. Empty when the
    /// input has no stacks for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub call_sites: Vec<CallSite>,
    /// For a finding without call sites from an input without stacks: the command that
    /// records the calls it is about with their stacks (`strace -f -k -e trace=poll ...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks_command: Option<String>,
    /// Accepted in the baseline given with `--baseline`: still reported, but not counted by
    /// `--fail-on`. Absent when false (and in reports of versions before it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baselined: bool,
    /// The case of the analyzer's program advice that this finding's own fix belongs to
    /// (`connection-churn/server-closes`), set by the detector that wrote the fix; `None` for a
    /// finding carrying its detector's general fix. Not part of the report.
    #[serde(skip)]
    pub advice: Option<&'static str>,
    /// The (thread, syscall) pairs of the calls the finding counts, when its detector named
    /// them: its call sites are those calls' stacks (else those of its evidence lines' calls).
    /// Not part of the report.
    #[serde(skip)]
    pub calls: Vec<(u32, &'static str)>,
}

/// What the input's stacks held (strace `-k`): kept interned and bounded, what did not fit
/// counted.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Stacks {
    /// Calls that came with their stack.
    pub calls: u64,
    /// Distinct stacks and frames kept.
    pub distinct: u64,
    pub frames: u64,
    /// Calls whose stack was not kept (the table was full), and stacks cut at their
    /// innermost 64 frames.
    pub dropped: u64,
    pub truncated: u64,
    /// Stacks that followed no call (a signal's), or a call that never returned (exit,
    /// exit_group: strace prints theirs after `+++ exited`).
    pub unattached: u64,
}

/// One place in the program a finding's calls come from: a stack, innermost first.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct CallSite {
    /// The finding's calls made from this stack (calls of its syscalls on its threads).
    pub calls: u64,
    /// Their share of the finding's calls that have a stack (0 to 1).
    pub share: f64,
    /// The frame the program owns nearest the syscall (the first not in the C library, the
    /// dynamic loader, the vDSO or libpthread): an index into `frames`; absent when every frame
    /// is theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<usize>,
    /// The stack, the syscall's own frame first, up to 64 frames.
    pub frames: Vec<StackFrame>,
}

impl CallSite {
    /// Call sites kept per finding.
    pub const MAX: usize = 5;

    /// The owner frame, else the innermost.
    pub fn lead(&self) -> Option<&StackFrame> {
        self.owner.and_then(|i| self.frames.get(i)).or(self.frames.first())
    }

    /// The owner frame (else the innermost) and up to `callers` of its callers:
    /// `wait_for_reply (spin) <- serve (spin) <- main (spin)`.
    pub fn summary(&self, callers: usize) -> String {
        let from = self.owner.unwrap_or(0);
        let mut parts: Vec<String> =
            self.frames.iter().skip(from).take(callers + 1).map(StackFrame::describe).collect();
        if self.frames.len() > from + callers + 1 {
            parts.push("...".into());
        }
        parts.join(" <- ")
    }

    /// The frames between the syscall and the owner frame, innermost first (the C library's
    /// wrapper, `poll (libc.so.6)`); empty when the owner made the call itself.
    pub fn below(&self) -> String {
        let to = self.owner.unwrap_or(0);
        self.frames.iter().take(to).map(StackFrame::describe).collect::<Vec<_>>().join(" <- ")
    }

    /// `935 calls, 99.7%`: how many of the finding's calls come from here.
    pub fn share_words(&self) -> String {
        format!("{} calls, {:.1}%", self.calls, self.share * 100.0)
    }
}

/// One frame of a call site's stack.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct StackFrame {
    /// The object file (`/usr/lib/x86_64-linux-gnu/libc.so.6`, the program's path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The function, when the unwinder named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Bytes into `symbol`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// The address as the backend gave it (strace: the offset in the module's file).
    pub addr: u64,
    /// Source file and line (strace `-kk`, where debug info has them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The unwinder's message instead of a frame (`too many stack frames`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StackFrame {
    /// `symbol (module-file-name) file:line`, as short as what is known (`file` alone when the
    /// line is not).
    pub fn describe(&self) -> String {
        if let Some(e) = &self.error {
            return format!("[{e}]");
        }
        let base = self.module.as_deref().map(|m| m.rsplit('/').next().unwrap_or(m));
        let mut s = match (&self.symbol, base) {
            (Some(sym), Some(b)) => format!("{sym} ({b})"),
            (Some(sym), None) => sym.clone(),
            (None, Some(b)) => format!("{b}+{:#x}", self.addr),
            (None, None) => format!("{:#x}", self.addr),
        };
        match (&self.file, self.line.filter(|&l| l > 0)) {
            (Some(f), Some(l)) => s.push_str(&format!(" {f}:{l}")),
            // a Python function (-X perf names its file, not its line)
            (Some(f), None) => s.push_str(&format!(" {f}")),
            _ => {}
        }
        s
    }
}

/// What a finding's fix would save, measured: the detector gives `saved_s` (its cost model,
/// `syslint explain NAME`), the analyzer the time traced and the share, and decides the
/// severity from that share: below 0.01 of the traced time (`Impact::WARN_SHARE`) a finding is
/// info, below 0.05 (`Impact::ERROR_SHARE`) at most a warning, whatever its counts.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct Impact {
    /// Seconds the fix would save over the trace (thread time: summed over the threads and
    /// processes the finding is about).
    pub saved_s: f64,
    /// The traced time it is weighed against: the trace's window (a command's wall time, an
    /// attach's duration), or a table's duration or total syscall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_s: Option<f64>,
    /// `saved_s / traced_s` (above 1 when several threads lose time at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
}

impl Impact {
    /// The share of the traced time a warning claims to save.
    pub const WARN_SHARE: f64 = 0.01;
    /// The share an error claims.
    pub const ERROR_SHARE: f64 = 0.05;

    pub fn saved(saved_s: f64) -> Impact {
        Impact { saved_s, traced_s: None, share: None }
    }
}

impl Report {
    /// `N findings accepted in the baseline (FILE)`, when the report was judged against a
    /// baseline (`--baseline FILE`); what the table and Markdown print beside the findings.
    pub fn baseline_line(&self) -> Option<String> {
        let file = self.baseline.as_ref()?;
        let n = self.findings.iter().filter(|f| f.baselined).count();
        Some(format!("{n} finding{} accepted in the baseline ({file})", if n == 1 { "" } else { "s" }))
    }

    /// The highest severity among the findings.
    pub fn max_severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
