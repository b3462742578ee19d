//! madvise-storm (SL024) on the lab traces (lab/madvise-storm: a C loop releasing its region
//! with madvise after each op, and jemalloc with and without its decay, under strace 6.1,
//! recorded by record.sh), and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "madvise-storm";
const DET: &str = "madvise-storm";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn an_op_loop_releasing_its_memory_and_jemalloc_without_decay_warn() {
    // (variant, releases, pages released, pages released again): the same under every flag set
    for (variant, releases, pages, again) in
        [("c-dontneed", 2000.0, 64_000.0, 63_968.0), ("c-jemalloc-nodecay", 2002.0, 66_002.0, 65_968.0)]
    {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
            assert_eq!(metric(&f, "releases"), releases, "{ctx}");
            assert_eq!(metric(&f, "pages_released"), pages, "{ctx}");
            assert_eq!(metric(&f, "pages_released_again"), again, "{ctx}");
            assert!(metric(&f, "share_of_calls") > 0.95, "{ctx}: {f:#?}");
            assert!(f.subject.contains("(storm)"), "{ctx}: {}", f.subject);
            assert!(f.fix.contains("dirty_decay_ms"), "{ctx}");
            // with durations the time inside the calls is measured, else estimated
            let measured = f.cost.as_deref().is_some_and(|c| c.contains("measured under strace"));
            assert_eq!(measured, *set == "f-tt-T-yy", "{ctx}: {:?}", f.cost);
            assert!(f.evidence.iter().all(|e| e == "..." || e.contains("MADV_")), "{ctx}: {:#?}", f.evidence);
        }
    }
}

#[test]
fn kept_memory_default_decay_and_phase_ends_are_quiet() {
    for variant in ["c-keep", "c-jemalloc", "c-phase"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{variant}.{set}: {:#?}", r.findings);
        }
    }
}

#[test]
fn live_storm_under_strace() {
    need(&["strace", "bash", "cc"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-dontneed"), "live c-dontneed");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "releases"), 2000.0, "{f:#?}");
    assert!(findings(&run("c-keep"), DET).is_empty());
    assert!(findings(&run("c-phase"), DET).is_empty());
}
