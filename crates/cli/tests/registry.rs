//! Every registered detector has a lab whose recorded traces include one where it fires and
//! one where it stays quiet, and documentation `syslint explain` can print.

use crate::common::*;

#[test]
fn every_detector_has_a_firing_and_a_quiet_lab_trace() {
    let o = run(&["detectors", "--format", "json"]);
    let list: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(list.len(), 19, "{list:?}");
    for d in list {
        let name = d["name"].as_str().unwrap();
        let dir = root().join("lab").join(name).join("traces");
        let mut traces: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|_| panic!("{name}: no {}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        traces.sort();
        let (mut fired, mut quiet) = (None, None);
        for t in &traces {
            let o = run(&["analyze", "--format", "json", "--select", name, t.to_str().unwrap()]);
            let r = syslint_report::printers::json::parse(&stdout(&o)).unwrap();
            if r.findings.iter().any(|f| f.detector == name) {
                fired.get_or_insert(t.clone());
            } else {
                quiet.get_or_insert(t.clone());
            }
            if fired.is_some() && quiet.is_some() {
                break;
            }
        }
        assert!(fired.is_some(), "{name}: fires on none of {} lab traces", traces.len());
        assert!(quiet.is_some(), "{name}: quiet on none of {} lab traces", traces.len());
        let e = run(&["explain", name]);
        let text = stdout(&e);
        for h in ["## What it detects", "## Why it hurts", "## Evidence", "## Fix", "## Example", "## Options"] {
            assert!(text.contains(h), "{name}: explain lacks {h}");
        }
        let code = d["code"].as_str().unwrap();
        assert_eq!(stdout(&run(&["explain", code])), text, "explain by code and by name agree");
    }
}
