//! Input handling: compression, stdin, -ff sets, bad input of every kind. Never a panic;
//! a clear one-line message with a location; everything readable still analysed.

use crate::common::*;
use std::io::Write;

fn tmpdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("syslint-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn demo() -> std::path::PathBuf {
    root().join("demo/fetch.strace.gz")
}

fn demo_text() -> Vec<u8> {
    let mut out = Vec::new();
    let f = std::fs::File::open(demo()).unwrap();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(f), &mut out).unwrap();
    out
}

#[test]
fn missing_file_is_a_clear_error() {
    let o = run(&["analyze", "/nonexistent/trace.log"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("/nonexistent/trace.log: no such file or directory"), "{e}");
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    assert!(!e.contains("panicked"));
}

/// An input with no strace line in it is an error naming the file (exit 2), never a clean
/// report of nothing; with several inputs the others are still analysed and reported.
#[test]
fn an_input_that_is_not_a_strace_log_is_an_error() {
    let d = tmpdir("empty");
    let p = d.join("empty.strace");
    std::fs::write(&p, b"").unwrap();
    let o = run(&["analyze", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("syslint: error: ") && stderr(&o).contains("empty.strace: file is empty"));
    assert_eq!(stdout(&o), "");
    let text = d.join("notes.txt");
    std::fs::write(&text, b"hello\nthis is not strace output\n").unwrap();
    let o = run(&["analyze", text.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("notes.txt: no strace lines recognised in 2 lines"), "{}", stderr(&o));
    // with a real trace beside it: its report, and still exit 2 naming the bad one (once)
    let good = fixture("stat1000.tt-T.strace");
    let o = run(&["analyze", "--format", "json", text.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let r = parse_report(&stdout(&o)).unwrap();
    assert!(r.capture.syscalls > 1000, "{}", r.capture.syscalls);
    assert_eq!(stderr(&o).matches("notes.txt: no strace lines").count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("syslint: error: "), "{}", stderr(&o));
    // diff against nothing would call anything an improvement
    let o = run(&["diff", p.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty.strace: file is empty"), "{}", stderr(&o));
}

#[test]
fn binary_garbage_is_an_error_and_does_not_panic() {
    let d = tmpdir("bin");
    let p = d.join("garbage.bin");
    // a system program's bytes: real binary data, NULs and invalid UTF-8 included (not
    // syslint's own, whose documentation holds real strace lines)
    let bytes = std::fs::read("/bin/ls").unwrap();
    std::fs::write(&p, &bytes[..bytes.len().min(2_000_000)]).unwrap();
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("garbage.bin: binary data, not a strace log"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
    let good = fixture("stat1000.tt-T.strace");
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap(), good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let r = parse_report(&stdout(&o)).unwrap();
    assert!(r.capture.unparsed_lines > 0);
    assert!(r.capture.unparsed_samples.iter().all(|u| u.source.ends_with("garbage.bin") && u.line > 0));
    // lines with NUL bytes are lines too: the count is the file's, and never below the unparsed
    let cut = &bytes[..bytes.len().min(2_000_000)];
    let lines = cut.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count() as u64;
    // (the good file's lines come on top)
    assert!(r.capture.lines >= lines, "{} lines, {lines} in the binary file alone", r.capture.lines);
    assert!(
        r.capture.unparsed_lines <= r.capture.lines,
        "{} unparsed of {}",
        r.capture.unparsed_lines,
        r.capture.lines
    );
}

/// Run `args` on a pseudo-terminal (util-linux `script`): what a user at a terminal sees,
/// stdout and stderr together.
fn on_a_terminal(args: &[&str]) -> String {
    let cmd = std::iter::once(bin()).chain(args.iter().copied()).map(|a| format!("'{a}'")).collect::<Vec<_>>();
    let o = std::process::Command::new("script")
        .args(["-qec", &cmd.join(" "), "/dev/null"])
        .env("NO_COLOR", "1")
        .env("COLUMNS", "200")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    stdout(&o)
}

/// Each warning is said once where the user looks: a table on the terminal holds them, so
/// stderr does not repeat them; a report in a pipe or a file does get them on stderr.
#[test]
fn warnings_are_said_once() {
    assert!(have("script"), "script (util-linux) is required");
    let d = tmpdir("once");
    let full = std::fs::read(demo()).unwrap();
    let p = d.join("cut.strace.gz");
    std::fs::write(&p, &full[..full.len() / 2]).unwrap();
    let seen = on_a_terminal(&["analyze", p.to_str().unwrap()]);
    assert_eq!(seen.matches("input ends early").count(), 1, "{seen}");
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(stderr(&o).matches("input ends early").count(), 1, "{}", stderr(&o));
    let f = d.join("r.txt");
    let o = run(&["analyze", "--output-file", f.to_str().unwrap(), p.to_str().unwrap()]);
    assert_eq!(stderr(&o).matches("input ends early").count(), 1, "{}", stderr(&o));
}

/// Columns are dropped only to fit a width someone chose (a terminal, $COLUMNS), and then a
/// line names them; a pipe or a file gets every column.
#[test]
fn tables_never_drop_columns_silently() {
    let t = fixture("stat1000.tt-T.strace");
    let o = std::process::Command::new(bin())
        .args(["analyze", t.to_str().unwrap()])
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = stdout(&o);
    let head = out.lines().find(|l| l.trim_start().starts_with("syscall ")).unwrap();
    for c in ["top errno", "avg", "p50", "p90", "p99", "max"] {
        assert!(head.contains(c), "{c} missing in a pipe: {head}");
    }
    assert!(!out.contains("not shown"), "{out}");
    let o = std::process::Command::new(bin())
        .args(["analyze", t.to_str().unwrap()])
        .env("COLUMNS", "60")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = stdout(&o);
    let head = out.lines().find(|l| l.trim_start().starts_with("syscall ")).unwrap();
    assert!(!head.contains("p90"), "{head}");
    let note = out.lines().find(|l| l.contains("not shown at width 60")).unwrap_or_else(|| panic!("{out}"));
    assert!(note.contains("p90") && note.contains("COLUMNS"), "{note}");
}

#[test]
fn truncated_gzip_keeps_what_was_read() {
    let d = tmpdir("trunc");
    let full = std::fs::read(demo()).unwrap();
    let p = d.join("cut.strace.gz");
    std::fs::write(&p, &full[..full.len() / 2]).unwrap();
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("cut.strace.gz: input ends early after line"), "{e}");
    let r = parse_report(&stdout(&o)).unwrap();
    let whole = analyze(&[&demo()]);
    assert!(r.capture.syscalls > 1000 && r.capture.syscalls < whole.capture.syscalls, "{}", r.capture.syscalls);
}

#[test]
fn gzip_zstd_plain_and_stdin_agree() {
    let text = demo_text();
    let d = tmpdir("comp");
    let plain = d.join("t.strace");
    std::fs::write(&plain, &text).unwrap();
    let zst = d.join("t.strace.zst");
    std::fs::write(&zst, zstd::encode_all(&text[..], 3).unwrap()).unwrap();
    let a = analyze(&[&plain]);
    let b = analyze(&[&zst]);
    let c = analyze(&[&demo()]);
    let o = run_stdin(&["analyze", "--format", "json", "-"], &text);
    let s = parse_report(&stdout(&o)).unwrap();
    for r in [&b, &c, &s] {
        assert_eq!(r.summary.syscalls, a.summary.syscalls);
        assert_eq!(r.capture.lines, a.capture.lines);
    }
    assert_eq!(s.capture.sources, vec!["<stdin>".to_string()]);
}

#[test]
fn broken_pipe_exits_quietly() {
    // a real trace of 300 short-lived processes gives a report larger than a pipe buffer
    let d = tmpdir("pipe");
    let t = d.join("many.strace");
    let st = std::process::Command::new("strace")
        .args(["-f", "-o", t.to_str().unwrap(), "sh", "-c", "for i in $(seq 300); do /bin/true; done"])
        .status()
        .expect("strace is installed (scripts/test.sh installs it)");
    assert!(st.success());
    let mut child = std::process::Command::new(bin())
        .args(["analyze", "--format", "json", t.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let r = analyze(&[&t]);
    // sh, the $(seq 300) subshell, 300 x /bin/true
    assert_eq!(r.summary.processes.len(), 302);
    // more than a pipe buffer (64 KiB), so the writer really meets the closed pipe
    assert!(serde_json::to_string_pretty(&r).unwrap().len() > 64 * 1024);
}

/// Every command that prints (not only the reports): into a pipe whose reader has left before
/// the first byte, each exits 0 without a word (it panicked in `syslint detectors | head -3`).
#[test]
fn every_command_meets_a_closed_pipe_quietly() {
    let schema = ["schema", "report"];
    let commands: [&[&str]; 8] = [
        &["detectors"],
        &["detectors", "--format", "json"],
        &["explain", "stat-storm"],
        &["man"],
        &["completions", "bash"],
        &schema,
        &["--help"],
        &["analyze", "--help"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let o = std::process::Command::new(bin())
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("run syslint");
        assert_eq!(stderr(&o), "", "syslint {args:?}");
        assert_eq!(o.status.code(), Some(0), "syslint {args:?}");
    }
}

#[test]
fn enormous_line_is_cut_not_fatal() {
    let d = tmpdir("huge");
    let p = d.join("huge.strace");
    let mut f = std::fs::File::create(&p).unwrap();
    let text = demo_text();
    let half = text.len() / 2;
    let cut = half + text[half..].iter().position(|&c| c == b'\n').unwrap() + 1;
    f.write_all(&text[..cut]).unwrap();
    f.write_all(&vec![b'x'; 5 << 20]).unwrap();
    f.write_all(b"\n").unwrap();
    f.write_all(&text[cut..]).unwrap();
    drop(f);
    let o = run(&["analyze", "--format", "json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let r = parse_report(&stdout(&o)).unwrap();
    let whole = analyze(&[&demo()]);
    assert_eq!(r.capture.syscalls, whole.capture.syscalls);
    assert_eq!(r.capture.unparsed_lines, 1);
    assert!(r.capture.warnings.iter().any(|w| w.contains("longer than 4 MiB")), "{:?}", r.capture.warnings);
}

/// Issue 29: one real long line (a 17 MiB write() printed whole by `strace -f -tt -T -xx -s
/// 20000000`: 71 MB; tests/fixtures/programs/bigwrite.c) ended the reading after it, as 64 MiB
/// without a strace line, silently (exit 0): 34 of 536 calls read. The line is read as its head
/// and its tail, so the write keeps its result, and every call after it is read, on one core
/// and on several.
#[test]
fn a_long_real_line_is_read_through() {
    let p = fixture("bigwrite.f-tt-T-xx-s20M.strace.gz");
    for threads in ["1", "2"] {
        let o = std::process::Command::new(bin())
            .args(["analyze", "--format", "json"])
            .arg(&p)
            .env("SYSLINT_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let r = parse_report(&stdout(&o)).unwrap();
        assert_eq!(syscall(&r, "getppid").calls, 500, "{threads} threads");
        assert_eq!(syscall(&r, "write").calls, 1);
        let null = r.summary.fd_targets.iter().find(|t| t.target == "/dev/null").expect("/dev/null");
        assert_eq!(null.bytes_written, 17 << 20, "the write's result was kept");
        assert_eq!(r.capture.unparsed_lines, 0, "{:?}", r.capture.unparsed_samples);
        assert!(r.capture.warnings.iter().any(|w| w.contains("longer than 4 MiB")), "{:?}", r.capture.warnings);
        assert!(!r.capture.warnings.iter().any(|w| w.contains("stopped reading")), "{:?}", r.capture.warnings);
    }
}

#[test]
fn help_teaches() {
    let o = run(&["analyze", "--help"]);
    let h = stdout(&o);
    assert!(h.contains("strace -f -tt -T -yy -o app.strace ./app"), "{h}");
    assert!(h.contains("Exit codes"));
}

#[test]
fn unknown_detectors_are_errors() {
    let o = run(&["explain", "no-such-detector"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["analyze", "--select", "no-such-detector", "demo/fetch.strace.gz"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown detector \"no-such-detector\""), "{}", stderr(&o));
}

#[test]
fn diff_of_a_trace_with_itself_is_no_change() {
    let d = root().join("demo/fetch.strace.gz");
    let o = run(&["diff", "--format", "json", d.to_str().unwrap(), d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_doc(stdout(&o)).unwrap();
    assert!(v["verdict"].as_str().unwrap().starts_with("unchanged: wall time and syscalls within"), "{}", v["verdict"]);
    assert_eq!(v["outcome"], "unchanged");
    assert_eq!(v["regression"], false);
    assert_eq!(v["findings"]["fixed"].as_array().unwrap().len(), 0);
    assert_eq!(v["findings"]["new"].as_array().unwrap().len(), 0);
    // the demo's findings (connection churn on the client's and on the server thread's side,
    // repeated lookups) persist, matched across runs
    assert_eq!(v["findings"]["persisting"].as_array().unwrap().len(), 3);
    assert_eq!(v["syscalls"].as_array().unwrap().len(), 0);
    // a whole run is its own unit: its wall time and syscalls compare
    assert!(v["unit"].is_null(), "{v:#}");
    assert_eq!(v["wall_s"]["before"], v["wall_s"]["after"]);
}

#[test]
fn diff_reads_saved_json_reports() {
    let dir = tmpdir("diffjson");
    let before = dir.join("before.json");
    let o = run(&[
        "analyze",
        "--format",
        "json",
        root().join("tests/fixtures/traces/stat1000.tt-T.strace").to_str().unwrap(),
    ]);
    std::fs::write(&before, o.stdout).unwrap();
    let after = root().join("tests/fixtures/traces/stat1000.plain.strace");
    let o = run(&["diff", "--format", "json", before.to_str().unwrap(), after.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_doc(stdout(&o)).unwrap();
    // the same program: calls equal, only the times differ (the plain trace has none)
    let rows = v["syscalls"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["calls_before"] == r["calls_after"]), "{rows:?}");
}

/// Inputs a short fuzzing run of the reader found (issue: hardening): an unterminated quote
/// inside a `-y` decoration made the reader panic; a `-T` duration near u64::MAX made the
/// timeline loop for ever. Neither is what strace prints: they are the hostile input the
/// reader must survive, analysing what it can.
#[test]
fn fuzzer_finds_neither_panic_nor_hang() {
    for input in [&b"read(3<[\"x) = 1"[..], &b"10:00:00.000000 getpid() = 1 <18446744073.709551615>\n"[..]] {
        let o = run_stdin(&["analyze", "--format", "json", "-"], input);
        assert_eq!(o.status.code(), Some(0), "{:?}: {}", String::from_utf8_lossy(input), stderr(&o));
        let r = parse_report(&stdout(&o)).expect("a report");
        assert_eq!(r.capture.syscalls, 1, "{:?}", String::from_utf8_lossy(input));
    }
}

/// Lines the reader cannot read are shown by place, not by content (issue 16): a call cut
/// mid-write keeps its shape with its payload replaced by a length, and text that is not a
/// strace line at all (the program's own output in the log) is left out but for its length.
#[test]
fn unreadable_lines_leak_no_payload_into_reports() {
    let demo = String::from_utf8(demo_text()).unwrap();
    // a real line of the demo, cut inside its payload (as a log cut mid-write ends)
    let line = demo.lines().find(|l| l.contains("sendto(") && l.contains("GET /feed/0")).expect("a request");
    let cut = &line[..line.find("Host:").expect("a Host header") + 10];
    let mut input = demo.clone();
    input.push_str("db password: hunter2-do-not-print\n");
    input.push_str(cut);
    for format in ["json", "table", "markdown", "html"] {
        let o = run_stdin(&["analyze", "--format", format, "-"], input.as_bytes());
        assert!(matches!(o.status.code(), Some(0 | 1)), "{format}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(!out.contains("hunter2"), "{format}: program output leaked");
        assert!(!out.contains("Host: 127"), "{format}: payload leaked");
        if format == "json" {
            let r = parse_report(&out).unwrap();
            assert_eq!(r.capture.unparsed_lines, 2, "{:?}", r.capture.unparsed_samples);
            let s: Vec<&str> = r.capture.unparsed_samples.iter().map(|u| u.text.as_str()).collect();
            assert!(s[0].contains("33 bytes of text that is not a strace line"), "{s:?}");
            assert!(s[1].contains("sendto(") && s[1].contains("bytes…"), "{s:?}");
        }
    }
}

/// Config errors name the file that was given (they once said "syslint.toml" whatever file
/// it was), for analyze, diff and trace alike, with the location TOML knows.
#[test]
fn config_errors_name_the_file_given() {
    let d = tmpdir("config");
    let t = fixture("stat1000.tt-T.strace");
    let t = t.to_str().unwrap();
    let cases = [
        ("unknown-option.toml", "[busy-poll]\nno_such_option = 1\n", "no_such_option"),
        ("unknown-table.toml", "[no-such-detector]\nx = 1\n", "no-such-detector"),
        ("broken.toml", "[busy-poll\n", "line 1"),
    ];
    for (name, text, says) in cases {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        let p = p.to_str().unwrap();
        for args in [
            vec!["analyze", "--config", p, t],
            vec!["diff", "--config", p, t, t],
            vec!["trace", "--config", p, "--", "true"],
        ] {
            let o = run(&args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
            assert!(e.contains(name) && e.contains(says), "{args:?}: {e}");
            assert!(!e.contains("syslint.toml"), "{args:?}: {e}");
        }
    }
    let o = run(&["analyze", "--config", "/nonexistent/mine.toml", t]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/mine.toml"), "{}", stderr(&o));
}

/// Issue 29 item 7: a `./syslint.toml` in the working directory changes thresholds, and the
/// report says so (it was loaded silently: a report shared without it would mislead); so does
/// one given with --config; without either, no note.
#[test]
fn the_report_says_which_config_set_its_thresholds() {
    let d = tmpdir("implicit-config");
    let demo = demo();
    let json = |dir: &std::path::Path, extra: &[&str]| -> serde_json::Value {
        let o = std::process::Command::new(bin())
            .current_dir(dir)
            .args(["analyze", "--format", "json"])
            .args(extra)
            .arg(&demo)
            .output()
            .expect("syslint");
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
        json_doc(&o.stdout).expect("JSON")
    };
    let notes = |v: &serde_json::Value| -> Vec<String> {
        v["capture"]["notes"]
            .as_array()
            .map(|a| a.iter().filter_map(|n| n.as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let plain = json(&d, &[]);
    assert!(!notes(&plain).iter().any(|n| n.contains("thresholds from")), "{:?}", notes(&plain));
    // a threshold that changes the demo's findings: repeated-dns needs far more lookups
    std::fs::write(d.join("syslint.toml"), "[repeated-dns]\nmin_lookups = 1000000\nmin_lookups_unnamed = 1000000\n")
        .unwrap();
    let with = json(&d, &[]);
    // found above the working directory (the input, in the checkout, has none above it)
    let found = format!("config from {}, the nearest above", d.join("syslint.toml").display());
    assert!(notes(&with).iter().any(|n| n.starts_with(&found)), "{:?}", notes(&with));
    let dns = |v: &serde_json::Value| {
        v["findings"].as_array().unwrap().iter().filter(|f| f["detector"] == "repeated-dns").count()
    };
    assert!(dns(&plain) > 0 && dns(&with) == 0, "the config was used");
    let given = d.join("syslint.toml");
    let explicit = json(std::path::Path::new("/"), &["--config", given.to_str().unwrap()]);
    assert!(
        notes(&explicit).iter().any(|n| n == &format!("config from {} (--config)", given.display())),
        "{:?}",
        notes(&explicit)
    );
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 27: a gzipped `.slr` (a CI artifact compressed again) was refused by path, "no strace
/// lines recognised": it is read as the recording it is, by path and on stdin.
#[test]
fn a_gzipped_recording_is_read_by_path_and_on_stdin() {
    use std::io::Write as _;
    let slr = root().join("tests/fixtures/servers/diff/rsync-DEFAULT.slr");
    let plain = analyze(&[&slr]);
    let dir = tmpdir("gzslr");
    let gz = dir.join("rsync.slr.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(&slr).expect("read the recording")).expect("gzip");
    std::fs::write(&gz, e.finish().expect("gzip")).expect("write");
    let by_path = analyze(&[&gz]);
    assert_eq!(by_path.capture.syscalls, plain.capture.syscalls);
    assert_eq!(by_path.capture.backend, "ebpf-recording");
    let o = run_stdin(&["analyze", "--format", "json", "-"], &std::fs::read(&gz).expect("read"));
    let r = parse_report(&stdout(&o)).expect("json");
    assert_eq!(r.capture.syscalls, plain.capture.syscalls, "{}", stderr(&o));
}

/// Issue 29 item 7: a report that cannot be written says which file and why, and leaves nothing
/// behind (a full disk once left a 0-byte file and an error naming no file); `-` is stdout.
#[test]
fn a_report_that_cannot_be_written_names_the_file_and_leaves_none() {
    let demo = demo();
    let demo = demo.to_str().unwrap();
    // a device that is always full: written in place, its name in the error
    let o = run(&["analyze", "--format", "json", "--output-file", "/dev/full", demo]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write /dev/full: No space left on device"), "{}", stderr(&o));
    // a file size limit hit half way (as a full disk would be): no file, no temporary file
    let d = tmpdir("cut-output");
    let out = d.join("report.html");
    // the HTML report written under a 4 KiB file size limit
    let cut_write = || {
        std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f 4; exec {} analyze --format html --output-file {} {demo}",
                bin(),
                out.display()
            ))
            .output()
            .expect("bash")
    };
    let o = cut_write();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("cannot write {}: File too large", out.display())), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // an earlier report of that name stays as it was
    std::fs::write(&out, "the report of yesterday").unwrap();
    let o = cut_write();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "the report of yesterday");
    // written whole: in place, the same as on stdout; `-` is stdout
    std::fs::remove_file(&out).unwrap();
    let o = run(&["analyze", "--format", "json", "--output-file", out.to_str().unwrap(), demo]);
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    let dash = run(&["analyze", "--format", "json", "--output-file", "-", demo]);
    // a recording needs a file: `trace -o -` says so instead of making a file named -
    let o = std::process::Command::new(bin())
        .current_dir(&d)
        .args(["trace", "-o", "-", "-q", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("-o -: a recording needs a file name"), "{}", stderr(&o));
    assert!(!d.join("-").exists(), "a file named -");
    assert!(!std::path::Path::new("-").exists(), "a file named -");
    let to_stdout = run(&["analyze", "--format", "json", demo]);
    assert_eq!(stdout(&dash), stdout(&to_stdout));
    let file = std::fs::read_to_string(&out).unwrap();
    assert_eq!(file.len(), stdout(&to_stdout).len(), "the file holds the whole report");
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "{left:?}");
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 29 item 7: symbolic links inside an `-ff` directory were followed (syslint may run
/// with more rights than whoever made the directory, and a link named like an `-ff` file can
/// point anywhere). They are skipped and the report says which; a link given by name is read.
#[test]
fn links_inside_an_ff_directory_are_not_followed() {
    let d = tmpdir("ff-links");
    for e in std::fs::read_dir(fixture("netio.ff")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    let outside = tmpdir("ff-links-target").join("secret.strace");
    std::fs::write(&outside, std::fs::read(fixture("stat1000.tt-T.strace")).unwrap()).unwrap();
    std::os::unix::fs::symlink(&outside, d.join("trace.999")).unwrap();
    let r = analyze(&[&d]);
    assert_eq!(r.capture.sources.len(), 2, "{:?}", r.capture.sources);
    assert!(
        r.capture.warnings.iter().any(|w| w.contains("trace.999: a symbolic link inside a directory, not followed")),
        "{:?}",
        r.capture.warnings
    );
    assert_eq!(r.summary.processes.len(), analyze(&[&fixture("netio.ff")]).summary.processes.len());
    // by name, it is read
    let by_name = analyze(&[&d.join("trace.999")]);
    assert!(by_name.summary.syscalls.iter().any(|s| s.name == "stat" || s.name == "newfstatat"), "read by name");
    // a directory of links only: an error that says why
    let links = tmpdir("ff-only-links");
    std::os::unix::fs::symlink(&outside, links.join("trace.1")).unwrap();
    let o = run(&["analyze", links.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("directory holds no trace files, only symbolic links"), "{}", stderr(&o));
    // a recording beside -ff text files is not read as text (it was garbage lines): said, and
    // read by name
    let slr = root().join("tests/fixtures/servers/diff/rsync-DEFAULT.slr");
    std::fs::remove_file(d.join("trace.999")).unwrap();
    std::fs::copy(&slr, d.join("run.slr")).unwrap();
    let r = analyze(&[&d]);
    assert_eq!(r.capture.sources.len(), 2, "{:?}", r.capture.sources);
    assert_eq!(r.capture.unparsed_lines, 0);
    assert!(
        r.capture.warnings.iter().any(|w| w.contains("run.slr: a syslint recording, not read with the text files")),
        "{:?}",
        r.capture.warnings
    );
    for p in [&d, &links, &outside.parent().unwrap().to_path_buf()] {
        std::fs::remove_dir_all(p).ok();
    }
}

/// Issue 29 item 7: a recording through a pipe whose writer paused after its first byte was
/// read as text ("no strace lines"), and a cut one on stdin was "empty", where the same file by
/// name says what is wrong. The first bytes are read until there are enough to decide.
#[test]
fn a_recording_on_stdin_is_read_as_by_name() {
    let slr = root().join("tests/fixtures/servers/diff/rsync-DEFAULT.slr");
    let by_name = analyze(&[&slr]);
    // one byte, a pause, the rest
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("(head -c1 {0}; sleep 0.3; tail -c +2 {0}) | {1} analyze --format json -", slr.display(), bin()))
        .output()
        .expect("bash");
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    let piped = parse_report(&stdout(&o)).expect("a report");
    assert_eq!(piped.summary.syscalls.len(), by_name.summary.syscalls.len());
    assert_eq!(piped.findings.len(), by_name.findings.len());
    // cut: its first 5,000 bytes, on stdin as a pipe and as a file, say it is cut
    let d = tmpdir("cut-slr");
    let cut = d.join("cut.slr");
    std::fs::write(&cut, &std::fs::read(&slr).unwrap()[..5000]).unwrap();
    for how in
        [format!("cat {} | {} analyze -", cut.display(), bin()), format!("{} analyze - < {}", bin(), cut.display())]
    {
        let o = std::process::Command::new("bash").arg("-c").arg(&how).output().expect("bash");
        assert_eq!(o.status.code(), Some(2), "{how}");
        assert!(stderr(&o).contains("<stdin>: the compressed stream is damaged or cut short"), "{how}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A report file one may write in a directory one may not (no room for the file written
/// beside it and renamed): written in place, as before.
#[test]
#[cfg_attr(not(syslint_root), ignore = "needs root to run syslint as nobody")]
fn a_writable_report_in_a_locked_directory_is_written_in_place() {
    assert!(have("setpriv"), "setpriv (util-linux) is required");
    let d = tmpdir("locked-dir");
    let out = d.join("report.json");
    std::fs::write(&out, "").unwrap();
    assert!(std::process::Command::new("chown").arg("nobody").arg(&out).status().unwrap().success());
    let o = std::process::Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            bin(),
            "analyze",
            "--format",
            "json",
            "--output-file",
        ])
        .arg(&out)
        .arg(demo())
        .output()
        .unwrap();
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    let r = parse_report(&std::fs::read_to_string(&out).unwrap()).expect("the whole report");
    assert!(!r.summary.syscalls.is_empty());
    std::fs::remove_dir_all(&d).ok();
}
