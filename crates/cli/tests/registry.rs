//! Every registered detector is listed by `syslint detectors` and has documentation `syslint
//! explain` can print. (That its lab's recorded traces include one where it fires and one
//! where it stays quiet is its manifest's to say: labs.rs.)

use crate::common::*;

#[test]
fn every_detector_is_listed_and_explained() {
    let o = run(&["detectors", "--format", "json"]);
    let list: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    // every registered detector is listed: compared with the registry itself, so branches that
    // add detectors do not each edit a count here (the first twelve must stay)
    assert_eq!(list.len(), syslint_analyze::registry::ENTRIES.len(), "{list:?}");
    assert!(list.len() >= 12, "{list:?}");
    for d in list {
        let name = d["name"].as_str().unwrap();
        let e = run(&["explain", name]);
        let text = stdout(&e);
        for h in ["## What it detects", "## Why it hurts", "## Evidence", "## Fix", "## Example", "## Options"] {
            assert!(text.contains(h), "{name}: explain lacks {h}");
        }
        let code = d["code"].as_str().unwrap();
        assert_eq!(stdout(&run(&["explain", code])), text, "explain by code and by name agree");
    }
}
