//! Process models (tests/fixtures/servers/procmodel/, recorded by its scripts): issue 27, "a
//! process (or fork) per connection or per job, with or without exec ... costed like the churn
//! they are". Each BEFORE is a real program forking a copy per job or connection; its AFTER is the
//! same program with a kept worker, and must stay quiet. The cost is held to the native loss
//! measured back to back (the scripts' *.native.txt): within 2x, per job or connection.

use crate::common::*;
use syslint_report::Severity;

fn dir() -> std::path::PathBuf {
    root().join("tests/fixtures/servers/procmodel")
}

/// (BEFORE, AFTER, program that forks, forked copies in the window at least, native loss per
/// job or connection in ms, from the *.native.txt beside them)
const CASES: &[(&str, &str, &str, f64, f64)] = &[
    // RQ's default Worker forks a work-horse per job: 21.5 ms wall, 23.3 ms CPU more per job
    ("rq-fork", "rq-simple", "rq", 190.0, 23.3),
    // pgbench -C: the postmaster forks a backend per connection: 9.4 ms server CPU more
    ("pg-backend-per-conn", "pg-pooled", "postgres", 80.0, 9.4),
    // socketserver.ForkingTCPServer: 2.9 ms server CPU more per connection than threads
    ("socketserver-fork", "socketserver-thread", "python3", 150.0, 2.9),
];

#[test]
fn a_forked_copy_per_job_or_connection_is_named_and_costed_near_its_native_loss() {
    for (before, after, comm, least, native_ms) in CASES {
        let r = analyze(&[&dir().join(format!("{before}.slr"))]);
        let fs = findings(&r, "spawn-per-task");
        assert_eq!(fs.len(), 1, "{before}: {fs:#?}");
        let f = fs[0];
        assert_eq!(f.severity, Severity::Warning, "{before}: {f:#?}");
        assert!(f.message.contains(&format!("forked copies of {comm} (no exec)")), "{before}: {}", f.message);
        let n = metric(f, "spawns");
        assert!(n >= *least, "{before}: {n} forked copies");
        // the cost: busy time per copy within 2x of the native loss per job or connection
        let per_ms = metric(f, "forked_busy_s") * 1e3 / n;
        assert!(
            per_ms > native_ms / 2.0 && per_ms < native_ms * 2.0,
            "{before}: {per_ms:.2} ms per copy against {native_ms} ms natively"
        );
        let share = f.impact.as_ref().and_then(|i| i.share).unwrap_or(0.0);
        assert!(share >= 0.05, "{before}: a warning claims a material share: {share}");
        // the program's own advice leads (PostgreSQL's pool, RQ's SimpleWorker), the rest folds away
        assert!(f.fix_for.is_some(), "{before}: {f:#?}");
        let every = format!("{} {}", f.fix, f.fix_elsewhere.as_deref().unwrap_or(""));
        assert!(every.contains("SimpleWorker") && every.contains("PgBouncer"), "{before}: {every}");
        assert!(f.fix.contains(if *comm == "postgres" { "PgBouncer" } else { "SimpleWorker" }), "{before}: {}", f.fix);
        // the kept worker: no forked copies
        let r = analyze(&[&dir().join(format!("{after}.slr"))]);
        assert!(findings(&r, "spawn-per-task").is_empty(), "{after}: {:#?}", findings(&r, "spawn-per-task"));
    }
}

/// Connections passed between processes: a Node cluster in round-robin mode accepts every
/// connection in the primary and hands it to a worker over the IPC socket (the recording keeps
/// no SCM_RIGHTS: the primary's sendmsg on a unix socket between the accept and a close with no
/// I/O says it). Natively 164 us wall (298 us CPU) more per connection than the workers
/// accepting themselves (SCHED_NONE), which must not be called a hand-over.
#[test]
fn connections_handed_between_processes_are_named_and_costed() {
    let r = analyze(&[&dir().join("node-cluster-rr.slr")]);
    let fs = findings(&r, "connection-churn");
    let f = fs.iter().find(|f| f.subject.ends_with("(accepted, handed over)")).unwrap_or_else(|| panic!("{fs:#?}"));
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(metric(f, "handed_over") >= 1000.0 && metric(f, "handed_over") == metric(f, "connections"), "{f:#?}");
    let us = metric(f, "handover_us");
    // within 2x of the native loss per connection (wall 164 us, CPU 298 us)
    assert!(us > 164.0 / 2.0 && us < 164.0 * 2.0, "{us} us per hand-over");
    assert_eq!(f.fix_for.as_deref(), Some("Node.js"), "{f:#?}");
    assert!(f.fix.contains("SCHED_NONE"), "{}", f.fix);
    let r = analyze(&[&dir().join("node-cluster-none.slr")]);
    assert!(
        findings(&r, "connection-churn")
            .iter()
            .all(|f| !f.subject.contains("handed over") && f.severity == Severity::Info),
        "{:#?}",
        findings(&r, "connection-churn")
    );
}
