//! sigmask-storm (SL025) on the lab traces (lab/sigmask-storm: a wrapper blocking signals
//! around each write, sigsetjmp(env, 1) per write, the mask set once, a critical section every
//! tenth write, under strace 6.1, recorded by record.sh), a shell starting a child per item
//! (lab/spawn-per-task), and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "sigmask-storm";
const DET: &str = "sigmask-storm";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn a_mask_change_around_or_before_each_write_is_named() {
    // (variant, calls, share of the calls): a pair around each write is two thirds, a save
    // before each write half
    for (variant, calls, share) in [("c-wrap", 4000.0, 0.667), ("c-jmp", 2000.0, 0.5)] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            let f = only(DET, &r, &ctx);
            assert_eq!(metric(&f, "calls"), calls, "{ctx}");
            assert!((metric(&f, "share_of_calls") - share).abs() < 0.01, "{ctx}: {f:#?}");
            assert!(f.subject.contains("(mask)"), "{ctx}: {}", f.subject);
            // -f -tt: the native estimate (350 ns a call) against the window strace slowed
            // down is under 1% of it: info; with -T strace's own time in the calls, and without
            // timestamps nothing to weigh against: a warning
            let want = if *set == "f-tt" { Severity::Info } else { Severity::Warning };
            assert_eq!(f.severity, want, "{ctx}: {f:#?}");
        }
    }
}

#[test]
fn the_mask_set_once_and_a_critical_section_are_quiet() {
    for variant in ["c-once", "c-critical"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{variant}.{set}: {:#?}", r.findings);
        }
    }
}

/// bash blocks and restores signals around each fork and wait: 300 children of `date` make
/// 3,906 mask changes, a third of the shell's calls. Named, but as info: under `warn_share`,
/// and what a fix would save there is the children, spawn-per-task's cost.
#[test]
fn a_shell_starting_a_child_per_item_is_at_most_info() {
    for set in SETS {
        let r = analyze(&[&lab_variant("spawn-per-task", "sh-date-each", set)]);
        let f = only(DET, &r, &format!("sh-date-each.{set}"));
        assert_eq!(f.severity, Severity::Info, "{set}: {f:#?}");
        assert!(metric(&f, "share_of_calls") < 0.4, "{set}: {f:#?}");
        assert!(findings(&r, "spawn-per-task").iter().any(|s| s.severity == Severity::Warning), "{set}");
    }
}

#[test]
fn live_mask_pairs_under_strace() {
    need(&["strace", "bash", "cc"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-wrap"), "live c-wrap");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "calls"), 4000.0, "{f:#?}");
    assert!(findings(&run("c-once"), DET).is_empty());
    assert!(findings(&run("c-critical"), DET).is_empty());
}
