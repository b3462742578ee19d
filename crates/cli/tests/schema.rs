//! The shipped JSON Schemas (docs/schema/): valid draft 2020-12 documents, what `syslint schema`
//! prints, met by every committed `.json` report, and strict enough to refuse what syslint never
//! writes. (Every report and diff the other tests read is validated by the harness: common's
//! `parse_report`, `json_doc`, `analyze`, `snapshot`.)

use crate::common::*;
use serde_json::{json, Value};

#[test]
fn shipped_schemas_are_draft_2020_12_schemas() {
    for doc in [Doc::Report, Doc::Diff] {
        let path = doc.schema_file();
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{}", path.display());
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{}: not a valid JSON Schema: {e}", path.display());
        }
    }
}

/// `syslint schema report|diff` prints the files byte for byte (the report crate's unit test
/// holds both to the types).
#[test]
fn schema_command_prints_the_shipped_files() {
    for (arg, doc) in [("report", Doc::Report), ("diff", Doc::Diff)] {
        let o = run(&["schema", arg]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), std::fs::read_to_string(doc.schema_file()).unwrap(), "syslint schema {arg}");
    }
}

/// Every `.json` file in the tree that is a syslint report or diff passes its schema (today the
/// snapshot crates/cli/tests/snapshots/stat1000.json; a report committed later as a fixture is
/// checked without being listed here).
#[test]
fn committed_json_reports_validate() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if !matches!(name.to_str(), Some("target" | ".git" | "node_modules")) {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "json") && !p.starts_with(root().join("docs/schema")) {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &mut files);
    let mut checked = Vec::new();
    for p in &files {
        let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap_or_default()) else {
            continue;
        };
        let is_report = v["tool"]["name"] == "syslint" || v["kind"] == "diff";
        if is_report {
            let errors = schema_errors(Doc::of(&v), &v);
            assert!(errors.is_empty(), "{}:\n  {}", p.display(), errors.join("\n  "));
            checked.push(p.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    assert!(checked.iter().any(|p| p.ends_with("snapshots/stat1000.json")), "found {checked:?} among {files:?}");
    eprintln!("validated {} committed reports: {checked:?}", checked.len());
}

/// What a spoiled document lacks, and how it is spoiled.
type Spoil = (&'static str, fn(&mut Value));

/// The schemas are no rubber stamp: a real report and diff pass, and each thing syslint never
/// writes is refused (a field it always writes missing, a later version, a value outside an
/// enumeration or pattern, a null where an optional field is absent instead).
#[test]
fn schemas_refuse_what_syslint_never_writes() {
    let (spin, fixed) =
        (lab_trace("busy-poll", "c-poll0.f-tt-T-yy.strace.gz"), lab_trace("busy-poll", "c-timeout.f-tt-T-yy.strace"));
    let o = run(&["analyze", "--format", "json", spin.to_str().unwrap()]);
    let report = json_doc(&o.stdout).expect("a report");
    assert!(report["findings"].as_array().is_some_and(|f| !f.is_empty()), "the spinning program has findings");
    assert!(report["summary"]["syscalls"][0]["latency"].is_array(), "and latency buckets");
    let bad: &[Spoil] = &[
        ("no capture", |r| {
            r.as_object_mut().unwrap().remove("capture");
        }),
        ("version 2", |r| r["version"] = json!(2)),
        ("window absent (written as null when unknown)", |r| {
            r["capture"].as_object_mut().unwrap().remove("window");
        }),
        ("unknown backend", |r| r["capture"]["backend"] = json!("dtrace")),
        ("negative count", |r| r["capture"]["lines"] = json!(-1)),
        ("severity fatal", |r| r["findings"][0]["severity"] = json!("fatal")),
        ("code X1", |r| r["findings"][0]["code"] = json!("X1")),
        ("3 latency buckets", |r| r["summary"]["syscalls"][0]["latency"] = json!([1, 2, 3])),
        ("null p50_s (absent when unmeasured)", |r| r["summary"]["syscalls"][0]["p50_s"] = Value::Null),
        ("a string where a number goes", |r| r["summary"]["syscalls"][0]["total_s"] = json!("0.1")),
    ];
    for (what, spoil) in bad {
        let mut r = report.clone();
        spoil(&mut r);
        assert!(!schema_errors(Doc::Report, &r).is_empty(), "the report schema accepts a report with {what}");
    }
    let mut newer = report.clone();
    newer["a_field_added_later"] = json!({"x": 1});
    assert!(schema_errors(Doc::Report, &newer).is_empty(), "readers must accept fields they do not know");

    let o = run(&["diff", "--format", "json", spin.to_str().unwrap(), fixed.to_str().unwrap()]);
    let diff = json_doc(&o.stdout).expect("a diff");
    assert_eq!(Doc::of(&diff), Doc::Diff);
    let bad: &[Spoil] = &[
        ("kind report", |d| d["kind"] = json!("report")),
        ("outcome better", |d| d["outcome"] = json!("better")),
        ("no regression flag", |d| {
            d.as_object_mut().unwrap().remove("regression");
        }),
        ("findings a list", |d| d["findings"] = json!([])),
    ];
    for (what, spoil) in bad {
        let mut d = diff.clone();
        spoil(&mut d);
        assert!(!schema_errors(Doc::Diff, &d).is_empty(), "the diff schema accepts a diff with {what}");
    }
    // and each document fails the other's schema
    assert!(!schema_errors(Doc::Diff, &report).is_empty());
    assert!(!schema_errors(Doc::Report, &diff).is_empty());
}
