//! futex-contention (SL021) on the lab traces (lab/futex-contention: hot.c and idle.go under
//! strace 6.1, recorded by record.sh), on other labs' multi-threaded programs, and live: run.sh
//! under strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "futex-contention";
const DET: &str = "futex-contention";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

/// futex waits in a trace's text (a call split by strace counts once: its first half).
fn waits_in(path: &std::path::Path) -> f64 {
    read_text(path).lines().filter(|l| l.contains(" futex(") && l.contains("FUTEX_WAIT")).count() as f64
}

#[test]
fn threads_queueing_on_one_mutex_fire() {
    // (set, waits by the lock's threads)
    for (set, waits) in [("f-tt-T-yy", 2156.0), ("f-tt", 1681.0), ("f", 2398.0)] {
        let ctx = format!("c-global.{set}");
        let path = lab_variant(LAB, "c-global", set);
        let r = analyze(&[&path]);
        assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
        let f = only(DET, &r, &ctx);
        assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
        assert_eq!(metric(&f, "waits"), waits, "{ctx}");
        assert_eq!(metric(&f, "locks"), 1.0, "{ctx}");
        assert_eq!(metric(&f, "waiting_threads"), 8.0, "{ctx}");
        assert_eq!(metric(&f, "processes"), 1.0, "{ctx}");
        // every wait on the mutex in the trace is one of the lock's (the barrier's and the join's few are not)
        let all = waits_in(&path);
        assert!(waits <= all && waits >= 0.99 * (all - 10.0), "{ctx}: {waits} of {all}");
        // a wake per wait: each release hands the lock to one waiter
        assert!((0.95..=1.05).contains(&metric(&f, "wakes_per_wait")), "{ctx}: {f:#?}");
        assert!(f.subject.contains("(hot)"), "{ctx}: {}", f.subject);
        assert!(f.message.starts_with("8 threads queue on one lock (0x"), "{ctx}: {}", f.message);
        assert!(f.cost.as_deref().unwrap_or("").contains("a global lock, shard it"), "{ctx}: {:?}", f.cost);
        // time blocked with durations (-T, or strace's split calls with -tt): most of it
        if set.contains("tt") {
            assert!(metric(&f, "blocked_share") >= 0.5, "{ctx}: {f:#?}");
            assert!(metric(&f, "blocked_seconds") > 1.0, "{ctx}: {f:#?}");
        } else {
            assert!(!f.metrics.contains_key("blocked_share"), "{ctx}");
            assert!(f.cost.as_deref().unwrap_or("").contains("time blocked unknown"), "{ctx}");
        }
        assert!(f.fix.contains("shard the state") && f.fix.contains("pthread_cond_signal"), "{ctx}");
        assert!(f.evidence.iter().all(|e| e == "..." || e.contains("futex(0x")), "{ctx}: {:#?}", f.evidence);
    }
}

#[test]
fn sharded_locks_an_idle_pool_and_go_idle_goroutines_are_quiet() {
    for variant in ["c-sharded", "c-pool", "go-idle"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(findings(&r, DET).is_empty(), "{variant}.{set}: {:#?}", r.findings);
            assert!(r.findings.iter().all(|f| f.severity < Severity::Warning), "{variant}.{set}: {:#?}", r.findings);
        }
    }
    // the pool's workers do wait: 25-32 times each on the condition variable
    assert!(waits_in(&lab_variant(LAB, "c-pool", "f-tt-T-yy")) >= 40.0);
}

#[test]
fn a_mutex_held_across_a_sleep_is_contention_at_info() {
    // yield-spin's lab: 8 threads take one pthread mutex 240 times, holding it 500 us: about
    // 210 waits, half or more of the threads' time blocked (below warn_waits: info)
    for set in SETS {
        let ctx = format!("yield-spin c-mutex.{set}");
        let f = only(DET, &analyze(&[&lab_variant("yield-spin", "c-mutex", set)]), &ctx);
        assert_eq!(f.severity, Severity::Info, "{ctx}: {f:#?}");
        assert!(metric(&f, "waits") >= 200.0 && metric(&f, "waiting_threads") >= 7.0, "{ctx}: {f:#?}");
    }
}

#[test]
fn live_hot_mutex_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[]);
    let f = only(DET, &run("c-global"), "live c-global");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(metric(&f, "waits") >= 1000.0 && metric(&f, "waiting_threads") >= 6.0, "{f:#?}");
    assert!(findings(&run("c-sharded"), DET).is_empty());
    assert!(findings(&run("c-pool"), DET).is_empty());
}
