//! Payload bytes never reach a report (issue 16, secrets): a real program
//! (tests/fixtures/programs/secrets.py) sends an `Authorization: Bearer` token over loopback,
//! receives a session cookie and writes a `password=` form field to a file. Every output of
//! syslint about it — table, JSON, Markdown and HTML reports, diffs, the Perfetto trace of
//! `export --format perfetto`, and the strace text `export` writes from an eBPF recording —
//! must show none of them.

use crate::common::*;
use std::path::Path;

/// What the program moved that nobody else may read.
const SECRETS: &[&str] = &["sk-test-SECRET-TOKEN", "hunter2-SECRET", "SECRET-COOKIE", "Bearer sk-"];

fn assert_clean(what: &str, out: &str) {
    for s in SECRETS {
        assert!(!out.contains(s), "{what} shows {s:?}");
    }
}

/// Every report format of `input`, and its diff with itself in every diff format.
fn check_reports(input: &Path) {
    let p = input.to_str().expect("path");
    for format in ["table", "json", "markdown", "html"] {
        let o = run(&["analyze", "--format", format, p]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{format}: {}", stderr(&o));
        assert!(stdout(&o).len() > 200, "{format}: no report");
        assert_clean(&format!("analyze --format {format}"), &stdout(&o));
        assert_clean(&format!("analyze --format {format} (stderr)"), &stderr(&o));
        let d = run(&["diff", "--format", format, p, p]);
        assert!(matches!(d.status.code(), Some(0 | 1)), "diff {format}: {}", stderr(&d));
        assert_clean(&format!("diff --format {format}"), &stdout(&d));
    }
    // the Perfetto trace: every call's arguments, as evidence shows them
    let o = run(&["export", "--format", "perfetto", p]);
    assert_eq!(o.status.code(), Some(0), "export --format perfetto: {}", stderr(&o));
    assert!(stdout(&o).contains("\"name\":\"sendto\""), "the Perfetto trace lost the calls");
    assert_clean("export --format perfetto", &stdout(&o));
}

#[test]
fn no_report_of_a_strace_log_shows_the_secrets() {
    let log = fixture("secrets.f-tt-T-yy-s512.strace");
    // the log itself holds them (strace -s 512): the test is about syslint's outputs
    let text = read_text(&log);
    for s in SECRETS {
        assert!(text.contains(s), "the fixture lost {s:?}");
    }
    check_reports(&log);
}

#[test]
#[cfg_attr(not(syslint_bpf), ignore = "needs root and a kernel with BTF (eBPF)")]
fn no_report_of_an_ebpf_recording_nor_its_export_shows_the_secrets() {
    assert_bpf_works("the secrets test");
    let dir = std::env::temp_dir().join(format!("syslint-secrets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let slr = dir.join("s.slr");
    let prog = root().join("tests/fixtures/programs/secrets.py");
    let o = run(&[
        "trace",
        "--backend",
        "ebpf",
        "-o",
        slr.to_str().expect("path"),
        "--",
        "python3",
        prog.to_str().expect("path"),
    ]);
    assert!(slr.exists(), "no recording: {}", stderr(&o));
    assert_clean("trace (stdout)", &stdout(&o));
    assert_clean("trace (stderr)", &stderr(&o));
    check_reports(&slr);
    let e = run(&["export", slr.to_str().expect("path")]);
    assert!(e.status.success(), "export: {}", stderr(&e));
    assert!(stdout(&e).contains("sendto("), "export lost the calls");
    assert_clean("export", &stdout(&e));
    // the recording does hold payload prefixes (the detectors read DNS names from them):
    // only an explicit --payloads shows them, so this test can fail
    let raw = run(&["export", "--payloads", slr.to_str().expect("path")]);
    assert!(stdout(&raw).contains("SECRET"), "export --payloads shows no payload at all");
    let _ = std::fs::remove_dir_all(&dir);
}
