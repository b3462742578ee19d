//! spawn-per-task (SL016) on the lab traces (lab/spawn-per-task: a bash loop running `date` per
//! line, Python running sha256sum per file, their in-process fixes, a make run of many different
//! tools; strace 6.1, recorded by record.sh) and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "spawn-per-task";
const DET: &str = "spawn-per-task";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn a_helper_per_item_is_a_warning() {
    for (variant, binary, spawner) in
        [("sh-date-each", "/usr/bin/date", "bash"), ("py-sha-each", "/usr/bin/sha256sum", "python3")]
    {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(
                r.findings.iter().all(|f| f.detector == DET || f.severity == Severity::Info),
                "{ctx}: {:#?}",
                r.findings
            );
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}");
            assert_eq!(metric(&f, "spawns"), 300.0, "{ctx}");
            assert_eq!(f.metrics["binary"], binary, "{ctx}");
            assert_eq!(metric(&f, "spawners"), 1.0, "{ctx}");
            assert_eq!(f.about.as_ref().and_then(|a| a.program.as_deref()), Some(spawner), "{ctx}");
            // lifetimes only with timestamps; then nearly all children are short
            assert_eq!(f.metrics.contains_key("short_children"), set.contains("tt"), "{ctx}");
            if set.contains("tt") {
                assert!(metric(&f, "short_children") >= 270.0, "{ctx}: {:?}", f.metrics);
            }
            assert!(f.evidence.iter().any(|e| e.contains(binary)), "{ctx}: {:#?}", f.evidence);
        }
    }
}

#[test]
fn one_process_for_all_items_and_a_build_are_quiet() {
    for variant in ["sh-date-once", "py-sha-once", "near-make", "near-sh-date-few"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", findings(&r, DET));
        }
    }
    // make started a process per step: many processes, none of them a repeated helper
    let r = analyze(&[&lab_variant(LAB, "near-make", "f-tt")]);
    assert!(r.capture.processes >= 20, "{}", r.capture.processes);
}

#[test]
fn live_date_loop_under_strace() {
    need(&["strace", "bash", "date"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("ITEMS", "120")]);
    let f = only(DET, &run("sh-date-each"), "live sh-date-each");
    assert_eq!(f.severity, Severity::Info, "120 spawns: under warn_spawns {f:#?}");
    assert_eq!(metric(&f, "spawns"), 120.0);
    assert!(findings(&run("sh-date-once"), DET).is_empty());
}

/// Issue 27: "spawn-per-task misses 200 runs of a helper that forks its own child". A `bash -c`
/// helper per line whose command substitution forks a subshell (no exec): the helper is still a
/// task per line (a compiler driver running cc1 and as is not: its children run programs).
#[test]
fn a_helper_that_forks_a_copy_of_itself_is_still_a_task() {
    for set in SETS {
        let ctx = format!("sh-helper-forks.{set}");
        let f = only(DET, &analyze(&[&lab_variant(LAB, "sh-helper-forks", set)]), &ctx);
        assert_eq!(metric(&f, "spawns"), 150.0, "{ctx}");
        assert_eq!(f.metrics["binary"], "/usr/bin/bash", "{ctx}");
        assert_eq!(metric(&f, "spawners"), 1.0, "{ctx}");
        // 150 helpers: over min_spawns, under warn_spawns
        assert_eq!(f.severity, Severity::Info, "{ctx}");
    }
}
