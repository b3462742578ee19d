//! timer-polling (SL012) on the lab traces (lab/timer-polling: timer.c and CPython's
//! Popen.wait(timeout=...) under strace 6.1, recorded by record.sh) and live: run.sh under
//! strace again.

use crate::common::*;
use syslint_report::Severity;

const LAB: &str = "timer-polling";
const DET: &str = "timer-polling";
/// -f -tt -T -yy, -f -tt, -f
const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f"];

/// Lines of a trace that hold `a` and `b`.
fn lines_with(path: &std::path::Path, a: &str, b: &str) -> f64 {
    read_text(path).lines().filter(|l| l.contains(a) && l.contains(b)).count() as f64
}

#[test]
fn a_20_ms_select_loop_and_a_child_polled_every_20_ms_are_warnings() {
    for (variant, kind) in [("c-select20", "poll_timeouts"), ("c-wait20", "child_polls")] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let path = lab_variant(LAB, variant, set);
            let r = analyze(&[&path]);
            assert_eq!(r.findings.len(), 1, "{ctx}: only this detector fires: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Warning, "{ctx}: {f:#?}");
            // every empty wake-up of the trace is a tick (about 100 in 2 s, fewer under load)
            let in_text = if variant == "c-select20" {
                lines_with(&path, "= 0 (Timeout)", "")
            } else {
                lines_with(&path, "WNOHANG, NULL) = 0", "")
            };
            assert!(in_text >= 80.0, "{ctx}: {in_text}");
            assert_eq!(metric(&f, "ticks"), in_text, "{ctx}");
            assert_eq!(metric(&f, kind), in_text, "{ctx}");
            assert_eq!(metric(&f, "period_ms"), 20.0, "{ctx}");
            assert_eq!(metric(&f, "idle_runs"), 1.0, "{ctx}");
            let rate = metric(&f, "wakeups_per_sec");
            assert!((40.0..=51.0).contains(&rate), "{ctx}: {rate}");
            assert!(metric(&f, "idle_seconds") >= 1.5, "{ctx}");
            assert!(f.subject.contains("(timer)"), "{ctx}: {}", f.subject);
            assert!(f.fix.contains("pidfd") && f.fix.contains("timerfd"), "{ctx}");
            assert!(f.cost.as_deref().unwrap_or("").contains("up to 20 ms late"), "{ctx}");
        }
    }
}

#[test]
fn blocking_on_the_event_and_a_busy_server_are_quiet() {
    for variant in ["c-block", "c-pidfd", "c-server20"] {
        for set in SETS {
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert!(r.findings.is_empty(), "{variant}.{set}: {:#?}", r.findings);
        }
    }
    // the server did time out, between its reads
    let p = lab_variant(LAB, "c-server20", "f-tt-T-yy");
    assert!(lines_with(&p, "= 0 (Timeout)", "") >= 30.0);
}

#[test]
fn a_100_ms_tick_and_python_waiting_with_a_timeout_are_info() {
    for (variant, period) in [("c-tick100", Some(100.0)), ("py-wait", Some(50.0))] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let r = analyze(&[&lab_variant(LAB, variant, set)]);
            assert_eq!(r.findings.len(), 1, "{ctx}: {:#?}", r.findings);
            let f = only(DET, &r, &ctx);
            assert_eq!(f.severity, Severity::Info, "{ctx}: {f:#?}");
            // CPython's absolute sleeps (TIMER_ABSTIME) have no length to read: the period is the
            // time between checks, unknown without timestamps
            let want = if variant == "py-wait" && *set == "f" { None } else { period };
            assert_eq!(f.metrics.get("period_ms").and_then(serde_json::Value::as_f64), want, "{ctx}");
        }
    }
}

#[test]
fn live_timer_polling_under_strace() {
    need(&["strace", "cc", "bash"]);
    let run = |variant: &str| live_lab(LAB, variant, &["-f", "-tt", "-T", "-yy"], &[("DELAY_MS", "2500")]);
    let f = only(DET, &run("c-wait20"), "live c-wait20");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(metric(&f, "period_ms"), 20.0);
    assert!(findings(&run("c-pidfd"), DET).is_empty());
    assert!(findings(&run("c-server20"), DET).is_empty());
}
