//! The detector author's harness: run one detector over strace text and get its findings.
//!
//! ```text
//! let findings = crate::check::check("busy-poll", &text);
//! ```
//!
//! The text goes through the real reader and the real model, exactly as `syslint analyze`
//! would read it; only the one detector runs, with its default options or the ones given.
//! A detector's fixture tests are data, not code: `fixtures/<detector>/expect.toml` says what
//! it must report on each input, and the one test in `check/fixtures.rs` runs every case
//! through these functions.

mod fixtures;

use crate::{registry, Analyzer};
use syslint_capture::Parser;
use syslint_report::{Capture, Finding};

/// Findings of detector `name` (with defaults) on `text`.
pub fn check(name: &str, text: &str) -> Vec<Finding> {
    check_with(name, &toml::Table::new(), text)
}

/// Detector `name` alone, with `options` (the body of its `[name]` table; empty: its defaults).
fn build(name: &str, options: &toml::Table) -> Vec<Box<dyn registry::Detector>> {
    let mut table = toml::Table::new();
    if !options.is_empty() {
        table.insert(name.to_string(), toml::Value::Table(options.clone()));
    }
    let detectors = registry::build(&[name.to_string()], &[], &table).expect("detector builds");
    assert_eq!(detectors.len(), 1, "{name} names one detector");
    detectors
}

/// Findings of detector `name` with `options` (the body of its `[name]` table).
pub fn check_with(name: &str, options: &toml::Table, text: &str) -> Vec<Finding> {
    let detectors = build(name, options);
    let mut a = Analyzer::new(detectors);
    let mut p = Parser::new("check");
    let mut sink = |e: &syslint_event::Event| a.on_event(e);
    for (i, line) in text.lines().enumerate() {
        p.parse_line(line, i as u64 + 1, None, &mut sink);
    }
    let stats = p.finish(&mut sink);
    assert_eq!(stats.unparsed, 0, "every fixture line parses: {:?}", stats.unparsed_samples);
    let capture = Capture { clock: stats.clock.as_str().to_string(), ..Capture::default() };
    let mut findings = a.finish(capture).findings;
    for f in &mut findings {
        // the snapshot is the detector's own output: the `high` the analyzer stamps on every
        // full-trace finding (crate::basis::stamp_full, tested there) is left out, so that
        // snapshots of full-trace rules do not change with that policy's wording; excerpt
        // and counts findings keep the confidence their rule gave
        // (`medium` when the trimmed fixture reads as an excerpt)
        if f.confidence_reason.as_deref().is_some_and(|r| r.starts_with("the detector's full-trace thresholds")) {
            f.confidence = None;
            f.confidence_reason = None;
            f.confirm = None;
        }
    }
    findings
}

/// Findings of detector `name`'s counts rule with `options` on the table of counts in `text`
/// (read by the same table reader `syslint analyze` uses: strace -c/-w, perf trace -s,
/// syscount).
pub fn check_counts(name: &str, options: &toml::Table, text: &str) -> Vec<Finding> {
    let c = syslint_capture::tables::read(text).expect("a table of counts");
    build(name, options).iter().flat_map(|d| crate::registry::counts_rule(d.as_ref(), &c)).collect()
}
