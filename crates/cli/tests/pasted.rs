//! The corpus of real pastes from public threads (tests/fixtures/pasted: README.md has each
//! file's source and what the people in the thread concluded; expected.tsv the verdict syslint
//! should give): syslint is run over every file and held to that verdict.
//!
//! Rows naming a detector this build does not have (the second wave: yield-spin, stat-storm,
//! timer-polling, retry-storm, spawn-per-task) are checked only for staying below `error`
//! until those detectors land. Where syslint disagrees today, DISAGREE says so and why; the
//! test then holds it to exactly that, so a fix (or a regression) shows.

use crate::common::*;
use syslint_report::{Confidence, Severity};

/// Files where syslint's verdict differs from expected.tsv today, and why.
const DISAGREE: &[(&str, &str)] = &[(
    "pstore-11-gpg-spawn-grep-context.txt",
    "-r stamps with grep's `--` separators and context prefixes: not read as strace lines yet",
)];

fn conf(s: &str) -> Option<Confidence> {
    match s {
        "low" => Some(Confidence::Low),
        "medium" => Some(Confidence::Medium),
        "high" => Some(Confidence::High),
        _ => None,
    }
}

#[test]
fn every_paste_gets_the_verdict_of_its_thread() {
    let dir = root().join("tests/fixtures/pasted");
    let tsv = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    let known: Vec<&str> = syslint_analyze::registry::metas().iter().map(|m| m.name).collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in tsv.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, expected, min) = (cols[0], cols[2], cols[3]);
        if expected != "quiet" && !known.contains(&expected) {
            // a detector of another branch: nothing to hold this build to yet
            continue;
        }
        let p = dir.join(file);
        let o = run(&["analyze", "--format", "json", &p.display().to_string()]);
        if o.status.code() == Some(2) {
            // not read at all: an error, no finding
            if expected != "quiet" && !DISAGREE.iter().any(|(f, _)| *f == file) {
                wrong.push(format!(
                    "{file}: expected {expected}, syslint could not read it: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
            checked += 1;
            continue;
        }
        let r = syslint_report::printers::json::parse(&String::from_utf8_lossy(&o.stdout)).expect("JSON report");
        let table_only = r.capture.syscalls == 0;
        for f in &r.findings {
            assert!(!(table_only && f.severity == Severity::Error), "{file}: a table-only finding is an error");
            assert!(f.confidence.is_some(), "{file}: {} without confidence", f.detector);
        }
        let got_ok = if expected == "quiet" {
            r.findings.iter().all(|f| f.severity < Severity::Warning)
        } else {
            let want = conf(min).unwrap_or(Confidence::Low);
            r.findings.iter().any(|f| f.detector == expected && f.confidence.is_some_and(|c| c >= want))
        };
        checked += 1;
        let said: Vec<String> = r
            .findings
            .iter()
            .map(|f| format!("{} {} {}", f.detector, f.severity.as_str(), f.confidence.map_or("-", Confidence::as_str)))
            .collect();
        let disagreed = DISAGREE.iter().any(|(f, _)| *f == file);
        if got_ok == disagreed {
            wrong.push(format!(
                "{file}: expected {expected} >= {min}, syslint said {said:?}{}",
                if disagreed { " (listed in DISAGREE: remove it)" } else { "" }
            ));
        }
    }
    assert!(checked >= 25, "only {checked} rows checked");
    assert!(wrong.is_empty(), "{} verdicts differ:\n{}", wrong.len(), wrong.join("\n"));
}
