//! The detector registry: every detector declared like a lint (code, kebab-case name,
//! category, status, docs under fixed headings, the events it wants and its thresholds, all
//! declared in those docs and made into code at build time: [`detector!`](crate::detector)).
//! One ordered list, [`ENTRIES`], checked by tests: unique codes and names, complete docs,
//! documented options that match the config struct.
//!
//! How to write a detector: docs/detectors.md.

use crate::model::Model;
use syslint_event::{Class, Clock, Event, Sys, Syscall, Tid};
use syslint_report::{Finding, Severity, Window};

/// Whether a detector runs by default.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// On by default.
    Stable,
    /// Off unless selected with `--select`.
    Preview,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Stable => "stable",
            Status::Preview => "preview",
        }
    }
}

/// What a detector's pathology wastes, for `syslint detectors` and the JSON list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Category {
    /// CPU spent in calls that need not happen (spins, clock reads, polls).
    Cpu,
    /// Connections, name lookups, the network's waits.
    Network,
    /// Lookups and metadata of files and directories.
    Filesystem,
    /// Reads, writes and flushes of data.
    Io,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Cpu => "cpu",
            Category::Network => "network",
            Category::Filesystem => "filesystem",
            Category::Io => "io",
        }
    }
}

/// Everything `syslint explain` prints, under fixed headings.
#[derive(Debug)]
pub struct Docs {
    pub what: &'static str,
    pub why: &'static str,
    pub evidence: &'static str,
    pub fix: &'static str,
    /// Real strace lines showing the pathology.
    pub example: &'static str,
}

impl Docs {
    /// The docs from the Markdown file beside the detector (`include_str!("name.md")`): a
    /// title line, then `## What`, `## Why`, `## Evidence`, `## Fix` and `## Example`, in this
    /// order, each section's text exactly as `syslint explain` prints it. Evaluated at compile
    /// time: a file without one of the sections does not build.
    pub const fn markdown(md: &'static str) -> Docs {
        let what = section(md, b"## What\n\n", 0);
        let why = section(md, b"## Why\n\n", what.1);
        let evidence = section(md, b"## Evidence\n\n", why.1);
        let fix = section(md, b"## Fix\n\n", evidence.1);
        let example = section(md, b"## Example\n\n", fix.1);
        Docs { what: what.0, why: why.0, evidence: evidence.0, fix: fix.0, example: example.0 }
    }
}

/// Where `pat` starts in `h` at or after `from` (`h.len()` when nowhere).
const fn find_bytes(h: &[u8], pat: &[u8], from: usize) -> usize {
    let mut i = from;
    while i + pat.len() <= h.len() {
        let mut j = 0;
        while j < pat.len() && h[i + j] == pat[j] {
            j += 1;
        }
        if j == pat.len() {
            return i;
        }
        i += 1;
    }
    h.len()
}

/// The text under `heading` (searched from `from`), up to the next `## ` heading or the end,
/// without the blank line before it; and where the text ends.
const fn section(md: &'static str, heading: &[u8], from: usize) -> (&'static str, usize) {
    let b = md.as_bytes();
    let at = find_bytes(b, heading, from);
    if at == b.len() {
        panic!("a detector's docs lack a section (## What, ## Why, ## Evidence, ## Fix, ## Example, in order)");
    }
    let start = at + heading.len();
    let mut end = find_bytes(b, b"\n\n## ", start);
    if end == b.len() {
        // the last section: up to the file's final newline
        while end > start && b[end - 1] == b'\n' {
            end -= 1;
        }
    }
    let (head, _) = b.split_at(end);
    let (_, text) = head.split_at(start);
    match std::str::from_utf8(text) {
        Ok(t) => (t, end),
        Err(_) => panic!("a detector's docs are not UTF-8"),
    }
}

/// One documented threshold: name (as in syslint.toml), meaning.
#[derive(Debug)]
pub struct OptionDoc {
    pub name: &'static str,
    pub meaning: &'static str,
    /// An amount the trace accumulates (bytes, seconds, calls: `amount = true` in the docs),
    /// not a share or a rate: a window cut short by its bound of records meets it at the rate
    /// it saw ([`Shortened`]).
    pub amount: bool,
}

/// A live window cut short by its bound of records (the agent's `--window-records`): its
/// calls were seen in `seen_s` of the `meant_s` it was to last. Its findings are judged at the
/// rate it saw, over its whole length: the options that are amounts (`amount = true`) are
/// divided by [`Shortened::factor`] before the detectors' finish ([`Stretch`]), so a warning that
/// needs 256 MiB copied needs 77 MiB in 0.6 s of a 2 s window. Reporting thresholds (`min_*`)
/// are not amounts in this sense: a finding still needs its evidence inside the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shortened {
    pub seen_s: f64,
    pub meant_s: f64,
}

impl Shortened {
    /// How many times longer the window was meant to be than it was (1 when not shorter).
    pub fn factor(&self) -> f64 {
        if self.seen_s.is_finite() && self.meant_s.is_finite() && self.seen_s > 0.0 && self.meant_s > self.seen_s {
            self.meant_s / self.seen_s
        } else {
            1.0
        }
    }
}

/// The cost line of each finding a shortened window's rate made more severe than the calls
/// seen alone (`seen`: the same detector's findings with its options as given), so the
/// severity says what it stands on.
pub fn explain_stretch(judged: &mut [Finding], seen: &[Finding], short: Shortened) {
    for f in judged {
        let before = seen.iter().find(|s| s.detector == f.detector && s.subject == f.subject).map(|s| s.severity);
        if before.is_some_and(|b| b >= f.severity) {
            continue;
        }
        let why = format!(
            "{} at the rate seen in the {} the window ran before its bound of records, over the {} it was to last (x{:.1}){}",
            f.severity.as_str(),
            fmt_secs(short.seen_s),
            fmt_secs(short.meant_s),
            short.factor(),
            match before {
                Some(b) => format!("; {} from those calls alone", b.as_str()),
                None => "; not reported from those calls alone".into(),
            }
        );
        add_to_cost(f, why);
    }
}

/// A detector's config whose amounts can be judged over a longer window than the one seen:
/// generated from the options marked `amount = true` ([`Shortened`]).
pub trait Stretch {
    /// Divide every amount by `by` (> 1).
    fn stretch(&mut self, by: f64);
}

/// A threshold that is an amount, divided by a window's factor ([`Stretch`]): integers round up
/// and stay at least 1 (a threshold of 0 stays 0).
pub trait Amount: Copy {
    fn over(self, by: f64) -> Self;
}

macro_rules! int_amount {
    ($($t:ty),*) => {$(
        impl Amount for $t {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss, clippy::cast_lossless)]
            fn over(self, by: f64) -> Self {
                // NaN is no factor either
                if self == 0 || by.partial_cmp(&1.0) != Some(std::cmp::Ordering::Greater) {
                    return self;
                }
                // an f64 past the type's range saturates in `as`
                ((self as f64 / by).ceil() as $t).max(1)
            }
        }
    )*};
}
int_amount!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl Amount for f64 {
    fn over(self, by: f64) -> Self {
        if by > 1.0 {
            self / by
        } else {
            self
        }
    }
}

impl Amount for f32 {
    #[allow(clippy::cast_possible_truncation)]
    fn over(self, by: f64) -> Self {
        if by > 1.0 {
            (f64::from(self) / by) as f32
        } else {
            self
        }
    }
}

#[derive(Debug)]
pub struct Meta {
    /// Stable code, `SL` + three digits.
    pub code: &'static str,
    /// Kebab-case name, part of the JSON contract.
    pub name: &'static str,
    pub category: Category,
    pub status: Status,
    /// One line for `syslint detectors`.
    pub summary: &'static str,
    pub docs: Docs,
    pub options: &'static [OptionDoc],
    /// What a finding's fix would save, in seconds: the severity is decided from it.
    pub cost: CostModel,
    /// The events the detector is handed (see [`Interest`]).
    pub interest: Interest,
    /// What an excerpt and a table of counts can show of the pathology, in words: the
    /// detector's excerpt and counts rules ([`Detector::on_excerpt`], [`Detector::on_counts`])
    /// as `syslint explain` prints them.
    pub levels: Levels,
}

/// A detector's cost model (issue 27): which of its metrics holds the seconds its fix would
/// save, and what they are, in words (`syslint explain`). The analyzer weighs those seconds
/// against the traced time and decides the severity from the share ([`weigh`]): one rule for
/// every detector, so a warning always claims a material share of the program's time.
#[derive(Debug)]
pub struct CostModel {
    /// The metric (seconds) a finding's [`syslint_report::Impact`] is read from, when the
    /// finding does not give one itself; `None`: the detector has no cost in seconds, and its
    /// severity stands on its counts.
    pub metric: Option<&'static str>,
    /// What those seconds are.
    pub model: &'static str,
}

/// Severity from measured cost, for every finding of every detector: the seconds the fix would
/// save (the finding's own [`syslint_report::Impact`], else its cost model's metric) are
/// weighed against the traced time; below [`syslint_report::Impact::WARN_SHARE`] a warning is
/// info, below [`syslint_report::Impact::ERROR_SHARE`] an error is a warning, and the cost line
/// says why. Nothing is ever raised. Without a time (no -T, an excerpt) the severity stands.
pub fn weigh(f: &mut Finding, meta: &Meta, traced_s: Option<f64>) {
    use syslint_report::Impact;
    let saved = f
        .impact
        .as_ref()
        .map(|i| i.saved_s)
        .or_else(|| meta.cost.metric.and_then(|m| f.metrics.get(m)).and_then(serde_json::Value::as_f64));
    let Some(saved_s) = saved.filter(|s| s.is_finite() && *s >= 0.0) else { return };
    let traced_s = traced_s.filter(|t| t.is_finite() && *t > 0.0);
    let share = traced_s.map(|t| saved_s / t);
    f.impact = Some(Impact { saved_s, traced_s, share });
    let (Some(share), Some(traced)) = (share, traced_s) else { return };
    let was = f.severity;
    if f.severity == Severity::Error && share < Impact::ERROR_SHARE {
        f.severity = Severity::Warning;
    }
    if f.severity == Severity::Warning && share < Impact::WARN_SHARE {
        f.severity = Severity::Info;
    }
    if f.severity != was {
        let need = if f.severity == Severity::Info { Impact::WARN_SHARE } else { Impact::ERROR_SHARE };
        let why = format!(
            "{} of the {} traced ({}): less than the {} {} claims, so {}",
            fmt_secs(saved_s),
            fmt_secs(traced),
            fmt_share(share),
            fmt_share(need),
            if was == Severity::Error { "an error" } else { "a warning" },
            f.severity.as_str()
        );
        add_to_cost(f, why);
    }
}

/// `why` after the finding's cost line (`; ` between), or as its cost line.
fn add_to_cost(f: &mut Finding, why: String) {
    f.cost = Some(match f.cost.take() {
        Some(c) => format!("{c}; {why}"),
        None => why,
    });
}

fn fmt_secs(s: f64) -> String {
    if s >= 10.0 {
        format!("{s:.1} s")
    } else if s >= 0.1 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

pub use syslint_report::printers::fmt_share;

impl Meta {
    /// A finding of this detector with its severity and message, its fix the general one: the
    /// draft the detector completes ([`Draft`](crate::draft::Draft): what it is about, window,
    /// metrics, evidence, cost) and ends as a full-trace, excerpt or counts finding.
    pub fn finding(&'static self, severity: Severity, message: impl Into<String>) -> crate::draft::Draft {
        crate::draft::Draft::new(self.name, self.code, self.fix(), severity, message.into())
    }

    /// The fix a finding carries: the first paragraph of the docs' Fix section, without its
    /// final period (the rest of that section is the longer explanation `syslint explain`
    /// prints), so the fix is written once.
    pub fn fix(&self) -> &'static str {
        let f = self.docs.fix.trim();
        // findings' texts end without a period, like their messages
        f.split("\n\n").next().unwrap_or(f).trim().trim_end_matches('.')
    }
}

/// What a detector wants to see, declared once in its [`Meta`]. The analyzer builds a
/// dispatch table from these when it starts: a detector is never called for an event it did
/// not ask for, so the cost of an event does not grow with detectors that ignore it.
#[derive(Copy, Clone, Debug)]
pub struct Interest {
    /// These syscalls ...
    pub syscalls: &'static [Sys],
    /// ... and every syscall in any of these classes ...
    pub classes: &'static [Class],
    /// ... or every syscall, known or not (for detectors that count all calls).
    pub all_syscalls: bool,
    /// Thread and process ends (`+++ exited` / `+++ killed`): [`Detector::on_exit`].
    pub exits: bool,
    /// A pid learnt to be the same thread as an earlier pid-less one: [`Detector::on_alias`].
    pub aliases: bool,
    /// Signals, attach and detach notes: [`Detector::on_note`].
    pub notes: bool,
}

impl Interest {
    /// Nothing at all (a detector that only looks at the model at the end).
    pub const NONE: Interest =
        Interest { syscalls: &[], classes: &[], all_syscalls: false, exits: false, aliases: false, notes: false };

    /// Whether a syscall is wanted.
    pub fn wants(&self, sys: Sys) -> bool {
        self.all_syscalls || self.syscalls.contains(&sys) || self.classes.iter().any(|&c| sys.is(c))
    }
}

/// What a detector sees with each event, after the model has seen it.
pub struct Ctx<'m> {
    pub model: &'m Model,
    /// Position of the event in the whole stream (every event counts, wanted or not).
    pub seq: u64,
    /// What the syscall's fd argument referred to (looked up before a `close` removed it).
    pub target: Option<crate::model::TargetView<'m>>,
    /// The process the event's thread belongs to (looked up once for all detectors).
    pub tgid: syslint_event::Tgid,
    /// A `close` of an earlier life of its fd number ([`crate::model::Model::earlier_life`]):
    /// state kept for the fd now is the next life's, which this close must not end.
    pub earlier_life: bool,
}

impl Ctx<'_> {
    /// The fd number this call ends the life of: a `close`'s fd, unless it closes an earlier
    /// life of the number ([`Ctx::earlier_life`]), which ends nothing the detector keeps for
    /// the fd now. `None` for any other call.
    pub fn closed_fd(&self, sc: &syslint_event::Syscall) -> Option<i32> {
        if sc.sys != syslint_event::Sys::Close || self.earlier_life {
            return None;
        }
        sc.fd_num()
    }

    /// [`closed_fd`](Self::closed_fd) as the id of an object keyed by fd number.
    pub fn closed_object(&self, sc: &syslint_event::Syscall) -> Option<u64> {
        self.closed_fd(sc).and_then(|fd| u64::try_from(fd).ok())
    }
}

/// What a detector gets when the trace ends.
pub struct FinishCtx<'m> {
    pub model: &'m Model,
    /// How to print evidence timestamps.
    pub clock: Clock,
    /// The whole traced window.
    pub window: Option<Window>,
    /// What measured the durations (cost lines say so).
    pub tracer: Tracer,
}

/// What recorded the trace: it decides what durations include.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Tracer {
    /// strace (live, or a log): each call stopped twice by ptrace; -T durations are the
    /// kernel's, but the gaps between calls include the stops.
    #[default]
    Strace,
    /// eBPF (live, or a `.slr` recording): the program ran at its own speed.
    Ebpf,
}

impl Tracer {
    /// From the capture's backend (eBPF, live or recorded; anything else is strace's).
    pub fn of_backend(backend: Option<syslint_report::Backend>) -> Tracer {
        if backend.is_some_and(syslint_report::Backend::ebpf) {
            Tracer::Ebpf
        } else {
            Tracer::Strace
        }
    }

    /// For cost lines: `measured under strace`, `measured with eBPF`.
    pub fn measured(self) -> &'static str {
        match self {
            Tracer::Strace => "measured under strace",
            Tracer::Ebpf => "measured with eBPF",
        }
    }
}

/// A detector sees, in time order, the events its [`Meta::interest`] asks for, and returns its
/// findings at the end. (Detectors are `Clone`, so a live trace can ask a copy for the
/// findings so far.)
pub trait Detector: DetectorClone + Send {
    fn meta(&self) -> &'static Meta;
    /// A syscall the interest names.
    fn on_syscall(&mut self, _cx: &Ctx, _ev: &Event, _sc: &Syscall) {}
    /// A thread ended (`ev.tid`); when `ev.tid.leads(cx.tgid)` the process ended with it.
    fn on_exit(&mut self, _cx: &Ctx, _ev: &Event) {}
    /// `ev.tid` is the thread earlier events showed as `old`: re-key what is kept for `old`.
    fn on_alias(&mut self, _cx: &Ctx, _ev: &Event, _old: Tid) {}
    /// A signal, attach or detach note.
    fn on_note(&mut self, _cx: &Ctx, _ev: &Event) {}
    /// The detector's maps keyed by thread or process: the analyzer re-keys them when a pid
    /// alias is learnt (before [`on_alias`](Self::on_alias)), whatever the interest says.
    fn keyed(&mut self) -> Vec<&mut dyn crate::kit::Rekey> {
        Vec::new()
    }
    /// Whether thread and process exits reach [`on_exit`](Self::on_exit) (the interest's
    /// `exits`, or always for state the analyzer keeps: [`crate::host`]).
    fn wants_exits(&self) -> bool {
        self.meta().interest.exits
    }
    /// What the detector's bounds left out, for the report's warnings (none: nothing).
    fn dropped(&self) -> Option<String> {
        None
    }
    fn finish(&mut self, cx: &FinishCtx) -> Vec<Finding>;
    /// Judge the trace as `by` times longer than it was seen (> 1: a window cut short by its
    /// bound of records, [`Shortened`]): divide the options that are amounts by `by`, before
    /// [`finish`](Self::finish). Declared detectors: `self.cfg.stretch(by)` ([`Stretch`]).
    fn stretch(&mut self, by: f64);
    /// Excerpt rules (optional): the smallest convincing evidence of the pathology in a short
    /// run of lines ([`crate::basis::Excerpt`]: maybe one process, no pids, timestamps or
    /// durations). Called only when the input is an excerpt and [`finish`](Self::finish) found
    /// nothing; findings end with [`Draft::in_excerpt`](crate::draft::Draft::in_excerpt)
    /// (confidence at most medium, severity at most warning), and [`Meta::levels`] says the
    /// rule in words. Each rule needs a near-miss test that stays quiet.
    fn on_excerpt(&self, _x: &crate::basis::Excerpt) -> Vec<Finding> {
        Vec::new()
    }
    /// Counts rules (optional): what a table of counts per syscall (`strace -c`, `perf trace
    /// -s`, `syscount`, `--summary-only`) shows of the pathology. Findings end with
    /// [`Draft::in_table`](crate::draft::Draft::in_table): never `error`, never `high`. Rules
    /// ask the table by [`syslint_event::Sys`] or [`syslint_event::Class`], as the full-trace
    /// rules do ([`crate::basis::SysRows`]), not by name.
    fn on_counts(&self, _c: &syslint_report::Counts) -> Vec<Finding> {
        Vec::new()
    }
}

/// What a detector can tell from less than a full trace, in words (`syslint explain`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Levels {
    /// The excerpt rule, or why there is none.
    pub excerpt: &'static str,
    /// The counts rule, or why there is none.
    pub counts: &'static str,
    /// What a table must have for the counts rule to be asked at all.
    pub table: TableNeeds,
}

impl Levels {
    /// Not declared: the detector reads full traces only.
    pub const NONE: Levels =
        Levels { excerpt: "", counts: "", table: TableNeeds { every_syscall: false, errors: false } };
}

/// What a counts rule needs of a table, declared beside the rule's words (`table =
/// ["every-syscall", "errors"]`): a table without it is not shown to the rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableNeeds {
    /// Every syscall counted: a rule weighing some calls against all of them cannot read a
    /// table limited to a list (`-e trace=`, `syscount --syscall`).
    pub every_syscall: bool,
    /// The failed calls counted (an `errors` column).
    pub errors: bool,
}

impl TableNeeds {
    /// Whether `c` has what is needed.
    pub fn met_by(self, c: &syslint_report::Counts) -> bool {
        (!self.every_syscall || c.whole()) && (!self.errors || c.errors_known)
    }
}

/// A detector's counts rule on a table, when the table has what the rule needs
/// ([`TableNeeds`]): the one way the rule is asked.
pub fn counts_rule(d: &dyn Detector, c: &syslint_report::Counts) -> Vec<Finding> {
    if d.meta().levels.table.met_by(c) {
        d.on_counts(c)
    } else {
        Vec::new()
    }
}

/// A detector as [`detector!`](crate::detector) declares it from its docs: its metadata, its
/// config type (whose fields are the documented options) and how to build one from a config.
/// Hosted detectors ([`crate::host::Hosted`]) have it as their supertrait; the few that
/// implement [`Detector`] themselves enter the registry with [`entry`].
pub trait Declared: Clone + Send + 'static {
    type Config: serde::Serialize + serde::de::DeserializeOwned + Default + Stretch;
    const META: &'static Meta;
    fn new(cfg: Self::Config) -> Self;
    /// Its options, to judge a shortened window at its rate ([`Shortened`]).
    fn config_mut(&mut self) -> &mut Self::Config;
}

/// The registry entry of a detector that implements [`Detector`] itself: `entry::<RepeatedDns>()`.
pub const fn entry<D: Declared + Detector>() -> Entry {
    Entry { meta: D::META, make: make_of::<D>, defaults: defaults_of::<D::Config> }
}

fn make_of<D: Declared + Detector>(v: Option<&toml::Value>) -> Result<Box<dyn Detector>, String> {
    Ok(Box::new(D::new(config_of::<D::Config>(v)?)))
}

/// Copying a boxed detector (implemented for every `Clone` detector).
pub trait DetectorClone {
    fn clone_box(&self) -> Box<dyn Detector>;
}

impl<T: Detector + Clone + 'static> DetectorClone for T {
    fn clone_box(&self) -> Box<dyn Detector> {
        Box::new(self.clone())
    }
}

/// Builds a detector from its config table (absent: defaults); the error is the reason.
pub type MakeFn = fn(Option<&toml::Value>) -> Result<Box<dyn Detector>, String>;

/// A registry entry: the metadata, a constructor from the detector's `[name]` table of
/// syslint.toml (absent: defaults), and the default config as TOML (for `explain`).
#[derive(Clone, Copy)]
pub struct Entry {
    pub meta: &'static Meta,
    pub make: MakeFn,
    pub defaults: fn() -> toml::Value,
}

pub use crate::detectors::ENTRIES;

/// The metadata of all detectors.
pub fn metas() -> Vec<&'static Meta> {
    ENTRIES.iter().map(|e| e.meta).collect()
}

/// Find a detector by kebab-case name or code (codes case-insensitive).
pub fn find(key: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.meta.name == key || e.meta.code.eq_ignore_ascii_case(key))
}

/// Why the detectors could not be built (the caller names the config file, when there is one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// `--select`/`--ignore` named no detector.
    #[error("unknown detector {0:?} (syslint detectors lists them)")]
    UnknownDetector(String),
    /// The config has a table for no detector.
    #[error("unknown detector [{0}] (syslint detectors lists them)")]
    UnknownTable(String),
    /// A detector's options did not load (unknown key, wrong type).
    #[error("[{detector}]: {message}")]
    BadOptions { detector: &'static str, message: String },
}

impl BuildError {
    /// Whether the error is in the config file (rather than on the command line).
    pub fn in_config(&self) -> bool {
        !matches!(self, BuildError::UnknownDetector(_))
    }
}

/// Build the detectors to run. `select` (names or codes; empty = every stable detector)
/// and `ignore` filter; `config` is the parsed config file (a table per detector name).
pub fn build(select: &[String], ignore: &[String], config: &toml::Table) -> Result<Vec<Box<dyn Detector>>, BuildError> {
    for key in select.iter().chain(ignore) {
        if find(key).is_none() {
            return Err(BuildError::UnknownDetector(key.clone()));
        }
    }
    for key in config.keys() {
        if find(key).is_none() {
            return Err(BuildError::UnknownTable(key.clone()));
        }
    }
    let named =
        |e: &Entry, list: &[String]| list.iter().any(|k| e.meta.name == k || e.meta.code.eq_ignore_ascii_case(k));
    let mut out = Vec::new();
    for e in ENTRIES {
        let wanted = if select.is_empty() { e.meta.status == Status::Stable } else { named(e, select) };
        if !wanted || named(e, ignore) {
            continue;
        }
        let cfg = config.get(e.meta.name).or_else(|| config.get(e.meta.code));
        out.push((e.make)(cfg).map_err(|message| BuildError::BadOptions { detector: e.meta.name, message })?);
    }
    Ok(out)
}

/// Deserialize a detector's config table, defaults for what it leaves out, errors for
/// unknown keys (use `#[serde(default, deny_unknown_fields)]` on the struct).
pub fn config_of<T: serde::de::DeserializeOwned + Default>(v: Option<&toml::Value>) -> Result<T, String> {
    match v {
        None => Ok(T::default()),
        Some(v) => T::deserialize(v.clone()).map_err(|e| e.to_string().trim().to_string()),
    }
}

/// A detector's default config as a TOML value.
pub fn defaults_of<T: serde::Serialize + Default>() -> toml::Value {
    toml::Value::try_from(T::default()).unwrap_or(toml::Value::Table(Default::default()))
}

/// Declares a detector in one line, from its docs (`detectors/<name>.md`): the build script
/// (`build.rs`) makes the title line and the ```toml block under `## Declaration` into the
/// static `META` (code, name, category, status, summary, docs, cost model, interest) and the
/// config struct `Config` (serde, unknown keys rejected, missing keys defaulted) with its
/// `Default` and `OPTIONS`; this includes them in the detector's module, with its registry
/// `ENTRY` and its [`Declared`] impl, whose constructor is the struct expression given:
///
/// ```text
/// crate::detector!("fsync_storm", FsyncStorm { cfg, written: HashMap::default() });
/// ```
///
/// A hosted detector that holds nothing but its options says `struct`, and the struct is
/// declared too:
///
/// ```text
/// crate::detector!("yield_spin", struct YieldSpin);
/// ```
///
/// A detector is hosted ([`crate::host::Hosted`]) unless it says `unhosted` last, for the few
/// that implement [`Detector`] themselves:
///
/// ```text
/// crate::detector!("spawn_per_task", SpawnPerTask { cfg, ... }, unhosted);
/// ```
///
/// The name is the detector's module, checked at compile time, so that a detector copied from
/// another cannot keep the other's declaration.
#[macro_export]
macro_rules! detector {
    ($module:literal, struct $ty:ident $(,)?) => {
        /// The detector: its options; the analyzer keeps its state ([`crate::host`]).
        #[derive(Clone)]
        pub struct $ty {
            cfg: Config,
        }

        $crate::detector!(@declare $module, $ty { cfg }, $crate::host::hosted);
    };
    ($module:literal, $ty:ident { $cfg:ident $(, $field:ident: $value:expr)* $(,)? } $(,)?) => {
        $crate::detector!(@declare $module, $ty { $cfg $(, $field: $value)* }, $crate::host::hosted);
    };
    ($module:literal, $ty:ident { $cfg:ident $(, $field:ident: $value:expr)* $(,)? }, unhosted $(,)?) => {
        $crate::detector!(@declare $module, $ty { $cfg $(, $field: $value)* }, $crate::registry::entry);
    };
    (@declare $module:literal, $ty:ident { $cfg:ident $(, $field:ident: $value:expr)* }, $($entry:tt)+) => {
        const _: () = assert!(
            $crate::registry::is_module(module_path!(), $module),
            concat!("detector!(\"", $module, "\") outside the detector module ", $module)
        );
        include!(concat!(env!("OUT_DIR"), "/detectors/", $module, ".rs"));

        /// The detector's line in the registry.
        pub const ENTRY: $crate::registry::Entry = $($entry)+::<$ty>();

        impl $crate::registry::Declared for $ty {
            type Config = Config;
            const META: &'static $crate::registry::Meta = &META;
            fn new($cfg: Config) -> Self {
                $ty { $cfg $(, $field: $value)* }
            }
            fn config_mut(&mut self) -> &mut Config {
                &mut self.$cfg
            }
        }
    };
}

/// Whether `path` (a `module_path!()`) names the module `module`: for [`detector!`](crate::detector).
pub const fn is_module(path: &str, module: &str) -> bool {
    let (p, m) = (path.as_bytes(), module.as_bytes());
    if p.len() < m.len() + 2 {
        return false;
    }
    let at = p.len() - m.len();
    find_bytes(p, m, at) == at && p[at - 1] == b':' && p[at - 2] == b':'
}

/// Severity from a cost: ordinary programs that waste milliseconds get at most `info`.
/// `wasted_s` is the estimated time lost, `share` the fraction of the window it is.
pub fn severity_for(wasted_s: f64, share: f64, warn_s: f64, error_s: f64) -> Severity {
    if wasted_s >= error_s && share >= 0.2 {
        Severity::Error
    } else if wasted_s >= warn_s {
        Severity::Warning
    } else {
        Severity::Info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The code list in docs/detectors.md is the registry's, in its order: a detector added,
    /// renamed or renumbered without the docs fails here.
    #[test]
    fn the_docs_list_every_detector_with_its_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/detectors.md");
        let doc = std::fs::read_to_string(path).expect("docs/detectors.md");
        let list = doc.split("\nCodes: ").nth(1).and_then(|r| r.split("\n\n").next()).expect("a 'Codes:' paragraph");
        let listed: Vec<String> = list.split(',').map(|c| c.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        let listed: Vec<&str> = listed.iter().map(|c| c.trim_end_matches('.')).collect();
        let registered: Vec<String> = ENTRIES.iter().map(|e| format!("{} {}", e.meta.code, e.meta.name)).collect();
        assert_eq!(listed, registered, "docs/detectors.md 'Codes:' against the registry");
    }

    /// A counts rule is asked only of a table with what its declaration says it needs: the lab's
    /// recorded `strace -c` table of PHP without its realpath cache is a stat-storm finding; the
    /// same rows limited to a list of syscalls (`-e trace=`), or without their errors, are not.
    #[test]
    fn a_counts_rule_is_asked_only_of_a_table_it_can_read() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lab/stat-storm/counts/php-nocache.strace-c.txt");
        let text = std::fs::read_to_string(path).expect("the lab's table");
        let table = syslint_capture::tables::read(&text).expect("a table of counts");
        let stat = ENTRIES.iter().find(|e| e.meta.name == "stat-storm").expect("stat-storm");
        assert_eq!(stat.meta.levels.table, TableNeeds { every_syscall: true, errors: true });
        let d = (stat.make)(None).expect("defaults");
        assert_eq!(counts_rule(d.as_ref(), &table).len(), 1, "the whole table");
        let limited = syslint_report::Counts { only: vec!["newfstatat".into(), "openat".into()], ..table.clone() };
        assert!(counts_rule(d.as_ref(), &limited).is_empty(), "a table limited to a list");
        assert!(!d.on_counts(&limited).is_empty(), "the rule alone would have read it");
        let no_errors = syslint_report::Counts { errors_known: false, ..table };
        assert!(counts_rule(d.as_ref(), &no_errors).is_empty(), "a table without errors");
        let yield_spin = ENTRIES.iter().find(|e| e.meta.name == "yield-spin").expect("yield-spin");
        assert_eq!(yield_spin.meta.levels.table, TableNeeds { every_syscall: true, errors: false });
    }

    #[test]
    fn amounts_divide_by_a_windows_factor() {
        assert_eq!(Amount::over(256_u64, 3.3), 78);
        assert_eq!(Amount::over(1_u32, 100.0), 1, "an amount of one stays one");
        assert_eq!(Amount::over(0_u64, 5.0), 0, "no threshold stays none");
        assert_eq!(Amount::over(u64::MAX, 1.0), u64::MAX, "a factor of 1 changes nothing");
        assert_eq!(Amount::over(7_i32, f64::NAN), 7);
        assert!((Amount::over(0.1_f64, 4.0) - 0.025).abs() < 1e-12);
        let s = |seen_s, meant_s| Shortened { seen_s, meant_s }.factor();
        assert!((s(0.5, 2.0) - 4.0).abs() < 1e-12);
        assert_eq!(s(2.0, 2.0), 1.0);
        assert_eq!(s(0.0, 2.0), 1.0, "nothing seen: no rate");
        assert_eq!(s(3.0, 2.0), 1.0, "longer than meant (settling): not shrunk");
        assert_eq!(s(f64::NAN, 2.0), 1.0);
        // the generated stretch divides the amounts only: userspace-copy's warn_bytes, not
        // its min_bytes (a finding still needs its evidence) nor its share
        let mut c = crate::detectors::userspace_copy::Config::default();
        let before = c.clone();
        Stretch::stretch(&mut c, 4.0);
        assert_eq!(c.warn_bytes, before.warn_bytes / 4);
        assert_eq!(
            (c.min_bytes, c.min_copy_share, c.max_pending),
            (before.min_bytes, before.min_copy_share, before.max_pending)
        );
    }

    /// Every option marked as an amount is a severity threshold (`warn_*`, `error_*`): the
    /// ones that decide whether a finding is made at all are not stretched.
    #[test]
    fn only_severity_thresholds_are_amounts() {
        for e in ENTRIES {
            for o in e.meta.options.iter().filter(|o| o.amount) {
                assert!(o.name.starts_with("warn_") || o.name.starts_with("error_"), "{}: {}", e.meta.name, o.name);
                assert!(
                    !o.name.contains("share") && !o.name.contains("per_"),
                    "{}: {} is a ratio",
                    e.meta.name,
                    o.name
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "lack a section")]
    fn docs_without_a_section_are_refused() {
        // the same check fails the build for a detector's own file (the call is a constant)
        let _ =
            Docs::markdown("# x (SL000): y\n\n## What\n\na\n\n## Why\n\nb\n\n## Evidence\n\nc\n\n## Example\n\nd\n");
    }

    #[test]
    fn registry_is_consistent() {
        let mut codes = HashSet::new();
        let mut names = HashSet::new();
        for e in ENTRIES {
            let m = e.meta;
            assert!(codes.insert(m.code), "duplicate code {}", m.code);
            assert!(names.insert(m.name), "duplicate name {}", m.name);
            assert!(m.code.len() == 5 && m.code.starts_with("SL"), "bad code {}", m.code);
            assert!(m.name.bytes().all(|c| c.is_ascii_lowercase() || c == b'-'), "name {} not kebab-case", m.name);
            // scripts/new-detector.sh leaves TODO where only the author can say it
            assert!(!m.summary.contains("TODO"), "{}: the summary still says TODO", m.name);
            let lower = m.summary.chars().next().is_some_and(char::is_lowercase);
            assert!(
                !m.summary.ends_with('.') && lower,
                "{}: a summary starts lowercase, without a final period",
                m.name
            );
            // the docs beside the detector are its own: their title names it
            let md = format!("{}/src/detectors/{}.md", env!("CARGO_MANIFEST_DIR"), m.name.replace('-', "_"));
            let md = std::fs::read_to_string(&md).unwrap_or_else(|e| panic!("{md}: {e}"));
            assert_eq!(md.lines().next(), Some(format!("# {} ({}): {}", m.name, m.code, m.summary).as_str()));
            for (h, t) in [
                ("what", m.docs.what),
                ("why", m.docs.why),
                ("evidence", m.docs.evidence),
                ("cost model", m.cost.model),
                ("fix", m.docs.fix),
                ("example", m.docs.example),
            ] {
                assert!(t.trim().len() > 20, "{}: docs heading {h} is empty", m.name);
                assert!(!t.contains("TODO"), "{}: docs heading {h} still says TODO", m.name);
            }
            // documented options == config fields, and defaults build a detector
            let d = (e.defaults)();
            let keys: HashSet<&str> = d.as_table().map(|t| t.keys().map(String::as_str).collect()).unwrap_or_default();
            let documented: HashSet<&str> = m.options.iter().map(|o| o.name).collect();
            assert_eq!(keys, documented, "{}: options documented vs config fields", m.name);
            assert!((e.make)(Some(&d)).is_ok(), "{}: its own defaults do not load", m.name);
            assert!((e.make)(None).is_ok());
        }
    }

    #[test]
    fn unknown_names_are_errors() {
        let t = toml::Table::new();
        assert!(build(&["no-such-thing".into()], &[], &t).is_err());
        let mut bad = toml::Table::new();
        bad.insert("no-such-thing".into(), toml::Value::Table(Default::default()));
        assert!(build(&[], &[], &bad).is_err());
    }
}
