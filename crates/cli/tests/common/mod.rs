//! Test harness: run the real binary (or the pipeline library it runs), read its JSON back
//! into typed structs. Every report and diff read back here is first validated against the
//! shipped JSON Schemas (docs/schema/): [`parse_report`], [`json_doc`], [`analyze`] and the
//! `.json` [`snapshot`]s.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use syslint_report::Report;

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_syslint")
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/traces").join(name)
}

/// The real-world corpus (`../shared/strace-corpus` beside the checkout, or under
/// `SYSLINT_SHARED`), as the build script found it. Tests that need it are
/// `#[cfg_attr(not(syslint_corpus), ignore = ...)]`, so they only run when it is there.
pub fn corpus_dir() -> PathBuf {
    let d = env!("SYSLINT_CORPUS_DIR");
    assert!(!d.is_empty(), "the corpus is absent: this test should have been ignored (build.rs)");
    PathBuf::from(d)
}

/// The corpus when present, for tests that use it as extra input and run either way.
pub fn corpus() -> Option<PathBuf> {
    let d = env!("SYSLINT_CORPUS_DIR");
    if d.is_empty() {
        eprintln!("NOTE: ../shared/strace-corpus is absent: the extra corpus inputs are left out");
        None
    } else {
        Some(PathBuf::from(d))
    }
}

pub fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("NO_COLOR", "1")
        // the tests' results are not the user's: no user-level syslint.toml
        .env("XDG_CONFIG_HOME", root().join("target/no-user-config"))
        .stdin(Stdio::null())
        .output()
        .expect("run syslint")
}

/// Run syslint on `input` as its stdin; a run that has not ended after 60 s is killed and
/// the test fails (hostile input must never hang it).
pub fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let mut c = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = c.stdin.take().expect("stdin");
    let input = input.to_vec();
    // input fed and output drained by threads, so neither side blocks on a full pipe
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(c.stdout.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let err = drain(c.stderr.take().map(|o| Box::new(o) as Box<dyn std::io::Read + Send>));
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = c.try_wait().expect("wait") {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = c.kill();
            panic!("syslint {args:?} did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = feeder.join();
    Output { status, stdout: out.join().expect("stdout"), stderr: err.join().expect("stderr") }
}

/// Analyse inputs as `syslint analyze --format json` does, in process through the pipeline
/// library (the binary is spawned only by the tests of the command line itself and the live
/// ones), and read the JSON report back: the printer users see stays in the loop. Panics
/// where the command would fail (every input unreadable or not a strace log).
pub fn analyze(inputs: &[&Path]) -> Report {
    let paths: Vec<PathBuf> = inputs.iter().map(|p| p.to_path_buf()).collect();
    let detectors = syslint_pipeline::detectors(&[], &[], None).expect("the default detectors build");
    let done = syslint_pipeline::analyze_logs(&paths, false, detectors)
        .unwrap_or_else(|e| panic!("syslint failed on {inputs:?}: {e:#}"));
    assert!(
        done.not_strace.is_empty() || done.not_strace.len() < done.report.capture.sources.len(),
        "syslint failed on {inputs:?}: {:?}",
        done.not_strace
    );
    let mut json = Vec::new();
    syslint_report::printers::json::print(&done.report, &mut json).expect("JSON prints");
    parse_report(&String::from_utf8_lossy(&json)).expect("JSON report parses into Report")
}

/// The two JSON documents syslint prints, each with its shipped schema.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Doc {
    /// `analyze`/`trace --format json`: docs/schema/report.schema.json.
    Report,
    /// `diff --format json`: docs/schema/diff.schema.json.
    Diff,
}

impl Doc {
    pub fn schema_file(self) -> PathBuf {
        root().join("docs/schema").join(match self {
            Doc::Report => "report.schema.json",
            Doc::Diff => "diff.schema.json",
        })
    }

    /// The shipped schema, read and compiled once per test binary (the report crate's unit
    /// test holds the file to what the types generate).
    pub fn validator(self) -> &'static jsonschema::Validator {
        static REPORT: OnceLock<jsonschema::Validator> = OnceLock::new();
        static DIFF: OnceLock<jsonschema::Validator> = OnceLock::new();
        let cell = match self {
            Doc::Report => &REPORT,
            Doc::Diff => &DIFF,
        };
        cell.get_or_init(|| {
            let path = self.schema_file();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let schema: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            jsonschema::draft202012::new(&schema)
                .unwrap_or_else(|e| panic!("{}: not a JSON Schema: {e}", path.display()))
        })
    }

    /// Which document `v` says it is (a diff has `"kind": "diff"`, a report no `kind`).
    pub fn of(v: &serde_json::Value) -> Doc {
        if v.get("kind").and_then(serde_json::Value::as_str) == Some("diff") {
            Doc::Diff
        } else {
            Doc::Report
        }
    }
}

/// The violations of `doc`'s shipped schema in `v`, one line each (at most 20): empty when valid.
pub fn schema_errors(doc: Doc, v: &serde_json::Value) -> Vec<String> {
    doc.validator()
        .iter_errors(v)
        .take(20)
        .map(|e| format!("at {:?}: {e} (schema {})", e.instance_path().as_str(), e.schema_path().as_str()))
        .collect()
}

/// Panics with every violation unless `v` is valid against `doc`'s shipped schema.
pub fn assert_valid(doc: Doc, v: &serde_json::Value) {
    let errors = schema_errors(doc, v);
    assert!(
        errors.is_empty(),
        "syslint printed JSON that {} rejects (fix the output, or the types and then UPDATE_SCHEMA=1 cargo test -p \
         syslint-report schema):\n  {}",
        doc.schema_file().display(),
        errors.join("\n  ")
    );
}

/// JSON syslint printed (a report, or a diff), read as a `serde_json::Value` after it passed the
/// shipped schema of its kind ([`Doc::of`]). Not JSON at all: the parse error, for the caller to
/// report with its context.
pub fn json_doc(text: impl AsRef<[u8]>) -> Result<serde_json::Value, serde_json::Error> {
    let v: serde_json::Value = serde_json::from_slice(text.as_ref())?;
    assert_valid(Doc::of(&v), &v);
    Ok(v)
}

/// A report syslint printed, validated against docs/schema/report.schema.json, then read with
/// the reader `diff` uses ([`syslint_report::printers::json::parse`]). Text that is not JSON at
/// all is left to that reader's error.
pub fn parse_report(text: &str) -> Result<Report, serde_json::Error> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        assert_valid(Doc::Report, &v);
    }
    syslint_report::printers::json::parse(text)
}

pub fn syscall<'r>(r: &'r Report, name: &str) -> &'r syslint_report::SyscallStats {
    r.summary.syscalls.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!("no {name} in summary: {:?}", r.summary.syscalls.iter().map(|s| &s.name).collect::<Vec<_>>())
    })
}

/// A child process killed (and reaped) when this goes out of scope: a live test that fails
/// midway leaves nothing running.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `lab/<dir>/traces/<name>`.
pub fn lab_trace(dir: &str, name: &str) -> PathBuf {
    root().join("lab").join(dir).join("traces").join(name)
}

/// `lab/<lab>/traces/<variant>.<set>.strace`, or its `.gz` when the recording is compressed.
pub fn lab_variant(lab: &str, variant: &str, set: &str) -> PathBuf {
    let plain = lab_trace(lab, &format!("{variant}.{set}.strace"));
    if plain.is_file() {
        return plain;
    }
    let gz = lab_trace(lab, &format!("{variant}.{set}.strace.gz"));
    assert!(gz.is_file(), "missing lab trace {variant}.{set} (lab/{lab}/record.sh records it)");
    gz
}

/// A trace's text, gunzipped when it ends in `.gz`.
pub fn read_text(p: &Path) -> String {
    let raw = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    if p.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&raw[..]), &mut s).expect("gunzip");
        s
    } else {
        String::from_utf8_lossy(&raw).into_owned()
    }
}

/// The findings of one detector in a report.
pub fn findings<'r>(r: &'r Report, detector: &str) -> Vec<&'r syslint_report::Finding> {
    r.findings.iter().filter(|f| f.detector == detector).collect()
}

/// A numeric metric of a finding (panics with the finding if absent).
pub fn metric(f: &syslint_report::Finding, key: &str) -> f64 {
    f.metrics.get(key).and_then(serde_json::Value::as_f64).unwrap_or_else(|| panic!("no metric {key} in {f:#?}"))
}

/// Whether a command exists; tests that need it say loudly when it does not.
pub fn have(cmd: &str) -> bool {
    let ok = Command::new("sh").args(["-c", &format!("command -v {cmd}")]).output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("NOTE: {cmd} is not installed: this live test cannot run (scripts/test.sh installs it)");
    }
    ok
}

/// Compare with a stored snapshot; `UPDATE_SNAPSHOTS=1` rewrites it.
/// A `.json` snapshot (a report or a diff) must pass the shipped schema before it is compared or
/// written.
pub fn snapshot(name: &str, got: &str) {
    let path = root().join("crates/cli/tests/snapshots").join(name);
    if name.ends_with(".json") {
        json_doc(got).unwrap_or_else(|e| panic!("snapshot {name} is not JSON: {e}"));
    }
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing snapshot {name}: run with UPDATE_SNAPSHOTS=1"));
    if want != got {
        let first = want.lines().zip(got.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "snapshot {name} differs at line {}:\n want: {}\n  got: {}\n(UPDATE_SNAPSHOTS=1 to accept)",
            first + 1,
            want.lines().nth(first).unwrap_or(""),
            got.lines().nth(first).unwrap_or("")
        );
    }
}

/// Run syslint from the workspace root (relative paths in reports), version masked.
pub fn run_in_root(args: &[&str]) -> String {
    let o = std::process::Command::new(bin())
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().replace(env!("CARGO_PKG_VERSION"), "VERSION")
}

/// A stand-in for strace in the labs' run.sh (they call `$STRACE -o OUT [flags] CMD...`):
/// a script that drops strace's flags and runs `syslint trace ARGS -- CMD` (the report as JSON
/// in `OUT.json`; `{out}` in `args` is OUT). With `exec`, syslint replaces the script, so run.sh
/// finds the traced program as the child of "strace" (accept-herd kills it by pid). Either way
/// the exit status is the command's, as strace would give (no --fail-on).
pub fn strace_stand_in(dir: &Path, name: &str, args: &str, exec: bool) -> PathBuf {
    let w = dir.join(name);
    let run = format!(
        "\"{bin}\" trace -q --format json --output-file \"$out.json\" {args} -- \"$@\"",
        bin = bin(),
        args = args.replace("{out}", "$out")
    );
    let tail = if exec { format!("exec {run}\n") } else { format!("{run}\n") };
    let script = format!(
        "#!/bin/sh\nout=\"\"\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    -o) out=$2; shift 2 ;;\n    \
         -s|-e|-a|-X|-P|-I|-u|-E|-S|-U|-O) shift 2 ;;\n    -*) shift ;;\n    *) break ;;\n  esac\ndone\n{tail}"
    );
    std::fs::write(&w, script).expect("write the strace stand-in");
    assert!(Command::new("chmod").arg("+x").arg(&w).status().expect("chmod").success());
    w
}

/// Runs lab `lab`'s run.sh for `variant` with the stand-in `wrapper` (made in `dir`, see
/// [`strace_stand_in`]) as its strace, recording to `dir/out`; `dir` is emptied first.
pub fn run_lab_with(lab: &str, variant: &str, dir: &Path, out: &str, wrapper: fn(&Path) -> PathBuf) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("dir");
    let out = dir.join(out);
    let o = Command::new("bash")
        .arg(root().join("lab").join(lab).join("run.sh"))
        .arg(variant)
        .arg(&out)
        .args(["-f", "-tt", "-T", "-yy"])
        .env("STRACE", wrapper(dir))
        .output()
        .expect("run.sh");
    assert!(o.status.success(), "{lab} {variant}: {}\n{}", stderr(&o), stdout(&o));
    out
}

/// A live recording kept while the test that made it runs: removed when dropped, kept (and
/// its path printed) when dropped while the test panics, so a failure on a loaded CI machine
/// can be read afterwards instead of guessed at. Recordings go under the test target's tmp
/// directory (`target/tmp/live`), which CI's clean clone keeps until the next run.
pub struct LiveTrace(pub PathBuf);

impl LiveTrace {
    /// A fresh path for `name` (the test's process id keeps concurrent runs apart).
    pub fn new(name: &str) -> LiveTrace {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("live");
        std::fs::create_dir_all(&dir).expect("target/tmp/live");
        LiveTrace(dir.join(format!("{}-{name}", std::process::id())))
    }
}

impl Drop for LiveTrace {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the recording this test failed on is kept: {}", self.0.display());
        } else {
            std::fs::remove_file(&self.0).ok();
        }
    }
}

/// eBPF tracing works here. Tests that need it are `#[cfg_attr(not(syslint_bpf), ignore =
/// ...)]` (the build script saw root and BTF); this asserts the probe was right.
pub fn assert_bpf_works(what: &str) {
    let o = run(&["trace", "--backend", "ebpf", "-q", "--format", "json", "--", "true"]);
    assert!(o.status.success(), "eBPF tracing fails here, yet {what} were not ignored: {}", stderr(&o));
}

/// The one finding of `detector` in `r` (`ctx` names the input when there is not exactly one).
pub fn only(detector: &str, r: &Report, ctx: &str) -> syslint_report::Finding {
    let f = findings(r, detector);
    assert_eq!(f.len(), 1, "{ctx}: expected one {detector} finding, got {:#?}", r.findings);
    f[0].clone()
}

/// Asserts that the tools a live test runs are installed: scripts/test.sh installs them, and a
/// live test that cannot run fails instead of passing unseen.
pub fn need(tools: &[&str]) {
    for tool in tools {
        assert!(have(tool), "{tool} is missing: scripts/test.sh installs it; this live test cannot run without it");
    }
}

/// Lab `lab`'s `run.sh VARIANT OUT FLAGS...` run now (under strace, with `env` set), and its
/// recording analysed in-process. The recording is a [`LiveTrace`]: kept when the run fails.
pub fn live_lab(lab: &str, variant: &str, flags: &[&str], env: &[(&str, &str)]) -> Report {
    let trace = LiveTrace::new(&format!("{lab}-{variant}{}.strace", flags.concat()));
    let script = root().join("lab").join(lab).join("run.sh");
    let o = Command::new("bash")
        .arg(&script)
        .arg(variant)
        .arg(&trace.0)
        .args(flags)
        .envs(env.iter().copied())
        .output()
        .expect("run.sh");
    assert!(o.status.success(), "{} {variant} failed ({:?}): {}", script.display(), o.status, stderr(&o));
    analyze(&[&trace.0])
}
