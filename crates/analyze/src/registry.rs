//! The detector registry: every detector declared like a lint (code, kebab-case name,
//! category, status, docs under fixed headings, thresholds next to it). Detectors receive the
//! event stream after the model has seen each event and return findings at the end.
//!
//! The registry is ordered and checked by tests (unique codes and names, complete docs).

use crate::model::Model;
use syslint_event::Event;
use syslint_report::{Finding, Severity};

/// Whether a detector is on by default.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Stable,
    Preview,
}

/// Everything `syslint explain` prints.
#[derive(Debug)]
pub struct Docs {
    pub what: &'static str,
    pub why: &'static str,
    pub evidence: &'static str,
    pub fix: &'static str,
    pub example: &'static str,
}

#[derive(Debug)]
pub struct Meta {
    /// Stable code, `SL` + three digits.
    pub code: &'static str,
    /// Kebab-case name, part of the JSON contract.
    pub name: &'static str,
    pub category: &'static str,
    pub status: Status,
    pub default_severity: Severity,
    /// One line for `syslint detectors`.
    pub summary: &'static str,
    pub docs: Docs,
}

/// A detector sees every event in time order, after the model was updated with it.
pub trait Detector {
    fn meta(&self) -> &'static Meta;
    fn on_event(&mut self, model: &Model, ev: &Event);
    fn finish(&mut self, model: &Model) -> Vec<Finding>;
}

/// Constructors of all detectors, in registry order.
pub fn all() -> Vec<Box<dyn Detector>> {
    // The detectors themselves arrive with the detector work (issue "Detectors").
    Vec::new()
}

/// The metadata of all detectors.
pub fn metas() -> Vec<&'static Meta> {
    all().iter().map(|d| d.meta()).collect()
}

/// Find a detector by kebab-case name or code (case-insensitive for codes).
pub fn find(key: &str) -> Option<&'static Meta> {
    metas().into_iter().find(|m| m.name == key || m.code.eq_ignore_ascii_case(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn registry_is_consistent() {
        let mut codes = HashSet::new();
        let mut names = HashSet::new();
        for m in metas() {
            assert!(codes.insert(m.code), "duplicate code {}", m.code);
            assert!(names.insert(m.name), "duplicate name {}", m.name);
            assert!(m.code.len() == 5 && m.code.starts_with("SL"), "bad code {}", m.code);
            assert!(m.name.bytes().all(|c| c.is_ascii_lowercase() || c == b'-'), "name {} not kebab-case", m.name);
            for (h, t) in [
                ("what", m.docs.what),
                ("why", m.docs.why),
                ("evidence", m.docs.evidence),
                ("fix", m.docs.fix),
                ("example", m.docs.example),
            ] {
                assert!(!t.trim().is_empty(), "{}: empty {h}", m.name);
            }
        }
    }
}
