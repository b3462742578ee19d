//! Every detector's fixture tests, as data: `fixtures/<detector>/expect.toml` holds one
//! `[[case]]` per run of the detector (an input, its options) and what that run must report.
//! One test runs every case of every directory and lists all the differences at once, so one
//! failure shows everything a change moved; a second checks that every fixture file is read
//! and every snapshot belongs to a case.
//!
//! The format, by example (every key but `name` and the input is optional; comments in the
//! TOML say why each number is what it is):
//!
//! ```toml
//! [[case]]
//! name = "fires_on_..."             # unique in the file; names the snapshot
//! file = "x-head1000.strace"        # a fixture of this directory, or a list of them
//! # lab = "<detector>/excerpts/x.10.txt"  # or an input under lab/ (or a list of them)
//! # rule = "counts"                 # the input is a table of counts: the counts rule
//! options = { min_calls = 100 }     # the detector's options (default: its defaults)
//! findings = 1                      # how many findings (0: quiet)
//! snapshot = true                   # the findings equal the insta snapshot
//!                                   # src/detectors/snapshots/<detector>__<name>.snap
//! [[case.lines]]                    # the input itself: lines holding every `with` string
//! with = [" poll(", "= 0 (Timeout)"]
//! count = 272                       # exactly, or at_least = 200
//! [case.every]                      # what every finding shows (the keys below)
//! [[case.finding]]                  # what the first finding shows; the next one the second
//! severity = "info"
//! confidence = "medium"             # or a list of those allowed; "none": no confidence
//! subject = "..."                   # the finding's subject, exactly
//! program = "..."                   # the program it is about (`about.program`)
//! has_metrics = ["longest_run"]     # metrics it has, and lacks_metrics: ones it has not
//! [case.finding.metrics]            # metrics' exact values; "top_paths[0]": an element
//! calls = 272
//! [case.finding.at_least]           # bounds on metrics, and above, below, at_most; an
//! lost_s = 0.9                      # integer bound wants an integer metric
//! [case.finding.contains]           # substrings of the finding's text fields, by their JSON
//! message = "zero timeout"          # name ("evidence[1]": the second evidence line); and
//!                                   # lacks, starts_with, ends_with
//! ```
//!
//! A case must say how many findings (`findings`), what one shows (`[[case.finding]]`) or match
//! a snapshot: `[case.every]` alone would hold of no findings at all. A case with a list of
//! inputs expects the same of each. Files of a directory that another
//! test reads instead are listed under `[elsewhere]`, each with the test that reads it.

use super::{check_counts, check_with};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syslint_report::{Finding, Severity};

/// One directory's `expect.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    case: Vec<Case>,
    /// Files of the directory that other tests read, each with the test that reads it.
    #[serde(default)]
    elsewhere: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    /// Fixtures of the directory.
    file: Option<OneOrMore>,
    /// Inputs under `lab/`: lab traces, excerpts and tables of counts.
    lab: Option<OneOrMore>,
    #[serde(default)]
    rule: Rule,
    #[serde(default)]
    options: toml::Table,
    findings: Option<usize>,
    #[serde(default)]
    snapshot: bool,
    #[serde(default)]
    lines: Vec<Lines>,
    every: Option<Shows>,
    #[serde(default)]
    finding: Vec<Shows>,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Rule {
    /// The input is strace text: the full-trace and excerpt rules.
    #[default]
    Trace,
    /// The input is a table of counts.
    Counts,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum OneOrMore {
    One(String),
    More(Vec<String>),
}

impl OneOrMore {
    fn list(&self) -> &[String] {
        match self {
            OneOrMore::One(s) => std::slice::from_ref(s),
            OneOrMore::More(v) => v,
        }
    }
}

/// Lines of the input holding every string of `with`: how many.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Lines {
    with: OneOrMore,
    count: Option<usize>,
    at_least: Option<usize>,
}

/// What a finding shows.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Shows {
    severity: Option<Severity>,
    confidence: Option<OneOrMore>,
    subject: Option<String>,
    program: Option<String>,
    #[serde(default)]
    has_metrics: Vec<String>,
    #[serde(default)]
    lacks_metrics: Vec<String>,
    #[serde(default)]
    metrics: BTreeMap<String, toml::Value>,
    #[serde(default)]
    above: BTreeMap<String, toml::Value>,
    #[serde(default)]
    at_least: BTreeMap<String, toml::Value>,
    #[serde(default)]
    below: BTreeMap<String, toml::Value>,
    #[serde(default)]
    at_most: BTreeMap<String, toml::Value>,
    #[serde(default)]
    contains: BTreeMap<String, OneOrMore>,
    #[serde(default)]
    lacks: BTreeMap<String, OneOrMore>,
    #[serde(default)]
    starts_with: BTreeMap<String, OneOrMore>,
    #[serde(default)]
    ends_with: BTreeMap<String, OneOrMore>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The fixture directories, by name, each with its `expect.toml` read (or why it could not be).
fn directories() -> Vec<(String, PathBuf, Result<Expect, String>)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("fixtures"))
        .expect("crates/analyze/fixtures")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let expect = std::fs::read_to_string(dir.join("expect.toml"))
                .map_err(|e| format!("no expect.toml: {e}"))
                .and_then(|t| toml::from_str::<Expect>(&t).map_err(|e| e.to_string()));
            (name, dir, expect)
        })
        .collect()
}

/// Differences found, one line each: where, what, what was expected, what there was.
#[derive(Default)]
struct Misses(Vec<String>);

impl Misses {
    fn add(&mut self, at: &str, field: &str, expected: impl std::fmt::Display, got: impl std::fmt::Display) {
        self.0.push(format!("{at}: {field}: expected {expected}, got {got}"));
    }
}

/// What a panic said (the harness asserts that every line parses, that the detector builds).
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[test]
fn every_fixture_shows_what_its_expect_toml_says() {
    let mut misses = Misses::default();
    let mut runs = 0;
    for (detector, dir, expect) in directories() {
        let toml_at = format!("fixtures/{detector}/expect.toml");
        let expect = match expect {
            Ok(e) => e,
            Err(e) => {
                misses.add(&toml_at, "the file", "an expect.toml that reads", e);
                continue;
            }
        };
        let mut names = BTreeSet::new();
        for case in &expect.case {
            let at = format!("{toml_at}, case {}", case.name);
            if !names.insert(case.name.as_str()) {
                misses.add(&at, "name", "a name of one case", "a second case of that name");
            }
            let inputs: Vec<(String, PathBuf)> = match (&case.file, &case.lab) {
                (Some(f), None) => f.list().iter().map(|f| (f.clone(), dir.join(f))).collect(),
                (None, Some(l)) => {
                    l.list().iter().map(|l| (format!("lab/{l}"), root().join("../../lab").join(l))).collect()
                }
                _ => {
                    misses.add(&at, "input", "one of file or lab", "both or neither");
                    continue;
                }
            };
            if case.snapshot && inputs.len() != 1 {
                misses.add(&at, "snapshot", "one input", inputs.len());
            }
            if case.findings.is_none() && case.finding.is_empty() && !case.snapshot {
                // `every` alone holds of no findings at all
                misses.add(&at, "findings", "something to check", "none of findings, finding or snapshot");
            }
            if case.lines.iter().any(|l| l.count.is_none() && l.at_least.is_none()) {
                misses.add(&at, "lines", "a count or at_least", "neither");
            }
            for (input, path) in &inputs {
                let at = format!("{at} ({input})");
                let text = match std::fs::read_to_string(path) {
                    Ok(t) => t,
                    Err(e) => {
                        misses.add(&at, "input", "a file that reads", e);
                        continue;
                    }
                };
                runs += 1;
                run(&detector, case, &text, path, &at, &mut misses);
            }
        }
    }
    assert!(misses.0.is_empty(), "{} differences from the expect.toml files:\n{}", misses.0.len(), misses.0.join("\n"));
    assert!(runs > 100, "only {runs} runs: are the expect.toml files read?");
}

/// Run one case on one input and note where the findings differ from what it expects.
fn run(detector: &str, case: &Case, text: &str, path: &Path, at: &str, misses: &mut Misses) {
    for l in &case.lines {
        let with = l.with.list();
        let n = text.lines().filter(|line| with.iter().all(|w| line.contains(w.as_str()))).count();
        let field = format!("lines with {with:?}");
        if l.count.is_some_and(|c| c != n) {
            misses.add(at, &field, l.count.unwrap_or_default(), n);
        }
        if l.at_least.is_some_and(|c| n < c) {
            misses.add(at, &field, format!("at least {}", l.at_least.unwrap_or_default()), n);
        }
    }
    let found = std::panic::catch_unwind(|| match case.rule {
        Rule::Trace => check_with(detector, &case.options, text),
        Rule::Counts => check_counts(detector, &case.options, text),
    });
    let findings = match found {
        Ok(f) => f,
        Err(p) => {
            misses.add(at, "the run", "findings", format!("a panic: {}", panic_text(p.as_ref())));
            return;
        }
    };
    if case.findings.is_some_and(|n| n != findings.len()) {
        let said: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        misses.add(at, "findings", case.findings.unwrap_or_default(), format!("{} {said:?}", findings.len()));
    }
    if let Some(every) = &case.every {
        for (i, f) in findings.iter().enumerate() {
            shows(f, every, &format!("finding {i}"), at, misses);
        }
    }
    for (i, want) in case.finding.iter().enumerate() {
        match findings.get(i) {
            Some(f) => shows(f, want, &format!("finding {i}"), at, misses),
            None => misses.add(at, &format!("finding {i}"), "a finding", format!("{} findings", findings.len())),
        }
    }
    if case.snapshot {
        let mut settings = insta::Settings::clone_current();
        // beside the detectors, named after the directory and the case
        settings.set_snapshot_path("../detectors/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(path);
        let name = format!("{detector}__{}", case.name);
        // insta prints the difference and panics: caught, so that the other cases still run
        let same = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_json_snapshot!(name.as_str(), findings));
        }));
        if same.is_err() {
            let snap = format!("src/detectors/snapshots/{name}.snap");
            misses.add(at, "snapshot", snap, "other findings (insta's diff is printed above)");
        }
    }
}

/// Note where finding `f` does not show what `want` says.
fn shows(f: &Finding, want: &Shows, which: &str, at: &str, misses: &mut Misses) {
    let mut miss = |field: &str, expected: &dyn std::fmt::Display, got: &dyn std::fmt::Display| {
        misses.add(at, &format!("{which} {field}"), expected, got);
    };
    if want.severity.is_some_and(|s| s != f.severity) {
        miss("severity", &want.severity.map_or("", |s| s.as_str()), &f.severity.as_str());
    }
    if let Some(c) = &want.confidence {
        let got = f.confidence.map_or("none", |c| c.as_str());
        if !c.list().iter().any(|w| w == got) {
            miss("confidence", &c.list().join(" or "), &got);
        }
    }
    if want.subject.as_ref().is_some_and(|s| *s != f.subject) {
        miss("subject", &want.subject.as_deref().unwrap_or_default(), &f.subject);
    }
    let program = f.about.as_ref().and_then(|a| a.program.as_deref());
    if want.program.is_some() && want.program.as_deref() != program {
        miss("program", &want.program.as_deref().unwrap_or_default(), &program.unwrap_or("none"));
    }
    for m in &want.has_metrics {
        if !f.metrics.contains_key(m) {
            miss(&format!("metrics.{m}"), &"present", &"absent");
        }
    }
    for m in &want.lacks_metrics {
        if let Some(v) = f.metrics.get(m) {
            miss(&format!("metrics.{m}"), &"absent", v);
        }
    }
    let metrics = Value::Object(f.metrics.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    for (key, w) in &want.metrics {
        let got = lookup(&metrics, key);
        if !got.is_some_and(|g| same(w, g)) {
            miss(&format!("metrics.{key}"), w, &shown(got));
        }
    }
    use std::cmp::Ordering::{Equal, Greater, Less};
    for (bounds, word, holds) in [
        (&want.above, "above", &[Greater][..]),
        (&want.at_least, "at least", &[Greater, Equal][..]),
        (&want.below, "below", &[Less][..]),
        (&want.at_most, "at most", &[Less, Equal][..]),
    ] {
        for (key, w) in bounds {
            let got = lookup(&metrics, key);
            if !got.and_then(|g| compare(g, w)).is_some_and(|o| holds.contains(&o)) {
                miss(&format!("metrics.{key}"), &format!("{word} {w}"), &shown(got));
            }
        }
    }
    let json = serde_json::to_value(f).expect("a finding serialises");
    for (texts, word, holds) in [
        (&want.contains, "containing", (|t: &str, w: &str| t.contains(w)) as fn(&str, &str) -> bool),
        (&want.lacks, "without", |t, w| !t.contains(w)),
        (&want.starts_with, "starting with", |t, w| t.starts_with(w)),
        (&want.ends_with, "ending with", |t, w| t.ends_with(w)),
    ] {
        for (key, ws) in texts {
            let got = lookup(&json, key);
            for w in ws.list() {
                if !got.and_then(Value::as_str).is_some_and(|t| holds(t, w)) {
                    miss(key, &format!("text {word} {w:?}"), &shown(got));
                }
            }
        }
    }
}

/// The value at `path` in `v`: keys joined by dots, each with any `[index]` of an array.
fn lookup<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    let mut v = v;
    for part in path.split('.') {
        let mut pieces = part.split('[');
        let key = pieces.next().unwrap_or_default();
        if !key.is_empty() {
            v = v.get(key)?;
        }
        for index in pieces {
            v = v.get(index.strip_suffix(']')?.parse::<usize>().ok()?)?;
        }
    }
    Some(v)
}

fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// Whether `got` is `want`: an integer only an integer of that value, a float any number equal
/// to it, a string, a boolean, a list or a table the same all through.
fn same(want: &toml::Value, got: &Value) -> bool {
    match want {
        toml::Value::Integer(i) => got.as_i64() == Some(*i),
        toml::Value::Float(x) => got.as_f64() == Some(*x),
        toml::Value::String(s) => got.as_str() == Some(s.as_str()),
        toml::Value::Boolean(b) => got.as_bool() == Some(*b),
        toml::Value::Array(a) => {
            got.as_array().is_some_and(|g| g.len() == a.len() && a.iter().zip(g).all(|(w, g)| same(w, g)))
        }
        toml::Value::Table(t) => got
            .as_object()
            .is_some_and(|o| o.len() == t.len() && t.iter().all(|(k, w)| o.get(k).is_some_and(|g| same(w, g)))),
        toml::Value::Datetime(_) => false,
    }
}

/// How `got` compares with the bound `want`: an integer bound compares integers only (a float
/// metric against it is a difference), a float bound any number.
fn compare(got: &Value, want: &toml::Value) -> Option<std::cmp::Ordering> {
    match want {
        toml::Value::Integer(i) => got.as_i64().map(|g| g.cmp(i)),
        toml::Value::Float(x) => got.as_f64()?.partial_cmp(x),
        _ => None,
    }
}

/// Every file of a fixture directory is an input of one of its cases (or listed as read by
/// another test), every registered detector has a directory with a case that fires and
/// snapshots its findings and one that stays quiet, and every snapshot beside the detectors
/// belongs to a case: nothing is kept that no test reads.
#[test]
fn every_fixture_and_snapshot_is_read_and_every_detector_has_both_verdicts() {
    let mut wrong = Vec::new();
    let mut snapshots = BTreeSet::new();
    let mut detectors = BTreeSet::new();
    for (detector, dir, expect) in directories() {
        detectors.insert(detector.clone());
        let Ok(expect) = expect else {
            wrong.push(format!("fixtures/{detector}/expect.toml does not read (the other test says why)"));
            // its snapshots are not judged either
            snapshots.extend(snapshot_files().into_iter().filter(|s| s.starts_with(&format!("{detector}__"))));
            continue;
        };
        // scripts/new-detector.sh leaves TODO where only the author can say it
        if std::fs::read_to_string(dir.join("expect.toml")).is_ok_and(|t| t.contains("TODO")) {
            wrong.push(format!("fixtures/{detector}/expect.toml still says TODO"));
        }
        let mut read: BTreeSet<&str> = ["README.md", "expect.toml"].into();
        for case in &expect.case {
            read.extend(case.file.iter().flat_map(|f| f.list().iter().map(String::as_str)));
            if case.snapshot {
                snapshots.insert(format!("{detector}__{}.snap", case.name));
            }
        }
        for (file, by) in &expect.elsewhere {
            if by.trim().is_empty() {
                wrong.push(format!("fixtures/{detector}/{file}: [elsewhere] names no test"));
            }
            read.insert(file);
        }
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("a fixture directory")
            .map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        for f in files.iter().filter(|f| !read.contains(f.as_str())) {
            wrong.push(format!("fixtures/{detector}/{f}: no case reads it, and [elsewhere] does not name it"));
        }
        for f in expect.elsewhere.keys().filter(|f| !files.contains(f)) {
            wrong.push(format!("fixtures/{detector}/{f}: named in [elsewhere] but not there"));
        }
        let fires = expect.case.iter().any(|c| c.snapshot && c.file.is_some() && c.findings.is_some_and(|n| n > 0));
        let quiet = expect.case.iter().any(|c| c.file.is_some() && c.findings == Some(0));
        if !fires || !quiet {
            wrong.push(format!(
                "fixtures/{detector}/expect.toml: a fixture that fires (findings, snapshot) and one that stays quiet \
                 (findings = 0) are both needed"
            ));
        }
    }
    for e in crate::detectors::ENTRIES {
        if !detectors.contains(e.meta.name) {
            wrong.push(format!("{}: no fixtures/{}/expect.toml", e.meta.name, e.meta.name));
        }
    }
    for d in &detectors {
        if !crate::detectors::ENTRIES.iter().any(|e| e.meta.name == d) {
            wrong.push(format!("fixtures/{d}: no detector of that name"));
        }
    }
    for name in snapshot_files().iter().filter(|s| !snapshots.contains(*s)) {
        wrong.push(format!("src/detectors/snapshots/{name}: no case snapshots it"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The names of the snapshot files beside the detectors.
fn snapshot_files() -> Vec<String> {
    std::fs::read_dir(root().join("src/detectors/snapshots"))
        .expect("src/detectors/snapshots")
        .map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap"))
        .collect()
}
