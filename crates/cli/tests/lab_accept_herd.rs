//! accept-herd (SL002) on the lab traces (lab/accept-herd: a C pre-fork/pre-thread epoll server,
//! a Python asyncio pre-fork server and nginx under strace 6.1, 100 connections each, recorded
//! by record.sh) and live through run.sh. Counts are checked against the trace text.

use crate::common::*;
use std::path::{Path, PathBuf};
use syslint_report::{Finding, Report, Severity};

const SETS: &[&str] = &["f-tt-T-yy", "f-tt", "f-ttt-T-y"];
const CONNECTIONS: f64 = 100.0;
const WORKERS: f64 = 4.0;

fn trace(variant: &str, set: &str) -> PathBuf {
    lab_variant("accept-herd", variant, set)
}

/// (accept calls, of which EAGAIN) in the trace text; a call split into unfinished/resumed
/// lines counts once, by its resumed half.
fn accepts_in_text(t: &str) -> (f64, f64) {
    let mut calls = 0.0;
    let mut eagain = 0.0;
    for l in t.lines() {
        let done = (l.contains(" accept4(") && !l.ends_with("<unfinished ...>")) || l.contains("<... accept4 resumed>");
        if done {
            calls += 1.0;
            if l.contains(" EAGAIN ") {
                eagain += 1.0;
            }
        }
    }
    (calls, eagain)
}

fn herd(r: &Report) -> Vec<&Finding> {
    findings(r, "accept-herd")
}

/// Every BAD trace: one finding on the shared socket, numbers agreeing with the text.
fn check_bad(ctx: &str, path: &Path, processes: f64) {
    let r = analyze(&[path]);
    let fs = herd(&r);
    assert_eq!(fs.len(), 1, "{ctx}: one shared listening socket: {fs:#?}");
    let f = fs[0];
    assert_eq!(f.code, "SL002");
    let (calls, eagain_text) = accepts_in_text(&read_text(path));
    let accepted = metric(f, "accepted");
    let eagain = metric(f, "eagain");
    assert_eq!(accepted, CONNECTIONS, "{ctx}: every connection accepted once");
    assert_eq!(eagain, eagain_text, "{ctx}: EAGAIN accepts");
    assert_eq!(accepted + eagain, calls, "{ctx}: all accept calls on the listener");
    // every connection woke the idle workers; all but one found nothing
    let empty = metric(f, "empty_wakeups");
    let wakeups = metric(f, "wakeups");
    // a live run on a loaded machine (a parallel test suite) can find workers still busy with
    // the previous connection, so fewer wake-ups are empty than in the recorded traces
    let least = if ctx.starts_with("live") { CONNECTIONS / 2.0 } else { CONNECTIONS };
    assert!((least..=(WORKERS - 1.0) * CONNECTIONS).contains(&empty), "{ctx}: {empty} empty wake-ups");
    assert!(wakeups - empty <= accepted && wakeups >= accepted, "{ctx}: {wakeups} wake-ups, {empty} empty");
    assert!(eagain >= empty, "{ctx}: each empty wake-up failed at least once");
    assert!((metric(f, "wakeups_per_accept") - wakeups / accepted).abs() < 1e-6, "{ctx}");
    assert!((metric(f, "empty_wakeups_per_accept") - empty / accepted).abs() < 1e-6, "{ctx}");
    assert!((metric(f, "eagain_per_accept") - eagain / accepted).abs() < 1e-6, "{ctx}");
    // one wake-up to accept, and at least `least` empty ones over the connections (a loaded
    // machine's live run: 1.5 per accept, the recorded traces 2)
    let per_accept = metric(f, "wakeups_per_accept");
    assert!(per_accept >= 1.0 + least / CONNECTIONS, "{ctx}: {per_accept} wake-ups per accept");
    assert_eq!(metric(f, "workers"), WORKERS, "{ctx}");
    // (live, on a loaded machine, a worker may be busy at every arrival and never woken empty)
    let woken_empty = metric(f, "workers_woken_empty");
    if ctx.starts_with("live") {
        assert!((2.0..=WORKERS).contains(&woken_empty), "{ctx}: {woken_empty} workers woken for nothing");
    } else {
        assert_eq!(woken_empty, WORKERS, "{ctx}");
    }
    assert_eq!(metric(f, "processes"), processes, "{ctx}");
    assert_eq!(metric(f, "reuseport"), 0.0, "{ctx}");
    assert_eq!(metric(f, "epollexclusive"), 0.0, "{ctx}");
    if ctx.contains("-T") {
        let s = metric(f, "eagain_seconds");
        assert!(s > 0.0 && s < 2.0, "{ctx}: {s} s in failing accepts");
    } else {
        assert!(!f.metrics.contains_key("eagain_seconds"), "{ctx}: no -T, no time");
    }
    // more than one empty wake-up per connection, hundreds of them: a warning. A live run on a
    // loaded machine may see fewer than one per connection (above): then the rule says info
    let warn = empty / accepted >= 1.0 && empty >= 100.0;
    assert!(warn || ctx.starts_with("live"), "{ctx}: {empty} empty wake-ups for {accepted} accepts");
    // and the analyzer weighs a warning by its cost: a live run whose failing accepts took under
    // Impact::WARN_SHARE of the traced time (a quiet machine: they fail fast) is info. The
    // recorded traces must stay warnings
    let share = f.impact.as_ref().and_then(|i| i.share);
    let cheap = ctx.starts_with("live") && share.is_some_and(|s| s < syslint_report::Impact::WARN_SHARE);
    let want = if warn && !cheap { Severity::Warning } else { Severity::Info };
    assert_eq!(f.severity, want, "{ctx}: {empty} empty wake-ups, cost share {share:?}");
    assert!(f.subject.starts_with("listening socket 127.0.0.1:"), "{ctx}: {}", f.subject);
    assert!(f.message.starts_with("4 workers share listening socket 127.0.0.1:"), "{ctx}: {}", f.message);
    assert!(f.message.contains("no SO_REUSEPORT, no EPOLLEXCLUSIVE"), "{ctx}");
    assert!(f.evidence.iter().filter(|e| e.contains("EAGAIN")).count() >= 2, "{ctx}: {:?}", f.evidence);
    assert!(f.window.is_some());
    for hint in ["SO_REUSEPORT", "EPOLLEXCLUSIVE", "reuseport", "accept_mutex"] {
        assert!(f.fix.contains(hint), "{ctx}: fix lacks {hint}");
    }
}

#[test]
fn shared_listener_herds_fire_in_every_flag_set() {
    // processes after fork (C, Python asyncio) and threads of one process (C)
    for (variant, processes) in [("c-procs", WORKERS), ("py-shared", WORKERS), ("c-threads", 1.0)] {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            check_bad(&ctx, &trace(variant, set), processes);
        }
    }
}

/// The finding for every listening socket, thresholds at zero: what the detector saw on traces
/// it is quiet on.
fn everything(path: &Path) -> Report {
    let dir = std::env::temp_dir().join(format!("syslint-ah-zero-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // one file per call: tests run in parallel, and rewriting one shared file let another
    // test's syslint read it empty (the defaults then hid the nginx herd: a flaky failure)
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let cfg = dir.join(format!("zero-{}.toml", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    std::fs::write(&cfg, "[accept-herd]\nmin_workers = 1\nmin_empty_wakeups = 0\nmin_empty_per_accept = 0.0\n")
        .unwrap();
    let out = run(&[
        "analyze",
        "--format",
        "json",
        "--select",
        "accept-herd",
        "--config",
        cfg.to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", stderr(&out));
    parse_report(&stdout(&out)).expect("json")
}

/// (variant, listening sockets, EPOLLEXCLUSIVE, SO_REUSEPORT)
const GOOD: &[(&str, usize, f64, f64)] = &[
    ("c-procs-exclusive", 1, 1.0, 0.0),
    ("c-threads-exclusive", 1, 1.0, 0.0),
    ("c-procs-reuseport", 4, 0.0, 1.0),
    ("c-single", 1, 0.0, 0.0),
    ("py-reuseport", 4, 0.0, 1.0),
    // nginx 1.22 with the epoll method and accept_mutex off (the default) registers the shared
    // listener with EPOLLEXCLUSIVE itself
    ("nginx", 1, 1.0, 0.0),
    ("nginx-reuseport", 4, 0.0, 1.0),
    ("nginx-mutex", 1, 0.0, 0.0),
];

#[test]
fn exclusive_reuseport_mutex_and_single_workers_are_quiet() {
    for (variant, sockets, exclusive, reuseport) in GOOD {
        for set in SETS {
            let ctx = format!("{variant}.{set}");
            let p = trace(variant, set);
            let r = analyze(&[&p]);
            assert!(herd(&r).is_empty(), "{ctx}: {:#?}", herd(&r));
            // with every threshold at zero the detector shows what it saw: the same 100
            // connections, next to no empty wake-ups, and the fix that was applied
            let all = everything(&p);
            let fs = herd(&all);
            assert_eq!(fs.len(), *sockets, "{ctx}: listening sockets {fs:#?}");
            let accepted: f64 = fs.iter().map(|f| metric(f, "accepted")).sum();
            let empty: f64 = fs.iter().map(|f| metric(f, "empty_wakeups")).sum();
            assert_eq!(accepted, CONNECTIONS, "{ctx}");
            assert!(empty <= 0.05 * CONNECTIONS, "{ctx}: {empty} empty wake-ups");
            for f in &fs {
                assert_eq!(metric(f, "epollexclusive"), *exclusive, "{ctx}");
                assert_eq!(metric(f, "reuseport"), *reuseport, "{ctx}");
                assert_eq!(f.severity, Severity::Info, "{ctx}");
                if *sockets > 1 {
                    // one socket per worker: nobody shares
                    assert_eq!(metric(f, "workers"), 1.0, "{ctx}");
                }
            }
            let (calls, _) = accepts_in_text(&read_text(&p));
            let seen: f64 = fs.iter().map(|f| metric(f, "accepted") + metric(f, "eagain")).sum();
            assert_eq!(seen, calls, "{ctx}: every accept call belongs to a listening socket");
        }
    }
}

#[test]
fn nginx_workers_share_one_socket_found_through_fork() {
    // the master opens the socket, four workers inherit it: one socket, four processes,
    // with and without -yy
    for set in SETS {
        let all = everything(&trace("nginx", set));
        let f = herd(&all)[0];
        assert_eq!(metric(f, "processes"), WORKERS, "nginx.{set}");
        assert!(metric(f, "workers") >= 2.0, "nginx.{set}");
    }
}

#[test]
fn explain_documents_it() {
    let out = run(&["explain", "SL002"]);
    let s = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    for needle in ["accept-herd", "EPOLLEXCLUSIVE", "SO_REUSEPORT", "reuseport", "min_empty_wakeups", "EAGAIN"] {
        assert!(s.contains(needle), "explain accept-herd lacks {needle}:\n{s}");
    }
}

fn live(variant: &str, flags: &[&str]) -> PathBuf {
    for tool in ["strace", "cc", "python3", "nginx"] {
        assert!(have(tool), "{tool} is missing: scripts/test.sh installs what the live lab tests need");
    }
    let out = std::env::temp_dir().join(format!("syslint-live-ah-{variant}-{}.strace", std::process::id()));
    let st = std::process::Command::new(root().join("lab/accept-herd/run.sh"))
        .arg(variant)
        .arg(&out)
        .args(flags)
        .env("WORKERS", "4")
        .env("CONNECTIONS", "100")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run.sh");
    assert!(st.status.success(), "run.sh {variant} failed: {}", String::from_utf8_lossy(&st.stderr));
    out
}

#[test]
fn live_runs_agree_with_the_fixtures() {
    for (variant, set, flags, processes) in [
        ("c-procs", "f-tt-T-yy", &["-f", "-tt", "-T", "-yy"][..], WORKERS),
        ("py-shared", "f-tt", &["-f", "-tt"][..], WORKERS),
        ("c-threads", "f-ttt-T-y", &["-f", "-ttt", "-T", "-y"][..], 1.0),
    ] {
        let mut p = live(variant, flags);
        if herd(&analyze(&[&p])).is_empty() {
            // under ptrace on a loaded machine (CI with other work on both cores) the workers
            // can all be busy when connections come: no one is woken for nothing. Recorded
            // once more; two runs without a herd fail
            eprintln!("live {variant}: no herd in this run (machine busy?), recording again");
            let _ = std::fs::remove_file(&p);
            p = live(variant, flags);
        }
        check_bad(&format!("live {variant}.{set}"), &p, processes);
        let _ = std::fs::remove_file(&p);
    }
    for (variant, sockets, exclusive, reuseport) in
        GOOD.iter().filter(|g| ["c-procs-exclusive", "nginx", "nginx-reuseport"].contains(&g.0))
    {
        let p = live(variant, &["-f", "-tt", "-T", "-yy"]);
        let r = analyze(&[&p]);
        assert!(herd(&r).is_empty(), "live {variant}: {:#?}", herd(&r));
        let all = everything(&p);
        let fs = herd(&all);
        assert_eq!(fs.len(), *sockets, "live {variant}");
        assert_eq!(fs.iter().map(|f| metric(f, "accepted")).sum::<f64>(), CONNECTIONS, "live {variant}");
        assert!(fs.iter().all(|f| metric(f, "epollexclusive") == *exclusive && metric(f, "reuseport") == *reuseport));
        let _ = std::fs::remove_file(&p);
    }
}
