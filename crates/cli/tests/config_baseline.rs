//! Issue 30 item 2: config discovery (ruff's: the nearest syslint.toml above the input, else
//! above the working directory, else the user-level file; --config, --isolated), `select`,
//! `ignore`, `fail-on` in the file, and baselines of accepted findings. Recorded lab traces only.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syslint-test-cfg-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// syslint run in `cwd` with `XDG_CONFIG_HOME` set to `xdg`.
fn run_in(cwd: &Path, xdg: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", xdg)
        .stdin(Stdio::null())
        .output()
        .expect("run syslint")
}

fn json_of(o: &Output) -> serde_json::Value {
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("JSON: {e}: {}", stderr(o)))
}

fn detectors_found(v: &serde_json::Value) -> Vec<String> {
    v["findings"].as_array().unwrap().iter().map(|f| f["detector"].as_str().unwrap().to_string()).collect()
}

fn notes(v: &serde_json::Value) -> Vec<String> {
    v["capture"]["notes"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// The busy-poll lab's C program spinning on poll(..., 0): one busy-poll warning about `spin`.
fn spin() -> PathBuf {
    lab_variant("busy-poll", "c-poll0", "f-tt-T-yy")
}

/// A project tree with the recorded trace deep inside: `proj/sub/deep/spin.strace.gz`.
fn tree(tag: &str) -> (PathBuf, PathBuf) {
    let d = tmpdir(tag);
    let deep = d.join("proj/sub/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let t = deep.join("spin.f-tt-T-yy.strace.gz");
    std::fs::copy(spin(), &t).unwrap();
    std::fs::create_dir_all(d.join("xdg")).unwrap();
    (d, t)
}

#[test]
fn config_is_found_above_the_input_and_the_nearest_wins() {
    let (d, t) = tree("walk");
    let (xdg, t) = (d.join("xdg"), t.to_str().unwrap().to_string());
    let cwd = d.join("xdg"); // a working directory with no config above it
    let analyze = |extra: &[&str]| {
        let mut args = vec!["analyze", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(&t);
        run_in(&cwd, &xdg, &args)
    };
    // no config: the warning, exit 1, no note
    let o = analyze(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(detectors_found(&v), ["busy-poll"]);
    assert!(!notes(&v).iter().any(|n| n.contains("config from")), "{:?}", notes(&v));

    // a config two directories above the input applies
    let top = d.join("proj/syslint.toml");
    std::fs::write(&top, "ignore = [\"busy-poll\"]\n").unwrap();
    let o = analyze(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_of(&o);
    assert!(detectors_found(&v).is_empty(), "{v}");
    assert!(notes(&v).iter().any(|n| n.starts_with(&format!("config from {}, the nearest above", top.display()))));

    // a nearer one wins, whole (no merging): busy-poll runs again, and fail-on = "error" from
    // the file lets its warning pass
    let near = d.join("proj/sub/.syslint.toml");
    std::fs::write(&near, "fail-on = \"error\"\n").unwrap();
    let o = analyze(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(detectors_found(&v), ["busy-poll"]);
    assert!(notes(&v).iter().any(|n| n.starts_with(&format!("config from {}", near.display()))), "{:?}", notes(&v));
    // the flag overrides the file's fail-on
    assert_eq!(analyze(&["--fail-on", "warning"]).status.code(), Some(1));

    // --config overrides discovery; --isolated (--no-config) reads none
    let other = d.join("other.toml");
    std::fs::write(&other, "select = [\"yield-spin\"]\n").unwrap();
    let o = analyze(&["--config", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_of(&o);
    assert!(detectors_found(&v).is_empty());
    assert!(notes(&v).contains(&format!("config from {} (--config)", other.display())), "{:?}", notes(&v));
    // select from the file, replaced by the flag
    assert_eq!(
        detectors_found(&json_of(&analyze(&["--config", other.to_str().unwrap(), "--select", "SL001"]))),
        ["busy-poll"]
    );
    for flag in ["--isolated", "--no-config"] {
        let o = analyze(&[flag]);
        assert_eq!(o.status.code(), Some(1), "{flag}: {}", stderr(&o));
        assert!(!notes(&json_of(&o)).iter().any(|n| n.contains("config from")));
    }
    // they contradict each other
    assert_eq!(analyze(&["--isolated", "--config", other.to_str().unwrap()]).status.code(), Some(2));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_user_level_file_is_used_only_when_no_project_file_is_found() {
    let (d, t) = tree("user");
    let xdg = d.join("xdg");
    std::fs::create_dir_all(xdg.join("syslint")).unwrap();
    let user = xdg.join("syslint/syslint.toml");
    std::fs::write(&user, "ignore = [\"SL001\"]\n").unwrap();
    let t = t.to_str().unwrap();
    let o = run_in(&xdg, &xdg, &["analyze", "--format", "json", t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json_of(&o);
    assert!(detectors_found(&v).is_empty());
    assert!(notes(&v).iter().any(|n| n.starts_with(&format!("config from {}, the user-level file", user.display()))));
    // a project file wins, and the user's ignore is not merged into it
    std::fs::write(d.join("proj/syslint.toml"), "[busy-poll]\n").unwrap();
    let o = run_in(&xdg, &xdg, &["analyze", "--format", "json", t]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(detectors_found(&json_of(&o)), ["busy-poll"]);
    // --isolated ignores the user file too
    std::fs::remove_file(d.join("proj/syslint.toml")).unwrap();
    assert_eq!(run_in(&xdg, &xdg, &["analyze", "--isolated", t]).status.code(), Some(1));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn errors_in_the_new_keys_name_the_file_key_and_position() {
    let (d, t) = tree("keys");
    let xdg = d.join("xdg");
    let cfg = d.join("proj/syslint.toml");
    for (text, says) in [
        ("fail-on = \"loud\"\n", "line 1, column 11: fail-on"),
        ("select = \"busy-poll\"\n", "line 1, column 10: select"),
        ("\nfail_on = \"error\"\n", "line 2, column 11: fail_on: unknown key"),
        ("ignore = [\"no-such-detector\"]\n", "no-such-detector"),
    ] {
        std::fs::write(&cfg, text).unwrap();
        let o = run_in(&xdg, &xdg, &["analyze", t.to_str().unwrap()]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {e}");
        assert!(e.contains(cfg.to_str().unwrap()) && e.contains(says), "{text:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// diff reads the config above BEFORE; trace above the working directory.
#[test]
fn diff_and_trace_find_their_config() {
    let (d, t) = tree("diff");
    let xdg = d.join("xdg");
    std::fs::write(d.join("proj/syslint.toml"), "ignore = [\"busy-poll\"]\n").unwrap();
    let t = t.to_str().unwrap();
    let o = run_in(&xdg, &xdg, &["diff", "--format", "json", t, t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v.to_string().contains("busy-poll"), "the config above BEFORE was used");
    let o = run_in(&xdg, &xdg, &["diff", "--isolated", "--format", "json", t, t]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("busy-poll"), "{}", stderr(&o));
    if have("strace") {
        let o = run_in(
            &d.join("proj/sub"),
            &xdg,
            &["trace", "--backend", "strace", "--format", "json", "-q", "--", "true"],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value =
            serde_json::from_slice(&o.stderr[o.stderr.iter().position(|&b| b == b'{').unwrap()..])
                .expect("the report on stderr");
        let cfg = d.join("proj/syslint.toml");
        assert!(notes(&v).iter().any(|n| n.starts_with(&format!("config from {}", cfg.display()))), "{:?}", notes(&v));
    }
    std::fs::remove_dir_all(&d).ok();
}

fn findings_marked(v: &serde_json::Value) -> Vec<(String, String, bool)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["detector"].as_str().unwrap().to_string(),
                f["about"]["program"].as_str().unwrap_or("").to_string(),
                f["baselined"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[test]
fn a_baseline_accepts_the_findings_it_holds_and_no_others() {
    let d = tmpdir("baseline");
    let b = d.join("syslint-baseline.toml");
    let (bs, t) = (b.to_str().unwrap(), spin());
    let t = t.to_str().unwrap();
    // the BAD trace fails, then is accepted
    assert_eq!(run(&["analyze", "--fail-on", "warning", t]).status.code(), Some(1));
    let o = run(&["analyze", "--write-baseline", bs, t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("version = 1") && text.contains("code = \"SL001\"") && text.contains("program = \"spin\""));
    assert!(!text.contains("7334") && !text.contains("pid"), "no pids in a baseline: {text}");
    // the same trace again: listed, marked, exit 0 under --fail-on warning (and info)
    for level in ["warning", "info"] {
        let o = run(&["analyze", "--format", "json", "--fail-on", level, "--baseline", bs, t]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = json_of(&o);
        assert_eq!(findings_marked(&v), [("busy-poll".to_string(), "spin".to_string(), true)]);
        assert_eq!(v["baseline"], bs);
    }
    let table = stdout(&run(&["analyze", "--baseline", bs, t]));
    assert!(table.contains(&format!("1 finding accepted in the baseline ({bs})")), "{table}");
    assert!(table.contains("busy-poll") && table.contains("[baselined]"), "{table}");
    let md = stdout(&run(&["analyze", "--format", "markdown", "--baseline", bs, t]));
    // Markdown escapes the parentheses around the file name
    assert!(md.contains("1 finding accepted in the baseline") && md.contains(bs), "{md}");
    assert!(md.lines().any(|l| l.starts_with("### warning") && l.ends_with("(baselined)")), "{md}");
    let html = d.join("r.html");
    run(&["analyze", "--format", "html", "--output-file", html.to_str().unwrap(), "--baseline", bs, t]);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("1 finding accepted in the baseline") && html.contains("data-baselined=\"true\""));
    // another program with the same pathology (node spinning): new, fails
    let node = lab_variant("busy-poll", "node-spin", "f-tt-T-yy");
    let o = run(&["analyze", "--format", "json", "--baseline", bs, node.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(findings_marked(&json_of(&o)), [("busy-poll".to_string(), "node".to_string(), false)]);
    // the same program with another pathology (spin on sched_yield): new, fails
    let yield_ = lab_variant("busy-poll", "c-yield", "f-tt-T-yy");
    let o = run(&["analyze", "--format", "json", "--baseline", bs, yield_.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(findings_marked(&json_of(&o)), [("yield-spin".to_string(), "spin".to_string(), false)]);
    std::fs::remove_dir_all(&d).ok();
}

/// A trace with two findings, one of them accepted: only the other fails, and is the only one
/// not marked. The baseline was written while connection-churn was ignored.
#[test]
fn only_the_finding_not_in_the_baseline_fails() {
    let d = tmpdir("baseline-new");
    let b = d.join("b.toml");
    let bs = b.to_str().unwrap();
    let t = lab_variant("repeated-dns", "go-each", "f-tt-T-yy");
    let t = t.to_str().unwrap();
    let o = run(&["analyze", "--ignore", "connection-churn", "--write-baseline", bs, t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // as written: the DNS warning accepted, exit 0 even at --fail-on info
    let o = run(&["analyze", "--ignore", "connection-churn", "--fail-on", "info", "--baseline", bs, t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["analyze", "--format", "json", "--fail-on", "info", "--baseline", bs, t]);
    assert_eq!(o.status.code(), Some(1), "the new connection-churn finding fails: {}", stderr(&o));
    let mut got = findings_marked(&json_of(&o));
    got.sort();
    assert_eq!(
        got,
        [
            ("connection-churn".to_string(), "prog".to_string(), false),
            ("repeated-dns".to_string(), String::new(), true)
        ]
    );
    std::fs::remove_dir_all(&d).ok();
}

/// A mktemp directory differs between runs of the same program: the baseline's `*` matches it.
#[test]
fn a_baseline_matches_a_file_in_another_temporary_directory() {
    let d = tmpdir("baseline-tmp");
    let b = d.join("b.toml");
    let bs = b.to_str().unwrap();
    let one = lab_variant("small-io", "py-oswrite", "f-tt-T-yy");
    let two = lab_variant("small-io", "py-oswrite-fork", "f-tt-T-yy");
    assert_eq!(run(&["analyze", "--write-baseline", bs, one.to_str().unwrap()]).status.code(), Some(0));
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("name = \"/tmp/syslint-lab-smallio.*/app.log\""), "{text}");
    let o = run(&["analyze", "--format", "json", "--baseline", bs, two.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(findings_marked(&json_of(&o)).iter().all(|f| f.2));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_bad_baseline_is_a_clear_error() {
    let d = tmpdir("baseline-bad");
    let t = spin();
    let t = t.to_str().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        // a recorded trace given by mistake: gzip bytes, not text
        ("trace.toml", std::fs::read(spin()).unwrap(), "not UTF-8"),
        // the trace's text: not TOML
        ("text.toml", read_text(&spin()).into_bytes(), "line 1"),
        // a JSON report
        ("report.toml", run(&["analyze", "--format", "json", t]).stdout, "line 1"),
        ("empty.toml", Vec::new(), "no `version`"),
        ("typo.toml", b"version = 1\n[[finding]]\ncode = \"SL001\"\nprogam = \"spin\"\n".to_vec(), "line 4"),
        ("newer.toml", b"version = 2\n[[finding]]\nrule = \"SL001\"\n".to_vec(), "baseline version 2 is newer"),
    ];
    for (name, bytes, says) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        let o = run(&["analyze", "--baseline", p.to_str().unwrap(), t]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {e}");
        assert!(e.contains(p.to_str().unwrap()) && e.contains(says), "{name}: {e}");
        assert!(!e.contains("panicked") && o.stdout.is_empty(), "{name}: {e}");
    }
    let o = run(&["analyze", "--baseline", "/nonexistent/b.toml", t]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/b.toml"));
    std::fs::remove_dir_all(&d).ok();
}

/// trace reads the baseline before it starts anything: a bad one stops it before the command
/// runs; a good one names itself in the report. A baseline that cannot be written is an error.
#[test]
fn trace_takes_a_baseline_and_a_bad_one_stops_it_first() {
    let d = tmpdir("baseline-trace");
    let bad = d.join("bad.toml");
    std::fs::write(&bad, "version = 1\n[[finding]]\n").unwrap();
    let marker = d.join("ran");
    let o = run(&["trace", "--baseline", bad.to_str().unwrap(), "--", "touch", marker.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.toml") && stderr(&o).contains("names no detector"), "{}", stderr(&o));
    assert!(!marker.exists(), "the command ran although the baseline was bad");
    let o = run(&["analyze", "--write-baseline", "/nonexistent/dir/b.toml", spin().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write baseline /nonexistent/dir/b.toml"), "{}", stderr(&o));
    if have("strace") {
        let good = d.join("good.toml");
        let t = spin();
        assert_eq!(
            run(&["analyze", "--write-baseline", good.to_str().unwrap(), t.to_str().unwrap()]).status.code(),
            Some(0)
        );
        let o = run(&[
            "trace",
            "--backend",
            "strace",
            "-q",
            "--format",
            "json",
            "--fail-on",
            "warning",
            "--baseline",
            good.to_str().unwrap(),
            "--",
            "true",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let v: serde_json::Value = serde_json::from_str(&err[err.find('{').unwrap()..]).expect("the report on stderr");
        assert_eq!(v["baseline"], good.to_str().unwrap());
    }
    std::fs::remove_dir_all(&d).ok();
}
