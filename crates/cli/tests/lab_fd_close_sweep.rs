//! fd-close-sweep (SL009) on the lab traces (lab/fd-close-sweep: sweep.c under strace 6.1,
//! recorded by record.sh) and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "fd-close-sweep";
const DET: &str = "fd-close-sweep";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

#[test]
fn closing_every_fd_up_to_the_limit_is_a_warning() {
    for variant in ["c-close", "c-fcntl"] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}");
            // 7 children, each sweeping fds 3..16383: all but the 5 that were open fail
            assert_eq!(metric(&f, "sweeps"), 7.0, "{ctx}");
            assert_eq!(metric(&f, "ebadf"), 114_632.0, "{ctx}");
            assert_eq!(metric(&f, "largest_sweep"), 16_376.0, "{ctx}");
            assert_eq!(metric(&f, "highest_fd"), 16_383.0, "{ctx}");
            assert_eq!(metric(&f, "processes"), 7.0, "{ctx}");
            assert!(f.subject.starts_with("7 processes of sweep"), "{ctx}: {}", f.subject);
            let call = if variant == "c-close" { "114632 close calls" } else { "114632 fcntl(F_GETFD) calls" };
            assert!(f.message.starts_with(call), "{ctx}: {}", f.message);
            // durations only with -T, and then the cost says they were measured as traced
            assert_eq!(f.metrics.contains_key("seconds"), set.contains('T'), "{ctx}");
            let cost = f.cost.as_deref().unwrap_or("");
            assert!(cost.contains(if set.contains('T') { "as traced" } else { "time unknown" }), "{ctx}: {cost}");
            assert!(f.fix.contains("close_range") && f.fix.contains("/proc/self/fd"), "{ctx}");
            assert!(f.evidence.iter().any(|e| e.contains("EBADF")), "{ctx}: {:#?}", f.evidence);
        }
    }
}

#[test]
fn close_range_proc_fd_and_a_few_closes_are_quiet() {
    for variant in ["c-range", "c-procfd", "c-few"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(r.findings.is_empty(), "{variant}.{set}: {:#?}", r.findings);
        }
    }
}

/// The hard nofile limit here (the lab cannot set a soft limit above it).
fn hard_nofile() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("a nofile line");
    match line.split_whitespace().nth(4) {
        Some("unlimited") | None => u64::MAX,
        Some(n) => n.parse().expect("a number"),
    }
}

#[test]
fn live_sweep_under_strace() {
    need(&["strace", "cc", "bash"]);
    // one child sweeping up to 6,000 (the full lab takes seconds under strace: ~50 us a call)
    let limit = hard_nofile().min(6000);
    assert!(limit > 4096 + 100, "a hard nofile limit of {limit} is too low for this test");
    let run =
        |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("NOFILE", "6000"), ("SPAWNS", "1")]);
    let f = only(DET, &run("c-close"), "live c-close");
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(metric(&f, "sweeps"), 1.0);
    assert_eq!(metric(&f, "highest_fd"), (limit - 1) as f64);
    // fds 3..limit-1, less the few the child inherited open
    let swept = (limit - 3) as f64;
    let ebadf = metric(&f, "ebadf");
    assert!(ebadf <= swept && ebadf >= swept - 20.0, "{ebadf} of {swept}");
    assert!(findings(&run("c-range"), DET).is_empty());
}
