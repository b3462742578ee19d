//! Today's strace (7.x, Debian sid's) in the forms 6.1 cannot write: `-N`/`--arg-names`,
//! `--color=always`, and lines a collector prefixed (moreutils `ts`). The fixtures in
//! tests/fixtures/strace7 were recorded by its record.sh with strace 7.2 from lab programs;
//! each form must read as the plain form does: the same findings with the same numbers, the
//! same summary, nothing unparsed, and the header saying what was taken away.

use crate::common::*;
use std::path::PathBuf;
use syslint_report::{Report, Severity};

const FORMS: &[&str] = &["N", "color", "ts", "N-color-ts"];

fn trace(program: &str, form: &str) -> PathBuf {
    root().join(format!("tests/fixtures/strace7/{program}.{form}.strace.gz"))
}

/// What a report says that does not depend on timing: the calls per syscall with their
/// errors, the files and sockets with their calls and bytes, the processes' programs (sorted:
/// the tables' order follows the time spent).
fn shape(r: &Report) -> Vec<String> {
    let mut s = Vec::new();
    for c in &r.summary.syscalls {
        s.push(format!("{} {} {} {:?}", c.name, c.calls, c.errors, c.errnos));
    }
    for t in &r.summary.fd_targets {
        s.push(format!("{} {:?} {} {} {} {}", t.target, t.kind, t.calls, t.errors, t.bytes_read, t.bytes_written));
    }
    for p in &r.summary.processes {
        s.push(format!("{:?} {} {}", p.comm, p.calls, p.errors));
    }
    s.sort();
    s
}

fn notes(r: &Report) -> String {
    r.capture.notes.join("\n")
}

#[test]
fn every_form_of_a_deterministic_run_reads_as_the_plain_form() {
    // localtime() without TZ: 24,999 stats of /etc/localtime in every run
    let plain = analyze(&[&trace("stat-storm", "plain")]);
    assert_eq!(plain.capture.unparsed_lines, 0);
    assert!(plain.capture.notes.is_empty(), "{:?}", plain.capture.notes);
    let f = findings(&plain, "stat-storm");
    assert_eq!(f.len(), 1, "{:#?}", plain.findings);
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(metric(f[0], "lookups"), 24_999.0);
    for form in FORMS {
        let r = analyze(&[&trace("stat-storm", form)]);
        assert_eq!(r.capture.unparsed_lines, 0, "{form}: {:?}", r.capture.unparsed_samples);
        assert_eq!(r.capture.syscalls, plain.capture.syscalls, "{form}");
        assert_eq!(shape(&r), shape(&plain), "{form}");
        let ids = |r: &Report| r.findings.iter().map(|f| (f.detector.clone(), f.severity)).collect::<Vec<_>>();
        assert_eq!(ids(&r), ids(&plain), "{form}");
        let g = findings(&r, "stat-storm");
        for k in ["lookups", "distinct_paths", "repeated", "hot_paths"] {
            assert_eq!(g[0].metrics.get(k), f[0].metrics.get(k), "{form}: {k}");
        }
        assert_eq!(g[0].metrics["top_paths"], f[0].metrics["top_paths"], "{form}");
        // the header says what the reader took away, and only that
        let n = notes(&r);
        assert_eq!(n.contains("--arg-names"), form.contains('N'), "{form}: {n}");
        assert_eq!(n.contains("colour"), form.contains("color"), "{form}: {n}");
        assert_eq!(n.contains("moreutils' ts"), form.contains("ts"), "{form}: {n}");
        // evidence is shown in the plain form: no escape byte reaches a report
        for e in &g[0].evidence {
            assert!(!e.contains('\u{1b}') && !e.contains("pathname="), "{form}: {e}");
        }
    }
}

#[test]
fn a_busy_poll_is_named_in_every_form_with_its_arguments_read() {
    // the zero timeout is an argument: with -N's names left in place it was not seen (issue 28)
    for form in ["plain", "N", "color", "ts", "N-color-ts"] {
        let r = analyze(&[&trace("busy-poll", form)]);
        assert_eq!(r.capture.unparsed_lines, 0, "{form}: {:?}", r.capture.unparsed_samples);
        let f = findings(&r, "busy-poll");
        assert_eq!(f.len(), 1, "{form}: {:#?}", r.findings);
        assert_eq!(f[0].severity, Severity::Warning, "{form}");
        assert!(metric(f[0], "calls") > 1000.0, "{form}: {:?}", f[0].metrics);
        assert!(
            f[0].message.contains("zero timeout") && f[0].message.contains("127.0.0.1:"),
            "{form}: {}",
            f[0].message
        );
        assert!(
            f[0].evidence.iter().any(|e| e.contains("poll([{fd=3<TCP:[127.0.0.1:") && e.ends_with("= 0 (Timeout)")
                || e.contains("= 0 (Timeout) <")),
            "{form}: {:#?}",
            f[0].evidence
        );
        // the socket is known by its endpoint, as in the plain form
        assert!(r.summary.fd_targets.iter().any(|t| t.target.starts_with("127.0.0.1:")), "{form}");
    }
}

#[test]
fn strace_7_plain_output_gives_what_strace_6_1_gave() {
    // the same program recorded with strace 6.1 (lab/stat-storm/traces) and 7.2
    let old = analyze(&[&lab_variant("stat-storm", "c-localtime", "f-tt-T-yy")]);
    let new = analyze(&[&trace("stat-storm", "plain")]);
    let (o, n) = (findings(&old, "stat-storm"), findings(&new, "stat-storm"));
    assert_eq!((o.len(), n.len()), (1, 1));
    assert_eq!(o[0].severity, n[0].severity);
    for k in ["lookups", "distinct_paths"] {
        assert_eq!(o[0].metrics.get(k), n[0].metrics.get(k), "{k}");
    }
    let calls = |r: &Report, name: &str| r.summary.syscalls.iter().find(|s| s.name == name).map(|s| s.calls);
    assert_eq!(calls(&old, "newfstatat"), calls(&new, "newfstatat"));
}

/// The newest strace for real (Debian sid's, through scripts/strace-sid.sh, which
/// scripts/test.sh prepares): the same deterministic program in the plain and the `-N
/// --color=always` form gives the same stat-storm finding with the same numbers.
#[test]
fn live_the_newest_strace_named_and_coloured_reads_as_plain() {
    let sid = root().join("scripts/strace-sid.sh");
    let v = std::process::Command::new(&sid).arg("-V").output().expect("strace-sid.sh");
    assert!(v.status.success(), "scripts/strace-sid.sh -V: {} (scripts/test.sh makes its tree)", stderr(&v));
    let version = stdout(&v);
    assert!(version.contains("version 7.") || version.contains("version 8."), "{version}");
    let run = |extra: &[&str]| {
        let out =
            std::env::temp_dir().join(format!("syslint-live-strace7-{}-{}.strace", std::process::id(), extra.len()));
        let o = std::process::Command::new("bash")
            .arg(root().join("lab/stat-storm/run.sh"))
            .arg("c-localtime")
            .arg(&out)
            .args(["-f", "-tt", "-T", "-yy"])
            .args(extra)
            .env("STRACE", &sid)
            .env("LINES", "6000")
            .output()
            .expect("run.sh");
        assert!(o.status.success(), "run.sh {extra:?}: {}", stderr(&o));
        let r = analyze(&[&out]);
        std::fs::remove_file(&out).ok();
        r
    };
    let plain = run(&[]);
    let named = run(&["-N", "--color=always"]);
    assert_eq!(named.capture.unparsed_lines, 0, "{:?}", named.capture.unparsed_samples);
    assert!(notes(&named).contains("--arg-names") && notes(&named).contains("colour"), "{}", notes(&named));
    assert_eq!(shape(&named), shape(&plain));
    let (p, n) = (findings(&plain, "stat-storm"), findings(&named, "stat-storm"));
    assert_eq!((p.len(), n.len()), (1, 1), "{:#?} {:#?}", plain.findings, named.findings);
    assert_eq!(metric(p[0], "lookups"), 5999.0);
    assert_eq!(metric(n[0], "lookups"), 5999.0);
    assert_eq!(p[0].severity, n[0].severity);
}

/// Lines a real syslog daemon prefixed (tests/fixtures/collectors/record.sh: one strace run of
/// stat1000 sent through logger to a private rsyslogd, written in the traditional format and in
/// RFC 3339 form): both read as the same run, every line, with the prefix named.
#[test]
fn lines_a_syslog_daemon_prefixed_read_as_the_run() {
    let dir = root().join("tests/fixtures/collectors");
    let old = analyze(&[&dir.join("stat1000.syslog.strace.gz")]);
    let iso = analyze(&[&dir.join("stat1000.rfc3339.strace.gz")]);
    for (r, kind) in [(&old, "syslog or journal prefix (`Nov"), (&iso, "ISO 8601 time")] {
        assert_eq!(r.capture.unparsed_lines, 0, "{:?}", r.capture.unparsed_samples);
        assert!(notes(r).contains(kind), "{}", notes(r));
        // stat1000: 1,000 stats of a missing path
        let s = r.summary.syscalls.iter().find(|s| s.name == "newfstatat").expect("newfstatat");
        assert_eq!(s.errors, 1000);
    }
    assert_eq!(shape(&old), shape(&iso));
    assert_eq!(old.capture.syscalls, iso.capture.syscalls);
}
