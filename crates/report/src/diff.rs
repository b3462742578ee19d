//! Comparing two runs: which findings were fixed, which are new or persist, how each syscall
//! changed (per unit of work when the runs show one), and a one-line verdict.

use crate::{Finding, Report, Severity, Subject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct DiffReport {
    pub version: u32,
    /// Always `"diff"`, to tell it from an analysis report.
    pub kind: String,
    pub before: Side,
    pub after: Side,
    /// One line: `improved: ...`, `regressed: ...`, `no significant change`.
    pub verdict: String,
    /// A new finding appeared, or one got more severe.
    pub regression: bool,
    /// The unit of work per-unit numbers are divided by, if the runs showed one.
    pub unit: Option<Unit>,
    pub findings: FindingChanges,
    /// Changed syscalls, biggest impact first; small changes folded away.
    pub syscalls: Vec<SyscallDelta>,
    /// Syscalls left out as noise (tiny absolute changes).
    pub folded: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Side {
    pub sources: Vec<String>,
    pub syscalls: u64,
    pub window_s: Option<f64>,
    pub processes: u64,
    pub findings: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Unit {
    /// `accepted connection`, `outgoing connection`, `MiB transferred`.
    pub name: String,
    pub before: f64,
    pub after: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct FindingChanges {
    pub fixed: Vec<FindingDelta>,
    pub new: Vec<FindingDelta>,
    pub persisting: Vec<FindingDelta>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct FindingDelta {
    pub detector: String,
    pub code: String,
    /// The subject with process ids taken out (they differ between runs).
    pub subject: String,
    /// What the finding is about, as data (the key it was matched on), when the reports have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<Subject>,
    pub before: Option<FindingSide>,
    pub after: Option<FindingSide>,
    /// More severe after than before.
    pub worse: bool,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct FindingSide {
    pub severity: Severity,
    pub message: String,
    pub metrics: BTreeMap<String, serde_json::Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SyscallDelta {
    pub name: String,
    pub calls_before: u64,
    pub calls_after: u64,
    pub errors_before: u64,
    pub errors_after: u64,
    pub total_s_before: f64,
    pub total_s_after: f64,
    /// Calls per unit of work, when there is a unit.
    pub per_unit_before: Option<f64>,
    pub per_unit_after: Option<f64>,
}

/// What findings are matched on across runs (besides their detector).
#[derive(PartialEq)]
enum Key {
    About(Subject),
    Text(String),
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

fn side_of(f: &Finding) -> FindingSide {
    FindingSide { severity: f.severity, message: f.message.clone(), metrics: f.metrics.clone() }
}

/// The unit of work both runs show, with its counts.
fn unit_of(b: &Report, a: &Report) -> Option<Unit> {
    let conns = |r: &Report, dir: &str| -> f64 {
        r.summary.endpoints.iter().filter(|e| e.direction == dir).map(|e| e.connections as f64).sum()
    };
    let mib = |r: &Report| -> f64 { r.summary.syscalls.iter().filter_map(|s| s.bytes).sum::<u64>() as f64 / 1048576.0 };
    for (name, f) in [
        ("accepted connection", &(|r: &Report| conns(r, "in")) as &dyn Fn(&Report) -> f64),
        ("outgoing connection", &|r: &Report| conns(r, "out")),
        ("MiB transferred", &mib),
    ] {
        let (x, y) = (f(b), f(a));
        if x > 0.0 && y > 0.0 {
            return Some(Unit { name: name.into(), before: x, after: y });
        }
    }
    None
}

/// Compare two reports.
pub fn diff(before: &Report, after: &Report) -> DiffReport {
    // findings: matched by detector and what they are about (pids left out); reports written
    // before `about` existed are matched by their subject text without pids
    let structured = before.findings.iter().chain(&after.findings).all(|f| f.about.is_some());
    let key = |f: &Finding| match (&f.about, structured) {
        (Some(a), true) => (f.detector.clone(), Key::About(a.clone())),
        _ => (f.detector.clone(), Key::Text(stable_subject(&f.subject))),
    };
    let mut changes = FindingChanges::default();
    let mut after_left: Vec<&Finding> = after.findings.iter().collect();
    for f in &before.findings {
        let k = key(f);
        let pos = after_left.iter().position(|g| key(g) == k).or_else(|| {
            // one of a kind on each side: the same problem, even if its subject moved
            let same: Vec<usize> =
                after_left.iter().enumerate().filter(|(_, g)| g.detector == f.detector).map(|(i, _)| i).collect();
            let before_same = before.findings.iter().filter(|g| g.detector == f.detector).count();
            (same.len() == 1 && before_same == 1).then(|| same[0])
        });
        match pos {
            Some(i) => {
                let g = after_left.remove(i);
                changes.persisting.push(FindingDelta {
                    detector: f.detector.clone(),
                    code: f.code.clone(),
                    subject: stable_subject(&f.subject),
                    about: f.about.clone(),
                    before: Some(side_of(f)),
                    after: Some(side_of(g)),
                    worse: g.severity > f.severity,
                });
            }
            None => changes.fixed.push(FindingDelta {
                detector: f.detector.clone(),
                code: f.code.clone(),
                subject: stable_subject(&f.subject),
                about: f.about.clone(),
                before: Some(side_of(f)),
                after: None,
                worse: false,
            }),
        }
    }
    for g in after_left {
        changes.new.push(FindingDelta {
            detector: g.detector.clone(),
            code: g.code.clone(),
            subject: stable_subject(&g.subject),
            about: g.about.clone(),
            before: None,
            after: Some(side_of(g)),
            worse: true,
        });
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

    let regression = !changes.new.is_empty() || changes.persisting.iter().any(|p| p.worse);
    let verdict = verdict(&changes, &rows, unit.as_ref(), before, after);
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
        regression,
        unit,
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

fn verdict(c: &FindingChanges, rows: &[SyscallDelta], unit: Option<&Unit>, b: &Report, a: &Report) -> String {
    let mut parts = Vec::new();
    if !c.new.is_empty() {
        let names: Vec<String> = c.new.iter().map(|n| n.detector.clone()).collect();
        parts.push(format!("new finding{}: {}", if names.len() == 1 { "" } else { "s" }, names.join(", ")));
    }
    for p in c.persisting.iter().filter(|p| p.worse) {
        parts.push(format!("{} got worse", p.detector));
    }
    let regressed = !parts.is_empty();
    for f in &c.fixed {
        let was = f.before.as_ref().map(|s| s.message.clone()).unwrap_or_default();
        parts.push(format!("{} fixed (was: {was})", f.detector));
    }
    // the biggest syscall change, per unit when there is one
    if let Some(top) = rows.first() {
        let (x, y, per) = match (unit, top.per_unit_before, top.per_unit_after) {
            (Some(u), Some(pb), Some(pa)) => (pb, pa, format!(" per {}", u.name)),
            _ => (top.calls_before as f64, top.calls_after as f64, String::new()),
        };
        parts.push(format!("{} {}{per} -> {} ({})", top.name, fmt_num(x), fmt_num(y), pct(x, y)));
    }
    let head = if regressed {
        "regressed"
    } else if !c.fixed.is_empty() || a.capture.syscalls < b.capture.syscalls * 9 / 10 {
        "improved"
    } else if rows.is_empty() && c.fixed.is_empty() {
        return if c.persisting.is_empty() {
            "no significant change".into()
        } else {
            format!(
                "no significant change; {} finding{} persist",
                c.persisting.len(),
                if c.persisting.len() == 1 { "" } else { "s" }
            )
        };
    } else {
        "changed"
    };
    if !c.persisting.is_empty() && !regressed {
        parts.push(format!("{} finding{} persist", c.persisting.len(), if c.persisting.len() == 1 { "" } else { "s" }));
    }
    format!("{head}: {}", parts.join("; "))
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 || v.fract() == 0.0 {
        crate::printers::fmt_count(v.round() as u64)
    } else {
        format!("{v:.1}")
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
            fix: String::new(),
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
}
