//! Lab programs run under `syslint trace` instead of strace (the labs' run.sh call
//! `$STRACE -o OUT FLAGS... CMD`; a small wrapper turns that into `syslint trace`), and the
//! live findings must match what the detectors report on the recorded traces.

use crate::common::*;

/// A stand-in for strace: `-o OUT [flags] CMD...` -> `syslint trace --backend strace -o OUT`,
/// with the report as JSON next to the recording.
fn wrapper(dir: &std::path::Path) -> std::path::PathBuf {
    strace_stand_in(dir, "strace-via-syslint", "--backend strace -o \"{out}\"", false)
}

fn run_lab(lab: &str, variant: &str) -> (syslint_report::Report, syslint_report::Report) {
    for tool in ["strace", "cc"] {
        assert!(have(tool), "{tool} is required");
    }
    let dir = std::env::temp_dir().join(format!("syslint-trace-lab-{lab}-{variant}-{}", std::process::id()));
    let out = run_lab_with(lab, variant, &dir, "rec.strace", wrapper);
    let text = std::fs::read_to_string(out.with_extension("strace.json")).expect("syslint trace wrote its report");
    let live = parse_report(&text).unwrap();
    let again = analyze(&[&out]);
    (live, again)
}

fn check(lab: &str, variant: &str, detector: &str) {
    let (live, again) = run_lab(lab, variant);
    assert_eq!(live.capture.backend, "strace");
    let f = findings(&live, detector);
    assert_eq!(f.len(), 1, "{lab} {variant}: {:#?}", live.findings);
    // a warning at least: the severity follows the measured cost, and on a loaded machine the
    // calls' share of the traced time under strace can reach an error
    assert!(f[0].severity >= syslint_report::Severity::Warning, "{:#?}", f[0]);
    // the recording gives the same findings
    let g = findings(&again, detector);
    assert_eq!(g.len(), 1);
    assert_eq!((&f[0].message, &f[0].metrics), (&g[0].message, &g[0].metrics));
}

#[test]
fn busy_poll_under_syslint_trace() {
    check("busy-poll", "c-poll0", "busy-poll");
}

#[test]
fn fsync_storm_under_syslint_trace() {
    check("fsync-storm", "c-fsync-each", "fsync-storm");
}

#[test]
fn failed_lookup_storm_under_syslint_trace() {
    check("failed-lookup-storm", "c-search-bad", "failed-lookup-storm");
}
