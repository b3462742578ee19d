//! yield-spin (SL010) on the lab traces (lab/yield-spin: lock.c under strace 6.1, recorded by
//! record.sh), on busy-poll's sched_yield() flag loop (lab/busy-poll c-yield, another program),
//! and live: run.sh under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "yield-spin";
const DET: &str = "yield-spin";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

/// sched_yield calls in a trace's text (a call split by strace counts once: its first half).
fn yields_in(path: &std::path::Path) -> f64 {
    read_text(path).lines().filter(|l| l.contains(" sched_yield(")).count() as f64
}

#[test]
fn a_yielding_spinlock_with_more_threads_than_cores_fires() {
    // (set, threads that spun in windows, yields counted)
    for (set, threads, yields) in [("f-tt-T-yy", 7.0, 9412.0), ("f-tt", 7.0, 7327.0), ("f", 8.0, 6915.0)] {
        let ctx = format!("c-spin.{set}");
        let path = lab_variant(LAB, "c-spin", set);
        let r = analyze(&[&path]);
        assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
        assert_eq!(metric(&f, "spinning_threads"), threads, "{ctx}");
        assert_eq!(metric(&f, "yields"), yields, "{ctx}");
        assert_eq!(metric(&f, "processes"), 1.0, "{ctx}");
        // the yields of spinning windows are most of the trace's yields, never more
        let all = yields_in(&path);
        assert!(yields <= all && yields >= 0.9 * all, "{ctx}: {yields} of {all}");
        assert!(f.subject.contains("(lock)"), "{ctx}: {}", f.subject);
        assert!(
            f.message.starts_with(&format!("{} threads spinning on sched_yield(): {} yields", threads, yields)),
            "{ctx}: {}",
            f.message
        );
        // time only with timestamps; time inside the calls only with -T
        assert_eq!(f.metrics.contains_key("spin_seconds"), set.contains("tt"), "{ctx}");
        assert_eq!(f.metrics.contains_key("yield_seconds"), set.contains('T'), "{ctx}");
        if set.contains("tt") {
            assert!(metric(&f, "spin_seconds") >= 0.1, "{ctx}: warning from 0.1 s of spinning");
            assert!(metric(&f, "yields_per_sec") >= 1000.0, "{ctx}");
        } else {
            assert!(f.cost.as_deref().unwrap_or("").contains("time unknown"), "{ctx}");
            assert!(yields >= 5000.0, "{ctx}: warning without timestamps from 5,000 yields");
        }
        assert!(f.fix.contains("pthread_mutex_t") && f.fix.contains("GOMAXPROCS"), "{ctx}");
        assert!(f.evidence.iter().all(|e| e == "..." || e.contains("sched_yield() = 0")), "{ctx}: {:#?}", f.evidence);
    }
}

#[test]
fn a_mutex_and_a_lock_that_yields_then_sleeps_are_quiet() {
    for variant in ["c-mutex", "c-adaptive"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            // no spin; what remains is the lock's queue itself (8 threads on one mutex held
            // 500 us: futex-contention at info, lab_futex_contention.rs), never a warning
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            assert!(
                r.findings.iter().all(|f| f.detector == "futex-contention" && f.severity == Severity::Info),
                "{variant}.{set}: {:#?}",
                r.findings
            );
        }
    }
}

#[test]
fn a_flag_polled_with_sched_yield_is_a_yield_spin_too() {
    // busy-poll's lab: one thread yields until another thread's read() sets a flag
    for set in SETS {
        let ctx = format!("busy-poll c-yield.{set}");
        let path = lab_variant("busy-poll", "c-yield", set);
        let r = analyze(&[&path]);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
        assert_eq!(metric(&f, "spinning_threads"), 1.0, "{ctx}");
        assert!(metric(&f, "yields") >= 0.95 * yields_in(&path), "{ctx}");
        assert!(f.subject.contains("(spin)"), "{ctx}: {}", f.subject);
    }
}

#[test]
fn live_spinlock_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-spin"), "live c-spin");
    // how many yields depends on the scheduler and the machine's load; how long the waiters
    // wait does not (the holder sleeps 500 us under the lock, 240 times)
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(metric(&f, "yields") >= 500.0 && metric(&f, "spinning_threads") >= 2.0, "{f:#?}");
    assert!(metric(&f, "spin_seconds") >= 0.1, "{f:#?}");
    assert!(findings(&run("c-mutex"), DET).is_empty());
    assert!(findings(&run("c-adaptive"), DET).is_empty());
}
