//! fs-walk-loop (SL023) on the lab traces (lab/fs-walk-loop: Python's os.walk and glob, GNU find
//! and ls over a tree with a link back to its top, under strace 6.1, recorded by record.sh), and
//! live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "fs-walk-loop";
const DET: &str = "fs-walk-loop";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn walks_that_follow_the_cycle_fire() {
    // (variant, looping calls, directories listed again): the same under every flag set, since
    // the paths are all it takes
    for (variant, looping, listings) in [("py-walk-follow", 153.0, 114.0), ("py-glob", 3915.0, 3915.0)] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            // the walk went as deep as the kernel allows: ELOOP at the 41st link
            assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
            assert_eq!(metric(&f, "eloop"), 1.0, "{ctx}");
            assert_eq!(metric(&f, "repeats"), 41.0, "{ctx}");
            assert_eq!(f.metrics["cycle"], "a/up", "{ctx}");
            assert_eq!(metric(&f, "looping_calls"), looping, "{ctx}");
            assert_eq!(metric(&f, "listings"), listings, "{ctx}");
            assert!(f.subject.contains("(python3)"), "{ctx}: {}", f.subject);
            assert!(f.message.contains("until the kernel refused with ELOOP (once)"), "{ctx}: {}", f.message);
            assert!(f.fix.contains("followlinks=False") && f.fix.contains("st_ino"), "{ctx}");
            assert!(
                f.evidence.iter().all(|e| e == "..." || e.contains("tree/a/up/a/up/a/up")),
                "{ctx}: {:#?}",
                f.evidence
            );
        }
    }
}

#[test]
fn walks_that_do_not_follow_or_track_visits_and_near_misses_are_quiet() {
    // os.walk's default, find without -L, GNU find -L (it detects the loop itself), a deep tree
    // without a cycle, and ls -R twice (the same directories listed twice, by name)
    for variant in ["py-walk-nofollow", "find", "find-L", "near-deep", "near-ls-twice"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{variant}.{set}: {:#?}", r.findings);
        }
    }
    // find -L saw the cycle and said so instead of entering it
    let text = read_text(&lab_variant(LAB, "find-L", "f"));
    assert!(text.contains("File system loop detected"), "find -L's message is in its write to stderr");
}

#[test]
fn live_walk_under_strace() {
    need(&["strace", "bash", "find"]);
    assert!(
        std::path::Path::new("/usr/bin/python3").exists(),
        "/usr/bin/python3 is missing: scripts/test.sh installs it"
    );
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("py-walk-follow"), "live py-walk-follow");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "repeats"), 41.0, "{f:#?}");
    assert!(findings(&run("py-walk-nofollow"), DET).is_empty());
    assert!(findings(&run("find-L"), DET).is_empty());
}
