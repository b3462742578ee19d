//! Comparing two runs: which findings were fixed, which are new or persist, how each syscall
//! changed (per unit of work when the runs show one), and a one-line verdict.

use crate::{Finding, Report, Severity, Subject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `syslint diff --format json` prints: two runs compared (docs/json-schema.md, "diff").
/// Readers ignore fields they do not know: new optional fields may appear without a change of
/// `version`.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
#[schemars(title = "syslint diff")]
pub struct DiffReport {
    /// Layout version of the document, the one this schema describes (the report's version:
    /// the two are raised together).
    #[schemars(extend("const" = crate::SCHEMA_VERSION))]
    pub version: u32,
    /// Always `"diff"`, to tell it from an analysis report.
    #[schemars(extend("const" = "diff"))]
    pub kind: String,
    /// The first run (the one before the change).
    pub before: Side,
    /// The second run.
    pub after: Side,
    /// One line: `improved: ...`, `regressed: ...`, `unchanged: ...`, `inconclusive: ...`,
    /// the outcome and what it was decided from.
    pub verdict: String,
    /// The verdict as data (docs/json-schema.md, "diff verdicts").
    #[serde(default)]
    pub outcome: Outcome,
    /// `outcome == regressed`: slower or cheaper-serving less beyond noise, costlier per unit
    /// of work, or a new warning or error with nothing measured better. Info findings never
    /// make a regression on their own.
    pub regression: bool,
    /// The relative change below which the cost per unit of work (or a whole run's wall time
    /// and syscalls) counts as unchanged (0.1: 10%; twice that for runs under a second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// The same for the work done per second of a timed attach: at least `tolerance`, more
    /// where the runs' own time bins show their rate wandering more (three standard errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_tolerance: Option<f64>,
    /// A whole run (a command traced from start to end) on each side: its wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<Measure>,
    /// Syscalls per exchange on sockets (a request and its response), beside the cost per MiB:
    /// when the two disagree and the bytes per exchange moved more than the effect, the verdict
    /// is inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_exchange: Option<Measure>,
    /// The unit of work per-unit numbers are divided by, if the runs showed one.
    pub unit: Option<Unit>,
    /// Syscalls per unit of work (per run without a unit): the measured cost the verdict
    /// weighs. Counts, not durations, so that runs traced by different backends compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Measure>,
    /// Units of work per second, when both runs are timed windows of running programs (an
    /// attach): a server that serves more in the same time improved even if it makes more calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Measure>,
    /// Findings fixed, new and persisting, matched across the runs.
    pub findings: FindingChanges,
    /// Changed syscalls, biggest impact first; small changes folded away.
    pub syscalls: Vec<SyscallDelta>,
    /// Syscalls left out as noise (tiny absolute changes).
    pub folded: u64,
}

/// What `diff` concluded (issue 27): it holds in both directions (A -> B improved is B -> A
/// regressed), and says unchanged or inconclusive when that is the truth.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Measurably better (or a warning fixed with nothing measured worse).
    Improved,
    /// Measurably worse (or a new warning with nothing measured better).
    Regressed,
    /// Every measure within noise, no warning or error fixed or new.
    Unchanged,
    /// The measures disagree, or their unit of work moved more than the effect, or the runs
    /// are not alike (an attach against a whole run).
    #[default]
    Inconclusive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Improved => "improved",
            Outcome::Regressed => "regressed",
            Outcome::Unchanged => "unchanged",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

/// One of the two runs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Side {
    /// The inputs of this run (logs, recordings or saved JSON reports).
    pub sources: Vec<String>,
    /// Syscalls in the run.
    pub syscalls: u64,
    /// The traced window's length in seconds; null without timestamps.
    pub window_s: Option<f64>,
    /// Processes seen.
    pub processes: u64,
    /// Findings of the run (every severity).
    pub findings: u64,
}

/// The unit of work per-unit numbers are divided by, and how much of it each run did.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Unit {
    /// `MiB on sockets`, `second of trace`, `accepted connection`, ...
    pub name: String,
    /// Units of work in the first run.
    pub before: f64,
    /// Units of work in the second run.
    pub after: f64,
}

/// One measured quantity in both runs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct Measure {
    /// `syscalls per accepted connection`, `MiB on sockets per second`, ...
    pub name: String,
    /// Its value in the first run.
    pub before: f64,
    /// Its value in the second run.
    pub after: f64,
}

/// The findings of the two runs, matched on detector and what they are about (all the findings
/// of one detector about one program are one: a pool of workers, files whose names change).
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq, Default)]
pub struct FindingChanges {
    /// In the first run only.
    pub fixed: Vec<FindingDelta>,
    /// In the second run only.
    pub new: Vec<FindingDelta>,
    /// In both (matched on detector and subject).
    pub persisting: Vec<FindingDelta>,
}

/// One finding (or group of findings matched together) in either run.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct FindingDelta {
    /// Kebab-case detector name, e.g. `busy-poll`.
    pub detector: String,
    /// Stable code, e.g. `SL001`.
    #[schemars(pattern(r"^SL[0-9]{3}$"))]
    pub code: String,
    /// The subject with process ids taken out (they differ between runs).
    pub subject: String,
    /// What the finding is about, as data (the key it was matched on), when the reports have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<Subject>,
    /// The findings in the first run; null for a new finding.
    pub before: Option<FindingSide>,
    /// The findings in the second run; null for a fixed finding.
    pub after: Option<FindingSide>,
    /// More severe after than before.
    pub worse: bool,
    /// Where its calls are made (the owner frame of its top call site: `wait_for_reply
    /// (spin)`), when its run had stacks. Findings whose runs both have call sites are matched
    /// on them too: the same problem at another site is a new finding, and the old one fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_site: Option<String>,
}

/// The findings matched together in one run.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct FindingSide {
    /// The highest severity among the findings matched together.
    pub severity: Severity,
    /// The message of the most severe of them.
    pub message: String,
    /// The metrics of the most severe of them (`syslint explain NAME` documents them).
    pub metrics: BTreeMap<String, serde_json::Value>,
    /// The share of its run's traced time the findings' fix would save (summed over the
    /// findings matched together), when their cost is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// How many findings of this run were matched together (a pool of workers, one program's
    /// files); absent when one.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u64,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// One syscall in both runs.
#[derive(Serialize, Deserialize, JsonSchema, Debug, Clone, PartialEq)]
pub struct SyscallDelta {
    /// The syscall.
    pub name: String,
    /// Calls in the first run.
    pub calls_before: u64,
    /// Calls in the second run.
    pub calls_after: u64,
    /// Failed calls in the first run.
    pub errors_before: u64,
    /// Failed calls in the second run.
    pub errors_after: u64,
    /// Seconds inside it in the first run (timed calls only).
    pub total_s_before: f64,
    /// Seconds inside it in the second run (timed calls only).
    pub total_s_after: f64,
    /// Calls per unit of work in the first run; null without a unit.
    pub per_unit_before: Option<f64>,
    /// Calls per unit of work in the second run; null without a unit.
    pub per_unit_after: Option<f64>,
}

/// What findings are matched on across runs (besides their detector). Findings about one
/// program are one subject whatever their thread, worker or file (a pool of four workers is one
/// problem, not four; a temporary file's name changes between runs); findings about no program
/// are matched on what they name (an endpoint, a listener, a DNS name).
#[derive(PartialEq, Clone, Debug)]
enum Key {
    Program(String),
    Named(crate::SubjectKind, Option<String>),
    Text(String),
}

fn key_of(a: &Subject) -> Key {
    match (&a.program, a.kind) {
        // one program's endpoints: its connections out, the ones it accepted, the ones it
        // handed on are three subjects (a server thread and its client in one trace are two)
        (Some(p), crate::SubjectKind::Endpoint) => {
            let n = a.name.as_deref().unwrap_or("");
            let role = if n.ends_with("(accepted, handed over)") {
                " handing over"
            } else if n.ends_with("(accepted)") {
                " accepting"
            } else {
                " connecting"
            };
            Key::Program(format!("{p}{role}"))
        }
        (Some(p), _) => Key::Program(p.clone()),
        // files of an unnamed program: their names change between runs
        (None, crate::SubjectKind::File | crate::SubjectKind::Thread | crate::SubjectKind::Program) => {
            Key::Named(a.kind, None)
        }
        (None, k) => Key::Named(k, a.name.clone()),
    }
}

/// `pid 1234 (php)` -> `pid * (php)`, `(pids 12, 13)` -> `(pids *)`: process ids differ
/// between runs. Also drops the random part of mktemp names (`/tmp/x.1rNiMh/`).
pub fn stable_subject(s: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut in_ids = false;
    for w in s.split(' ') {
        let core = w.trim_end_matches([',', ')']);
        let id = !core.is_empty() && core.bytes().all(|c| c.is_ascii_digit());
        if id && in_ids {
            let tail = &w[core.len()..];
            // a list of ids becomes one star
            if out.last().is_some_and(|l| l.starts_with('*')) {
                out.pop();
                out.push(format!("*{tail}"));
            } else {
                out.push(format!("*{tail}"));
            }
            in_ids = tail.is_empty() || tail == ",";
            continue;
        }
        in_ids = matches!(w, "pid" | "pids" | "thread" | "threads" | "(pid" | "(pids");
        out.push(w.to_string());
    }
    out.join(" ")
}

fn side_of(group: &[&Finding]) -> FindingSide {
    // the most severe, the first of those
    let top = group.iter().copied().fold(group[0], |m, f| if f.severity > m.severity { f } else { m });
    let shares: Option<Vec<f64>> = group.iter().map(|f| f.impact.as_ref().and_then(|i| i.share)).collect();
    FindingSide {
        severity: top.severity,
        message: top.message.clone(),
        metrics: top.metrics.clone(),
        share: shares.map(|v| v.iter().sum()),
        count: group.len() as u64,
    }
}

/// The subject of a group of findings in words: the first one's, and how many more.
fn subject_of(group: &[&Finding]) -> String {
    let s = stable_subject(&group[0].subject);
    match group.len() {
        1 => s,
        n => format!("{s} and {} more", n - 1),
    }
}

/// A timed window of running programs (an attach), not a run from start to end: a process
/// the trace does not show starting (no parent in it) is still running when it ends.
pub fn open_ended(r: &Report) -> bool {
    // a root: no parent, or one the trace does not list (an attach that knows the parent from
    // /proc: nginx's master of the workers attached)
    let listed: std::collections::HashSet<u32> = r.summary.processes.iter().map(|p| p.pid).collect();
    let roots: Vec<&crate::ProcessStats> =
        r.summary.processes.iter().filter(|p| p.parent.is_none_or(|pp| !listed.contains(&pp))).collect();
    !roots.is_empty() && roots.iter().all(|p| p.end.is_none())
}

/// The unit of work both runs show, with its counts. A timed attach divides by the traffic
/// on sockets (what a server exchanged with its clients: about its requests served, when they
/// are alike), else by its seconds; connections accepted during a window say nothing when
/// they are kept alive. A whole run divides by its connections or bytes.
fn unit_of(b: &Report, a: &Report) -> Option<Unit> {
    if open_ended(b) && open_ended(a) {
        let sock = |r: &Report| r.summary.socket_bytes.unwrap_or(0) as f64 / 1048576.0;
        let secs = |r: &Report| r.capture.window.map_or(0.0, |w| w.duration_s);
        for (name, f) in [("MiB on sockets", &sock as &dyn Fn(&Report) -> f64), ("second of trace", &secs)] {
            let (x, y) = (f(b), f(a));
            if x > 0.0 && y > 0.0 {
                return Some(Unit { name: name.into(), before: x, after: y });
            }
        }
        return None;
    }
    // a whole run (or a log of one) over the same input is its own unit: its totals compare.
    // Connections or bytes would be units the change itself can move (a kept connection is
    // fewer "connections", an rsync that skips unchanged files moves fewer bytes)
    None
}

/// Syscalls per unit of work (or per run), and for timed windows units of work per second.
fn measures(b: &Report, a: &Report, unit: Option<&Unit>) -> (Option<Measure>, Option<Measure>) {
    let calls = |r: &Report| r.capture.syscalls as f64;
    let cost = match unit {
        Some(u) => {
            Measure { name: format!("syscalls per {}", u.name), before: calls(b) / u.before, after: calls(a) / u.after }
        }
        None => Measure { name: "syscalls".into(), before: calls(b), after: calls(a) },
    };
    let cost = (cost.before > 0.0 || cost.after > 0.0).then_some(cost);
    let secs = |r: &Report| r.capture.window.map_or(0.0, |w| w.duration_s);
    let throughput = unit.filter(|u| u.name != "second of trace" && open_ended(b) && open_ended(a)).and_then(|u| {
        (secs(b) > 0.0 && secs(a) > 0.0).then(|| Measure {
            name: format!("{} per second", u.name),
            before: u.before / secs(b),
            after: u.after / secs(a),
        })
    });
    (cost, throughput)
}

/// How much a severity weighs in the verdict: an info finding nothing.
fn weight(s: Severity) -> u32 {
    match s {
        Severity::Info => 0,
        Severity::Warning => 1,
        Severity::Error => 3,
    }
}

/// Findings grouped by detector and key, in order of first appearance.
fn groups<'r>(r: &'r Report, key: &dyn Fn(&Finding) -> Key) -> Vec<((String, Key), Vec<&'r Finding>)> {
    let mut out: Vec<((String, Key), Vec<&Finding>)> = Vec::new();
    for f in &r.findings {
        let k = (f.detector.clone(), key(f));
        match out.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(f),
            None => out.push((k, vec![f])),
        }
    }
    out
}

/// A group's change; `first` is its first finding (on the earlier side that has it).
fn delta(first: &Finding, before: Option<&[&Finding]>, after: Option<&[&Finding]>) -> FindingDelta {
    let lone = [first];
    let (b, a) = (before.map(side_of), after.map(side_of));
    let worse = match (&b, &a) {
        (Some(b), Some(a)) => a.severity > b.severity,
        (None, Some(_)) => true,
        _ => false,
    };
    FindingDelta {
        detector: first.detector.clone(),
        code: first.code.clone(),
        // in words: the larger group's (four workers after one), the earlier on a tie
        subject: subject_of(match (before, after) {
            (Some(b), Some(a)) if a.len() > b.len() => a,
            (Some(b), _) => b,
            (None, Some(a)) => a,
            (None, None) => &lone,
        }),
        about: first.about.clone(),
        before: b,
        after: a,
        worse,
        call_site: after
            .or(before)
            .and_then(|g| g.iter().find_map(|f| f.call_sites.first()?.lead()))
            .map(crate::StackFrame::describe),
    }
}

/// Where a group's calls are made, as diff compares it across runs: the owner frames
/// (symbol and module file name, not addresses, which move between builds) of call sites
/// accounting for at least a tenth of a finding's calls. Empty without stacks, or when no
/// such frame has a symbol.
fn sites_of(group: &[&Finding]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = group
        .iter()
        .flat_map(|f| &f.call_sites)
        .filter(|s| s.share >= 0.1)
        .filter_map(|s| {
            let l = s.lead()?;
            let m = l.module.as_deref().map(|m| m.rsplit('/').next().unwrap_or(m).to_string()).unwrap_or_default();
            Some((l.symbol.clone()?, m))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether two matched groups are the same problem at different places: both runs name
/// where their calls are made, and no place is in both (a spin moved to another function).
fn moved(before: &[&Finding], after: &[&Finding]) -> bool {
    let (b, a) = (sites_of(before), sites_of(after));
    !b.is_empty() && !a.is_empty() && !b.iter().any(|s| a.contains(s))
}

/// Compare two reports.
pub fn diff(before: &Report, after: &Report) -> DiffReport {
    // findings: grouped and matched by detector and what they are about (pids left out);
    // reports written before `about` existed are matched by their subject text without pids
    let structured = before.findings.iter().chain(&after.findings).all(|f| f.about.is_some());
    let key = |f: &Finding| match (&f.about, structured) {
        (Some(a), true) => key_of(a),
        _ => Key::Text(stable_subject(&f.subject)),
    };
    let (gb, ga) = (groups(before, &key), groups(after, &key));
    let mut changes = FindingChanges::default();
    let mut after_left: Vec<&((String, Key), Vec<&Finding>)> = ga.iter().collect();
    for (k, g) in &gb {
        let pos = after_left.iter().position(|(h, _)| h == k).or_else(|| {
            // one of a kind on each side: the same problem, even if its subject moved
            let same: Vec<usize> =
                after_left.iter().enumerate().filter(|(_, (h, _))| h.0 == k.0).map(|(i, _)| i).collect();
            let before_same = gb.iter().filter(|(h, _)| h.0 == k.0).count();
            (same.len() == 1 && before_same == 1).then(|| same[0])
        });
        match pos {
            Some(i) if moved(g, &after_left[i].1) => {
                // the same problem at another call site: fixed here, new there
                let (_, h) = after_left.remove(i);
                changes.fixed.push(delta(g[0], Some(g), None));
                changes.new.push(delta(h[0], None, Some(h)));
            }
            Some(i) => {
                let (_, h) = after_left.remove(i);
                changes.persisting.push(delta(g[0], Some(g), Some(h)));
            }
            None => changes.fixed.push(delta(g[0], Some(g), None)),
        }
    }
    for (_, h) in after_left {
        changes.new.push(delta(h[0], None, Some(h)));
    }

    // syscalls
    let unit = unit_of(before, after);
    let mut names: Vec<&str> = before.summary.syscalls.iter().map(|s| s.name.as_str()).collect();
    for s in &after.summary.syscalls {
        if !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    let find = |r: &Report, n: &str| r.summary.syscalls.iter().find(|s| s.name == n).cloned().unwrap_or_default();
    let mut rows = Vec::new();
    let mut folded = 0;
    for n in names {
        let (b, a) = (find(before, n), find(after, n));
        let d = SyscallDelta {
            name: n.to_string(),
            calls_before: b.calls,
            calls_after: a.calls,
            errors_before: b.errors,
            errors_after: a.errors,
            total_s_before: b.total_s,
            total_s_after: a.total_s,
            per_unit_before: unit.as_ref().map(|u| b.calls as f64 / u.before),
            per_unit_after: unit.as_ref().map(|u| a.calls as f64 / u.after),
        };
        if is_noise(&d) {
            folded += 1;
        } else {
            rows.push(d);
        }
    }
    rows.sort_by(|x, y| {
        impact(y).partial_cmp(&impact(x)).unwrap_or(std::cmp::Ordering::Equal).then(x.name.cmp(&y.name))
    });

    let runs = match (open_ended(before), open_ended(after)) {
        (true, true) => Runs::Attach,
        (false, false) => Runs::Whole,
        _ => Runs::Mixed,
    };
    let (cost, throughput) = measures(before, after, unit.as_ref());
    let secs = |r: &Report| r.capture.window.map_or(0.0, |w| w.duration_s);
    let wall_s = (runs == Runs::Whole && secs(before) > 0.0 && secs(after) > 0.0).then(|| Measure {
        name: "wall seconds".into(),
        before: secs(before),
        after: secs(after),
    });
    // per exchange on sockets, beside per MiB (attaches only)
    let exch = |r: &Report| r.summary.exchanges.unwrap_or(0) as f64;
    let sockb = |r: &Report| r.summary.socket_bytes.unwrap_or(0) as f64;
    let (per_exchange, bytes_per_exchange) = if runs == Runs::Attach
        && exch(before) > 0.0
        && exch(after) > 0.0
        && unit.as_ref().is_some_and(|u| u.name == "MiB on sockets")
    {
        (
            Some(Measure {
                name: "syscalls per exchange".into(),
                before: before.capture.syscalls as f64 / exch(before),
                after: after.capture.syscalls as f64 / exch(after),
            }),
            Some((sockb(before) / exch(before), sockb(after) / exch(after))),
        )
    } else {
        (None, None)
    };
    let (tol, tp_tol) = tolerances(before, after, runs);
    let measured = Measured {
        runs,
        cost: cost.as_ref(),
        throughput: throughput.as_ref(),
        wall: wall_s.as_ref(),
        per_exchange: per_exchange.as_ref(),
        bytes_per_exchange,
        tolerance: tol,
        throughput_tolerance: tp_tol,
    };
    let judged = judge(&changes, &measured);
    let outcome = judged.0;
    let regression = outcome == Outcome::Regressed;
    let verdict = verdict(&changes, &rows, unit.as_ref(), &measured, judged);
    let side = |r: &Report| Side {
        sources: r.capture.sources.clone(),
        syscalls: r.capture.syscalls,
        window_s: r.capture.window.map(|w| w.duration_s),
        processes: r.capture.processes,
        findings: r.findings.len() as u64,
    };
    DiffReport {
        version: crate::SCHEMA_VERSION,
        kind: "diff".into(),
        before: side(before),
        after: side(after),
        verdict,
        outcome,
        regression,
        tolerance: Some(tol),
        throughput_tolerance: (runs == Runs::Attach).then_some(tp_tol),
        wall_s,
        per_exchange,
        unit,
        cost,
        throughput,
        findings: changes,
        syscalls: rows,
        folded,
    }
}

/// Tiny absolute changes are noise: fewer than 10 calls and under a millisecond either way,
/// or within 5% of the larger side.
fn is_noise(d: &SyscallDelta) -> bool {
    let dc = (d.calls_after as f64 - d.calls_before as f64).abs();
    let dt = (d.total_s_after - d.total_s_before).abs();
    let big = d.calls_after.max(d.calls_before) as f64;
    let per_unit_change = match (d.per_unit_before, d.per_unit_after) {
        (Some(b), Some(a)) if b.max(a) > 0.0 => (a - b).abs() / b.max(a),
        _ => dc / big.max(1.0),
    };
    dt < 1e-3 && (dc < 10.0 || per_unit_change < 0.05)
}

fn impact(d: &SyscallDelta) -> f64 {
    let dt = (d.total_s_after - d.total_s_before).abs();
    let dc = (d.calls_after as f64 - d.calls_before as f64).abs();
    dt * 1e6 + dc
}

fn pct(b: f64, a: f64) -> String {
    if b == 0.0 {
        return "new".into();
    }
    let p = (a - b) / b * 100.0;
    format!("{}{:.0}%", if p >= 0.0 { "+" } else { "" }, p)
}

/// The weight of a finding's severity before and after (0 for a side without it).
fn weights(d: &FindingDelta) -> (u32, u32) {
    let w = |s: &Option<FindingSide>| s.as_ref().map_or(0, |s| weight(s.severity));
    (w(&d.before), w(&d.after))
}

/// A measured change counts from 10% either way (as a ratio: 1.1x more or 1.1x less), or
/// more where the runs' own time bins show more noise ([`tolerance`]).
const BETTER: f64 = -0.10;
const TOLERANCE: f64 = 0.10;
/// Whole runs shorter than this (either side) are judged with twice the tolerance: a short
/// command's wall time moves with everything else on the machine.
const SHORT_RUN_S: f64 = 1.0;

/// What the two runs are: timed windows of running programs, whole runs of a command, or one
/// of each (which do not compare).
#[derive(Copy, Clone, PartialEq, Debug)]
enum Runs {
    Attach,
    Whole,
    Mixed,
}

/// How much a run's rate of calls wanders within itself: its timeline's bins (less the partial
/// first and last) in 8 batches, since neighbouring bins are not independent; the batches'
/// spread as a share of their mean, over the square root of their number: the relative
/// standard error of the run's rate.
fn rate_noise(r: &Report) -> Option<f64> {
    const K: usize = 8;
    let t = r.timeline.as_ref()?;
    let n = t.bins as usize;
    if n < K + 2 {
        return None;
    }
    let mut tot = vec![0f64; n];
    for l in &t.lanes {
        for (i, c) in l.calls.iter().enumerate().take(n) {
            tot[i] += f64::from(*c);
        }
    }
    let inner = &tot[1..n - 1];
    let per = inner.len() / K;
    let batches: Vec<f64> = (0..K).map(|k| inner[k * per..(k + 1) * per].iter().sum::<f64>()).collect();
    let mean = batches.iter().sum::<f64>() / K as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = batches.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / (K - 1) as f64;
    Some(var.sqrt() / mean / (K as f64).sqrt())
}

/// The relative change a measure must make to count: [`TOLERANCE`], twice that for a short
/// whole run; for the work per second of an attach, three standard errors of the two runs'
/// rates where their bins are noisier (the load's own bursts).
fn tolerances(b: &Report, a: &Report, runs: Runs) -> (f64, f64) {
    let secs = |r: &Report| r.capture.window.map_or(0.0, |w| w.duration_s);
    let base = if runs == Runs::Whole && secs(b).min(secs(a)) < SHORT_RUN_S { 2.0 * TOLERANCE } else { TOLERANCE };
    let noise = match (rate_noise(b), rate_noise(a)) {
        (Some(x), Some(y)) if runs == Runs::Attach => (x * x + y * y).sqrt(),
        _ => 0.0,
    };
    (base, base.max(3.0 * noise))
}

/// ln(after / before), when both are positive: a change and its reverse are the same size.
fn log_change(m: &Measure) -> Option<f64> {
    (m.before > 0.0 && m.after > 0.0).then(|| (m.after / m.before).ln())
}

/// What was measured, for the verdict.
struct Measured<'m> {
    runs: Runs,
    cost: Option<&'m Measure>,
    throughput: Option<&'m Measure>,
    wall: Option<&'m Measure>,
    per_exchange: Option<&'m Measure>,
    /// Bytes per exchange before and after.
    bytes_per_exchange: Option<(f64, f64)>,
    tolerance: f64,
    throughput_tolerance: f64,
}

/// The verdict: measured worse is a regression (a server serving less in the same time under
/// the same load, more calls per unit of work, a command that takes longer); measured better
/// is an improvement unless a new warning costs more than what was fixed; with the measures
/// within tolerance the findings decide (weighed by severity: info weighs nothing). The second
/// value is why an inconclusive verdict is one.
fn judge(c: &FindingChanges, m: &Measured) -> (Outcome, Option<String>) {
    let all = || c.fixed.iter().chain(&c.new).chain(&c.persisting);
    let f_worse = all().any(|d| {
        let (b, a) = weights(d);
        a > b
    });
    let f_better = all().any(|d| {
        let (b, a) = weights(d);
        a < b
    });
    let lt = (1.0 + m.tolerance).ln();
    let (better, worse) = match m.runs {
        Runs::Mixed => {
            return (
                Outcome::Inconclusive,
                Some("one run is a timed attach to running programs, the other a whole command: their totals do not compare (record both the same way)".into()),
            )
        }
        Runs::Whole => {
            // the command's wall time decides; its syscalls when the time did not move
            let w = m.wall.and_then(log_change).filter(|w| w.abs() >= lt);
            let k = m.cost.and_then(log_change).filter(|k| k.abs() >= lt);
            match (w, k) {
                (Some(w), _) => (w < 0.0, w > 0.0),
                (None, Some(k)) => (k < 0.0, k > 0.0),
                (None, None) => (false, false),
            }
        }
        Runs::Attach => {
            let k = m.cost.and_then(log_change);
            let t = m.throughput.and_then(log_change);
            let tt = (1.0 + m.throughput_tolerance).ln();
            // each measure's vote, beyond its tolerance: positive is better
            let kv = k.filter(|k| k.abs() >= lt).map_or(0.0, |k| -k);
            let tv = t.filter(|t| t.abs() >= tt).map_or(0.0, |t| t);
            let (better, worse) = if kv * tv >= 0.0 {
                // agreeing, or one of them within tolerance
                (kv + tv > 0.0, kv + tv < 0.0)
            } else if tv.abs() > 2.0 * kv.abs() {
                // serving far more (or far less) per second at a somewhat higher (lower) cost
                // per unit: the work per second decides (WEBrick without its 42 ms Nagle stall
                // per keep-alive response served 38 times the requests, at 41% more calls per
                // MiB for a new connection each)
                (tv > 0.0, tv < 0.0)
            } else if kv.abs() > 2.0 * tv.abs() {
                (kv > 0.0, kv < 0.0)
            } else {
                // more served at a higher cost per unit (a closed-loop load generator that got
                // more of a shared CPU?), or less at a lower one: neither decides
                let (c, w) = (m.cost.map(|c| pct(c.before, c.after)), m.throughput.map(|w| pct(w.before, w.after)));
                return (
                    Outcome::Inconclusive,
                    Some(format!(
                        "the work per second moved {} and the syscalls per unit of work {}: neither outweighs the other",
                        w.unwrap_or_default(),
                        c.unwrap_or_default()
                    )),
                );
            };
            // the unit of work moved more than the effect, and the other unit disagrees
            if let (Some(k), Some(x), Some((b0, b1))) = (k, m.per_exchange.and_then(log_change), m.bytes_per_exchange) {
                let unit_moved = (b1 / b0).ln().abs();
                if k.abs() >= lt && x.abs() >= lt && x.signum() != k.signum() && unit_moved > k.abs() {
                    let pe = m.per_exchange.map(|p| pct(p.before, p.after)).unwrap_or_default();
                    let pm = m.cost.map(|p| pct(p.before, p.after)).unwrap_or_default();
                    return (
                        Outcome::Inconclusive,
                        Some(format!(
                            "syscalls per MiB {pm} but per exchange {pe}: the bytes per exchange moved {} -> {}, more than the effect, so neither is a fair unit of work (give the same requests to both runs)",
                            fmt_num(b0),
                            fmt_num(b1)
                        )),
                    );
                }
            }
            (better, worse)
        }
    };
    if worse {
        return (Outcome::Regressed, None);
    }
    if better {
        // a new warning that costs more than what was fixed: not an improvement
        let share = |d: &FindingDelta, after: bool| {
            let s = if after { &d.after } else { &d.before };
            s.as_ref().filter(|s| weight(s.severity) > 0).map(|s| s.share)
        };
        let grown: Vec<&FindingDelta> = all().filter(|d| weights(d).1 > weights(d).0).collect();
        let shrunk: Vec<&FindingDelta> = all().filter(|d| weights(d).1 < weights(d).0).collect();
        let added: Option<f64> = grown.iter().filter_map(|d| share(d, true)).sum();
        let removed: Option<f64> = shrunk.iter().filter_map(|d| share(d, false)).sum();
        if let (Some(x), Some(y)) = (added, removed) {
            if !grown.is_empty() && x > y {
                let names: Vec<&str> = grown.iter().map(|d| d.detector.as_str()).collect();
                return (
                    Outcome::Inconclusive,
                    Some(format!(
                        "measured better, but the new {} would cost {} of the traced time, more than the {} fixed",
                        names.join(", "),
                        crate::printers::fmt_share(x),
                        crate::printers::fmt_share(y)
                    )),
                );
            }
        }
        return (Outcome::Improved, None);
    }
    match (f_worse, f_better) {
        (true, false) => (Outcome::Regressed, None),
        (false, true) => (Outcome::Improved, None),
        (true, true) => {
            (Outcome::Inconclusive, Some("a warning fixed and another new, with every measure within tolerance".into()))
        }
        (false, false) => (Outcome::Unchanged, None),
    }
}

fn verdict(
    c: &FindingChanges,
    rows: &[SyscallDelta],
    unit: Option<&Unit>,
    m: &Measured,
    judged: (Outcome, Option<String>),
) -> String {
    let mut parts = Vec::new();
    if let Some(why) = judged.1 {
        parts.push(why);
    }
    for n in &c.new {
        let sev = n.after.as_ref().map_or("", |s| s.severity.as_str());
        parts.push(format!("new {sev}: {}", n.detector));
    }
    for p in c.persisting.iter().filter(|p| p.worse) {
        parts.push(format!("{} got worse", p.detector));
    }
    for f in &c.fixed {
        let was = f.before.as_ref().map(|s| s.message.clone()).unwrap_or_default();
        parts.push(format!("{} fixed (was: {was})", f.detector));
    }
    // what was measured: the wall time, the cost per unit of work, the work per second
    let lt = (1.0 + m.tolerance).ln();
    let tt = (1.0 + m.throughput_tolerance).ln();
    for (x, l) in [(m.wall, lt), (m.throughput, tt), (m.cost, lt)] {
        let Some(x) = x else { continue };
        if log_change(x).is_some_and(|c| c.abs() >= l) || (x.before == 0.0) != (x.after == 0.0) {
            parts.push(format!(
                "{} {} -> {} ({})",
                x.name,
                fmt_num(x.before),
                fmt_num(x.after),
                pct(x.before, x.after)
            ));
        }
    }
    // the biggest syscall change (of at least 10% per unit), per unit when there is one
    let moved = |d: &&SyscallDelta| match (d.per_unit_before, d.per_unit_after) {
        (Some(b), Some(a)) => b == 0.0 || ((a - b) / b).abs() >= -BETTER,
        _ => d.calls_before == 0 || (d.calls_after as f64 / d.calls_before as f64 - 1.0).abs() >= -BETTER,
    };
    if judged.0 != Outcome::Unchanged {
        if let Some(top) = rows.iter().find(moved) {
            let (x, y, per) = match (unit, top.per_unit_before, top.per_unit_after) {
                (Some(u), Some(pb), Some(pa)) => (pb, pa, format!(" per {}", u.name)),
                _ => (top.calls_before as f64, top.calls_after as f64, String::new()),
            };
            parts.push(format!("{} {}{per} -> {} ({})", top.name, fmt_num(x), fmt_num(y), pct(x, y)));
        }
    }
    if judged.0 == Outcome::Unchanged {
        let what = match m.runs {
            Runs::Whole => "wall time and syscalls",
            _ => "cost per unit of work and work per second",
        };
        parts.insert(0, format!("{what} within {:.0}%", m.tolerance * 100.0));
    }
    if judged.0 != Outcome::Regressed && !c.persisting.is_empty() {
        let n = c.persisting.len();
        parts.push(format!("{n} finding{} persist", if n == 1 { "" } else { "s" }));
    }
    format!("{}: {}", judged.0.as_str(), parts.join("; "))
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        crate::printers::fmt_count(v.round() as u64)
    } else if v >= 1.0 || v == 0.0 {
        format!("{v:.1}")
    } else {
        // three significant digits: 0.0431, not 0.0 (0.8, not 0.800)
        crate::printers::sig3(v).trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pids_leave_subjects() {
        assert_eq!(stable_subject("pid 1234 (php)"), "pid * (php)");
        assert_eq!(stable_subject("thread 1240 of pid 1234 (python3)"), "thread * of pid * (python3)");
        assert_eq!(stable_subject("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(stable_subject("2 processes of records (pids 14122, 14123)"), "2 processes of records (pids *)");
        assert_eq!(stable_subject("3 workers (pids 1, 2, 3) on x"), "3 workers (pids *) on x");
        assert_eq!(stable_subject("/usr/lib/php/20220829/x.so"), "/usr/lib/php/20220829/x.so");
    }

    fn finding(detector: &str, subject: &str, about: Option<Subject>) -> Finding {
        Finding {
            detector: detector.into(),
            code: "SL008".into(),
            severity: Severity::Warning,
            message: "m".into(),
            subject: subject.into(),
            about,
            window: None,
            metrics: BTreeMap::new(),
            evidence: vec![],
            cost: None,
            impact: None,
            fix: String::new(),
            fix_for: None,
            fix_elsewhere: None,
            confidence: None,
            confidence_reason: None,
            confirm: None,
            call_sites: vec![],
            calls: vec![],
            stacks_command: None,
            baselined: false,
            advice: None,
        }
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            version: crate::SCHEMA_VERSION,
            tool: Default::default(),
            capture: Default::default(),
            summary: Default::default(),
            findings,
            timeline: None,
            baseline: None,
        }
    }

    fn program(p: &str) -> Option<Subject> {
        Some(Subject::new(crate::SubjectKind::Program).program(Some(p)))
    }

    #[test]
    fn findings_match_on_what_they_are_about_not_on_their_words() {
        // four workers before, one after: the subject text differs, the program does not
        let before = report(vec![
            finding("fsync-storm", "4 processes of postgres (pids 1, 2, 3, 4)", program("postgres")),
            finding("fsync-storm", "pid 9 (dpkg)", program("dpkg")),
        ]);
        let after = report(vec![finding("fsync-storm", "pid 77 (postgres)", program("postgres"))]);
        let d = diff(&before, &after);
        assert_eq!(d.findings.persisting.len(), 1, "{:?}", d.findings);
        assert_eq!(d.findings.persisting[0].about, program("postgres"));
        assert_eq!(d.findings.fixed.len(), 1);
        assert_eq!(d.findings.fixed[0].about, program("dpkg"));
        assert!(d.findings.new.is_empty());

        // a report without `about` (written by an older syslint): matched on the text
        let old = report(vec![
            finding("fsync-storm", "4 processes of postgres (pids 1, 2, 3, 4)", None),
            finding("fsync-storm", "pid 9 (dpkg)", None),
        ]);
        let d = diff(&old, &after);
        assert!(d.findings.persisting.is_empty(), "{:?}", d.findings);
        assert_eq!((d.findings.fixed.len(), d.findings.new.len()), (2, 1));
    }

    fn sev(mut f: Finding, s: Severity) -> Finding {
        f.severity = s;
        f
    }

    /// A timed attach: processes without a parent in the trace, still running at its end.
    fn attach(findings: Vec<Finding>, syscalls: u64, secs: f64, socket_mib: f64) -> Report {
        let mut r = report(findings);
        r.capture.syscalls = syscalls;
        r.capture.window = Some(crate::Window { start_s: 0.0, end_s: secs, duration_s: secs });
        r.summary.processes = vec![crate::ProcessStats { pid: 7, comm: Some("srv".into()), ..Default::default() }];
        r.summary.socket_bytes = Some((socket_mib * 1048576.0) as u64);
        r.summary.syscalls = vec![crate::SyscallStats { name: "write".into(), calls: syscalls, ..Default::default() }];
        r
    }

    #[test]
    fn an_info_finding_alone_never_makes_a_regression() {
        let before = attach(vec![], 10_000, 5.0, 10.0);
        let after =
            attach(vec![sev(finding("small-io", "pid 7 (srv)", program("srv")), Severity::Info)], 10_000, 5.0, 10.0);
        let d = diff(&before, &after);
        assert!(!d.regression, "{}", d.verdict);
        assert_eq!(d.outcome, Outcome::Unchanged, "{}", d.verdict);
        assert!(
            d.verdict
                .starts_with("unchanged: cost per unit of work and work per second within 10%; new info: small-io"),
            "{}",
            d.verdict
        );
        // the same finding as a warning, with nothing measured better, is one
        let after = attach(vec![finding("small-io", "pid 7 (srv)", program("srv"))], 10_000, 5.0, 10.0);
        let d = diff(&before, &after);
        assert!(d.regression && d.verdict.starts_with("regressed: new warning: small-io"), "{}", d.verdict);
    }

    #[test]
    fn findings_of_one_program_are_one_subject_whatever_the_workers_or_files() {
        // one worker before, four after (gunicorn 1 -> 4 workers); temporary files renamed
        let f = |s: &str, file: &str| {
            let mut f = finding("small-io", s, program("gunicorn"));
            f.about = Some(Subject::new(crate::SubjectKind::File).program(Some("gunicorn")).name(file));
            f
        };
        let before = attach(vec![f("pid 1 (gunicorn) on /tmp/wgunicorn-a1", "/tmp/wgunicorn-a1")], 10_000, 5.0, 10.0);
        let after = attach(
            (0..4)
                .map(|i| f(&format!("pid {i} (gunicorn) on /tmp/wgunicorn-b{i}"), &format!("/tmp/wgunicorn-b{i}")))
                .collect(),
            10_000,
            5.0,
            10.0,
        );
        let d = diff(&before, &after);
        assert_eq!(
            (d.findings.fixed.len(), d.findings.new.len(), d.findings.persisting.len()),
            (0, 0, 1),
            "{:?}",
            d.findings
        );
        let p = &d.findings.persisting[0];
        assert_eq!(p.after.as_ref().map(|s| s.count), Some(4));
        assert!(p.subject.ends_with("and 3 more"), "{}", p.subject);
        assert!(!d.regression && !p.worse, "{}", d.verdict);
    }

    #[test]
    fn a_timed_attach_is_measured_per_traffic_and_per_second() {
        // nginx with sendfile: twice the requests served in the same 5 s, more calls per second
        // but fewer per MiB served, and a new warning: an improvement with a note
        let before = attach(vec![], 100_000, 5.0, 100.0);
        let after = attach(vec![finding("accept-herd", "x", program("srv"))], 120_000, 5.0, 220.0);
        let d = diff(&before, &after);
        assert_eq!(d.unit.as_ref().map(|u| u.name.as_str()), Some("MiB on sockets"));
        assert!(!d.regression, "{}", d.verdict);
        assert!(d.verdict.starts_with("improved: new warning: accept-herd"), "{}", d.verdict);
        assert!(d.verdict.contains("syscalls per MiB on sockets 1,000 -> 545 (-45%)"), "{}", d.verdict);
        assert!(d.verdict.contains("MiB on sockets per second 20 -> 44 (+120%)"), "{}", d.verdict);
        // the same calls per MiB, twice the MiB per second: served more for the same cost
        let after = attach(vec![], 200_000, 5.0, 200.0);
        let d = diff(&before, &after);
        assert!(d.verdict.starts_with("improved: MiB on sockets per second 20 -> 40 (+100%)"), "{}", d.verdict);
        // and back: served half as much for the same cost
        let d = diff(&after, &before);
        assert!(
            d.regression && d.verdict.starts_with("regressed: MiB on sockets per second 40 -> 20"),
            "{}",
            d.verdict
        );
        // twice the calls per MiB for twice the MiB a second: neither outweighs the other (a
        // load generator that got more of a shared CPU?), and the same backwards
        let after = attach(vec![], 400_000, 5.0, 200.0);
        let d = diff(&before, &after);
        assert_eq!(d.outcome, Outcome::Inconclusive, "{}", d.verdict);
        assert!(!d.regression && d.verdict.contains("neither outweighs the other"), "{}", d.verdict);
        assert_eq!(diff(&after, &before).outcome, Outcome::Inconclusive);
        // a fortieth of the work per second at 30% fewer calls per MiB (a keep-alive client
        // stalled by Nagle): served far less, a regression whatever the cost per unit; and back
        let stalled = attach(vec![], 1_750, 5.0, 2.5);
        let d = diff(&before, &stalled);
        assert!(
            d.regression && d.verdict.starts_with("regressed: MiB on sockets per second 20 -> 0.5"),
            "{}",
            d.verdict
        );
        let d = diff(&stalled, &before);
        assert_eq!(d.outcome, Outcome::Improved, "{}", d.verdict);
        // redis pipelining: the same traffic, a sixteenth of the calls
        let after = attach(vec![], 100_000 / 16, 5.0, 100.0);
        let d = diff(&before, &after);
        assert!(d.verdict.starts_with("improved: syscalls per MiB on sockets 1,000 -> 62.5 (-94%)"), "{}", d.verdict);
        // the other way round: more calls for the same traffic, nothing fixed
        let d = diff(&after, &before);
        assert!(d.regression && d.verdict.starts_with("regressed: "), "{}", d.verdict);
        // no traffic on sockets: per second of trace
        let (mut b, mut a) = (attach(vec![], 1000, 2.0, 0.0), attach(vec![], 1000, 4.0, 0.0));
        b.summary.socket_bytes = None;
        a.summary.socket_bytes = Some(0);
        let d = diff(&b, &a);
        assert_eq!(d.unit.as_ref().map(|u| u.name.as_str()), Some("second of trace"));
        assert!(d.verdict.starts_with("improved: syscalls per second of trace 500 -> 250 (-50%)"), "{}", d.verdict);
        assert!(d.throughput.is_none());
    }

    /// A whole command run (it starts and ends in the trace) over the same input.
    fn whole(findings: Vec<Finding>, syscalls: u64, secs: f64) -> Report {
        let mut r = attach(findings, syscalls, secs, 1.0);
        r.summary.processes[0].end = Some("exited 0".into());
        r
    }

    #[test]
    fn whole_runs_are_judged_by_their_wall_time_then_their_syscalls() {
        // faster with fewer calls: improved, and back a regression
        let (slow, fast) = (whole(vec![], 3_000, 2.0), whole(vec![], 1_200, 0.8));
        let d = diff(&slow, &fast);
        assert_eq!((d.outcome, d.unit.is_none()), (Outcome::Improved, true), "{}", d.verdict);
        assert!(d.verdict.contains("wall seconds 2 -> 0.8 (-60%)"), "{}", d.verdict);
        assert!(diff(&fast, &slow).regression);
        // faster with more calls: the wall time decides
        assert_eq!(diff(&slow, &whole(vec![], 6_000, 1.0)).outcome, Outcome::Improved);
        // the same time, fewer calls: cheaper
        assert_eq!(diff(&slow, &whole(vec![], 1_000, 2.05)).outcome, Outcome::Improved);
        // within tolerance both ways: unchanged, both ways
        let same = whole(vec![], 3_100, 2.1);
        assert_eq!((diff(&slow, &same).outcome, diff(&same, &slow).outcome), (Outcome::Unchanged, Outcome::Unchanged));
        // a short run gets twice the tolerance: 15% is noise under a second
        let (a, b) = (whole(vec![], 3_000, 0.20), whole(vec![], 3_000, 0.23));
        assert_eq!(diff(&a, &b).outcome, Outcome::Unchanged);
        // an attach against a whole run does not compare
        let d = diff(&slow, &attach(vec![], 3_000, 2.0, 1.0));
        assert_eq!(d.outcome, Outcome::Inconclusive, "{}", d.verdict);
    }

    #[test]
    fn a_new_warning_costing_more_than_the_fixed_one_is_no_improvement() {
        let priced = |det: &str, share: f64| {
            let mut f = finding(det, "pid 7 (srv)", program("srv"));
            f.impact = Some(crate::Impact { saved_s: share * 5.0, traced_s: Some(5.0), share: Some(share) });
            f
        };
        let before = attach(vec![priced("small-io", 0.02)], 10_000, 5.0, 10.0);
        // 20% fewer calls per MiB, but the new stall costs 30% of the time against 2% fixed
        let after = attach(vec![priced("nagle-delay", 0.30)], 8_000, 5.0, 10.0);
        let d = diff(&before, &after);
        assert_eq!(d.outcome, Outcome::Inconclusive, "{}", d.verdict);
        assert!(
            d.verdict.contains("the new nagle-delay would cost 30% of the traced time, more than the 2.0% fixed"),
            "{}",
            d.verdict
        );
        // the other way round it is measured worse: a regression
        assert!(diff(&after, &before).regression);
        // a cheaper new warning with the same measures is a note on an improvement
        let after = attach(vec![priced("nagle-delay", 0.01)], 8_000, 5.0, 10.0);
        assert_eq!(diff(&before, &after).outcome, Outcome::Improved);
    }

    #[test]
    fn a_run_from_start_to_end_is_not_a_timed_window() {
        let mut r = attach(vec![], 10, 1.0, 1.0);
        assert!(open_ended(&r));
        r.summary.processes[0].end = Some("exited 0".into());
        assert!(!open_ended(&r));
        // an attach to a worker whose parent (not traced) is known from /proc
        r.summary.processes[0].end = None;
        r.summary.processes[0].parent = Some(1);
        assert!(open_ended(&r));
        // a child of a traced root is no root
        r.summary.processes.push(crate::ProcessStats { pid: 1, end: Some("exited 0".into()), ..Default::default() });
        assert!(!open_ended(&r), "the run of pid 1 ended");
        r.summary.processes.clear();
        assert!(!open_ended(&r), "nothing known: not a window");
    }
}
